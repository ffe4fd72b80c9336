"""A loop Triton software-pipelines keeps one pipeline drain under loop_split (issue 28).

Triton's own ``test_pipeliner.py::test_pipeline_matmul`` counts the sync points after a pipelined
GEMM loop (``ttg.async_wait {num = 0}``) and expects one; with loop_split on it found two (the
K-tail mask of the A/B loads split the loop into two pipelined loops). Reproduced on the CPU:
compile to TTGIR for sm_90 through the stock wheel and count. The profitability model declines
that split (the mask only guards loads); a split it keeps (the causal ``tl.where`` on the scores)
pipelines both parts by default, as the hand-split kernel does, and only the main part with
``single-drain=true`` (one drain).
"""

from __future__ import annotations

import pytest
import triton
import triton.language as tl
from triton.compiler import ASTSource

import triton_ext
from triton_ext.testing import CUDA90, import_file

attn = import_file(__file__, "../kernels.py")


@triton.jit
def masked_k_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                    NUM_STAGES: tl.constexpr):
    # A plain GEMM whose K loop masks its A/B loads with the K tail, as Triton's pipeliner test.
    pid = tl.program_id(0)
    pid_m = pid % tl.cdiv(M, BLOCK_M)
    pid_n = pid // tl.cdiv(M, BLOCK_M)
    rm = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    rn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), num_stages=NUM_STAGES):
        a = tl.load(a_ptr + rm[:, None] * stride_am + (k * BLOCK_K + rk)[None, :],
                    mask=(k * BLOCK_K + rk)[None, :] < K, other=0.0)
        b = tl.load(b_ptr + (k * BLOCK_K + rk)[:, None] * stride_bk + rn[None, :],
                    mask=(k * BLOCK_K + rk)[:, None] < K, other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(tl.float16))


def _matmul_ttgir(**options: object) -> tuple[str, str]:
    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
           "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32", "BLOCK_M": "constexpr",
           "BLOCK_N": "constexpr", "BLOCK_K": "constexpr", "NUM_STAGES": "constexpr"}
    constexprs = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "NUM_STAGES": 4}
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(9)}
    src = ASTSource(masked_k_matmul, sig, constexprs, attrs)
    with triton_ext.enabled("loop_split", options=options or None):
        compiled = triton.compile(src, target=CUDA90, options={"num_warps": 4})
    return compiled.asm["ttir"], compiled.asm["ttgir"]


def _sync_points(ttgir: str) -> int:
    """What test_pipeline_matmul counts: the `num = 0` waits that drain a pipeline."""
    return ttgir.count("num = 0 : i32")


def test_pipelined_matmul_keeps_one_sync_point() -> None:
    ttir, ttgir = _matmul_ttgir()
    assert ttgir.count("ttg.async_copy_global_to_local") != 0, "the loop is not pipelined"
    assert ttir.count("scf.for") == 1
    assert _sync_points(ttgir) == 1, "only one sync point for the loads after the loop"


def test_the_split_it_declines_drains_twice() -> None:
    # The check above can fail: split wherever legal, the loop drains twice (what Triton's
    # test found on the H200 with loop_split before issue 28).
    ttir, ttgir = _matmul_ttgir(profitability=False)
    assert ttir.count("scf.for") >= 2
    assert _sync_points(ttgir) >= 2


def _attention(form: str, head_dim: int, **options: object) -> tuple[str, str]:
    constexprs = {"HEAD_DIM": head_dim, "BLOCK_M": 128, "BLOCK_N": 64}
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(7)}
    src = ASTSource(attn.KERNELS[form], attn.signature(), constexprs, attrs)
    opts = {"num_warps": 8 if head_dim == 128 else 4, "num_stages": 3}
    if options is not None and form != "hand_split":
        with triton_ext.enabled("loop_split", options=options or None):
            compiled = triton.compile(src, target=CUDA90, options=opts)
    else:
        compiled = triton.compile(src, target=CUDA90, options=opts)
    return compiled.asm["ttir"], compiled.asm["ttgir"]


@pytest.mark.parametrize("form", ["tensor", "scalar"])
def test_causal_split_drains(form: str) -> None:
    # By default both parts keep their stages: two drains, as the hand-split kernel's two loops.
    ttir, ttgir = _attention(form, 64)
    assert len(attn.top_level_loop_bodies(ttir)) == 2, "the causal loop is split"
    assert "tt.num_stages = 1" not in ttir
    _, hand = _attention("hand_split", 64, **{})
    assert _sync_points(ttgir) == _sync_points(hand) == 2
    # single-drain=true: only the main part is pipelined, one drain.
    ttir, single = _attention(form, 64, **{"single-drain": True})
    assert "tt.num_stages = 1" in ttir, "the diagonal part is not pipelined"
    assert single.count("ttg.async_copy_global_to_local") != 0, "the main part is pipelined"
    assert _sync_points(single) == 1
