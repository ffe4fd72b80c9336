"""The build rules: every extension present builds, and a broken one is named, not hidden.

The broken-extension cases build a scratch copy of the source tree (infra, cmake, one good and
one broken extension) so the real build folder is never disturbed.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from tests.cpp.cpp_support import BUILD, REPO

from triton_ext.dev import build as _build
from triton_ext.dev.build import BuildError

GOOD = """\
#include "triton-ext/PassInfra.h"
#include "mlir/IR/BuiltinOps.h"
namespace {
struct NoopPass : mlir::PassWrapper<NoopPass, mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(NoopPass)
  llvm::StringRef getArgument() const final { return "triton-ext-test-noop"; }
  void runOnOperation() final {}
};
} // namespace
TRITON_EXT_REGISTER_PASS(good_noop, NoopPass);
"""


def test_every_extension_present_is_built() -> None:
    folders = _build.extension_dirs(REPO)
    assert folders, "no extension folders found"
    broken = BUILD / "broken-extensions.txt"
    assert not broken.exists(), broken.read_text()
    for folder in folders:
        lib = BUILD / "plugins" / f"libTritonExt{Path(folder).name}.so"
        assert lib.exists(), f"{folder} was not built ({lib} missing): run `triton-ext build`"


def test_plugins_link_only_libtriton_and_the_infra() -> None:
    for lib in sorted((BUILD / "plugins").glob("libTritonExt*.so")):
        out = subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True).stdout
        needed = {line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line}
        ours = {n for n in needed if not n.startswith(("libc.", "libm.", "libstdc++", "libgcc_s"))}
        assert ours <= {"libtriton.so", "libTritonExtPassInfra.so"}, (lib.name, ours)
        runpath = [line for line in out.splitlines() if "RUNPATH" in line or "RPATH" in line]
        assert all("$ORIGIN" in r and str(REPO) not in r for r in runpath), (lib.name, runpath)


@pytest.fixture()
def scratch_tree(tmp_path: Path) -> Path:
    root = tmp_path / "src"
    root.mkdir()
    for item in ("CMakeLists.txt", "cmake", "infra"):
        src = REPO / item
        (shutil.copytree if src.is_dir() else shutil.copy)(src, root / item)
    good = root / "passes" / "GoodNoop"
    good.mkdir(parents=True)
    (good / "GoodNoop.cpp").write_text(GOOD)
    (good / "CMakeLists.txt").write_text("triton_ext_add_pass(GoodNoop SOURCES GoodNoop.cpp)\n")
    return root


def _build_scratch(root: Path, tmp_path: Path) -> _build.BuildResult:
    return _build.build(root=root, build_dir=tmp_path / "build", quiet=True,
                        defines=["TRITON_EXT_BUILD_TESTS=OFF", "TRITON_EXT_BUILD_PYTHON=OFF"])


def test_cpp_error_names_the_extension(scratch_tree: Path, tmp_path: Path) -> None:
    bad = scratch_tree / "passes" / "BrokenCode"
    bad.mkdir()
    (bad / "BrokenCode.cpp").write_text("#include \"triton-ext/PassInfra.h\"\nint f() { return x; }\n")
    (bad / "CMakeLists.txt").write_text("triton_ext_add_pass(BrokenCode SOURCES BrokenCode.cpp)\n")
    result = _build_scratch(scratch_tree, tmp_path)
    assert set(result.failed) == {"passes/BrokenCode"}, result.failed
    assert "passes/GoodNoop" in result.built
    assert (tmp_path / "build" / "plugins" / "libTritonExtGoodNoop.so").exists()


def test_missing_source_names_the_extension(scratch_tree: Path, tmp_path: Path) -> None:
    bad = scratch_tree / "passes" / "MissingSource"
    bad.mkdir()
    (bad / "CMakeLists.txt").write_text("triton_ext_add_pass(MissingSource SOURCES Nope.cpp)\n")
    result = _build_scratch(scratch_tree, tmp_path)
    assert list(result.failed) == ["passes/MissingSource"], result.failed
    assert "Nope.cpp does not exist" in result.failed["passes/MissingSource"]
    assert (tmp_path / "build" / "plugins" / "libTritonExtGoodNoop.so").exists()


def test_cmake_syntax_error_names_the_extension(scratch_tree: Path, tmp_path: Path) -> None:
    bad = scratch_tree / "passes" / "BadCMake"
    bad.mkdir()
    (bad / "CMakeLists.txt").write_text("triton_ext_add_pass(BadCMake SOURCES\n")
    with pytest.raises(BuildError, match=r"CMake configuration failed in passes/BadCMake"):
        _build_scratch(scratch_tree, tmp_path)


def test_unknown_extension_name_lists_known_ones() -> None:
    with pytest.raises(BuildError, match="unknown extension 'no_such_pass'; known: .*loop_split"):
        _build.resolve_targets(REPO, ["no_such_pass"])
