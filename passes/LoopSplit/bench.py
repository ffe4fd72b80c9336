"""Benchmark spec of loop_split: causal attention forward (``triton-ext bench loop_split``).

Kernels come from ``kernels.py`` (shared with the tests): the one-loop kernel with a
tensor mask on every block, the one-loop kernel with ``if start_n >= diag``, each unchanged and
with loop_split, and the hand-split kernel (off-diagonal loop without a mask, diagonal loop with
it). Shapes follow the FlashAttention-2 convention: 16k tokens per batch and a hidden size of
2048, so ``heads = 16384 * (2048 // head_dim) // seq`` (batch folded into heads), which keeps the
work per launch near constant across sequence lengths.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from triton_ext.bench import BenchSpec, Case, Metric, Target, Variant, top_level_loops, import_file

causal_attention = import_file(__file__, "kernels.py")

BLOCK_M, BLOCK_N = 128, 64
SEQS = (1024, 2048, 4096, 8192, 16384)
HEAD_DIMS = (64, 128)
CHECK_HEADS = 2  # heads compared with the float64 reference (first and last): O(seq^2) memory each


def _shape(seq: int, head_dim: int) -> dict[str, int]:
    return {"seq": seq, "head_dim": head_dim, "heads": 16384 * (2048 // head_dim) // seq}


def _constexprs(case: Case) -> dict[str, Any]:
    return {"HEAD_DIM": case.params["head_dim"], "BLOCK_M": BLOCK_M, "BLOCK_N": BLOCK_N}


def _compile_options(case: Case) -> dict[str, Any]:
    # 8 warps for the 128-wide head (register pressure of the accumulator).
    return {"num_warps": 8 if case.params["head_dim"] == 128 else 4, "num_stages": 3}


def _make_inputs(case: Case, device: Any, generator: Any) -> dict[str, Any]:
    import torch

    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[case.dtype]
    shape = (case.params["heads"], case.params["seq"], case.params["head_dim"])
    q, k, v = (torch.randn(shape, device=device, dtype=dtype, generator=generator) for _ in range(3))
    return {"q": q, "k": k, "v": v, "out": torch.empty_like(q)}


def _launch(kernel: Any, t: Mapping[str, Any], case: Case) -> Any:
    heads, n, d = t["q"].shape
    return kernel[(n // BLOCK_M, heads)](
        t["q"], t["k"], t["v"], t["out"], 1.0 / math.sqrt(d), t["q"].stride(0), t["q"].stride(1),
        **_constexprs(case), **_compile_options(case))


def _checked_heads(case: Case) -> list[int]:
    return sorted({0, case.params["heads"] - 1})[:CHECK_HEADS]


def _reference(t: Mapping[str, Any], case: Case) -> Any:
    import torch

    idx = _checked_heads(case)
    q, k, v = (t[name][idx].to(torch.float64) for name in ("q", "k", "v"))
    n, d = case.params["seq"], case.params["head_dim"]
    s = (q @ k.transpose(-1, -2)) / math.sqrt(d)
    s.masked_fill_(~torch.ones(n, n, dtype=torch.bool, device=q.device).tril(), float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def _checked(t: Mapping[str, Any], case: Case) -> Any:
    return t["out"][_checked_heads(case)]




def _ir_check(variant: Variant, off: str, on: str) -> str | None:
    """loop_split must turn the kernel's one masked loop into two or three, the first unmasked."""
    before, after = top_level_loops(off), top_level_loops(on)
    if before != 1:
        return f"expected one loop in the unsplit TTIR, found {before}"
    if after not in (2, 3):
        return f"expected the loop split into 2 or 3 loops, found {after}"
    first = on[on.index(" scf.for "):]
    first = first[:first.index("\n    }")]
    if causal_attention.applies_causal_mask(first):
        return "the first (off-diagonal) loop still applies the causal mask"
    return None


def _flops(case: Case) -> float:
    # Two (seq x seq x head_dim) matmuls per head, halved by causality: 2 * 2 * h * n^2 * d / 2.
    p = case.params
    return 2.0 * p["heads"] * p["seq"] ** 2 * p["head_dim"]


def _long(case: Case) -> bool:
    return case.params["seq"] >= 4096


SPEC = BenchSpec(
    name="loop_split",
    passes=("loop_split",),
    title="loop_split: causal attention forward",
    variants=(
        Variant("tensor", causal_attention.attn_fwd_tensor, "baseline", group="tensor"),
        Variant("tensor+loop_split", causal_attention.attn_fwd_tensor, "pass", group="tensor"),
        Variant("scalar", causal_attention.attn_fwd_scalar, "baseline", group="scalar"),
        Variant("scalar+loop_split", causal_attention.attn_fwd_scalar, "pass", group="scalar"),
        Variant("hand_split", causal_attention.attn_fwd_hand_split, "handwritten"),
    ),
    shapes=tuple(_shape(n, d) for d in HEAD_DIMS for n in SEQS),
    quick_shapes=tuple(_shape(n, d) for d in HEAD_DIMS for n in (1024, 4096)),
    dtypes=("fp16", "bf16"),
    quick_dtypes=("fp16",),
    signature=causal_attention.signature,
    constexprs=_constexprs,
    compile_options=_compile_options,
    make_inputs=_make_inputs,
    outputs=("out",),
    launch=_launch,
    reference=_reference,
    checked=_checked,
    # Max abs error against float64 : P is rounded to the input dtype for P@V.
    tolerance={"fp16": 2e-2, "bf16": 6e-2},
    metric=Metric("TFLOP/s", _flops, "2 * heads * seq^2 * head_dim / time (causal: half of 4 h n^2 d)"),
    x_axis="seq",
    ir_check=_ir_check,
    targets=(
        Target("tensor form: >= 10% faster than unsplit, seq >= 4096",
               "tensor+loop_split", "tensor", 1.10, where=_long),
        Target("tensor form: within 2% of hand-split, seq >= 4096",
               "tensor+loop_split", "hand_split", 0.98, where=_long),
        Target("scalar form: never slower than unsplit beyond the run-to-run spread",
               "scalar+loop_split", "scalar", 1.0, allow_spread=True),
    ),
    notes=f"BLOCK_M={BLOCK_M}, BLOCK_N={BLOCK_N}, num_stages=3, num_warps 4 (d=64) / 8 (d=128); "
          f"heads = 16384 * (2048 / head_dim) / seq (16k tokens, hidden 2048). Correctness is checked on "
          f"the first and last head of every case.",
)
