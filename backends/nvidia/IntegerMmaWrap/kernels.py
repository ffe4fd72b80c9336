"""An int8 GEMM with an int32 accumulator: ``c = a @ b`` over a K loop, one output tile per program.
Shared by the tests and bench.py. At 4 warps Triton builds it on Hopper with wgmma (sums wrap
modulo 2^32), below that with mma.sync (sums saturate unless nvidia_integer_mma_wrap runs)."""

import triton
import triton.language as tl


@triton.jit
def int8_gemm(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    steps = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rows[:, None] * K + (k + steps)[None, :],
                    mask=(rows[:, None] < M) & ((k + steps)[None, :] < K), other=0)
        b = tl.load(b_ptr + (k + steps)[:, None] * N + cols[None, :],
                    mask=((k + steps)[:, None] < K) & (cols[None, :] < N), other=0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))
