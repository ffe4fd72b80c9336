"""Small real kernels for the C++-side tests (@triton.jit needs them in a file)."""

import triton
import triton.language as tl


@triton.jit
def add_one(X, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    tl.store(X + offs, tl.load(X + offs, mask=mask) + 1.0, mask=mask)
