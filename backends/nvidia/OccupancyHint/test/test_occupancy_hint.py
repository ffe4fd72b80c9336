"""End-to-end CPU test of nvidia_occupancy_hint: kernels compiled through cubin for sm_90.

The pass runs at the end of make_llir (registry.yaml: stage llir); the hint must reach the PTX as
`.minnctapersm` next to Triton's `.reqntid`, and ptxas must honour it (the cubin's register count
is capped to 65536 / (threads * CTAs)).
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

import pytest

import triton
from triton.backends.compiler import GPUTarget
from triton.backends.nvidia.compiler import get_ptxas
from triton.compiler import ASTSource

import triton_ext
from triton_ext.testing import import_file, require_built

softmax_kernel = import_file(__file__, "../kernels.py").softmax_kernel
require_built("nvidia_occupancy_hint")  # an unbuilt plugin fails, never skips
pytestmark = pytest.mark.usefixtures("fresh_cache")  # compile from scratch: the IR read back is this run's

HOPPER = GPUTarget("cuda", 90, 32)
MI300 = GPUTarget("hip", "gfx942", 64)


def _compile(enabled: bool, target: GPUTarget = HOPPER, block: int = 8192, num_warps: int = 4, **options):
    src = ASTSource(softmax_kernel, signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "n_cols": "i32", "stride": "i32"},
                    constexprs={"BLOCK": block})
    if not enabled:
        return triton.compile(src, target=target, options={"num_warps": num_warps})
    with triton_ext.enabled("nvidia_occupancy_hint", **options):
        return triton.compile(src, target=target, options={"num_warps": num_warps})


def _registers(ptx: str) -> int:
    """Registers per thread ptxas allocates for the PTX (ptxas -v, the wheel's ptxas)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "k.ptx"
        src.write_text(ptx)
        out = subprocess.run([get_ptxas(90).path, "-v", "--gpu-name", "sm_90a", str(src), "-o", str(Path(tmp) / "k.o")],
                             capture_output=True, text=True, check=True)
    match = re.search(r"Used (\d+) registers", out.stdout + out.stderr)
    assert match, out.stdout + out.stderr
    return int(match.group(1))


@pytest.fixture(scope="module", autouse=True)
def _leave_no_hook():
    # triton_ext.enabled installs the stages hook for good; take it out again if this module put it in.
    before = triton.knobs.runtime.add_stages_inspection_hook
    yield
    if before is None:
        triton_ext.uninstall()


def test_hint_reaches_ptx_and_caps_registers():
    off, on = _compile(False), _compile(True, min_ctas_per_sm=8)
    assert ".minnctapersm" not in off.asm["ptx"]
    assert re.search(r"\.minnctapersm 8\b", on.asm["ptx"]), on.asm["ptx"][:2000]
    assert ".reqntid 128" in on.asm["ptx"]
    # 65536 registers / (8 CTAs * 128 threads) = 64 per thread; unhinted, ptxas takes more.
    regs_on, regs_off = _registers(on.asm["ptx"]), _registers(off.asm["ptx"])
    assert regs_on <= 64 < regs_off, (regs_off, regs_on)
    assert on.asm["cubin"]


def test_declines_when_register_budget_too_small():
    # 8 warps * 8 CTAs = 2048 threads: 32 registers per thread, below min-registers=64.
    k = _compile(True, num_warps=8, min_ctas_per_sm=8)
    assert ".minnctapersm" not in k.asm["ptx"]


def test_hip_untouched():
    on, off = _compile(True, target=MI300, block=1024), _compile(False, target=MI300, block=1024)
    assert on.asm["llir"] == off.asm["llir"]
