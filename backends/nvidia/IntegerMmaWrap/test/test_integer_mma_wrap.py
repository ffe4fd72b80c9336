"""End-to-end test of nvidia_integer_mma_wrap: an int8 GEMM compiled through cubin for sm_90 (CPU),
and on a GPU the sums that leave int32 (bench.py's overflow check).

The pass runs at the end of make_llir (registry.yaml: stage llir). Below 4 warps Triton writes the
GEMM's products as `mma.sync ... .satfinite.s32`; with the pass the PTX ptxas assembles has the same
instructions without `.satfinite`, and at 4 warps (wgmma, which never saturates) it changes nothing.
"""

from __future__ import annotations

import re

import pytest

import triton

from triton_ext.testing import compile_through_cubin, import_file, require_built

kernels = import_file(__file__, "../kernels.py")
bench = import_file(__file__, "../bench.py")
require_built("nvidia_integer_mma_wrap")  # an unbuilt plugin fails, never skips
pytestmark = pytest.mark.usefixtures("fresh_cache")  # compile from scratch: the IR read back is this run's

SIGNATURE = {"a_ptr": "*i8", "b_ptr": "*i8", "c_ptr": "*i32", "M": "i32", "N": "i32", "K": "i32"}


def _mmas(num_warps: int, wrap: bool) -> tuple[list[str], str]:
    # Triton's tl.dot takes int8 operands only (unsigned and int4 MMAs: test/integer-mma-wrap.mlir).
    compiled = compile_through_cubin(kernels.int8_gemm, SIGNATURE, bench.BLOCK,
                                     passes=("nvidia_integer_mma_wrap",) if wrap else (),
                                     options={"num_warps": num_warps})
    ptx = compiled.asm["ptx"]
    return sorted(set(re.findall(r"(?:wgmma\.mma_async|mma\.sync)[\w.]*", ptx))), ptx


def test_two_warps_sum_with_mma_sync_that_no_longer_saturates() -> None:
    stock, _ = _mmas(2, wrap=False)
    assert stock == ["mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32"]
    wrapped, ptx = _mmas(2, wrap=True)
    assert wrapped == ["mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"]  # and ptxas took it: a cubin came out
    assert "satfinite" not in ptx


def test_four_warps_use_wgmma_which_wraps_already_and_the_pass_changes_nothing() -> None:
    stock, stock_ptx = _mmas(4, wrap=False)
    assert stock == ["wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8"]
    assert _mmas(4, wrap=True)[1] == stock_ptx


def _gpu() -> bool:
    try:
        return triton.runtime.driver.active.get_current_target().backend == "cuda"
    except Exception:  # no driver: no GPU
        return False


@pytest.mark.skipif(not _gpu(), reason="needs a GPU")
def test_on_a_gpu_sums_past_int32_wrap_at_two_warps_as_at_four() -> None:
    result = bench.overflow_check(print)
    rows = result["rows"]
    assert rows["2 warps"]["elements_off"] > 0, "the inputs did not overflow: the check would prove nothing"
    assert rows["4 warps"]["elements_off"] == 0
    assert rows["2 warps + pass"]["elements_off"] == 0
    assert rows["8 warps + pass"]["elements_off"] == 0
    assert result["ok"]
