"""The premise of benchmarks/tma_probe_gpu.py, checked on the CPU with the stock wheel: its two forms
of one kernel differ in how the dot loop loads its operands and in nothing the probe does not mean
to compare. The pointer form compiles for sm_90 to cp.async copies and no global scratch; the form a
pass could produce (`tl.make_tensor_descriptor` on the device, since a pass cannot add kernel
arguments) to TMA copies, at the price of a global-scratch allocation for every launch, the
allocator call the probe pays too. If a Triton release changed either lowering, the probe's numbers
would stop meaning what docs/transparent-mode-history.md says they mean."""

from __future__ import annotations

import pytest
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from benchmarks import tma_probe_gpu as probe

_SIGNATURE = {name: "i32" for name in ("M", "N", "K", "sam", "sak", "sbk", "sbn", "scm", "scn")}
_SIGNATURE = {"a": "*fp16", "b": "*fp16", "c": "*fp16", **_SIGNATURE,
              **{name: "constexpr" for name in ("BM", "BN", "BK", "ACC")}}


def _compile(kernel: triton.runtime.JITFunction) -> triton.compiler.CompiledKernel:
    # As the JIT specializes the probe's launch: unit strides become constants, the rest and the
    # pointers 16-divisible.
    names = list(_SIGNATURE)
    constants = {"BM": 128, "BN": 128, "BK": 64, "ACC": tl.float32, "sak": 1, "sbn": 1, "scn": 1}
    divisible = [names.index(n) for n in ("a", "b", "c", "M", "N", "K", "sam", "sbk", "scm")]
    attrs = {(i,): [["tt.divisibility", 16]] for i in divisible}
    source = ASTSource(kernel, _SIGNATURE, constants, attrs)
    return triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4, "num_stages": 3})


@pytest.mark.parametrize("kernel, tma, scratch", [
    (probe.matmul_pointers, False, False),
    (probe.matmul_descriptors, True, True),
])
def test_the_two_forms_differ_in_their_copies_and_scratch_only(kernel, tma: bool, scratch: bool) -> None:
    compiled = _compile(kernel)
    ptx = compiled.asm["ptx"]
    assert ("cp.async.bulk.tensor" in ptx) is tma
    assert ("cp.async.cg" in ptx) is not tma
    assert "wgmma.mma_async" in ptx  # both reach Hopper's asynchronous warp-group dot
    assert (compiled.metadata.global_scratch_size > 0) is scratch
