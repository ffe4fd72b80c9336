"""GPU mode: check every variant against the float64 reference and time it, on one or more GPUs."""


from __future__ import annotations

import datetime
import hashlib
import itertools
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from .._errors import TritonExtError
from .._settings import repo_root
from .spec import SCHEMA_VERSION, BenchSpec, Case, Variant, load_spec


# --------------------------------------------------------------------------- #
# GPU mode
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class Timing:
    warmup_ms: int = 25
    rep_ms: int = 200
    rounds: int = 3


def gpu_slug(name: str) -> str:
    """``NVIDIA H200`` -> ``h200``; ``NVIDIA H100 80GB HBM3`` -> ``h100``."""
    words = [w for w in re.split(r"[\s_]+", name.lower()) if w and w not in ("nvidia", "amd", "tesla")]
    kept: list[str] = []
    for w in words:
        if re.fullmatch(r"\d+gb|hbm\d*e?|pcie|sxm\d*|nvl", w):
            break
        kept.append(re.sub(r"[^a-z0-9]+", "-", w).strip("-"))
    return "-".join(k for k in kept if k) or "gpu"


class DirtyCheckoutError(TritonExtError):
    """A result writer ran on a checkout with uncommitted changes to tracked files."""


@dataclass(frozen=True)
class Checkout:
    """What a result file records about the code it was measured with."""

    commit: str  #: ``git rev-parse HEAD``, TRITON_EXT_COMMIT, or "unknown"
    dirty: bool | None  #: uncommitted changes to tracked files; None: no git metadata to tell
    diff_sha256: str | None = None  #: sha256 of ``git diff HEAD`` when dirty

    @property
    def recorded(self) -> str:
        """The commit as result files name it: ``<commit>`` or ``<commit>+diff.<12 hex>``."""
        return f"{self.commit}+diff.{self.diff_sha256[:12]}" if self.dirty and self.diff_sha256 else self.commit


def _git(args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[bytes] | None:
    try:
        return subprocess.run(["git", *args], capture_output=True, timeout=30, cwd=cwd)
    except (OSError, subprocess.SubprocessError):
        return None


def checkout_state(short: bool = False, repo: Path | None = None) -> Checkout:
    """The commit and cleanliness of ``repo`` (default: this checkout). TRITON_EXT_COMMIT wins,
    because a copied checkout (the GPU host's) can carry stale git metadata; it is recorded as
    given (dirty: unknown)."""
    if os.environ.get("TRITON_EXT_COMMIT"):
        return Checkout(os.environ["TRITON_EXT_COMMIT"], None)
    cwd = repo or repo_root()
    head = _git(["rev-parse", *(["--short"] if short else []), "HEAD"], cwd)
    if head is None or head.returncode != 0 or not head.stdout.strip():
        return Checkout("unknown", None)
    status = _git(["status", "--porcelain", "--untracked-files=no"], cwd)
    if status is None or status.returncode != 0:
        return Checkout(head.stdout.decode().strip(), None)
    if not status.stdout.strip():
        return Checkout(head.stdout.decode().strip(), False)
    diff = _git(["diff", "HEAD", "--no-ext-diff", "--binary"], cwd)
    digest = hashlib.sha256(diff.stdout if diff is not None else b"").hexdigest()
    return Checkout(head.stdout.decode().strip(), True, digest)


def allow_dirty_from_env() -> bool:
    return os.environ.get("TRITON_EXT_ALLOW_DIRTY", "").strip() not in ("", "0")


def checkout_commit(short: bool = False, allow_dirty: bool | None = None, repo: Path | None = None) -> str:
    """The commit a result file records. A checkout with uncommitted changes to tracked files raises
    :class:`DirtyCheckoutError` unless ``allow_dirty`` (default: ``TRITON_EXT_ALLOW_DIRTY=1``), in
    which case the record is ``<commit>+diff.<sha256 of git diff HEAD, 12 hex digits>``."""
    state = checkout_state(short, repo)
    if state.dirty and not (allow_dirty_from_env() if allow_dirty is None else allow_dirty):
        raise DirtyCheckoutError(
            f"{repo or repo_root()}: uncommitted changes to tracked files; results must name the code they "
            f"measured: commit first, or pass --allow-dirty / set TRITON_EXT_ALLOW_DIRTY=1 to record "
            f"{state.commit}+diff.<hash of git diff HEAD>")
    return state.recorded


def environment(device_name: str | None = None, allow_dirty: bool | None = None) -> dict[str, Any]:
    """Commit, GPU, driver, Triton/torch/CUDA versions and date of this run."""
    import triton

    def run(cmd: list[str]) -> str:
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=repo_root()).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    env: dict[str, Any] = {
        "commit": checkout_commit(allow_dirty=allow_dirty),  # raises on a dirty checkout unless allowed
        "dirty": checkout_state().dirty,
        "triton": triton.__version__,
        "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    try:
        import torch

        env["torch"] = torch.__version__
        env["cuda"] = torch.version.cuda
        if torch.cuda.is_available():
            env["gpu"] = device_name or torch.cuda.get_device_name()
            env["gpu_count"] = torch.cuda.device_count()
    except ImportError:
        pass
    smi = run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader", "-i", "0"])
    env["driver"] = smi.splitlines()[0] if smi else "unknown"
    return env


def _nbytes(inputs: Mapping[str, Any]) -> int:
    return sum(t.numel() * t.element_size() for t in inputs.values() if hasattr(t, "element_size"))


def _variant_scope(spec: BenchSpec, variant: Variant) -> Any:
    import contextlib

    import triton_ext

    if variant.role != "pass":
        return contextlib.nullcontext()
    return triton_ext.enabled(*variant.enabled_passes(spec.passes),
                              **{k.replace("-", "_"): v for k, v in variant.options.items()})


def _rotation(spec: BenchSpec, inputs: dict[str, Any]) -> list[dict[str, Any]]:
    """Copies of the inputs to cycle through when one set fits in L2 (so no call finds its
    operands already cached); one set otherwise."""
    import torch

    l2 = getattr(torch.cuda.get_device_properties(torch.cuda.current_device()), "L2_cache_size", 50 << 20)
    size = max(_nbytes(inputs), 1)
    copies = 1 if size >= 2 * l2 else min(16, math.ceil(4 * l2 / size))
    sets = [inputs]
    for _ in range(copies - 1):
        sets.append({k: (v.clone() if hasattr(v, "clone") else v) for k, v in inputs.items()})
    return sets


def _same_bits(a: Any, b: Any) -> bool:
    """Equal element for element, NaN matching NaN (outputs are NaN-filled before each run)."""
    import torch

    if b is None or a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(torch.all((a == b) | (torch.isnan(a) & torch.isnan(b))).item()) if a.is_floating_point() \
        else bool(torch.equal(a, b))


def run_case(spec: BenchSpec, case: Case, timing: Timing, log: Callable[[str], None],
             bench: bool = True) -> list[dict[str, Any]]:
    """Check every variant of one case against the reference and time it; one record per variant."""
    import torch
    import triton

    from .. import _selection

    # Once a stages hook exists, Triton's JIT adds a "custom_pipeline" entry to every kernel's
    # specialization, so a kernel launched before the first pass variant installs the hook gets
    # another hash than the same kernel launched after it. Installing it up front keeps one
    # kernel per variant (and the timed-is-checked test meaningful).
    _selection.install_hook()
    device = torch.device("cuda")
    seed = int.from_bytes(os.urandom(4), "little") & 0x7FFFFFFF
    generator = torch.Generator(device=device).manual_seed(seed)
    inputs = spec.make_inputs(case, device, generator)
    expected = spec.reference(inputs, case)
    tol = spec.tolerance[case.dtype]
    records: dict[str, dict[str, Any]] = {}
    hashes: dict[str, str] = {}
    baseline_out: dict[str, Any] = {}  # group -> the baseline's output (bit_identical specs)
    for v in spec.variants:
        for key in spec.outputs:  # an integer output's stand-in for NaN: its type's least value
            out = inputs[key]
            out.fill_(float("nan") if out.is_floating_point() else torch.iinfo(out.dtype).min)
        with _variant_scope(spec, v):
            kernel = spec.launch(v.kernel, inputs, case)
        torch.cuda.synchronize()
        raw = spec.checked(inputs, case)
        got = raw.to(torch.float64)
        err = (got - expected).abs().max().item()
        ok = math.isfinite(err) and err <= tol
        problem = None if ok else f"max abs error {err:.3e} > tolerance {tol:.1e}"
        if spec.bit_identical:
            if v.role == "baseline":
                baseline_out[v.group] = raw.clone()
            elif v.role == "pass" and ok and not _same_bits(raw, baseline_out.get(v.group)):
                ok, problem = False, "output differs from the baseline's bit for bit"
        asm = getattr(kernel, "asm", None)
        hashes[v.name] = getattr(kernel, "hash", "")
        if v.role == "pass" and ok and asm is not None:
            base = records.get(spec.baseline_of(v).name)
            ir_off = base.get("_ir") if base else None
            if ir_off is not None and spec.ir_check is not None:
                problem = spec.ir_check(v, ir_off, asm[spec.ir_stage])
            elif hashes.get(spec.baseline_of(v).name) == hashes[v.name]:
                problem = "the pass variant ran the baseline's kernel (same hash)"
            ok = problem is None
        records[v.name] = {
            "spec": spec.name, "variant": v.name, "role": v.role, "group": v.group, **case.as_dict(),
            "seed": seed, "max_abs_err": err, "tolerance": tol, "ok": ok, "problem": problem,
            "kernel_hash": hashes[v.name], "ms": None, "ms_rounds": [], "spread": None, "metric": None,
            "_ir": asm[spec.ir_stage] if asm is not None and spec.ir_stage in asm else None,
        }
    for r in records.values():
        r.pop("_ir", None)
    if bench:
        sets = _rotation(spec, inputs)
        for _ in range(timing.rounds):  # interleaved, so drift affects every variant alike
            for v in spec.variants:
                counter = itertools.cycle(sets)
                with _variant_scope(spec, v):
                    ms = triton.testing.do_bench(lambda: spec.launch(v.kernel, next(counter), case),
                                                 warmup=timing.warmup_ms, rep=timing.rep_ms, return_mode="median")
                    again = getattr(spec.launch(v.kernel, inputs, case), "hash", "")
                if again != hashes[v.name]:  # the timed launches must use the checked kernel
                    records[v.name].update(ok=False, problem=f"timed kernel {again} is not the checked {hashes[v.name]}")
                records[v.name]["ms_rounds"].append(ms)
        del sets
        for r in records.values():
            rounds = r["ms_rounds"]
            r["ms"] = ms = sorted(rounds)[len(rounds) // 2]
            r["spread"] = (max(rounds) - min(rounds)) / ms if ms else None
            r["metric"] = spec.metric.value(case, ms)
    for v in spec.variants:
        r = records[v.name]
        timing_text = (f"{r['ms']:9.4f} ms {r['metric']:8.2f} {spec.metric.name} (spread {100 * r['spread']:.1f}%)"
                       if r["ms"] is not None and spec.metric.name != "ms" else
                       f"{r['ms']:9.4f} ms (spread {100 * r['spread']:.1f}%)" if r["ms"] is not None else "")
        log(f"  {v.name:22} err {r['max_abs_err']:.2e} {'ok' if r['ok'] else 'FAIL: ' + str(r['problem'])} {timing_text}")
    del inputs
    torch.cuda.empty_cache()
    return list(records.values())


def _worker(spec_paths: dict[str, str], jobs: list[tuple[str, int]], quick: bool, timing: Timing,
            prefix: str = "") -> list[dict[str, Any]]:
    specs = {name: load_spec(path) for name, path in spec_paths.items()}
    out: list[dict[str, Any]] = []
    for i, (name, index) in enumerate(jobs, 1):
        spec = specs[name]
        case = spec.cases(quick)[index]
        print(f"{prefix}[{i}/{len(jobs)}] {name} {case.label()}", flush=True)
        out.extend(run_case(spec, case, timing, lambda s: print(prefix + s, flush=True)))
    return out


def run_gpu(specs: Sequence[BenchSpec], gpus: int = 1, quick: bool = False, timing: Timing = Timing()) -> list[dict[str, Any]]:
    """Run every case of ``specs``; with ``gpus > 1``, in one child process per GPU (cases dealt
    round-robin, all variants of a case on the same GPU so that they compare fairly)."""
    paths = {s.name: str(Path(s.directory or ".") / "bench.py") for s in specs}
    jobs = [(s.name, i) for s in specs for i in range(len(s.cases(quick)))]
    if gpus <= 1:
        return _worker(paths, jobs, quick, timing)
    procs: list[tuple[subprocess.Popen[bytes], Path]] = []
    tmp = Path(tempfile.mkdtemp(prefix="triton-ext-bench-"))
    for g in range(gpus):
        share = jobs[g::gpus]
        if not share:
            continue
        job_file, result = tmp / f"jobs-{g}.json", tmp / f"result-{g}.json"
        job_file.write_text(json.dumps({"paths": paths, "jobs": share, "quick": quick, "timing": timing.__dict__}))
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(g))
        cmd = [sys.executable, "-m", "triton_ext.bench.cli", "--worker", str(job_file), str(result), f"[gpu {g}] "]
        procs.append((subprocess.Popen(cmd, env=env, cwd=repo_root()), result))
    records: list[dict[str, Any]] = []
    failed = []
    for proc, result in procs:
        if proc.wait() != 0 or not result.exists():
            failed.append(f"{result.name} (exit {proc.returncode})")
            continue
        records.extend(json.loads(result.read_text()))
    if failed:
        raise TritonExtError(f"bench: worker(s) failed: {', '.join(failed)}; see their output above")
    return records


def worker_main(job_file: str, result: str, prefix: str) -> int:
    job = json.loads(Path(job_file).read_text())
    records = _worker(job["paths"], [tuple(j) for j in job["jobs"]], job["quick"], Timing(**job["timing"]), prefix)
    Path(result).write_text(json.dumps(records))
    return 0




def run_check(spec: BenchSpec, quick: bool = False, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Check mode (one GPU): every case's variants against the float64 reference, untimed, then the
    spec's own ``check``; a report for ``results/check-<gpu>.json``."""
    records: list[dict[str, Any]] = []
    cases = spec.cases(quick, check=True)
    for i, case in enumerate(cases, 1):
        log(f"[{i}/{len(cases)}] {spec.name} {case.label()}")
        records.extend(run_case(spec, case, Timing(), log, bench=False))
    extra = dict(spec.check(log)) if spec.check is not None else None
    failures = sum(not r["ok"] for r in records) + (0 if extra is None or extra.get("ok") else 1)
    return {"schema": SCHEMA_VERSION, "spec": spec.name, "passes": list(spec.passes), "mode": "check",
            "quick": quick, "records": records, "extra": extra, "failures": failures}
