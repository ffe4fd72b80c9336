"""Registry extensions of kind ``dialect`` and ``language`` that declare no passes load.

Uses the built range facts libraries under registry entries that declare no passes: the dialect
library (``TritonExtRangeFactsIR``) as ``kind: dialect`` and the builder-op library
(``TritonExtRangeFacts``) as ``kind: language``. Each case runs in a fresh Python process,
because a loaded dialect or builder op stays registered in the process for good: before loading,
the dialect's IR does not parse and the builder has no ``create_assume_range``; after, both work.
Loading goes through ``triton_ext._loader.load_extension``, ``triton_ext.enable(NAME)``,
``TRITON_EXT_ENABLE=NAME`` and ``triton-ext opt`` (what the lit tests use).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from triton_ext.testing import repo_root, require_built

REPO = repo_root()
_LIBS = require_built("range_facts_ir", "range_facts")  # an unbuilt plugin fails, never skips

REGISTRY = """\
schema: 1
extensions:
  facts_dialect:
    kind: dialect
    directory: dialects/RangeFactsIR
    library: TritonExtRangeFactsIR
    status: experimental
    summary: The triton_ext_range dialect, declared without its lowering pass.
    targets: {cuda: {}}
  facts_language:
    kind: language
    directory: language/RangeFacts
    library: TritonExtRangeFacts
    status: experimental
    summary: The builder op create_assume_range.
    targets: {cuda: {}}
"""

FACT_IR = """\
tt.func @f(%x: i32) -> i32 {
  %0 = triton_ext_range.assume_range %x, 0, 7 : i32
  tt.return %0 : i32
}
"""

SCRIPT = r'''
import json, sys
mode, ir_file = sys.argv[1], sys.argv[2]
from triton._C.libtriton import ir
import triton_ext

def parses():
    context = ir.context()
    ir.load_dialects(context)
    try:
        ir.parse_mlir_module(ir_file, context)
        return True
    except RuntimeError as exc:
        return str(exc)

out = {"before": parses(), "op_before": hasattr(ir.builder, "create_assume_range")}
if mode == "load_extension":
    from triton_ext._loader import load_extension
    m = triton_ext.manifest()
    out["reports"] = {n: {"dialects": list(r.dialects), "ops": list(r.ops)}
                      for n in ("facts_dialect", "facts_language")
                      for r in [load_extension(m.extension(n))]}
elif mode == "enable":
    triton_ext.enable("facts_dialect", "facts_language")
    out["enabled_passes"] = triton_ext.enabled_passes()
    triton_ext.disable("facts_dialect")  # nothing to disable; must not raise
out["after"] = parses()
out["op_after"] = hasattr(ir.builder, "create_assume_range")
json.dump(out, sys.stdout)
'''


@pytest.fixture()
def setup(tmp_path: Path) -> tuple[dict[str, str], Path, Path]:
    (tmp_path / "registry.yaml").write_text(REGISTRY)
    ir_file = tmp_path / "fact.mlir"
    ir_file.write_text(FACT_IR)
    script = tmp_path / "load_case.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "TRITON_EXT_REGISTRY": str(tmp_path / "registry.yaml"),
           "TRITON_EXT_BUILD_DIR": str(_LIBS[0].parent.parent),
           "TRITON_EXT_CACHE_DIR": str(tmp_path / "preflight"),
           "PYTHONPATH": str(REPO)}
    env.pop("TRITON_EXT_ENABLE", None)
    return env, script, ir_file


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True,
                          timeout=300, cwd=REPO)


def test_load_extension_without_passes(setup) -> None:
    env, script, ir_file = setup
    res = _run(env, str(script), "load_extension", str(ir_file))
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout)
    assert out["before"] is not True  # the same file parses after loading (below)
    assert out["op_before"] is False
    assert out["reports"] == {"facts_dialect": {"dialects": ["triton_ext_range"], "ops": []},
                              "facts_language": {"dialects": [], "ops": ["assume_range"]}}
    assert out["after"] is True and out["op_after"] is True


def test_enable_by_extension_name_loads_it(setup) -> None:
    env, script, ir_file = setup
    res = _run(env, str(script), "enable", str(ir_file))
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout)
    assert out["before"] is not True and out["op_before"] is False
    assert out["enabled_passes"] == {}  # loading is all there is: no pass runs in any stage
    assert out["after"] is True and out["op_after"] is True


def test_triton_ext_enable_variable_loads_it(setup) -> None:
    env, script, ir_file = setup
    env = {**env, "TRITON_EXT_ENABLE": "facts_dialect,facts_language"}
    res = _run(env, str(script), "env", str(ir_file))
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout)
    assert out["before"] is True and out["op_before"] is True  # loaded at `import triton_ext`


def test_opt_parses_the_dialect_when_enabled_by_name(setup) -> None:
    env, _, ir_file = setup
    res = _run(env, "-m", "triton_ext", "opt", str(ir_file), "--pass", "cse", "--no-debug-info")
    assert res.returncode == 1 and "triton_ext_range" in res.stderr  # not loaded: no parse
    res = _run({**env, "TRITON_EXT_ENABLE": "facts_dialect"}, "-m", "triton_ext", "opt",
               str(ir_file), "--pass", "cse", "--no-debug-info")
    assert res.returncode == 0, res.stderr[-3000:]
    assert "triton_ext_range.assume_range %arg0, 0, 7 : i32" in res.stdout


def test_unknown_name_is_still_an_error(setup) -> None:
    env, _, ir_file = setup
    res = _run({**env, "TRITON_EXT_ENABLE": "facts_dialekt"}, "-c", "import triton_ext")
    assert res.returncode == 1
    assert "unknown pass 'facts_dialekt'" in res.stderr


IMPORT_ONLY = """
import json
import triton_ext_onchip, triton_ext_range
from triton import knobs
from triton_ext import _loader, _selection
print(json.dumps({"hook": repr(knobs.runtime.add_stages_inspection_hook),
                  "enabled": list(_selection.current().names()),
                  "loaded": [str(lib.path) for lib in _loader.loaded()]}))
"""


def test_language_packages_load_nothing_at_import(tmp_path: Path) -> None:
    # Issue 26 item 7: importing triton_ext_onchip installed the stages hook and enabled its four
    # passes (a later test fixture then made the hook chain to itself). Importing a language
    # package changes no state; its load() does the loading.
    packages = [str(REPO / "language/OnChip"), str(REPO / "language/RangeFacts")]
    env = {**os.environ, "TRITON_EXT_CACHE_DIR": str(tmp_path / "preflight"),
           "PYTHONPATH": os.pathsep.join([str(REPO), *packages])}
    env.pop("TRITON_EXT_ENABLE", None)
    res = _run(env, "-c", IMPORT_ONLY)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout.splitlines()[-1]) == {"hook": "None", "enabled": [], "loaded": []}


def test_language_template_loads_nothing_at_import() -> None:
    # The scaffold's package (what `triton-ext new language` writes) and every language package
    # in the repository: no statement at module level calls a function (a call to load() was one).
    import ast

    packages = [*REPO.glob("language/*/triton_ext_*/__init__.py"),
                REPO / "triton_ext/dev/scaffold/templates/language/@@package@@/__init__.py"]
    assert len(packages) >= 3
    for init in packages:
        tree = ast.parse(init.read_text().replace("@@", "x"))
        calls = [ast.unparse(node) for node in tree.body
                 if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)]
        assert not calls, f"{init}: calls at import: {calls}"
