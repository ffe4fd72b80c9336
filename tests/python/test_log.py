"""``TRITON_EXT_LOG`` (issue 30 Deliver 7): triton_ext's decisions through ``logging``, at a level
the variable chooses; nothing extra on stderr without it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from triton_ext.testing import repo_root, require_built

REPO = repo_root()

COMPILE = """
import triton, triton.language as tl
from triton.backends.compiler import GPUTarget

@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    for i in range(0, n, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        tl.store(x + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)

src = triton.compiler.ASTSource(k, signature={"x": "*fp32", "n": "i32"}, constexprs={"BLOCK": 128})
triton.compile(src, target=GPUTarget("cuda", 90, 32))
print("compiled")
"""


def _run(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_EXT_")}
    full.update(PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
                TRITON_EXT_REGISTRY=str(REPO / "registry.yaml"), TRITON_EXT_CACHE_DIR=str(tmp_path / "preflight"),
                TRITON_CACHE_DIR=str(tmp_path / "triton"), **env)
    script = tmp_path / "compile_one.py"  # @triton.jit needs a source file
    script.write_text("import triton_ext\n" + COMPILE)
    return subprocess.run([sys.executable, str(script)], env=full, capture_output=True, text=True, timeout=300,
                          cwd=REPO)


def test_log_levels_show_the_decisions(tmp_path: Path) -> None:
    require_built("loop_split")
    res = _run(tmp_path, TRITON_EXT_ENABLE="loop_split{max-parts=2}", TRITON_EXT_LOG="debug")
    assert res.returncode == 0 and "compiled" in res.stdout, res.stderr
    err = res.stderr
    assert "triton-ext: INFO: TRITON_EXT_ENABLE: enabled loop_split (extension loop_split, ttir end): max-parts=2 " \
           "max-tile-elements=32768 max-tail-step=16384" in err, err
    assert "triton-ext: INFO: preflight libTritonExtLoopSplit.so: checked in a child process in" in err, err
    assert "triton-ext: INFO: loaded " in err and "libTritonExtLoopSplit.so (extension loop_split): passes loop_split" in err
    assert "triton-ext: DEBUG: stage ttir: loop_split at ttir end (max-parts=2 " in err, err
    # A second process finds the verdict cached (debug), and at info level the stage line is gone.
    again = _run(tmp_path, TRITON_EXT_ENABLE="loop_split", TRITON_EXT_LOG="info")
    assert "checked in a child" not in again.stderr and "DEBUG" not in again.stderr
    assert "TRITON_EXT_ENABLE: enabled loop_split" in again.stderr


def test_no_log_without_the_variable(tmp_path: Path) -> None:
    require_built("loop_split")
    res = _run(tmp_path, TRITON_EXT_ENABLE="loop_split")
    assert res.returncode == 0 and res.stderr == "", res.stderr


@pytest.mark.parametrize("value", ["loud", "-1x"])
def test_a_bad_level_is_one_line(tmp_path: Path, value: str) -> None:
    full = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_EXT_")}
    full.update(PYTHONPATH=str(REPO), TRITON_EXT_LOG=value)
    res = subprocess.run([sys.executable, "-c", "import triton_ext"], env=full, capture_output=True, text=True,
                         timeout=120, cwd=REPO)
    assert res.returncode == 0
    assert res.stderr.splitlines() == [f"TRITON_EXT_LOG: expected one of debug, info, warning, error, critical or "
                                       f"a number, found {value!r}; logging stays at its default"]
