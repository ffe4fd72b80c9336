"""Kernels shared by the tests, bench.py and check_gpu.py of nvidia_stream_eviction.

``gather_scale_kernel`` is the case the pass is for: ``out = x * table[idx]`` streams ``x`` and
``idx`` (each element read by one program, once) while every program gathers from ``table``,
which is worth keeping in L2. ``two_pass_softmax_kernel`` reads each row twice (the pass must
leave it alone) and ``matmul_kernel`` shares its tiles between programs (also left alone).
"""

import triton
import triton.language as tl


@triton.jit
def gather_scale_kernel(x_ptr, idx_ptr, table_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    i = tl.load(idx_ptr + offs, mask=mask)
    t = tl.load(table_ptr + i, mask=mask)
    tl.store(out_ptr + offs, x * t, mask=mask)


@triton.jit
def row_scale_kernel(x_ptr, w_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    # One row per program, a loop over its columns: x streams, w is read by every program.
    row = tl.program_id(0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=mask)
        w = tl.load(w_ptr + cols, mask=mask)
        tl.store(out_ptr + row * stride + cols, x * w, mask=mask)


@triton.jit
def two_pass_softmax_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        m = tl.maximum(m, tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=float("-inf")))
    row_max = tl.max(m, axis=0)
    s = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=float("-inf"))
        s += tl.exp(x - row_max)
    tl.store(out_ptr + row, row_max + tl.log(tl.sum(s, axis=0)))


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
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


@triton.jit
def gather_scale_hinted_kernel(x_ptr, idx_ptr, table_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # gather_scale_kernel with the hints written by hand (the benchmark's handwritten variant).
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, eviction_policy="evict_first")
    i = tl.load(idx_ptr + offs, mask=mask, eviction_policy="evict_first")
    t = tl.load(table_ptr + i, mask=mask)
    tl.store(out_ptr + offs, x * t, mask=mask)
