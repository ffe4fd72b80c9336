"""Kernels written as Inductor generates them, and Inductor's own ``CachingAutotuner`` around them,
compiled for cuda:90 without a GPU: for the CPU tests and benchmark of the transparent mode's
Inductor path (tests/realworld/test_inductor_variants.py, benchmarks/auto_inductor_compile_cpu.py).

Inductor activates Triton's CUDA driver before it compiles; :func:`without_gpu` skips that (the
compile names its target, from the device properties below, and needs no GPU).
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

__all__ = ["triton_poi_fused_add_mul_0", "triton_red_fused_sum_0", "autotuner", "without_gpu"]


@triton.jit
def triton_poi_fused_add_mul_0(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    tmp0 = tl.load(in_ptr0 + (xindex), xmask)
    tmp1 = tl.load(in_ptr1 + (xindex), xmask)
    tl.store(out_ptr0 + (xindex), tmp0 * 2.0 + tmp1, xmask)


@triton.jit
def triton_red_fused_sum_0(in_ptr0, out_ptr0, xnumel, rnumel, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    rbase = tl.arange(0, RBLOCK)[None, :]
    acc = tl.full([XBLOCK, RBLOCK], 0, tl.float32)
    for roffset in range(0, rnumel, RBLOCK):
        rindex = roffset + rbase
        rmask = rindex < rnumel
        tmp0 = tl.load(in_ptr0 + (rindex + rnumel * xindex), rmask & xmask, other=0.0)
        acc = acc + tmp0
    tl.store(out_ptr0 + (xindex), tl.sum(acc, 1)[:, None], xmask)


_SIGNATURES = {
    "pointwise": (triton_poi_fused_add_mul_0, {"in_ptr0": "*fp32", "in_ptr1": "*fp32", "out_ptr0": "*fp32",
                                               "xnumel": "i32", "XBLOCK": "constexpr"}, {"x": 4096}),
    "reduction": (triton_red_fused_sum_0, {"in_ptr0": "*fp32", "out_ptr0": "*fp32", "xnumel": "i32",
                                           "rnumel": "i32", "XBLOCK": "constexpr", "RBLOCK": "constexpr"},
                  {"x": 4096, "r0_": 4096}),
}


def without_gpu() -> None:
    """Replace Inductor's ``set_driver_to_gpu`` by a no-op for the rest of the process (a test
    patches it for its own duration instead)."""
    from torch._inductor.runtime import triton_helpers

    triton_helpers.set_driver_to_gpu = lambda: None


def autotuner(kind: str, *configs: Any) -> Any:
    """Inductor's ``CachingAutotuner`` for the ``kind`` kernel (``pointwise`` or ``reduction``) with
    ``configs``, for an sm_90 device (Inductor's kernels are compiled for the device it names)."""
    from torch._inductor.runtime import triton_heuristics as th
    from torch._inductor.runtime.hints import DeviceProperties, HeuristicType

    fn, signature, hints = _SIGNATURES[kind]
    props = DeviceProperties(type="cuda", index=0, multi_processor_count=132, cc=90, major=9,
                             regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048,
                             max_threads_per_block=1024, warp_size=32)
    pointers_and_sizes = sum(1 for t in signature.values() if t != "constexpr")
    meta = {"signature": signature, "device": props, "constants": {},
            "configs": [{(i,): [["tt.divisibility", 16]] for i in range(pointers_and_sizes)}]}
    heuristic = HeuristicType.POINTWISE if kind == "pointwise" else HeuristicType.REDUCTION
    return th.CachingAutotuner(fn, meta, list(configs), None, [], False, heuristic, size_hints=hints,
                               inductor_meta={"kernel_name": fn.__name__})
