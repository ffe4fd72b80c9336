"""Kernels written with triton_ext_onchip (language/OnChip).

``matmul_kernel``: C = A @ B (fp16 or bf16 in, fp32 accumulate, C in the input type), a
software-pipelined Hopper GEMM with every stage explicit:

* ``STAGES`` shared buffers per operand (one ring each);
* cp.async copies of tile ``kt + STAGES - 1`` are in flight while tile ``kt`` is multiplied;
  each tile's copies are one commit group, so ``wait_copies(STAGES - 2)`` means "tile kt is in";
* the wgmma of tile ``kt`` is issued with ``pending=1``: it runs while the next tile's copies are
  issued, and returning from it guarantees the wgmma of tile ``kt - 1`` finished, so that
  tile's buffers (the ones the copies overwrite) are free;
* ``mma_wait(acc, 0)`` after the loop, before the accumulator is read.

``matmul_tma_kernel``: the same pipeline with TMA copies completing on mbarriers instead of
cp.async groups: one ``ready`` barrier per stage; the copy of a tile ``expect``s its bytes on the
stage's barrier, and the consumer ``wait``s on it with the stage's phase parity
(``(kt // STAGES) & 1``). Out-of-range parts of a tile are zero-filled by the TMA unit.

``matmul_ws_kernel``: warp-specialized. A one-warp producer partition issues the TMA copies; the
kernel's own warps (the default partition) wait, multiply and write C. Two barrier rings hand the
stages back and forth: ``ready[s]`` (the producer's ``expect`` + the copies' bytes: tile in) and
``empty[s]`` (one ``arrive`` by the consumer: the wgmma that read stage ``s`` finished, since with
``pending=1`` returning from the next ``mma`` guarantees it). A fresh mbarrier counts as having
completed the phase before its first, so the producer's first wait on each ``empty[s]`` (parity
1) returns at once.

``matmul(a, b)``, ``matmul_tma(a, b)`` and ``matmul_ws(a, b)`` launch them (need a GPU; the tests compile both on CPU
through cubin).
"""

from __future__ import annotations

import math

import triton
import triton.language as tl

from triton_ext.testing import import_file

# The package as its wheel installs it (import name triton_ext_onchip), from this folder.
oc = import_file(__file__, "triton_ext_onchip", name="triton_ext_onchip")


@triton.jit
def grouped_tile(M, N, BM: tl.constexpr, BN: tl.constexpr, GROUP_M: tl.constexpr):
    """(row, column) tile of this program in grouped order: GROUP_M row blocks share each column
    block of B in L2."""
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BM)
    num_n = tl.cdiv(N, BN)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    size_m = tl.minimum(num_m - first_m, GROUP_M)
    return first_m + (pid % group) % size_m, (pid % group) // size_m


@triton.jit
def store_tile(C, acc, off_m, off_n, M, N, stride_cm, stride_cn, BM: tl.constexpr, BN: tl.constexpr):
    """The GEMM epilogue: the BM x BN tile at (off_m, off_n) of C, in C's dtype, masked to M x N."""
    cm = off_m + tl.arange(0, BM)
    cn = off_n + tl.arange(0, BN)
    c_ptrs = C + cm[:, None] * stride_cm + cn[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(C.dtype.element_ty), mask=(cm[:, None] < M) & (cn[None, :] < N))


@triton.jit
def matmul_kernel(A, B, C, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, STAGES: tl.constexpr,
                  GROUP_M: tl.constexpr):
    pid_m, pid_n = grouped_tile(M, N, BM, BN, GROUP_M)

    rm = (pid_m * BM + tl.arange(0, BM)) % M
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a_ptrs = A + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = B + rk[:, None] * stride_bk + rn[None, :] * stride_bn

    a_ring = oc.alloc(A.dtype.element_ty, [BM, BK], STAGES)
    b_ring = oc.alloc(B.dtype.element_ty, [BK, BN], STAGES)
    k_tiles = tl.cdiv(K, BK)

    # Prologue: tiles 0 .. STAGES-2, one commit group each.
    for s in tl.static_range(STAGES - 1):
        oc.copy_async(oc.index(a_ring, s), a_ptrs + s * BK * stride_ak,
                      mask=(rk[None, :] < K - s * BK) & (s < k_tiles))
        oc.copy_async(oc.index(b_ring, s), b_ptrs + s * BK * stride_bk,
                      mask=(rk[:, None] < K - s * BK) & (s < k_tiles))
        oc.commit()

    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for kt in range(k_tiles):
        slot = kt % STAGES
        oc.wait_copies(STAGES - 2)  # groups committed: STAGES-1+kt; tile kt's is complete
        acc = oc.mma(oc.index(a_ring, slot), oc.index(b_ring, slot), acc, pending=1)
        # The wgmma of tile kt-1 has finished: refill its slot with tile kt+STAGES-1.
        nxt = kt + STAGES - 1
        nslot = nxt % STAGES
        oc.copy_async(oc.index(a_ring, nslot), a_ptrs + nxt * BK * stride_ak,
                      mask=(rk[None, :] < K - nxt * BK) & (nxt < k_tiles))
        oc.copy_async(oc.index(b_ring, nslot), b_ptrs + nxt * BK * stride_bk,
                      mask=(rk[:, None] < K - nxt * BK) & (nxt < k_tiles))
        oc.commit()
    acc = oc.mma_wait(acc, 0)
    oc.wait_copies(0)

    store_tile(C, acc, pid_m * BM, pid_n * BN, M, N, stride_cm, stride_cn, BM, BN)


@triton.jit
def matmul_tma_kernel(a_desc, b_desc, C, M, N, K, stride_cm, stride_cn, BM: tl.constexpr, BN: tl.constexpr,
                      BK: tl.constexpr, STAGES: tl.constexpr, GROUP_M: tl.constexpr):
    pid_m, pid_n = grouped_tile(M, N, BM, BN, GROUP_M)
    off_m = pid_m * BM
    off_n = pid_n * BN

    dtype: tl.constexpr = a_desc.dtype
    a_ring = oc.alloc(dtype, [BM, BK], STAGES)
    b_ring = oc.alloc(dtype, [BK, BN], STAGES)
    ready = oc.barriers(STAGES)  # one arrival per phase: the expect
    nbytes: tl.constexpr = (BM * BK + BK * BN) * dtype.primitive_bitwidth // 8
    k_tiles = tl.cdiv(K, BK)

    for s in tl.static_range(STAGES - 1):
        bar = oc.index(ready, s)
        oc.expect(bar, nbytes, pred=s < k_tiles)
        oc.copy_tma(oc.index(a_ring, s), a_desc, [off_m, s * BK], bar, pred=s < k_tiles)
        oc.copy_tma(oc.index(b_ring, s), b_desc, [s * BK, off_n], bar, pred=s < k_tiles)

    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for kt in range(k_tiles):
        slot = kt % STAGES
        oc.wait(oc.index(ready, slot), (kt // STAGES) & 1)  # tile kt has landed
        acc = oc.mma(oc.index(a_ring, slot), oc.index(b_ring, slot), acc, pending=1)
        # The wgmma of tile kt-1 has finished: refill its slot with tile kt+STAGES-1.
        nxt = kt + STAGES - 1
        nslot = nxt % STAGES
        bar = oc.index(ready, nslot)
        oc.expect(bar, nbytes, pred=nxt < k_tiles)
        oc.copy_tma(oc.index(a_ring, nslot), a_desc, [off_m, nxt * BK], bar, pred=nxt < k_tiles)
        oc.copy_tma(oc.index(b_ring, nslot), b_desc, [nxt * BK, off_n], bar, pred=nxt < k_tiles)
    acc = oc.mma_wait(acc, 0)

    store_tile(C, acc, off_m, off_n, M, N, stride_cm, stride_cn, BM, BN)


@triton.jit
def _ws_producer(a_desc, b_desc, a_ring, b_ring, ready, empty, off_m, off_n, k_tiles, BK: tl.constexpr,
                 STAGES: tl.constexpr, NBYTES: tl.constexpr):
    for kt in range(k_tiles):
        slot = kt % STAGES
        oc.wait(oc.index(empty, slot), ((kt // STAGES) & 1) ^ 1)  # the consumer freed the stage
        bar = oc.index(ready, slot)
        oc.expect(bar, NBYTES)
        oc.copy_tma(oc.index(a_ring, slot), a_desc, [off_m, kt * BK], bar)
        oc.copy_tma(oc.index(b_ring, slot), b_desc, [kt * BK, off_n], bar)


@triton.jit
def _ws_consumer(a_ring, b_ring, ready, empty, C, M, N, off_m, off_n, k_tiles, stride_cm, stride_cn,
                 BM: tl.constexpr, BN: tl.constexpr, STAGES: tl.constexpr):
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for kt in range(k_tiles):
        slot = kt % STAGES
        oc.wait(oc.index(ready, slot), (kt // STAGES) & 1)
        acc = oc.mma(oc.index(a_ring, slot), oc.index(b_ring, slot), acc, pending=1)
        # The wgmma of tile kt-1 finished: give its stage back to the producer.
        oc.arrive(oc.index(empty, (kt + STAGES - 1) % STAGES), pred=kt > 0)
    acc = oc.mma_wait(acc, 0)
    store_tile(C, acc, off_m, off_n, M, N, stride_cm, stride_cn, BM, BN)


@triton.jit
def matmul_ws_kernel(a_desc, b_desc, C, M, N, K, stride_cm, stride_cn, BM: tl.constexpr, BN: tl.constexpr,
                     BK: tl.constexpr, STAGES: tl.constexpr, GROUP_M: tl.constexpr):
    pid_m, pid_n = grouped_tile(M, N, BM, BN, GROUP_M)
    off_m = pid_m * BM
    off_n = pid_n * BN

    dtype: tl.constexpr = a_desc.dtype
    a_ring = oc.alloc(dtype, [BM, BK], STAGES)
    b_ring = oc.alloc(dtype, [BK, BN], STAGES)
    ready = oc.barriers(STAGES)
    empty = oc.barriers(STAGES)
    nbytes: tl.constexpr = (BM * BK + BK * BN) * dtype.primitive_bitwidth // 8
    k_tiles = tl.cdiv(K, BK)
    oc.split([(_ws_consumer, (a_ring, b_ring, ready, empty, C, M, N, off_m, off_n, k_tiles, stride_cm, stride_cn,
                              BM, BN, STAGES)),
              (_ws_producer, (a_desc, b_desc, a_ring, b_ring, ready, empty, off_m, off_n, k_tiles, BK, STAGES,
                              nbytes))], [1])


#: Tile configuration for the H200 (fp16/bf16): 128x256x64, 3 stages, 8 warps (two warp groups
#: along M), 160 KiB of shared memory.
CONFIG = dict(BM=128, BN=256, BK=64, STAGES=3, GROUP_M=8, num_warps=8)


def matmul(a, b, config: dict | None = None):
    """C = a @ b with matmul_kernel (torch tensors on the GPU, fp16 or bf16, 2-D)."""
    import torch

    cfg = dict(CONFIG if config is None else config)
    assert a.shape[1] == b.shape[0] and a.dtype == b.dtype
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty((m, n), device=a.device, dtype=a.dtype)
    grid = (triton.cdiv(m, cfg["BM"]) * triton.cdiv(n, cfg["BN"]), )
    matmul_kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                        c.stride(1), **cfg)
    return c


#: TMA variant: 128x256x64, 4 stages (192 KiB), 8 warps.
TMA_CONFIG = dict(BM=128, BN=256, BK=64, STAGES=4, GROUP_M=8, num_warps=8)


def _descriptor_gemm(kernel, a, b, cfg: dict):
    """Launch a GEMM kernel that takes A and B as TMA tensor descriptors and C as a pointer."""
    import torch
    from triton.tools.tensor_descriptor import TensorDescriptor

    assert a.shape[1] == b.shape[0] and a.dtype == b.dtype
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty((m, n), device=a.device, dtype=a.dtype)
    a_desc = TensorDescriptor.from_tensor(a, [cfg["BM"], cfg["BK"]])
    b_desc = TensorDescriptor.from_tensor(b, [cfg["BK"], cfg["BN"]])
    grid = (triton.cdiv(m, cfg["BM"]) * triton.cdiv(n, cfg["BN"]), )
    kernel[grid](a_desc, b_desc, c, m, n, k, c.stride(0), c.stride(1), **cfg)
    return c


def matmul_tma(a, b, config: dict | None = None):
    """C = a @ b with matmul_tma_kernel (row-major torch tensors on the GPU, fp16 or bf16)."""
    return _descriptor_gemm(matmul_tma_kernel, a, b, dict(TMA_CONFIG if config is None else config))


#: Warp-specialized variant: 128x256x64, 4 stages, 8 consumer warps + 1 producer warp.
WS_CONFIG = dict(BM=128, BN=256, BK=64, STAGES=4, GROUP_M=8, num_warps=8)


def matmul_ws(a, b, config: dict | None = None):
    """C = a @ b with matmul_ws_kernel (row-major torch tensors on the GPU, fp16 or bf16)."""
    return _descriptor_gemm(matmul_ws_kernel, a, b, dict(WS_CONFIG if config is None else config))


# ------------------------------------------------------------------------------------------------
# Persistent, warp-specialized GEMM with a TMA-store epilogue and register reallocation


@triton.jit
def tile_coords(tile, M, N, BM: tl.constexpr, BN: tl.constexpr, GROUP_M: tl.constexpr):
    """(row, column) block of output tile number ``tile`` in grouped order (as grouped_tile)."""
    num_m = tl.cdiv(M, BM)
    num_n = tl.cdiv(N, BN)
    group = GROUP_M * num_n
    first_m = (tile // group) * GROUP_M
    size_m = tl.minimum(num_m - first_m, GROUP_M)
    return first_m + (tile % group) % size_m, (tile % group) // size_m


@triton.jit
def _pws_producer(a_desc, b_desc, a_ring, b_ring, ready, empty, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                  BK: tl.constexpr, STAGES: tl.constexpr, GROUP_M: tl.constexpr, NBYTES: tl.constexpr):
    # Persistent tile loop: this program takes tiles pid, pid + programs, ...; `it` counts the
    # k-steps over all its tiles, so stages and phases continue from one tile to the next.
    num_tiles = tl.cdiv(M, BM) * tl.cdiv(N, BN)
    k_tiles = tl.cdiv(K, BK)
    it = 0
    for tile in range(tl.program_id(0), num_tiles, tl.num_programs(0)):
        pid_m, pid_n = tile_coords(tile, M, N, BM, BN, GROUP_M)
        for kt in range(k_tiles):
            slot = it % STAGES
            oc.wait(oc.index(empty, slot), ((it // STAGES) & 1) ^ 1)  # the consumers freed the stage
            bar = oc.index(ready, slot)
            oc.expect(bar, NBYTES)
            oc.copy_tma(oc.index(a_ring, slot), a_desc, [pid_m * BM, kt * BK], bar)
            oc.copy_tma(oc.index(b_ring, slot), b_desc, [kt * BK, pid_n * BN], bar)
            it += 1


@triton.jit
def _pws_consumer(a_ring, b_ring, ready, empty, c_desc, c_buf, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                  BK: tl.constexpr, STAGES: tl.constexpr, GROUP_M: tl.constexpr):
    num_tiles = tl.cdiv(M, BM) * tl.cdiv(N, BN)
    k_tiles = tl.cdiv(K, BK)
    it = 0
    for tile in range(tl.program_id(0), num_tiles, tl.num_programs(0)):
        pid_m, pid_n = tile_coords(tile, M, N, BM, BN, GROUP_M)
        acc = tl.zeros([BM, BN], dtype=tl.float32)
        for kt in range(k_tiles):
            slot = it % STAGES
            oc.wait(oc.index(ready, slot), (it // STAGES) & 1)
            acc = oc.mma(oc.index(a_ring, slot), oc.index(b_ring, slot), acc, pending=1)
            # The wgmma of the previous k-step finished: give its stage back.
            oc.arrive(oc.index(empty, (it + STAGES - 1) % STAGES), pred=kt > 0)
            it += 1
        acc = oc.mma_wait(acc, 0)
        oc.arrive(oc.index(empty, (it + STAGES - 1) % STAGES))  # this tile's last stage
        # Epilogue through shared memory: the previous tile's TMA store must have read c_buf.
        # The producer is already filling the stages of the next tile meanwhile.
        oc.store_wait(0)
        oc.write(c_buf, acc.to(c_desc.dtype))
        oc.store_tma(c_desc, [pid_m * BM, pid_n * BN], c_buf)
    oc.store_wait(0)


@triton.jit
def matmul_persistent_kernel(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                             BK: tl.constexpr, STAGES: tl.constexpr, GROUP_M: tl.constexpr,
                             PRODUCER_REGS: tl.constexpr):
    """Persistent GEMM: one program per SM loops over output tiles; a one-warp TMA producer
    (``split`` worker, ``PRODUCER_REGS`` registers when non-zero: setmaxnreg gives the rest to
    the consumer warp groups) runs ahead across tiles; the consumers multiply and write each tile
    with a TMA store (``store_tma``) that overlaps the next tile's main loop."""
    dtype: tl.constexpr = a_desc.dtype
    a_ring = oc.alloc(dtype, [BM, BK], STAGES)
    b_ring = oc.alloc(dtype, [BK, BN], STAGES)
    c_buf = oc.index(oc.alloc(dtype, [BM, BN]), 0)
    ready = oc.barriers(STAGES)
    empty = oc.barriers(STAGES)
    nbytes: tl.constexpr = (BM * BK + BK * BN) * dtype.primitive_bitwidth // 8
    if PRODUCER_REGS > 0:
        oc.split([(_pws_consumer, (a_ring, b_ring, ready, empty, c_desc, c_buf, M, N, K, BM, BN, BK, STAGES,
                                   GROUP_M)),
                  (_pws_producer, (a_desc, b_desc, a_ring, b_ring, ready, empty, M, N, K, BM, BN, BK, STAGES,
                                   GROUP_M, nbytes))], [1], [PRODUCER_REGS])
    else:
        oc.split([(_pws_consumer, (a_ring, b_ring, ready, empty, c_desc, c_buf, M, N, K, BM, BN, BK, STAGES,
                                   GROUP_M)),
                  (_pws_producer, (a_desc, b_desc, a_ring, b_ring, ready, empty, M, N, K, BM, BN, BK, STAGES,
                                   GROUP_M, nbytes))], [1])


@triton.jit
def _pp_consumer(a_ring, b_ring, ready, empty, turn, c_desc, c_ring, M, N, K, WHICH: tl.constexpr,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, STAGES: tl.constexpr,
                 GROUP_M: tl.constexpr):
    # Ping-pong: consumer WHICH (0 or 1) takes every other tile of this program. The main loops
    # take turns (turn[c]: the other consumer finished its main loop), so the tensor cores
    # alternate between the two consumers and one's epilogue runs during the other's main loop.
    # The turns also keep each stage barrier within one phase of its waiter (a parity wait
    # cannot tell phase q from q - 2): the other consumer has waited for every earlier k-step.
    num_tiles = tl.cdiv(M, BM) * tl.cdiv(N, BN)
    k_tiles = tl.cdiv(K, BK)
    c_buf = oc.index(c_ring, WHICH)
    i = 0  # this consumer's i-th tile, the program's tile 2 * i + WHICH
    for tile in range(tl.program_id(0) + WHICH * tl.num_programs(0), num_tiles, 2 * tl.num_programs(0)):
        pid_m, pid_n = tile_coords(tile, M, N, BM, BN, GROUP_M)
        it = (2 * i + WHICH) * k_tiles  # the global k-step of this tile's first stage
        # Consumer 0 waits for consumer 1's main loop i - 1 (none before the first: parity 1 of a
        # fresh barrier returns at once), consumer 1 for consumer 0's main loop i.
        oc.wait(oc.index(turn, WHICH), (i & 1) ^ (1 - WHICH))
        acc = tl.zeros([BM, BN], dtype=tl.float32)
        for kt in range(k_tiles):
            slot = (it + kt) % STAGES
            oc.wait(oc.index(ready, slot), ((it + kt) // STAGES) & 1)
            acc = oc.mma(oc.index(a_ring, slot), oc.index(b_ring, slot), acc, pending=1)
            oc.arrive(oc.index(empty, (it + kt + STAGES - 1) % STAGES), pred=kt > 0)
        oc.arrive(oc.index(turn, 1 - WHICH))  # the other consumer's main loop may start
        acc = oc.mma_wait(acc, 0)
        oc.arrive(oc.index(empty, (it + k_tiles - 1) % STAGES))
        oc.store_wait(0)
        oc.write(c_buf, acc.to(c_desc.dtype))
        oc.store_tma(c_desc, [pid_m * BM, pid_n * BN], c_buf)
        i += 1
    oc.store_wait(0)


@triton.jit
def _pp_first_consumer(a_ring, b_ring, ready, empty, turn, c_desc, c_ring, M, N, K, BM: tl.constexpr,
                       BN: tl.constexpr, BK: tl.constexpr, STAGES: tl.constexpr, GROUP_M: tl.constexpr):
    _pp_consumer(a_ring, b_ring, ready, empty, turn, c_desc, c_ring, M, N, K, 0, BM, BN, BK, STAGES, GROUP_M)


@triton.jit
def _pp_second_consumer(a_ring, b_ring, ready, empty, turn, c_desc, c_ring, M, N, K, BM: tl.constexpr,
                        BN: tl.constexpr, BK: tl.constexpr, STAGES: tl.constexpr, GROUP_M: tl.constexpr):
    _pp_consumer(a_ring, b_ring, ready, empty, turn, c_desc, c_ring, M, N, K, 1, BM, BN, BK, STAGES, GROUP_M)


@triton.jit
def matmul_pingpong_kernel(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                           BK: tl.constexpr, STAGES: tl.constexpr, GROUP_M: tl.constexpr,
                           CONSUMER_REGS: tl.constexpr, PRODUCER_REGS: tl.constexpr):
    """Persistent ping-pong GEMM (num_warps=4): two consumer warp groups (the default partition
    and a 4-warp worker, which may hold tensors because its warp count is the kernel's) take
    alternate tiles of this program, each with its own C buffer and TMA store; a one-warp TMA
    producer feeds both in tile order. setmaxnreg: CONSUMER_REGS for the second consumer,
    PRODUCER_REGS for the producer, the rest (the same as CONSUMER_REGS when 240/24) for the
    default partition."""
    dtype: tl.constexpr = a_desc.dtype
    a_ring = oc.alloc(dtype, [BM, BK], STAGES)
    b_ring = oc.alloc(dtype, [BK, BN], STAGES)
    c_ring = oc.alloc(dtype, [BM, BN], 2)
    ready = oc.barriers(STAGES)
    empty = oc.barriers(STAGES)
    turn = oc.barriers(2)  # turn[c]: consumer c's main loop may start
    nbytes: tl.constexpr = (BM * BK + BK * BN) * dtype.primitive_bitwidth // 8
    oc.split([(_pp_first_consumer, (a_ring, b_ring, ready, empty, turn, c_desc, c_ring, M, N, K, BM, BN, BK,
                                    STAGES, GROUP_M)),
              (_pp_second_consumer, (a_ring, b_ring, ready, empty, turn, c_desc, c_ring, M, N, K, BM, BN, BK,
                                     STAGES, GROUP_M)),
              (_pws_producer, (a_desc, b_desc, a_ring, b_ring, ready, empty, M, N, K, BM, BN, BK, STAGES, GROUP_M,
                               nbytes))], [4, 1], [CONSUMER_REGS, PRODUCER_REGS])


#: Ping-pong variant: 128x128x64 per consumer warp group, 4 stages (128 KiB) + two 32 KiB C
#: tiles, 4 + 4 consumer warps and 1 producer warp (240 / 240 / 24 registers).
PINGPONG_CONFIG = dict(BM=128, BN=128, BK=64, STAGES=4, GROUP_M=8, CONSUMER_REGS=240, PRODUCER_REGS=24,
                       num_warps=4)


def matmul_pingpong(a, b, config: dict | None = None):
    """C = a @ b with matmul_pingpong_kernel (row-major torch tensors on the GPU, fp16 or bf16)."""
    cfg = dict(PINGPONG_CONFIG if config is None else config)
    return _persistent_launch(matmul_pingpong_kernel, a, b, cfg)


#: Persistent variant: 128x256x64, 3 stages (144 KiB) + a 64 KiB C tile, 8 consumer warps + 1
#: producer warp with 24 registers (the consumers get 240).
PERSISTENT_CONFIG = dict(BM=128, BN=256, BK=64, STAGES=3, GROUP_M=8, PRODUCER_REGS=24, num_warps=8)


def _sm_count(device) -> int:
    import torch

    return torch.cuda.get_device_properties(device).multi_processor_count


def matmul_persistent(a, b, config: dict | None = None):
    """C = a @ b with matmul_persistent_kernel (row-major torch tensors on the GPU, fp16 or bf16)."""
    cfg = dict(PERSISTENT_CONFIG if config is None else config)
    return _persistent_launch(matmul_persistent_kernel, a, b, cfg)


def _persistent_launch(kernel, a, b, cfg: dict):
    """Launch a persistent GEMM taking A, B and C as TMA descriptors, one program per SM."""
    import torch
    from triton.tools.tensor_descriptor import TensorDescriptor

    assert a.shape[1] == b.shape[0] and a.dtype == b.dtype
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty((m, n), device=a.device, dtype=a.dtype)
    a_desc = TensorDescriptor.from_tensor(a, [cfg["BM"], cfg["BK"]])
    b_desc = TensorDescriptor.from_tensor(b, [cfg["BK"], cfg["BN"]])
    c_desc = TensorDescriptor.from_tensor(c, [cfg["BM"], cfg["BN"]])
    tiles = triton.cdiv(m, cfg["BM"]) * triton.cdiv(n, cfg["BN"])
    grid = (min(_sm_count(a.device), tiles), )
    kernel[grid](a_desc, b_desc, c_desc, m, n, k, **cfg)
    return c


# ------------------------------------------------------------------------------------------------
# Causal attention forward


@triton.jit
def causal_key_blocks(start_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """``(n_off, n_blocks)`` for query rows ``start_m * BLOCK_M`` .. ``+ BLOCK_M - 1`` under the
    causal mask: key blocks ``0 .. n_off - 1`` are visible to every row (no mask needed), blocks
    ``n_off .. n_blocks - 1`` reach the diagonal (masked), later ones are invisible to every row.
    Either block size may be the larger. Plain integer arithmetic, so the test runs it in Python."""
    return (start_m * BLOCK_M) // BLOCK_N, ((start_m + 1) * BLOCK_M + BLOCK_N - 1) // BLOCK_N


@triton.jit
def _causal_tile(N_CTX, BLOCK_M: tl.constexpr):
    """This program's query block (the heaviest causal tiles first: the last wave of programs holds
    the light ones), its head, and the first rows of its Q and of its head's K and V."""
    start_m = tl.num_programs(0) - 1 - tl.program_id(0)
    head = tl.program_id(1)
    return start_m, head, head * N_CTX + start_m * BLOCK_M, head * N_CTX


@triton.jit
def _online_softmax_start(start_m, sm_scale, BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr):
    """The query rows of block start_m and their online-softmax state before any key block:
    running max, running sum, output accumulator, and the exp2-domain scale."""
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    return offs_m, m_i, l_i, acc, sm_scale * 1.44269504  # exp2 instead of exp


@triton.jit
def _attn_blocks(q_buf, k_desc, v_desc, k_ring, v_ring, ready, kv_row, lo, hi, n_blocks, m_i, l_i, acc,
                 qk_scale, offs_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, NBYTES: tl.constexpr,
                 MASKED: tl.constexpr):
    # Key blocks lo .. hi-1; block j lives in stage j % 2, whose barrier completes one phase per
    # block it holds, so block j's phase parity is (j // 2) & 1.
    for j in range(lo, hi):
        # Prefetch block j+1 into the other stage: its previous block (j-1) was read only by the
        # two mmas of iteration j-1, both waited for (pending=0), so the stage is free.
        nxt = j + 1
        bar = oc.index(ready, nxt % 2)
        oc.expect(bar, NBYTES, pred=nxt < n_blocks)
        oc.copy_tma(oc.index(k_ring, nxt % 2), k_desc, [kv_row + nxt * BLOCK_N, 0], bar, pred=nxt < n_blocks)
        oc.copy_tma(oc.index(v_ring, nxt % 2), v_desc, [kv_row + nxt * BLOCK_N, 0], bar, pred=nxt < n_blocks)

        slot = j % 2
        oc.wait(oc.index(ready, slot), (j // 2) & 1)  # K and V of block j have landed
        s = oc.mma(q_buf, oc.trans(oc.index(k_ring, slot)), tl.zeros([BLOCK_M, BLOCK_N], tl.float32))
        p, alpha, m_i, l_i = _softmax_step(s, j, m_i, l_i, qk_scale, offs_m, BLOCK_N, MASKED)
        acc = acc * alpha[:, None]
        acc = oc.mma(p.to(k_desc.dtype), oc.index(v_ring, slot), acc)  # P from registers
    return m_i, l_i, acc


@triton.jit
def attn_fwd_kernel(q_desc, k_desc, v_desc, Out, sm_scale, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                    BLOCK_N: tl.constexpr, Q_IN_REGISTERS: tl.constexpr):
    """Causal attention forward, one program per BLOCK_M query rows of one head. Q, K, V, Out are
    (heads * N_CTX, HEAD_DIM) row-major; N_CTX a multiple of BLOCK_M and of BLOCK_N (either may be
    the larger: a 128-key block holds the diagonal of two 64-row programs).
    Q_IN_REGISTERS: S = Q K^T reads Q from registers (wgmma's register A operand) instead of
    shared memory. At head dim 64, an S wgmma (m64n64k16) with both operands in shared memory would
    read 128 bytes per clock at the tensor cores' full rate: all of an SM's shared-memory
    bandwidth, which the K/V copies and P V also use."""
    start_m, head, q_row, kv_row = _causal_tile(N_CTX, BLOCK_M)
    dtype: tl.constexpr = q_desc.dtype

    q_buf = oc.index(oc.alloc(dtype, [BLOCK_M, HEAD_DIM]), 0)
    k_ring = oc.alloc(dtype, [BLOCK_N, HEAD_DIM], 2)
    v_ring = oc.alloc(dtype, [BLOCK_N, HEAD_DIM], 2)
    q_bar = oc.index(oc.barriers(1), 0)
    ready = oc.barriers(2)
    nbytes: tl.constexpr = 2 * BLOCK_N * HEAD_DIM * dtype.primitive_bitwidth // 8

    oc.expect(q_bar, BLOCK_M * HEAD_DIM * dtype.primitive_bitwidth // 8)
    oc.copy_tma(q_buf, q_desc, [q_row, 0], q_bar)
    bar0 = oc.index(ready, 0)
    oc.expect(bar0, nbytes)
    oc.copy_tma(oc.index(k_ring, 0), k_desc, [kv_row, 0], bar0)
    oc.copy_tma(oc.index(v_ring, 0), v_desc, [kv_row, 0], bar0)

    offs_m, m_i, l_i, acc, qk_scale = _online_softmax_start(start_m, sm_scale, BLOCK_M, HEAD_DIM)
    n_off, n_blocks = causal_key_blocks(start_m, BLOCK_M, BLOCK_N)
    oc.wait(q_bar, 0)
    q = oc.read(q_buf) if Q_IN_REGISTERS else q_buf
    m_i, l_i, acc = _attn_blocks(q, k_desc, v_desc, k_ring, v_ring, ready, kv_row, 0, n_off, n_blocks, m_i,
                                 l_i, acc, qk_scale, offs_m, BLOCK_M, BLOCK_N, nbytes, False)
    m_i, l_i, acc = _attn_blocks(q, k_desc, v_desc, k_ring, v_ring, ready, kv_row, n_off, n_blocks, n_blocks,
                                 m_i, l_i, acc, qk_scale, offs_m, BLOCK_M, BLOCK_N, nbytes, True)
    _store_rows(Out, acc / l_i[:, None], head, N_CTX, offs_m, HEAD_DIM)


@triton.jit
def _store_rows(Out, out, head, N_CTX, offs_m, HEAD_DIM: tl.constexpr):
    """The normalized output rows offs_m of one head into Out, (heads * N_CTX, HEAD_DIM) row-major."""
    offs_d = tl.arange(0, HEAD_DIM)
    ptrs = Out + (head.to(tl.int64) * N_CTX + offs_m[:, None]) * HEAD_DIM + offs_d[None, :]
    tl.store(ptrs, out.to(Out.dtype.element_ty))


@triton.jit
def _attn_kv_split_blocks(q, k_desc, v_desc, k_ring, v_buf, k_ready, v_ready, kv_row, lo, hi, n_blocks, m_i, l_i,
                          acc, qk_scale, offs_m, BLOCK_N: tl.constexpr, K_BYTES: tl.constexpr,
                          MASKED: tl.constexpr):
    # Key blocks lo .. hi-1. K is double-buffered (block j in stage j % 2, parity (j // 2) & 1);
    # V has one buffer, refilled with block j+1 once P_j V_j, its reader, has finished: its copy
    # then runs under S_{j+1} and the softmax. Block j's V completes v_ready's j-th phase.
    for j in range(lo, hi):
        nxt = j + 1
        # Stage nxt % 2 held block j-1, whose S wgmma was waited for (pending=0): it is free.
        kbar = oc.index(k_ready, nxt % 2)
        oc.expect(kbar, K_BYTES, pred=nxt < n_blocks)
        oc.copy_tma(oc.index(k_ring, nxt % 2), k_desc, [kv_row + nxt * BLOCK_N, 0], kbar, pred=nxt < n_blocks)
        oc.wait(oc.index(k_ready, j % 2), (j // 2) & 1)
        s = oc.mma(q, oc.trans(oc.index(k_ring, j % 2)), tl.zeros([q.shape[0], BLOCK_N], tl.float32))
        p, alpha, m_i, l_i = _softmax_step(s, j, m_i, l_i, qk_scale, offs_m, BLOCK_N, MASKED)
        acc = acc * alpha[:, None]
        oc.wait(v_ready, j & 1)
        acc = oc.mma(p.to(k_desc.dtype), v_buf, acc)
        oc.expect(v_ready, K_BYTES, pred=nxt < n_blocks)
        oc.copy_tma(v_buf, v_desc, [kv_row + nxt * BLOCK_N, 0], v_ready, pred=nxt < n_blocks)
    return m_i, l_i, acc


@triton.jit
def attn_fwd_kv_split_kernel(q_desc, k_desc, v_desc, Out, sm_scale, N_CTX, HEAD_DIM: tl.constexpr,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """attn_fwd_kernel with K double-buffered and V in one buffer, each on its own barriers. At
    head dim 128 with 64 query rows and 128-key blocks that is 112 KiB of shared memory, so two
    programs fit on an SM, where two K and two V stages (144 KiB) fit one."""
    start_m, head, q_row, kv_row = _causal_tile(N_CTX, BLOCK_M)
    dtype: tl.constexpr = q_desc.dtype
    q_buf = oc.index(oc.alloc(dtype, [BLOCK_M, HEAD_DIM]), 0)
    k_ring = oc.alloc(dtype, [BLOCK_N, HEAD_DIM], 2)
    v_buf = oc.index(oc.alloc(dtype, [BLOCK_N, HEAD_DIM]), 0)
    q_bar = oc.index(oc.barriers(1), 0)
    k_ready = oc.barriers(2)
    v_ready = oc.index(oc.barriers(1), 0)
    k_bytes: tl.constexpr = BLOCK_N * HEAD_DIM * dtype.primitive_bitwidth // 8

    oc.expect(q_bar, BLOCK_M * HEAD_DIM * dtype.primitive_bitwidth // 8)
    oc.copy_tma(q_buf, q_desc, [q_row, 0], q_bar)
    oc.expect(oc.index(k_ready, 0), k_bytes)
    oc.copy_tma(oc.index(k_ring, 0), k_desc, [kv_row, 0], oc.index(k_ready, 0))
    oc.expect(v_ready, k_bytes)
    oc.copy_tma(v_buf, v_desc, [kv_row, 0], v_ready)

    offs_m, m_i, l_i, acc, qk_scale = _online_softmax_start(start_m, sm_scale, BLOCK_M, HEAD_DIM)
    n_off, n_blocks = causal_key_blocks(start_m, BLOCK_M, BLOCK_N)
    oc.wait(q_bar, 0)
    m_i, l_i, acc = _attn_kv_split_blocks(q_buf, k_desc, v_desc, k_ring, v_buf, k_ready, v_ready, kv_row, 0, n_off,
                                          n_blocks, m_i, l_i, acc, qk_scale, offs_m, BLOCK_N, k_bytes, False)
    m_i, l_i, acc = _attn_kv_split_blocks(q_buf, k_desc, v_desc, k_ring, v_buf, k_ready, v_ready, kv_row, n_off,
                                          n_blocks, n_blocks, m_i, l_i, acc, qk_scale, offs_m, BLOCK_N, k_bytes, True)
    _store_rows(Out, acc / l_i[:, None], head, N_CTX, offs_m, HEAD_DIM)


@triton.jit
def _softmax_step(s, j, m_i, l_i, qk_scale, offs_m, BLOCK_N: tl.constexpr, MASKED: tl.constexpr):
    """Online softmax of one block of unscaled scores: P, the rescale factor of the running
    output, and the new running max and sum, in the exp2 domain (qk_scale = sm_scale * log2 e).
    The row max is taken before scaling, which equals the max of the scaled scores because
    qk_scale > 0 (attn_fwd checks it), so each P element costs one FFMA and one EX2."""
    if MASKED:
        s = tl.where(offs_m[:, None] >= j * BLOCK_N + tl.arange(0, BLOCK_N)[None, :], s, float("-inf"))
    m_ij = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
    p = tl.math.exp2(s * qk_scale - m_ij[:, None])
    alpha = tl.math.exp2(m_i - m_ij)
    l_i = l_i * alpha + tl.sum(p, 1)
    return p, alpha, m_ij, l_i


@triton.jit
def _attn_pipelined_blocks(q_buf, k_desc, v_desc, k_ring, v_ring, ready, kv_row, lo, hi, n_blocks, p, alpha, m_i,
                           l_i, acc, qk_scale, offs_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                           NBYTES: tl.constexpr, MASKED: tl.constexpr):
    # FlashAttention-3's intra-warpgroup schedule. On entry P_j (block lo's probabilities, in
    # registers), its rescale factor alpha, and acc are complete; no wgmma runs. Per block j:
    # issue S_{j+1} = Q K_{j+1}^T, rescale acc, issue P_j V_j (its wait, pending=1, retires
    # S_{j+1}), the softmax of S_{j+1} while P_j V_j runs, then wait for it (pending=0) and refill
    # block j's stage with block j+3. Block j lives in stage j % 3, parity (j // 3) & 1.
    # Why this order: the one that overlapped the softmax of S_j with the wgmma of S_{j+1} kept
    # P_j V_j in flight across the back edge; ptxas then serialized every wgmma of the kernel
    # ("wgmma.mma_async instructions are serialized", C7514, test_onchip.py checks its absence).
    # Here no wgmma is in flight at the back edge.
    for j in range(lo, hi):
        nxt = j + 1
        oc.wait(oc.index(ready, nxt % 3), (nxt // 3) & 1)
        s = oc.mma(q_buf, oc.trans(oc.index(k_ring, nxt % 3)), tl.zeros([BLOCK_M, BLOCK_N], tl.float32),
                   pending=1)
        acc = acc * alpha[:, None]
        acc = oc.mma(p, oc.index(v_ring, j % 3), acc, pending=1)  # S_{j+1} finished, P_j V_j runs
        p32, alpha, m_i, l_i = _softmax_step(s, nxt, m_i, l_i, qk_scale, offs_m, BLOCK_N, MASKED)
        p = p32.to(k_desc.dtype)
        acc = oc.mma_wait(acc, 0)  # P_j V_j finished: nothing reads block j's stage any more
        pf = j + 3
        bar = oc.index(ready, pf % 3)
        oc.expect(bar, NBYTES, pred=pf < n_blocks)
        oc.copy_tma(oc.index(k_ring, pf % 3), k_desc, [kv_row + pf * BLOCK_N, 0], bar, pred=pf < n_blocks)
        oc.copy_tma(oc.index(v_ring, pf % 3), v_desc, [kv_row + pf * BLOCK_N, 0], bar, pred=pf < n_blocks)
    return p, alpha, m_i, l_i, acc


@triton.jit
def attn_fwd_pipelined_kernel(q_desc, k_desc, v_desc, Out, sm_scale, N_CTX, HEAD_DIM: tl.constexpr,
                              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Causal attention forward with the softmax of block j+1 overlapped with the wgmma P_j V_j
    (FlashAttention-3's intra-warpgroup schedule, one program per BLOCK_M query rows of one head, three K/V
    stages). Same layout and contract as attn_fwd_kernel."""
    # Heaviest query tiles (most key blocks under the causal mask) first: the last wave of
    # programs then holds the light ones, which shortens the tail.
    start_m = tl.num_programs(0) - 1 - tl.program_id(0)
    head = tl.program_id(1)
    q_row = head * N_CTX + start_m * BLOCK_M
    kv_row = head * N_CTX
    dtype: tl.constexpr = q_desc.dtype

    q_buf = oc.index(oc.alloc(dtype, [BLOCK_M, HEAD_DIM]), 0)
    k_ring = oc.alloc(dtype, [BLOCK_N, HEAD_DIM], 3)
    v_ring = oc.alloc(dtype, [BLOCK_N, HEAD_DIM], 3)
    q_bar = oc.index(oc.barriers(1), 0)
    ready = oc.barriers(3)
    nbytes: tl.constexpr = 2 * BLOCK_N * HEAD_DIM * dtype.primitive_bitwidth // 8
    n_off = start_m * (BLOCK_M // BLOCK_N)  # key blocks wholly below the diagonal
    n_blocks = (start_m + 1) * (BLOCK_M // BLOCK_N)

    oc.expect(q_bar, BLOCK_M * HEAD_DIM * dtype.primitive_bitwidth // 8)
    oc.copy_tma(q_buf, q_desc, [q_row, 0], q_bar)
    for b in tl.static_range(3):  # blocks 0, 1 and 2, where they exist
        bar = oc.index(ready, b)
        oc.expect(bar, nbytes, pred=b < n_blocks)
        oc.copy_tma(oc.index(k_ring, b), k_desc, [kv_row + b * BLOCK_N, 0], bar, pred=b < n_blocks)
        oc.copy_tma(oc.index(v_ring, b), v_desc, [kv_row + b * BLOCK_N, 0], bar, pred=b < n_blocks)

    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # exp2 instead of exp
    oc.wait(q_bar, 0)
    oc.wait(oc.index(ready, 0), 0)
    s = oc.mma(q_buf, oc.trans(oc.index(k_ring, 0)), tl.zeros([BLOCK_M, BLOCK_N], tl.float32))
    # Block 0 is masked when it is on the diagonal; masking it elsewhere removes nothing.
    p32, alpha, m_i, l_i = _softmax_step(s, 0, m_i, l_i, qk_scale, offs_m, BLOCK_N, True)
    p = p32.to(dtype)
    # Iteration j computes the softmax of block j+1: blocks 1 .. n_off-1 unmasked, then the diagonal.
    mid = tl.maximum(n_off - 1, 0)
    p, alpha, m_i, l_i, acc = _attn_pipelined_blocks(q_buf, k_desc, v_desc, k_ring, v_ring, ready, kv_row, 0, mid,
                                                     n_blocks, p, alpha, m_i, l_i, acc, qk_scale, offs_m, BLOCK_M,
                                                     BLOCK_N, nbytes, False)
    p, alpha, m_i, l_i, acc = _attn_pipelined_blocks(q_buf, k_desc, v_desc, k_ring, v_ring, ready, kv_row, mid,
                                                     n_blocks - 1, n_blocks, p, alpha, m_i, l_i, acc, qk_scale,
                                                     offs_m, BLOCK_M, BLOCK_N, nbytes, True)
    # The last block's P V.
    acc = acc * alpha[:, None]
    acc = oc.mma(p, oc.index(v_ring, (n_blocks - 1) % 3), acc)
    _store_rows(Out, acc / l_i[:, None], head, N_CTX, offs_m, HEAD_DIM)


@triton.jit
def _attn_overlap_blocks(q, k_desc, v_desc, k_buf, v_ring, k_ready, v_ready, kv_row, lo, hi, n_blocks, p, m_i, l_i,
                         acc, qk_scale, offs_m, BLOCK_N: tl.constexpr, K_BYTES: tl.constexpr,
                         MASKED: tl.constexpr):
    # FlashAttention-3's intra-warpgroup order (as _attn_pipelined_blocks) with K in one buffer
    # and V in two stages. Iteration j issues S_{j+1} and P_j V_j back to back and runs the
    # softmax of S_{j+1} while P_j V_j runs. K_{j+2} is copied as soon as S_{j+1} has retired
    # (the wait of the P V issue), so its copy runs under the softmax and P_j V_j; V_{j+2} goes
    # into P_j V_j's stage once that wgmma is waited for, a whole iteration ahead of its use.
    # Block b's K completes k_ready's phase b, its V phase b // 2 of v_ready[b % 2]. On entry
    # P_j is in registers, acc is rescaled for it, and no wgmma runs; none runs at the back edge.
    for j in range(lo, hi):
        nxt = j + 1
        oc.wait(k_ready, nxt & 1)
        s = oc.mma(q, oc.trans(k_buf), tl.zeros([q.shape[0], BLOCK_N], tl.float32), pending=1)
        oc.wait(oc.index(v_ready, j % 2), (j // 2) & 1)
        acc = oc.mma(p, oc.index(v_ring, j % 2), acc, pending=1)  # S_{j+1} retired: k_buf is free
        pf = j + 2
        oc.expect(k_ready, K_BYTES, pred=pf < n_blocks)
        oc.copy_tma(k_buf, k_desc, [kv_row + pf * BLOCK_N, 0], k_ready, pred=pf < n_blocks)
        p32, alpha, m_i, l_i = _softmax_step(s, nxt, m_i, l_i, qk_scale, offs_m, BLOCK_N, MASKED)
        p = p32.to(k_desc.dtype)
        acc = oc.mma_wait(acc, 0)  # P_j V_j retired: its V stage is free
        vbar = oc.index(v_ready, j % 2)
        oc.expect(vbar, K_BYTES, pred=pf < n_blocks)
        oc.copy_tma(oc.index(v_ring, j % 2), v_desc, [kv_row + pf * BLOCK_N, 0], vbar, pred=pf < n_blocks)
        acc = acc * alpha[:, None]
    return p, m_i, l_i, acc


@triton.jit
def attn_fwd_overlap_kernel(q_desc, k_desc, v_desc, Out, sm_scale, N_CTX, HEAD_DIM: tl.constexpr,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Causal attention forward for one warp group per BLOCK_M (64) query rows with the softmax of
    block j+1 overlapped with P_j V_j (FlashAttention-3's intra-warpgroup order), K in one buffer
    and V in two stages: at head dim 128 with 128-key blocks 112 KiB, two programs per SM. Same
    layout and contract as attn_fwd_kv_split_kernel."""
    start_m, head, q_row, kv_row = _causal_tile(N_CTX, BLOCK_M)
    dtype: tl.constexpr = q_desc.dtype
    q_buf = oc.index(oc.alloc(dtype, [BLOCK_M, HEAD_DIM]), 0)
    k_buf = oc.index(oc.alloc(dtype, [BLOCK_N, HEAD_DIM]), 0)
    v_ring = oc.alloc(dtype, [BLOCK_N, HEAD_DIM], 2)
    q_bar = oc.index(oc.barriers(1), 0)
    k_ready = oc.index(oc.barriers(1), 0)
    v_ready = oc.barriers(2)
    k_bytes: tl.constexpr = BLOCK_N * HEAD_DIM * dtype.primitive_bitwidth // 8
    n_off, n_blocks = causal_key_blocks(start_m, BLOCK_M, BLOCK_N)

    oc.expect(q_bar, BLOCK_M * HEAD_DIM * dtype.primitive_bitwidth // 8)
    oc.copy_tma(q_buf, q_desc, [q_row, 0], q_bar)
    oc.expect(k_ready, k_bytes)
    oc.copy_tma(k_buf, k_desc, [kv_row, 0], k_ready)
    for b in tl.static_range(2):  # V of blocks 0 and 1, where they exist
        vbar = oc.index(v_ready, b)
        oc.expect(vbar, k_bytes, pred=b < n_blocks)
        oc.copy_tma(oc.index(v_ring, b), v_desc, [kv_row + b * BLOCK_N, 0], vbar, pred=b < n_blocks)

    offs_m, m_i, l_i, acc, qk_scale = _online_softmax_start(start_m, sm_scale, BLOCK_M, HEAD_DIM)
    oc.wait(q_bar, 0)
    oc.wait(k_ready, 0)
    s = oc.mma(q_buf, oc.trans(k_buf), tl.zeros([BLOCK_M, BLOCK_N], tl.float32))
    # S_0 retired: k_buf takes block 1.
    oc.expect(k_ready, k_bytes, pred=1 < n_blocks)
    oc.copy_tma(k_buf, k_desc, [kv_row + BLOCK_N, 0], k_ready, pred=1 < n_blocks)
    # Block 0 is masked when it is on the diagonal; masking it elsewhere removes nothing.
    p32, alpha, m_i, l_i = _softmax_step(s, 0, m_i, l_i, qk_scale, offs_m, BLOCK_N, True)
    p = p32.to(dtype)
    acc = acc * alpha[:, None]
    # Iteration j computes the softmax of block j+1: blocks 1 .. n_off-1 unmasked, then the diagonal.
    mid = tl.maximum(n_off - 1, 0)
    p, m_i, l_i, acc = _attn_overlap_blocks(q_buf, k_desc, v_desc, k_buf, v_ring, k_ready, v_ready, kv_row, 0, mid,
                                            n_blocks, p, m_i, l_i, acc, qk_scale, offs_m, BLOCK_N, k_bytes, False)
    p, m_i, l_i, acc = _attn_overlap_blocks(q_buf, k_desc, v_desc, k_buf, v_ring, k_ready, v_ready, kv_row, mid,
                                            n_blocks - 1, n_blocks, p, m_i, l_i, acc, qk_scale, offs_m, BLOCK_N,
                                            k_bytes, True)
    last = n_blocks - 1
    oc.wait(oc.index(v_ready, last % 2), (last // 2) & 1)
    acc = oc.mma(p, oc.index(v_ring, last % 2), acc)
    _store_rows(Out, acc / l_i[:, None], head, N_CTX, offs_m, HEAD_DIM)


#: The ping-pong consumers' turns: named barriers TURN_BARRIER (consumer 0 may issue) and
#: TURN_BARRIER + 1 (consumer 1), each completed by both warp groups (256 threads).
TURN_BARRIER = tl.constexpr(8)


@triton.jit
def _attn_kv_copies(k_desc, v_desc, k_ring, v_ring, ready, empty, kv_row, n_blocks, BLOCK_N: tl.constexpr,
                    STAGES: tl.constexpr, NBYTES: tl.constexpr):
    """A producer partition's K/V copies: block b into stage b % STAGES once every consumer has
    released the stage's previous block (a fresh `empty` barrier's parity-1 wait returns at once)."""
    for b in range(n_blocks):
        st = b % STAGES
        oc.wait(oc.index(empty, st), ((b // STAGES) & 1) ^ 1)
        bar = oc.index(ready, st)
        oc.expect(bar, NBYTES)
        oc.copy_tma(oc.index(k_ring, st), k_desc, [kv_row + b * BLOCK_N, 0], bar)
        oc.copy_tma(oc.index(v_ring, st), v_desc, [kv_row + b * BLOCK_N, 0], bar)


@triton.jit
def _attn_ws_producer(q_desc, k_desc, v_desc, q_buf, k_ring, v_ring, q_bar, ready, empty, q_row, kv_row, n_blocks,
                      BLOCK_N: tl.constexpr, STAGES: tl.constexpr, Q_BYTES: tl.constexpr, NBYTES: tl.constexpr):
    oc.expect(q_bar, Q_BYTES)
    oc.copy_tma(q_buf, q_desc, [q_row, 0], q_bar)
    _attn_kv_copies(k_desc, v_desc, k_ring, v_ring, ready, empty, kv_row, n_blocks, BLOCK_N, STAGES, NBYTES)


@triton.jit
def _attn_ws_blocks(q_buf, k_ring, v_ring, ready, empty, lo, hi, p, m_i, l_i, acc, qk_scale, offs_m,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGES: tl.constexpr, MASKED: tl.constexpr,
                    WHICH: tl.constexpr, TURNS: tl.constexpr):
    # As _attn_pipelined_blocks, with the copies issued by the producer partition: block j's stage
    # is released (empty) once P_j V_j finished. With TURNS (the ping-pong), consumer WHICH issues
    # S_{j+1} and P_j V_j when the other has issued its own for block j - 1 (WHICH 0) or j
    # (WHICH 1), then hands the turn over, so one group's softmax runs while the other's wgmmas
    # use the tensor cores (FlashAttention-3's ping-pong). The turns are hardware named barriers
    # (TURN_BARRIER + c: consumer c may issue), not mbarriers: the handover is on the tensor cores'
    # critical path (an mbarrier turn was 4-7% slower, README). Consumer 1 arrives on consumer 0's
    # barrier only after passing its own, which consumer 0 opens after passing its, so neither
    # gets two arrivals ahead of the other.
    # `acc` comes in already rescaled for block j's softmax: the rescale runs after P_j V_j is
    # waited for, outside the other consumer's turn.
    for j in range(lo, hi):
        nxt = j + 1
        oc.wait(oc.index(ready, nxt % STAGES), (nxt // STAGES) & 1)
        if TURNS:
            oc.named_wait(TURN_BARRIER + WHICH, 256)
        s = oc.mma(q_buf, oc.trans(oc.index(k_ring, nxt % STAGES)), tl.zeros([BLOCK_M, BLOCK_N], tl.float32),
                   pending=1)
        acc = oc.mma(p, oc.index(v_ring, j % STAGES), acc, pending=1)
        if TURNS:
            oc.named_arrive(TURN_BARRIER + 1 - WHICH, 256)
        p32, alpha, m_i, l_i = _softmax_step(s, nxt, m_i, l_i, qk_scale, offs_m, BLOCK_N, MASKED)
        p = p32.to(q_buf.dtype)
        acc = oc.mma_wait(acc, 0)
        oc.arrive(oc.index(empty, j % STAGES))
        acc = acc * alpha[:, None]
    return p, m_i, l_i, acc


@triton.jit
def _attn_consumer(q_buf, k_ring, v_ring, q_bar, ready, empty, Out, sm_scale, N_CTX, row0, head, n_off,
                   n_blocks, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   STAGES: tl.constexpr, WHICH: tl.constexpr, TURNS: tl.constexpr, OUT_TMA: tl.constexpr):
    """A consumer partition of the warp-specialized attention kernels: query rows row0 ..
    row0 + BLOCK_M - 1 of one head against key blocks 0 .. n_blocks - 1 (those from n_off on
    masked), fed by a producer partition; with TURNS, one of two ping-pong consumers (the same
    number of blocks for both)."""
    offs_m = row0 + tl.arange(0, BLOCK_M)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    if TURNS and WHICH == 1:
        oc.named_arrive(TURN_BARRIER, 256)  # consumer 0 takes the first turn
    oc.wait(q_bar, 0)
    oc.wait(oc.index(ready, 0), 0)
    s = oc.mma(q_buf, oc.trans(oc.index(k_ring, 0)), tl.zeros([BLOCK_M, BLOCK_N], tl.float32))
    p32, alpha, m_i, l_i = _softmax_step(s, 0, m_i, l_i, qk_scale, offs_m, BLOCK_N, True)
    p = p32.to(q_buf.dtype)
    acc = acc * alpha[:, None]
    mid = tl.maximum(n_off - 1, 0)
    p, m_i, l_i, acc = _attn_ws_blocks(q_buf, k_ring, v_ring, ready, empty, 0, mid, p, m_i, l_i, acc, qk_scale,
                                       offs_m, BLOCK_M, BLOCK_N, STAGES, False, WHICH, TURNS)
    p, m_i, l_i, acc = _attn_ws_blocks(q_buf, k_ring, v_ring, ready, empty, mid, n_blocks - 1, p, m_i, l_i, acc,
                                       qk_scale, offs_m, BLOCK_M, BLOCK_N, STAGES, True, WHICH, TURNS)
    if TURNS and WHICH == 0:
        oc.named_wait(TURN_BARRIER, 256)  # consumer 1's arrival after its last turn
    acc = oc.mma(p, oc.index(v_ring, (n_blocks - 1) % STAGES), acc)
    if OUT_TMA:
        # Out is a TMA descriptor: the rows go out through Q's buffer, whose last reader (the
        # last S wgmma) has retired, so the epilogue needs no shared scratch of its own (a
        # register-to-blocked conversion for plain stores takes BLOCK_M * HEAD_DIM * 2 bytes).
        oc.write(q_buf, (acc / l_i[:, None]).to(q_buf.dtype))
        oc.store_tma(Out, [head * N_CTX + row0, 0], q_buf)
        oc.store_wait(0)
    else:
        _store_rows(Out, acc / l_i[:, None], head, N_CTX, offs_m, HEAD_DIM)


@triton.jit
def _attn_ws_consumer(q_buf, k_ring, v_ring, q_bar, ready, empty, Out, sm_scale, N_CTX, start_m, head, n_off,
                      n_blocks, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      STAGES: tl.constexpr):
    _attn_consumer(q_buf, k_ring, v_ring, q_bar, ready, empty, Out, sm_scale, N_CTX, start_m * BLOCK_M, head,
                   n_off, n_blocks, HEAD_DIM, BLOCK_M, BLOCK_N, STAGES, 0, False, False)


@triton.jit
def attn_fwd_ws_kernel(q_desc, k_desc, v_desc, Out, sm_scale, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                       BLOCK_N: tl.constexpr, STAGES: tl.constexpr, PRODUCER_REGS: tl.constexpr):
    """attn_fwd_pipelined_kernel with the TMA copies in a one-warp producer partition (``split``)
    that runs ahead through STAGES (>= 3) K/V stages, and register reallocation: the producer
    keeps PRODUCER_REGS, the two consumer warp groups get the rest (240 with 24)."""
    # Heaviest query tiles (most key blocks under the causal mask) first: the last wave of
    # programs then holds the light ones, which shortens the tail.
    start_m = tl.num_programs(0) - 1 - tl.program_id(0)
    head = tl.program_id(1)
    q_row = head * N_CTX + start_m * BLOCK_M
    kv_row = head * N_CTX
    dtype: tl.constexpr = q_desc.dtype
    q_buf = oc.index(oc.alloc(dtype, [BLOCK_M, HEAD_DIM]), 0)
    k_ring = oc.alloc(dtype, [BLOCK_N, HEAD_DIM], STAGES)
    v_ring = oc.alloc(dtype, [BLOCK_N, HEAD_DIM], STAGES)
    q_bar = oc.index(oc.barriers(1), 0)
    ready = oc.barriers(STAGES)
    empty = oc.barriers(STAGES)
    q_bytes: tl.constexpr = BLOCK_M * HEAD_DIM * dtype.primitive_bitwidth // 8
    nbytes: tl.constexpr = 2 * BLOCK_N * HEAD_DIM * dtype.primitive_bitwidth // 8
    n_off = start_m * (BLOCK_M // BLOCK_N)
    n_blocks = (start_m + 1) * (BLOCK_M // BLOCK_N)
    oc.split([(_attn_ws_consumer, (q_buf, k_ring, v_ring, q_bar, ready, empty, Out, sm_scale, N_CTX, start_m, head,
                                   n_off, n_blocks, HEAD_DIM, BLOCK_M, BLOCK_N, STAGES)),
              (_attn_ws_producer, (q_desc, k_desc, v_desc, q_buf, k_ring, v_ring, q_bar, ready, empty, q_row, kv_row,
                                   n_blocks, BLOCK_N, STAGES, q_bytes, nbytes))], [1], [PRODUCER_REGS])


def attn_fwd_ws(q, k, v, sm_scale: float, config: dict | None = None):
    """attn_fwd with attn_fwd_ws_kernel (producer partition, setmaxnreg, FA3 schedule)."""
    cfg = dict(dict(BLOCK_M=128, BLOCK_N=64, STAGES=3, PRODUCER_REGS=24, num_warps=8) if config is None else config)
    return attn_fwd(q, k, v, sm_scale, cfg, kernel=attn_fwd_ws_kernel)


@triton.jit
def _attn_pp_producer(q_desc, k_desc, v_desc, q_ring, k_ring, v_ring, q_bar, ready, empty, q_row, kv_row, n_blocks,
                      BLOCK_Q: tl.constexpr, BLOCK_N: tl.constexpr, STAGES: tl.constexpr, Q_BYTES: tl.constexpr,
                      NBYTES: tl.constexpr):
    # Both consumers' query rows on one barrier, then each key block once for both of them.
    oc.expect(q_bar, 2 * Q_BYTES)
    oc.copy_tma(oc.index(q_ring, 0), q_desc, [q_row, 0], q_bar)
    oc.copy_tma(oc.index(q_ring, 1), q_desc, [q_row + BLOCK_Q, 0], q_bar)
    _attn_kv_copies(k_desc, v_desc, k_ring, v_ring, ready, empty, kv_row, n_blocks, BLOCK_N, STAGES, NBYTES)


@triton.jit
def _attn_pp_consumer(q_ring, k_ring, v_ring, q_bar, ready, empty, Out, sm_scale, N_CTX, start_m, head,
                      n_blocks, WHICH: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_Q: tl.constexpr,
                      BLOCK_N: tl.constexpr, STAGES: tl.constexpr):
    # Both consumers run every key block of the 2 * BLOCK_Q rows, so they take the same number of
    # turns; a block wholly above one consumer's diagonal is masked to nothing for it.
    n_off = (start_m * 2 * BLOCK_Q) // BLOCK_N  # key blocks below both consumers' diagonals
    _attn_consumer(oc.index(q_ring, WHICH), k_ring, v_ring, q_bar, ready, empty, Out, sm_scale, N_CTX,
                   start_m * 2 * BLOCK_Q + WHICH * BLOCK_Q, head, n_off, n_blocks, HEAD_DIM, BLOCK_Q, BLOCK_N,
                   STAGES, WHICH, True, True)


@triton.jit
def attn_fwd_pingpong_kernel(q_desc, k_desc, v_desc, o_desc, sm_scale, N_CTX, HEAD_DIM: tl.constexpr,
                             BLOCK_Q: tl.constexpr, BLOCK_N: tl.constexpr, STAGES: tl.constexpr,
                             CONSUMER_REGS: tl.constexpr, PRODUCER_REGS: tl.constexpr):
    """Causal attention forward (num_warps=4), FlashAttention-3's full schedule: one program per
    2 * BLOCK_Q query rows of one head; two consumer warp groups (the default partition and a
    4-warp worker) take BLOCK_Q rows each and issue their wgmmas in turns (hardware named barriers
    TURN_BARRIER and TURN_BARRIER + 1), each overlapping its softmax with its own P V; a one-warp
    producer copies every key block once for both. Each consumer writes its rows with a TMA store
    (o_desc, blocks of BLOCK_Q rows) through its Q buffer."""
    start_m = tl.num_programs(0) - 1 - tl.program_id(0)  # heaviest tiles first
    head = tl.program_id(1)
    q_row = head * N_CTX + start_m * 2 * BLOCK_Q
    kv_row = head * N_CTX
    dtype: tl.constexpr = q_desc.dtype
    q_ring = oc.alloc(dtype, [BLOCK_Q, HEAD_DIM], 2)
    k_ring = oc.alloc(dtype, [BLOCK_N, HEAD_DIM], STAGES)
    v_ring = oc.alloc(dtype, [BLOCK_N, HEAD_DIM], STAGES)
    q_bar = oc.index(oc.barriers(1), 0)
    ready = oc.barriers(STAGES)
    empty = oc.barriers(STAGES, arrivals=2)  # one arrival per consumer
    q_bytes: tl.constexpr = BLOCK_Q * HEAD_DIM * dtype.primitive_bitwidth // 8
    nbytes: tl.constexpr = 2 * BLOCK_N * HEAD_DIM * dtype.primitive_bitwidth // 8
    n_blocks = ((start_m + 1) * 2 * BLOCK_Q) // BLOCK_N
    oc.split([(_attn_pp_consumer, (q_ring, k_ring, v_ring, q_bar, ready, empty, o_desc, sm_scale, N_CTX, start_m,
                                   head, n_blocks, 0, HEAD_DIM, BLOCK_Q, BLOCK_N, STAGES)),
              (_attn_pp_consumer, (q_ring, k_ring, v_ring, q_bar, ready, empty, o_desc, sm_scale, N_CTX, start_m,
                                   head, n_blocks, 1, HEAD_DIM, BLOCK_Q, BLOCK_N, STAGES)),
              (_attn_pp_producer, (q_desc, k_desc, v_desc, q_ring, k_ring, v_ring, q_bar, ready, empty, q_row,
                                   kv_row, n_blocks, BLOCK_Q, BLOCK_N, STAGES, q_bytes, nbytes))],
             [4, 1], [CONSUMER_REGS, PRODUCER_REGS])


#: Ping-pong attention: 64 query rows per consumer warp group, 128-key blocks in 3 stages (at head
#: dim 128: 224 KiB, one program per SM; the tile and stage count of cuDNN's SDPA kernel there, and
#: the fastest OnChip kernel at head dim 128, results/vendor-pingpong*-h200.json).
PINGPONG_ATTN_CONFIG = dict(BLOCK_Q=64, BLOCK_N=128, STAGES=3, CONSUMER_REGS=240, PRODUCER_REGS=24, num_warps=4)


def attn_fwd_pingpong(q, k, v, sm_scale: float, config: dict | None = None):
    """attn_fwd with attn_fwd_pingpong_kernel (N_CTX a multiple of 2 * BLOCK_Q, itself of BLOCK_N)."""
    cfg = dict(PINGPONG_ATTN_CONFIG if config is None else config)
    return _launch_attention(attn_fwd_pingpong_kernel, q, k, v, sm_scale, cfg, cfg["BLOCK_Q"], 2 * cfg["BLOCK_Q"],
                             "2 * BLOCK_Q", out_desc=True)


#: The head-dim-128 tile: BLOCK_M 128 over two warp groups, BLOCK_N 64 (on the H200 at cd3daa7,
#: BLOCK_N 64 beat 128 with these 128 rows: results/check-h200.json), 126 registers, two programs
#: per SM. With Q in registers (the head-dim-64 default from 2e93034 to 42344c4) it needs 127 at 64
#: and 194 at 128 (one program per SM).
ATTN_N64 = dict(BLOCK_M=128, BLOCK_N=64, Q_IN_REGISTERS=False, num_warps=8)
#: The head-dim-64 tile: one warp group per program, 64 query rows against 128-key blocks (the tile
#: cuDNN's SDPA kernel names at head dim 64 on the H200): 128 registers and 72 KiB, three programs
#: per SM. Each S wgmma (m64n128k16) reads its shared-memory operands at 96 bytes per clock at full
#: tensor rate, where m64n64k16 reads 128: all of an SM's shared-memory bandwidth.
ATTN_M64_N128 = dict(BLOCK_M=64, BLOCK_N=128, Q_IN_REGISTERS=False, num_warps=4)
ATTN_CONFIGS = {64: ATTN_M64_N128, 128: ATTN_N64}


def attn_fwd(q, k, v, sm_scale: float, config: dict | None = None, kernel=None):
    """Causal attention forward with attn_fwd_kernel; q, k, v (heads, N_CTX, HEAD_DIM) contiguous
    torch tensors on the GPU (fp16 or bf16), N_CTX a multiple of BLOCK_M and of BLOCK_N."""
    cfg = dict(ATTN_CONFIGS[q.shape[-1]] if config is None else config)
    return _launch_attention(attn_fwd_kernel if kernel is None else kernel, q, k, v, sm_scale, cfg, cfg["BLOCK_M"],
                             cfg["BLOCK_M"], "BLOCK_M")


def _launch_attention(kernel, q, k, v, sm_scale: float, cfg: dict, q_block: int, rows: int, rows_name: str,
                      out_desc: bool = False):
    """Check the shape and scale, make the TMA descriptors (Q in q_block rows, K and V in BLOCK_N;
    with ``out_desc`` the output's too, in q_block rows) and launch ``kernel`` with one program per
    ``rows`` query rows of each head."""
    import torch
    from triton.tools.tensor_descriptor import TensorDescriptor

    heads, n_ctx, d = q.shape
    if not 0 < sm_scale < math.inf:
        # The kernels take each row's max before scaling (_softmax_step), which is the max of
        # the scaled scores only for a positive, finite scale.
        raise ValueError(f"sm_scale must be positive and finite, got {sm_scale}")
    if kernel in _ANY_BLOCK_N:  # their key-block counts round up at the diagonal
        if n_ctx % rows or n_ctx % cfg["BLOCK_N"]:
            raise ValueError(f"N_CTX={n_ctx} must be a multiple of {rows_name}={rows} and of "
                             f"BLOCK_N={cfg['BLOCK_N']}")
    elif n_ctx % rows or rows % cfg["BLOCK_N"]:
        raise ValueError(f"N_CTX={n_ctx} must be a multiple of {rows_name}={rows}, itself of "
                         f"BLOCK_N={cfg['BLOCK_N']}")
    out = torch.empty_like(q)
    q_desc = TensorDescriptor.from_tensor(q.reshape(heads * n_ctx, d), [q_block, d])
    k_desc = TensorDescriptor.from_tensor(k.reshape(heads * n_ctx, d), [cfg["BLOCK_N"], d])
    v_desc = TensorDescriptor.from_tensor(v.reshape(heads * n_ctx, d), [cfg["BLOCK_N"], d])
    o = TensorDescriptor.from_tensor(out.reshape(heads * n_ctx, d), [q_block, d]) if out_desc else out
    kernel[(n_ctx // rows, heads)](q_desc, k_desc, v_desc, o, sm_scale, n_ctx, HEAD_DIM=d, **cfg)
    return out


#: attn_fwd_kv_split_kernel's tile: 64 query rows, 128-key blocks, one warp group.
KV_SPLIT_CONFIG = dict(BLOCK_M=64, BLOCK_N=128, num_warps=4)


def attn_fwd_kv_split(q, k, v, sm_scale: float, config: dict | None = None):
    """attn_fwd with attn_fwd_kv_split_kernel (K double-buffered, V in one buffer)."""
    cfg = dict(KV_SPLIT_CONFIG if config is None else config)
    return _launch_attention(attn_fwd_kv_split_kernel, q, k, v, sm_scale, cfg, cfg["BLOCK_M"], cfg["BLOCK_M"],
                             "BLOCK_M")


def attn_fwd_overlap(q, k, v, sm_scale: float, config: dict | None = None):
    """attn_fwd with attn_fwd_overlap_kernel (softmax overlapped with P V; K in one buffer, V in two)."""
    cfg = dict(KV_SPLIT_CONFIG if config is None else config)
    return _launch_attention(attn_fwd_overlap_kernel, q, k, v, sm_scale, cfg, cfg["BLOCK_M"], cfg["BLOCK_M"],
                             "BLOCK_M")


#: Kernels whose key blocks may be taller than their query rows (BLOCK_N > BLOCK_M).
_ANY_BLOCK_N = (attn_fwd_kernel, attn_fwd_kv_split_kernel, attn_fwd_overlap_kernel)


#: attn_fwd_pipelined_kernel's tiles at both head dims. It keeps Q in shared memory: in registers
#: it needed 166 at head dim 64 (one block per SM) and ran 20-23% slower (scratch H200 run of
#: 2d5ed49+qreg-fma, not in results/).
PIPELINED_ATTN_CONFIG = dict(BLOCK_M=128, BLOCK_N=64, num_warps=8)


def attn_fwd_pipelined(q, k, v, sm_scale: float, config: dict | None = None):
    """attn_fwd with attn_fwd_pipelined_kernel (softmax overlapped with the next S wgmma)."""
    return attn_fwd(q, k, v, sm_scale, PIPELINED_ATTN_CONFIG if config is None else config,
                    kernel=attn_fwd_pipelined_kernel)


# ------------------------------------------------------------------------------------------------
# What bench.py --vendor times against cuBLAS and torch's SDPA (each a callable of the torch
# tensors; the fastest of each kind counts).

#: OnChip GEMM candidates: (a, b) -> a @ b.
GEMM_VARIANTS = {
    "tma_128x256x64_s4": matmul_tma,
    "ws_128x256x64_s4": matmul_ws,
    "persistent_128x256x64_s3_r24": matmul_persistent,
    "persistent_128x128x64_s5_r24": lambda a, b: matmul_persistent(
        a, b, dict(PERSISTENT_CONFIG, BN=128, STAGES=5)),
    "pingpong_128x128x64_s4": matmul_pingpong,
    "pingpong_128x128x64_s5": lambda a, b: matmul_pingpong(a, b, dict(PINGPONG_CONFIG, STAGES=5)),
    "pingpong_64x256x64_s4": lambda a, b: matmul_pingpong(a, b, dict(PINGPONG_CONFIG, BM=64, BN=256)),
    "persistent_256x128x64_s3_r24": lambda a, b: matmul_persistent(a, b, dict(PERSISTENT_CONFIG, BM=256, BN=128)),
    # Groups of 4 row blocks instead of 8: 0.965 / 1.003 of cuBLAS at 4096^3 (fp16 / bf16) against
    # 0.954 / 0.981 for GROUP_M=8 in one scratch H200 run at 0b2d690.
    "persistent_128x256x64_s3_r24_g4": lambda a, b: matmul_persistent(a, b, dict(PERSISTENT_CONFIG, GROUP_M=4)),
}

#: OnChip causal attention candidates: (q, k, v, sm_scale) -> out. At d5b1073 (serialized FA3
#: kernels) taller query tiles (256 rows, 128x128) were 10-25% slower than attn_n64 and are gone;
#: so are the ping-pong attentions with 5 and 6 stages (results/explore-h200.json: never the fastest)
#: and FlashAttention-4's conditional rescale (a block-wide max of each row max's growth, then a
#: uniform branch around the rescale), which was 2-11% slower than attn_n64 / attn_n64_qreg at d0a4e0e
#: (results/vendor-h200.json, attn_n64_lazy and attn_n64_qreg_lazy).
ATTN_VARIANTS = {
    "attn_m64_n128": lambda q, k, v, s: attn_fwd(q, k, v, s, ATTN_M64_N128),
    "attn_kv_split_m64_n128": lambda q, k, v, s: attn_fwd_kv_split(q, k, v, s, KV_SPLIT_CONFIG),
    "attn_overlap_m64_n128": lambda q, k, v, s: attn_fwd_overlap(q, k, v, s, KV_SPLIT_CONFIG),
    "attn_n64": lambda q, k, v, s: attn_fwd(q, k, v, s, ATTN_N64),
    "attn_n64_qreg": lambda q, k, v, s: attn_fwd(q, k, v, s, dict(ATTN_N64, Q_IN_REGISTERS=True)),
    "fa3_pipelined_n64": lambda q, k, v, s: attn_fwd_pipelined(q, k, v, s, PIPELINED_ATTN_CONFIG),
    "fa3_pingpong_q64_n128_s3": lambda q, k, v, s: attn_fwd_pingpong(q, k, v, s, PINGPONG_ATTN_CONFIG),
    "fa3_pingpong_q64_n64_s4": lambda q, k, v, s: attn_fwd_pingpong(q, k, v, s, dict(PINGPONG_ATTN_CONFIG, BLOCK_N=64,
                                                                                     STAGES=4)),
    "fa3_pingpong_q64_n64_s5": lambda q, k, v, s: attn_fwd_pingpong(q, k, v, s, dict(PINGPONG_ATTN_CONFIG, BLOCK_N=64,
                                                                                     STAGES=5)),
}
