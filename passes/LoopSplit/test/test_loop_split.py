"""End-to-end CPU test of loop_split: one-loop causal attention compiled through cubin.

No GPU is needed: triton.compile with a GPUTarget runs ttir -> ttgir -> llir -> ptx -> cubin with
the wheel's ptxas. The pass is enabled through triton_ext (the stages hook), so it runs where
registry.yaml places it: at the end of make_ttir, followed by canonicalize and cse.
"""

from __future__ import annotations


import pytest

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

import triton_ext
from triton_ext.testing import import_file, require_built

causal_attention = import_file(__file__, "../kernels.py")
require_built("loop_split")  # an unbuilt plugin fails, never skips
pytestmark = pytest.mark.usefixtures("fresh_cache")  # compile from scratch: the IR read back is this run's

TARGET = GPUTarget("cuda", 90, 32)



def _compile(form: str, enabled: bool, head_dim: int = 64, dtype: str = "fp16"):
    src = ASTSource(causal_attention.KERNELS[form], signature=causal_attention.signature(dtype),
                    constexprs={"HEAD_DIM": head_dim, "BLOCK_M": 128, "BLOCK_N": 64})
    if not enabled:
        return triton.compile(src, target=TARGET)
    with triton_ext.enabled("loop_split"):
        return triton.compile(src, target=TARGET)






@pytest.mark.parametrize("form", ["tensor", "scalar"])
def test_unsplit_kernel_has_one_masked_loop(form):
    loops = causal_attention.top_level_loop_bodies(_compile(form, enabled=False).asm["ttir"])
    assert len(loops) == 1
    assert causal_attention.applies_causal_mask(loops[0])


@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("form", ["tensor", "scalar"])
def test_split_kernel_off_diagonal_loop_is_unmasked(form, head_dim):
    compiled = _compile(form, enabled=True, head_dim=head_dim)
    ttir = compiled.asm["ttir"]
    loops = causal_attention.top_level_loop_bodies(ttir)
    assert len(loops) in (2, 3), ttir
    # The off-diagonal loop comes first and carries no mask; the diagonal one keeps it.
    assert not causal_attention.applies_causal_mask(loops[0]), loops[0]
    assert causal_attention.applies_causal_mask(loops[1]), loops[1]
    assert "scf.for" in loops[0]
    assert compiled.asm["cubin"], "compilation did not reach cubin"


def test_split_kernel_bf16_reaches_cubin():
    compiled = _compile("tensor", enabled=True, dtype="bf16")
    assert len(causal_attention.top_level_loop_bodies(compiled.asm["ttir"])) == 2
    assert compiled.asm["cubin"]


def test_hand_split_kernel_is_left_alone():
    # The diagonal loop of the hand-split kernel straddles the diagonal on every iteration.
    off = causal_attention.top_level_loop_bodies(_compile("hand_split", enabled=False).asm["ttir"])
    on = causal_attention.top_level_loop_bodies(_compile("hand_split", enabled=True).asm["ttir"])
    assert len(off) == len(on) == 2


def test_split_loops_reach_ttgir():
    # The pipeliner still sees each part as its own loop (num_stages applies to every part).
    ttgir = _compile("tensor", enabled=True).asm["ttgir"]
    assert ttgir.count("scf.for") >= 2
