"""``triton-ext bench``: the command line of the benchmark package."""


from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from .._errors import TritonExtError
from .._settings import repo_root
from .cpu import check_cpu
from .gpu import Timing, _worker_main, environment, gpu_slug, run_check, run_gpu
from .report import build_report, summary_markdown, write_json, write_outputs
from .spec import BenchSpec, find_specs


# --------------------------------------------------------------------------- #
# The command
# --------------------------------------------------------------------------- #


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="triton-ext bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("names", nargs="*", metavar="NAME", help="pass, extension or spec names, or bench.py paths")
    p.add_argument("--cpu", action="store_true", help="compile-only check through cubin (no GPU, no torch)")
    p.add_argument("--check", action="store_true",
                   help="GPU check only: outputs of every variant against the reference (untimed) and the "
                        "spec's own checks; writes results/check-<gpu>.json")
    p.add_argument("--out", type=Path, help="output folder (default: each spec's results/ folder; "
                                             "with several specs, OUT/<spec>)")
    p.add_argument("--gpus", type=int, default=1, help="GPUs of this host to use, one process each")
    p.add_argument("--quick", action="store_true", help="the spec's quick subset of shapes and dtypes")
    p.add_argument("--rounds", type=int, default=Timing.rounds, help="interleaved timing rounds per variant")
    p.add_argument("--rep-ms", type=int, default=Timing.rep_ms, help="do_bench repetition time per round (ms)")
    p.add_argument("--warmup-ms", type=int, default=Timing.warmup_ms, help="do_bench warm-up time (ms)")
    p.add_argument("--commit", help="commit to record when the checkout has no git metadata (default: git rev-parse HEAD)")
    p.add_argument("--from-json", type=Path, metavar="FILE",
                   help="rewrite BENCHMARK.md and the chart from a bench-<gpu>.json (e.g. where matplotlib exists)")
    p.add_argument("--summary", action="store_true",
                   help="print a markdown summary of the committed bench-*.json files instead of running")
    return p


def _out_dir(spec: BenchSpec, out: Path | None, many: bool) -> Path:
    if out is None:
        return Path(spec.directory or ".") / "results"
    return out / spec.name if many else out


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--worker"]:
        return _worker_main(*argv[1:4])
    args = _parser().parse_args(argv)
    if args.from_json:
        report = json.loads(args.from_json.read_text())
        for path in write_outputs(report, args.out or args.from_json.parent):
            print(f"wrote {path}")
        return 0
    try:
        specs = find_specs(args.names)
        if not specs:
            print("triton-ext bench: no bench.py beside any extension in the registry")
            return 0
        if args.summary:
            reports = []
            for spec in specs:
                folder = _out_dir(spec, args.out, len(specs) > 1)
                for path in sorted(folder.glob("bench-*.json")):
                    rep = json.loads(path.read_text())
                    rep["_path"] = os.path.relpath(folder / "BENCHMARK.md", repo_root())
                    reports.append(rep)
            print(summary_markdown(reports))
            return 0
        if args.cpu:
            return _main_cpu(specs, args.quick)
        if args.check:
            return _main_check(specs, args)
        timing = Timing(args.warmup_ms, args.rep_ms, args.rounds)
        return _main_gpu(specs, args, timing)
    except TritonExtError as exc:
        print(f"triton-ext bench: error: {exc}", file=sys.stderr)
        return 1


def _main_cpu(specs: Sequence[BenchSpec], quick: bool) -> int:
    start = time.perf_counter()
    checks = [c for spec in specs for c in check_cpu(spec, quick)]
    bad = [c for c in checks if not c.ok]
    print(f"triton-ext bench --cpu: {len(checks) - len(bad)}/{len(checks)} kernel combination(s) ok "
          f"in {time.perf_counter() - start:.0f}s")
    for c in bad:
        print(f"  FAIL {c.spec} {c.variant} {c.dtype} {c.constexprs}: {c.problem}")
    return 1 if bad else 0


def _require_gpu() -> Any:
    try:
        import torch
    except ImportError:
        raise TritonExtError("bench: GPU mode needs torch (pip install torch); use --cpu for the compile check")
    if not torch.cuda.is_available():
        raise TritonExtError("bench: no CUDA GPU visible; use --cpu for the compile-only check")
    return torch


def _main_check(specs: Sequence[BenchSpec], args: argparse.Namespace) -> int:
    _require_gpu()
    env = environment()
    if args.commit:
        env["commit"] = args.commit
    failures = 0
    for spec in specs:
        report = {**run_check(spec, args.quick), "environment": env}
        failures += report["failures"]
        path = write_json(report, _out_dir(spec, args.out, len(specs) > 1)
                          / f"check-{gpu_slug(env.get('gpu', 'gpu'))}.json")
        print(f"wrote {path} ({report['failures']} failure(s))")
    return 1 if failures else 0


def _main_gpu(specs: Sequence[BenchSpec], args: argparse.Namespace, timing: Timing) -> int:
    torch = _require_gpu()
    gpus = min(args.gpus, torch.cuda.device_count())
    env = environment()
    if args.commit:
        env["commit"] = args.commit
    start = time.perf_counter()
    records = run_gpu(specs, gpus, args.quick, timing)
    failures = 0
    for spec in specs:
        mine = [r for r in records if r["spec"] == spec.name]
        report = build_report(spec, mine, {**env, "gpus_used": gpus}, timing, args.quick)
        failures += report["failures"]
        for path in write_outputs(report, _out_dir(spec, args.out, len(specs) > 1)):
            print(f"wrote {path}")
        for t in report["targets"]:
            w = t["worst"]
            print(f"target {'met' if t['met'] else 'MISSED'}: {t['description']}"
                  + (f" (worst {w['case']}: {w['speedup']:.3f}x, bound {w['bound']:.3f})" if w else " (no cases)"))
    print(f"triton-ext bench: {len(records)} result(s), {failures} correctness failure(s), "
          f"{time.perf_counter() - start:.0f}s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
