"""Benchmark spec of nvidia_pipeline_streams: row sums over long rows (``triton-ext bench
nvidia_pipeline_streams``).

One program per row, a loop without a dot over the row's columns. Few rows (one or two waves of
programs) leave each SM with one or two programs waiting on memory: the case the pass is for.
Many rows fill the SMs and the loop is bandwidth-bound: the pass must not cost there. Variants:
the kernel as written, the same kernel with the pass, and ``tl.range(..., num_stages=3)`` written
by hand. The IR check requires the loop versioned: a pipelined copy and the original.

``--check`` also runs both sides of the guard: a range ending at its limit (2**31 - 1 - 3 * 1024,
pipelined) and one ending past it (the original loop runs), one that starts below zero, an empty
and a reversed range, and 64-bit bounds near 2**32 (pipelined) and near 2**63 (not).
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from triton_ext.bench import BenchSpec, Case, Metric, Target, Variant, import_file

kernels = import_file(__file__, "kernels.py")
row_sum_kernel, row_sum_staged_kernel = kernels.row_sum_kernel, kernels.row_sum_staged_kernel

BLOCK = 1024
I32_MAX = (1 << 31) - 1
I64_MAX = (1 << 63) - 1
#: rows x columns; 132 rows is one program per H200 SM.
SHAPES = tuple({"rows": rows, "cols": cols, "start": 0}
               for rows, cols in ((132, 1 << 16), (132, 1 << 18), (264, 1 << 17), (4096, 1 << 14),
                                  (16384, 1 << 12)))
#: Where the guard sends the loop: start (the lower bound) and cols (end - start; negative: reversed).
#: Every range keeps the loop's own last increment in range (start + 5 * 1024 <= MAX): a loop whose
#: induction variable wraps is undefined without the pass too.
CHECK_SHAPES = (
    {"rows": 7, "cols": 5000, "start": 0},
    {"rows": 3, "cols": 5000, "start": I32_MAX - 3 * BLOCK - 5000},  # ends at the guard's limit: pipelined
    {"rows": 3, "cols": 5000, "start": I32_MAX - 5 * BLOCK},         # ends past it: original loop
    {"rows": 3, "cols": 5000, "start": -2500},                      # starts below zero: original loop
    {"rows": 3, "cols": 0, "start": 17},                            # empty range
    {"rows": 3, "cols": -3000, "start": 4000},                      # reversed range: no iteration
    {"rows": 3, "cols": 5000, "start": (1 << 32) + 3},              # 64-bit bounds: pipelined
    {"rows": 3, "cols": 5000, "start": I64_MAX - 5 * BLOCK},        # ends past the 64-bit limit: original loop
)


def _signature(dtype: str) -> dict[str, str]:
    return {"x_ptr": "*fp32", "out_ptr": "*fp32", "start": "i32", "end": "i32", "stride": "i32"}


def _constexprs(case: Case) -> dict[str, Any]:
    return {"BLOCK": BLOCK}


def _compile_options(case: Case) -> dict[str, Any]:
    return {"num_warps": 4}


def _make_inputs(case: Case, device: Any, generator: Any) -> dict[str, Any]:
    import torch

    rows, cols = case.params["rows"], max(case.params["cols"], 1)
    return {"x": torch.randn(rows, cols, device=device, generator=generator),
            "out": torch.empty(rows, device=device)}


def _launch(kernel: Any, t: Mapping[str, Any], case: Case) -> Any:
    start = case.params["start"]
    end = start + case.params["cols"]
    return kernel[(t["x"].shape[0],)](t["x"], t["out"], start, end, t["x"].stride(0), BLOCK=BLOCK,
                                      **_compile_options(case))


def _reference(t: Mapping[str, Any], case: Case) -> Any:
    x = t["x"].double()
    return x.sum(dim=1) if case.params["cols"] > 0 else x.sum(dim=1) * 0


def _checked(t: Mapping[str, Any], case: Case) -> Any:
    return t["out"]


def _ir_check(variant: Variant, off: str, on: str) -> str | None:
    staged = re.findall(r"tt\.num_stages = (\d+)", on)
    if sorted(staged) != ["1", "3"]:
        return f"expected a pipelined copy (tt.num_stages = 3) and the original (= 1), found {staged}"
    if "scf.if" not in on or "scf.if" in off:
        return "expected the loop versioned under an scf.if"
    return None


SPEC = BenchSpec(
    name="nvidia_pipeline_streams",
    passes=("nvidia_pipeline_streams",),
    title="nvidia_pipeline_streams: row sums, one program per row, a loop without a dot",
    variants=(
        Variant("row_sum", row_sum_kernel, "baseline"),
        Variant("row_sum+pipeline_streams", row_sum_kernel, "pass"),
        Variant("hand_staged", row_sum_staged_kernel, "handwritten"),
    ),
    shapes=SHAPES,
    quick_shapes=(SHAPES[1],),
    check_shapes=CHECK_SHAPES,
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
    tolerance={"fp32": 2e-3},  # fp32 sums of up to 2**18 values vs float64
    metric=Metric("ms"),
    x_axis="cols",
    ir_check=_ir_check,
    targets=(
        Target("never slower beyond the run-to-run spread", "row_sum+pipeline_streams", "row_sum", 1.0,
               allow_spread=True),
        Target("within 2% of tl.range(num_stages=3) written by hand", "row_sum+pipeline_streams",
               "hand_staged", 0.98),
    ),
    notes=f"BLOCK={BLOCK}, 4 warps, fp32; the pass's default num-stages=3; an H200 has 132 SMs.",
)
