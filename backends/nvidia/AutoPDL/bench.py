"""Benchmark spec of nvidia_auto_pdl: a chain of dependent kernels in a CUDA graph.

``triton-ext bench nvidia_auto_pdl``. One call of ``launch`` replays a CUDA graph that copies the
input into a ping-pong buffer and runs ``CHAIN`` dependent launches of a small stencil step (each
CTA reads data written by other CTAs of the previous kernel). The graph is captured on the first
call for each enabled pass set and buffer set, inside the variant's ``triton_ext.enabled`` scope,
so the pass variant's kernels carry the wait and are launched (and captured) with PDL;
the loader copies the pass's launch_pdl mark into the compile metadata. The metric is the time of one chain; divide by
``CHAIN`` for the time per kernel boundary. ``triton-ext bench --check nvidia_auto_pdl`` checks the
outputs only: every variant against the float64 chain, the pass variants bit for bit with the baseline.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

import triton

from triton_ext.bench import BenchSpec, Case, Metric, Target, Variant, import_file

step_kernel = import_file(__file__, "kernels.py").step_kernel

CHAIN = 32  # even: the result ends in buffer "a"
BLOCK = 1024






def _signature(dtype: str) -> dict[str, str]:
    return {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "shift": "i32"}


def _constexprs(case: Case) -> dict[str, Any]:
    return {"BLOCK": BLOCK}


def _compile_options(case: Case) -> dict[str, Any]:
    return {"num_warps": 4}


def _shift(n: int) -> int:
    return BLOCK + 17 if n > BLOCK else 17


def _make_inputs(case: Case, device: Any, generator: Any) -> dict[str, Any]:
    import torch

    x = torch.randn(case.params["n"], device=device, dtype=torch.float32, generator=generator)
    return {"x": x, "a": torch.empty_like(x), "b": torch.empty_like(x)}


# (enabled pass set, buffer addresses) -> (graph, compiled kernel)
_graphs: dict[tuple[Any, ...], tuple[Any, Any]] = {}


def _launch(kernel: Any, t: Mapping[str, Any], case: Case) -> Any:
    import torch
    import triton_ext

    n = t["x"].numel()
    grid = (triton.cdiv(n, BLOCK),)
    bufs = (t["a"], t["b"])
    passes = json.dumps(triton_ext.enabled_passes(), sort_keys=True, default=str)  # names and options
    key = (passes, t["x"].data_ptr(), t["a"].data_ptr(), t["b"].data_ptr(), n)
    hit = _graphs.get(key)
    if hit is None:
        compiled = kernel[grid](t["x"], t["a"], n, _shift(n), BLOCK=BLOCK, **_compile_options(case))
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            with torch.cuda.graph(graph, stream=stream):
                bufs[0].copy_(t["x"])
                for i in range(CHAIN):
                    kernel[grid](bufs[i % 2], bufs[(i + 1) % 2], n, _shift(n), BLOCK=BLOCK, **_compile_options(case))
        torch.cuda.current_stream().wait_stream(stream)
        hit = _graphs[key] = (graph, compiled)
    hit[0].replay()
    return hit[1]


def _reference(t: Mapping[str, Any], case: Case) -> Any:
    import torch

    v = t["x"].double()
    for _ in range(CHAIN):
        v = v * 0.5 + torch.roll(v, -_shift(v.numel())) * 0.25 + 1.0
    return v


def _checked(t: Mapping[str, Any], case: Case) -> Any:
    return t["a"]


def _ir_check(variant: Variant, off: str, on: str) -> str | None:
    if "grid_dependency_wait" in off:
        return "the baseline already waits"
    if "tt.grid_dependency_wait" not in on or "triton_ext.launch_pdl" not in on:
        return "the pass variant has no tt.grid_dependency_wait / launch_pdl mark"
    if on.index("tt.grid_dependency_wait") > on.index("tt.load"):
        return "the wait comes after a load"
    return None


SPEC = BenchSpec(
    name="nvidia_auto_pdl",
    passes=("nvidia_auto_pdl",),
    title=f"nvidia_auto_pdl: {CHAIN} dependent stencil kernels in one CUDA graph",
    variants=(
        Variant("chain", step_kernel, "baseline"),
        Variant("chain+auto_pdl", step_kernel, "pass"),
        Variant("chain+auto_pdl(after-wait)", step_kernel, "pass", options={"launch-dependents": "after-wait"}),
    ),
    shapes=tuple({"n": n} for n in (4096, 32768, 262144, 1 << 20)),
    quick_shapes=({"n": 32768},),
    bit_identical=True,
    dtypes=("fp32",),
    signature=_signature,
    constexprs=_constexprs,
    compile_options=_compile_options,
    make_inputs=_make_inputs,
    outputs=("a", "b"),
    launch=_launch,
    reference=_reference,
    checked=_checked,
    tolerance={"fp32": 1e-4},
    metric=Metric("ms"),
    x_axis="n",
    ir_check=_ir_check,
    targets=(
        Target("PDL chain >= 5% faster than plain launches, n <= 32768",
               "chain+auto_pdl", "chain", 1.05, where=lambda case: case.params["n"] <= 32768),
        Target("never slower beyond the run-to-run spread", "chain+auto_pdl", "chain", 1.0, allow_spread=True),
    ),
    notes=f"BLOCK={BLOCK}, 4 warps, chain of {CHAIN} launches plus one device copy per graph; "
          "time per kernel boundary = ms / chain length.",
)
