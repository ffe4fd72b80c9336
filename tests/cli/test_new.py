"""`triton-ext new`: scaffold a pass in a scratch checkout, build it with the build driver, and run
its generated lit test and pytest file through `triton-ext test`; then every error path."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.cli.cli_support import REPO, cli, scratch_checkout

from triton_ext.dev import build as _build
from triton_ext._manifest import load_manifest
from triton_ext.dev.scaffold import ScaffoldError, names_for, scaffold

NO_TESTS_BUILD = ("TRITON_EXT_BUILD_TESTS=OFF", "TRITON_EXT_BUILD_PYTHON=OFF")


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory) -> Path:
    root = scratch_checkout(tmp_path_factory.mktemp("checkout"))
    res = cli("new", "pass", "DemoThing", "--root", str(root), "--owner", "tests")
    assert res.returncode == 0, res.stderr
    assert "next: triton-ext build demo_thing && triton-ext test demo_thing" in res.stdout
    return root


def test_layout_follows_contributing(scaffolded) -> None:
    folder = scaffolded / "passes" / "DemoThing"
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) == [
        "CMakeLists.txt", "DemoThing.cpp", "Passes.td", "README.md", "bench.py", "kernels.py",
        "test/demo-thing.mlir", "test/test_demo_thing.py"]
    cpp = (folder / "DemoThing.cpp").read_text()
    assert "TRITON_EXT_REGISTER_PASS(demo_thing, DemoThingPass);" in cpp
    assert '#define DEBUG_TYPE "triton-ext-demo-thing"' in cpp
    assert 'def TritonExtDemoThing : Pass<"triton-ext-demo-thing"' in (folder / "Passes.td").read_text()
    entry = yaml.safe_load((scaffolded / "registry.yaml").read_text())["extensions"]["demo_thing"]
    assert entry["directory"] == "passes/DemoThing" and entry["library"] == "TritonExtDemoThing"
    assert "options" not in entry["passes"]["demo_thing"]  # one source: Passes.td declares them
    # Its options come from the build (the pass records mlir-tblgen writes beside the plugin).
    spec = load_manifest(scaffolded / "registry.yaml", entry_points=False).find_pass("demo_thing")
    assert spec.options == () and spec.options_source.endswith("libTritonExtDemoThing.passes.records")
    # The entries that were there are untouched.
    assert "loop_split" in yaml.safe_load((scaffolded / "registry.yaml").read_text())["extensions"]


def test_builds_and_its_own_tests_pass(scaffolded) -> None:
    build_dir = scaffolded / "build"
    result = _build.build(["DemoThing"], build_dir, quiet=True, root=scaffolded, defines=NO_TESTS_BUILD)
    assert result.ok, result.failed
    assert (build_dir / "plugins" / "libTritonExtDemoThing.so").exists()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRITON_EXT_BUILD_DIR", str(build_dir))
        spec = load_manifest(scaffolded / "registry.yaml", entry_points=False).find_pass("demo_thing")
    assert [(o.name, o.type, o.default, o.minimum) for o in spec.options] == [("min-loops", "int", 0, 0)]
    res = cli("test", "demo_thing", "--registry", str(scaffolded / "registry.yaml"),
              TRITON_EXT_BUILD_DIR=str(build_dir))
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-3000:]
    assert "demo_thing: lit ok" in res.stderr and "demo_thing: pytest ok" in res.stderr
    assert "4 passed" in res.stdout  # the generated pytest file ran its four tests, none skipped


def test_a_broken_generated_test_fails_the_command(scaffolded) -> None:
    """`triton-ext test` really runs the checks: flip one CHECK and it fails."""
    lit_file = scaffolded / "passes" / "DemoThing" / "test" / "demo-thing.mlir"
    text = lit_file.read_text()
    if not (scaffolded / "build" / "plugins" / "libTritonExtDemoThing.so").exists():
        result = _build.build(["DemoThing"], scaffolded / "build", quiet=True, root=scaffolded,
                              defines=NO_TESTS_BUILD)
        assert result.ok, result.failed
    try:
        lit_file.write_text(text.replace("loops = 1 : i64", "loops = 7 : i64"))
        res = cli("test", "demo_thing", "--registry", str(scaffolded / "registry.yaml"), "--no-pytest",
                  TRITON_EXT_BUILD_DIR=str(scaffolded / "build"))
        assert res.returncode == 1
        assert "demo_thing: lit FAILED" in res.stderr
    finally:
        lit_file.write_text(text)


@pytest.mark.parametrize("kind,folder,source", [
    ("dialect", "dialects/DemoDialect", "DemoDialect.td"),
    ("language", "language/DemoDialect", "DemoDialectBuilder.cpp"),
])
def test_dialect_and_language_scaffolds_register(tmp_path, kind, folder, source) -> None:
    # Built and tested in test_new_dialect_language.py; here only the entry and the main file.
    root = scratch_checkout(tmp_path / "c")
    target, names = scaffold(kind, "DemoDialect", root, owner="tests")
    assert target == root / folder and names.snake == "demo_dialect"
    assert (target / source).exists()
    entry = yaml.safe_load((root / "registry.yaml").read_text())["extensions"]["demo_dialect"]
    assert entry["kind"] == kind
    assert ("passes" not in entry) == (kind == "language")


def test_names() -> None:
    n = names_for("DemoThing")
    assert (n.camel, n.snake, n.kebab, n.record, n.flag) == (
        "DemoThing", "demo_thing", "demo-thing", "TritonExtDemoThing", "triton-ext-demo-thing")
    assert names_for("demo_thing") == n
    # An acronym is one word, as in the registry's own names.
    for camel, snake in (("RangeFactsIR", "range_facts_ir"), ("AutoPDL", "auto_pdl"),
                         ("IRThing", "ir_thing"), ("GPU2Thing", "gpu2_thing")):
        assert names_for(camel).snake == snake
    for bad in ("demo-thing", "9Lives", "Demo Thing", ""):
        with pytest.raises(ScaffoldError, match="expected CamelCase"):
            names_for(bad)


# ------------------------------------------------------------------------------------ error paths


def test_bad_name(tmp_path) -> None:
    root = scratch_checkout(tmp_path / "c")
    before = (root / "registry.yaml").read_text()
    res = cli("new", "pass", "demo-thing", "--root", str(root))
    assert res.returncode == 1 and "expected CamelCase" in res.stderr
    assert (root / "registry.yaml").read_text() == before and not (root / "passes").exists()


def test_unknown_kind(tmp_path) -> None:
    res = cli("new", "backend", "Thing", "--root", str(tmp_path))
    assert res.returncode == 2 and "invalid choice: 'backend'" in res.stderr


def test_name_already_in_registry(tmp_path) -> None:
    root = scratch_checkout(tmp_path / "c")
    res = cli("new", "pass", "LoopSplit", "--root", str(root))
    assert res.returncode == 1 and "'loop_split' is already an extension or pass name" in res.stderr
    assert not (root / "passes" / "LoopSplit").exists()


def test_folder_exists(tmp_path) -> None:
    root = scratch_checkout(tmp_path / "c")
    (root / "passes" / "Taken").mkdir(parents=True)
    res = cli("new", "pass", "Taken", "--root", str(root))
    assert res.returncode == 1 and "already exists" in res.stderr


def test_broken_registry_is_left_alone(tmp_path) -> None:
    root = scratch_checkout(tmp_path / "c")
    broken = "schema: 1\nextensions:\n  x:\n    kind: pas\n"
    (root / "registry.yaml").write_text(broken)
    res = cli("new", "pass", "DemoThing", "--root", str(root))
    assert res.returncode == 1 and "the registry is broken, fix it first" in res.stderr
    assert "kind" in res.stderr
    assert (root / "registry.yaml").read_text() == broken and not (root / "passes").exists()


def test_not_a_checkout(tmp_path) -> None:
    res = cli("new", "pass", "DemoThing", "--root", str(tmp_path))
    assert res.returncode == 1 and "not a triton-ext source checkout" in res.stderr


def test_registry_where_extensions_is_not_last(tmp_path) -> None:
    root = scratch_checkout(tmp_path / "c")
    text = (root / "registry.yaml").read_text()
    (root / "registry.yaml").write_text(text.replace("schema: 1\n", "") + "schema: 1\n")
    res = cli("new", "pass", "DemoThing", "--root", str(root))
    assert res.returncode == 1 and "add this entry under extensions by hand" in res.stderr
    assert "demo_thing:" in res.stderr and not (root / "passes").exists()
