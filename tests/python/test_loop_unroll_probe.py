"""The premise of benchmarks/loop_unroll_probe_gpu.py, checked on the CPU with the stock wheel: its
stages hook marks exactly the innermost loops a variant covers, and Triton's own ``loop_unroll`` then
unrolls them (a main loop by the factor and a remainder loop), so the GPU numbers compare the
unrolled kernel with the stock one and nothing else. If a Triton release stopped honouring
``tt.loop_unroll_factor`` on a module edited before ``make_ttir``, the variants would compile to the
stock kernel and these tests would fail."""

from __future__ import annotations

import pytest
import triton
import triton.language as tl
from triton import knobs
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from benchmarks import loop_unroll_probe_gpu as probe
from triton_ext.testing import import_file

# A loop without a dot (unroll_dot_loops' own test kernel, which that pass leaves alone).
row_sums = import_file(__file__, "../../passes/UnrollDotLoops/kernels.py").row_sum_kernel


@triton.jit
def tiled_dot(a, b, c, K, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in range(0, K, BLOCK):
        x = tl.load(a + r[:, None] * K + k + r[None, :])
        y = tl.load(b + (k + r[:, None]) * BLOCK + r[None, :])
        acc = tl.dot(x, y, acc)
    tl.store(c + r[:, None] * BLOCK + r[None, :], acc)


def _compile(kernel: triton.runtime.JITFunction, signature: dict[str, str]) -> triton.compiler.CompiledKernel:
    source = ASTSource(kernel, signature, {"BLOCK": 64})
    return triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4, "num_stages": 3})


_ROW_SUMS = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
_TILED_DOT = {"a": "*fp16", "b": "*fp16", "c": "*fp32", "K": "i32", "BLOCK": "constexpr"}


@pytest.fixture
def hook(monkeypatch: pytest.MonkeyPatch, tmp_path) -> probe.UnrollHook:
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    installed = probe.UnrollHook()
    monkeypatch.setattr(knobs.runtime, "add_stages_inspection_hook", installed)
    return installed


@pytest.mark.parametrize("factor", [2, 4])
def test_a_loop_without_a_dot_is_unrolled_by_the_factor(hook: probe.UnrollHook, factor: int) -> None:
    stock = _compile(row_sums, _ROW_SUMS).asm["ttir"]
    hook.variant = probe.Unroll(factor, dots=False)
    unrolled = _compile(row_sums, _ROW_SUMS).asm["ttir"]
    assert hook.marked == 1
    assert stock.count("scf.for") == 1 and stock.count("tt.load") == 1
    # The main loop holds `factor` copies of the body; a remainder loop runs the last iterations.
    assert unrolled.count("scf.for") == 2
    assert unrolled.count("tt.load") == factor + 1


def test_the_dot_variant_leaves_dotless_loops_alone_and_unrolls_dot_loops(hook: probe.UnrollHook) -> None:
    hook.variant = probe.Unroll(2, dots=True)
    assert _compile(row_sums, _ROW_SUMS).asm["ttir"].count("scf.for") == 1
    assert hook.marked == 0
    unrolled = _compile(tiled_dot, _TILED_DOT).asm["ttir"]
    assert hook.marked == 1
    assert unrolled.count("tt.dot ") == 3


_NESTED = """\
  tt.func @f() {
    %0 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (f32)  : i32 {
      %1 = scf.for %j = %c0 to %n step %c1 iter_args(%b = %a) -> (f32)  : i32 {
        %2 = tt.load %p : !tt.ptr<f32>
        scf.yield %2 : f32
      } {tt.num_stages = 2 : i32}
      scf.yield %1 : f32
    }
    %3 = scf.for %k = %c0 to %n step %c1 iter_args(%c = %z) -> (f32)  : i32 {
      %4 = tt.load %p : !tt.ptr<f32>
      scf.yield %4 : f32
    } {tt.loop_unroll_factor = 1 : i32}
    %5 = scf.for %k = %c0 to %n step %c1 iter_args(%d = %z) -> (f32)  : i32 {
      scf.yield %d : f32
    }
    tt.return
  }"""


def test_only_innermost_loops_that_load_and_carry_no_factor_are_marked() -> None:
    text, marked = probe.mark_innermost_loops(_NESTED, probe.Unroll(4, dots=False))
    assert marked == 1
    lines = text.split("\n")
    # The inner loop keeps its own attributes beside the new one; the outer loop, the loop whose
    # author chose a factor and the loop that loads nothing stay as they were.
    assert lines[5] == "      } {tt.num_stages = 2 : i32, tt.loop_unroll_factor = 4 : i32}"
    assert lines[7] == "    }"
    assert lines[11] == "    } {tt.loop_unroll_factor = 1 : i32}"
    assert lines[14] == "    }"


def test_outputs_compare_byte_for_byte_including_0d_tensors() -> None:
    # The probe's comparison (shared with the launch-option probe): bytes, not values, so -0.0
    # differs from 0.0 and a NaN equals itself; a 0-d output (the hold-out set's Liger element-wise
    # multiply has one) used to raise instead of comparing.
    import torch  # the realworld extra (tools/setup.sh); a missing one fails
    from benchmarks.launch_option_probe_gpu import identical

    assert identical({"s": torch.tensor(1.5)}, {"s": torch.tensor(1.5)})
    assert not identical({"s": torch.tensor(0.0)}, {"s": torch.tensor(-0.0)})
    assert identical({"v": torch.tensor([float("nan"), 2.0])}, {"v": torch.tensor([float("nan"), 2.0])})
    assert not identical({"v": torch.ones(3)}, {"v": torch.ones(3), "w": torch.ones(1)})
