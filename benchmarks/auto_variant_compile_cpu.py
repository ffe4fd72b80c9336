"""CPU seconds the transparent mode spends compiling each kernel's candidate variants.

    python3 -m benchmarks.auto_variant_compile_cpu [--kernels NAME ...] [--candidates a,b] \
        [--out benchmarks/results/auto-variant-compile-cpu.json]

For every real-world kernel (``tests/realworld``, compiled for sm_90 on the CPU as its launcher
calls it), the no-pass kernel is compiled once, then each candidate pass's variant twice, each time
under the stop the transparent mode puts in its compile (``triton_ext.testing.compile_unless_stock``):

* ``early``: the mode since 196c494: a variant stops as soon as its IR after the last stage with
  one of its passes is the no-pass kernel's (before ``make_ttgir`` for ``make_ttir`` passes);
* ``llvm_ir``: the stop before it: only once ``make_llir`` has run, before PTX codegen and ptxas.

Both run in this process, as the mode did before isolated stages. A third compile, ``isolated``,
is the ``early`` one as the mode runs it now: each stage with a pass runs in a worker process first
(``triton_ext._triton.isolated``; the worker is started before the timings). Its cost is in wall
seconds (``early_wall_s`` against ``isolated_wall_s``): the worker's CPU seconds are not this
process's.

Times are CPU seconds (this process and ptxas). Each compile runs alone in this process (the mode
runs them concurrently on a thread pool, so on a machine with fewer cores than candidates these CPU
seconds add up to first-launch seconds). The compiles are forced (``TRITON_ALWAYS_COMPILE``), so no
on-disk cache hides one. Records per kernel the no-pass compile's seconds, and per candidate
whether it applies and its seconds under each stop.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _cpu_seconds() -> float:
    """CPU seconds of this process and its finished children (ptxas runs as one)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _timed(compile: Any) -> tuple[Any, float, float]:
    """The result, CPU seconds, wall seconds."""
    start, wall = _cpu_seconds(), time.perf_counter()
    result = compile()
    return result, _cpu_seconds() - start, time.perf_counter() - wall


def measure(name: str, candidates: list[str]) -> dict[str, Any]:
    from tests.realworld.realworld_kernels import BY_NAME, Tensors, compile_args
    import triton_ext
    from triton_ext.testing import compile_through_cubin, compile_unless_stock

    kernel = BY_NAME[name]
    fn = kernel.fn()
    launch = kernel.build(Tensors("meta"))
    sig, constexprs, attrs = compile_args(fn, launch)
    options = {"num_warps": launch.num_warps, "num_stages": launch.num_stages}
    stock, stock_s, _ = _timed(lambda: compile_through_cubin(fn, sig, constexprs, options=options, attrs=attrs))
    row: dict[str, Any] = {"kernel": name, "stock_s": round(stock_s, 3), "variants": {}}
    for candidate in candidates:
        with triton_ext.enabled(candidate):  # loads the plugin outside the timings
            pass
        entry: dict[str, Any] = {}
        for label, stop_after, isolate in (("early", None, False), ("llvm_ir", "llir", False),
                                           ("isolated", None, True)):
            try:
                compiled, seconds, wall = _timed(lambda: compile_unless_stock(
                    fn, sig, constexprs, passes=(candidate,), stock=stock, stop_after=stop_after, options=options,
                    attrs=attrs, isolate=isolate))
            except Exception as exc:  # noqa: BLE001 - a variant that fails to compile is recorded
                entry["error"] = f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}"
                break
            if not isolate:
                entry[f"{label}_s"] = round(seconds, 3)
            entry[f"{label}_wall_s"] = round(wall, 3)
            entry["applies"] = compiled is not None
        row["variants"][candidate] = entry
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", nargs="*", help="real-world kernel names (default: all)")
    parser.add_argument("--candidates", default="", help="comma-separated passes (default: the registry's auto: true)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "auto-variant-compile-cpu.json")
    args = parser.parse_args()
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    warnings.filterwarnings("ignore")
    import triton

    from triton_ext.bench.gpu import checkout_commit

    commit = checkout_commit(short=True)  # before the work: a checkout with uncommitted changes is refused

    import triton_ext
    from tests.realworld import more_kernels  # noqa: F401  (registers the launcher-only kernels)
    from tests.realworld.realworld_kernels import REALWORLD

    candidates = [c for c in args.candidates.split(",") if c] or [
        p.name for p in triton_ext.manifest().passes if p.auto]
    from triton_ext.testing import start_stage_worker

    start_stage_worker()  # outside the timings, as the mode's pool threads keep theirs
    names = args.kernels or [k.name for k in REALWORLD]
    rows = []
    for name in names:
        row = measure(name, candidates)
        rows.append(row)
        cells = " ".join(f"{c}={'applies' if v.get('applies') else 'same'}:{v.get('early_s')}/{v.get('llvm_ir_s')}"
                         f"/{v.get('early_wall_s')}->{v.get('isolated_wall_s')}"
                         for c, v in row["variants"].items())
        print(f"{name:32s} stock {row['stock_s']:6.2f}s  {cells}", flush=True)
    per_kernel = [(sum(v.get("early_s") or 0 for v in r["variants"].values()),
                   sum(v.get("llvm_ir_s") or 0 for v in r["variants"].values())) for r in rows]
    not_applying = [(v["early_s"], v["llvm_ir_s"]) for r in rows for v in r["variants"].values()
                    if v.get("applies") is False]
    per_kernel_wall = [(sum(v.get("early_wall_s") or 0 for v in r["variants"].values()),
                        sum(v.get("isolated_wall_s") or 0 for v in r["variants"].values())) for r in rows]
    extra = [v["isolated_wall_s"] - v["early_wall_s"] for r in rows for v in r["variants"].values()
             if "isolated_wall_s" in v]
    summary = {
        "kernels": len(rows),
        "candidates": candidates,
        "variants_not_applying": len(not_applying),
        "variants_applying": sum(1 for r in rows for v in r["variants"].values() if v.get("applies")),
        "not_applying_median_s": {"early": round(statistics.median(e for e, _ in not_applying), 3),
                                  "llvm_ir": round(statistics.median(l for _, l in not_applying), 3)}
        if not_applying else None,
        "per_kernel_variants_s": {
            "early_median": round(statistics.median(e for e, _ in per_kernel), 3),
            "llvm_ir_median": round(statistics.median(l for _, l in per_kernel), 3),
            "early_max": round(max(e for e, _ in per_kernel), 3),
            "llvm_ir_max": round(max(l for _, l in per_kernel), 3),
            "early_total": round(sum(e for e, _ in per_kernel), 1),
            "llvm_ir_total": round(sum(l for _, l in per_kernel), 1),
        },
        "stock_median_s": round(statistics.median(r["stock_s"] for r in rows), 3),
        # The mode's variants in a worker first (isolated stages) against in this process, wall seconds.
        "isolation_wall_s": {
            "per_kernel_early_median": round(statistics.median(w for w, _ in per_kernel_wall), 3),
            "per_kernel_isolated_median": round(statistics.median(i for _, i in per_kernel_wall), 3),
            "per_kernel_isolated_max": round(max(i for _, i in per_kernel_wall), 3),
            "per_variant_extra_median": round(statistics.median(extra), 3),
            "per_variant_extra_max": round(max(extra), 3),
        },
    }
    out = {"commit": commit, "date": datetime.date.today().isoformat(),
           "machine": platform.processor() or platform.machine(),
           "cpus": os.cpu_count(), "triton": triton.__version__, "python": platform.python_version(),
           "summary": summary, "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
