"""Benchmark spec of nvidia_occupancy_hint: row softmax (``triton-ext bench nvidia_occupancy_hint``).

The row is held in registers (BLOCK = columns), so the kernel is memory bound and register
heavy: the case where a minimum CTAs-per-SM hint can raise the number of resident warps. The
unhinted kernel is the baseline; the pass runs with ``min-ctas-per-sm`` 2 and 4. The IR check is
on the LLVM IR: the kernel must carry ``"nvvm.minctasm"``.
"""

from __future__ import annotations

from typing import Any, Mapping

import triton

from triton_ext.bench import BenchSpec, Case, Metric, Target, Variant, import_file

softmax_kernel = import_file(__file__, "kernels.py").softmax_kernel

ROWS = 16384
COLS = (2048, 4096, 8192, 16384)


def _signature(dtype: str) -> dict[str, str]:
    return {"x_ptr": "*fp32", "y_ptr": "*fp32", "n_cols": "i32", "stride": "i32"}


def _constexprs(case: Case) -> dict[str, Any]:
    return {"BLOCK": triton.next_power_of_2(case.params["cols"])}


def _compile_options(case: Case) -> dict[str, Any]:
    return {"num_warps": case.params["warps"]}


def _make_inputs(case: Case, device: Any, generator: Any) -> dict[str, Any]:
    import torch

    x = torch.randn(case.params["rows"], case.params["cols"], device=device, dtype=torch.float32,
                    generator=generator)
    return {"x": x, "y": torch.empty_like(x)}


def _launch(kernel: Any, t: Mapping[str, Any], case: Case) -> Any:
    x = t["x"]
    return kernel[(x.shape[0],)](x, t["y"], x.shape[1], x.stride(0), **_constexprs(case),
                                 **_compile_options(case))


def _reference(t: Mapping[str, Any], case: Case) -> Any:
    import torch

    return torch.softmax(t["x"].double(), dim=1)


def _checked(t: Mapping[str, Any], case: Case) -> Any:
    return t["y"]


def _ir_check(variant: Variant, off: str, on: str) -> str | None:
    if "nvvm.minctasm" in off:
        return "the unhinted kernel already carries nvvm.minctasm"
    if "nvvm.minctasm" not in on:
        return "the kernel carries no nvvm.minctasm (the pass declined it)"
    return None


def _bytes(case: Case) -> float:
    return 2.0 * case.params["rows"] * case.params["cols"] * 4  # one read, one write


SPEC = BenchSpec(
    name="nvidia_occupancy_hint",
    passes=("nvidia_occupancy_hint",),
    title="nvidia_occupancy_hint: row softmax, row in registers",
    variants=(
        Variant("softmax", softmax_kernel, "baseline"),
        Variant("softmax+minctas2", softmax_kernel, "pass", options={"min-ctas-per-sm": 2}),
        Variant("softmax+minctas4", softmax_kernel, "pass", options={"min-ctas-per-sm": 4}),
    ),
    shapes=tuple({"rows": ROWS, "cols": c, "warps": w} for w in (4, 8) for c in COLS),
    quick_shapes=({"rows": ROWS, "cols": 8192, "warps": 4},),
    bit_identical=True,
    dtypes=("fp32",),
    signature=_signature,
    constexprs=_constexprs,
    compile_options=_compile_options,
    make_inputs=_make_inputs,
    outputs=("y",),
    launch=_launch,
    reference=_reference,
    checked=_checked,
    tolerance={"fp32": 1e-5},
    metric=Metric("GB/s", _bytes, "2 * rows * cols * 4 bytes / time"),
    x_axis="cols",
    ir_stage="llir",
    ir_check=_ir_check,
    targets=(
        Target("min-ctas-per-sm=2: never slower than unhinted beyond the run-to-run spread",
               "softmax+minctas2", "softmax", 1.0, allow_spread=True),
    ),
    notes="rows=16384, fp32, BLOCK = next power of 2 of cols, num_warps 4 and 8.",
)
