"""One-block-row causal attention forward kernels shared by the tests, bench.py and
examples/demo.py, with the two TTIR readers they all use to tell split loops from masked ones.

Three ways to write the same kernel (one program per BLOCK_M query rows of one head):

- ``attn_fwd_tensor``: one loop, mask ``offs_m[:, None] >= start_n + offs_n[None, :]`` on every block.
- ``attn_fwd_scalar``: one loop, the mask applied only ``if start_n >= diag``.
- ``attn_fwd_hand_split``: the off-diagonal loop without a mask, then the diagonal loop with it
  (what loop_split should turn the first two into).

Q, K, V and Out are (heads, N_CTX, HEAD_DIM), contiguous; N_CTX is a multiple of BLOCK_M.
"""

from __future__ import annotations

import re

import triton
import triton.language as tl


@triton.jit
def _online_softmax_step(q, k_ptrs, v_ptrs, qk_scale, m_i, l_i, acc, mask, MASKED: tl.constexpr):
    k = tl.load(k_ptrs)
    qk = tl.dot(q, k) * qk_scale
    if MASKED:
        qk = tl.where(mask, qk, float("-inf"))
    m_ij = tl.maximum(m_i, tl.max(qk, 1))
    p = tl.math.exp2(qk - m_ij[:, None])
    alpha = tl.math.exp2(m_i - m_ij)
    l_i = l_i * alpha + tl.sum(p, 1)
    v = tl.load(v_ptrs)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
    return m_ij, l_i, acc


@triton.jit
def _prologue(Q, K, V, sm_scale, stride_h, stride_n,
              HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + head + offs_m[:, None] * stride_n + offs_d[None, :])
    # K is read transposed: (HEAD_DIM, BLOCK_N) tiles.
    k_base = K + head + offs_d[:, None]
    v_base = V + head + offs_d[None, :]
    qk_scale = sm_scale * 1.44269504  # exp2 instead of exp
    return start_m, head, offs_m, offs_n, offs_d, q, k_base, v_base, qk_scale


@triton.jit
def _epilogue(Out, head, offs_m, offs_d, stride_n, l_i, acc):
    acc = acc / l_i[:, None]
    tl.store(Out + head + offs_m[:, None] * stride_n + offs_d[None, :], acc.to(Out.dtype.element_ty))


@triton.jit
def attn_fwd_tensor(Q, K, V, Out, sm_scale, stride_h, stride_n,
                    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m, head, offs_m, offs_n, offs_d, q, k_base, v_base, qk_scale = _prologue(
        Q, K, V, sm_scale, stride_h, stride_n, HEAD_DIM, BLOCK_M, BLOCK_N)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for start_n in range(0, (start_m + 1) * BLOCK_M, BLOCK_N):
        cols = start_n + offs_n
        mask = offs_m[:, None] >= start_n + offs_n[None, :]
        m_i, l_i, acc = _online_softmax_step(
            q, k_base + cols[None, :] * stride_n, v_base + cols[:, None] * stride_n,
            qk_scale, m_i, l_i, acc, mask, True)
    _epilogue(Out, head, offs_m, offs_d, stride_n, l_i, acc)


@triton.jit
def attn_fwd_scalar(Q, K, V, Out, sm_scale, stride_h, stride_n,
                    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m, head, offs_m, offs_n, offs_d, q, k_base, v_base, qk_scale = _prologue(
        Q, K, V, sm_scale, stride_h, stride_n, HEAD_DIM, BLOCK_M, BLOCK_N)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    # Blocks from diag on reach past the first query row of this program.
    diag = start_m * BLOCK_M - BLOCK_N + 1
    for start_n in range(0, (start_m + 1) * BLOCK_M, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(k_base + cols[None, :] * stride_n)
        qk = tl.dot(q, k) * qk_scale
        if start_n >= diag:
            qk = tl.where(offs_m[:, None] >= start_n + offs_n[None, :], qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_base + cols[:, None] * stride_n)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_ij
    _epilogue(Out, head, offs_m, offs_d, stride_n, l_i, acc)


@triton.jit
def attn_fwd_hand_split(Q, K, V, Out, sm_scale, stride_h, stride_n,
                        HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m, head, offs_m, offs_n, offs_d, q, k_base, v_base, qk_scale = _prologue(
        Q, K, V, sm_scale, stride_h, stride_n, HEAD_DIM, BLOCK_M, BLOCK_N)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for start_n in range(0, start_m * BLOCK_M, BLOCK_N):
        cols = start_n + offs_n
        m_i, l_i, acc = _online_softmax_step(
            q, k_base + cols[None, :] * stride_n, v_base + cols[:, None] * stride_n,
            qk_scale, m_i, l_i, acc, None, False)
    for start_n in range(start_m * BLOCK_M, (start_m + 1) * BLOCK_M, BLOCK_N):
        cols = start_n + offs_n
        mask = offs_m[:, None] >= start_n + offs_n[None, :]
        m_i, l_i, acc = _online_softmax_step(
            q, k_base + cols[None, :] * stride_n, v_base + cols[:, None] * stride_n,
            qk_scale, m_i, l_i, acc, mask, True)
    _epilogue(Out, head, offs_m, offs_d, stride_n, l_i, acc)


@triton.jit
def _scalar_style_step(q, k_base, v_base, cols, qk_scale, m_i, l_i, acc, stride_n, offs_m, offs_n,
                       start_n, MASKED: tl.constexpr):
    # The body of attn_fwd_scalar, op for op (K loaded and the dot taken before the mask, V's
    # address computed after the softmax), without its `if`.
    k = tl.load(k_base + cols[None, :] * stride_n)
    qk = tl.dot(q, k) * qk_scale
    if MASKED:
        qk = tl.where(offs_m[:, None] >= start_n + offs_n[None, :], qk, float("-inf"))
    m_ij = tl.maximum(m_i, tl.max(qk, 1))
    p = tl.math.exp2(qk - m_ij[:, None])
    alpha = tl.math.exp2(m_i - m_ij)
    l_i = l_i * alpha + tl.sum(p, 1)
    v = tl.load(v_base + cols[:, None] * stride_n)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
    return m_ij, l_i, acc


@triton.jit
def attn_fwd_scalar_hand_split(Q, K, V, Out, sm_scale, stride_h, stride_n,
                               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """attn_fwd_scalar split by hand at start_m * BLOCK_M (issue 17: is the register gap of the
    scalar form the pass's, or the source's op order?)."""
    start_m, head, offs_m, offs_n, offs_d, q, k_base, v_base, qk_scale = _prologue(
        Q, K, V, sm_scale, stride_h, stride_n, HEAD_DIM, BLOCK_M, BLOCK_N)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for start_n in range(0, start_m * BLOCK_M, BLOCK_N):
        cols = start_n + offs_n
        m_i, l_i, acc = _scalar_style_step(q, k_base, v_base, cols, qk_scale, m_i, l_i, acc,
                                           stride_n, offs_m, offs_n, start_n, False)
    for start_n in range(start_m * BLOCK_M, (start_m + 1) * BLOCK_M, BLOCK_N):
        cols = start_n + offs_n
        m_i, l_i, acc = _scalar_style_step(q, k_base, v_base, cols, qk_scale, m_i, l_i, acc,
                                           stride_n, offs_m, offs_n, start_n, True)
    _epilogue(Out, head, offs_m, offs_d, stride_n, l_i, acc)


KERNELS = {"tensor": attn_fwd_tensor, "scalar": attn_fwd_scalar, "hand_split": attn_fwd_hand_split,
           "scalar_hand_split": attn_fwd_scalar_hand_split}


def signature(dtype: str = "fp16") -> dict[str, str]:
    """Signature for triton.compile(ASTSource(...)) with pointers of `dtype` ("fp16"/"bf16")."""
    ptr = f"*{dtype}"
    return {"Q": ptr, "K": ptr, "V": ptr, "Out": ptr, "sm_scale": "fp32", "stride_h": "i32",
            "stride_n": "i32", "HEAD_DIM": "constexpr", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"}


def top_level_loop_bodies(ttir: str) -> list[str]:
    """The text of each scf.for directly in the kernel body, in order."""
    loops, current, depth = [], None, 0
    for line in ttir.splitlines():
        if current is None:
            if re.match(r"^    %\S+ = scf\.for ", line):
                current, depth = [line], 1
            continue
        current.append(line)
        depth += line.count("{") - line.count("}")
        if depth <= 0:
            loops.append("\n".join(current))
            current = None
    return loops


def applies_causal_mask(ir: str) -> bool:
    """True if ``ir`` compares 2-D i32 tensors (the causal mask) or selects on a 2-D i1 tensor."""
    return bool(re.search(r"arith\.cmpi \w+, .*: tensor<\d+x\d+xi32>", ir)
                or re.search(r"arith\.select .*tensor<\d+x\d+xi1>", ir))
