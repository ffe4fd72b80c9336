"""Run one kernel before and after a pass over many argument sets and describe the differences."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from tests.differential.host_passes import Programs, before_after
from tests.differential.interp import Machine, RunResult, mismatched_lanes


@dataclass
class Mismatch:
    args: tuple[Any, ...]
    reasons: list[str]
    expected: Any
    got: Any
    expected_trips: int
    got_trips: int

    def __str__(self) -> str:
        return (f"args={self.args} [{', '.join(self.reasons)}] expected={self.expected} "
                f"({self.expected_trips} trips) got={self.got} ({self.got_trips} trips)")


@dataclass
class Comparison:
    programs: Programs
    cases: int
    count: int  # argument sets that differ
    mismatches: list[Mismatch]  # the first 50 of them, described
    before: RunResult
    after: RunResult

    def report(self, title: str, limit: int = 5) -> str:
        lines = [f"{title}: {self.count} of {self.cases} argument sets differ "
                 f"with and without the pass"]
        lines += [f"  {m}" for m in self.mismatches[:limit]]
        lines += ["IR after the pass:", self.programs.after_text]
        return "\n".join(lines)


def columns(cases: Sequence[Sequence[int]]) -> list[np.ndarray]:
    """Argument tuples -> one object array per argument (exact Python ints, any sign)."""
    return [np.array(list(c), dtype=object) for c in zip(*cases)]


def _show(value: np.ndarray, lane: int) -> Any:
    v = value[lane]
    return v.ravel().tolist()[:8] if v.ndim else v.item()


def compare(text: str, pass_name: str, cases: Sequence[Sequence[Any]], *, func: str = "k",
            options: tuple[tuple[str, str], ...] = (), extra_args: Sequence[Any] = (),
            max_trips: int = 4096, then: tuple[str, ...] = (), trips: bool = True,
            **machine: Any) -> Comparison:
    """Interpret ``func`` before and after ``pass_name`` (and the built-in passes ``then``) on
    every argument tuple in ``cases`` (``extra_args`` are appended to each, e.g. lane-uniform
    pointers) and compare returned values, final memory, trip counts and the runaway / iv-wrap /
    undefined-behaviour flags. ``trips=False`` leaves the trip counts out, for a transformation
    that changes them by design (unrolling runs half the iterations, each doing two bodies'
    work); the kernel's stores must then show every body's work."""
    programs = before_after(text, pass_name, options, then)
    n = len(cases)
    args = columns(cases) + [np.full(n, a, dtype=object) for a in extra_args]
    m = Machine(n, max_trips=max_trips, **machine)
    before = m.run(programs.before[func], args)
    after = m.run(programs.after[func], args)
    diffs = mismatched_lanes(before, after, n)
    if not trips:
        del diffs["trips"]
    bad = np.zeros(n, bool)
    for v in diffs.values():
        bad |= v
    out = []
    for lane in np.nonzero(bad)[0][:50].tolist():
        out.append(Mismatch(
            tuple(cases[lane]), [k for k, v in diffs.items() if v[lane]],
            _show(before.returns[0], lane) if before.returns else None,
            _show(after.returns[0], lane) if after.returns else None,
            int(before.trips[lane]), int(after.trips[lane])))
    return Comparison(programs, n, int(bad.sum()), out, before, after)
