"""Benchmark spec of nvidia_stream_eviction: ``out = x * table[idx]`` (``triton-ext bench
nvidia_stream_eviction``).

``x`` and ``idx`` stream (2**27 elements each, read once) while every program gathers from
``table``; the table size sweeps across the H200's 50 MB L2. Variants: the kernel as written,
the same kernel with the pass (streams marked evict_first), and the hints written by hand.
The IR check requires both streams marked and the gather untouched.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

import triton

from triton_ext.bench import BenchSpec, Case, Metric, Target, Variant, import_file

kernels = import_file(__file__, "kernels.py")
gather_scale_hinted_kernel, gather_scale_kernel = kernels.gather_scale_hinted_kernel, kernels.gather_scale_kernel

N = 1 << 27  # streamed elements: 512 MiB of x and 512 MiB of idx
BLOCK = 1024
TABLE_MB = (8, 16, 24, 32, 40, 48, 64)


def _signature(dtype: str) -> dict[str, str]:
    return {"x_ptr": "*fp32", "idx_ptr": "*i32", "table_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}


def _constexprs(case: Case) -> dict[str, Any]:
    return {"BLOCK": BLOCK}


def _compile_options(case: Case) -> dict[str, Any]:
    return {"num_warps": 4}


def _make_inputs(case: Case, device: Any, generator: Any) -> dict[str, Any]:
    import torch

    rows = case.params["table_mb"] * (1 << 20) // 4
    n = case.params["n"]
    return {
        "x": torch.randn(n, device=device, generator=generator),
        "idx": torch.randint(0, rows, (n,), device=device, generator=generator, dtype=torch.int32),
        "table": torch.randn(rows, device=device, generator=generator),
        "out": torch.empty(n, device=device),
    }


def _launch(kernel: Any, t: Mapping[str, Any], case: Case) -> Any:
    n = t["x"].numel()
    return kernel[(triton.cdiv(n, BLOCK),)](t["x"], t["idx"], t["table"], t["out"], n, BLOCK=BLOCK,
                                             **_compile_options(case))


def _reference(t: Mapping[str, Any], case: Case) -> Any:
    return t["x"].double() * t["table"].double()[t["idx"].long()]


def _checked(t: Mapping[str, Any], case: Case) -> Any:
    return t["out"]


def _ir_check(variant: Variant, off: str, on: str) -> str | None:
    loads = [line for line in on.splitlines() if re.search(r"= tt\.load ", line)]
    if len(loads) != 3:
        return f"expected 3 loads, found {len(loads)}"
    marked = ["evict_first" in line for line in loads]
    if marked != [True, True, False]:
        return f"expected x and idx marked evict_first and the gather not, found {marked}"
    return None


SPEC = BenchSpec(
    name="nvidia_stream_eviction",
    passes=("nvidia_stream_eviction",),
    title="nvidia_stream_eviction: out = x * table[idx], 2^27 streamed elements, table across L2",
    variants=(
        Variant("gather", gather_scale_kernel, "baseline"),
        Variant("gather+stream_eviction", gather_scale_kernel, "pass"),
        Variant("hand_hinted", gather_scale_hinted_kernel, "handwritten"),
    ),
    shapes=tuple({"n": N, "table_mb": mb} for mb in TABLE_MB),
    quick_shapes=({"n": N, "table_mb": 24},),
    bit_identical=True,
    dtypes=("fp32",),
    signature=_signature,
    constexprs=_constexprs,
    compile_options=_compile_options,
    make_inputs=_make_inputs,
    outputs=("out",),
    launch=_launch,
    reference=_reference,
    checked=_checked,
    tolerance={"fp32": 1e-6},
    metric=Metric("ms"),
    x_axis="table_mb",
    ir_check=_ir_check,
    targets=(
        # First run (commit ca76055): 1.008x at 16 MB, 1.049-1.086x at 24-48 MB, 1.030x at 64 MB.
        # A 16 MB table keeps enough of L2 beside the streams; past 50 MB it no longer fits.
        Target(">= 5% faster with a 24-40 MB table", "gather+stream_eviction", "gather", 1.05,
               where=lambda case: 24 <= case.params["table_mb"] <= 40),
        Target("never slower beyond the run-to-run spread", "gather+stream_eviction", "gather", 1.0,
               allow_spread=True),
        # Same PTX as the hand-written kernel: any difference is timing noise (0.05% seen).
        Target("within 1% of the hand-written hints", "gather+stream_eviction", "hand_hinted", 0.99),
    ),
    notes=f"BLOCK={BLOCK}, 4 warps, fp32, int32 indices uniform over the table; H200 L2 is 50 MB.",
)
