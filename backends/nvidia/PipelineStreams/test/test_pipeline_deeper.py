"""End-to-end CPU test of nvidia_pipeline_deeper: real kernels compiled through cubin for sm_90.

The pass runs where registry.yaml places it (end of make_ttir) through the triton_ext stages hook,
which hands it the kernel's num_stages (registry ``compile_options``); the checks read the TTIR and
the TTGIR that the wheel's pipeliner produced from it: the ring of shared-memory buffers that the
pipelined loop's ``cp.async`` copies fill is one deeper than the stock kernel's, and the versioned
loop's other copy keeps the stock ring.
"""

from __future__ import annotations

import re

import pytest

import triton
import triton_ext
from triton.backends.compiler import GPUTarget
from triton_ext.testing import import_file, require_built

kernels = import_file(__file__, "../kernels.py")
HOPPER, AMPERE, ASYNC_COPY = kernels.HOPPER, kernels.AMPERE, kernels.ASYNC_COPY
_body, _stages = kernels.body, kernels.stages
require_built("nvidia_pipeline_streams")  # an unbuilt plugin fails, never skips
pytestmark = pytest.mark.usefixtures("fresh_cache")  # compile from scratch: the IR read back is this run's


def _compile(enabled: bool, kernel_stages: int, hand_staged=None, target: GPUTarget = HOPPER, **options):
    return kernels.compile_dot_loop("nvidia_pipeline_deeper", enabled, kernel_stages, hand_staged, target, **options)


def _rings(ttgir: str) -> list[int]:
    """How many buffers each multi-buffered shared-memory allocation of the TTGIR holds: the
    pipeliner allocates one ring per pipelined load, as deep as the loop's pipeline."""
    return sorted(int(n) for n in re.findall(r"ttg\.local_alloc : \(\) -> !ttg\.memdesc<(\d+)x\d+x", ttgir))


def _waits(ttgir: str) -> list[int]:
    """The ``num`` of each ``ttg.async_wait`` in a loop: the copies left in flight."""
    return sorted(int(n) for n in re.findall(r"ttg\.async_wait %\S+ \{num = (\d+) : i32\}", ttgir))


@pytest.mark.parametrize("num_stages", [2, 3])
def test_dot_loop_is_versioned_and_its_pipelined_copy_is_one_stage_deeper(num_stages):
    # The kernel's num_stages reaches the pass only through the hook (compile_options): without it
    # the pass would see kernel-num-stages=0 and leave the loop alone.
    on, off = _compile(True, num_stages), _compile(False, num_stages)
    assert sorted(_stages(on.asm["ttir"])) == sorted([str(num_stages), str(num_stages + 1)])
    assert "scf.if" in on.asm["ttir"] and "scf.if" not in off.asm["ttir"]
    # The stock kernel's ring is num_stages deep; the pipelined copy's one deeper, the other copy's
    # the stock one.
    assert _rings(off.asm["ttgir"]) == [num_stages]
    assert _rings(on.asm["ttgir"]) == [num_stages, num_stages + 1]
    # One more copy in flight while the loop waits: num_stages - 2 in the stock loop.
    assert _waits(off.asm["ttgir"]) == [num_stages - 2]
    assert _waits(on.asm["ttgir"]) == [num_stages - 2, num_stages - 1]
    assert "cp.async" in on.asm["ptx"] and "cp.async" in off.asm["ptx"]
    assert on.metadata.shared > off.metadata.shared
    assert on.asm["cubin"]


def test_same_pipeline_as_num_stages_written_by_hand():
    on, off = _compile(True, 3), _compile(False, 3)
    hand = _compile(False, 3, hand_staged=4)
    assert _rings(hand.asm["ttgir"]) == [4] and 4 in _rings(on.asm["ttgir"])
    assert on.metadata.shared == hand.metadata.shared
    # The pipelined copy issues the hand-staged kernel's copies, the other copy the stock ones.
    assert on.asm["ttgir"].count(ASYNC_COPY) == hand.asm["ttgir"].count(ASYNC_COPY) + off.asm["ttgir"].count(ASYNC_COPY)


def test_extra_stages_option_sets_the_depth():
    two = _compile(True, 3, extra_stages=2)
    assert sorted(_stages(two.asm["ttir"])) == ["3", "5"]
    assert _rings(two.asm["ttgir"]) == [3, 5]
    assert two.metadata.shared > _compile(True, 3).metadata.shared


def test_the_depth_is_capped_at_8():
    capped = _compile(True, 7, extra_stages=3)
    assert sorted(_stages(capped.asm["ttir"])) == ["7", "8"]
    assert _rings(capped.asm["ttgir"]) == [7, 8]


@pytest.mark.parametrize("num_stages", [1, 8])
def test_kernel_compiled_with_num_stages_1_or_8_compiles_as_without_the_pass(num_stages):
    # 1: nvidia_pipeline_dots' kernels (no pipelining at all); 8: the deepest pipeline the pass writes.
    on, off = _compile(True, num_stages), _compile(False, num_stages)
    assert _body(on.asm["ttir"]) == _body(off.asm["ttir"])
    assert _body(on.asm["ttgir"]) == _body(off.asm["ttgir"])
    assert on.metadata.shared == off.metadata.shared


def test_a_value_the_user_sets_wins_over_the_compile_option():
    # As with target_options: the registry's value applies unless the user sets the option.
    forced = _compile(True, 2, kernel_num_stages=4)
    assert sorted(_stages(forced.asm["ttir"])) == ["4", "5"]
    assert triton_ext.manifest().find_pass("nvidia_pipeline_deeper").compile_options == (
        ("kernel-num-stages", "num_stages"),)


def test_sm80_untouched():
    on, off = _compile(True, 3, target=AMPERE), _compile(False, 3, target=AMPERE)
    assert _body(on.asm["ttir"]) == _body(off.asm["ttir"])
    assert not _stages(on.asm["ttir"])


@pytest.mark.parametrize("name", ["fla_parallel_attn_fwd", "liger_mm_int8int2"])
def test_third_party_dot_kernel_gets_a_ring_one_deeper(name):
    # Compiled as the package's launcher calls it (num_stages 3 and 4), for sm_90.
    from triton.compiler import ASTSource

    from tests.realworld.realworld_kernels import BY_NAME, Tensors, compile_args

    kernel = BY_NAME[name]
    fn, launch = kernel.fn(), kernel.build(Tensors("meta"))
    assert launch.num_stages >= 2
    signature, constexprs, attrs = compile_args(fn, launch)
    options = {"num_warps": launch.num_warps, "num_stages": launch.num_stages}
    off = triton.compile(ASTSource(fn, signature, constexprs, attrs), target=HOPPER, options=options)
    with triton_ext.enabled("nvidia_pipeline_deeper"):
        on = triton.compile(ASTSource(fn, signature, constexprs, attrs), target=HOPPER, options=options)
    assert str(launch.num_stages + 1) in _stages(on.asm["ttir"])
    assert max(_rings(on.asm["ttgir"])) == max(_rings(off.asm["ttgir"])) + 1
    assert on.metadata.shared > off.metadata.shared
    assert on.asm["cubin"]
