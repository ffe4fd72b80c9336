"""The reliability corpus: kernels of the kinds people really write with Triton.

Each :class:`CorpusKernel` holds a ``@triton.jit`` (or ``@gluon.jit``) function, the
signature and small constexprs the CPU test compiles it with (``triton.compile`` through
cubin for ``GPUTarget("cuda", 90, 32)``), and the launch options. ``check_gpu.py`` runs the
same functions on a GPU; it builds inputs and float64 references itself, so this module
needs only triton (no torch).

Kernels follow Triton's tutorials (vector add, fused softmax, layer norm, matmul, grouped
GEMM, fused attention) in shape, trimmed to what a test needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl


@dataclass(frozen=True)
class CorpusKernel:
    """One corpus entry: the function and how the CPU test compiles it."""

    name: str
    fn: Any
    signature: dict[str, str]
    constexprs: dict[str, Any]
    num_warps: int = 4
    num_stages: int = 3
    gluon: bool = False
    tags: tuple[str, ...] = field(default_factory=tuple)

    def source(self) -> Any:
        from triton.compiler import ASTSource

        cls = gluon.GluonASTSource if self.gluon else ASTSource
        return cls(self.fn, signature=self.signature, constexprs=self.constexprs)

    def options(self) -> dict[str, Any]:
        return {"num_warps": self.num_warps, "num_stages": self.num_stages}


# --------------------------------------------------------------------------- #
# Elementwise, softmax, layer norm
# --------------------------------------------------------------------------- #


@triton.jit
def vector_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def fused_softmax(out_ptr, in_ptr, in_stride, out_stride, n_rows, n_cols, BLOCK: tl.constexpr):
    # One program per row block, strided over rows (the tutorial's persistent form).
    start = tl.program_id(0)
    step = tl.num_programs(0)
    for row in tl.range(start, n_rows, step):
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_stride + cols, num / tl.sum(num, axis=0), mask=mask)


@triton.jit
def layer_norm_fwd(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, stride, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_ptr += row * stride
    y_ptr += row * stride
    mean_acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mean_acc += tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    mean = tl.sum(mean_acc, axis=0) / n_cols
    var_acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        x = tl.where(cols < n_cols, x - mean, 0.0)
        var_acc += x * x
    rstd = 1 / tl.sqrt(tl.sum(var_acc, axis=0) / n_cols + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < n_cols
        w = tl.load(w_ptr + cols, mask=mask)
        b = tl.load(b_ptr + cols, mask=mask)
        x = tl.load(x_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + cols, (x - mean) * rstd * w + b, mask=mask)


@triton.jit
def layer_norm_bwd_dx(dx_ptr, dy_ptr, dw_part_ptr, db_part_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr,
                      stride, n_cols, BLOCK: tl.constexpr):
    # dx for one row; the row's dw/db contributions go to per-row partial buffers that
    # layer_norm_bwd_dwdb reduces (the tutorial reduces through locks; partials keep it simple).
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(dy_ptr + row * stride + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
    mean = tl.load(mean_ptr + row)
    rstd = tl.load(rstd_ptr + row)
    xhat = tl.where(mask, (x - mean) * rstd, 0.0)
    wdy = tl.where(mask, w * dy, 0.0)
    c1 = tl.sum(xhat * wdy, axis=0) / n_cols
    c2 = tl.sum(wdy, axis=0) / n_cols
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(dx_ptr + row * stride + cols, dx, mask=mask)
    tl.store(dw_part_ptr + row * stride + cols, dy * xhat, mask=mask)
    tl.store(db_part_ptr + row * stride + cols, dy, mask=mask)


@triton.jit
def layer_norm_bwd_dwdb(dw_part_ptr, db_part_ptr, dw_ptr, db_ptr, n_rows, n_cols,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    dw = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for i in range(0, n_rows, BLOCK_M):
        rows = i + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
        offs = rows[:, None] * n_cols + cols[None, :]
        dw += tl.load(dw_part_ptr + offs, mask=mask, other=0.0)
        db += tl.load(db_part_ptr + offs, mask=mask, other=0.0)
    tl.store(dw_ptr + cols, tl.sum(dw, axis=0), mask=cols < n_cols)
    tl.store(db_ptr + cols, tl.sum(db, axis=0), mask=cols < n_cols)


# --------------------------------------------------------------------------- #
# Matmul: plain (grouped ordering), persistent, tensor descriptors, grouped GEMM
# --------------------------------------------------------------------------- #


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_in_group = GROUP_M * num_pid_n
    group_id = pid // num_in_group
    first_m = group_id * GROUP_M
    group_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % num_in_group) % group_m)
    pid_n = (pid % num_in_group) // group_m
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(tl.float16)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, c, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def matmul_persistent(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                      stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_K: tl.constexpr, NUM_SMS: tl.constexpr):
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_tiles = num_pid_m * num_pid_n
    for tile in tl.range(start_pid, num_tiles, NUM_SMS, flatten=False):
        pid_m = tile // num_pid_n
        pid_n = tile % num_pid_n
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            rk = k0 + tl.arange(0, BLOCK_K)
            a = tl.load(a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak,
                        mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
            b = tl.load(b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn,
                        mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
            acc = tl.dot(a, b, acc)
        tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc.to(tl.float16),
                 mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def matmul_descriptor(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_K: tl.constexpr):
    # Device-side tensor descriptors (TMA on sm_90); row-major A [M, K], B [K, N], C [M, N].
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
        b = b_desc.load([k * BLOCK_K, pid_n * BLOCK_N])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.float16))


@triton.jit
def grouped_gemm(group_a_ptrs, group_b_ptrs, group_c_ptrs, group_sizes, group_lds, group_count,
                 NUM_SM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # The tutorial's grouped GEMM: per group g, C_g = A_g @ B_g with sizes (m, n, k) in
    # group_sizes[3g:3g+3] and leading dimensions in group_lds[3g:3g+3].
    tile_idx = tl.program_id(0)
    last_problem_end = 0
    for g in range(group_count):
        gm = tl.load(group_sizes + g * 3)
        gn = tl.load(group_sizes + g * 3 + 1)
        gk = tl.load(group_sizes + g * 3 + 2)
        num_m_tiles = tl.cdiv(gm, BLOCK_M)
        num_n_tiles = tl.cdiv(gn, BLOCK_N)
        num_tiles = num_m_tiles * num_n_tiles
        while tile_idx >= last_problem_end and tile_idx < last_problem_end + num_tiles:
            lda = tl.load(group_lds + g * 3)
            ldb = tl.load(group_lds + g * 3 + 1)
            ldc = tl.load(group_lds + g * 3 + 2)
            a_ptr = tl.load(group_a_ptrs + g).to(tl.pointer_type(tl.float16))
            b_ptr = tl.load(group_b_ptrs + g).to(tl.pointer_type(tl.float16))
            c_ptr = tl.load(group_c_ptrs + g).to(tl.pointer_type(tl.float16))
            tile_in_gemm = tile_idx - last_problem_end
            tile_m = tile_in_gemm // num_n_tiles
            tile_n = tile_in_gemm % num_n_tiles
            offs_am = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
            offs_bn = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
            offs_k = tl.arange(0, BLOCK_K)
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for kk in range(0, tl.cdiv(gk, BLOCK_K)):
                rk = kk * BLOCK_K + offs_k
                a = tl.load(a_ptr + offs_am[:, None] * lda + rk[None, :],
                            mask=(offs_am[:, None] < gm) & (rk[None, :] < gk), other=0.0)
                b = tl.load(b_ptr + rk[:, None] * ldb + offs_bn[None, :],
                            mask=(rk[:, None] < gk) & (offs_bn[None, :] < gn), other=0.0)
                acc = tl.dot(a, b, acc)
            tl.store(c_ptr + offs_am[:, None] * ldc + offs_bn[None, :], acc.to(tl.float16),
                     mask=(offs_am[:, None] < gm) & (offs_bn[None, :] < gn))
            tile_idx += NUM_SM
        last_problem_end = last_problem_end + num_tiles


# --------------------------------------------------------------------------- #
# Attention forward and backward (causal and not)
# --------------------------------------------------------------------------- #


@triton.jit
def attention_fwd(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, sm_scale, stride_h, stride_n, n_ctx,
                  HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    # q, k, v, o: [heads, n_ctx, HEAD_DIM] fp16 contiguous; lse: [heads, n_ctx] fp32 (natural log).
    start_m = tl.program_id(0)
    head = tl.program_id(1)
    base = head * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_n + offs_d[None, :], mask=offs_m[:, None] < n_ctx, other=0.0)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # log2(e)
    hi = tl.minimum((start_m + 1) * BLOCK_M, n_ctx) if CAUSAL else n_ctx
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(k_ptr + base + cols[None, :] * stride_n + offs_d[:, None], mask=cols[None, :] < n_ctx, other=0.0)
        qk = tl.dot(q, k) * qk_scale
        keep = cols[None, :] < n_ctx
        if CAUSAL:
            keep = keep & (offs_m[:, None] >= cols[None, :])
        qk = tl.where(keep, qk, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + base + cols[:, None] * stride_n + offs_d[None, :], mask=cols[:, None] < n_ctx, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(lse_ptr + head * n_ctx + offs_m, (m_i + tl.math.log2(l_i)) / 1.44269504, mask=offs_m < n_ctx)
    tl.store(o_ptr + base + offs_m[:, None] * stride_n + offs_d[None, :], acc.to(tl.float16), mask=offs_m[:, None] < n_ctx)


@triton.jit
def attention_bwd(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, dk_ptr, dv_ptr, sm_scale,
                  stride_h, stride_n, n_ctx, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    # One program per key block: dk and dv accumulate locally, dq (fp32) through atomics.
    # lse = logsumexp of the scaled scores (natural log), delta = rowsum(o * do), both fp32.
    start_n = tl.program_id(0)
    head = tl.program_id(1)
    base = head * stride_h
    offs_n = start_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    kv_mask = offs_n[:, None] < n_ctx
    k = tl.load(k_ptr + base + offs_n[:, None] * stride_n + offs_d[None, :], mask=kv_mask, other=0.0)
    v = tl.load(v_ptr + base + offs_n[:, None] * stride_n + offs_d[None, :], mask=kv_mask, other=0.0)
    dk = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    lo = (start_n * BLOCK_N // BLOCK_M) * BLOCK_M if CAUSAL else 0
    for start_m in range(lo, n_ctx, BLOCK_M):
        offs_m = start_m + tl.arange(0, BLOCK_M)
        q_mask = offs_m[:, None] < n_ctx
        q = tl.load(q_ptr + base + offs_m[:, None] * stride_n + offs_d[None, :], mask=q_mask, other=0.0)
        do = tl.load(do_ptr + base + offs_m[:, None] * stride_n + offs_d[None, :], mask=q_mask, other=0.0)
        lse = tl.load(lse_ptr + head * n_ctx + offs_m, mask=offs_m < n_ctx, other=0.0)
        delta = tl.load(delta_ptr + head * n_ctx + offs_m, mask=offs_m < n_ctx, other=0.0)
        s = tl.dot(q, tl.trans(k)) * sm_scale
        keep = (offs_m[:, None] < n_ctx) & (offs_n[None, :] < n_ctx)
        if CAUSAL:
            keep = keep & (offs_m[:, None] >= offs_n[None, :])
        p = tl.where(keep, tl.exp(s - lse[:, None]), 0.0)
        dv += tl.dot(tl.trans(p.to(tl.float16)), do)
        dp = tl.dot(do, tl.trans(v))
        ds = p * (dp - delta[:, None]) * sm_scale
        dk += tl.dot(tl.trans(ds.to(tl.float16)), q)
        dq = tl.dot(ds.to(tl.float16), k)
        tl.atomic_add(dq_ptr + base + offs_m[:, None] * stride_n + offs_d[None, :], dq, mask=q_mask)
    tl.store(dk_ptr + base + offs_n[:, None] * stride_n + offs_d[None, :], dk.to(tl.float16), mask=kv_mask)
    tl.store(dv_ptr + base + offs_n[:, None] * stride_n + offs_d[None, :], dv.to(tl.float16), mask=kv_mask)


# --------------------------------------------------------------------------- #
# Reductions, scans, atomics
# --------------------------------------------------------------------------- #


@triton.jit
def row_reductions(x_ptr, sum_ptr, max_ptr, argmax_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    tl.store(sum_ptr + row, tl.sum(tl.where(mask, x, 0.0), axis=0))
    tl.store(max_ptr + row, tl.max(x, axis=0))
    tl.store(argmax_ptr + row, tl.argmax(x, axis=0))


@triton.jit
def _mul(a, b):
    return a * b


@triton.jit
def row_scans(x_ptr, cumsum_ptr, cumprod_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    tl.store(cumsum_ptr + row * stride + cols, tl.cumsum(x, axis=0), mask=mask)
    ones = tl.where(mask, x, 1.0)
    tl.store(cumprod_ptr + row * stride + cols, tl.associative_scan(ones, 0, _mul), mask=mask)


@triton.jit
def histogram_atomics(x_ptr, hist_ptr, max_ptr, n, num_bins, BLOCK: tl.constexpr):
    # x holds int32 values in [0, num_bins); counts per bin and the global maximum.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(hist_ptr + x, tl.full([BLOCK], 1, tl.int32), mask=mask & (x < num_bins))
    tl.atomic_max(max_ptr, tl.max(tl.where(mask, x, -1), axis=0))


# --------------------------------------------------------------------------- #
# Gluon
# --------------------------------------------------------------------------- #


@gluon.jit
def gluon_axpy(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: gl.constexpr):
    # Launched with num_warps=4 (the layout spreads BLOCK over 4 warps of 32 threads).
    layout: gl.constexpr = gl.BlockedLayout(size_per_thread=[BLOCK // 128], threads_per_warp=[32],
                                            warps_per_cta=[4], order=[0])
    offs = gl.program_id(0) * BLOCK + gl.arange(0, BLOCK, layout=layout)
    mask = offs < n
    x = gl.load(x_ptr + offs, mask=mask)
    y = gl.load(y_ptr + offs, mask=mask)
    gl.store(out_ptr + offs, alpha * x + y, mask=mask)


# --------------------------------------------------------------------------- #
# The corpus
# --------------------------------------------------------------------------- #

_MM_SIG = {n: "i32" for n in ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn")}
_ATT_CONST = {"HEAD_DIM": 32, "BLOCK_M": 32, "BLOCK_N": 32}


def _attn_fwd(causal: bool) -> CorpusKernel:
    return CorpusKernel(
        "attention_fwd_causal" if causal else "attention_fwd", attention_fwd,
        {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16", "lse_ptr": "*fp32",
         "sm_scale": "fp32", "stride_h": "i32", "stride_n": "i32", "n_ctx": "i32"},
        {**_ATT_CONST, "CAUSAL": causal}, tags=("attention", "loop"))


def _attn_bwd(causal: bool) -> CorpusKernel:
    return CorpusKernel(
        "attention_bwd_causal" if causal else "attention_bwd", attention_bwd,
        {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "do_ptr": "*fp16", "lse_ptr": "*fp32",
         "delta_ptr": "*fp32", "dq_ptr": "*fp32", "dk_ptr": "*fp16", "dv_ptr": "*fp16", "sm_scale": "fp32",
         "stride_h": "i32", "stride_n": "i32", "n_ctx": "i32"},
        {**_ATT_CONST, "CAUSAL": causal}, tags=("attention", "loop", "atomics"))


CORPUS: tuple[CorpusKernel, ...] = (
    CorpusKernel("vector_add", vector_add, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                 {"BLOCK": 256}),
    CorpusKernel("fused_softmax", fused_softmax,
                 {"out_ptr": "*fp32", "in_ptr": "*fp32", "in_stride": "i32", "out_stride": "i32", "n_rows": "i32",
                  "n_cols": "i32"}, {"BLOCK": 256}, tags=("loop",)),
    CorpusKernel("layer_norm_fwd", layer_norm_fwd,
                 {"x_ptr": "*fp32", "y_ptr": "*fp32", "w_ptr": "*fp32", "b_ptr": "*fp32", "mean_ptr": "*fp32",
                  "rstd_ptr": "*fp32", "stride": "i32", "n_cols": "i32", "eps": "fp32"}, {"BLOCK": 128},
                 tags=("loop",)),
    CorpusKernel("layer_norm_bwd_dx", layer_norm_bwd_dx,
                 {"dx_ptr": "*fp32", "dy_ptr": "*fp32", "dw_part_ptr": "*fp32", "db_part_ptr": "*fp32",
                  "x_ptr": "*fp32", "w_ptr": "*fp32", "mean_ptr": "*fp32", "rstd_ptr": "*fp32", "stride": "i32",
                  "n_cols": "i32"}, {"BLOCK": 256}),
    CorpusKernel("layer_norm_bwd_dwdb", layer_norm_bwd_dwdb,
                 {"dw_part_ptr": "*fp32", "db_part_ptr": "*fp32", "dw_ptr": "*fp32", "db_ptr": "*fp32",
                  "n_rows": "i32", "n_cols": "i32"}, {"BLOCK_M": 32, "BLOCK_N": 64}, tags=("loop",)),
    CorpusKernel("matmul", matmul, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", **_MM_SIG},
                 {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 8}, tags=("dot", "loop")),
    CorpusKernel("matmul_persistent", matmul_persistent, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", **_MM_SIG},
                 {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "NUM_SMS": 132}, tags=("dot", "loop")),
    CorpusKernel("matmul_descriptor", matmul_descriptor,
                 {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"},
                 {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}, tags=("dot", "loop", "tma")),
    CorpusKernel("grouped_gemm", grouped_gemm,
                 {"group_a_ptrs": "*u64", "group_b_ptrs": "*u64", "group_c_ptrs": "*u64", "group_sizes": "*i32",
                  "group_lds": "*i32", "group_count": "i32"},
                 {"NUM_SM": 132, "BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}, tags=("dot", "loop")),
    _attn_fwd(False),
    _attn_fwd(True),
    _attn_bwd(False),
    _attn_bwd(True),
    CorpusKernel("row_reductions", row_reductions,
                 {"x_ptr": "*fp32", "sum_ptr": "*fp32", "max_ptr": "*fp32", "argmax_ptr": "*i32", "stride": "i32",
                  "n_cols": "i32"}, {"BLOCK": 256}),
    CorpusKernel("row_scans", row_scans,
                 {"x_ptr": "*fp32", "cumsum_ptr": "*fp32", "cumprod_ptr": "*fp32", "stride": "i32", "n_cols": "i32"},
                 {"BLOCK": 128}),
    CorpusKernel("histogram_atomics", histogram_atomics,
                 {"x_ptr": "*i32", "hist_ptr": "*i32", "max_ptr": "*i32", "n": "i32", "num_bins": "i32"},
                 {"BLOCK": 256}, tags=("atomics",)),
    CorpusKernel("gluon_axpy", gluon_axpy,
                 {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "alpha": "fp32", "n": "i32"},
                 {"BLOCK": 512}, gluon=True),
)

BY_NAME: dict[str, CorpusKernel] = {k.name: k for k in CORPUS}
