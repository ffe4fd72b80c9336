"""Overriding built-in passes (``replaces``, ``skips``, ``kind: pipeline``) and ``triton-ext
pipeline`` (issue 19), on CPU with real compiles through cubin.

The replacement is Triton's own test plugin (renames functions to ``@foo``) in place of
``loop_unroll``; the skip drops ``triton_licm`` (spelled ``triton-licm``, its MLIR argument)
from ``make_ttgir``. What Triton runs is read back three ways: the pass manager's textual
pipeline (``pm.get_pipeline_str()``), MLIR's own per-pass IR dump (``MLIR_ENABLE_DUMP=1``), and
the IR of the compiled kernel.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

import triton
import triton.language as tl

from tests.python.conftest import CUDA90, REPO

REGISTRY = """\
schema: 1
extensions:
  test_plugin:
    kind: pass
    directory: tests/python
    library: TritonPluginsTestLib
    status: experimental
    summary: Triton's own test plugin; renames every function to foo.
    targets: {{cuda: {{}}}}
    passes:
      plugin:
        stage: ttir
        {plugin}
  no_licm:
    kind: pipeline
    directory: docs
    status: experimental
    summary: Compile without Triton's loop-invariant code motion.
    targets: {{cuda: {{}}}}
    passes:
      skip_licm: {{stage: ttgir, skips: [{skip}]}}
"""


@pytest.fixture
def overrides(tmp_path: Path, build_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    def write(plugin: str = "replaces: loop_unroll", skip: str = "triton-licm") -> Path:
        path = tmp_path / "registry.yaml"
        path.write_text(REGISTRY.format(plugin=plugin, skip=skip))
        monkeypatch.setenv("TRITON_EXT_REGISTRY", str(path))
        monkeypatch.setenv("TRITON_EXT_BUILD_DIR", str(build_dir))
        return path

    monkeypatch.setattr(triton.knobs.cache, "dir", str(tmp_path / "cache"), raising=False)
    write()
    return write


@triton.jit
def unrolled_loop(x, y, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for i in tl.range(0, n, loop_unroll_factor=4):
        acc += tl.load(x + offs) * i
    tl.store(y + offs, acc)


def _compile() -> Any:
    signature = {"x": "*fp32", "y": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    return triton.compile(triton.compiler.ASTSource(unrolled_loop, signature, {"BLOCK": 128}), target=CUDA90)


def _args(view: Any) -> list[str]:
    from triton_ext.dev.pipeline import split_pipeline

    return split_pipeline(view.pipeline)


def test_replaced_and_skipped_builtins_are_gone_from_what_triton_runs(overrides: Any) -> None:
    import triton_ext
    from triton_ext.dev.pipeline import collect

    stock = {v.label: v for v in collect(CUDA90)}
    edited = {v.label: v for v in collect(CUDA90, ["plugin", "skip_licm"])}
    # make_ttir: the plugin pass runs exactly where loop_unroll ran in the stock pipeline.
    before, after = _args(stock["make_ttir"]), _args(edited["make_ttir"])
    assert "triton-loop-unroll" in before and "triton-loop-unroll" not in after
    i = before.index("triton-loop-unroll")
    assert after == before[:i] + ["tritongpu-plugin"] + before[i + 1:]
    # make_ttgir: every triton-licm is gone, nothing else changed.
    before, after = _args(stock["make_ttgir"]), _args(edited["make_ttgir"])
    assert "triton-licm" in before and "triton-licm" not in after
    assert after == [a for a in before if a != "triton-licm"]
    rows = {(r.name, r.mark, r.by) for v in edited.values() for r in v.passes}
    assert ("ttir.loop_unroll", "replaced", "plugin") in rows
    assert ("ttir.triton_licm", "skipped", "skip_licm") in rows

    # The kernels: unrolled 4x (plus a remainder loop) by the stock pipeline, left rolled and
    # renamed when the plugin replaces loop_unroll; without LICM the TTGIR differs.
    stock_kernel = _compile()
    with triton_ext.enabled("plugin"):
        replaced = _compile()
    with triton_ext.enabled("skip_licm"):
        skipped = _compile()
    assert stock_kernel.asm["ttir"].count("tt.load") == 5
    assert replaced.asm["ttir"].count("tt.load") == 1 and "tt.func public @foo" in replaced.asm["ttir"]
    assert "tt.loop_unroll_factor = 4" in replaced.asm["ttir"]
    assert skipped.asm["ttir"] == stock_kernel.asm["ttir"] and skipped.asm["ttgir"] != stock_kernel.asm["ttgir"]
    # Each edit is in the cache key; outside the blocks the stock pipeline is back.
    assert len({stock_kernel.hash, replaced.hash, skipped.hash}) == 3
    assert _compile().hash == stock_kernel.hash


def _dump(enable: str, tmp_path: Path) -> tuple[list[Any], list[str]]:
    """``triton-ext pipeline --json`` and the module-level passes MLIR's IR dump says it ran."""
    env = {**os.environ, "MLIR_ENABLE_DUMP": "1", "TRITON_ALWAYS_COMPILE": "1",
           "TRITON_CACHE_DIR": str(tmp_path / "dump-cache"), "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-m", "triton_ext", "pipeline", "--target", "cuda:90",
                          "--enable", enable, "--json"], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    dumped = re.findall(r"IR Dump Before \w+: ([\w-]+)[^\n]*\('builtin\.module' operation\)", out.stderr)
    return json.loads(out.stdout), dumped


def _is_subsequence(short: list[str], long: list[str]) -> bool:
    it = iter(long)
    return all(any(x == y for y in it) for x in short)


def test_pipeline_view_matches_mlir_dump(overrides: Any, tmp_path: Path) -> None:
    """``triton-ext pipeline`` against the passes MLIR itself reports running: with
    ``MLIR_ENABLE_DUMP=1`` it prints ``IR Dump Before <Pass>: <argument>`` before each pass
    execution (including cleanups some passes run inside themselves, e.g. optimize-dot-operands'
    canonicalize, which no pass manager lists)."""
    views, dumped = _dump("plugin,skip_licm", tmp_path)
    stock_views, stock_dumped = _dump("", tmp_path)
    listed = [r["mlir"] for v in views for r in v["passes"]
              if r["mark"] not in ("skipped", "replaced") and r["mlir"] not in (None, "llvm.func")]
    # Every pass the view lists ran, in this order; what else MLIR ran is the nested cleanups.
    assert _is_subsequence(listed, dumped)
    extra = list(dumped)
    for name in listed:
        extra.remove(name)
    assert set(extra) <= {"canonicalize", "cse", "symbol-dce", "reconcile-unrealized-casts"}, extra
    # Against MLIR's report of the stock compile: loop-unroll became the plugin, licm is gone.
    i = stock_dumped.index("triton-loop-unroll")
    expected = stock_dumped[:i] + ["tritongpu-plugin"] + stock_dumped[i + 1:]
    assert dumped == [a for a in expected if a != "triton-licm"]
    assert "triton-licm" in stock_dumped
    marks = [(r["name"], r["mark"]) for v in views for r in v["passes"]]
    assert marks.index(("ttir.loop_unroll", "replaced")) + 1 == marks.index(("plugin", "plugin"))
    assert ("ttir.triton_licm", "skipped") in marks and ("ttir.triton_licm", "skipped") not in [
        (r["name"], r["mark"]) for v in stock_views for r in v["passes"]]


def test_pipeline_cli_text_and_diff(overrides: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from triton_ext.dev.cli import main

    assert main(["pipeline", "--target", "cuda:90", "--enable", "plugin"]) == 0
    text = capsys.readouterr().out
    assert re.search(r"^\s+7 - ttir\.loop_unroll\s+replaced by plugin$", text, re.M), text
    assert re.search(r"^\s+8 \+ plugin\s+tritongpu-plugin\s+plugin pass$", text, re.M), text
    assert main(["pipeline", "--enable", "skip_licm", "--diff", ""]) == 0
    diff = capsys.readouterr().out
    changed = [l for l in diff.splitlines() if l[:1] in "+-" and not l.startswith(("+++", "---"))]
    assert changed == ["+ttgir/make_ttgir: ttir.triton_licm"], diff
    assert main(["pipeline", "--target", "cuda"]) == 1
    assert "expected cuda:<capability>" in capsys.readouterr().err
    assert main(["list"]) == 0
    assert re.search(r"^no_licm +pipeline +experimental +no library ", capsys.readouterr().out, re.M)


def test_unknown_builtin_is_a_clear_error(overrides: Any) -> None:
    import triton_ext

    overrides(skip="trition_licm")
    with pytest.raises(triton_ext.UnknownPassError, match=r"skips: unknown built-in pass 'trition_licm'; did you mean "
                                                          r"'triton_licm'\? in the installed Triton 3\.9\.0"):
        triton_ext.enable("skip_licm")
    overrides(plugin="replaces: loop_unrol")
    with pytest.raises(triton_ext.UnknownPassError, match=r"loop_unrol.*did you mean 'loop_unroll'"):
        triton_ext.enable("plugin")


def test_skip_that_removes_nothing_warns(overrides: Any) -> None:
    import triton_ext

    overrides(plugin="skips: [coalesce]")  # a make_ttgir pass, but this entry's stage is ttir
    with pytest.warns(triton_ext.TritonExtWarning, match="skips 'coalesce', but stage ttir never added it"):
        with triton_ext.enabled("plugin"):
            _compile()


@pytest.mark.parametrize("entry, message", [
    ("replaces: loop_unroll\n        after: cse", "expected no after/before with replaces"),
    ("skips: [triton licm]", "expected a pass name like 'cse'"),
])
def test_schema_errors(entry: str, message: str) -> None:
    from triton_ext._errors import ManifestError
    from triton_ext._manifest import parse_registry

    with pytest.raises(ManifestError, match=re.escape(message)):
        parse_registry(REGISTRY.format(plugin=entry, skip="triton_licm"))


def test_pipeline_entry_schema() -> None:
    from triton_ext._errors import ManifestError
    from triton_ext._manifest import parse_registry

    manifest = parse_registry(REGISTRY.format(plugin="after: cse", skip="triton_licm"))
    spec = manifest.find_pass("skip_licm")
    assert spec.adds_pass is False and spec.skips == ("triton_licm",)
    assert spec.position == "ttgir: no pass, skipping triton_licm"
    bad = REGISTRY.format(plugin="after: cse", skip="triton_licm").replace(
        "    kind: pipeline\n", "    kind: pipeline\n    library: Foo\n").replace(
        "skip_licm: {stage: ttgir, skips: [triton_licm]}", "skip_licm: {stage: ttgir, then: [cse]}")
    with pytest.raises(ManifestError) as info:
        parse_registry(bad)
    text = "\n".join(info.value.errors)
    assert "expected no library in a kind: pipeline entry" in text
    assert "a kind: pipeline entry skips at least one built-in" in text
    assert "found then" in text
