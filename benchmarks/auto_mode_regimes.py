"""Split the transparent mode's corpus run by launch regime (issue 27's geometric-mean target).

    python -m benchmarks.auto_mode_regimes benchmarks/results/auto-mode-all{0,1,2,3}-h200.json \
        [--replace benchmarks/results/auto-mode-pipeline-deeper{0,1}-h100.json]

A kernel is *launch-bound* when, launched back to back, a launch takes at least ``LAUNCH_BOUND``
times its GPU time: the CPU's launch path (Triton's, which the mode leaves as it is once a kernel
is decided) sets the pace, so a faster kernel cannot change its back-to-back time (a pass acting on
the launch can, by a few percent: ``nvidia_auto_pdl`` before the mode's size guard). The rest are
*GPU-bound*. The report gives each group's geometric mean and what the GPU-bound kernels would
need for the whole corpus to reach a target, the launch-bound ones staying where they are.

``--replace`` puts the rows of later, partial runs (a new candidate pass on some kernels) in place of
the same kernels' rows: an estimate of what a whole run would read, which the output labels as such.
Rows from another GPU make it an estimate across hardware, not a measurement.

``--against`` compares with an earlier run of the same corpus (``git show COMMIT:PATH`` gets one the
tree replaced): the kernels whose back-to-back ratio moved, with both choices, and how the host's
own launch path moved, as the stock kernel's back-to-back time of each regime new/old. Two runs on
hosts whose launch path differs can move a kernel at the boundary between the regimes (on the
H100s of 01ea787 and 114ac4b: vLLM's 3-D decode, 1.258x then 1.003x) without any rule changing.
"""

from __future__ import annotations

import argparse
import json
import math
from statistics import geometric_mean, median
from dataclasses import dataclass
from pathlib import Path

#: Back-to-back time per launch over GPU time from which a kernel counts as launch-bound.
LAUNCH_BOUND = 1.1


@dataclass(frozen=True)
class Regimes:
    launch_bound: list[str]
    gpu_bound: list[str]
    geomean_launch_bound: float
    geomean_gpu_bound: float
    geomean_all: float

    def gpu_bound_needed(self, target: float) -> float:
        """The geometric mean the GPU-bound kernels need for the whole corpus to reach ``target``."""
        n_all = len(self.launch_bound) + len(self.gpu_bound)
        logs_launch = len(self.launch_bound) * math.log(self.geomean_launch_bound)
        return math.exp((n_all * math.log(target) - logs_launch) / len(self.gpu_bound))


def split(rows: list[dict]) -> Regimes:
    """Rows of ``benchmarks.auto_mode_gpu`` reports (those with an error are left out)."""
    good = [r for r in rows if "error" not in r]
    launch = [r for r in good if r["b2b_stock_us"] >= LAUNCH_BOUND * r["stock_ms"] * 1e3]
    gpu = [r for r in good if r not in launch]
    if not launch or not gpu:
        raise ValueError("both regimes need at least one kernel")
    speedups = [[r["b2b_speedup"] for r in rows] for rows in (launch, gpu, good)]
    return Regimes([r["kernel"] for r in launch], [r["kernel"] for r in gpu], *map(geometric_mean, speedups))


def replaced(rows: list[dict], later: list[dict]) -> tuple[list[dict], list[str]]:
    """``rows`` with each kernel's row replaced by its row in ``later`` (kernels ``rows`` lacks are
    not added: the corpus stays the same); also the replaced kernels' names."""
    by_kernel = {r["kernel"]: r for r in later}
    return [by_kernel.get(r["kernel"], r) for r in rows], sorted(k for k in by_kernel if k in {r["kernel"] for r in rows})


@dataclass(frozen=True)
class Moved:
    kernel: str
    old_choice: str
    new_choice: str
    old_b2b: float
    new_b2b: float


@dataclass(frozen=True)
class Drift:
    """The stock kernel's back-to-back time, new run over old, for a group of kernels."""
    kernels: int
    low: float
    median: float
    high: float
    within: int  # kernels whose ratio is within the comparison's threshold of 1


@dataclass(frozen=True)
class Comparison:
    common: int
    geomean_old: float
    geomean_new: float
    moved: list[Moved]  # back-to-back ratio moved by more than the threshold, largest move first
    launch_bound: Drift  # regimes as the new run classifies its kernels
    gpu_bound: Drift


def _drift(ratios: list[float], threshold: float) -> Drift:
    ratios = sorted(ratios)
    return Drift(len(ratios), ratios[0], median(ratios), ratios[-1],
                 sum(1 for x in ratios if abs(x - 1) <= threshold))


def compare(rows: list[dict], earlier: list[dict], threshold: float = 0.02) -> Comparison:
    """``rows`` against ``earlier`` on the kernels both ran without an error."""
    old = {r["kernel"]: r for r in earlier if "error" not in r}
    new = [r for r in rows if "error" not in r and r["kernel"] in old]
    if not new:
        raise ValueError("the two runs have no kernel in common")
    moved = [Moved(r["kernel"], old[r["kernel"]].get("choice") or "", r.get("choice") or "",
                   old[r["kernel"]]["b2b_speedup"], r["b2b_speedup"])
             for r in new if abs(r["b2b_speedup"] / old[r["kernel"]]["b2b_speedup"] - 1) > threshold]
    moved.sort(key=lambda m: -abs(math.log(m.new_b2b / m.old_b2b)))
    regimes = split(new)
    host = {r["kernel"]: r["b2b_stock_us"] / old[r["kernel"]]["b2b_stock_us"] for r in new}
    return Comparison(len(new), geometric_mean([old[r["kernel"]]["b2b_speedup"] for r in new]),
                      geometric_mean([r["b2b_speedup"] for r in new]), moved,
                      _drift([host[k] for k in regimes.launch_bound], threshold),
                      _drift([host[k] for k in regimes.gpu_bound], threshold))


def _print_comparison(c: Comparison, threshold: float) -> None:
    print(f"against the earlier run, {c.common} kernels in both: back to back geomean {c.geomean_new:.3f}x "
          f"(was {c.geomean_old:.3f}x)")
    for name, d in (("launch-bound", c.launch_bound), ("GPU-bound", c.gpu_bound)):
        print(f"host: stock back to back new/old, {d.kernels} {name}: {d.low:.2f}-{d.high:.2f}x, "
              f"median {d.median:.2f}x, {d.within} within {threshold:.0%}")
    print(f"moved by more than {threshold:.0%} back to back: {len(c.moved)}")
    for m in c.moved:
        print(f"  {m.kernel:36} {m.old_b2b:.3f}x -> {m.new_b2b:.3f}x  "
              f"{m.old_choice or '(no pass)'} -> {m.new_choice or '(no pass)'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", type=Path)
    parser.add_argument("--target", type=float, default=1.03)
    parser.add_argument("--replace", nargs="+", type=Path, default=[], metavar="REPORT",
                        help="partial runs whose rows replace the same kernels' rows (an estimate)")
    parser.add_argument("--against", nargs="+", type=Path, default=[], metavar="REPORT",
                        help="an earlier run of the same corpus: what moved, and how the host's launch path did")
    parser.add_argument("--threshold", type=float, default=0.02, help="a move smaller than this is not listed")
    args = parser.parse_args(argv)

    def rows_of(paths: list[Path]) -> list[dict]:
        return [row for path in paths for row in json.loads(path.read_text())["rows"]]

    rows, swapped = replaced(rows_of(args.reports), rows_of(args.replace))
    r = split(rows)
    if args.replace:
        print(f"ESTIMATE: {len(swapped)} kernels' rows taken from {', '.join(p.name for p in args.replace)}")
    print(f"{len(r.launch_bound) + len(r.gpu_bound)} kernels, back to back: geomean {r.geomean_all:.3f}x")
    print(f"launch-bound (back to back >= {LAUNCH_BOUND}x GPU time): {len(r.launch_bound)}, "
          f"geomean {r.geomean_launch_bound:.3f}x")
    print(f"GPU-bound: {len(r.gpu_bound)}, geomean {r.geomean_gpu_bound:.3f}x; for {args.target}x overall they "
          f"would need {r.gpu_bound_needed(args.target):.3f}x")
    if args.against:
        _print_comparison(compare(rows, rows_of(args.against), args.threshold), args.threshold)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
