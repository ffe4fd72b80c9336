"""The dependent stencil step chained by check_gpu.py and bench.py: each program reads what
other programs of the previous launch wrote, so a launch must wait for its producer."""

import triton
import triton.language as tl


@triton.jit
def step_kernel(x_ptr, y_ptr, n, shift, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    other = tl.load(x_ptr + (offs + shift) % n, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * 0.5 + other * 0.25 + 1.0, mask=mask)
