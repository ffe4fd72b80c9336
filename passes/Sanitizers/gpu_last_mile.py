"""H200 run for issue 32 ("the last mile") and issue 26 item 2, in about 5 minutes.

    python -m passes.Sanitizers.gpu_last_mile [--out DIR] [--parts corpus finding scenarios]
    python -m passes.Sanitizers.gpu_last_mile --worst --parts corpus scenarios --rounds 6 [--out DIR]

Run from the repository root with the plugins built (``TRITON_EXT_BUILD_DIR`` if not ./build)
and the corpus packages importable (tests/realworld/README.md). Parts, in this order (the
timing parts run alone on the GPU):

1. ``corpus``: ``tests.realworld.check_gpu`` over the real-kernel corpus with
   ``nan_inf_check``, ``offset_overflow_check``, ``masked_load_poison`` alone and the three
   together (``a+b+c``): every output compared with the run without a pass (bitwise, or the
   dtype's tolerance for nondeterministic kernels), then ABBA rounds of ``gpu_time_ms``
   (``--rounds``, default 2), findings of the timed launches recorded (clean kernels: none).
2. ``finding``: the finding path's cost (issue 32 Deliver 3): ``liger_rope`` fed a NaN in
   every (batch, position) row of q, so every program finds something, and the planted-bug
   ``ratio_kernel`` with a 0/0 in every block of 1024; ABBA rounds of: no pass on the finding
   inputs, ``nan_inf_check`` on clean inputs, ``nan_inf_check`` on the finding inputs. The
   target: finding / clean at most 5x. The records after the timing give the lanes found.
3. ``scenarios``: every scenario of ``passes.Sanitizers.check_gpu`` (planted bugs caught with
   exact lanes and first index, clean kernels silent; among them the masked gather with
   masked_load_poison + offset_overflow_check and the store-in-a-loop kernels), 6 at a time.

``--kernels NAME ...`` (or ``--worst``: the kernels below 0.90 in the last full run, WORST) times
only those corpus kernels, with more rounds if asked, and writes ``*-lastmileworst-h200.json``
instead, so that the full-corpus files stay as they are.

Prints a JSON summary on stdout and writes everything to DIR/check-lastmile-h200.json (DIR:
``--out``, else ``$OUT``, else passes/Sanitizers/results). Exits 1 if a scenario fails, an
output changed, or a clean corpus kernel reported something.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SANITIZERS = ("nan_inf_check", "offset_overflow_check", "masked_load_poison")
ALL_TOGETHER = "+".join(SANITIZERS)
#: Corpus kernels below 0.90 with some check in the H200 run at 4d5800d (results/
#: real-lastmile-h200.json), worst first, and what lastmile-analysis.md changed for them.
WORST = ("fg_rotary_prefill", "liger_cross_entropy", "fg_repetition_penalty_decode",
         "torchao_qt_int8_mm", "liger_moe_gather_weighted_sum", "fla_layer_norm_fwd",
         "liger_layer_norm_fwd", "liger_softmax_single", "sglang_extend_attention",
         "fg_topk_softmax_decode", "torchao_hqq_mixed_mm", "fg_reshape_and_cache_decode",
         "fg_rotary_decode")


def _corpus(out_dir: Path, rounds: int, jobs: int, timeout_s: int,
            kernels: list[str] | None = None) -> dict[str, Any]:
    """tests.realworld.check_gpu with each sanitizer alone and all three; its JSON, summarized."""
    out = out_dir / ("real-lastmileworst-h200.json" if kernels else "real-lastmile-h200.json")
    cmd = [sys.executable, "-m", "tests.realworld.check_gpu", "--out", str(out), "--rounds",
           str(rounds), "--jobs", str(jobs), "--passes", *SANITIZERS, ALL_TOGETHER]
    if kernels:
        cmd += ["--kernels", *kernels]
    t0 = time.time()
    try:
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout_s)
        tail = (proc.stdout + proc.stderr)[-4000:]
        rc = proc.returncode
    except subprocess.TimeoutExpired as exc:
        rc, tail = -1, f"timed out after {timeout_s}s: {str(exc.stdout or '')[-2000:]}"
    summary: dict[str, Any] = {"rc": rc, "seconds": round(time.time() - t0, 1), "json": str(out)}
    if not out.exists():
        summary["log_tail"] = tail
        return summary
    data = json.loads(out.read_text(encoding="utf-8"))
    rows: dict[str, dict[str, Any]] = {}
    findings: list[str] = []
    changed: list[str] = []
    for k in data["kernels"]:
        for label, p in k.get("passes", {}).items():
            if not p.get("fires"):
                continue
            rows.setdefault(label, {})[k["kernel"]] = p.get("speedup")
            if p.get("outputs_unchanged") is False:
                changed.append(f"{k['kernel']} + {label}")
            for site, lanes in p.get("findings", {}).items():
                findings.append(f"{k['kernel']} + {label}: {site} lanes={lanes}")
    summary["per_check"] = {
        label: {"kernels": len(v), "median": _median(v.values()), "worst": _worst(v),
                "below_0.90": sorted(n for n, s in v.items() if s is not None and s < 0.90),
                "below_0.85": sorted(n for n, s in v.items() if s is not None and s < 0.85)}
        for label, v in rows.items()}
    summary["outputs_changed"] = changed
    summary["findings_on_clean_inputs"] = findings
    summary["failures"] = data.get("failures", [])
    summary["log_tail"] = tail[-1500:] if rc != 0 else ""
    return summary


def _median(values: Any) -> float | None:
    vals = [v for v in values if v is not None]
    return round(statistics.median(vals), 4) if vals else None


def _worst(speeds: dict[str, float | None]) -> list[Any] | None:
    vals = [(s, n) for n, s in speeds.items() if s is not None]
    return list(min(vals)) if vals else None


def _finding(rounds: int) -> dict[str, Any]:
    """Times the finding path: no pass on finding inputs, the check on clean inputs, the check
    on finding inputs (every program finds something), on liger_rope and ratio_kernel."""
    import torch
    import triton

    import triton_ext
    from triton_ext.testing import flush_buffer, gpu_time_ms, import_file, interleaved_rounds

    sanitizers = triton_ext.import_extension("sanitizers")  # the extension's own package

    kernels = import_file(__file__, "kernels.py")
    flush = flush_buffer()
    results: dict[str, Any] = {}

    def measure(name: str, clean_launch: Callable[[], Any], finding_launch: Callable[[], Any]
                ) -> dict[str, Any]:
        launches = {"off (finding inputs)": (None, finding_launch),
                    "check (clean inputs)": ("nan_inf_check", clean_launch),
                    "check (finding inputs)": ("nan_inf_check", finding_launch)}

        def reading(label: str) -> float:
            check, launch = launches[label]
            ctx = triton_ext.enabled(check) if check else contextlib.nullcontext()
            with ctx:
                return gpu_time_ms(launch, flush=flush)

        for label in launches:  # compile outside the timing
            reading(label)
        sanitizers.reset()
        times = interleaved_rounds(list(launches), reading, rounds)
        med = {label: statistics.median(t) for label, t in times.items()}
        torch.cuda.synchronize()
        records = [{"site": f"{r.site.what} @ {r.site.location}", "lanes": r.lanes,
                    "programs": r.programs, "first_index": r.first_index}
                   for r in sanitizers.report(echo=False)]
        row = {"ms": {k: round(v, 5) for k, v in med.items()},
               "finding_over_clean": round(med["check (finding inputs)"] / med["check (clean inputs)"], 3),
               "finding_over_off": round(med["check (finding inputs)"] / med["off (finding inputs)"], 3),
               "records_after_timing": records}
        row["within_5x"] = row["finding_over_clean"] <= 5.0
        print(f"finding path {name}: {row['ms']} finding/clean {row['finding_over_clean']}x "
              f"finding/off {row['finding_over_off']}x", file=sys.stderr, flush=True)
        return row

    # liger_rope: a NaN in q's first element of every (batch, position) row: each program (one
    # row) rotates and stores it. In place, so NaN stays NaN over the timed launches.
    from tests.realworld.realworld_kernels import BY_NAME, Tensors

    rope = BY_NAME["liger_rope"]
    fn = rope.fn()
    clean = rope.build(Tensors("cuda", 0))
    finding = rope.build(Tensors("cuda", 0))
    finding.args["q_ptr"][:, :, 0, 0] = float("nan")

    def rope_launch(launch: Any) -> Callable[[], Any]:
        return lambda: fn[launch.grid](**launch.args, num_warps=launch.num_warps,
                                       num_stages=launch.num_stages)

    try:
        results["liger_rope"] = measure("liger_rope", rope_launch(clean), rope_launch(finding))
        results["liger_rope"]["programs_in_grid"] = int(clean.grid[0])
    except Exception as exc:  # noqa: BLE001  (recorded; the planted bug still runs)
        results["liger_rope"] = {"error": f"{type(exc).__name__}: {exc}"[:600]}

    # The planted bug: ratio_kernel over 2^24 floats, 0/0 in the first lane of every block.
    n, block = 1 << 24, 1024
    x = torch.rand(n, device="cuda") + 0.5
    y = torch.rand(n, device="cuda") + 0.5
    xb, yb = x.clone(), y.clone()
    xb[::block] = 0.0
    yb[::block] = 0.0
    out = torch.empty_like(x)
    grid = (triton.cdiv(n, block),)

    def ratio(a: Any, b: Any) -> Callable[[], Any]:
        return lambda: kernels.ratio_kernel[grid](a, b, out, n, BLOCK=block)

    try:
        results["ratio_kernel"] = measure("ratio_kernel", ratio(x, y), ratio(xb, yb))
        results["ratio_kernel"]["programs_in_grid"] = grid[0]
    except Exception as exc:  # noqa: BLE001
        results["ratio_kernel"] = {"error": f"{type(exc).__name__}: {exc}"[:600]}
    return results


def _scenarios(jobs: int) -> dict[str, Any]:
    """Every scenario of passes.Sanitizers.check_gpu (each a child process), `jobs` at a time."""
    from passes.Sanitizers import check_gpu

    names = list(check_gpu.SCENARIOS)
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        outcomes = list(pool.map(check_gpu._scenario, names))
    rows = {}
    for o in outcomes:
        row = {"ok": o.ok, "lines": o.lines, "expected_lines": o.expected_lines,
               "records": o.records, "expected_records": o.expected_records,
               "correct": o.correct, "aborted": o.aborted, "wall_s": o.wall_s}
        if not o.ok:
            row["detail"] = o.detail[-1500:]
        rows[o.name] = row
        print(f"scenario {o.name}: {'ok' if o.ok else 'FAIL'}", file=sys.stderr, flush=True)
    return {"failed": sorted(n for n, r in rows.items() if not r["ok"]), "scenarios": rows,
            "full": [asdict(o) for o in outcomes]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_out = Path(os.environ["OUT"]) if os.environ.get("OUT") else HERE / "results"
    parser.add_argument("--out", type=Path, default=default_out, help="directory for the JSON")
    parser.add_argument("--parts", nargs="+", default=["corpus", "finding", "scenarios"],
                        choices=["corpus", "finding", "scenarios"])
    parser.add_argument("--rounds", type=int, default=2, help="ABBA rounds (corpus)")
    parser.add_argument("--finding-rounds", type=int, default=5, help="ABBA rounds (finding path)")
    parser.add_argument("--jobs", type=int, default=min(16, os.cpu_count() or 4),
                        help="corpus compile children at once")
    parser.add_argument("--corpus-timeout", type=int, default=260, help="seconds for the corpus part")
    parser.add_argument("--kernels", nargs="+", default=None, help="only these corpus kernels")
    parser.add_argument("--worst", action="store_true", help="only the corpus kernels in WORST")
    args = parser.parse_args()
    kernels = list(WORST) if args.worst else args.kernels
    args.out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="last-mile-cache-"))

    started = time.time()
    result: dict[str, Any] = {"what": "issue 32 / issue 26 item 2 sanitizer GPU run"}
    try:
        from triton_ext.bench.gpu import checkout_commit
        result["commit"] = checkout_commit(short=True)
    except Exception:  # noqa: BLE001
        result["commit"] = os.environ.get("TRITON_EXT_COMMIT", "unknown")
    try:
        import torch
        result["device"] = torch.cuda.get_device_name()
    except Exception as exc:  # noqa: BLE001
        result["device"] = f"unknown ({exc})"
    ok = True
    if "corpus" in args.parts:
        result["corpus"] = _corpus(args.out, args.rounds, args.jobs, args.corpus_timeout, kernels)
        c = result["corpus"]
        ok &= c["rc"] == 0 and not c.get("outputs_changed") and not c.get("findings_on_clean_inputs")
        print(f"corpus done at {time.time() - started:.0f}s", file=sys.stderr, flush=True)
    if "finding" in args.parts:
        t0 = time.time()
        result["finding"] = _finding(args.finding_rounds)
        result["finding_seconds"] = round(time.time() - t0, 1)
        print(f"finding path done at {time.time() - started:.0f}s", file=sys.stderr, flush=True)
    if "scenarios" in args.parts:
        t0 = time.time()
        scen = _scenarios(6)
        result["scenarios"] = scen["scenarios"]
        result["scenarios_failed"] = scen["failed"]
        result["scenarios_seconds"] = round(time.time() - t0, 1)
        ok &= not scen["failed"]
        print(f"scenarios done at {time.time() - started:.0f}s", file=sys.stderr, flush=True)
    result["wall_s"] = round(time.time() - started, 1)
    result["ok"] = ok
    path = args.out / ("check-lastmileworst-h200.json" if kernels else "check-lastmile-h200.json")
    path.write_text(json.dumps(result, indent=1, default=str) + "\n", encoding="utf-8")
    summary = {k: v for k, v in result.items() if k != "scenarios"}
    if "scenarios" in result:
        summary["scenarios_ok"] = sorted(n for n, r in result["scenarios"].items() if r["ok"])
    print(json.dumps(summary, indent=1, default=str))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
