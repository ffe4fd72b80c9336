"""Random-composition fuzzer of LoopSplit's analysis (issue 26, Deliver 2).

Each kernel composes, at random, the features the analysis reads (``LoopKernel`` in
loop_kernels.py writes the TTIR): scalar or 2-D mask sides, the iv on either side, every
``arith.cmpi`` predicate, i8/i16/i32/i64 loops (``scf.for`` signed or ``unsigned``), steps 1-64,
offsets on both sides, an invariant on the iv side too, rows mapped by constant or run-time
divisors and shifts (``divsi``,
``divui``, ``shrsi``, ``shrui``) or clamped by ``minsi``/``maxsi``, a second comparison AND-ed,
a scaled iv (``iv * s``), the invariant computed inside the loop, a constant in place of the
invariant (every split point then constant), the invariant from ``tt.get_program_id`` (times a
block size), ``assume_range`` facts, and loop bounds that are
arguments, constants or expressions (lattice-rounded, ``min(ub, n)``, block masks, ``n + c``,
a constant lower bound); with max-parts 2 or 3. The real plugin pass runs in-process on the TTIR
text (host_passes.py: no Triton front end), and every kernel the pass changes is interpreted
before and after (interp.py) on boundary-weighted arguments: 0, +-1, the type's limits, values
near 2^31, 2^32 and 2^63, empty and reversed ranges, comparands near the bounds, divisors and
shift amounts at and past their valid range, program ids near 2^31. Results, final memory, trip
counts and the runaway / iv-wrap / undefined-behaviour flags must agree on every argument set
whose original run is defined.

    python -m tests.differential.fuzz_loop_split --count 20000 --seed 26 \\
        [--out tests/differential/results/fuzz-loop-split.json] [--coverage-build DIR]

Kernel i of a run is drawn from ``random.Random(f"{seed}:{i}")``, so any reported kernel is
reproduced by its seed and index (``--only I``). ``--coverage-build DIR`` runs the kernels
against a build of the plugins instrumented with clang's source-based coverage (see
``build_coverage``) and adds the branches of LoopSplitAnalysis.cpp that were reached and not
reached to the results.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from tests.differential.harness import columns
from tests.differential.host_passes import _print, before_after, pipeline_for, print_ir
from tests.differential.mlir_text import Func, parse_module
from tests.differential.interp import Machine, UnsupportedIR, mismatched_lanes
from tests.differential.loop_kernels import (PREDICATES, LoopKernel, anchors, boundary_int,
                                             to_signed, trips)

REPO = Path(__file__).resolve().parents[2]
ANALYSIS = REPO / "passes" / "LoopSplit" / "LoopSplitAnalysis.cpp"
MAX_TRIPS = 48  # per argument set, of the original loop
STEPS = (1, 1, 2, 3, 4, 4, 5, 7, 8, 8, 16, 16, 24, 32, 33, 48, 63, 64, 64)
OFFSETS = (0, 0, 0, 0, 1, -1, 2, -2, 3, -3, 5, -7, 15, -16, 31, 63, -63, 64, -64, 100, -129,
           1000, -4096, 1 << 20, -(1 << 20))
NARROW_OFFSETS = (0, 0, 1, -1, 2, -3, 5, -7, 15, -16)
RUNTIME_OPS = ("divsi_rt", "divui_rt", "shrsi_rt", "shrui_rt")
CONSTANT_OPS = ("divsi", "divui", "shrsi", "shrui", "minsi", "maxsi")
BLOCKS = (1, 16, 64, 128, 1000)


@dataclass(frozen=True)
class FuzzKernel:
    """One composed kernel: the TTIR generator, the pass options and the features drawn."""

    kernel: LoopKernel
    max_parts: int
    features: tuple[tuple[str, str], ...]

    @property
    def options(self) -> tuple[tuple[str, str], ...]:
        return (("max-parts", str(self.max_parts)),)


def _offset(rng: random.Random, width: int) -> int:
    return rng.choice(NARROW_OFFSETS if width < 32 else OFFSETS)


def _type_fits(v: int, width: int) -> bool:
    return -(1 << (width - 1)) <= v < (1 << (width - 1))


def draw_kernel(rng: random.Random) -> FuzzKernel:
    """A random composition of the analysis' features (see the module docstring)."""
    feats: dict[str, str] = {}
    width = rng.choices((32, 64, 16, 8), (54, 38, 4, 4))[0]
    narrow = width < 32
    form = "scalar" if narrow else rng.choices(("tensor", "scalar"), (65, 35))[0]
    k: dict[str, Any] = dict(form=form, width=width, unsigned_loop=rng.random() < 0.06,
                             pred=rng.choice(PREDICATES), iv_left=rng.random() < 0.5,
                             step=rng.choice(STEPS) if rng.random() < 0.7 else rng.randint(1, 64),
                             iv_off=_offset(rng, width), inv_off=_offset(rng, width),
                             inv_inside=rng.random() < 0.3)
    if narrow:
        k["step"] = min(k["step"], 7)
    if form == "tensor":
        k["rows"] = rng.choice((1, 2, 4, 8, 16))
        k["cols"] = rng.choice((1, 2, 4, 8, 16))
        k["ranges"] = rng.random() < 0.85
        # i64 rows come from make_range through extsi (the analysis declines those sides), so
        # most i64 tensor kernels compare splats.
        if width == 64 and rng.random() < 0.6:
            k["ranges"] = False
        r = rng.random()
        if k["ranges"] and r < 0.3:
            k["rows_op"] = rng.choice(RUNTIME_OPS)
            shift = k["rows_op"].startswith("shr")
            k["rows_k"] = rng.choice((1, 3, 5, 7)) if not shift else rng.randint(0, 6)
            k["div_arg"] = rng.random() < 0.6
            feats["rows"] = k["rows_op"] + ("-arg" if k["div_arg"] else "-of-n")
        elif k["ranges"] and r < 0.55:
            k["rows_op"] = rng.choice(CONSTANT_OPS)
            if k["rows_op"].startswith("shr"):
                k["rows_k"] = rng.randint(1, 5)
            elif k["rows_op"].startswith("div"):
                k["rows_k"] = rng.choice((1, 2, 3, 4, 5, 7, 16))
            else:
                k["rows_k"] = rng.choice((-3, 0, 1, 2, 5, 9, 100))
            feats["rows"] = k["rows_op"]
        else:
            feats["rows"] = "range" if k["ranges"] else "splat"
    else:
        feats["rows"] = "scalar"
    # Bounds: arguments, constants, or expressions (drawn first: a constant invariant is
    # likelier with constant bounds, where every split point is then a constant).
    kind = rng.choices(("argument", "constant", "expression"), (40, 25, 35))[0]
    r = rng.random()
    if not narrow and r < 0.12:
        k["inv_pid"] = rng.choice(BLOCKS)
        feats["invariant"] = f"program_id*{k['inv_pid']}" if k["inv_pid"] > 1 else "program_id"
    elif r < (0.5 if kind == "constant" else 0.22):
        k["inv_const"] = True
        feats["invariant"] = "constant"
    else:
        feats["invariant"] = "inside" if k["inv_inside"] else "argument"
    if not narrow and rng.random() < 0.15:
        k["iv_scale"] = rng.choice((2, 3, 5, 16, 64))
    if not narrow and rng.random() < 0.2:
        k["iv_inv"] = True
    feats["iv_side"] = "iv+invariant" if k.get("iv_inv") else "iv"
    if k["inv_off"] < 0 and not k.get("inv_const") and rng.random() < 0.5:
        k["inv_sub"] = True
    if rng.random() < 0.25:
        k["second"] = rng.choice(PREDICATES)
        k["iv_off2"] = _offset(rng, width)
        k["inv_off2"] = _offset(rng, width)
    if kind == "constant":
        step = k["step"]
        lb = boundary_int(rng, width, step * MAX_TRIPS)
        span = rng.choice((rng.randint(-3 * step, 0), rng.randint(1, MAX_TRIPS * step),
                           rng.randint(2 * step, MAX_TRIPS * step)))
        if rng.random() < 0.6:
            lb = rng.randint(-3 * step, 8 * step)
        ub = to_signed(lb + span, width)
        k["const_bounds"] = (lb, ub)
        feats["bounds"] = "constant"
    elif kind == "expression":
        expr = rng.choice(("lattice", "min", "mask", "mask_select", "mask_scaled", "ub_from_n",
                           "lb_zero"))
        if expr == "lattice":
            k["lattice"] = True
        elif expr in ("min", "mask", "mask_select", "mask_scaled"):
            k["ub_form"] = expr
            k["lb_zero"] = expr != "min" or rng.random() < 0.5
        elif expr == "ub_from_n":
            k["ub_from_n"] = rng.choice((0, 8, 40, 64, 128, 1000)) if not narrow else 8
            k["lb_zero"] = rng.random() < 0.8
            if rng.random() < 0.6:
                k["inv_off"] = -rng.choice((1, 3, 5, 63) if not narrow else (1, 3))
                k["inv_sub"] = rng.random() < 0.5
        else:
            k["lb_zero"] = True
        feats["bounds"] = expr
    else:
        feats["bounds"] = "argument"
    if not narrow and kind != "constant" and rng.random() < 0.12:
        lo_hi = rng.choice(_facts(width))
        k["fact"] = lo_hi
        feats["fact"] = "assume_range"
    kernel = LoopKernel(**k)
    max_parts = rng.choices((3, 2), (65, 35))[0]
    feats.update(width=f"i{width}", loop="unsigned" if kernel.unsigned_loop else "signed",
                 pred=kernel.pred, form=form, second=kernel.second or "none",
                 iv_scale=str(kernel.iv_scale), max_parts=str(max_parts),
                 step="1" if kernel.step == 1 else ("pow2" if kernel.step & (kernel.step - 1) == 0
                                                    else "other"))
    return FuzzKernel(kernel, max_parts, tuple(sorted(feats.items())))


def _facts(width: int) -> list[tuple[int, int]]:
    top = (1 << (width - 1)) - 1
    return [(-(1 << (width - 2)), 1 << (width - 2)), (0, top - 2), (0, 1 << 20),
            (-(1 << 20), 0), (top - (1 << 20), top - 3), (-top - 1, -top + (1 << 16))]


# -- arguments ------------------------------------------------------------------------------

def effective_bounds(k: LoopKernel, lb: int, ub: int, n: int) -> tuple[int, int]:
    """The loop's (lb, ub) as the kernel computes them from the arguments (wrapping)."""
    w = k.width
    if k.const_bounds:
        return k.const_bounds
    if k.lattice:  # (lb / step) * step with divsi (truncating)
        q = lb // k.step if lb >= 0 else -(-lb // k.step)
        lb = to_signed(q * k.step, w)
    if k.lb_zero:
        lb = 0
    if k.ub_from_n is not None:
        ub = to_signed(n + k.ub_from_n, w)
    if k.ub_form:
        m = min(ub, n)
        if k.ub_form == "min":
            ub = m
        else:
            blk = 1 if lb < n else 0
            ub = to_signed(blk * m, w) if k.ub_form in ("mask", "mask_select") else \
                to_signed(blk * ub * k.step, w)
    return lb, ub


def _near(rng: random.Random, width: int, spread: int) -> int:
    """boundary_int, with the extra anchors of issue 26 (2^31 - 1, 2^32 - 1 for i64)."""
    if width == 64 and rng.random() < 0.15:
        return to_signed(rng.choice((1 << 31, (1 << 32) - 1, 1 << 63, (1 << 63) - 1))
                         + rng.randint(-spread, spread), 64)
    return boundary_int(rng, width, spread)


def _divisor(rng: random.Random, k: LoopKernel) -> int:
    w = k.width
    shift = k.rows_op.startswith("shr")
    r = rng.random()
    if r < 0.45:
        return rng.randint(-2, w + 1) if shift else rng.choice((1, 1, 2, 3, 7, 16, -1, -2, -7))
    if r < 0.6:
        return to_signed(rng.choice((1 << 31, (1 << 31) - 1, (1 << 32) - 1, 3_000_000_000)), w)
    return _near(rng, w, 4)


def _program_id(rng: random.Random, scale: int) -> int:
    top = (1 << 31) - 2
    r = rng.random()
    if r < 0.25:
        return rng.randint(0, 40)
    if r < 0.5:
        return top - rng.randint(0, 300)
    # ids where pid * scale crosses a multiple of 2^31 (wraps i32, or nears it)
    m = rng.randint(1, max(1, scale))
    return max(0, min(top, (m << 31) // scale + rng.randint(-3, 3)))


def draw_cases(rng: random.Random, fk: FuzzKernel, count: int
               ) -> tuple[list[tuple[int, ...]], np.ndarray | None]:
    """``count`` argument tuples (lb, ub, n[, d][, a]) whose loop runs at most MAX_TRIPS times, and
    the program ids (or None)."""
    k = fk.kernel
    w = k.width
    step = k.step
    near = step * 4 + k.rows + k.cols + abs(k.iv_off) + abs(k.inv_off) + abs(k.inv_off2) \
        + abs(k.iv_off2) + 8
    reach = step * MAX_TRIPS
    lo_fact, hi_fact = k.fact if k.fact else (-(1 << (w - 1)), (1 << (w - 1)) - 1)
    cases: list[tuple[int, ...]] = []
    pids: list[int] = []
    for _ in range(count * 20):
        if len(cases) == count:
            break
        r = rng.random()
        if k.fact and r < 0.5:
            lb = rng.choice((lo_fact + rng.randint(0, reach), hi_fact - rng.randint(0, reach)))
        elif k.lb_zero or k.const_bounds or r < 0.3:
            lb = rng.randint(-reach, reach)
        else:
            lb = _near(rng, w, reach + near)
        kind = rng.random()
        span = (-rng.randint(0, reach) if kind < 0.1 else 0 if kind < 0.15
                else rng.randint(1, reach))
        ub = to_signed(lb + span, w)
        if k.ub_form == "mask_scaled":
            ub = rng.randint(-2, MAX_TRIPS)
        pid = _program_id(rng, k.inv_pid) if k.inv_pid else 0
        a = (rng.randint(-reach, reach) if rng.random() < 0.6 else _near(rng, w, near)) \
            if k.iv_inv else 0
        elb, eub = effective_bounds(k, lb, ub, 0)
        c = rng.random()
        if c < 0.55:
            anchor = rng.choice((elb, eub, ub, lb))
            n = to_signed(anchor + rng.randint(-near, near) - k.inv_off
                          + k.iv_off * rng.choice((0, 1)) + a * rng.choice((0, 1, 1)), w)
            if k.iv_scale != 1:
                n = to_signed(anchor * k.iv_scale + rng.randint(-near, near), w)
        elif c < 0.85:
            n = _near(rng, w, near)
        else:
            n = to_signed(rng.randint(-near, reach + near), w)
        if k.ub_from_n is not None and rng.random() < 0.5:
            n = to_signed(rng.choice((-(1 << (w - 1)), 0)) + rng.randint(-near, reach), w)
        if k.fact:
            lb, ub, n = (min(hi_fact, max(lo_fact, v)) for v in (lb, ub, n))
        elb, eub = effective_bounds(k, lb, ub, n)
        if trips(elb, eub, step, w, k.unsigned_loop) > MAX_TRIPS:
            continue
        case: tuple[int, ...] = (lb, ub, n)
        if k.div_arg:
            case += (_divisor(rng, k),)
        if k.iv_inv:
            case += (a,)
        cases.append(case)
        pids.append(pid)
    if not k.inv_pid:
        return cases, None
    grid = np.zeros((len(cases), 3), np.int64)
    grid[:, 0] = pids
    return cases, grid


# -- checking -------------------------------------------------------------------------------

@dataclass
class Outcome:
    index: int
    changed: bool
    lanes: int = 0
    undefined: int = 0  # lanes whose original run is undefined (not compared)
    mismatches: list[dict[str, Any]] = field(default_factory=list)
    trips_rechecked: int = 0  # lanes whose trip counts were compared without canonicalize
    loops_before: int = 0
    loops_after: int = 0
    guarded: bool = False


def check(index: int, fk: FuzzKernel, cases: Sequence[tuple[int, ...]],
          grid: np.ndarray | None) -> Outcome:
    text = fk.kernel.ttir()
    programs = before_after(text, "loop_split", fk.options)
    out = Outcome(index, programs.changed)
    out.loops_before = programs.before_text.count("scf.for")
    out.loops_after = programs.after_text.count("scf.for")
    out.guarded = "arith.select" in programs.after_text and \
        programs.after_text.count("arith.select") > programs.before_text.count("arith.select")
    if not programs.changed or not cases:
        return out
    n = len(cases)
    args = columns(cases)
    machine = Machine(n, max_trips=4 * MAX_TRIPS + 16, program_id=grid)
    before = machine.run(programs.before["k"], args)
    after = machine.run(programs.after["k"], args)
    diffs = mismatched_lanes(before, after, n)
    bad = np.zeros(n, bool)
    for reason, v in diffs.items():
        if reason != "trips":
            bad |= v
    trips_only = diffs["trips"] & ~bad
    if trips_only.any():
        # canonicalize (run after the pass, and on the "before" side) turns a loop of one
        # constant iteration into straight-line code: a part of constant bounds [x, x + step)
        # then counts no trip. Such lanes are compared again without the follow-up passes,
        # where every trip is counted; they must agree there.
        raw_before, raw_after = _unfolded(text, fk.options)
        again = mismatched_lanes(machine.run(raw_before, args), machine.run(raw_after, args), n)
        for v in again.values():
            bad |= v & trips_only
        out.trips_rechecked = int(trips_only.sum())
    defined = ~before.undefined
    out.lanes = n
    out.undefined = int((~defined).sum())
    for lane in np.nonzero(bad & defined)[0][:5].tolist():
        out.mismatches.append({
            "args": [str(a) for a in cases[lane]],
            "program_id": int(grid[lane, 0]) if grid is not None else None,
            "reasons": [r for r, v in diffs.items() if v[lane]],
            "trips": [int(before.trips[lane]), int(after.trips[lane])]})
    if out.mismatches:
        out.mismatches[0]["count"] = int((bad & defined).sum())
    return out


def _unfolded(text: str, options: tuple[tuple[str, str], ...]) -> tuple[Func, Func]:
    """The kernel as written and after the pass alone (no canonicalize/cse after it)."""
    pipeline = pipeline_for("loop_split", dict(options))
    return (parse_module(print_ir(text))["k"], parse_module(_print(text, pipeline[:1]))["k"])


def kernels(seed: int, start: int, count: int) -> Iterator[tuple[int, FuzzKernel]]:
    for i in range(start, start + count):
        yield i, draw_kernel(random.Random(f"{seed}:{i}"))


@dataclass
class Summary:
    seed: int
    count: int = 0
    changed: int = 0
    lanes: int = 0
    undefined_lanes: int = 0
    trips_rechecked: int = 0
    unsupported: int = 0
    mismatches: list[dict[str, Any]] = field(default_factory=list)
    features_changed: dict[str, dict[str, int]] = field(default_factory=dict)
    features_drawn: dict[str, dict[str, int]] = field(default_factory=dict)
    plans: dict[str, int] = field(default_factory=dict)
    cpu_s: float = 0.0


def run(count: int, seed: int, cases: int = 160, start: int = 0,
        progress: bool = False) -> Summary:
    summary = Summary(seed)
    drawn: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    changed: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    plans: collections.Counter = collections.Counter()
    t0 = time.process_time()
    for i, fk in kernels(seed, start, count):
        rng = random.Random(f"{seed}:{i}:args")
        args, grid = draw_cases(rng, fk, cases)
        try:
            out = check(i, fk, args, grid)
        except UnsupportedIR as exc:  # outside the interpreter's subset: a fuzzer bug
            summary.unsupported += 1
            summary.mismatches.append({"index": i, "kernel": fk.kernel.name,
                                       "error": f"unsupported: {exc}"})
            continue
        summary.count += 1
        for name, value in fk.features:
            drawn[name][value] += 1
            if out.changed:
                changed[name][value] += 1
        if out.changed:
            summary.changed += 1
            plans[f"{out.loops_before}->{out.loops_after} loops"
                  f"{', guarded' if out.guarded else ''}"] += 1
        else:
            plans["unchanged"] += 1
        summary.lanes += out.lanes
        summary.undefined_lanes += out.undefined
        summary.trips_rechecked += out.trips_rechecked
        if out.mismatches:
            summary.mismatches.append({"index": i, "kernel": fk.kernel.name,
                                       "max_parts": fk.max_parts, "lanes": out.mismatches,
                                       "ttir": fk.kernel.ttir()})
        if progress and (i - start + 1) % 500 == 0:
            print(f"[fuzz] {i - start + 1}/{count} kernels, {summary.changed} changed, "
                  f"{len(summary.mismatches)} mismatching, "
                  f"{time.process_time() - t0:.0f} s CPU", file=sys.stderr, flush=True)
    summary.cpu_s = round(time.process_time() - t0, 1)
    summary.features_drawn = {k: dict(sorted(v.items())) for k, v in sorted(drawn.items())}
    summary.features_changed = {k: dict(sorted(v.items())) for k, v in sorted(changed.items())}
    summary.plans = dict(plans.most_common())
    return summary


# -- coverage of the analysis (optional) ----------------------------------------------------

def _llvm_tool(name: str) -> str:
    import shutil

    for candidate in (f"{name}-19", f"/usr/lib/llvm-19/bin/{name}"):
        if shutil.which(candidate):
            return candidate
    raise FileNotFoundError(f"{name}-19 not found: apt-get install llvm-19 libclang-rt-19-dev")


def build_coverage(build_dir: Path) -> None:
    """Build loop_split (and the range facts dialect) into ``build_dir`` with clang's
    source-based coverage (-fprofile-instr-generate -fcoverage-mapping)."""
    from triton_ext.dev.build import build

    flags = "-fprofile-instr-generate -fcoverage-mapping"
    result = build(["loop_split", "range_facts_ir"], build_dir,
                   defines=[f"CMAKE_CXX_FLAGS={flags}",
                            "CMAKE_SHARED_LINKER_FLAGS=-fprofile-instr-generate"])
    if getattr(result, "failed", None):
        raise RuntimeError(f"coverage build failed: {result.failed}")


def branch_coverage(profdir: Path, build_dir: Path) -> dict[str, Any]:
    """Branches of LoopSplitAnalysis.cpp reached / not reached, from the raw profiles."""
    profdata = profdir / "merged.profdata"
    raws = [str(p) for p in profdir.glob("*.profraw")]
    subprocess.run([_llvm_tool("llvm-profdata"), "merge", "-sparse", *raws, "-o", str(profdata)],
                   check=True)
    lib = build_dir / "plugins" / "libTritonExtLoopSplit.so"
    exported = subprocess.run([_llvm_tool("llvm-cov"), "export", "-format=text",
                               f"-instr-profile={profdata}", str(lib), str(ANALYSIS)],
                              check=True, capture_output=True, text=True).stdout
    data = json.loads(exported)["data"][0]
    src = ANALYSIS.read_text().splitlines()
    files = [f for f in data["files"] if f["filename"].endswith("LoopSplitAnalysis.cpp")]
    if not files:
        raise RuntimeError("no coverage for LoopSplitAnalysis.cpp in the profile")
    f = files[0]
    unreached = []
    for b in f["branches"]:
        line, col, true_count, false_count = b[0], b[1], b[4], b[5]
        if true_count and false_count:
            continue
        missing = "true" if not true_count and false_count else \
            "false" if true_count and not false_count else "both"
        text = src[line - 1].strip() if line - 1 < len(src) else ""
        unreached.append({"line": line, "column": col, "never": missing, "source": text[:110]})
    s = f["summary"]
    return {"lines": s["lines"], "branches": s["branches"], "regions": s["regions"],
            "functions": s["functions"], "branch_directions_not_taken": unreached}


# -- command line ---------------------------------------------------------------------------

def _commit() -> str:
    try:
        return subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """One result from the results of disjoint index ranges of the same seed."""
    parts = sorted(parts, key=lambda p: p["start"])
    out = dict(parts[0])
    for key in ("count", "changed", "argument_sets_compared", "undefined_lanes_not_compared",
                "trip_counts_rechecked_without_canonicalize", "unsupported", "mismatch_count"):
        out[key] = sum(p[key] for p in parts)
    out["cpu_s"] = round(sum(p["cpu_s"] for p in parts), 1)
    out["mismatches"] = [m for p in parts for m in p["mismatches"]]
    plans: collections.Counter = collections.Counter()
    for p in parts:
        plans.update(p["plans"])
    out["plans"] = dict(plans.most_common())
    for key in ("features_changed", "features_drawn"):
        merged: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        for p in parts:
            for name, values in p[key].items():
                merged[name].update(values)
        out[key] = {k: dict(sorted(v.items())) for k, v in sorted(merged.items())}
    return out


def _run_children(args: argparse.Namespace, env: dict[str, str], tmp: Path) -> dict[str, Any]:
    """The index range split over ``args.jobs`` child processes (same seed), merged."""
    per = -(-args.count // args.jobs)
    procs = []
    for j in range(args.jobs):
        start, count = args.start + j * per, min(per, args.count - j * per)
        if count <= 0:
            break
        cmd = [sys.executable, "-m", "tests.differential.fuzz_loop_split", "--count", str(count),
               "--seed", str(args.seed), "--start", str(start), "--cases", str(args.cases),
               "--out", str(tmp / f"part-{j}.json")]
        procs.append(subprocess.Popen(cmd, env=env, cwd=REPO))
    for proc in procs:
        proc.wait()
    parts = [json.loads(p.read_text()) for p in sorted(tmp.glob("part-*.json"))]
    if len(parts) != len(procs):
        raise RuntimeError(f"{len(procs) - len(parts)} fuzzer processes wrote no result")
    return _merge(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--start", type=int, default=0, help="index of the first kernel")
    parser.add_argument("--cases", type=int, default=160, help="argument sets per kernel")
    parser.add_argument("--jobs", type=int, default=1, help="processes (disjoint index ranges)")
    parser.add_argument("--only", type=int, default=None, help="check kernel INDEX only, verbosely")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--coverage-build", type=Path, default=None,
                        help="build dir of an instrumented plugin (built if missing)")
    args = parser.parse_args(argv)
    if args.only is not None:
        fk = draw_kernel(random.Random(f"{args.seed}:{args.only}"))
        cases, grid = draw_cases(random.Random(f"{args.seed}:{args.only}:args"), fk, args.cases)
        print(fk.kernel, fk.options, sep="\n")
        print(fk.kernel.ttir())
        print(before_after(fk.kernel.ttir(), "loop_split", fk.options).after_text)
        out = check(args.only, fk, cases, grid)
        print(json.dumps(asdict(out), indent=1))
        return 1 if out.mismatches else 0
    started = datetime.datetime.now(datetime.timezone.utc)
    wall = time.monotonic()
    if args.coverage_build or args.jobs > 1:
        with tempfile.TemporaryDirectory() as tmpdir:
            tmp = Path(tmpdir)
            env = dict(os.environ)
            if args.coverage_build:
                build_dir = args.coverage_build.resolve()
                if not (build_dir / "plugins" / "libTritonExtLoopSplit.so").exists():
                    build_coverage(build_dir)
                env.update(TRITON_EXT_BUILD_DIR=str(build_dir),
                           LLVM_PROFILE_FILE=str(tmp / "fuzz-%p.profraw"))
            result = _run_children(args, env, tmp)
            if args.coverage_build:
                result["coverage"] = branch_coverage(tmp, build_dir)
                result["coverage_note"] = (
                    "the kernels ran against loop_split built with clang's source-based coverage "
                    "(-fprofile-instr-generate -fcoverage-mapping) from the same sources; "
                    "branch_directions_not_taken lists each condition of LoopSplitAnalysis.cpp "
                    "that was never true (or never false) over the whole run")
        result["jobs"] = args.jobs
    else:
        summary = run(args.count, args.seed, args.cases, args.start, progress=True)
        result = {"count": summary.count, "seed": summary.seed, "start": args.start,
                  "cases_per_kernel": args.cases, "changed": summary.changed,
                  "mismatches": summary.mismatches, "mismatch_count": len(summary.mismatches),
                  "argument_sets_compared": summary.lanes,
                  "undefined_lanes_not_compared": summary.undefined_lanes,
                  "trip_counts_rechecked_without_canonicalize": summary.trips_rechecked,
                  "unsupported": summary.unsupported, "cpu_s": summary.cpu_s,
                  "plans": summary.plans, "features_changed": summary.features_changed,
                  "features_drawn": summary.features_drawn}
    result.update(commit=_commit(), date=started.strftime("%Y-%m-%dT%H:%M:%SZ"),
                  wall_s=round(time.monotonic() - wall, 1))
    rc = 1 if result["mismatch_count"] or result["unsupported"] else 0
    text = json.dumps(result, indent=1)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    else:
        print(text)
    return rc


if __name__ == "__main__":
    sys.exit(main())
