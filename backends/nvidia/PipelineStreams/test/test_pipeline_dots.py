"""End-to-end CPU test of nvidia_pipeline_dots: real kernels compiled through cubin for sm_90.

The pass runs where registry.yaml places it (end of make_ttir) through the triton_ext stages hook,
which hands it the kernel's num_stages (registry ``compile_options``); the checks read the TTIR and
the TTGIR that the wheel's pipeliner produced from it.
"""

from __future__ import annotations

import pytest

import triton_ext
from triton.backends.compiler import GPUTarget
from triton_ext.testing import import_file, require_built

kernels = import_file(__file__, "../kernels.py")
HOPPER, AMPERE, ASYNC_COPY = kernels.HOPPER, kernels.AMPERE, kernels.ASYNC_COPY
_body, _stages = kernels.body, kernels.stages
require_built("nvidia_pipeline_streams")  # an unbuilt plugin fails, never skips
pytestmark = pytest.mark.usefixtures("fresh_cache")  # compile from scratch: the IR read back is this run's


def _compile(enabled: bool, kernel_stages: int, hand_staged=None, target: GPUTarget = HOPPER, **options):
    return kernels.compile_dot_loop("nvidia_pipeline_dots", enabled, kernel_stages, hand_staged, target, **options)


def test_dot_loop_of_a_kernel_compiled_without_pipelining_is_versioned_and_pipelined():
    # num_stages=1 reaches the pass only through the hook (compile_options): without it the pass
    # would see kernel-num-stages=0 and leave the loop alone.
    on, off = _compile(True, 1), _compile(False, 1)
    assert sorted(_stages(on.asm["ttir"])) == ["1", "2"]
    assert "scf.if" in on.asm["ttir"] and "scf.if" not in off.asm["ttir"]
    assert ASYNC_COPY in on.asm["ttgir"] and ASYNC_COPY not in off.asm["ttgir"]
    assert "cp.async" in on.asm["ptx"] and "cp.async" not in off.asm["ptx"]
    assert on.metadata.shared > off.metadata.shared


def test_same_pipeline_as_num_stages_written_by_hand():
    on = _compile(True, 1)
    hand = _compile(False, 1, hand_staged=2)
    assert on.metadata.shared == hand.metadata.shared
    assert on.asm["ttgir"].count(ASYNC_COPY) == hand.asm["ttgir"].count(ASYNC_COPY) > 0


@pytest.mark.parametrize("num_stages", [2, 3])
def test_kernel_that_triton_pipelines_compiles_as_without_the_pass(num_stages):
    on, off = _compile(True, num_stages), _compile(False, num_stages)
    assert _body(on.asm["ttgir"]) == _body(off.asm["ttgir"])
    assert ASYNC_COPY in off.asm["ttgir"]


def test_a_value_the_user_sets_wins_over_the_compile_option():
    # As with target_options: the registry's value applies unless the user sets the option.
    forced = _compile(True, 3, kernel_num_stages=1)
    assert sorted(_stages(forced.asm["ttir"])) == ["1", "2"]
    assert triton_ext.manifest().find_pass("nvidia_pipeline_dots").compile_options == (
        ("kernel-num-stages", "num_stages"),)


def test_num_stages_option_sets_the_depth():
    three = _compile(True, 1, num_stages=3)
    assert sorted(_stages(three.asm["ttir"])) == ["1", "3"]
    assert three.metadata.shared > _compile(True, 1).metadata.shared


def test_sm80_untouched():
    on, off = _compile(True, 1, target=AMPERE), _compile(False, 1, target=AMPERE)
    assert _body(on.asm["ttir"]) == _body(off.asm["ttir"])


@pytest.mark.parametrize("name", ["sglang_extend_attention", "sglang_prefill_attention"])
def test_third_party_attention_launched_with_num_stages_1_is_pipelined(name):
    # SGLang's launchers pass num_stages=1 on every CUDA GPU (pinned in pyproject.toml's realworld
    # extra); compiled as the launcher calls it, for sm_90.
    import triton
    from triton.compiler import ASTSource

    from tests.realworld.realworld_kernels import BY_NAME, Tensors, compile_args

    kernel = BY_NAME[name]
    fn, launch = kernel.fn(), kernel.build(Tensors("meta"))
    assert launch.num_stages == 1
    signature, constexprs, attrs = compile_args(fn, launch)
    options = {"num_warps": launch.num_warps, "num_stages": launch.num_stages}
    off = triton.compile(ASTSource(fn, signature, constexprs, attrs), target=HOPPER, options=options)
    with triton_ext.enabled("nvidia_pipeline_dots"):
        on = triton.compile(ASTSource(fn, signature, constexprs, attrs), target=HOPPER, options=options)
    assert ASYNC_COPY not in off.asm["ttgir"] and on.asm["ttgir"].count(ASYNC_COPY) >= 4
    assert "2" in _stages(on.asm["ttir"]) and on.metadata.shared > off.metadata.shared
    assert on.asm["cubin"]
