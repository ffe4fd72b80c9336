"""Differential test of nvidia_pipeline_dots (the loop versioning of a dot loop).

A loop ``for iv in range(lb, ub, step)`` that accumulates ``q @ k[iv]`` (16x16 f32 tiles, i32 and
i64 bounds, a constant and a run-time step), in a kernel compiled with ``num_stages=1``
(``kernel-num-stages=1``), is interpreted with and without the real pass over boundary-weighted
bounds: near 0, the signed limits and the guard's own limit, empty and reversed ranges, zero and
negative steps. The results, the final memory and the trip counts must not change.

The guard is the one nvidia_pipeline_streams uses (PipelinedLoop.cpp); its exact admitted bounds
are checked in test_pipeline_streams_differential.py.
"""

from __future__ import annotations

import pytest

import numpy  # noqa: F401  (a test dependency: pip install -e .[test]; a missing one fails)

import numpy as np  # noqa: E402

from tests.differential.harness import compare  # noqa: E402
from tests.differential.test_pipeline_streams_differential import cases, guard  # noqa: E402

Q, K, OUT = 1 << 40, 2 << 40, 3 << 40
PASS = "nvidia_pipeline_dots"
OPTIONS = (("kernel-num-stages", "1"),)


def kernel(width: int, step: int | None) -> str:
    """``step`` None: a run-time step argument."""
    t = f"i{width}"
    step_def = "" if step is None else f"  %st = arith.constant {step} : {t}\n"
    step_arg = f", %st: {t}" if step is None else ""
    return f"""
tt.func public @k(%lb: {t}, %ub: {t}{step_arg}, %q: !tt.ptr<f32>, %k: !tt.ptr<f32>, %out: !tt.ptr<f32>) {{
{step_def}  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %c16 = arith.constant dense<16> : tensor<16x1xi32>
  %rows = tt.make_range {{end = 16 : i32, start = 0 : i32}} : tensor<16xi32>
  %r1 = tt.expand_dims %rows {{axis = 1 : i32}} : tensor<16xi32> -> tensor<16x1xi32>
  %c1 = tt.expand_dims %rows {{axis = 0 : i32}} : tensor<16xi32> -> tensor<1x16xi32>
  %rs = arith.muli %r1, %c16 : tensor<16x1xi32>
  %rb = tt.broadcast %rs : tensor<16x1xi32> -> tensor<16x16xi32>
  %cb = tt.broadcast %c1 : tensor<1x16xi32> -> tensor<16x16xi32>
  %tile = arith.addi %rb, %cb : tensor<16x16xi32>
  %qs = tt.splat %q : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
  %qp = tt.addptr %qs, %tile : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
  %qv = tt.load %qp : tensor<16x16x!tt.ptr<f32>>
  %ks = tt.splat %k : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
  %kb = tt.addptr %ks, %tile : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
  %r = scf.for %iv = %lb to %ub step %st iter_args(%acc = %zero) -> (tensor<16x16xf32>) : {t} {{
    %s = tt.splat %iv : {t} -> tensor<16x16x{t}>
    %p = tt.addptr %kb, %s : tensor<16x16x!tt.ptr<f32>>, tensor<16x16x{t}>
    %kv = tt.load %p : tensor<16x16x!tt.ptr<f32>>
    %d = tt.dot %qv, %kv, %acc, inputPrecision = ieee : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
    scf.yield %d : tensor<16x16xf32>
  }}
  %os = tt.splat %out : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
  %op = tt.addptr %os, %tile : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
  tt.store %op, %r : tensor<16x16x!tt.ptr<f32>>
  tt.return
}}
"""


def memory(addr: np.ndarray, ty) -> np.ndarray:
    h = (addr.astype(object) * 2654435761) % (1 << 16)
    return (h.astype(np.int64) - (1 << 15)).astype(np.float32) / np.float32(256)


CONFIGS = [(32, 16), (32, 1), (32, None), (64, 8), (64, None)]


@pytest.mark.parametrize("width,step", CONFIGS, ids=[f"i{w}-step{s or 'arg'}" for w, s in CONFIGS])
def test_versioning_changes_no_result(width: int, step: int | None) -> None:
    args = cases(f"dots-{width}-{step}", width, step, 600)
    result = compare(kernel(width, step), PASS, args, options=OPTIONS, extra_args=(Q, K, OUT), memory=memory,
                     max_trips=256)
    assert "tt.num_stages = 2" in result.programs.after_text  # the pass fired
    assert "scf.if" in result.programs.after_text and "scf.if" not in result.programs.before_text
    assert result.count == 0, result.report(f"i{width}, step {step}")
    # Both copies ran iterations: lanes the guard sends to the pipelined copy and lanes it keeps
    # on the original loop (near the limits), as the guard is documented.
    steps = [step if step is not None else c[2] for c in args]
    pipelined = np.array([guard(c[0], c[1], st, width, 2) for c, st in zip(args, steps)])
    ran = result.before.trips > 0
    assert (ran & pipelined).any() and (ran & ~pipelined).any()
