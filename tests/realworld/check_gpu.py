"""GPU check of the real-world corpus: each pass that fires vs. no pass, outputs and speed.

    TRITON_EXT_BUILD_DIR=$PWD/build python -m tests.realworld.check_gpu \
        --out tests/realworld/results/realworld-gpu-h200.json

For each kernel of realworld_kernels.py (imported from its pinned package), in a child process
of its own (a kernel that faults cannot take the others down; several run at once and share
one Triton cache):

1. build the inputs once (fixed seed) and launch the kernel with no pass, as its package's
   launcher would (same grid, constexprs, num_warps, num_stages);
2. for each registered pass: launch on fresh copies of the same inputs with the pass enabled;
   the pass *fires* when the compiled kernel's IR (ttir, ttgir, llir, ptx) differs from the
   baseline's. For a firing pass every tensor argument is compared with the baseline's:
   bitwise, or within the dtype's tolerance for kernels marked nondeterministic (atomics);
3. then, one kernel at a time in a single timing process (so nothing else uses the GPU),
   every firing pass and the baseline are timed in interleaved ABBA rounds
   (``triton_ext.testing.gpu_time_ms`` per reading: launches queued behind a GPU sleep, so the
   time holds no wait for the CPU); the speedup is the ratio of the medians (no-pass / pass).
   Kernels come from the shared cache by then.

Where the corpus gives a torch reference, the baseline output is checked against it too
(reported, not part of the pass verdict). Writes JSON with the commit, GPU, driver, versions
and date; ``tests/realworld/gpu_table.py`` turns it into the README table. Exits non-zero when a
firing pass changed an output or a kernel failed to compile or run with a pass.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
os.environ.setdefault("TRITON_EXT_ENTRY_POINTS", "0")
os.environ.pop("TRITON_EXT_ENABLE", None)  # passes are enabled per launch below

STAGES = ("ttir", "ttgir", "llir", "ptx")


def _tolerance(dtype: Any) -> tuple[float, float]:
    import torch

    return {torch.float16: (1e-3, 1e-3), torch.bfloat16: (8e-3, 8e-3), torch.float32: (1e-5, 1e-5)}.get(
        dtype, (0.0, 0.0))


def _same(a: Any, b: Any, nondeterministic: bool) -> tuple[bool, str]:
    import torch

    if a.shape != b.shape or a.dtype != b.dtype:
        return False, f"shape/dtype {tuple(a.shape)}/{a.dtype} vs {tuple(b.shape)}/{b.dtype}"
    if torch.equal(a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8)):
        return True, "bitwise"
    if nondeterministic and a.is_floating_point():
        atol, rtol = _tolerance(a.dtype)
        if torch.allclose(a.float(), b.float(), atol=atol, rtol=rtol, equal_nan=True):
            return True, f"within atol={atol} rtol={rtol}"
    diff = (a.float() - b.float()).abs()
    diff = torch.nan_to_num(diff, nan=float("inf"))
    return False, f"{int((diff > 0).sum())} elements differ, max |diff| {float(diff.max()):.3g}"


def _clone(args: dict[str, Any]) -> dict[str, Any]:
    import torch

    return {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in args.items()}


def run_kernel(name: str, passes: list[str], seed: int) -> dict[str, Any]:
    """Child process body: does each pass fire, and are the outputs unchanged (no timing)."""
    import torch

    import triton_ext
    from tests.realworld.realworld_kernels import BY_NAME, Tensors
    from triton_ext.testing import enabled_label

    kernel = BY_NAME[name]
    fn = kernel.fn()
    launch = kernel.build(Tensors("cuda", seed))
    inputs = launch.args
    out: dict[str, Any] = {"kernel": name, "package": kernel.package, "kind": kernel.kind,
                           "num_warps": launch.num_warps, "num_stages": launch.num_stages,
                           "grid": list(launch.grid), "passes": {}}

    def launch_with(args: dict[str, Any], pass_name: str | None) -> Any:
        # "a+b": several passes together (the sanitizers' "all three" row).
        ctx = enabled_label(pass_name) if pass_name else contextlib.nullcontext()
        with ctx:
            compiled = fn[launch.grid](**args, num_warps=launch.num_warps, num_stages=launch.num_stages)
        return compiled

    reference = None
    if launch.reference is not None:
        reference = launch.reference(_clone(inputs))
    base_args = _clone(inputs)
    base = launch_with(base_args, None)
    torch.cuda.synchronize()
    base_asm = {s: str(base.asm.get(s, "")) for s in STAGES}
    # Control: the kernel without any pass, launched again on fresh copies of the same inputs. A
    # kernel that does not repeat its own output (a race, reads of memory it never wrote) cannot
    # show whether a pass changed anything, so its comparisons are reported as unverifiable.
    again_args = _clone(inputs)
    launch_with(again_args, None)
    torch.cuda.synchronize()
    unrepeatable = {}
    for arg, value in again_args.items():
        if isinstance(value, torch.Tensor):
            ok, detail = _same(base_args[arg], value, kernel.nondeterministic)
            if not ok:
                unrepeatable[arg] = detail
    out["baseline_repeatable"] = not unrepeatable
    if unrepeatable:
        out["baseline_differences"] = unrepeatable
    if reference is not None:
        checks = {}
        for arg, expected in reference.items():
            got = base_args[arg].float()
            ok = torch.allclose(got, expected.float().to(got.device), atol=launch.atol, rtol=launch.rtol,
                                equal_nan=True)
            checks[arg] = "ok" if ok else f"max |diff| {float((got - expected.float()).abs().max()):.3g}"
        out["reference"] = checks

    for pass_name in passes:
        rec: dict[str, Any] = {}
        out["passes"][pass_name] = rec
        try:
            args = _clone(inputs)
            compiled = launch_with(args, pass_name)
            torch.cuda.synchronize()
            changed = [s for s in STAGES if str(compiled.asm.get(s, "")) != base_asm[s]]
            rec["fires"] = bool(changed)
            rec["changed_stages"] = changed
            if not changed:
                continue
            mismatches = {}
            how = set()
            for arg, value in args.items():
                if isinstance(value, torch.Tensor):
                    ok, detail = _same(base_args[arg], value, kernel.nondeterministic)
                    how.add(detail if ok else "differs")
                    if not ok:
                        mismatches[arg] = detail
            rec["outputs_unchanged"] = not mismatches
            rec["comparison"] = "bitwise" if how == {"bitwise"} else sorted(how)
            if mismatches:
                rec["mismatches"] = mismatches
        except Exception as exc:  # noqa: BLE001  (recorded; the parent reports it)
            rec["error"] = f"{type(exc).__name__}: {' '.join(str(exc).split())[:800]}"
            rec["traceback"] = traceback.format_exc()[-2000:]
    return out


#: The label of the readings without any pass.
BASE = "(no pass)"


def _sanitizer_findings() -> list[Any]:
    """Records of the sanitizer sites with findings since the last call (then re-armed)."""
    try:
        import triton_ext

        sanitizers = triton_ext.import_extension("sanitizers")

        return sanitizers.report(echo=False)  # recorded in the JSON, not printed
    except Exception:  # noqa: BLE001  (no driver access: nothing to add)
        return []


def time_kernels(plan: dict[str, list[str]], rounds: int, seed: int, out: Path) -> None:
    """Timing process body: kernel -> firing passes; results written after every kernel.

    Each reading is :func:`triton_ext.testing.gpu_time_ms` (every launch queued behind a GPU
    sleep, so a ~10 us kernel's time holds no wait for the Python that launches it; ``do_bench``
    counted that wait) with one L2-flush buffer per kernel; the variants are read in ABBA rounds
    (:func:`triton_ext.testing.interleaved_rounds`), so the H200's alternation between consecutive
    readings and a drift cancel out."""
    import torch

    import triton_ext
    from tests.realworld.realworld_kernels import BY_NAME, Tensors
    from triton_ext.testing import enabled_label, flush_buffer, gpu_time_ms, interleaved_rounds

    results: dict[str, Any] = {}
    flush = flush_buffer()
    for name, passes in plan.items():
        kernel = BY_NAME[name]
        fn = kernel.fn()
        launch = kernel.build(Tensors("cuda", seed))
        args = launch.args

        def reading(label: str) -> float:
            ctx = enabled_label(label) if label != BASE else contextlib.nullcontext()
            with ctx:
                return gpu_time_ms(lambda: fn[launch.grid](**args, num_warps=launch.num_warps,
                                                           num_stages=launch.num_stages), flush=flush)

        rec: dict[str, Any] = {}
        try:
            samples = interleaved_rounds([BASE, *passes], reading, rounds)
            base = statistics.median(samples[BASE])
            for p in passes:
                rec[p] = {"base_ms": [round(x, 5) for x in samples[BASE]],
                          "pass_ms": [round(x, 5) for x in samples[p]],
                          "speedup": round(base / statistics.median(samples[p]), 4)}
            # Sanitizers: what the timed launches found (a kernel that updates its inputs in
            # place can reach Inf after hundreds of launches; then the reporting path is timed).
            for record in _sanitizer_findings():
                for label in rec:
                    if record.site.check in label.split("+"):
                        found = rec[label].setdefault("findings", {})
                        found[f"{record.site.what} @ {record.site.location}"] = record.lanes
        except Exception as exc:  # noqa: BLE001
            rec = {p: {"timing_error": f"{type(exc).__name__}: {' '.join(str(exc).split())[:400]}"} for p in passes}
        results[name] = rec
        del args, launch
        torch.cuda.empty_cache()
        out.write_text(json.dumps(results), encoding="utf-8")


def _gpu_info() -> dict[str, Any]:
    import torch

    info: dict[str, Any] = {"gpu": torch.cuda.get_device_name(0), "capability": list(torch.cuda.get_device_capability(0))}
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
        info["driver"] = smi.stdout.strip().splitlines()[0] if smi.stdout.strip() else "unknown"
    except (OSError, subprocess.SubprocessError):
        info["driver"] = "unknown"
    return info


def _versions() -> dict[str, str]:
    import importlib.metadata

    out = {}
    # The installed triton's metadata may be another version than the one imported (the GPU host
    # puts 3.9.0 on PYTHONPATH beside its own 3.6.0): "triton_imported" is the one that ran.
    for dist in ("triton", "torch", "liger-kernel", "fla-core", "torchao"):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[dist] = "missing"
    import triton

    out["triton_imported"] = f"{triton.__version__} ({Path(triton.__file__).parent})"
    return out


def _commit() -> str:
    from triton_ext.bench.gpu import checkout_commit  # after this module has set the environment

    return checkout_commit(short=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "results" / "realworld-gpu-h200.json")
    parser.add_argument("--kernels", nargs="*", default=None, help="kernel names (default: all)")
    parser.add_argument("--passes", nargs="*", default=None,
                        help="pass names (default: every runnable one); 'a+b' enables a and b together")
    parser.add_argument("--rounds", type=int, default=6, help="interleaved timing rounds per kernel")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=int, default=300, help="seconds per kernel child")
    parser.add_argument("--jobs", type=int, default=min(8, max(1, (os.cpu_count() or 2) // 2)),
                        help="kernel children at once (compiling is the slow part)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--child-out", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--timing-plan", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        result = run_kernel(args.child, args.passes or [], args.seed)
        args.child_out.write_text(json.dumps(result), encoding="utf-8")
        return 0
    if args.timing_plan:
        time_kernels(json.loads(args.timing_plan.read_text(encoding="utf-8")), args.rounds, args.seed,
                     args.child_out)
        return 0

    commit = _commit()  # before the run: a dirty checkout is refused now, not after it
    import triton_ext
    from tests.realworld.realworld_kernels import REALWORLD

    target_ok = []
    manifest = triton_ext.manifest()
    import torch

    major, minor = torch.cuda.get_device_capability(0)
    skipped = {}
    for spec in manifest.passes:
        ext = manifest.extension_of(spec)
        if not ext.applies_to("cuda", major * 10 + minor):
            skipped[spec.name] = f"extension {ext.name} does not target cuda:{major}{minor}"
        elif not ext.library_path().exists():
            skipped[spec.name] = f"{ext.library_path()} not built"
        else:
            target_ok.append(spec.name)
    passes = [p for p in target_ok if args.passes is None or p in args.passes]
    # Combinations ("nan_inf_check+offset_overflow_check") and option variants
    # ("nan_inf_check{fast-path=count}"): each one row, enabled together.
    passes += [p for p in args.passes or [] if ("+" in p or "{" in p)
               and all(re.sub(r"\{.*\}$", "", q) in target_ok for q in p.split("+"))]
    kernels = [k for k in REALWORLD if args.kernels is None or k.name in args.kernels]
    started = time.time()
    results: list[dict[str, Any]] = []
    failures: list[str] = []
    unverifiable: list[str] = []
    tmp_root = Path(tempfile.mkdtemp(prefix="realworld-gpu-"))
    os.environ["TRITON_CACHE_DIR"] = str(tmp_root / "triton-cache")  # shared by every child

    def check(kernel: Any) -> dict[str, Any]:
        child_out = tmp_root / f"{kernel.name}.json"
        cmd = [sys.executable, "-m", "tests.realworld.check_gpu", "--child", kernel.name, "--child-out", str(child_out),
               "--seed", str(args.seed), "--passes", *passes]
        t0 = time.time()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, cwd=REPO)
            rc, tail = proc.returncode, (proc.stdout + proc.stderr)[-3000:]
        except subprocess.TimeoutExpired as exc:
            rc, tail = -1, f"timed out after {args.timeout}s: {str(exc.stdout or '')[-1000:]}"
        if rc == 0 and child_out.exists():
            rec = json.loads(child_out.read_text(encoding="utf-8"))
        else:
            rec = {"kernel": kernel.name, "package": kernel.package, "kind": kernel.kind,
                   "error": f"child exited {rc}", "log_tail": tail}
        rec["seconds"] = round(time.time() - t0, 1)
        return rec

    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = list(pool.map(check, kernels))
    print(f"outputs checked in {time.time() - started:.0f}s; timing the firing passes", flush=True)
    plan = {r["kernel"]: [p for p, v in r.get("passes", {}).items() if v.get("fires") and "error" not in v]
            for r in results if "error" not in r}
    plan = {k: v for k, v in plan.items() if v}
    plan_file, timing_out = tmp_root / "timing-plan.json", tmp_root / "timing.json"
    plan_file.write_text(json.dumps(plan), encoding="utf-8")
    t0 = time.time()
    proc = subprocess.run([sys.executable, "-m", "tests.realworld.check_gpu", "--timing-plan", str(plan_file), "--child-out", str(timing_out),
                           "--rounds", str(args.rounds), "--seed", str(args.seed)], capture_output=True, text=True,
                          cwd=REPO)
    timing = json.loads(timing_out.read_text(encoding="utf-8")) if timing_out.exists() else {}
    if proc.returncode != 0:
        failures.append(f"timing process exited {proc.returncode}: {(proc.stdout + proc.stderr)[-800:]}")
    print(f"timing took {time.time() - t0:.0f}s", flush=True)
    for rec in results:
        for pname, timed in timing.get(rec["kernel"], {}).items():
            rec["passes"][pname].update(timed)
        line = [f"{rec['kernel']:34s}"]
        if "error" in rec:
            failures.append(f"{rec['kernel']}: {rec['error']}")
            line.append(f"ERROR {rec['error']}")
        for pname, p in rec.get("passes", {}).items():
            if "error" in p:
                failures.append(f"{rec['kernel']} + {pname}: {p['error']}")
                line.append(f"{pname}=ERROR")
            elif p.get("fires"):
                if not p.get("outputs_unchanged"):
                    if rec.get("baseline_repeatable") is False:
                        unverifiable.append(f"{rec['kernel']} + {pname}: the kernel without passes does not "
                                            f"repeat its own output {rec.get('baseline_differences')}")
                    else:
                        failures.append(f"{rec['kernel']} + {pname}: outputs changed {p.get('mismatches')}")
                line.append(f"{pname}={'same' if p.get('outputs_unchanged') else 'DIFF'} x{p.get('speedup')}")
        print(" ".join(line), flush=True)

    payload = {
        "what": "real-world kernels on the GPU: each firing pass vs. no pass (outputs, interleaved timing)",
        "commit": commit, "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        **_gpu_info(), "versions": _versions(), "rounds": args.rounds, "seed": args.seed,
        "passes": passes, "skipped_passes": skipped, "wall_seconds": round(time.time() - started, 1),
        "failures": failures, "unverifiable": unverifiable, "kernels": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}; {len(failures)} failure(s), {len(unverifiable)} unverifiable")
    for u in unverifiable:
        print("  UNVERIFIABLE", u)
    for f in failures:
        print("  FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
