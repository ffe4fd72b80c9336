"""CPU seconds the transparent mode spends compiling pipeline-depth variants that rebuild the
no-pass kernel, stopped after ``make_ttgir`` or only after ``make_llir``:

    python3 -m benchmarks.auto_depth_stop_cpu [--kernels NAME ...] [--out benchmarks/results/auto-depth-stop-cpu.json]

For every real-world kernel with a loop (``tests/realworld``, compiled for sm_90 on the CPU as its
launcher calls it; a kernel without one gets no depth variant), the no-pass kernel is compiled
once, then one stage less and one more (1 to 6) twice each under the mode's stop
(``triton_ext.testing.compile_unless_stock``): ``ttgir`` compares the IR with the no-pass kernel's
right after ``make_ttgir``, the only stage of Triton 3.9's NVIDIA backend that reads
``num_stages``; ``llir`` only after ``make_llir``; and once with no stop (``full``: the mode
before 7771b5b, whose stages hook skipped its stop for a compile without passes). CPU seconds
of this process and ptxas; compiles forced (``TRITON_ALWAYS_COMPILE``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import warnings
from pathlib import Path
from typing import Any

from benchmarks.auto_variant_compile_cpu import _timed

ROOT = Path(__file__).resolve().parents[1]


def measure(name: str) -> dict[str, Any] | None:
    from tests.realworld.realworld_kernels import BY_NAME, Tensors, compile_args
    from triton_ext.testing import compile_through_cubin, compile_unless_stock

    kernel = BY_NAME[name]
    fn = kernel.fn()
    launch = kernel.build(Tensors("meta"))
    sig, constexprs, attrs = compile_args(fn, launch)
    options = {"num_warps": launch.num_warps, "num_stages": launch.num_stages}
    stock, stock_s, _ = _timed(lambda: compile_through_cubin(fn, sig, constexprs, options=options, attrs=attrs))
    if "scf.for" not in stock.asm["ttir"]:
        return None
    base = stock.metadata.num_stages
    row: dict[str, Any] = {"kernel": name, "stock_s": round(stock_s, 3), "num_stages": base, "depths": {}}
    for depth in (d for d in (base - 1, base + 1) if 1 <= d <= 6):
        entry: dict[str, Any] = {}
        for stop in ("ttgir", "llir"):
            compiled, seconds, _ = _timed(lambda: compile_unless_stock(
                fn, sig, constexprs, passes=(), stock=stock, stop_after=stop,
                options={**options, "num_stages": depth}, attrs=attrs, isolate=False))
            entry[f"{stop}_s"] = round(seconds, 3)
            entry[f"same_at_{stop}"] = compiled is None
        deeper = {**options, "num_stages": depth}
        _, seconds, _ = _timed(lambda: compile_through_cubin(fn, sig, constexprs, options=deeper, attrs=attrs))
        entry["full_s"] = round(seconds, 3)  # no stop: the mode before 7771b5b, whose stop never ran here
        row["depths"][str(depth)] = entry
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", nargs="*", help="real-world kernel names (default: all)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "auto-depth-stop-cpu.json")
    args = parser.parse_args()
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    warnings.filterwarnings("ignore")
    import triton

    from triton_ext.bench.gpu import checkout_commit

    commit = checkout_commit(short=True)  # before the work: a checkout with uncommitted changes is refused
    from tests.realworld import more_kernels  # noqa: F401  (registers the launcher-only kernels)
    from tests.realworld.realworld_kernels import REALWORLD

    rows = []
    for name in args.kernels or [k.name for k in REALWORLD]:
        row = measure(name)
        if row is None:
            continue
        rows.append(row)
        print(name, json.dumps(row["depths"]), flush=True)
    variants = [d for r in rows for d in r["depths"].values()]
    same = [d for d in variants if d["same_at_llir"]]
    disagree = [d for d in variants if d["same_at_ttgir"] != d["same_at_llir"]]
    summary = {
        "kernels_with_a_loop": len(rows), "depth_variants": len(variants),
        "same_as_stock": len(same),
        "stops_disagree": len(disagree),  # a TTGIR equal to stock's but LLVM IR not: must be 0
        "same_median_s": {k: round(statistics.median(d[f"{k}_s"] for d in same), 3) for k in ("ttgir", "llir", "full")}
        if same else None,
        "same_total_s": {k: round(sum(d[f"{k}_s"] for d in same), 2) for k in ("ttgir", "llir", "full")},
    }
    report = {"commit": commit, "date": datetime.date.today().isoformat(), "host": platform.node(),
              "cpus": os.cpu_count(), "triton": triton.__version__, "summary": summary, "kernels": rows}
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return 0 if not disagree else 1


if __name__ == "__main__":
    raise SystemExit(main())
