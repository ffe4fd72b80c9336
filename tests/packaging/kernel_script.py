"""Run in a fresh venv, outside the repository, by test_wheels.py.

Compiles a one-loop causal attention kernel through cubin on the CPU and prints JSON: the number
of scf.for ops in its TTIR, where triton_ext was imported from, and which passes are enabled.
Whether loop_split runs is decided only by TRITON_EXT_ENABLE (read at `import triton_ext`).
"""

from __future__ import annotations

import json
import re

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

import triton_ext


@triton.jit
def attn_fwd(Q, K, V, Out, sm_scale, stride_h, stride_n,
             HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + head + offs_m[:, None] * stride_n + offs_d[None, :])
    qk_scale = sm_scale * 1.44269504
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for start_n in range(0, (start_m + 1) * BLOCK_M, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(K + head + offs_d[:, None] + cols[None, :] * stride_n)
        qk = tl.dot(q, k) * qk_scale
        qk = tl.where(offs_m[:, None] >= start_n + offs_n[None, :], qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + head + offs_d[None, :] + cols[:, None] * stride_n)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(Out + head + offs_m[:, None] * stride_n + offs_d[None, :], acc.to(Out.dtype.element_ty))


def main() -> None:
    sig = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16", "sm_scale": "fp32",
           "stride_h": "i32", "stride_n": "i32"}
    src = ASTSource(attn_fwd, signature=sig, constexprs={"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64})
    kernel = triton.compile(src, target=GPUTarget("cuda", 90, 32))
    print(json.dumps({
        "loops": len(re.findall(r"\bscf\.for\b", kernel.asm["ttir"])),
        "cubin_bytes": len(kernel.asm["cubin"]),
        "triton_ext": triton_ext.__file__,
        "enabled": sorted(triton_ext.enabled_passes()),
        "extensions": [e.name for e in triton_ext.manifest().extensions],
    }))


if __name__ == "__main__":
    main()
