"""More real-world kernels (issue 27.4): flag-gems and sageattention, at decode and prefill sizes.

Registered into ``realworld_kernels.REALWORLD`` when imported (either module may be imported first), so the
CPU corpus test (test_realworld_passes.py: every pass, through cubin), ``check_gpu.py`` and
``benchmarks/auto_mode_gpu.py --set realworld`` cover them. As in realworld_kernels.py no kernel
code lives here: each kernel is imported from its pinned package (tests/realworld/
nodeps-requirements.txt) and this module only describes how the package's launcher calls it.

Sizes: *decode* entries are what one decode step of a Llama-3-8B-like model (hidden 4096, 32
query / 8 KV heads of 128, vocabulary 128256; Qwen3-MoE-like routing: 128 experts, top 8)
launches at batch 8-16: kernels of a few microseconds, where a launch's CPU cost is of the same
order as the kernel. *prefill* entries are the same launches over 2048-4096 tokens.

flag-gems queries the device while it is imported (``flag_gems.utils.libentry`` names its tuning
database after ``torch.cuda.get_device_name()``; ``per_token_group_quant_fp8`` reads the compute
capability). On a machine without a GPU, :func:`import_flag_gems_module` answers those queries
for the H200 (sm_90, the target the CPU test compiles for) while the module is imported, and only
then; with a GPU the import is the package's own. sageattention imports without a GPU; its
launches are recorded from its own Python launchers (:func:`_recorded`), called on ``meta`` (CPU)
or ``cuda`` tensors.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import types
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import torch
import triton
from triton.runtime import JITFunction

from tests.realworld.realworld_kernels import Launch, RealKernel, Tensors, _cdiv, _np2, register, unwrap

__all__ = ["MORE", "FlagGemsKernel", "import_flag_gems_module"]

os.environ.setdefault("GEMS_VENDOR", "nvidia")

#: What flag-gems' import-time device queries are answered with on a machine without a GPU.
_H200 = types.SimpleNamespace(name="NVIDIA H200", major=9, minor=0, multi_processor_count=132,
                              total_memory=141 * 2**30, L2_cache_size=60 * 2**20, warp_size=32,
                              max_shared_memory_per_block_optin=232448, regs_per_multiprocessor=65536,
                              max_threads_per_multi_processor=2048)


@contextlib.contextmanager
def _h200_device_queries() -> Iterator[None]:
    """torch.cuda's device queries answer for one H200 (nothing is launched or allocated)."""
    answers: dict[str, Callable[..., Any]] = {
        "is_available": lambda: True, "device_count": lambda: 1, "current_device": lambda: 0,
        "get_device_capability": lambda device=None: (_H200.major, _H200.minor),
        "get_device_name": lambda device=None: _H200.name,
        "get_device_properties": lambda device=None: _H200,
    }
    saved = {name: getattr(torch.cuda, name) for name in answers}
    for name, fn in answers.items():
        setattr(torch.cuda, name, fn)
    try:
        yield
    finally:
        for name, fn in saved.items():
            setattr(torch.cuda, name, fn)


def import_flag_gems_module(name: str) -> types.ModuleType:
    """Import a flag_gems module; without a GPU, with the device queries answered for the H200."""
    if name in sys.modules or torch.cuda.is_available():
        return importlib.import_module(name)
    with _h200_device_queries():
        return importlib.import_module(name)


@dataclass(frozen=True)
class FlagGemsKernel(RealKernel):
    """A flag-gems kernel: imported through :func:`import_flag_gems_module`."""

    def fn(self) -> JITFunction:
        return unwrap(getattr(import_flag_gems_module(self.module), self.attr))


# --------------------------------------------------------------------------- #
# flag-gems 5.0.2
# --------------------------------------------------------------------------- #

HIDDEN, HQ, HKV, HD, VOCAB = 4096, 32, 8, 128, 128256
DECODE, PREFILL = 8, 2048


def _rms_ref(a: dict[str, Any]) -> dict[str, torch.Tensor]:
    x = a["in_ptr"].float()
    return {"out_ptr": x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + a["eps"]) * a["w_ptr"].float()}


def fg_rms_norm(rows: int) -> Callable[[Tensors], Launch]:
    """flag_gems.ops.rms_norm.rms_norm_forward: one program per row, the row in one block."""
    def build(t: Tensors) -> Launch:
        n = HIDDEN
        return Launch(dict(out_ptr=t.zeros(rows, n, dtype=torch.bfloat16), INV_RMS=t.zeros(rows),
                           in_ptr=t.randn(rows, n, dtype=torch.bfloat16), w_ptr=t.randn(n, dtype=torch.bfloat16),
                           y_stride_r=n, y_stride_c=1, x_stride_r=n, x_stride_c=1, N=n, eps=1e-6,
                           BLOCK_SIZE=_np2(n)),
                      (rows,), 4, 3, reference=_rms_ref, atol=5e-2)
    return build


def fg_fused_add_rms_norm(rows: int) -> Callable[[Tensors], Launch]:
    """flag_gems.fused.fused_add_rms_norm: residual += x; x = rms_norm(residual), in place."""
    def build(t: Tensors) -> Launch:
        n = HIDDEN
        return Launch(dict(input_ptr=t.randn(rows, n, dtype=torch.bfloat16),
                           residual_ptr=t.randn(rows, n, dtype=torch.bfloat16),
                           w_ptr=t.randn(n, dtype=torch.bfloat16), in_stride_r=n, in_stride_c=1, r_stride_r=n,
                           r_stride_c=1, N=n, eps=1e-6, BLOCK_SIZE=_np2(n)),
                      (rows,), 4, 3)
    return build


def fg_rotary(tokens: int) -> Callable[[Tensors], Launch]:
    """flag_gems.fused.rotary_embedding.apply_rotary_pos_emb (not in place, with position ids)."""
    def build(t: Tensors) -> Launch:
        max_pos = 8192
        angle = t.randn(max_pos, HD // 2, dtype=torch.float32)
        q, k = t.randn(tokens, HQ, HD, dtype=torch.bfloat16), t.randn(tokens, HKV, HD, dtype=torch.bfloat16)
        return Launch(dict(oq_ptr=t.zeros(tokens, HQ, HD, dtype=torch.bfloat16),
                           ok_ptr=t.zeros(tokens, HKV, HD, dtype=torch.bfloat16), q_ptr=q, k_ptr=k,
                           cos_ptr=angle.cos(), sin_ptr=angle.sin(), pos_ptr=t.randint(0, max_pos, tokens),
                           q_stride_s=HQ * HD, q_stride_h=HD, q_stride_d=1, k_stride_s=HKV * HD, k_stride_h=HD,
                           k_stride_d=1, oq_stride_s=HQ * HD, oq_stride_h=HD, oq_stride_d=1,
                           ok_stride_s=HKV * HD, ok_stride_h=HD, ok_stride_d=1, p_stride_s=1,
                           cos_stride_s=HD // 2, sin_stride_s=HD // 2, seq_len=None, NUM_Q_HEADS=HQ,
                           NUM_K_HEADS=HKV, HEAD_DIM=HD, PADDED_HEAD_DIM=max(_np2(HD), 16),
                           ROTARY_INTERLEAVED=False, MAX_POSITION_EMBEDDINGS=max_pos),
                      (tokens,), 4, 3)
    return build


def fg_reshape_and_cache(tokens: int) -> Callable[[Tensors], Launch]:
    """flag_gems.fused.reshape_and_cache (vLLM's paged KV-cache write): fp16, 16-token blocks."""
    def build(t: Tensors) -> Launch:
        block, x = 16, 8  # x: 16 bytes of fp16
        blocks = _cdiv(tokens, block) * 4
        # Distinct slots (a permutation of part of the cache): no two tokens write one slot.
        slots = t.arange(0, tokens, dtype=torch.int64) * 3 % (blocks * block) if t.device != "meta" \
            else t.zeros(tokens, dtype=torch.int64)
        return Launch(dict(key=t.randn(tokens, HKV, HD), value=t.randn(tokens, HKV, HD),
                           key_cache=t.zeros(blocks, HKV, HD // x, block, x, dtype=torch.float16),
                           value_cache=t.zeros(blocks, HKV, HD, block, dtype=torch.float16),
                           slot_mapping=slots, key_stride=HKV * HD, value_stride=HKV * HD, num_heads=HKV,
                           head_size=HD, block_size=block, x=x, k_scale=t.full((1,), 1.0),
                           v_scale=t.full((1,), 1.0), n=HKV * HD),
                      (tokens,), 4, 3)
    return build


def fg_topk_softmax(tokens: int) -> Callable[[Tensors], Launch]:
    """flag_gems.fused.topk_softmax (MoE routing): 128 experts, top 8, renormalized."""
    def build(t: Tensors) -> Launch:
        experts, k = 128, 8
        block_e = min(((_np2(experts) + 31) // 32) * 32, 1024)
        block_r = max(1024 // block_e, 1)
        return Launch(dict(input_ptr=t.randn(tokens, experts, dtype=torch.float32), finished_ptr=None,
                           output_ptr=t.zeros(tokens, k), indices_ptr=t.zeros(tokens, k, dtype=torch.int32),
                           source_rows_ptr=t.zeros(tokens, k, dtype=torch.int32), num_rows=tokens, k=k,
                           num_experts=experts, start_expert=0, end_expert=experts, renormalize=True,
                           INDEX_TY=triton.language.int32, BLOCK_SIZE_ROWS=block_r, BLOCK_SIZE_EXPERTS=block_e),
                      (_cdiv(tokens, block_r),), 4, 3)
    return build


def fg_group_quant_fp8(tokens: int) -> Callable[[Tensors], Launch]:
    """flag_gems.ops.per_token_group_quant_fp8 (DeepSeek-style 1x128 activation quantization)."""
    def build(t: Tensors) -> Launch:
        group = 128
        m = tokens * HIDDEN // group
        block = _np2(group)
        return Launch(dict(y_ptr=t.randn(tokens, HIDDEN, dtype=torch.bfloat16),
                           y_q_ptr=t.zeros(tokens, HIDDEN, dtype=torch.float8_e4m3fn),
                           y_s_ptr=t.zeros(tokens, HIDDEN // group), group_size=group, y_num_columns=HIDDEN,
                           y_row_stride=HIDDEN, eps=1e-10, fp8_min=-448.0, fp8_max=448.0, scale_ue8m0=False,
                           BLOCK=block),
                      (m,), min(max(block // 256, 1), 8), 1)
    return build


def fg_embedding(tokens: int) -> Callable[[Tensors], Launch]:
    """flag_gems.ops.embedding: one program per token, the row in one block."""
    def build(t: Tensors) -> Launch:
        vocab = 32000
        return Launch(dict(out_ptr=t.zeros(tokens, HIDDEN, dtype=torch.bfloat16),
                           in_ptr=t.randint(0, vocab, tokens), weight_ptr=t.randn(vocab, HIDDEN, dtype=torch.bfloat16),
                           N=HIDDEN, BLOCK_SIZE=_np2(HIDDEN)),
                      (tokens,), 4, 3,
                      reference=lambda a: {"out_ptr": a["weight_ptr"][a["in_ptr"]]}, atol=0.0, rtol=0.0)
    return build


def fg_argmax(rows: int) -> Callable[[Tensors], Launch]:
    """flag_gems.ops.argmax over the vocabulary (greedy sampling), its nvidia heuristics."""
    def build(t: Tensors) -> Launch:
        tile = _np2(VOCAB) if VOCAB <= 32 * 1024 else 4096
        warps = 4 if tile < 2048 else 8 if tile < 4096 else 16
        return Launch(dict(inp=t.randn(rows, VOCAB, dtype=torch.float32),
                           out_index=t.zeros(rows, dtype=torch.int64), M=rows, N=VOCAB, TILE_N=tile,
                           ONE_TILE_PER_CTA=tile >= VOCAB),
                      (rows, 1, 1), warps, 3,
                      reference=lambda a: {"out_index": a["inp"].argmax(-1)}, atol=0.0, rtol=0.0)
    return build


def fg_repetition_penalty(rows: int) -> Callable[[Tensors], Launch]:
    """flag_gems.fused.apply_repetition_penalties (vLLM's sampler), over the vocabulary."""
    def build(t: Tensors) -> Launch:
        block = 1024
        mask = (lambda: t.rand(rows, VOCAB) < 0.01) if t.device != "meta" else \
            (lambda: t.zeros(rows, VOCAB, dtype=torch.bool))
        return Launch(dict(logits_ptr=t.randn(rows, VOCAB, dtype=torch.float32), prompt_mask_ptr=mask(),
                           # Penalty 1.0: the kernel works in place, and with 1.2 each timed launch
                           # multiplied the repeated negative logits again, so after ~480 launches
                           # they were -inf and nan_inf_check (rightly) reported 30M lanes per launch:
                           # the ratio measured its reporting path. 1.0 keeps the values (same work).
                           output_mask_ptr=mask(), penalties_ptr=t.full((rows,), 1.0), num_seqs=rows,
                           vocab_size=VOCAB, BLOCK_SIZE=block),
                      (rows, _cdiv(VOCAB, block)), 4, 3)
    return build


def fg_skip_layer_norm(rows: int) -> Callable[[Tensors], Launch]:
    """flag_gems.fused.skip_layernorm: layer_norm(x + residual), one program per row."""
    def build(t: Tensors) -> Launch:
        n = HIDDEN
        return Launch(dict(Y=t.zeros(rows, n, dtype=torch.float16), X=t.randn(rows, n, dtype=torch.float16),
                           R=t.randn(rows, n, dtype=torch.float16), W=t.randn(n, dtype=torch.float16),
                           B=t.randn(n, dtype=torch.float16), y_stride_r=n, y_stride_c=1, x_stride_r=n,
                           x_stride_c=1, r_stride_r=n, r_stride_c=1, N=n, eps=1e-5, BLOCK_SIZE=_np2(n)),
                      (rows,), 4, 3)
    return build


# --------------------------------------------------------------------------- #
# sageattention 1.0.6 (INT8 QK^T attention; Triton only)
# --------------------------------------------------------------------------- #


class _Recorded(Exception):
    """Stops a launcher once its kernel's launch is captured."""


def _recorded(module_name: str, kernel: str, call: Callable[[types.ModuleType], Any]) -> Launch:
    """Run the package's launcher with ``kernel`` replaced by a recorder of its first launch."""
    module = importlib.import_module(module_name)
    names = [p.name for p in unwrap(getattr(module, kernel)).params]
    seen: dict[str, Launch] = {}

    class Recorder:
        def __getitem__(self, grid: Any) -> Callable[..., None]:
            def launch(*args: Any, **kwargs: Any) -> None:
                warps, stages = kwargs.pop("num_warps", 4), kwargs.pop("num_stages", 3)
                bound = dict(zip(names, args)) | kwargs
                seen["launch"] = Launch(bound, tuple(grid(bound) if callable(grid) else grid), warps, stages)
                raise _Recorded
            return launch

    original = getattr(module, kernel)
    setattr(module, kernel, Recorder())
    try:
        call(module)
    except _Recorded:
        pass
    finally:
        setattr(module, kernel, original)
    if "launch" not in seen:
        raise RuntimeError(f"{module_name}: the launcher never launched {kernel}")
    return seen["launch"]


def _sage_qk(t: Tensors, b: int, h: int, q_len: int, kv_len: int, d: int) -> dict[str, torch.Tensor]:
    """INT8 q/k with per-block scales (what sageattention.quant_per_block.per_block_int8 makes)."""
    return dict(q=t.randint(-100, 100, b, h, q_len, d, dtype=torch.int8),
                k=t.randint(-100, 100, b, HKV, kv_len, d, dtype=torch.int8),
                v=t.randn(b, HKV, kv_len, d, dtype=torch.float16),
                q_scale=t.rand(b, h, _cdiv(q_len, 128), 1, dtype=torch.float32) * 1e-3,
                k_scale=t.rand(b, HKV, _cdiv(kv_len, 64), 1, dtype=torch.float32) * 1e-2)


def sage_attn(module: str, q_len: int, kv_len: int, batch: int = 2, d: int = HD) -> Callable[[Tensors], Launch]:
    """sageattention's ``forward`` (HND layout, GQA 32/8 heads): BLOCK_M 128, BLOCK_N 64."""
    def build(t: Tensors) -> Launch:
        a = _sage_qk(t, batch, HQ, q_len, kv_len, d)
        return _recorded(f"sageattention.{module}", "_attn_fwd",
                         lambda m: m.forward(a["q"], a["k"], a["v"], a["q_scale"], a["k_scale"]))
    return build


def _second_launch(module: types.ModuleType, q: torch.Tensor, k: torch.Tensor) -> Launch:
    """The k launch of per_block_int8 (its second), recorded."""
    names = [p.name for p in unwrap(module.quant_per_block_int8_kernel).params]
    launches: list[Launch] = []

    class Recorder:
        def __getitem__(self, grid: Any) -> Callable[..., None]:
            def launch(*args: Any, **kwargs: Any) -> None:
                warps, stages = kwargs.pop("num_warps", 4), kwargs.pop("num_stages", 3)
                launches.append(Launch(dict(zip(names, args)) | kwargs, tuple(grid), warps, stages))
            return launch

    original = module.quant_per_block_int8_kernel
    module.quant_per_block_int8_kernel = Recorder()
    try:
        module.per_block_int8(q, k)
    finally:
        module.quant_per_block_int8_kernel = original
    return launches[1]


def _sage_quant_q(tokens: int) -> Callable[[Tensors], Launch]:
    def build(t: Tensors) -> Launch:
        q = t.randn(1, HQ, tokens, HD, dtype=torch.float16)
        k = t.randn(1, HKV, tokens, HD, dtype=torch.float16)
        return _recorded("sageattention.quant_per_block", "quant_per_block_int8_kernel",
                         lambda m: m.per_block_int8(q, k))
    return build


def _sage_quant_k(tokens: int) -> Callable[[Tensors], Launch]:
    def build(t: Tensors) -> Launch:
        q = t.randn(1, HQ, 1, HD, dtype=torch.float16)
        k = t.randn(1, HKV, tokens, HD, dtype=torch.float16)
        return _second_launch(importlib.import_module("sageattention.quant_per_block"), q, k)
    return build


_FG = "flag-gems"
_SA = "sageattention"

MORE: list[RealKernel] = [
    FlagGemsKernel("fg_rms_norm_decode", _FG, "flag_gems.ops.rms_norm", "rms_norm_kernel", "norm", fg_rms_norm(DECODE), tags=("decode",)),
    FlagGemsKernel("fg_rms_norm_prefill", _FG, "flag_gems.ops.rms_norm", "rms_norm_kernel", "norm", fg_rms_norm(PREFILL), tags=("prefill",)),
    FlagGemsKernel("fg_fused_add_rms_norm_decode", _FG, "flag_gems.fused.fused_add_rms_norm", "fused_add_rms_norm_kernel", "norm", fg_fused_add_rms_norm(DECODE), tags=("decode",)),
    FlagGemsKernel("fg_fused_add_rms_norm_prefill", _FG, "flag_gems.fused.fused_add_rms_norm", "fused_add_rms_norm_kernel", "norm", fg_fused_add_rms_norm(PREFILL), tags=("prefill",)),
    FlagGemsKernel("fg_rotary_decode", _FG, "flag_gems.fused.rotary_embedding", "apply_rotary_pos_emb_kernel", "rotary", fg_rotary(DECODE), tags=("decode",)),
    FlagGemsKernel("fg_rotary_prefill", _FG, "flag_gems.fused.rotary_embedding", "apply_rotary_pos_emb_kernel", "rotary", fg_rotary(PREFILL), tags=("prefill",)),
    FlagGemsKernel("fg_reshape_and_cache_decode", _FG, "flag_gems.fused.reshape_and_cache", "reshape_and_cache_kernel", "kv_cache", fg_reshape_and_cache(16), tags=("decode", "gpu_only")),
    FlagGemsKernel("fg_reshape_and_cache_prefill", _FG, "flag_gems.fused.reshape_and_cache", "reshape_and_cache_kernel", "kv_cache", fg_reshape_and_cache(PREFILL), tags=("prefill", "gpu_only")),
    FlagGemsKernel("fg_topk_softmax_decode", _FG, "flag_gems.fused.topk_softmax", "topk_gating_softmax_kernel", "moe", fg_topk_softmax(16), tags=("decode",)),
    FlagGemsKernel("fg_topk_softmax_prefill", _FG, "flag_gems.fused.topk_softmax", "topk_gating_softmax_kernel", "moe", fg_topk_softmax(4096), tags=("prefill",)),
    FlagGemsKernel("fg_group_quant_fp8_decode", _FG, "flag_gems.ops.per_token_group_quant_fp8", "_per_token_group_quant_fp8", "quantization", fg_group_quant_fp8(DECODE), tags=("decode",)),
    FlagGemsKernel("fg_group_quant_fp8_prefill", _FG, "flag_gems.ops.per_token_group_quant_fp8", "_per_token_group_quant_fp8", "quantization", fg_group_quant_fp8(PREFILL), tags=("prefill",)),
    FlagGemsKernel("fg_embedding_decode", _FG, "flag_gems.ops.embedding", "embedding_kernel", "embedding", fg_embedding(DECODE), tags=("decode",)),
    FlagGemsKernel("fg_embedding_prefill", _FG, "flag_gems.ops.embedding", "embedding_kernel", "embedding", fg_embedding(PREFILL), tags=("prefill",)),
    FlagGemsKernel("fg_argmax_decode", _FG, "flag_gems.ops.argmax", "argmax_kernel_inner", "reduction", fg_argmax(DECODE), tags=("decode",)),
    FlagGemsKernel("fg_repetition_penalty_decode", _FG, "flag_gems.fused.apply_repetition_penalties", "_repetition_penalty_kernel", "sampling", fg_repetition_penalty(DECODE), tags=("decode",)),
    FlagGemsKernel("fg_skip_layer_norm_decode", _FG, "flag_gems.fused.skip_layernorm", "skip_layer_norm_kernel", "norm", fg_skip_layer_norm(DECODE), tags=("decode",)),
    RealKernel("sage_quant_q_prefill", _SA, "sageattention.quant_per_block", "quant_per_block_int8_kernel", "quantization", _sage_quant_q(PREFILL), tags=("prefill",)),
    RealKernel("sage_quant_k_decode", _SA, "sageattention.quant_per_block", "quant_per_block_int8_kernel", "quantization", _sage_quant_k(4096), tags=("decode",)),
    RealKernel("sage_attn_prefill", _SA, "sageattention.attn_qk_int8_per_block", "_attn_fwd", "attention", sage_attn("attn_qk_int8_per_block", PREFILL, PREFILL), tags=("prefill",)),
    RealKernel("sage_attn_causal_prefill", _SA, "sageattention.attn_qk_int8_per_block_causal", "_attn_fwd", "attention", sage_attn("attn_qk_int8_per_block_causal", PREFILL, PREFILL), tags=("prefill", "causal_prefill")),
    RealKernel("sage_attn_decode", _SA, "sageattention.attn_qk_int8_per_block", "_attn_fwd", "attention", sage_attn("attn_qk_int8_per_block", 1, 4096, batch=DECODE), tags=("decode",)),
    RealKernel("sage_attn_h96_prefill", _SA, "sageattention.attn_qk_int8_per_block_h96", "_attn_fwd", "attention", sage_attn("attn_qk_int8_per_block_h96", PREFILL, PREFILL, d=96), tags=("prefill",)),
]


if __name__ == "__main__":  # the names, for check_gpu.py --kernels / auto_mode_gpu.py --kernels
    from tests.realworld.more_kernels import MORE as _MORE  # the registered module (this one is __main__)

    print(" ".join(k.name for k in _MORE))
else:
    # "gpu_only": the kernel calls `triton.next_power_of_2` from its module, which the CPU corpus's
    # direct compile (ASTSource) refuses as an unsupported function; the GPU scripts launch it through
    # its own launcher (MORE), where the JIT accepts it.
    register([k for k in MORE if "gpu_only" not in k.tags])
