"""Kernels of @@snake@@, shared by its tests (test/) and its benchmark spec (bench.py)."""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Sums x[0:n] into BLOCK partial sums: one loop, which the scaffolded pass counts."""
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + tl.arange(0, BLOCK), acc)


SIGNATURE = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
