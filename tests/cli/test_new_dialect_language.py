"""`triton-ext new dialect` and `triton-ext new language`, end to end.

A dialect (DemoIR) and a language extension on it (Demo) are scaffolded into a scratch checkout
and built for real by the build driver (one configure, two plugins; about two minutes on two
cores). Then the dialect's generated lit tests (parse/print/fold, verifier errors, lowering) and
the language's generated pytest run through `triton-ext test`, and this file compiles a kernel
that calls the scaffolded function on its own: the op is in the IR the front end builds, gone from
the TTIR after the ttir stage, and the kernel reaches cubin. The layouts are compared with the
worked example (dialects/RangeFactsIR, language/RangeFacts); then the error paths.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.cli.cli_support import REPO, cli, scratch_checkout

from triton_ext.dev import build as _build
from triton_ext.dev.scaffold import ScaffoldError, scaffold, scaffold_all

NO_TESTS_BUILD = ("TRITON_EXT_BUILD_TESTS=OFF", "TRITON_EXT_BUILD_PYTHON=OFF")
OP = "triton_ext_demo.scale"


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory) -> Path:
    root = scratch_checkout(tmp_path_factory.mktemp("checkout"))
    res = cli("new", "dialect", "DemoIR", "--root", str(root), "--owner", "tests")
    assert res.returncode == 0, res.stderr
    assert "next: triton-ext build demo_ir && triton-ext test demo_ir" in res.stdout
    res = cli("new", "language", "Demo", "--root", str(root), "--owner", "tests")
    assert res.returncode == 0, res.stderr
    assert f"using {root / 'dialects' / 'DemoIR'} (exists)" in res.stdout
    assert "next: triton-ext build demo_ir demo && triton-ext test demo_ir demo" in res.stdout
    return root


@pytest.fixture(scope="module")
def built(scaffolded) -> Path:
    build_dir = scaffolded / "build"
    result = _build.build(["DemoIR", "Demo"], build_dir, quiet=True, root=scaffolded,
                          defines=NO_TESTS_BUILD)
    assert result.ok, result.failed
    for lib in ("libTritonExtDemoIR.so", "libTritonExtDemo.so"):
        assert (build_dir / "plugins" / lib).exists(), lib
    return build_dir


def _layout(folder: Path, camel: str) -> list[str]:
    """Files of an extension folder with its own names replaced by placeholders."""
    out = set()
    for p in folder.rglob("*"):
        if not p.is_file() or "__pycache__" in p.parts:
            continue
        rel = str(p.relative_to(folder)).replace(camel, "<Name>")
        rel = re.sub(r"^test/[a-z-]+?(-invalid|-lower)?\.mlir$", r"test/<kebab>\1.mlir", rel)
        rel = re.sub(r"^triton_ext_[a-z_]+/__init__\.py$", "<package>/__init__.py", rel)
        rel = re.sub(r"^test/test_[a-z_]+\.py$", "test/test_<snake>.py", rel)
        out.add(rel)
    return sorted(out)


def test_dialect_layout_is_the_worked_examples(scaffolded) -> None:
    folder = scaffolded / "dialects" / "DemoIR"
    assert _layout(folder, "DemoIR") == _layout(REPO / "dialects" / "RangeFactsIR", "RangeFactsIR")
    assert _layout(folder, "DemoIR") == [
        "<Name>.td", "<Name>Dialect.cpp", "<Name>Dialect.h", "<Name>Lower.cpp", "CMakeLists.txt",
        "Passes.td", "README.md", "test/<kebab>-invalid.mlir", "test/<kebab>-lower.mlir",
        "test/<kebab>.mlir"]
    td = (folder / "DemoIR.td").read_text()
    assert 'let name = "triton_ext_demo";' in td and "let hasVerifier = 1;" in td
    assert 'def TritonExtDemoIRLower : Pass<"triton-ext-demo-ir-lower"' in (folder / "Passes.td").read_text()
    assert "TRITON_EXT_REGISTER_DIALECT(triton_ext_demo, DemoIRDialect);" in (
        folder / "DemoIRDialect.cpp").read_text()
    assert "TRITON_EXT_REGISTER_PASS(demo_ir_lower, DemoIRLowerPass);" in (
        folder / "DemoIRLower.cpp").read_text()
    readme = (folder / "README.md").read_text()
    for heading in ("What it does", "Flag and options", "When it declines", "Where it runs",
                    "Status and owner", "How to test"):
        assert f"## {heading}" in readme
    entry = yaml.safe_load((scaffolded / "registry.yaml").read_text())["extensions"]["demo_ir"]
    assert entry["kind"] == "dialect" and entry["library"] == "TritonExtDemoIR"
    assert entry["passes"] == {"demo_ir_lower": {"stage": "ttir", "enabled_by_default": False}}


def test_language_layout_is_the_worked_examples(scaffolded) -> None:
    folder = scaffolded / "language" / "Demo"
    reference = [p for p in _layout(REPO / "language" / "RangeFacts", "RangeFacts")
                 if p != "check_gpu.py" and not p.startswith("results/")]  # GPU-only extras
    assert _layout(folder, "Demo") == reference == [
        "<Name>Builder.cpp", "<package>/__init__.py", "CMakeLists.txt", "README.md",
        "test/test_<snake>.py"]
    assert (folder / "CMakeLists.txt").read_text().strip().endswith(
        "triton_ext_add_language(Demo SOURCES DemoBuilder.cpp)")
    builder = (folder / "DemoBuilder.cpp").read_text()
    assert "TRITON_EXT_REGISTER_OP(demo_scale, createScale);" in builder
    assert f'kOpName = "{OP}"' in builder
    init = (folder / "triton_ext_demo" / "__init__.py").read_text()
    assert "@core.builtin\ndef scale(x: Any, factor: Any, _semantic: Any = None)" in init
    assert 'LOWERING_PASS = "demo_ir_lower"' in init and 'LANGUAGE_EXTENSION = "demo"' in init
    entry = yaml.safe_load((scaffolded / "registry.yaml").read_text())["extensions"]["demo"]
    assert entry["kind"] == "language" and entry["library"] == "TritonExtDemo"
    assert entry["package"] == "triton_ext_demo"  # its own Python package, in its folder
    assert "passes" not in entry


def test_both_build_and_their_own_tests_pass(scaffolded, built) -> None:
    res = cli("test", "demo_ir", "demo", "--registry", str(scaffolded / "registry.yaml"),
              TRITON_EXT_BUILD_DIR=str(built))
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-3000:]
    assert "demo_ir: lit ok" in res.stderr and "demo: pytest ok" in res.stderr
    for lit in ("demo-ir.mlir", "demo-ir-invalid.mlir", "demo-ir-lower.mlir"):
        assert f"PASS: triton-ext :: dialects/DemoIR/test/{lit}" in res.stdout
    assert "10 passed" in res.stdout  # every generated pytest ran, none skipped


_KERNEL_SCRIPT = r'''
import json, sys
import triton, triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton._C.libtriton import ir
from triton.compiler.compiler import make_backend
import triton_ext
import triton_ext_demo

triton_ext_demo.load()  # language packages load nothing at import

@triton.jit
def kernel(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n)
    tl.store(Y + offs, triton_ext_demo.scale(x, 7) + triton_ext_demo.scale(n, -4), mask=offs < n)

target = GPUTarget("cuda", 90, 32)
src = ASTSource(kernel, signature={"X": "*i32", "Y": "*i32", "n": "i32"}, constexprs={"BLOCK": 64})
backend = make_backend(target)
options = backend.parse_options({})
context = ir.context()
ir.load_dialects(context)
backend.load_dialects(context)
front = src.make_ir(target, options, backend.get_codegen_implementation(options),
                    backend.get_module_map(), context)
with triton_ext.record_pipelines() as plans:
    compiled = triton.compile(src, target=target)
json.dump({"front": front.str_nodebug(), "verifies": front.verify(),
           "ttir": compiled.asm["ttir"], "ttgir": compiled.asm["ttgir"],
           "cubin": len(compiled.asm["cubin"]),
           "ttir_order": [list(p.order) for p in plans if p.stage == "ttir"]}, sys.stdout)
'''


def test_kernel_builds_the_op_and_reaches_cubin_without_it(scaffolded, built, tmp_path) -> None:
    env = {**os.environ, "TRITON_EXT_BUILD_DIR": str(built),
           "TRITON_EXT_REGISTRY": str(scaffolded / "registry.yaml"),
           "TRITON_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join([str(scaffolded / "language" / "Demo"), str(REPO)])}
    env.pop("TRITON_EXT_ENABLE", None)
    script = tmp_path / "kernel_with_scale.py"  # @triton.jit needs its source in a file
    script.write_text(_KERNEL_SCRIPT)
    res = subprocess.run([sys.executable, str(script)], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-4000:]
    out = json.loads(res.stdout)
    # Before the ttir stage: the front end built the op, with the kernel's types and factors.
    assert out["verifies"]
    assert re.search(rf"{OP} %\S+, 7 : tensor<64xi32>", out["front"]), out["front"]
    assert f"{OP} %arg2, -4 : i32" in out["front"]
    # After it: demo_ir_lower (placed in the ttir stage) replaced it by a multiply.
    assert out["ttir_order"] and all("plugin.demo_ir_lower" in o for o in out["ttir_order"])
    assert "triton_ext_demo" not in out["ttir"] and "triton_ext_demo" not in out["ttgir"]
    assert "arith.constant dense<7> : tensor<64xi32>" in out["ttir"]
    assert "arith.muli" in out["ttir"]
    assert out["cubin"] > 0


def test_a_broken_generated_lit_test_fails(scaffolded, built) -> None:
    """The generated lowering test really checks the IR: change the expected constant and it fails."""
    lit_file = scaffolded / "dialects" / "DemoIR" / "test" / "demo-ir-lower.mlir"
    text = lit_file.read_text()
    try:
        lit_file.write_text(text.replace("arith.constant -3 : i32", "arith.constant -4 : i32"))
        res = cli("test", "demo_ir", "--registry", str(scaffolded / "registry.yaml"), "--no-pytest",
                  TRITON_EXT_BUILD_DIR=str(built))
        assert res.returncode == 1
        assert "demo_ir: lit FAILED" in res.stderr
    finally:
        lit_file.write_text(text)


# ------------------------------------------------------------------------ without a build


def test_language_writes_its_dialect_when_missing(tmp_path) -> None:
    root = scratch_checkout(tmp_path / "c")
    written, names = scaffold_all("language", "Solo", root, owner="tests")
    assert [(w.folder, w.created) for w in written] == [("language/Solo", True), ("dialects/SoloIR", True)]
    assert names == ["solo", "solo_ir"]
    assert (root / "dialects" / "SoloIR" / "SoloIRLower.cpp").exists()
    assert 'kOpName = "triton_ext_solo.scale"' in (root / "language" / "Solo" / "SoloBuilder.cpp").read_text()
    # A second language on the same dialect, named by registry key or folder, reuses it.
    for lang, dialect in (("Other", "solo_ir"), ("Third", "SoloIR")):
        target, n = scaffold("language", lang, root, owner="tests", dialect=dialect)
        assert target == root / "language" / lang
        assert 'DIALECT_EXTENSION = "solo_ir"' in (target / f"triton_ext_{n.snake}" / "__init__.py").read_text()
    entries = yaml.safe_load((root / "registry.yaml").read_text())["extensions"]
    assert {"solo", "solo_ir", "other", "third"} <= set(entries)
    assert sum(1 for e in entries.values() if e["directory"] == "dialects/SoloIR") == 1


@pytest.mark.parametrize("args, message", [
    (("language", "Foo", "--dialect", "RangeFactsIR"), "not a dialect made by `triton-ext new dialect`"),
    (("language", "Foo", "--dialect", "Foo"), "the dialect needs a name of its own"),
    (("dialect", "Foo", "--dialect", "Bar"), "only `triton-ext new language` takes a dialect"),
    (("language", "RangeFacts"), "'range_facts' is already an extension or pass name"),
    (("dialect", "RangeFactsIR"), "already exists"),
    (("language", "Fresh", "--dialect", "LoopSplit"), "registry entry 'loop_split' exists but"),
])
def test_errors_leave_the_checkout_alone(tmp_path, args, message) -> None:
    root = scratch_checkout(tmp_path / "c")
    shutil.copytree(REPO / "dialects" / "RangeFactsIR", root / "dialects" / "RangeFactsIR")
    before = (root / "registry.yaml").read_text()
    res = cli("new", *args, "--root", str(root))
    assert res.returncode == 1 and message in res.stderr, res.stderr
    assert (root / "registry.yaml").read_text() == before
    assert sorted(p.name for p in (root / "dialects").iterdir()) == ["RangeFactsIR"]
    assert not (root / "language").exists()


def test_a_name_clash_across_kinds_is_refused(tmp_path) -> None:
    """A dialect named like an existing pass folder would build the same CMake target."""
    root = scratch_checkout(tmp_path / "c")
    (root / "passes" / "Twin").mkdir(parents=True)
    (root / "passes" / "Twin" / "CMakeLists.txt").write_text("")
    with pytest.raises(ScaffoldError, match="CMake target TritonExtTwin is already built from"):
        scaffold("dialect", "Twin", root, owner="tests")
