"""Differential test of nvidia_pipeline_deeper (the loop versioning of a dot loop at depth 4).

The dot loop of test_pipeline_dots_differential.py (``for iv in range(lb, ub, step)`` accumulating
``q @ k[iv]``, 16x16 f32 tiles, i32 and i64 bounds, a constant and a run-time step), in a kernel
compiled with ``num_stages=3`` (``kernel-num-stages=3``, so the pipelined copy gets depth 4 and
the other copy keeps 3), is interpreted with and without the real pass over boundary-weighted
bounds: near 0, the signed limits and the guard's own limit (``MAX - 3 * step``, ``MAX - 4 *
step``, ``MAX - 5 * step``), empty and reversed ranges, zero and negative steps. The results, the
final memory and the trip counts must not change.

The guard is the one nvidia_pipeline_streams uses (PipelinedLoop.cpp), here at depth 4 (and 5,
``extra-stages=2``): a store of a flag inserted at the top of the pipelined branch shows that the
lanes that take it are exactly those the documented guard admits, and that nothing the pipelined
loop evaluates wraps on them.
"""

from __future__ import annotations

import pytest

import numpy  # noqa: F401  (a test dependency: pip install -e .[test]; a missing one fails)

import numpy as np  # noqa: E402

from tests.differential.harness import compare  # noqa: E402
from tests.differential.host_passes import before_after  # noqa: E402
from tests.differential.test_pipeline_dots_differential import CONFIGS, kernel, memory  # noqa: E402
from tests.differential.test_pipeline_streams_differential import cases, check_guard_lanes, guard  # noqa: E402

Q, K, OUT = 1 << 40, 2 << 40, 3 << 40
PASS = "nvidia_pipeline_deeper"
KERNEL_STAGES = 3
OPTIONS = (("kernel-num-stages", str(KERNEL_STAGES)),)


@pytest.mark.parametrize("width,step", CONFIGS, ids=[f"i{w}-step{s or 'arg'}" for w, s in CONFIGS])
def test_versioning_changes_no_result(width: int, step: int | None) -> None:
    args = cases(f"deeper-{width}-{step}", width, step, 600)
    result = compare(kernel(width, step), PASS, args, options=OPTIONS, extra_args=(Q, K, OUT), memory=memory,
                     max_trips=256)
    after = result.programs.after_text
    assert "tt.num_stages = 4" in after and "tt.num_stages = 3" in after  # the pass fired
    assert "scf.if" in after and "scf.if" not in result.programs.before_text
    assert result.count == 0, result.report(f"i{width}, step {step}")
    # Both copies ran iterations: lanes the guard sends to the pipelined copy and lanes it keeps
    # on the original loop (near the limits), as the guard is documented.
    steps = [step if step is not None else c[2] for c in args]
    pipelined = np.array([guard(c[0], c[1], st, width, 4) for c, st in zip(args, steps)])
    ran = result.before.trips > 0
    assert (ran & pipelined).any() and (ran & ~pipelined).any()


@pytest.mark.parametrize("extra", [1, 2])
@pytest.mark.parametrize("width,step", CONFIGS, ids=[f"i{w}-step{s or 'arg'}" for w, s in CONFIGS])
def test_the_guard_holds_exactly_where_nothing_wraps(width: int, step: int | None, extra: int) -> None:
    depth = KERNEL_STAGES + extra
    options = OPTIONS + ((("extra-stages", str(extra)),) if extra != 1 else ())
    after = before_after(kernel(width, step), PASS, options).after_text
    assert f"tt.num_stages = {depth}" in after and f"tt.num_stages = {KERNEL_STAGES}" in after
    # The flag goes to %out, one address per lane (the tile store has one per element).
    check_guard_lanes(after, "f32", OUT, (Q, K, OUT), memory, f"deeper-guard-{width}-{step}-{depth}", width, step,
                      depth, 2000)
