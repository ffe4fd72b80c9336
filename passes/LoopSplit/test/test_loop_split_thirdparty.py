"""loop_split on third-party causal prefill attention kernels, compiled through cubin on the CPU.

The kernels are imported from the pinned sglang wheel (tests/realworld/nodeps-requirements.txt)
and launched as the package's own launcher does (tests/realworld/realworld_kernels.py). Their
masks AND the causal comparison with sequence-length masks, and their loop bounds are
``block_mask * min((start_m + 1) * BLOCK_M, seq_len)`` (prefill) and ``min(seq_len, (block_m +
1) * BLOCK_M)`` (extend), the issue 17 forms. With the pass, the causal loop must become an
unmasked off-diagonal loop (no comparison at all: neither the causal nor the sequence-length
one, nor the masked K/V loads) followed by one masked loop, and nothing past the diagonal.
"""

from __future__ import annotations

import re

import pytest

import triton
from triton.compiler import ASTSource

import triton_ext
from triton_ext.testing import CUDA90, import_file, require_built

from tests.realworld.realworld_kernels import BY_NAME, Tensors, compile_args

kernels = import_file(__file__, "../kernels.py")
require_built("loop_split")
pytestmark = pytest.mark.usefixtures("fresh_cache")

#: kernel -> top-level loops (without, with the pass). The causal loop is the last one in both
#: kernels; the extend kernel's loop over the cached prefix (`start_n + offs_n < prefix_len`)
#: splits in two as well.
LOOPS = {"sglang_prefill_attention": (1, 2), "sglang_extend_attention": (2, 4)}


def _compile(name: str, enabled: bool):
    kernel = BY_NAME[name]
    fn = kernel.fn()
    launch = kernel.build(Tensors("meta"))
    signature, constexprs, attrs = compile_args(fn, launch)
    src = ASTSource(fn, signature=signature, constexprs=constexprs, attrs=attrs)
    options = {"num_warps": launch.num_warps, "num_stages": launch.num_stages}
    if not enabled:
        return triton.compile(src, target=CUDA90, options=options)
    with triton_ext.enabled("loop_split"):
        return triton.compile(src, target=CUDA90, options=options)


def _has_cmp(ir: str) -> bool:
    return bool(re.search(r"arith\.cmpi", ir))


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_causal_loop_splits_into_unmasked_and_masked(name):
    n_before, n_after = LOOPS[name]
    before = kernels.top_level_loop_bodies(_compile(name, enabled=False).asm["ttir"])
    assert len(before) == n_before and kernels.applies_causal_mask(before[-1])
    compiled = _compile(name, enabled=True)
    after = kernels.top_level_loop_bodies(compiled.asm["ttir"])
    # Exactly one extra loop for the causal loop: nothing is emitted past the diagonal (the
    # bound proves no iteration gets there).
    assert len(after) == n_after, compiled.asm["ttir"]
    off_diagonal, diagonal = after[-2], after[-1]
    assert not _has_cmp(off_diagonal), off_diagonal
    assert "tt.dot" in off_diagonal and "tt.dot" in diagonal
    assert kernels.applies_causal_mask(diagonal), diagonal
    assert compiled.asm["cubin"], "compilation did not reach cubin"


# -- vLLM 0.33.0 (issue 28): where the profitability model declines ---------------------------

#: kernel -> (top-level TTIR loops without the pass, with it). vLLM's unified attention folds only
#: its tile mask, which masks only the K/V loads of a dot loop: declined (split into three it had
#: 139 registers against 80 and ran 0.83-0.90x on the H200). The prefix-prefill's unroll
#: remainder (at most two unmasked trips) is declined, its causal loop still splits. The paged
#: decode's sequence mask feeds the scores' `tl.where`: split.
VLLM_LOOPS = {"vllm_unified_prefill": (1, 1), "vllm_unified_decode_3d": (1, 1),
              "vllm_prefix_prefill": (3, 4), "vllm_paged_decode": (1, 3)}


def _ttir_loops(ttir: str) -> int:
    return len(re.findall(r"^    %\S+ = scf\.for |^    scf\.for ", ttir, flags=re.M))


@pytest.mark.parametrize("name", sorted(VLLM_LOOPS))
def test_vllm_kernels_split_only_where_the_model_says(name):
    before, after = VLLM_LOOPS[name]
    assert _ttir_loops(_compile(name, enabled=False).asm["ttir"]) == before
    assert _ttir_loops(_compile(name, enabled=True).asm["ttir"]) == after
