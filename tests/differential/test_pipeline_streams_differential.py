"""Differential tests of nvidia_pipeline_streams (the loop versioning and its bounds guard).

A streaming loop ``for iv in range(lb, ub, step)`` that sums ``x[iv + 0..3]`` (i32 and i64, a
constant and a run-time step) is interpreted with and without the real pass over boundary-weighted
bounds: near 0, the signed limits and the guard's own limit, empty and reversed ranges, zero and
negative steps. The results, the final memory and the trip counts must not change.

The attribute the pass writes only matters to Triton's pipeliner, which the interpreter does not
model, so the guard is also checked directly: a store of a flag is inserted at the top of the
pipelined branch, and the lanes that take it must be exactly those where ``lb + k * step`` and
``ub +- k * step`` stay in the type for every ``k <= num-stages`` (what the pipelined loop
evaluates), with a positive step.
"""

from __future__ import annotations

import random
import re

import pytest

import numpy  # noqa: F401  (a test dependency: pip install -e .[test]; a missing one fails)

import numpy as np  # noqa: E402

from tests.differential.harness import columns, compare  # noqa: E402
from tests.differential.host_passes import before_after  # noqa: E402
from tests.differential.interp import Machine  # noqa: E402
from tests.differential.loop_kernels import to_signed  # noqa: E402

X, OUT, FLAG = 1 << 40, 2 << 40, 3 << 40
PASS = "nvidia_pipeline_streams"


def kernel(width: int, step: int | None) -> str:
    """``step`` None: a run-time step argument."""
    t = f"i{width}"
    step_def = "" if step is None else f"  %st = arith.constant {step} : {t}\n"
    step_arg = f", %st: {t}" if step is None else ""
    return f"""
tt.func public @k(%lb: {t}, %ub: {t}{step_arg}, %x: !tt.ptr<i32>, %out: !tt.ptr<i32>, %flag: !tt.ptr<i32>) {{
{step_def}  %zero = arith.constant dense<0> : tensor<4xi32>
  %range = tt.make_range {{end = 4 : i32, start = 0 : i32}} : tensor<4xi32>
  %xs = tt.splat %x : !tt.ptr<i32> -> tensor<4x!tt.ptr<i32>>
  %base = tt.addptr %xs, %range : tensor<4x!tt.ptr<i32>>, tensor<4xi32>
  %r = scf.for %iv = %lb to %ub step %st iter_args(%acc = %zero) -> (tensor<4xi32>) : {t} {{
    %s = tt.splat %iv : {t} -> tensor<4x{t}>
    %p = tt.addptr %base, %s : tensor<4x!tt.ptr<i32>>, tensor<4x{t}>
    %v = tt.load %p : tensor<4x!tt.ptr<i32>>
    %a = arith.addi %acc, %v : tensor<4xi32>
    scf.yield %a : tensor<4xi32>
  }}
  %os = tt.splat %out : !tt.ptr<i32> -> tensor<4x!tt.ptr<i32>>
  %op = tt.addptr %os, %range : tensor<4x!tt.ptr<i32>>, tensor<4xi32>
  tt.store %op, %r : tensor<4x!tt.ptr<i32>>
  tt.return
}}
"""


def memory(addr: np.ndarray, ty) -> np.ndarray:
    h = (addr.astype(object) * 2654435761) % (1 << 31)
    return (h - (1 << 30)).astype(np.int64)


def _bounds(rng: random.Random, width: int, step: int) -> tuple[int, int]:
    top = (1 << (width - 1)) - 1
    points = [0, 1, -1, top, -top - 1, top - 3 * step, top - 4 * step, top - 5 * step, 1 << 20]
    lb = to_signed(rng.choice(points) + rng.randint(-2 * step, 2 * step), width)
    # At most a few iterations (the interpreter runs each), forward, empty or reversed.
    ub = to_signed(lb + rng.randint(-3 * step, 6 * step), width) if rng.random() < 0.85 else \
        to_signed(rng.choice(points) + rng.randint(-step, step), width)
    return lb, ub


def cases(seed: str, width: int, step: int | None, count: int) -> list[tuple[int, ...]]:
    rng = random.Random(seed)
    top = (1 << (width - 1)) - 1
    out = []
    for _ in range(count):
        st = step if step is not None else rng.choice([1, 7, 1024, top // 3, top // 3 + 1, top, 0, -1,
                                                       -1024])
        lb, ub = _bounds(rng, width, max(abs(st), 1))
        if ub > lb and st > 0 and -(-(ub - lb) // st) > 64:
            ub = lb  # a loop the interpreter would have to run too long: empty instead
        out.append((lb, ub) if step is not None else (lb, ub, st))
    return out


def guard(lb: int, ub: int, step: int, width: int, stages: int) -> bool:
    """The guard as documented: ``0 < step <= MAX / N`` and both bounds in ``[0, MAX - N * step]``."""
    top = (1 << (width - 1)) - 1
    return 0 < step <= top // stages and all(0 <= b <= top - stages * step for b in (lb, ub))


def nothing_wraps(lb: int, ub: int, step: int, width: int, stages: int) -> bool:
    """No value the pipelined loop evaluates leaves the type: ``lb + k * step``, ``ub +- k * step``
    for ``k <= N``, and ``ub - lb``."""
    lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
    values = [v for k in range(stages + 1) for v in (lb + k * step, ub + k * step, ub - k * step)]
    return all(lo <= v <= hi for v in values + [ub - lb])


CONFIGS = [(32, 1024), (32, 1), (32, None), (64, 8), (64, None)]


@pytest.mark.parametrize("width,step", CONFIGS, ids=[f"i{w}-step{s or 'arg'}" for w, s in CONFIGS])
def test_versioning_changes_no_result(width: int, step: int | None) -> None:
    args = cases(f"values-{width}-{step}", width, step, 3000)
    result = compare(kernel(width, step), PASS, args, extra_args=(X, OUT, FLAG), memory=memory,
                     max_trips=256)
    assert "tt.num_stages = 3" in result.programs.after_text  # the pass fired
    assert result.count == 0, result.report(f"i{width}, step {step}")


def check_guard_lanes(after: str, flag_type: str, flag_addr: int, pointers: tuple[int, ...], memory,
                      seed: str, width: int, step: int | None, stages: int, count: int,
                      admits=guard, sound=nothing_wraps) -> None:
    """Runs ``after`` (a pass's output, one versioned loop) with a flag stored first thing in the
    guarded branch, through the pointer argument whose address is ``flag_addr`` (of element type
    ``flag_type``), and checks that the guard sends exactly the lanes ``admits`` admits there and
    that ``sound`` holds on them (``pointers``: the kernel's pointer arguments, in order; both
    predicates take ``lb, ub, step, width, stages``, ``stages`` being the pass's depth or factor).
    The defaults are the pipelining passes' guard and what their pipelined loop evaluates."""
    from tests.differential.mlir_text import parse_module

    lines = after.splitlines()
    at = next(i for i, line in enumerate(lines) if re.search(r"= scf\.if ", line))
    header = lines[next(i for i, line in enumerate(lines) if "tt.func public @k" in line)]
    names = re.findall(r"%(\w+): !tt\.ptr<\w+>", header)
    flag_arg = names[pointers.index(flag_addr)]
    one = "1.0" if flag_type.startswith("f") else "1"
    lines[at + 1:at + 1] = [f"      %flag_one = arith.constant {one} : {flag_type}",
                            f"      tt.store %{flag_arg}, %flag_one : !tt.ptr<{flag_type}>"]
    func = parse_module("\n".join(lines))["k"]
    args = cases(seed, width, step, count)
    n = len(args)
    machine = Machine(n, max_trips=256, memory=memory)
    result = machine.run(func, columns(args) + [np.full(n, a, dtype=object) for a in pointers])
    taken = np.zeros(n, bool)
    for event in result.stores:
        if event.addr.ndim == 1 and (event.addr == flag_addr).all():
            taken |= event.mask
    steps = [step if step is not None else c[2] for c in args]
    expected = np.array([admits(c[0], c[1], st, width, stages) for c, st in zip(args, steps)])
    assert expected.any() and (~expected).any()  # both sides of the guard are exercised
    wrong = np.nonzero(taken != expected)[0][:5].tolist()
    assert not wrong, [(args[i], "pipelined" if taken[i] else "original") for i in wrong]
    # And the guard is sound: where it sends the loop to the pipelined copy, nothing wraps.
    unsound = [c for c, st, t in zip(args, steps, taken) if t and not sound(c[0], c[1], st, width, stages)]
    assert not unsound, unsound[:5]


@pytest.mark.parametrize("stages", [3, 4])
@pytest.mark.parametrize("width,step", CONFIGS, ids=[f"i{w}-step{s or 'arg'}" for w, s in CONFIGS])
def test_the_guard_holds_exactly_where_nothing_wraps(width: int, step: int | None, stages: int) -> None:
    options = () if stages == 3 else (("num-stages", str(stages)),)
    after = before_after(kernel(width, step), PASS, options).after_text
    assert f"tt.num_stages = {stages}" in after
    check_guard_lanes(after, "i32", FLAG, (X, OUT, FLAG), memory, f"guard-{width}-{step}-{stages}", width, step,
                      stages, 4000)
