"""Benchmark spec of @@snake@@ (``triton-ext bench @@snake@@``; ``--cpu`` without a GPU;
``--check`` on a GPU checks outputs only and writes ``results/check-<gpu>.json``).

The baseline is the kernel as written; the pass variant is the same kernel compiled with the pass
enabled. Every variant is checked against a float64 reference before it is timed.
"""

from __future__ import annotations

from typing import Any, Mapping

from triton_ext.bench import BenchSpec, Case, Metric, Target, Variant, import_file

kernels = import_file(__file__, "kernels.py")
BLOCK = 128


def _make_inputs(case: Case, device: Any, generator: Any) -> dict[str, Any]:
    import torch

    x = torch.randn(case.params["n"], device=device, dtype=torch.float32, generator=generator)
    return {"x": x, "out": torch.empty(BLOCK, device=device, dtype=torch.float32)}


def _launch(kernel: Any, t: Mapping[str, Any], case: Case) -> Any:
    return kernel[(1,)](t["x"], t["out"], t["x"].numel(), BLOCK=BLOCK)


def _reference(t: Mapping[str, Any], case: Case) -> Any:
    import torch

    x = t["x"].double()
    pad = (-x.numel()) % BLOCK
    return torch.nn.functional.pad(x, (0, pad)).view(-1, BLOCK).sum(dim=0)


def _ir_check(variant: Variant, off: str, on: str) -> str | None:
    return None if "triton_ext.@@snake@@.loops" in on else "the pass did not tag the kernel"


SPEC = BenchSpec(
    name="@@snake@@",
    passes=("@@snake@@",),
    title="@@snake@@: row sum (scaffold; replace with the kernels your pass is for)",
    variants=(
        Variant("row_sum", kernels.row_sum_kernel, "baseline"),
        Variant("row_sum+@@snake@@", kernels.row_sum_kernel, "pass"),
    ),
    shapes=({"n": 4096}, {"n": 1 << 20}),
    dtypes=("fp32",),
    signature=lambda dtype: dict(kernels.SIGNATURE),
    constexprs=lambda case: {"BLOCK": BLOCK},
    compile_options=lambda case: {},
    make_inputs=_make_inputs,
    outputs=("out",),
    launch=_launch,
    reference=_reference,
    checked=lambda t, case: t["out"],
    tolerance={"fp32": 1e-3},
    metric=Metric("GB/s", lambda case: 4.0 * case.params["n"], "4 * n bytes / time"),
    x_axis="n",
    ir_check=_ir_check,
    targets=(Target("never slower than the kernel as written beyond the run-to-run spread",
                    "row_sum+@@snake@@", "row_sum", 1.0, allow_spread=True),),
)
