"""A hold-out set: fla-core 0.6.0 and liger-kernel 0.8.5 kernels the project has never measured.

Purpose: check the transparent mode (``TRITON_EXT_ENABLE=auto``) on kernels it was not tuned
for. These entries are deliberately *not* registered into ``realworld_kernels.REALWORLD`` (no
``register(...)`` call): nothing that sweeps, tunes or tabulates the corpus sees them. As in
realworld_kernels.py no kernel code lives here: every function is imported from the pinned
package and this module only describes how the package's own Python launcher calls it, with the
same machinery (:class:`RealKernel`, :class:`Launch`, :class:`Tensors`, ``compile_args``).

Selection rule, fixed before looking at any pass: the Triton kernels that

* a Llama-3-8B-like decoder layer's *training step* launches through liger-kernel (hidden 4096,
  SwiGLU intermediate 14336, vocabulary 128256; liger's fused linear cross-entropy), and
* a gated-delta-rule linear-attention layer's training step launches through fla-core: the
  layer as flash-linear-attention's ``fla.layers.GatedDeltaNet`` builds it (that package is not
  installed; fla-core holds every op and module it calls): width-4 SiLU short convolutions
  without bias, ``chunk_gated_delta_rule`` forward and backward at chunk 64, and a
  ``FusedRMSNormGated`` output norm with its swish gate,

minus every (module, attribute) the corpus (REALWORLD, MORE, UPSTREAM_INCOMPATIBLE) already has.
Kernels were neither picked nor dropped by whether a pass helps them; no pass was run to choose.
What the rule leaves out, and why: ``chunk_scaled_dot_kkt_fwd_kernel`` and ``solve_tril``
(at chunk 64 the GDN launcher takes the fused ``kkt_solve`` kernel instead), rms_norm / rope /
swiglu-forward / cross-entropy / l2norm / chunk-local cumsum (already in the corpus), and
liger's jsd / tvd / dyt / poly_norm / mrope / sparsemax (not launched by either layer). Of what
remains, the GDN backward's ``chunk_bwd_dv_local`` and ``prepare_wy_repr_bwd`` were left out to
keep the set at 12 (in: the forward's four dot kernels, the backward's state recurrence
``bwd_dhu`` and ``chunk_bwd_dqkwg``, which consumes its output).

Sizes: the six fla dot kernels (``tl.dot`` in loops or a chunk-wise recurrence) run at prefill
size, batch 2 x 4096 tokens, 16 heads of K = V = 128, chunk 64, bf16 activations. The element
and norm kernels run at prefill size (4096 tokens of Llama; the GDN convolution and head-wise norm
over 2 x 4096 tokens) and at decode size (16 tokens: 16 rows of 4096 or 14336 for liger, 16 x 16
heads = 256 rows of 128 for the GDN norm), where a launch's CPU cost is of the kernel's order.

Configs: fla's ``@fla_cache_autotune`` / ``@triton.autotune`` wrappers are unwrapped (``unwrap``)
and pinned to the *first* config of the list the package builds on an H100/H200 (fla's module
constants evaluated for Hopper: ``check_shared_mem()`` true, ``IS_NVIDIA_HOPPER`` true, not
Blackwell, triton 3.9); heuristics (``USE_G``, ``IS_VARLEN``...) are given the values the
wrapper derives from the launch. The launcher's choice at runtime is the autotuner's; the first
config is the one reproducible choice that does not depend on a GPU's timings. On a CPU-only
machine fla's module constants take their CPU values (e.g. ``SOLVE_TRIL_DOT_PRECISION`` is
'ieee' there, 'tf32' on Hopper), so the CPU compile can differ from the GPU's in such globals.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from tests.realworld.more_kernels import HIDDEN
from tests.realworld.realworld_kernels import Launch, RealKernel, Tensors, _cdiv, _liger_settings, _np2

__all__ = ["HOLDOUT_FLA_LIGER"]

# A GatedDeltaNet layer at prefill: q/k in 16 heads (HV = H: no grouped value heads), head dim 128.
_B, _T, _H, _K, _V, _BT = 2, 4096, 16, 128, 128, 64
_NT = _cdiv(_T, _BT)
# Llama-3-8B's MLP width (its hidden size is the corpus's HIDDEN).
_INTER = 14336
PREFILL_TOKENS, DECODE_TOKENS = 4096, 16


# --------------------------------------------------------------------------- #
# fla-core: chunk_gated_delta_rule (fla.ops.gated_delta_rule.chunk) at chunk 64
# --------------------------------------------------------------------------- #


def _gdn(t: Tensors) -> dict[str, torch.Tensor]:
    """Inputs of a GDN layer's chunked kernels, numerically tame.

    Keys, queries and the WY factor ``w`` at the scale of l2-normalized 128-vectors, and ``g`` a
    real chunk-local cumulative sum of negative log2-decays (what ``chunk_local_cumsum`` hands
    the kernels): with plain ``randn`` the chunk-to-chunk state recurrence (``fwd_h``, ``bwd_dhu``) can
    overflow bf16 over its 64 chunks, and the GPU check would then compare Inf with Inf.
    """
    unit = _K ** -0.5
    g = (-0.05 * t.rand(_B, _NT, _BT, _H)).cumsum(2).reshape(_B, _T, _H)
    return dict(q=t.randn(_B, _T, _H, _K, dtype=torch.bfloat16, scale=unit),
                k=t.randn(_B, _T, _H, _K, dtype=torch.bfloat16, scale=unit),
                v=t.randn(_B, _T, _H, _V, dtype=torch.bfloat16),
                w=t.randn(_B, _T, _H, _K, dtype=torch.bfloat16, scale=unit),
                g=g, beta=t.rand(_B, _T, _H, dtype=torch.bfloat16))


def fla_gdn_kkt_solve(t: Tensors) -> Launch:
    """chunk_gated_delta_rule_fwd_intra, chunk 64: (I + tril(beta K K^T))^-1 per chunk, fused."""
    x = _gdn(t)
    # First config: BK 32, 1 warp (Config's default 3 stages). BC 16 is the launcher's constant.
    return Launch(dict(k=x["k"], g=x["g"], beta=x["beta"], A=t.zeros(_B, _T, _H, _BT, dtype=torch.bfloat16),
                       cu_seqlens=None, chunk_indices=None, T=_T, H=_H, HV=_H, K=_K, BT=_BT, BC=16, BK=32,
                       USE_G=True, IS_VARLEN=False),
                  (_NT, _B * _H), 1, 3)


def fla_gdn_recompute_w_u(t: Tensors) -> Launch:
    """recompute_w_u_fwd: w = A (beta k exp(g)), u = A (beta v), BK = BV = 64 (launcher constants)."""
    x = _gdn(t)
    # First config: 2 warps, 2 stages (RECOMPUTE_W_U_NUM_WARPS x [2, 3, 4]).
    return Launch(dict(k=x["k"], v=x["v"], beta=x["beta"], w=t.zeros(_B, _T, _H, _K, dtype=torch.bfloat16),
                       u=t.zeros(_B, _T, _H, _V, dtype=torch.bfloat16),
                       A=t.randn(_B, _T, _H, _BT, dtype=torch.bfloat16, scale=0.1), g=x["g"], cu_seqlens=None,
                       chunk_indices=None, T=_T, H=_H, HV=_H, K=_K, V=_V, BT=_BT, BK=64, BV=64, USE_G=True,
                       IS_VARLEN=False),
                  (_NT, _B * _H), 2, 2)


def fla_gdn_fwd_h(t: Tensors) -> Launch:
    """chunk_gated_delta_rule_fwd_h: the inter-chunk state recurrence, one program per (V tile, head)."""
    x = _gdn(t)
    bv = 32  # first config on Hopper: BV 32, 2 warps, 2 stages
    # Training: no initial state, no final state; save_new_value=True keeps v_new for chunk_fwd_o.
    return Launch(dict(k=x["k"], v=t.randn(_B, _T, _H, _V, dtype=torch.bfloat16), w=x["w"],
                       v_new=t.zeros(_B, _T, _H, _V, dtype=torch.bfloat16), g=x["g"], gk=None,
                       h=t.zeros(_B, _NT, _H, _K, _V, dtype=torch.bfloat16), h0=None, ht=None, cu_seqlens=None,
                       chunk_offsets=None, T=_T, H=_H, HV=_H, K=_K, V=_V, BT=_BT, BV=bv, USE_G=True,
                       USE_GK=False, USE_INITIAL_STATE=False, STORE_FINAL_STATE=False, SAVE_NEW_VALUE=True,
                       STATE_V_FIRST=False, IS_VARLEN=False),
                  (_cdiv(_V, bv) * _B * _H,), 2, 2)


def fla_chunk_fwd_o(t: Tensors) -> Launch:
    """chunk_fwd_o: o = scale * (q h exp(g) + tril(q k^T exp(g_i - g_j)) v_new), per chunk."""
    x = _gdn(t)
    bk = bv = 128  # first config on Hopper with triton >= 3.8: BK = BV = 128, 8 warps, 3 stages
    return Launch(dict(q=x["q"], k=x["k"], v=x["v"], h=t.randn(_B, _NT, _H, _K, _V, dtype=torch.bfloat16),
                       g=x["g"], g_gamma=None, o=t.zeros(_B, _T, _H, _V, dtype=torch.bfloat16), cu_seqlens=None,
                       chunk_indices=None, scale=_K ** -0.5, T=_T, H=_H, HV=_H, K=_K, V=_V, BT=_BT, BK=bk,
                       BV=bv, USE_G=True, USE_G_GAMMA=False, STATE_V_FIRST=False, IS_VARLEN=False),
                  (_cdiv(_V, bv) * _NT, _B * _H), 8, 3)


def fla_gdn_bwd_dhu(t: Tensors) -> Launch:
    """chunk_gated_delta_rule_bwd_dhu: the state gradient's reverse recurrence (and dv += k dh)."""
    x = _gdn(t)
    bv = 32  # first config on Hopper: BV 32, 2 warps, 2 stages
    return Launch(dict(q=x["q"], k=x["k"], w=x["w"], g=x["g"], gk=None, dht=None, dh0=None,
                       do=t.randn(_B, _T, _H, _V, dtype=torch.bfloat16, scale=0.1),
                       dh=t.zeros(_B, _NT, _H, _K, _V, dtype=torch.bfloat16),
                       dv=t.randn(_B, _T, _H, _V, dtype=torch.bfloat16, scale=0.1),
                       dv2=t.zeros(_B, _T, _H, _V, dtype=torch.bfloat16), cu_seqlens=None, chunk_offsets=None,
                       scale=_K ** -0.5, T=_T, H=_H, HV=_H, K=_K, V=_V, BT=_BT, BV=bv, USE_G=True, USE_GK=False,
                       USE_INITIAL_STATE=False, USE_FINAL_STATE_GRADIENT=False, STATE_V_FIRST=False,
                       IS_VARLEN=False),
                  (_cdiv(_V, bv) * _B * _H,), 2, 2)


def fla_chunk_bwd_dqkwg(t: Tensors) -> Launch:
    """chunk_bwd_dqkwg: dq, dk, dw and the gate gradient of one chunk (GDN passes w and dv)."""
    x = _gdn(t)
    # check_shared_mem('hopper') -> CONST_TILING 128: BK = BV = 128, so NK = 1.
    bk = bv = 128
    nk = _cdiv(_K, bk)
    # First config: NUM_WARPS on Hopper [2, 4] x stages [2, 3, 4] -> 2 warps, 2 stages.
    return Launch(dict(q=x["q"], k=x["k"], v=x["v"], g=x["g"], g_gamma=None,
                       h=t.randn(_B, _NT, _H, _K, _V, dtype=torch.bfloat16, scale=0.1),
                       do=t.randn(_B, _T, _H, _V, dtype=torch.bfloat16, scale=0.1),
                       dh=t.randn(_B, _NT, _H, _K, _V, dtype=torch.bfloat16, scale=0.1),
                       dq=t.zeros(_B, _T, _H, _K, dtype=torch.bfloat16), dk=t.zeros(_B, _T, _H, _K, dtype=torch.bfloat16),
                       dw=t.zeros(_B, _T, _H, _K, dtype=torch.bfloat16),
                       dv=t.randn(_B, _T, _H, _V, dtype=torch.bfloat16, scale=0.1),
                       dg=t.zeros(nk, _B, _T, _H), cu_seqlens=None, chunk_indices=None, scale=_K ** -0.5,
                       B=_B, T=_T, H=_H, HV=_H, K=_K, V=_V, BT=_BT, BK=bk, BV=bv, USE_G=True, USE_G_GAMMA=False,
                       USE_DW=True, STATE_V_FIRST=False, IS_VARLEN=False),
                  (nk * _NT, _B * _H), 2, 2)


# --------------------------------------------------------------------------- #
# fla-core: the GDN layer's modules (ShortConvolution, FusedRMSNormGated)
# --------------------------------------------------------------------------- #


def _conv_ref(a: dict[str, Any]) -> dict[str, torch.Tensor]:
    x, w = a["x"].float(), a["weight"].float()
    d, width = w.shape
    y = torch.nn.functional.conv1d(x.transpose(1, 2), w[:, None, :], padding=width - 1, groups=d)
    return {"y": torch.nn.functional.silu(y[..., : x.shape[1]]).transpose(1, 2)}


def fla_causal_conv1d_fwd(t: Tensors) -> Launch:
    """causal_conv1d_fwd: ShortConvolution(q), width 4, SiLU, no bias, over D = H * K = 2048 channels."""
    d, width = _H * _K, 4
    bd = 16  # first config: BD 16, 4 warps (NUM_WARPS_AUTOTUNE on NVIDIA [4, 8, 16, 32]), 3 stages
    return Launch(dict(x=t.randn(_B, _T, d, dtype=torch.bfloat16), y=t.zeros(_B, _T, d, dtype=torch.bfloat16),
                       weight=t.randn(d, width, dtype=torch.bfloat16, scale=0.5), bias=None, residual=None,
                       cu_seqlens=None, initial_state=None, chunk_indices=None, B=_B, T=_T,
                       stride_x_n=_T * d, stride_x_t=d, stride_x_d=1, D=d, W=width, BT=_BT, BW=_np2(width),
                       BD=bd, ACTIVATION="silu", HAS_WEIGHT=True, HAS_BIAS=False, HAS_RESIDUAL=False,
                       USE_INITIAL_STATE=False, IS_VARLEN=False),
                  (_cdiv(d, bd), _NT, _B), 4, 3, reference=_conv_ref, atol=5e-2)


def _norm_gate_ref(a: dict[str, Any]) -> dict[str, torch.Tensor]:
    x, g = a["x"].float(), a["g"].float()
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + a["eps"]) * a["w"].float()
    return {"y": y * g * torch.sigmoid(g)}


def fla_norm_gate_fwd(tokens: int) -> Callable[[Tensors], Launch]:
    """layer_norm_gated_fwd as FusedRMSNormGated(128, 'swish') calls it on o: rows = tokens x heads."""
    def build(t: Tensors) -> Launch:
        rows, d = tokens * _H, _V
        bt = 16  # first config: BT 16, 4 warps (3 stages); D <= 512 takes this blocked kernel
        # fp32 weight: mixed-precision training keeps parameters in fp32.
        return Launch(dict(x=t.randn(rows, d, dtype=torch.bfloat16), g=t.randn(rows, d, dtype=torch.bfloat16),
                           y=t.zeros(rows, d, dtype=torch.bfloat16), w=t.randn(d, dtype=torch.float32), b=None, residual=None,
                           residual_out=None, mean=None, rstd=t.zeros(rows), eps=1e-5, T=rows, D=d, BT=bt,
                           BD=_np2(d), NB=_cdiv(rows, 2048 * 32), ACTIVATION="swish", IS_RMS_NORM=True,
                           STORE_RESIDUAL_OUT=False, HAS_RESIDUAL=False, HAS_WEIGHT=True, HAS_BIAS=False),
                      (_cdiv(rows, bt),), 4, 3, reference=_norm_gate_ref, atol=5e-2)
    return build


# --------------------------------------------------------------------------- #
# liger-kernel: the Llama MLP's backward and fused linear cross-entropy's backward
# --------------------------------------------------------------------------- #


def _swiglu_bwd_ref(a: dict[str, Any]) -> dict[str, torch.Tensor]:
    dc, x, gate = a["dc_ptr"].float(), a["a_ptr"].float(), a["b_ptr"].float()
    sig = torch.sigmoid(x)
    silu = x * sig
    return {"a_ptr": dc * gate * (silu * (1 - sig) + sig), "b_ptr": dc * silu}


def liger_swiglu_bwd(rows: int) -> Callable[[Tensors], Launch]:
    """swiglu_backward: in place, da into a and db into b; one program per row of 14336."""
    def build(t: Tensors) -> Launch:
        block, warps = _liger_settings(_INTER)  # not Blackwell: the row kernel, not the tiled one
        # dc at gradient scale: the GPU timing relaunches the in-place kernel hundreds of times,
        # and |dc| < 1 makes the repeated a, b -> (da, db) map shrink instead of reaching Inf.
        return Launch(dict(dc_ptr=t.randn(rows, _INTER, dtype=torch.bfloat16, scale=0.1),
                           a_ptr=t.randn(rows, _INTER, dtype=torch.bfloat16),
                           b_ptr=t.randn(rows, _INTER, dtype=torch.bfloat16), stride=_INTER, gate_multiplier=1.0,
                           n_cols=_INTER, BLOCK_SIZE=block),
                      (rows,), warps, 3, reference=_swiglu_bwd_ref, atol=5e-2)
    return build


def liger_element_mul(rows: int) -> Callable[[Tensors], Launch]:
    """element_mul_kernel on grad_input [tokens, 4096]: fused linear CE's backward, grad_output != 1."""
    def build(t: Tensors) -> Launch:
        # grad_output -1 rather than e.g. 1/accumulation-steps: the kernel scales X in place and
        # the GPU timing relaunches it; a sign flip keeps the magnitudes (and it is != 1, so the
        # launcher does launch the kernel).
        return Launch(dict(X_ptr=t.randn(rows, HIDDEN, dtype=torch.bfloat16), X_stride=HIDDEN,
                           grad_output_ptr=t.full((), -1.0), n_cols=HIDDEN,
                           BLOCK_SIZE=min(65536 // 2, _np2(HIDDEN)), X_col_stride=1),
                      (rows,), 32, 3,
                      reference=lambda a: {"X_ptr": a["X_ptr"].float() * a["grad_output_ptr"]}, atol=0.0, rtol=0.0)
    return build


_FLA, _LIGER = "fla-core", "liger-kernel"
_GDN = "fla.ops.gated_delta_rule"

HOLDOUT_FLA_LIGER: list[RealKernel] = [
    RealKernel("ho_fla_gdn_kkt_solve", _FLA, f"{_GDN}.chunk_fwd", "chunk_gated_delta_rule_fwd_kkt_solve_kernel", "linear_attention", fla_gdn_kkt_solve, tags=("prefill", "dot")),
    RealKernel("ho_fla_gdn_recompute_w_u", _FLA, f"{_GDN}.wy_fast", "recompute_w_u_fwd_kernel", "linear_attention", fla_gdn_recompute_w_u, tags=("prefill", "dot")),
    RealKernel("ho_fla_gdn_fwd_h", _FLA, "fla.ops.common.chunk_delta_h", "chunk_gated_delta_rule_fwd_kernel_h_blockdim64", "linear_attention", fla_gdn_fwd_h, tags=("prefill", "dot")),
    RealKernel("ho_fla_chunk_fwd_o", _FLA, "fla.ops.common.chunk_o", "chunk_fwd_kernel_o", "linear_attention", fla_chunk_fwd_o, tags=("prefill", "dot")),
    RealKernel("ho_fla_gdn_bwd_dhu", _FLA, "fla.ops.common.chunk_delta_h", "chunk_gated_delta_rule_bwd_kernel_dhu_blockdim64", "linear_attention", fla_gdn_bwd_dhu, tags=("prefill", "dot")),
    RealKernel("ho_fla_chunk_bwd_dqkwg", _FLA, "fla.ops.common.chunk_o", "chunk_bwd_kernel_dqkwg", "linear_attention", fla_chunk_bwd_dqkwg, tags=("prefill", "dot")),
    RealKernel("ho_fla_causal_conv1d_fwd_prefill", _FLA, "fla.modules.causal_conv1d.ops", "causal_conv1d_fwd_kernel", "convolution", fla_causal_conv1d_fwd, tags=("prefill",)),
    RealKernel("ho_fla_norm_gate_fwd_prefill", _FLA, "fla.modules.norm.fused_norm_gate", "layer_norm_gated_fwd_kernel", "norm", fla_norm_gate_fwd(_B * _T), tags=("prefill",)),
    RealKernel("ho_fla_norm_gate_fwd_decode", _FLA, "fla.modules.norm.fused_norm_gate", "layer_norm_gated_fwd_kernel", "norm", fla_norm_gate_fwd(DECODE_TOKENS), tags=("decode",)),
    RealKernel("ho_liger_swiglu_bwd_prefill", _LIGER, "liger_kernel.ops.swiglu", "_swiglu_backward_kernel", "activation", liger_swiglu_bwd(PREFILL_TOKENS), tags=("prefill",)),
    RealKernel("ho_liger_swiglu_bwd_decode", _LIGER, "liger_kernel.ops.swiglu", "_swiglu_backward_kernel", "activation", liger_swiglu_bwd(DECODE_TOKENS), tags=("decode",)),
    RealKernel("ho_liger_element_mul_decode", _LIGER, "liger_kernel.ops.utils", "element_mul_kernel", "cross_entropy", liger_element_mul(DECODE_TOKENS), tags=("decode",)),
]

_BY_NAME: dict[str, RealKernel] = {k.name: k for k in HOLDOUT_FLA_LIGER}
assert len(_BY_NAME) == len(HOLDOUT_FLA_LIGER), "duplicate hold-out kernel names"


if __name__ == "__main__":  # the names, one line
    print(" ".join(_BY_NAME))
