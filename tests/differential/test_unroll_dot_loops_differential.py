"""Differential test of unroll_dot_loops (the loop versioning) followed by Triton's own loop_unroll.

The pass only writes ``tt.loop_unroll_factor`` on a guarded copy of a dot loop; the unrolling is
Triton's ``loop_unroll``, the last pass of ``make_ttir``. So both sides here run the registry's
follow-ups and then ``loop_unroll``, as the JIT does, and the dot loop of
test_pipeline_dots_differential.py (``for iv in range(lb, ub, step)`` accumulating ``q @ k[iv]``,
16x16 f32 tiles, i32 and i64 bounds, a constant and a run-time step) is interpreted with and
without the pass over boundary-weighted bounds: near 0, the signed limits and the guard's own
limit, empty and reversed ranges, zero and negative steps. Results and final memory must not
change (trip counts do, by design: the main loop runs half as many iterations); every iteration
loads a different tile, so a missing or extra iteration changes the stored sum.

The guard is checked directly too (a flag stored at the top of the unrolled branch): it admits
exactly ``0 < step <= MAX / F`` and ``0 <= lb <= ub <= MAX - F * step``, and on those lanes nothing
Triton's unroller computes wraps. And it is needed: Triton's unroller applied to the loop without
it runs an iteration the original never runs on a reversed range.
"""

from __future__ import annotations

import re

import pytest

import numpy  # noqa: F401  (a test dependency: pip install -e .[test]; a missing one fails)

import numpy as np  # noqa: E402

from tests.differential.harness import columns, compare, mismatched_lanes  # noqa: E402
from tests.differential.host_passes import before_after  # noqa: E402
from tests.differential.interp import Machine  # noqa: E402
from tests.differential.test_pipeline_dots_differential import CONFIGS, kernel, memory  # noqa: E402
from tests.differential.test_pipeline_streams_differential import cases, check_guard_lanes  # noqa: E402

Q, K, OUT = 1 << 40, 2 << 40, 3 << 40
PASS = "unroll_dot_loops"
UNROLL = ("loop_unroll",)


def guard(lb: int, ub: int, step: int, width: int, factor: int) -> bool:
    """The guard as documented: ``0 < step <= MAX / F`` and ``0 <= lb <= ub <= MAX - F * step``."""
    top = (1 << (width - 1)) - 1
    return 0 < step <= top // factor and 0 <= lb <= ub <= top - factor * step


def unroller_exact(lb: int, ub: int, step: int, width: int, factor: int) -> bool:
    """Every value Triton's unroller computes is exact in the type: ``T = (ub - lb + step - 1)
    /u step`` (its operand non-negative, so the unsigned division is the true trip count), the
    main loop's bound ``lb + (T - T mod F) * step``, the scaled step and the last induction value."""
    lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
    t = ub - lb + step - 1
    if step <= 0 or t < 0:
        return False
    trips = t // step
    even = trips - trips % factor
    return all(lo <= v <= hi for v in (ub - lb, t, even * step, lb + even * step, factor * step, lb + trips * step))


@pytest.mark.parametrize("factor", [2, 4])
@pytest.mark.parametrize("width,step", CONFIGS, ids=[f"i{w}-step{s or 'arg'}" for w, s in CONFIGS])
def test_unrolling_changes_no_result(width: int, step: int | None, factor: int) -> None:
    args = cases(f"unroll-{width}-{step}-{factor}", width, step, 400)
    if step is None:
        args.append((0, -100, 64))  # the reversed range Triton's unroller gets wrong (below)
    result = compare(kernel(width, step), PASS, args, options=(("factor", str(factor)),), extra_args=(Q, K, OUT),
                     memory=memory, max_trips=256, then=UNROLL, trips=False)
    after = result.programs.after_text
    # The pass fired and Triton unrolled the guarded copy: the main loop holds F dots, the
    # remainder loop is not pipelined, the original loop is marked decided.
    assert after.count("tt.dot") == factor + 2, after
    assert "tt.num_stages = 1" in after and "tt.loop_unroll_factor = 1" in after
    if step is not None and not guard(0, 0, step, width, factor):
        pytest.fail(f"step {step} is outside the guard: the test would not exercise the unrolled copy")
    assert result.count == 0, result.report(f"i{width}, step {step}, factor {factor}")


@pytest.mark.parametrize("factor", [2, 4])
@pytest.mark.parametrize("width,step", CONFIGS, ids=[f"i{w}-step{s or 'arg'}" for w, s in CONFIGS])
def test_the_guard_admits_exactly_the_bounds_the_unroller_computes_exactly(width: int, step: int | None,
                                                                          factor: int) -> None:
    after = before_after(kernel(width, step), PASS, (("factor", str(factor)),)).after_text
    assert f"tt.loop_unroll_factor = {factor}" in after
    check_guard_lanes(after, "f32", OUT, (Q, K, OUT), memory, f"unroll-guard-{width}-{step}-{factor}", width, step,
                      factor, 2000, admits=guard, sound=unroller_exact)


def test_the_guard_is_needed_triton_unrolls_a_reversed_range_wrongly() -> None:
    """The loop marked as ``tl.range(..., loop_unroll_factor=2)`` marks it, unrolled by Triton
    alone: for ``range(0, -100, 64)`` the original runs no iteration; the unrolled code computes
    a trip count of ``(-100 + 63) /u 64``, about 2^26, and its remainder loop runs one iteration at
    ``iv = -128``, which changes the stored sum."""
    original = kernel(32, None)
    marked = re.sub(r"(\n  \}\n  %os = )", r"\n  } {tt.loop_unroll_factor = 2 : i32}\n  %os = ", original, count=1)
    assert marked != original
    plain = before_after(original, PASS, then=UNROLL).before
    unrolled = before_after(marked, PASS, then=UNROLL)
    assert unrolled.before_text.count("tt.dot") == 3  # Triton unrolled it (no guard: the pass declined)
    args = [(0, -100, 64), (0, 100, 64), (5, 2, 2)]
    n = len(args)
    cols = columns(args) + [np.full(n, a, dtype=object) for a in (Q, K, OUT)]
    machine = Machine(n, max_trips=256, memory=memory)
    diffs = mismatched_lanes(machine.run(plain["k"], cols), machine.run(unrolled.before["k"], cols), n)
    assert diffs["memory"].tolist() == [True, False, True]
