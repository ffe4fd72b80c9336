"""End-to-end CPU test of loop_split: one-loop causal attention compiled through cubin.

No GPU is needed: triton.compile with a GPUTarget runs ttir -> ttgir -> llir -> ptx -> cubin with
the wheel's ptxas. The pass is enabled through triton_ext (the stages hook), so it runs where
registry.yaml places it: at the end of make_ttir, followed by canonicalize and cse.
"""

from __future__ import annotations

import re

import pytest

import triton
import triton.language as tl
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


# Issue 14: the kernels found to lose every iteration with loop_split (H200: 0 instead of 29645,
# 30617 and 6560). Each one is compiled through cubin here; the TTIR must keep every iteration in a
# loop that either needs no run-time guard or keeps the comparison for when the guard fails.


# The same kernels run on the GPU by the differential check (tests/differential/gpu_kernels.py).
_issue14 = import_file(__file__, "../../../tests/differential/gpu_kernels.py")
_scalar_compare = _issue14.issue14
_scalar_compare_plus_one = _issue14.issue14_n_plus_one


def _compile_scalar(fn, width: str, n_type: str | None = None) -> str:
    signature = {"out": "*i32", "lb": width, "ub": width, "n": n_type or width}
    with triton_ext.enabled("loop_split"):
        compiled = triton.compile(ASTSource(fn, signature=signature), target=TARGET)
    assert compiled.asm["cubin"], "compilation did not reach cubin"
    return compiled.asm["ttir"]


def _keeps_comparison(loop: str) -> bool:
    return bool(re.search(r"arith\.cmpi [su](lt|le|gt|ge), ", loop))


def test_i64_scalar_split_needs_no_guard():
    # k(o, 2**61, 2**61 + 10, 2**61 + 5) gave 0: the i64 guard bounded lb, ub and n by 2^60 and, when
    # it failed, emptied both loops. `i < n` does no arithmetic that could wrap, so the split is
    # exact for every i64 value: two folded loops, no guard selecting the bounds.
    ttir = _compile_scalar(_scalar_compare, "i64")
    loops = causal_attention.top_level_loop_bodies(ttir)
    assert len(loops) == 2, ttir
    assert not any(_keeps_comparison(loop) for loop in loops), ttir
    assert "1152921504606846976" not in ttir, "2^60 guard on a compare that cannot wrap"
    prologue = ttir[:ttir.index(loops[0])]
    assert "arith.select" not in prologue, prologue


@pytest.mark.parametrize("width", ["i32", "i64"])
def test_guard_failure_runs_every_iteration_in_a_comparing_loop(width):
    # `i < n + 1` with n = 2**31 - 1 (i32) gave 0 instead of 6560: n + 1 wraps, the guard fails and
    # both folded loops were empty. Now a middle loop keeps the comparison and takes [lb, ub) then.
    ttir = _compile_scalar(_scalar_compare_plus_one, width)
    loops = causal_attention.top_level_loop_bodies(ttir)
    assert len(loops) == 3, ttir
    assert [_keeps_comparison(loop) for loop in loops] == [False, True, False], ttir
    # The guard decides the middle loop's bounds (lb..ub on failure).
    prologue = ttir[:ttir.index(loops[0])]
    assert re.search(r"arith\.select %\S+, ", prologue), prologue


def test_unsigned_predicate_keeps_a_comparing_loop():
    # `i < n` with n: u32 compares unsigned (arith.cmpi ult); for lb < 0 or n >= 2^31 unsigned and
    # signed order differ, the guard fails and every iteration must still run.
    ttir = _compile_scalar(_scalar_compare, "i32", n_type="u32")
    assert "arith.cmpi ult" in ttir or "arith.cmpi ugt" in ttir, ttir
    loops = causal_attention.top_level_loop_bodies(ttir)
    assert len(loops) == 3, ttir
    assert [_keeps_comparison(loop) for loop in loops] == [False, True, False], ttir


# Issue 17, item 5: respect what the kernel author asked for.


@triton.jit
def _attributed_loop(out, lb, ub, n):
    acc = 0
    for i in tl.range(lb, ub, num_stages=3, loop_unroll_factor=1, disallow_acc_multi_buffer=True,
                      warp_specialize=True, disable_licm=True):
        if i < n:
            acc = acc * 3 + 1
        else:
            acc = acc * 3 + 2
    tl.store(out, acc)


@triton.jit
def _flattened_nest(out, n, m, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in tl.range(0, n, flatten=True):
        for j in tl.range(0, m, BLOCK):
            offs = j + tl.arange(0, BLOCK)
            acc += tl.where(offs < m, 1.0, 0.0)
    tl.store(out + tl.arange(0, BLOCK), acc)


_LOOP_ATTRIBUTES = ("llvm.loop_annotation = ", "tt.disallow_acc_multi_buffer",
                    "tt.loop_unroll_factor = 1 : i32", "tt.num_stages = 3 : i32", "tt.warp_specialize")


def test_every_loop_attribute_is_kept_on_both_parts():
    ttir = _compile_scalar(_attributed_loop, "i32")
    loops = causal_attention.top_level_loop_bodies(ttir)
    assert len(loops) == 2, ttir
    for loop in loops:
        closing = loop.splitlines()[-1]
        for attribute in _LOOP_ATTRIBUTES:
            assert attribute in closing, (attribute, closing)


def test_flatten_nest_is_left_alone():
    # Like Triton's test_tl_range_fuse: the nest marked flatten=True becomes one loop in TTGIR.
    # Splitting the inner loop first left three loops there.
    src = ASTSource(_flattened_nest, signature={"out": "*fp32", "n": "i32", "m": "i32",
                                                "BLOCK": "constexpr"}, constexprs={"BLOCK": 64})
    plain = triton.compile(src, target=TARGET)
    with triton_ext.enabled("loop_split"):
        split = triton.compile(src, target=TARGET)
    assert plain.asm["ttgir"].count("scf.for") == 1, plain.asm["ttgir"]
    assert split.asm["ttir"].count("scf.for") == plain.asm["ttir"].count("scf.for") == 2
    assert split.asm["ttgir"].count("scf.for") == 1, split.asm["ttgir"]


def test_split_keeps_fp_roundings_on_cuda():
    # `tl.where(mask, qk * scale, -inf) - m`: without the select the multiply would fuse into the
    # subtraction (Triton's default fp fusion) and round once instead of twice. On CUDA the
    # registry's target_options give loop_split rounding=mul-rn: the unmasked part multiplies
    # with an inline PTX mul.rn, which neither LLVM nor ptxas fuses (and which keeps subnormals); rounding=contract does not.
    kept = _compile("tensor", enabled=True)
    loops = causal_attention.top_level_loop_bodies(kept.asm["ttir"])
    assert "mul.rn.f32" in loops[0] and "mul.rn.f32" not in loops[1], loops
    assert "mul.rn.f32" in kept.asm["ptx"] and "mul.rn.ftz" not in kept.asm["ptx"]
    src = ASTSource(causal_attention.KERNELS["tensor"], signature=causal_attention.signature("fp16"),
                    constexprs={"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64})
    with triton_ext.enabled("loop_split", options={"rounding": "contract"}):
        contracted = triton.compile(src, target=TARGET)
    assert len(causal_attention.top_level_loop_bodies(contracted.asm["ttir"])) >= 2
    assert "mul.rn.f32" not in contracted.asm["ptx"]
