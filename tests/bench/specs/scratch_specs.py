"""Builder of the scratch benchmark specs used by tests/bench (CPU mode only)."""

from __future__ import annotations

from typing import Any

from triton_ext.bench import BenchSpec, Metric, Variant


def _gpu_only(*_: Any) -> Any:
    raise NotImplementedError("this scratch spec is compiled on the CPU only")


def make_spec(name: str, kernel: Any, ir_check: Any = None) -> BenchSpec:
    return BenchSpec(
        name=name,
        passes=("loop_split",),
        title=f"{name}: scratch spec for tests",
        variants=(Variant("plain", kernel, "baseline"), Variant("split", kernel, "pass")),
        shapes=({"n": 64},),
        dtypes=("fp32",),
        signature=lambda dtype: {"X": f"*{dtype}", "Y": "*fp32", "n": "i32", "BLOCK": "constexpr"},
        constexprs=lambda case: {"BLOCK": 128},
        compile_options=lambda case: {"num_warps": 4},
        make_inputs=_gpu_only,
        outputs=("y",),
        launch=_gpu_only,
        reference=_gpu_only,
        checked=_gpu_only,
        tolerance={"fp32": 1e-5},
        metric=Metric("GB/s", lambda case: 4.0 * case.params["n"] * 128, "4 * n * BLOCK bytes / time"),
        x_axis="n",
        ir_check=ir_check,
    )

