"""Every registered pass, alone and all together, on every corpus kernel, through cubin.

The passes are discovered from the registry at collection time (``triton_ext.manifest()``),
so a new registry entry is picked up without editing this file. A pass whose library is
not built, or whose ``targets`` exclude cuda:90, is skipped with the reason. Each kernel is
compiled once per configuration, in strict mode: a pass that fails, or that cannot be
placed, raises ``PassFailedError`` and fails the test.

The MLIR verifier: Triton's pass managers verify after every pass (MLIR's default; the
InvalidIR fixture in tests/reliability shows a plugin pass that leaves invalid IR being
caught right there). On top of that each stage's output here is parsed again, which runs
the verifier on the module text the next stage would consume.

A single pass whose own stage ends with the module text of the kernel's compile without passes
(compiled once per kernel, through cubin, and verified) stops there: every later stage would be
the same function of the same module as in that compile, so nothing it could find is left out;
a pass that fails or cannot be placed still raises in its stage, and one that changes its
stage's output is compiled on through cubin and verified. (tests/realworld/sweep.py does the
same.)
"""

from __future__ import annotations

import contextlib
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import pytest

import triton
from triton.backends.compiler import GPUTarget

from tests.realworld.sweep import SameAsBaseline, stage_texts
from tests.reliability import reliability_summary as summary
import triton_ext
from tests.corpus.corpus_kernels import CORPUS, CorpusKernel
from triton_ext._manifest import PassSpec

TARGET = GPUTarget("cuda", 90, 32)
SECTION = "corpus"


@dataclass(frozen=True)
class Configuration:
    """A pass set to compile the corpus with; ``skip`` says why it cannot run here."""

    name: str
    passes: tuple[PassSpec, ...]
    skip: str | None = None


def _why_not(spec: PassSpec) -> str | None:
    manifest = triton_ext.manifest()
    ext = manifest.extension_of(spec)
    if not ext.applies_to(TARGET.backend, TARGET.arch):
        return f"{spec.name}: extension {ext.name} does not target {TARGET.backend}:{TARGET.arch}"
    # An unbuilt library is not a reason to skip: enabling the pass fails with "library not
    # found ... run `triton-ext build`", so a broken build fails the suite.
    return None


def configurations() -> list[Configuration]:
    """Each registered pass alone, then all runnable ones together.

    With no runnable pass at all, the kernels are compiled without passes instead, so the
    corpus itself stays tested (and this test can fail) on a checkout with nothing built.
    """
    try:
        passes = triton_ext.manifest().passes
    except triton_ext.TritonExtError as exc:  # a broken registry is a finding, not a crash here
        return [Configuration("registry", (), f"registry.yaml does not load: {exc}")]
    configs: list[Configuration] = []
    runnable: list[PassSpec] = []
    for spec in passes:
        reason = _why_not(spec)
        configs.append(Configuration(spec.name, (spec,), reason))
        if reason is None:
            runnable.append(spec)
    if not runnable:
        configs.insert(0, Configuration("no-pass", ()))
    if len(runnable) >= 2:
        configs.append(Configuration("all", tuple(runnable)))
    else:
        configs.append(Configuration("all", tuple(runnable), f"'all' equals a single pass here ({len(runnable)} runnable)"))
    summary.note(SECTION, kernels=[k.name for k in CORPUS], passes=[p.name for p in passes],
                 target=f"{TARGET.backend}:{TARGET.arch}")
    return configs


CONFIGURATIONS = configurations()


def _params() -> list[Any]:
    out = []
    for config in CONFIGURATIONS:
        for kernel in CORPUS:
            marks = [pytest.mark.skip(reason=config.skip)] if config.skip else []
            out.append(pytest.param(kernel, config, id=f"{config.name}-{kernel.name}", marks=marks))
    return out


def _verify_text(text: str, target: GPUTarget) -> None:
    """Parse (and so verify) an MLIR module printed by a stage, in a fresh context."""
    from triton._C.libtriton import ir
    from triton.compiler.compiler import make_backend

    context = ir.context()
    ir.load_dialects(context)
    make_backend(target).load_dialects(context)
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
    try:
        ir.parse_mlir_module(f.name, context)
    finally:
        Path(f.name).unlink()


def _with_companions(passes: Sequence[Any]) -> list[Any]:
    """The passes and those they bring (registry ``with:``)."""
    out = list(passes)
    for spec in passes:
        out += [triton_ext.manifest().find_pass(name) for name in spec.companions
                if all(other.name != name for other in out)]
    return out


def _expected_placed(kernel: CorpusKernel, config: Configuration) -> list[str]:
    # Gluon kernels start at ttgir: ttir passes do not run on them, nor do ttgir passes anchored
    # next to a make_ttgir built-in (documented behaviour, docs/registry-schema.md).
    return sorted(p.name for p in _with_companions(config.passes)
                  if not (kernel.gluon and (p.stage == "ttir" or (p.stage == "ttgir" and p.anchor))))


#: Kernel name -> each stage's output text in its compile without passes (None: that compile
#: failed, so no pass compile of the kernel stops early).
_BASELINES: dict[str, dict[str, str] | None] = {}


def _baseline(kernel: CorpusKernel) -> dict[str, str] | None:
    if kernel.name not in _BASELINES:
        seen: dict[str, str] = {}
        try:
            with triton_ext.settings.scope(strict=True), stage_texts(seen):
                compiled = triton.compile(kernel.source(), target=TARGET, options=kernel.options())
            assert compiled.asm.get("cubin"), f"{kernel.name}: no cubin"
            for stage in ("ttir", "ttgir"):
                if stage in compiled.asm:
                    _verify_text(compiled.asm[stage], TARGET)
        except Exception:  # noqa: BLE001  (the pass compiles then run in full and fail on it)
            seen = {}
        _BASELINES[kernel.name] = seen or None
    return _BASELINES[kernel.name]


@pytest.fixture(autouse=True)
def _fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Compile for real every time (a cache hit would skip the passes).
    monkeypatch.setattr(triton.knobs.cache, "dir", str(tmp_path / "cache"), raising=False)


@pytest.mark.parametrize(("kernel", "config"), _params())
def test_kernel_compiles_and_verifies(kernel: CorpusKernel, config: Configuration) -> None:
    check = f"compiled + verified, {'no pass' if not config.passes else ('all passes' if config.name == 'all' else 'pass ' + config.name)}"
    names = [p.name for p in config.passes]
    # One pass: stop after its stage when that stage's output is the baseline's (docstring).
    # A companion at a later stage (registry `with:`) is then not placed: its own
    # configuration shows what it does to the baseline.
    baseline = _baseline(kernel) if len(config.passes) == 1 else None
    stop_at = config.passes[0].stage if baseline else None
    try:
        with triton_ext.settings.scope(strict=True), triton_ext.record_pipelines() as plans, \
                (stage_texts({}, stop_at, baseline) if stop_at else contextlib.nullcontext()):
            try:
                if names:
                    with triton_ext.enabled(*names):
                        compiled = triton.compile(kernel.source(), target=TARGET, options=kernel.options())
                else:
                    compiled = triton.compile(kernel.source(), target=TARGET, options=kernel.options())
            except SameAsBaseline:
                compiled = None  # the baseline's module after the pass's stage: compiled and verified
        placed = sorted({n for plan in plans for n in plan.placed_names()})
        expected = _expected_placed(kernel, config)
        if compiled is None:  # stopped after the pass's stage: no companion placed later
            expected = [name for name in expected if name in names]
        assert placed == expected, f"{kernel.name}: placed {placed}"
        if compiled is not None:
            assert compiled.asm.get("cubin"), f"{kernel.name}: no cubin"
            for stage in ("ttir", "ttgir"):
                if stage in compiled.asm:
                    _verify_text(compiled.asm[stage], TARGET)
    except BaseException as exc:
        summary.record(SECTION, check, False, f"{kernel.name}: {type(exc).__name__}: {exc}")
        raise
    summary.record(SECTION, check, True)
