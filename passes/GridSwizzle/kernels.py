"""Kernels shared by the tests, bench.py and check_gpu.py of grid_swizzle.

``matmul_naive_kernel`` is the case the pass is for: a GEMM on a 2-D grid ``(cdiv(M, BLOCK_M),
cdiv(N, BLOCK_N))`` with ``pid_m = program_id(0)``, ``pid_n = program_id(1)``, so the hardware
launches the tiles of one column of C after another. ``matmul_grouped_kernel`` is the same tile
computation with the grouped order of the Triton matmul tutorial written by hand (1-D grid): the
benchmark's handwritten variant. Both compute a tile with ``_tile``, so with the same program
coordinates they run the same instructions on the same data.

The other kernels are ones the pass must leave alone: a split-K GEMM that accumulates with
atomics, a 2-D kernel that maps its programs itself (reads ``num_programs``) and a 2-D
elementwise kernel without a dot.
"""

import triton
import triton.language as tl

# Rows of tiles per group in the hand-written kernel: the pass's default group size.
GROUP_M = tl.constexpr(8)


@triton.jit
def _tile(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm, pid_m, pid_n,
          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # Rows and columns past the edge wrap around (% M, % N), so the loads need no mask; the
    # store is masked. K is masked (zero-filled) on its last block.
    rm = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    rn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=rk[None, :] < k_left, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (cm[:, None] < M) & (cn[None, :] < N)
    tl.store(c_ptr + cm[:, None] * stride_cm + cn[None, :], acc.to(c_ptr.dtype.element_ty), mask=mask)


@triton.jit
def matmul_naive_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # Grid (cdiv(M, BLOCK_M), cdiv(N, BLOCK_N)).
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    _tile(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm, pid_m, pid_n,
          BLOCK_M, BLOCK_N, BLOCK_K)


@triton.jit
def matmul_grouped_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # Grid (cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N),): the grouped order written by hand. With
    # GROUP_M equal to the pass's group size, program L computes the tile the swizzled naive
    # kernel's program (L % nx, L // nx) computes.
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * num_pid_n
    first_m = (pid // per_group) * GROUP_M
    group_m = tl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_m
    pid_n = (pid % per_group) // group_m
    _tile(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm, pid_m, pid_n,
          BLOCK_M, BLOCK_N, BLOCK_K)


@triton.jit
def matmul_split_k_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # Grid (M / BLOCK_M, N / BLOCK_N, splits): each split adds its partial product with atomics.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_k = tl.program_id(2)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    a = tl.load(a_ptr + rm[:, None] * stride_am + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * stride_bk + rn[None, :])
    tl.atomic_add(c_ptr + rm[:, None] * stride_cm + rn[None, :], tl.dot(a, b))


@triton.jit
def matmul_self_mapped_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # A 2-D grid whose kernel reorders its programs itself (here: column-major launch index).
    lin = tl.program_id(0) * tl.num_programs(1) + tl.program_id(1)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    _tile(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm, lin // num_pid_n,
          lin % num_pid_n, BLOCK_M, BLOCK_N, BLOCK_K)


@triton.jit
def add_2d_kernel(x_ptr, y_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    # Grid (rows, cdiv(n_cols, BLOCK)): no dot, nothing shared between programs.
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask)
    y = tl.load(y_ptr + row * stride + cols, mask=mask)
    tl.store(out_ptr + row * stride + cols, x + y, mask=mask)
