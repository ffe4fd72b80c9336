"""A pass that fails, or leaves invalid IR, never leaves a broken kernel behind.

FailingPass signals failure; InvalidIR "succeeds" but deletes every tt.return, which only
MLIR's verifier (run by the pass manager after each pass) can catch. For each:

* the error names the pass and its extension (warning by default, PassFailedError in strict mode);
* the kernel still compiles, without the pass, to exactly the TTIR of a stock compile;
* compiling again without the pass (same cache) gives the correct kernel, and every
  module left in Triton's cache directory still parses and verifies.
"""

from __future__ import annotations

import json
import re
import tempfile
import warnings
from pathlib import Path

import pytest

from tests.reliability import reliability_summary as summary
import triton
import triton_ext
from tests.corpus.corpus_kernels import BY_NAME, CorpusKernel
from tests.reliability.fixture_plugins import FAILING, FIXTURE_A, INVALID, Entry, standard_tree
from triton.backends.compiler import GPUTarget
from triton_ext import PassFailedError, TritonExtWarning

SECTION = "failing_pass_cache"
TARGET = GPUTarget("cuda", 90, 32)
KERNELS = ("vector_add", "fused_softmax", "matmul")


def _compile(kernel: CorpusKernel, cache: Path, monkeypatch: pytest.MonkeyPatch) -> triton.compiler.CompiledKernel:
    monkeypatch.setattr(triton.knobs.cache, "dir", str(cache), raising=False)
    return triton.compile(kernel.source(), target=TARGET, options=kernel.options())


def _verify_cache(cache: Path) -> list[str]:
    """Parse every TTIR/TTGIR file in the cache; return those that do not verify."""
    from triton._C.libtriton import ir
    from triton.compiler.compiler import make_backend

    bad = []
    for path in sorted(cache.rglob("*.tt*ir")):
        context = ir.context()
        ir.load_dialects(context)
        make_backend(TARGET).load_dialects(context)
        try:
            ir.parse_mlir_module(str(path), context)
        except Exception as exc:
            bad.append(f"{path.name}: {exc}")
    for group in cache.rglob("__grp__*.json"):  # every complete cache entry lists existing files
        for name, file in json.loads(group.read_text()).get("child_paths", {}).items():
            if not Path(file).exists():
                bad.append(f"{group.name}: {name} -> missing {file}")
    return bad


def normalized(ttir: str) -> str:
    """TTIR without locations and with SSA names numbered by first use.

    The retry after a failed pass re-parses the stage input from text, which drops the
    name hints (``%row`` becomes ``%arg6``); the operations must still be the same.
    """
    text = "\n".join(line for line in ttir.splitlines() if not line.startswith("#loc"))
    text = re.sub(r"\s*loc\((?:[^()]|\([^()]*\))*\)", "", text)
    names: dict[str, str] = {}
    return re.sub(r"%[\w.$-]+", lambda m: names.setdefault(m.group(0), f"%v{len(names)}"), text)


_BASELINE: dict[str, str] = {}


def _baseline_ttir(kernel: CorpusKernel, monkeypatch: pytest.MonkeyPatch) -> str:
    if kernel.name not in _BASELINE:
        _BASELINE[kernel.name] = _compile(kernel, Path(tempfile.mkdtemp(prefix="baseline-")), monkeypatch).asm["ttir"]
    return _BASELINE[kernel.name]


CASES = [(FAILING, "fixture_always_fail", "failing on purpose"), (INVALID, "fixture_break_ir", "")]


@pytest.mark.parametrize("kernel_name", KERNELS)
@pytest.mark.parametrize(("entry", "pass_name", "needle"), CASES, ids=["signals-failure", "invalid-ir"])
def test_failing_pass_leaves_no_broken_kernel(entry: Entry, pass_name: str, needle: str, kernel_name: str,
                                              tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capfd: pytest.CaptureFixture[str]) -> None:
    kernel = BY_NAME[kernel_name]
    standard_tree(tmp_path / "tree", monkeypatch, [entry])
    cache = tmp_path / "cache"
    baseline = _baseline_ttir(kernel, monkeypatch)
    check = f"{pass_name}: named in the error, kernel correct without it, cache clean"
    try:
        # Strict: the compile raises, naming pass and extension; nothing usable is cached.
        with triton_ext.settings.scope(strict=True), triton_ext.enabled(pass_name):
            with pytest.raises(PassFailedError) as caught:
                _compile(kernel, cache, monkeypatch)
        assert caught.value.pass_name == pass_name and caught.value.extension == entry.extension
        assert pass_name in str(caught.value) and entry.extension in str(caught.value), str(caught.value)
        # The pass's own diagnostic reaches the user on stderr (MLIR prints it; the
        # exception carries only "PassManager::run failed").
        assert needle in capfd.readouterr().err
        # Default: a warning names the pass; the kernel compiles without it (same TTIR as stock).
        with warnings.catch_warnings(record=True) as seen, triton_ext.enabled(pass_name):
            warnings.simplefilter("always")
            kernel_without = _compile(kernel, cache, monkeypatch)
        messages = [str(w.message) for w in seen if issubclass(w.category, TritonExtWarning)]
        assert any(pass_name in m and entry.extension in m for m in messages), messages
        assert normalized(kernel_without.asm["ttir"]) == normalized(baseline), "the retried compile differs from stock"
        # Without any pass, from the same cache: exactly the stock kernel.
        plain = _compile(kernel, cache, monkeypatch)
        assert plain.asm["ttir"] == baseline, "compile without the pass differs from a stock compile"
        assert not _verify_cache(cache), _verify_cache(cache)
    except BaseException as exc:
        summary.record(SECTION, check, False, f"{kernel_name}: {type(exc).__name__}: {exc}")
        raise
    summary.record(SECTION, check, True)


def test_invalid_ir_is_caught_by_the_verifier_right_after_the_pass(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   capfd: pytest.CaptureFixture[str]) -> None:
    # The pass manager reports the failure at the plugin pass: MLIR's verifier runs after it
    # (Triton does not turn verification off). The message points to the missing terminator.
    standard_tree(tmp_path / "tree", monkeypatch, [INVALID])
    check = "verifier runs after a plugin pass that leaves invalid IR"
    try:
        with triton_ext.settings.scope(strict=True), triton_ext.enabled("fixture_break_ir"):
            with pytest.raises(PassFailedError) as caught:
                _compile(BY_NAME["vector_add"], tmp_path / "cache", monkeypatch)
        assert caught.value.pass_name == "fixture_break_ir"
        cause = caught.value.__cause__
        assert cause is not None and "PassManager::run failed" in str(cause), repr(cause)
        err = capfd.readouterr().err
        # Triton's reproducer records the pass manager's settings: verification after each pass
        # is on, and the failing pipeline ends with the plugin pass (nothing ran after it).
        assert "verify_each: true" in err, err[-2000:]
        assert re.search(r"pipeline: \"builtin\.module\(.*triton-ext-test-break-ir\)\"", err), err[-2000:]
        assert "BreakIRPass" in err and "terminator" in err, err[-2000:]
    except BaseException as exc:
        summary.record(SECTION, check, False, f"{type(exc).__name__}: {exc}")
        raise
    summary.record(SECTION, check, True)


def test_a_failing_pass_is_dropped_and_the_stage_reruns_with_the_others(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # One bad extension must not cost the user the good ones enabled beside it: the failing pass
    # is dropped for this kernel, the stage reruns from its input with the others, and the kernel
    # carries the good pass's work (FixtureA tags the module) and not the failed run's.
    standard_tree(tmp_path / "tree", monkeypatch, [FIXTURE_A, FAILING])
    with warnings.catch_warnings(record=True) as seen, triton_ext.enabled("fixture_tag_module", "fixture_always_fail"):
        warnings.simplefilter("always")
        kernel = _compile(BY_NAME["vector_add"], tmp_path / "cache", monkeypatch)
    messages = [str(w.message) for w in seen if issubclass(w.category, TritonExtWarning)]
    # The two passes share one pass manager run (both after loop_unroll): the runner finds which
    # of them fails by running each beside the others, and names that one and its extension.
    assert len(messages) == 1, messages
    assert messages[0].startswith("triton-ext: pass fixture_always_fail (extension fixture_failing) failed in make_ttir")
    assert messages[0].endswith("; compiling this kernel without it") and "fixture_tag_module" not in messages[0]
    assert "triton_ext.fixture_a" in kernel.asm["ttir"]
    assert not _verify_cache(tmp_path / "cache"), _verify_cache(tmp_path / "cache")
