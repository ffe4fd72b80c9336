"""Kernels shared by the tests and bench.py of nvidia_pipeline_streams.

``row_sum_kernel`` is the case the pass is for: one program per row, a loop without a dot that
streams the row (``range(start, end, BLOCK)``, so tests can put the bounds anywhere in the
integer range). ``row_sum_staged_kernel`` is the same loop with ``tl.range(..., num_stages=3)``
written by hand. The other kernels are loops the pass must leave alone.
"""

import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, start, end, stride, BLOCK: tl.constexpr):
    # Sums x[row, 0:end - start]; the induction variable runs over [start, end).
    row = tl.program_id(0)
    n = end - start
    acc = tl.zeros([BLOCK], tl.float32)
    for i in range(start, end, BLOCK):
        cols = (i - start) + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < n, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def row_sum_staged_kernel(x_ptr, out_ptr, start, end, stride, BLOCK: tl.constexpr):
    # row_sum_kernel with the pipelining written by hand (the benchmark's handwritten variant).
    row = tl.program_id(0)
    n = end - start
    acc = tl.zeros([BLOCK], tl.float32)
    for i in tl.range(start, end, BLOCK, num_stages=3):
        cols = (i - start) + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < n, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def row_scale_kernel(x_ptr, w_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    # The loop stores: a prefetched load could miss one of its writes (left alone).
    row = tl.program_id(0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=mask)
        w = tl.load(w_ptr + cols, mask=mask)
        tl.store(out_ptr + row * stride + cols, x * w, mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # A loop with a dot: Triton pipelines it with the kernel's num_stages (left alone).
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for _ in range(0, K, BLOCK_K):
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(tl.float16))
