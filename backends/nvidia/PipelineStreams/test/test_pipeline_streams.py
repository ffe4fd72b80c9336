"""End-to-end CPU test of nvidia_pipeline_streams: real kernels compiled through cubin for sm_90.

The pass runs where registry.yaml places it (end of make_ttir) through the triton_ext stages hook;
the checks read the TTIR and the TTGIR that the wheel's pipeliner produced from it.
"""

from __future__ import annotations

import re

import pytest

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget

import triton_ext
from triton_ext.testing import compile_through_cubin, import_file, require_built

kernels = import_file(__file__, "../kernels.py")
require_built("nvidia_pipeline_streams")  # an unbuilt plugin fails, never skips
pytestmark = pytest.mark.usefixtures("fresh_cache")  # compile from scratch: the IR read back is this run's

HOPPER = GPUTarget("cuda", 90, 32)
AMPERE = GPUTarget("cuda", 80, 32)
MI300 = GPUTarget("hip", "gfx942", 64)
ASYNC_COPY = "ttg.async_copy_global_to_local"


@triton.jit
def fixed_length_kernel(x_ptr, out_ptr, N: tl.constexpr, BLOCK: tl.constexpr):
    # Bounds known at compile time: the guard folds to true and only the pipelined loop is left.
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], tl.float32)
    for i in range(0, N, BLOCK):
        acc += tl.load(x_ptr + row * N + i + tl.arange(0, BLOCK))
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


ROW_SIG = {"x_ptr": "*fp32", "out_ptr": "*fp32", "start": "i32", "end": "i32", "stride": "i32"}
SOURCES = {
    "row_sum": (kernels.row_sum_kernel, ROW_SIG, {"BLOCK": 1024}),
    "row_sum_i64": (kernels.row_sum_kernel, {**ROW_SIG, "start": "i64", "end": "i64"}, {"BLOCK": 1024}),
    "row_sum_staged": (kernels.row_sum_staged_kernel, ROW_SIG, {"BLOCK": 1024}),
    "fixed_length": (fixed_length_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"N": 8192, "BLOCK": 1024}),
    "running_sum": (kernels.running_sum_kernel, {"x_ptr": "*fp32", "n_cols": "i32"}, {"BLOCK": 512}),
    "dot_loop": (kernels.dot_loop_kernel, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "n_tiles": "i32"},
                 {"TILE": 64}),
}


def _compile(name: str, enabled: bool, target: GPUTarget = HOPPER, **options):
    fn, signature, constexprs = SOURCES[name]
    return compile_through_cubin(fn, signature, constexprs, target=target,
                                 pass_options={k.replace("_", "-"): v for k, v in options.items()},
                                 passes=["nvidia_pipeline_streams"] if enabled else [])


def _body(ir: str) -> str:
    return "\n".join(line for line in ir.splitlines() if "module attributes" not in line)


def _stages(ir: str) -> list[str]:
    return re.findall(r"tt\.num_stages = (\d+)", ir)


@pytest.mark.parametrize("name", ["row_sum", "row_sum_i64"])
def test_read_only_loop_is_versioned_and_its_copy_pipelined(name):
    on, off = _compile(name, enabled=True), _compile(name, enabled=False)
    assert sorted(_stages(on.asm["ttir"])) == ["1", "3"]
    assert "scf.if" in on.asm["ttir"] and "scf.if" not in off.asm["ttir"]
    # The wheel's pipeliner turned the copy's load into cp.async copies to shared memory, two
    # iterations ahead; without the pass the loop loads straight into registers.
    assert ASYNC_COPY in on.asm["ttgir"] and ASYNC_COPY not in off.asm["ttgir"]
    assert "cp.async" in on.asm["ptx"] and "cp.async" not in off.asm["ptx"]
    assert on.metadata.shared > off.metadata.shared
    assert on.asm["cubin"]


def test_same_pipeline_as_num_stages_written_by_hand():
    # The pass's pipelined copy is what tl.range(..., num_stages=3) written by hand gives: the
    # same copies (the original loop beside it has none) and the same shared memory.
    on, hand = _compile("row_sum", enabled=True), _compile("row_sum_staged", enabled=False)
    assert on.metadata.shared == hand.metadata.shared
    assert on.asm["ttgir"].count(ASYNC_COPY) == hand.asm["ttgir"].count(ASYNC_COPY) > 0


def test_num_stages_option_sets_the_depth():
    on = _compile("row_sum", enabled=True, num_stages=4)
    three = _compile("row_sum", enabled=True)
    assert sorted(_stages(on.asm["ttir"])) == ["1", "4"]
    assert on.metadata.shared > three.metadata.shared  # one more buffer


def test_constant_bounds_fold_the_guard():
    ttir = _compile("fixed_length", enabled=True).asm["ttir"]
    assert "scf.if" not in ttir
    assert _stages(ttir) == ["3"]


@pytest.mark.parametrize("name", ["running_sum", "dot_loop", "row_sum_staged"])
def test_loops_it_must_not_touch(name):
    # A loop that reads what it stored, a loop with a dot (pipelined by the kernel's num_stages) and a loop
    # whose author set num_stages compile exactly as without the pass.
    on, off = _compile(name, enabled=True), _compile(name, enabled=False)
    assert _body(on.asm["ttgir"]) == _body(off.asm["ttgir"])


@pytest.mark.parametrize("target", [AMPERE, MI300], ids=["sm80", "gfx942"])
def test_other_targets_untouched(target):
    on = _compile("row_sum", enabled=True, target=target)
    off = _compile("row_sum", enabled=False, target=target)
    assert _body(on.asm["ttir"]) == _body(off.asm["ttir"])


def test_bad_num_stages_is_a_clear_error():
    with pytest.raises(triton_ext.TritonExtError, match="num_stages|num-stages"):
        with triton_ext.enabled("nvidia_pipeline_streams", num_stages=1):
            pass


def test_bench_spec_cpu_check():
    # What `triton-ext bench --cpu nvidia_pipeline_streams` runs: every variant compiles through
    # cubin and the pass variant's loop is versioned.
    from pathlib import Path

    from triton_ext import bench as _bench

    spec = _bench.load_spec(Path(__file__).resolve().parents[1] / "bench.py")
    checks = _bench.check_cpu(spec, log=lambda s: None)
    assert [(c.variant, c.ok, c.problem) for c in checks] == [
        ("row_sum", True, None), ("row_sum+pipeline_streams", True, None), ("hand_staged", True, None)]
