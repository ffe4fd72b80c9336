"""Shared fixtures for the triton_ext Python tests.

Every test compiles real kernels with the stock Triton wheel on the CPU
(``GPUTarget("cuda", 90, 32)`` runs through cubin without a GPU). Plugins are
Triton's own test plugin (one pass, ``plugin``, which renames functions to
``@foo``) and, when the build has produced them, triton-ext's fixture plugins.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget

from triton_ext.testing import repo_root
from triton_ext.testing.plugin import SESSION_TMP

REPO = repo_root()

TRITON_PLUGIN = Path(triton.__file__).parent / "plugins" / "libTritonPluginsTestLib.so"
BUILD_PLUGINS = REPO / "build" / "plugins"
CUDA90 = GPUTarget("cuda", 90, 32)

# Triton's test plugin as a registry entry; its library lives in a session build dir.
PLUGIN_REGISTRY = """\
schema: 1
extensions:
  test_plugin:
    kind: pass
    directory: tests/python
    library: TritonPluginsTestLib
    status: experimental
    summary: Triton's own test plugin; renames every function to foo.
    owners: [triton-ext maintainers]
    targets:
      cuda: {{min_arch: 80}}
    passes:
      plugin:
        stage: {stage}
        {position}
        then: [canonicalize]
        options:
          num-warps: {{default: 4, type: int, help: "Ignored by the test plugin."}}
"""


def write_registry(directory: Path, stage: str = "ttir", position: str = "after: loop_unroll") -> Path:
    path = directory / "registry.yaml"
    path.write_text(PLUGIN_REGISTRY.format(stage=stage, position=position))
    return path


@pytest.fixture(scope="session")
def build_dir() -> Path:
    """A build tree whose plugins/ holds a copy of Triton's test plugin (one path per session)."""
    root = SESSION_TMP / "build"
    (root / "plugins").mkdir(parents=True, exist_ok=True)
    target = root / "plugins" / TRITON_PLUGIN.name
    if not target.exists():
        shutil.copy2(TRITON_PLUGIN, target)
    return root


@pytest.fixture
def registry(tmp_path: Path, build_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """registry.yaml with the test plugin after loop_unroll, wired through the environment."""
    path = write_registry(tmp_path)
    monkeypatch.setenv("TRITON_EXT_REGISTRY", str(path))
    monkeypatch.setenv("TRITON_EXT_BUILD_DIR", str(build_dir))
    return path


@pytest.fixture(autouse=True)
def _clean_after_each_test(clean_triton_ext: None) -> Iterator[None]:
    """Leave no enabled pass, hook or tap (the testing plugin's ``clean_triton_ext``, per test)."""
    yield


@triton.jit
def add_one(x, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(x + offsets, tl.load(x + offsets, mask=mask) + 1, mask=mask)


@triton.jit(noinline=True)
def _bump(n):
    return n + 1


@triton.jit
def add_one_with_helper(x, n, BLOCK: tl.constexpr):
    # Two functions survive inlining, so the test plugin's rename to @foo
    # produces a symbol redefinition: a real failing plugin pass.
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < _bump(n)
    tl.store(x + offsets, tl.load(x + offsets, mask=mask) + 1, mask=mask)


def compile_kernel(fn: Any = None, target: Any = CUDA90, block: int = 128) -> Any:
    fn = fn or add_one
    src = triton.compiler.ASTSource(fn, signature={"x": "*fp32", "n": "i32"}, constexprs={"BLOCK": block})
    return triton.compile(src, target=target)


def renamed(kernel: Any) -> bool:
    """True when the test plugin ran on this kernel."""
    return "tt.func public @foo" in kernel.asm["ttir"]


@pytest.fixture(scope="session")
def cc() -> str:
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None:  # the toolchain provides clang; a missing compiler is a broken setup
        pytest.fail("no C compiler (cc, gcc or clang) to build broken plugins with; run tools/setup.sh")
    return compiler
