"""End-to-end CPU test of nvidia_stream_eviction: real kernels compiled through cubin for sm_90.

The pass runs where registry.yaml places it (end of make_ttir) through the triton_ext stages hook;
the checks read the TTIR and the PTX the wheel's backend produced from it.
"""

from __future__ import annotations

import re

import pytest

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

import triton_ext
from triton_ext.testing import import_file, require_built

kernels = import_file(__file__, "../kernels.py")
require_built("nvidia_stream_eviction")  # an unbuilt plugin fails, never skips
pytestmark = pytest.mark.usefixtures("fresh_cache")  # compile from scratch: the IR read back is this run's


HOPPER = GPUTarget("cuda", 90, 32)
AMPERE = GPUTarget("cuda", 80, 32)
MI300 = GPUTarget("hip", "gfx942", 64)
EVICT_FIRST = "eviction_policy = evict_first"

@triton.jit
def gather_stencil_kernel(x_ptr, idx_ptr, table_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # Gathers (so the default mode marks streams); x is read twice (each element and its right
    # neighbour: one program's elements are read again by its own second load).
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    i = tl.load(idx_ptr + offs, mask=mask, other=0)
    t = tl.load(table_ptr + i, mask=mask, other=0.0)
    left = tl.load(x_ptr + offs, mask=mask, other=0.0)
    right = tl.load(x_ptr + offs + 1, mask=offs + 1 < n, other=0.0)
    tl.store(out_ptr + offs, (left + right) * t, mask=mask)


@triton.jit
def gather_rows_kernel(idx_ptr, table_ptr, scale_ptr, out_ptr, D, ROWS: tl.constexpr,
                       BLOCK: tl.constexpr):
    # ROWS table rows per program: idx advances with the loop (streamed), the table is gathered,
    # and the program's scale vector is loaded in every iteration at the same address (re-read).
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    for r in range(0, ROWS):
        row = pid * ROWS + r
        i = tl.load(idx_ptr + row)
        v = tl.load(table_ptr + i * D + cols)
        s = tl.load(scale_ptr + pid * BLOCK + cols)
        tl.store(out_ptr + row * D + cols, v * s)


SOURCES = {
    "gather_stencil": (gather_stencil_kernel,
                       {"x_ptr": "*fp32", "idx_ptr": "*i32", "table_ptr": "*fp32", "out_ptr": "*fp32",
                        "n": "i32"},
                       {"BLOCK": 512}),
    "gather_rows": (gather_rows_kernel,
                    {"idx_ptr": "*i32", "table_ptr": "*fp32", "scale_ptr": "*fp32", "out_ptr": "*fp32",
                     "D": "i32"},
                    {"ROWS": 4, "BLOCK": 128}),
    "gather": (kernels.gather_scale_kernel,
               {"x_ptr": "*fp32", "idx_ptr": "*i32", "table_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
               {"BLOCK": 1024}),
    "row_scale": (kernels.row_scale_kernel,
                  {"x_ptr": "*fp32", "w_ptr": "*fp32", "out_ptr": "*fp32", "n_cols": "i32", "stride": "i32"},
                  {"BLOCK": 512}),
    "softmax": (kernels.two_pass_softmax_kernel,
                {"x_ptr": "*fp32", "out_ptr": "*fp32", "n_cols": "i32", "stride": "i32"}, {"BLOCK": 512}),
    "matmul": (kernels.matmul_kernel,
               {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
                "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32"},
               {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}),
}



def _compile(name: str, enabled: bool, target: GPUTarget = HOPPER, **options):
    fn, signature, constexprs = SOURCES[name]
    source = ASTSource(fn, signature={**signature, **{k: "constexpr" for k in constexprs}}, constexprs=constexprs)
    if not enabled:
        return triton.compile(source, target=target)
    with triton_ext.enabled("nvidia_stream_eviction", **options):
        return triton.compile(source, target=target)


def _loads(ttir: str) -> list[str]:
    return [line.strip() for line in ttir.splitlines() if re.search(r"= tt\.load ", line)]


def _body(ir: str) -> str:
    return "\n".join(line for line in ir.splitlines() if "module attributes" not in line)


def test_gather_streams_marked_table_untouched():
    on = _compile("gather", enabled=True)
    loads = _loads(on.asm["ttir"])
    assert len(loads) == 3, loads
    x, idx, table = loads  # program order
    assert EVICT_FIRST in x and EVICT_FIRST in idx
    assert "cachePolicy" not in table
    ptx = on.asm["ptx"]
    # The NVIDIA backend lowers the policy to an L2 cache hint built by createpolicy.
    assert re.search(r"createpolicy\.fractional\.L2::evict_first", ptx), ptx[:2000]
    hinted = [l for l in ptx.splitlines() if re.search(r"ld\.global.*L2::cache_hint", l)]
    plain = [l for l in ptx.splitlines() if re.search(r"ld\.global", l) and "cache_hint" not in l]
    assert hinted and plain  # streams hinted, the gather not
    assert on.asm["cubin"]


def test_without_the_pass_no_hints():
    off = _compile("gather", enabled=False)
    assert "cachePolicy" not in off.asm["ttir"]
    assert "cache_hint" not in off.asm["ptx"]


def test_kernel_without_gather_is_left_alone_by_default():
    # A pure stream has nothing to protect in L2; the hint measured 6% slower there.
    on, off = _compile("row_scale", enabled=True), _compile("row_scale", enabled=False)
    assert "cachePolicy" not in on.asm["ttir"]
    assert _body(on.asm["ttgir"]) == _body(off.asm["ttgir"])


def test_streams_without_gather_marked_when_asked():
    # The row loop's x advances with the induction variable (streamed); w is read by every row.
    loads = _loads(_compile("row_scale", enabled=True, only_with_gathers=False).asm["ttir"])
    assert len(loads) == 2
    assert EVICT_FIRST in loads[0] and "cachePolicy" not in loads[1]


@pytest.mark.parametrize("name", ["softmax", "matmul"])
def test_reread_and_shared_data_left_alone(name):
    # Even with every stream marked: the softmax reads each row twice, the GEMM shares its tiles.
    on = _compile(name, enabled=True, only_with_gathers=False)
    off = _compile(name, enabled=False)
    assert "cachePolicy" not in on.asm["ttir"]
    assert _body(on.asm["ttgir"]) == _body(off.asm["ttgir"])


def test_reread_loads_left_alone_in_a_gathering_kernel():
    # The default mode (a gather is present, so streams are marked): the index stream is marked,
    # the gather is not, and neither load of x (each element read by two loads) is.
    loads = _loads(_compile("gather_stencil", enabled=True).asm["ttir"])
    assert len(loads) == 4, loads
    idx, table, left, right = loads  # program order
    assert EVICT_FIRST in idx
    assert all("cachePolicy" not in load for load in (table, left, right)), loads


def test_loop_invariant_load_in_a_loop_left_alone():
    # In the loop over rows: idx[row] advances with the induction variable (streamed); the scale
    # vector's address ignores it, so every iteration reads it again (not marked).
    loads = _loads(_compile("gather_rows", enabled=True).asm["ttir"])
    assert len(loads) == 3, loads
    idx, table, scale = loads
    assert EVICT_FIRST in idx
    assert "cachePolicy" not in table and "cachePolicy" not in scale, loads


@pytest.mark.parametrize("target", [AMPERE, MI300], ids=["sm80", "gfx942"])
def test_other_targets_untouched(target):
    on = _compile("gather", enabled=True, target=target)
    off = _compile("gather", enabled=False, target=target)
    assert _body(on.asm["ttir"]) == _body(off.asm["ttir"])


def test_bench_spec_cpu_check():
    # What `triton-ext bench --cpu nvidia_stream_eviction` runs: every variant compiles through cubin
    # and the pass variant's IR has both streams marked and the gather untouched.
    from pathlib import Path

    from triton_ext import bench as _bench

    spec = _bench.load_spec(Path(__file__).resolve().parents[1] / "bench.py")
    checks = _bench.check_cpu(spec, log=lambda s: None)
    assert [(c.variant, c.ok, c.problem) for c in checks] == [
        ("gather", True, None), ("gather+stream_eviction", True, None), ("hand_hinted", True, None)]
