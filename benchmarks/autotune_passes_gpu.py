"""GPU check of passes as autotuning dimensions (issue 19.1): ``triton_ext.autotune`` on an H200.

    TRITON_EXT_BUILD_DIR=$PWD/build python -m benchmarks.autotune_passes_gpu --out autotune-passes-h200.json

The kernel is grid_swizzle's naive 2-D GEMM (passes/GridSwizzle/kernels.py). For each
shape, ``triton_ext.autotune`` tunes four configs that differ only in passes: no pass, and
grid_swizzle with group sizes 4, 8 and 16. ``knobs.autotuning.listener`` records what Triton's
autotuner saw (the best config's pass set, each config's timing, cache hit or not). Then:

* the chosen config is timed again, interleaved with the no-pass config (``do_bench``, median of
  5 rounds), to report its speedup over no pass and whether it is within spread of the best;
* its output is compared with the no-pass output (must be bit-identical: the pass only reorders
  programs);
* a second process with the same Triton cache runs the same tuning and must report a cache hit
  with the same pass set (the choice recorded on disk and reused).

Takes about a minute on an H200.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import torch  # noqa: E402
import triton  # noqa: E402

import triton_ext  # noqa: E402
from triton_ext.testing import import_file, repo_root  # noqa: E402

REPO = repo_root()
matmul_naive_kernel = import_file(REPO / "passes" / "GridSwizzle" / "kernels.py").matmul_naive_kernel

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 2048, 4096)]
BLOCKS = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}
PASS_SETS: list[dict[str, Any]] = [{}, {"grid_swizzle": {"group-size": 4}}, {"grid_swizzle": {"group-size": 8}},
                                   {"grid_swizzle": {"group-size": 16}}]


def configs() -> list[Any]:
    return [triton_ext.Config(dict(BLOCKS), passes=p, num_warps=8, num_stages=3) for p in PASS_SETS]


events: list[dict[str, Any]] = []


def listener(fn: Any, key: Any, best_config: Any, configs_timings: Any, duration: Any, cache_hit: bool) -> None:
    events.append({
        "kernel": fn.__name__,
        "key": list(key),
        "best_passes": triton_ext.passes_of(best_config),
        "timings_ms": {json.dumps(triton_ext.passes_of(c)): t[0] for c, t in (configs_timings or {}).items()},
        "duration_s": duration,
        "cache_hit": cache_hit,
    })


def tune_all() -> list[dict[str, Any]]:
    triton.knobs.autotuning.listener = listener
    tuned = triton_ext.autotune(configs=configs(), key=["M", "N", "K"])(matmul_naive_kernel)
    out = []
    for M, N, K in SHAPES:
        torch.manual_seed(M + N + K)
        a = torch.randn(M, K, device="cuda", dtype=torch.float16) / K**0.5
        b = torch.randn(K, N, device="cuda", dtype=torch.float16)
        c = torch.empty(M, N, device="cuda", dtype=torch.float16)
        grid = (triton.cdiv(M, BLOCKS["BLOCK_M"]), triton.cdiv(N, BLOCKS["BLOCK_N"]))
        tuned[grid](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0))
        torch.cuda.synchronize()
        best = tuned.best_config
        out.append({"shape": [M, N, K], "best": triton_ext.passes_of(best), "tensors": (a, b, c, grid)})
    return out


_singles: dict[str, Any] = {}


def run_config(passes: dict[str, Any], a: Any, b: Any, c: Any, grid: Any) -> None:
    name = json.dumps(passes, sort_keys=True)
    single = _singles.get(name)
    if single is None:
        config = triton_ext.Config(dict(BLOCKS), passes=passes, num_warps=8, num_stages=3)
        single = _singles[name] = triton_ext.autotune(configs=[config], key=["M"])(matmul_naive_kernel)
    M, K = a.shape
    N = b.shape[1]
    single[grid](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0))


def child() -> None:
    tune_all()
    print(json.dumps(events))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="autotune-passes-h200.json")
    parser.add_argument("--child", action="store_true")
    args = parser.parse_args()
    if args.child:
        child()
        return 0
    cache = tempfile.mkdtemp(prefix="triton-ext-autotune-")
    os.environ["TRITON_CACHE_DIR"] = cache
    results = tune_all()
    first_events = list(events)
    rows = []
    ok = True
    for result in results:
        a, b, c, grid = result.pop("tensors")
        best = result["best"]
        c_best, c_stock = torch.full_like(c, float("nan")), torch.full_like(c, float("nan"))
        run_config(best, a, b, c_best, grid)
        run_config({}, a, b, c_stock, grid)
        same = bool(torch.equal(c_best, c_stock))
        rounds = {"best": [], "stock": []}
        for _ in range(5):  # interleaved, so drift hits both alike
            rounds["best"].append(triton.testing.do_bench(lambda: run_config(best, a, b, c_best, grid)))
            rounds["stock"].append(triton.testing.do_bench(lambda: run_config({}, a, b, c_stock, grid)))
        tb, ts = statistics.median(rounds["best"]), statistics.median(rounds["stock"])
        spread = max(max(v) - min(v) for v in rounds.values()) / ts
        event = next(e for e in first_events if e["key"][:3] == result["shape"])
        best_single = min(v for k, v in event["timings_ms"].items() if k != "{}")
        no_pass = event["timings_ms"]["{}"]
        row = {**result, "tuned_ms": event["timings_ms"], "chosen_ms": tb, "stock_ms": ts,
               "speedup_over_no_pass": ts / tb, "spread": spread, "outputs_identical": same,
               "never_slower_than_best_of_no_pass_and_best_single":
                   event["timings_ms"][json.dumps(best)] <= min(no_pass, best_single) * (1 + spread)}
        ok &= same and row["never_slower_than_best_of_no_pass_and_best_single"]
        rows.append(row)
    proc = subprocess.run([sys.executable, "-m", "benchmarks.autotune_passes_gpu", "--child"],
                          env={**os.environ, "TRITON_CACHE_DIR": cache}, capture_output=True, text=True,
                          timeout=200, cwd=REPO)
    second = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else []
    reused = bool(second) and all(e["cache_hit"] for e in second) and [e["best_passes"] for e in second] == [
        e["best_passes"] for e in first_events]
    ok &= reused
    report = {"gpu": torch.cuda.get_device_name(), "triton": triton.__version__, "rows": rows,
              "listener_first_process": first_events, "listener_second_process": second,
              "second_process_stderr": proc.stderr[-2000:] if proc.returncode else "",
              "choice_reused_across_processes": reused, "ok": ok}
    Path(args.out).write_text(json.dumps(report, indent=2))
    for row in rows:
        print(f"{row['shape']}: best {row['best']}, {row['speedup_over_no_pass']:.3f}x over no pass "
              f"(spread {row['spread']:.3f}), identical {row['outputs_identical']}")
    print(f"reused across processes: {reused}; ok: {ok}; wrote {args.out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
