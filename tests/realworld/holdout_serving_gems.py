"""A hold-out set: serving-step kernels of flag-gems, sglang and vLLM that the corpus never measured.

The transparent mode (``TRITON_EXT_ENABLE=auto``) was tuned on the corpus (realworld_kernels.py's
``REALWORLD``, more_kernels.py's ``MORE``, tests/corpus). These kernels are kept out of it, on
purpose: they are not registered (no ``register(...)``), so no sweep, table or tuning script sees
them, and ``test_holdout_kernels.py`` checks that none duplicates a corpus entry. The GPU
harness runs them later to see how the mode does on kernels it was not tuned for.

Where they come from (as in the corpus, no kernel code lives here; each kernel is imported from
its pinned package and this module only describes how the package's launcher calls it):

* sglang 0.5.9 (``sglang.srt.layers.attention.triton_ops.decode_attention``, imported through
  sglang_modules.py): its Triton attention backend's decode, the grouped (GQA) split-KV stage 1
  and the stage-2 reduction. Recorded from the package's own launchers (``_recorded``).
* vLLM 0.33.0 (the pinned wheel's ``vllm/v1/worker/gpu/sample/gumbel.py``, through
  vllm_modules.py's stand-ins): Model Runner V2's sampler (the default runner for a plain Llama
  model), temperature scaling and the Gumbel-max sampling kernel. Recorded from its launchers.
* flag-gems 5.0.2 (imported via more_kernels.py's ``import_flag_gems_module``): the sm_90 GEMM
  (``runtime/backend/_nvidia/hopper/ops/mm.py``) and the sampling ops a serving step replaces
  aten with: softmax, top-k (its first stage) and cumsum over the vocabulary (its three row-scan passes).

Selection rule, applied before anything was run: kernels that one serving step of a
Llama-3-8B-like model (hidden 4096, 32 query / 8 KV heads of 128, MLP 14336, vocabulary 128256,
bf16) launches through these packages, at decode (batch 16, 4096-token contexts) or prefill
(2048 tokens), which the corpus lacks (neither the same kernel nor, for flag-gems, the same op).
Kernels were not chosen by whether any pass helps them, and no pass was run on them to choose.
Left out under the rule: sglang's ``merge_state`` and vLLM's ``triton_decode_attention`` /
``triton_merge_attn_states`` (MLA, cascade or context-parallel paths, not a plain Llama step);
flag-gems' ``silu_and_mul`` / pointwise ops (``pointwise_dynamic`` generates their code at run
time: there is no module attribute to import); vLLM's ``triton_reshape_and_cache_flash`` (its
module imports vLLM's quantization utilities, which the stand-ins do not provide) and flag-gems'
``reshape_and_cache_flash`` (``triton.next_power_of_2`` inside the kernel: GPU-only, and a near
twin of the corpus's ``fg_reshape_and_cache``); flag-gems' top-k stage 2 (a fully unrolled
8192-wide bitonic sort for top-50 of 128256: 265 s to compile, a 6.5 MB cubin, on this CPU; the
CPU test could not afford it).

Sizes: decode entries are batch 16 with 4096-token contexts (attention) or 16 rows of 128256
logits (sampling): kernels of a few to a few tens of microseconds. ``ho_fg_mm_prefill`` is a
2048x4096x4096 projection and ``ho_sglang_decode_stage1`` reads a 256 MB KV cache: GPU-bound.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

import torch
from triton.runtime import JITFunction

# The corpus's model sizes (Llama-3-8B-like) and the SM count launchers size persistent grids by
# (flag-gems' scan grid here; H200 and H100 SXM both have 132).
from tests.realworld.more_kernels import HD, HIDDEN, HKV, HQ, PREFILL, VOCAB, FlagGemsKernel, _recorded
from tests.realworld.realworld_kernels import SM_COUNT, Launch, RealKernel, Tensors, _cdiv, _np2, unwrap

__all__ = ["HOLDOUT_SERVING_GEMS", "BY_NAME"]

DECODE_BATCH, CONTEXT = 16, 4096


# --------------------------------------------------------------------------- #
# sglang 0.5.9: the Triton backend's decode attention (page size 1)
# --------------------------------------------------------------------------- #

_SG_DECODE = "sglang.srt.layers.attention.triton_ops.decode_attention"
#: sglang's ServerArgs.triton_attention_num_kv_splits on CUDA.
_SG_KV_SPLITS = 8


def _sg_decode_module() -> Any:
    from tests.realworld.sglang_modules import import_kernel_module

    return import_kernel_module("decode_attention")


def _sg_decode_tensors(t: Tensors, batch: int, seq: int) -> dict[str, Any]:
    """What TritonAttnBackend.init_forward_metadata hands decode_attention_fwd at decode."""
    tokens = batch * seq
    return dict(q=t.randn(batch, HQ, HD, dtype=torch.bfloat16),
                k_buffer=t.randn(tokens, HKV, HD, dtype=torch.bfloat16),
                v_buffer=t.randn(tokens, HKV, HD, dtype=torch.bfloat16),
                o=t.zeros(batch, HQ, HD, dtype=torch.bfloat16),
                kv_indptr=t.arange(0, tokens + 1, seq),
                # Each sequence's tokens in order in the pool (req_to_token), int64 as sglang builds it.
                kv_indices=t.arange(0, tokens, dtype=torch.int64),
                attn_logits=t.zeros(batch, HQ, _SG_KV_SPLITS, HD),
                attn_lse=t.zeros(batch, HQ, _SG_KV_SPLITS),
                # get_num_kv_splits gives every 4096-token sequence the maximum.
                num_kv_splits=t.full((batch,), _SG_KV_SPLITS, dtype=torch.int32))


def sg_decode_stage1(batch: int, seq: int) -> Callable[[Tensors], Launch]:
    """decode_attention_fwd (GQA: the grouped kernel): BLOCK_N 32, BLOCK_H 16, 4 warps, 2 stages."""
    def build(t: Tensors) -> Launch:
        a = _sg_decode_tensors(t, batch, seq)
        _sg_decode_module()  # sglang_modules' import (bare parents if the serving stack is absent)
        return _recorded(_SG_DECODE, "_fwd_grouped_kernel_stage1",
                         lambda m: m.decode_attention_fwd(a["q"], a["k_buffer"], a["v_buffer"], a["o"],
                                                          a["kv_indptr"], a["kv_indices"], a["attn_logits"],
                                                          a["attn_lse"], a["num_kv_splits"], _SG_KV_SPLITS,
                                                          HD ** -0.5))
    return build


def sg_decode_stage2(batch: int, seq: int) -> Callable[[Tensors], Launch]:
    """_decode_softmax_reducev_fwd: one program per (sequence, head) merges the 8 splits."""
    def build(t: Tensors) -> Launch:
        a = _sg_decode_tensors(t, batch, seq)
        if t.device != "meta":  # partial results as stage 1 leaves them (lse of a 512-token split)
            a["attn_logits"] = t.randn(batch, HQ, _SG_KV_SPLITS, HD, dtype=torch.float32)
            a["attn_lse"] = t.randn(batch, HQ, _SG_KV_SPLITS, dtype=torch.float32) + 6.0
        _sg_decode_module()
        # The stage-2 launcher itself: decode_attention_fwd would run stage 1 for real first.
        return _recorded(_SG_DECODE, "_fwd_kernel_stage2",
                         lambda m: m._decode_softmax_reducev_fwd(a["attn_logits"], a["attn_lse"], a["q"], a["o"],
                                                                 a["v_buffer"], a["kv_indptr"], a["num_kv_splits"],
                                                                 _SG_KV_SPLITS))
    return build


# --------------------------------------------------------------------------- #
# vLLM 0.33.0: Model Runner V2's sampler (vllm/v1/worker/gpu/sample/gumbel.py)
# --------------------------------------------------------------------------- #

_VL_GUMBEL = "vllm.v1.worker.gpu.sample.gumbel"
_VL_MAX_REQS = 256  # the sampling states' rows (max_num_seqs); requests 0..batch-1 are live


def _vllm_worker_module(name: str) -> Any:
    """A module of the wheel's files outside vllm.v1.attention.ops, under vllm_modules' stand-ins."""
    from tests.realworld.vllm_modules import import_kernel_module

    import_kernel_module("triton_decode_attention")  # installs the stand-ins and bare parents once
    return importlib.import_module(name)


@dataclass(frozen=True)
class VllmWorkerKernel(RealKernel):
    """A vLLM kernel from the wheel's files outside ``vllm.v1.attention.ops``."""

    def fn(self) -> JITFunction:
        return unwrap(getattr(_vllm_worker_module(self.module), self.attr))


def _vl_sampling_state(t: Tensors, rows: int, temperature: float) -> dict[str, torch.Tensor]:
    return dict(logits=t.randn(rows, VOCAB, dtype=torch.float32, scale=4.0),
                idx=t.arange(0, rows), temperature=t.full((_VL_MAX_REQS,), temperature),
                seeds=t.randint(0, 2**31, _VL_MAX_REQS), pos=t.randint(0, CONTEXT, rows))


def vl_temperature(rows: int) -> Callable[[Tensors], Launch]:
    """apply_temperature: logits /= T in place, 8192-wide blocks (a (rows, 16) grid)."""
    def build(t: Tensors) -> Launch:
        # T = 0.5: a power of two, so the hundreds of in-place relaunches of a timing loop only
        # shift exponents (and stay finite for > 100 launches of logits ~ 4), and
        # T != 0, 1, which would return before loading anything.
        s = _vl_sampling_state(t, rows, 0.5)
        _vllm_worker_module(_VL_GUMBEL)
        launch = _recorded(_VL_GUMBEL, "_temperature_kernel",
                           lambda m: m.apply_temperature(s["logits"], s["idx"], s["temperature"]))
        launch.reference = lambda a: {"logits_ptr": a["logits_ptr"] / 0.5}
        launch.atol = launch.rtol = 0.0
        return launch
    return build


def vl_gumbel_sample(rows: int) -> Callable[[Tensors], Launch]:
    """gumbel_sample as the sampler calls it (temperature already applied, no draft, fp32 noise)."""
    def build(t: Tensors) -> Launch:
        s = _vl_sampling_state(t, rows, 0.7)
        _vllm_worker_module(_VL_GUMBEL)
        return _recorded(_VL_GUMBEL, "_gumbel_sample_kernel",
                         lambda m: m.gumbel_sample(s["logits"], s["idx"], s["temperature"], s["seeds"], s["pos"],
                                                   apply_temperature=False, is_drafting=False, use_fp64=False))
    return build


# --------------------------------------------------------------------------- #
# flag-gems 5.0.2
# --------------------------------------------------------------------------- #

_FG_MM = "flag_gems.runtime.backend._nvidia.hopper.ops.mm"


def fg_mm(m: int, n: int, k: int) -> Callable[[Tensors], Launch]:
    """The sm_90 backend's mm_kernel_general (device-side TMA descriptors when the tiles divide).

    Pinned: one of its tuned configs (hopper/tune_configs.yaml ``mm``): 128x128x64, 8 warps,
    3 stages; grid = tiles of M x tiles of N, GROUP_M 8 as general_mm passes it. Row-major
    operands, as ``torch.mm(x, w)`` with ``w`` stored [K, N]. flag-gems' launcher prefers its
    host-descriptor twin (mm_kernel_general_host_tma) where ``TensorDescriptor`` exists; that one
    takes descriptor arguments, which ``compile_args`` cannot describe, so this is the variant
    the launcher falls back to. It needs ``triton.set_allocator`` at launch (the device
    descriptors' scratch), as auto_mode_gpu.py sets it.
    """
    def build(t: Tensors) -> Launch:
        bm, bn, bk = 128, 128, 64
        return Launch(dict(A=t.randn(m, k, dtype=torch.bfloat16, scale=0.1),
                           B=t.randn(k, n, dtype=torch.bfloat16, scale=0.1),
                           C=t.zeros(m, n, dtype=torch.bfloat16), M=m, N=n, K=k, stride_am=k, stride_ak=1,
                           stride_bk=n, stride_bn=1, stride_cm=n, stride_cn=1, BLOCK_M=bm, BLOCK_N=bn,
                           BLOCK_K=bk, GROUP_M=8),
                      (_cdiv(m, bm) * _cdiv(n, bn),), 8, 3,
                      reference=lambda a: {"C": (a["A"].float() @ a["B"].float()).to(torch.bfloat16)},
                      atol=5e-2, rtol=2e-2)
    return build


def fg_softmax(rows: int) -> Callable[[Tensors], Launch]:
    """flag_gems.ops.softmax over the vocabulary (the sampler's probabilities), its nvidia heuristics."""
    def build(t: Tensors) -> Launch:
        # softmax_heur_tile_n_inner / one_tile_per_cta / num_warps_inner for N = 128256.
        tile = _np2(VOCAB) if VOCAB <= 32 * 1024 else 4096
        warps = 4 if tile < 2048 else 8 if tile < 4096 else 16
        return Launch(dict(output_ptr=t.zeros(rows, VOCAB),
                           input_ptr=t.randn(rows, VOCAB, dtype=torch.float32, scale=4.0), M=rows, N=VOCAB,
                           TILE_N=tile, ONE_TILE_PER_CTA=tile >= VOCAB),
                      (rows, 1, 1), warps, 3,
                      reference=lambda a: {"output_ptr": torch.softmax(a["input_ptr"], -1)}, atol=1e-6)
    return build


def _fg_topk_sizes(k: int) -> tuple[int, int]:
    """flag_gems.ops.topk: (chunk_size, chunk_num) for the vocabulary (> 65535: the two-stage path)."""
    chunk = 256 if VOCAB < 1024 else 1024
    chunk = max(chunk, _np2(k))
    return chunk, _cdiv(VOCAB, chunk)


def fg_topk_stage1(rows: int, k: int) -> Callable[[Tensors], Launch]:
    """topk_stage1_kernel: each program keeps the top k of one 1024-wide chunk of a row."""
    def build(t: Tensors) -> Launch:
        chunk, chunks = _fg_topk_sizes(k)
        return Launch(dict(y_ptr=t.zeros(rows * chunks * k), index_ptr=t.zeros(rows * chunks * k, dtype=torch.int64),
                           x_ptr=t.randn(rows, VOCAB, dtype=torch.float32), k=k, N=VOCAB, CHUNK_SIZE=chunk,
                           DESCENDING=True),
                      (rows, chunks), 4, 3)  # the launcher passes no options: Triton's defaults
    return build


def _fg_scan_sizes() -> tuple[int, int, int]:
    """reduce_then_scan_row for N = 128256 (> 16384: the three-kernel path): tile, ctas, tiles per cta."""
    tile = min(4096, _np2(VOCAB))
    tiles = _cdiv(VOCAB, tile)
    ctas = min(tiles, SM_COUNT * 4)
    return tile, ctas, _cdiv(tiles, ctas)


def fg_cumsum_block_sum(rows: int) -> Callable[[Tensors], Launch]:
    """cumsum's first pass: each program sums its tiles of a row (fp32 probabilities, top-p)."""
    def build(t: Tensors) -> Launch:
        tile, ctas, per_cta = _fg_scan_sizes()
        return Launch(dict(in_ptr=t.rand(rows, VOCAB), block_sum_ptr=t.zeros(rows, ctas), N=VOCAB,
                           tiles_per_cta=per_cta, TILE_SIZE=tile),
                      # the launcher's grid is (rows, ctas, 1, 1): Triton reads three dimensions
                      (rows, ctas, 1), 8 if tile > 2048 else 4, 3)
    return build


def fg_cumsum_root_scan(rows: int) -> Callable[[Tensors], Launch]:
    """cumsum's middle pass: one program per row scans the row's block sums (32 of them)."""
    def build(t: Tensors) -> Launch:
        tile, ctas, _ = _fg_scan_sizes()
        return Launch(dict(in_ptr=t.rand(rows, ctas), out_ptr=t.zeros(rows, ctas), N=ctas, TILE_SIZE=_np2(ctas)),
                      (rows, 1, 1), 8 if tile > 2048 else 4, 3,
                      reference=lambda a: {"out_ptr": a["in_ptr"].cumsum(-1)}, atol=1e-5)
    return build


def fg_cumsum_block_scan(rows: int) -> Callable[[Tensors], Launch]:
    """cumsum's last pass: each program scans its tiles, offset by the blocks before it."""
    def build(t: Tensors) -> Launch:
        tile, ctas, per_cta = _fg_scan_sizes()
        x = t.rand(rows, VOCAB)
        if t.device != "meta":  # the root scan's inclusive prefix of the block sums
            prefix = torch.stack([c.sum(-1) for c in x.split(tile * per_cta, -1)], -1).cumsum(-1)
        else:
            prefix = t.zeros(rows, ctas)

        def ref(a: dict[str, Any]) -> dict[str, torch.Tensor]:
            return {"out_ptr": a["in_ptr"].double().cumsum(-1).float()}

        return Launch(dict(in_ptr=x, previous_sum_ptr=prefix, out_ptr=t.zeros(rows, VOCAB), N=VOCAB,
                           num_tiles_n=ctas, tiles_per_cta=per_cta, TILE_SIZE=tile),
                      (rows, ctas, 1), 8 if tile > 2048 else 4, 3, reference=ref, atol=2e-2, rtol=1e-4)
    return build


_FG, _SG, _VL = "flag-gems", "sglang", "vllm"
_TOPK = 50  # a common top_k for sampling

HOLDOUT_SERVING_GEMS: list[RealKernel] = [
    RealKernel("ho_sglang_decode_stage1", _SG, _SG_DECODE, "_fwd_grouped_kernel_stage1", "attention",
               sg_decode_stage1(DECODE_BATCH, CONTEXT), tags=("decode", "holdout")),
    RealKernel("ho_sglang_decode_stage2", _SG, _SG_DECODE, "_fwd_kernel_stage2", "attention",
               sg_decode_stage2(DECODE_BATCH, CONTEXT), tags=("decode", "holdout")),
    VllmWorkerKernel("ho_vllm_temperature_decode", _VL, _VL_GUMBEL, "_temperature_kernel", "sampling",
                     vl_temperature(DECODE_BATCH), tags=("decode", "holdout")),
    VllmWorkerKernel("ho_vllm_gumbel_sample_decode", _VL, _VL_GUMBEL, "_gumbel_sample_kernel", "sampling",
                     vl_gumbel_sample(DECODE_BATCH), tags=("decode", "holdout")),
    FlagGemsKernel("ho_fg_mm_prefill", _FG, _FG_MM, "mm_kernel_general", "gemm",
                   fg_mm(PREFILL, HIDDEN, HIDDEN), tags=("prefill", "holdout", "needs_allocator")),
    FlagGemsKernel("ho_fg_softmax_decode", _FG, "flag_gems.ops.softmax", "softmax_kernel_inner", "softmax",
                   fg_softmax(DECODE_BATCH), tags=("decode", "holdout")),
    FlagGemsKernel("ho_fg_topk_stage1_decode", _FG, "flag_gems.ops.topk", "topk_stage1_kernel", "sampling",
                   fg_topk_stage1(DECODE_BATCH, _TOPK), tags=("decode", "holdout")),
    FlagGemsKernel("ho_fg_cumsum_block_sum_decode", _FG, "flag_gems.ops.cumsum",
                   "reduce_then_scan_block_sum_kernel_row", "scan", fg_cumsum_block_sum(DECODE_BATCH),
                   tags=("decode", "holdout")),
    FlagGemsKernel("ho_fg_cumsum_root_scan_decode", _FG, "flag_gems.ops.cumsum",
                   "reduce_then_scan_root_scan_kernel_row", "scan", fg_cumsum_root_scan(DECODE_BATCH),
                   tags=("decode", "holdout")),
    FlagGemsKernel("ho_fg_cumsum_block_scan_decode", _FG, "flag_gems.ops.cumsum",
                   "reduce_then_scan_block_scan_kernel_row", "scan", fg_cumsum_block_scan(DECODE_BATCH),
                   tags=("decode", "holdout")),
]

BY_NAME: dict[str, RealKernel] = {k.name: k for k in HOLDOUT_SERVING_GEMS}
assert len(BY_NAME) == len(HOLDOUT_SERVING_GEMS), "duplicate hold-out kernel names"


if __name__ == "__main__":  # the names, for check_gpu.py --kernels / auto_mode_gpu.py --kernels
    print(" ".join(BY_NAME))
