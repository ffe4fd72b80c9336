"""``triton-ext bench``: benchmark specs, the CPU check CI runs, and the GPU benchmark.

A benchmark spec is a ``bench.py`` beside a pass (``passes/LoopSplit/bench.py``) that defines
``SPEC = BenchSpec(...)``: the kernel variants (the unchanged kernel, the same kernel with the pass
enabled, the best hand-written version), shapes, dtypes, inputs, a float64 reference, the metric
and the targets. This module runs specs two ways::

    triton-ext bench --cpu [NAME...]            # compile every kernel with and without its pass
    triton-ext bench [NAME...] [--out DIR] [--gpus N] [--quick]

CPU mode needs no GPU and no torch: each distinct kernel/dtype/constexpr combination is compiled
through cubin for ``GPUTarget("cuda", 90, 32)`` with and without the pass, and the spec's IR
predicate must hold (by default: the pass changes the IR). GPU mode checks every variant against
the float64 reference on fresh random inputs, times it with ``triton.testing.do_bench`` (median,
in interleaved rounds, input buffers rotated when they fit in L2) and writes
``bench-<gpu>.json``, ``BENCHMARK.md`` and a chart: ``bench-<gpu>.png`` with matplotlib, else
``bench-<gpu>.svg`` drawn without it (``--from-json`` redraws from a JSON file).
``--gpus N`` runs cases in N processes, one per GPU (``CUDA_VISIBLE_DEVICES``).

NAME is a pass name, an extension name, a spec name or a path to a ``bench.py``; no NAME means
every spec found beside the registry's extensions.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import itertools
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Protocol, Sequence

from ._errors import TritonExtError
from ._settings import repo_root, settings

__all__ = [
    "BenchSpec",
    "Variant",
    "Metric",
    "Target",
    "Case",
    "CpuCheck",
    "load_spec",
    "find_specs",
    "check_cpu",
    "run_gpu",
    "write_json",
    "write_markdown",
    "summary_markdown",
    "gpu_slug",
    "main",
]

SCHEMA_VERSION = 1
ROLES = ("baseline", "pass", "handwritten")
CPU_TARGET = ("cuda", 90, 32)


# --------------------------------------------------------------------------- #
# The spec
# --------------------------------------------------------------------------- #


class Launch(Protocol):
    def __call__(self, kernel: Any, inputs: Mapping[str, Any], case: Case) -> Any: ...


class IRPredicate(Protocol):
    def __call__(self, variant: Variant, off: str, on: str) -> str | None: ...


@dataclass(frozen=True)
class Variant:
    """One way to run the benchmarked computation.

    ``role``: ``baseline`` (the unchanged kernel), ``pass`` (the same kernel compiled with the
    spec's passes enabled through ``triton_ext.enabled``) or ``handwritten`` (the best version
    written by hand). ``group`` ties a pass variant to its baseline (same group); a handwritten
    variant is compared with every group. ``passes`` narrows a pass variant to some of the spec's
    passes (one variant per sanitizer, say); empty means all of them.
    """

    name: str
    kernel: Any
    role: str
    group: str = ""
    options: Mapping[str, Any] = field(default_factory=dict)
    passes: tuple[str, ...] = ()

    def enabled_passes(self, spec_passes: Sequence[str]) -> tuple[str, ...]:
        return tuple(self.passes) or tuple(spec_passes)

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise TritonExtError(f"variant {self.name}: role expected one of {ROLES}, found {self.role!r}")


@dataclass(frozen=True)
class Metric:
    """What a timing is turned into: ``TFLOP/s`` or ``GB/s`` from ``amount(case)`` flops or bytes
    per call (``formula`` says how, for the report), or plain ``ms`` with no amount."""

    name: str = "ms"
    amount: Callable[[Case], float] | None = None
    formula: str = ""

    def value(self, case: Case, ms: float) -> float:
        if self.amount is None:
            return ms
        scale = {"TFLOP/s": 1e12, "GB/s": 1e9}.get(self.name)
        if scale is None:
            raise TritonExtError(f"metric {self.name!r}: expected TFLOP/s, GB/s or ms")
        return self.amount(case) / (ms * 1e-3) / scale

    @property
    def higher_is_better(self) -> bool:
        return self.amount is not None


@dataclass(frozen=True)
class Target:
    """A goal the benchmark measures: ``time(versus) / time(variant) >= min_speedup`` on every
    case where ``where(case)`` holds. With ``allow_spread`` the bound is lowered by the run-to-run
    spread of both timings ("never slower beyond the noise")."""

    description: str
    variant: str
    versus: str
    min_speedup: float
    where: Callable[[Case], bool] = lambda case: True
    allow_spread: bool = False


@dataclass(frozen=True)
class Case:
    """One shape and dtype: ``params`` are the spec's named sizes (seq, head_dim, heads, ...)."""

    dtype: str
    params: Mapping[str, int]

    def label(self) -> str:
        return f"{self.dtype} " + " ".join(f"{k}={v}" for k, v in self.params.items())

    def as_dict(self) -> dict[str, Any]:
        return {"dtype": self.dtype, "params": dict(self.params)}


@dataclass(frozen=True)
class BenchSpec:
    """A benchmark of one or more passes. Callables receive a :class:`Case`.

    - ``signature(dtype)``: ``triton.compile`` signature (CPU mode) of every variant's kernel.
    - ``constexprs(case)`` / ``compile_options(case)``: constexpr values and ``num_warps`` etc.;
      CPU mode compiles each distinct combination once.
    - ``make_inputs(case, device, generator)``: a dict of torch tensors (and scalars).
    - ``outputs``: keys of ``make_inputs``' dict the kernel writes (filled with NaN before a run).
    - ``launch(kernel, inputs, case)``: launch through ``@triton.jit`` and return what it returns.
    - ``reference(inputs, case)``: float64 expected output (or the checked part of it), and
      ``checked(inputs, case)``: the same part of the kernel's output.
    - ``ir_check(variant, off, on)``: ``None`` if the pass did what it should to the kernel's
      ``ir_stage`` text, else why not. Without one, the IR merely has to change.
    """

    name: str
    passes: tuple[str, ...]
    title: str
    variants: tuple[Variant, ...]
    shapes: tuple[Mapping[str, int], ...]
    dtypes: tuple[str, ...]
    signature: Callable[[str], dict[str, str]]
    constexprs: Callable[[Case], dict[str, Any]]
    compile_options: Callable[[Case], dict[str, Any]]
    make_inputs: Callable[[Case, Any, Any], dict[str, Any]]
    outputs: tuple[str, ...]
    launch: Launch
    reference: Callable[[Mapping[str, Any], Case], Any]
    checked: Callable[[Mapping[str, Any], Case], Any]
    tolerance: Mapping[str, float]
    metric: Metric = Metric()
    x_axis: str = ""
    quick_shapes: tuple[Mapping[str, int], ...] = ()
    quick_dtypes: tuple[str, ...] = ()
    ir_stage: str = "ttir"
    ir_check: IRPredicate | None = None
    targets: tuple[Target, ...] = ()
    notes: str = ""
    directory: Path | None = None

    def __post_init__(self) -> None:
        names = [v.name for v in self.variants]
        if len(set(names)) != len(names):
            raise TritonExtError(f"bench spec {self.name}: variant names must be unique, found {names}")
        for v in self.variants:
            if v.role == "pass" and not any(b.role == "baseline" and b.group == v.group for b in self.variants):
                raise TritonExtError(f"bench spec {self.name}: pass variant {v.name} has no baseline in group "
                                     f"{v.group!r}; add Variant(..., role='baseline', group={v.group!r})")
        for t in self.targets:
            for n in (t.variant, t.versus):
                if n not in names:
                    raise TritonExtError(f"bench spec {self.name}: target {t.description!r} names {n!r}; "
                                         f"variants are {names}")
        missing = [d for d in self.dtypes if d not in self.tolerance]
        if missing:
            raise TritonExtError(f"bench spec {self.name}: no tolerance for dtypes {missing}")

    def cases(self, quick: bool = False) -> list[Case]:
        shapes = self.quick_shapes if quick and self.quick_shapes else self.shapes
        dtypes = self.quick_dtypes if quick and self.quick_dtypes else self.dtypes
        return [Case(d, dict(s)) for d in dtypes for s in shapes]

    def baseline_of(self, variant: Variant) -> Variant:
        return next(b for b in self.variants if b.role == "baseline" and b.group == variant.group)


# --------------------------------------------------------------------------- #
# Finding specs
# --------------------------------------------------------------------------- #


def load_spec(path: Path | str) -> BenchSpec:
    """Import a ``bench.py`` (its folder first on ``sys.path``) and return its ``SPEC``."""
    path = Path(path).resolve()
    if not path.is_file():
        raise TritonExtError(f"{path}: no such bench spec; expected a bench.py defining SPEC", path=path)
    module_name = "triton_ext_bench_" + re.sub(r"\W", "_", str(path.parent.relative_to(path.anchor)))
    module = sys.modules.get(module_name)
    if module is None:
        sys.path.insert(0, str(path.parent))
        spec = importlib.util.spec_from_file_location(module_name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[module_name]
            raise
    found = getattr(module, "SPEC", None)
    if not isinstance(found, BenchSpec):
        raise TritonExtError(f"{path}: expected a module-level SPEC = BenchSpec(...), found {type(found).__name__}",
                             path=path)
    if found.directory is None:
        object.__setattr__(found, "directory", path.parent)
    return found


def _spec_paths() -> dict[str, tuple[Path, tuple[str, ...]]]:
    """Extension name -> (its bench.py, its pass names), for extensions that have one."""
    from ._manifest import load_manifest

    manifest = load_manifest()
    root = Path(settings.registry).resolve().parent
    out: dict[str, tuple[Path, tuple[str, ...]]] = {}
    for ext in manifest.extensions:
        path = (root / ext.directory / "bench.py") if not Path(ext.directory).is_absolute() else Path(ext.directory) / "bench.py"
        if path.is_file():
            out[ext.name] = (path, tuple(p.name for p in ext.passes))
    return out


def find_specs(names: Sequence[str]) -> list[BenchSpec]:
    """Specs for NAMEs (pass, extension or spec names, or bench.py paths); none: all of them."""
    known = _spec_paths() if not names or any(not n.endswith(".py") for n in names) else {}
    if not names:
        return [load_spec(p) for p, _ in known.values()]
    specs: list[BenchSpec] = []
    for name in names:
        if name.endswith(".py") or os.sep in name:
            specs.append(load_spec(name))
            continue
        hits = [p for ext, (p, passes) in known.items() if name == ext or name in passes]
        if not hits:
            hits = [p for p, _ in known.values() if load_spec(p).name == name]
        if not hits:
            raise TritonExtError(f"bench: no spec for {name!r}; specs exist for "
                                 f"{', '.join(known) or 'no extension'} (a bench.py beside the pass)")
        specs.extend(load_spec(p) for p in hits)
    return specs


# --------------------------------------------------------------------------- #
# CPU mode
# --------------------------------------------------------------------------- #


def top_level_loops(ir: str, indent: int = 4) -> int:
    """Number of ``scf.for`` ops directly in a function body of a TTIR/TTGIR module."""
    pad = " " * indent
    return len(re.findall(rf"^{pad}(?:%\S+(?:, %\S+)* = )?scf\.for ", ir, flags=re.M))


@dataclass
class CpuCheck:
    """The outcome of compiling one kernel combination with and without the spec's passes."""

    spec: str
    variant: str
    dtype: str
    constexprs: dict[str, Any]
    seconds: float
    problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None


def _compile_cpu(kernel: Any, spec: BenchSpec, case: Case, passes: tuple[str, ...], options: Mapping[str, Any]) -> Any:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    import triton_ext

    src = ASTSource(kernel, signature=spec.signature(case.dtype), constexprs=spec.constexprs(case))
    target = GPUTarget(*CPU_TARGET)
    opts = spec.compile_options(case)
    if not passes:
        return triton.compile(src, target=target, options=opts)
    with triton_ext.enabled(*passes, **{k.replace("-", "_"): v for k, v in options.items()}):
        return triton.compile(src, target=target, options=opts)


def check_cpu(spec: BenchSpec, quick: bool = False, log: Callable[[str], None] = print) -> list[CpuCheck]:
    """Compile each distinct (kernel, dtype, constexprs, options) of ``spec`` through cubin, with
    and without its passes for pass variants, and apply the IR predicate."""
    seen: dict[tuple[Any, ...], CpuCheck] = {}
    checks: list[CpuCheck] = []
    jobs: list[tuple[Variant, Case]] = []
    for case in spec.cases(quick):
        for v in spec.variants:
            key = (v.name, case.dtype, tuple(sorted(spec.constexprs(case).items())),
                   tuple(sorted(spec.compile_options(case).items())))
            if key not in seen:
                seen[key] = CpuCheck(spec.name, v.name, case.dtype, spec.constexprs(case), 0.0)
                jobs.append((v, case))
    compiled_off: dict[tuple[Any, ...], Any] = {}
    for i, (v, case) in enumerate(jobs, 1):
        start = time.perf_counter()
        check = CpuCheck(spec.name, v.name, case.dtype, spec.constexprs(case), 0.0)
        try:
            off_key = (id(v.kernel), case.dtype, tuple(sorted(spec.constexprs(case).items())),
                       tuple(sorted(spec.compile_options(case).items())))
            off = compiled_off.get(off_key)
            if off is None:
                off = compiled_off[off_key] = _compile_cpu(v.kernel, spec, case, (), {})
            if not off.asm.get("cubin"):
                check.problem = "compilation without the pass did not reach cubin"
            elif v.role == "pass":
                names = v.enabled_passes(spec.passes)
                on = _compile_cpu(v.kernel, spec, case, names, v.options)
                if not on.asm.get("cubin"):
                    check.problem = f"compilation with {', '.join(names)} did not reach cubin"
                else:
                    ir_off, ir_on = off.asm[spec.ir_stage], on.asm[spec.ir_stage]
                    if spec.ir_check is not None:
                        check.problem = spec.ir_check(v, ir_off, ir_on)
                    elif _strip_locations(ir_off) == _strip_locations(ir_on):
                        check.problem = (f"{', '.join(names)} left the {spec.ir_stage} of "
                                         f"{getattr(v.kernel, '__name__', v.name)} unchanged")
        except Exception as exc:  # a compile error is a failed check, reported with the case
            check.problem = f"{type(exc).__name__}: {exc}"
        check.seconds = time.perf_counter() - start
        checks.append(check)
        consts = " ".join(f"{k}={val}" for k, val in check.constexprs.items())
        status = "ok" if check.ok else f"FAIL: {check.problem}"
        log(f"[{i}/{len(jobs)}] {spec.name} {v.name:22} {case.dtype} {consts} ({check.seconds:.1f}s) {status}")
    return checks


def _strip_locations(ir: str) -> str:
    return "\n".join(line for line in re.sub(r"\s*loc\([^\n]*\)", "", ir).splitlines() if not line.startswith("#loc"))


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


def environment(device_name: str | None = None) -> dict[str, Any]:
    """Commit, GPU, driver, Triton/torch/CUDA versions and date of this run."""
    import triton

    def run(cmd: list[str]) -> str:
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=repo_root()).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    env: dict[str, Any] = {
        "commit": run(["git", "rev-parse", "HEAD"]) or "unknown",
        "dirty": bool(run(["git", "status", "--porcelain", "--untracked-files=no"])),
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


def run_case(spec: BenchSpec, case: Case, timing: Timing, log: Callable[[str], None],
             bench: bool = True) -> list[dict[str, Any]]:
    """Check every variant of one case against the reference and time it; one record per variant."""
    import torch
    import triton

    from . import _stages

    # Once a stages hook exists, Triton's JIT adds a "custom_pipeline" entry to every kernel's
    # specialization, so a kernel launched before the first pass variant installs the hook gets
    # another hash than the same kernel launched after it. Installing it up front keeps one
    # kernel per variant (and the timed-is-checked test meaningful).
    _stages.install()
    device = torch.device("cuda")
    seed = int.from_bytes(os.urandom(4), "little") & 0x7FFFFFFF
    generator = torch.Generator(device=device).manual_seed(seed)
    inputs = spec.make_inputs(case, device, generator)
    expected = spec.reference(inputs, case)
    tol = spec.tolerance[case.dtype]
    records: dict[str, dict[str, Any]] = {}
    hashes: dict[str, str] = {}
    for v in spec.variants:
        for key in spec.outputs:
            inputs[key].fill_(float("nan"))
        with _variant_scope(spec, v):
            kernel = spec.launch(v.kernel, inputs, case)
        torch.cuda.synchronize()
        got = spec.checked(inputs, case).to(torch.float64)
        err = (got - expected).abs().max().item()
        ok = math.isfinite(err) and err <= tol
        problem = None if ok else f"max abs error {err:.3e} > tolerance {tol:.1e}"
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
        cmd = [sys.executable, "-m", "triton_ext._bench", "--worker", str(job_file), str(result), f"[gpu {g}] "]
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


def _worker_main(job_file: str, result: str, prefix: str) -> int:
    job = json.loads(Path(job_file).read_text())
    records = _worker(job["paths"], [tuple(j) for j in job["jobs"]], job["quick"], Timing(**job["timing"]), prefix)
    Path(result).write_text(json.dumps(records))
    return 0


# --------------------------------------------------------------------------- #
# Targets and writers
# --------------------------------------------------------------------------- #


def _key(r: Mapping[str, Any]) -> tuple[Any, ...]:
    return (r["dtype"], tuple(sorted(r["params"].items())))


def evaluate_targets(spec: BenchSpec, records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """For each target: the cases it covers, the worst speedup, the bound it used, met or not."""
    by = {(r["variant"], _key(r)): r for r in records if r.get("ms")}
    out = []
    for t in spec.targets:
        rows = []
        for r in records:
            if r["variant"] != t.variant or not r.get("ms"):
                continue
            if not t.where(Case(r["dtype"], r["params"])):
                continue
            other = by.get((t.versus, _key(r)))
            if other is None:
                continue
            speedup = other["ms"] / r["ms"]
            bound = t.min_speedup - ((r["spread"] or 0) + (other["spread"] or 0) if t.allow_spread else 0)
            rows.append({"case": Case(r["dtype"], r["params"]).label(), "speedup": speedup, "bound": bound,
                         "met": speedup >= bound})
        worst = min(rows, key=lambda x: x["speedup"] - x["bound"]) if rows else None
        out.append({"description": t.description, "variant": t.variant, "versus": t.versus,
                    "min_speedup": t.min_speedup, "allow_spread": t.allow_spread, "cases": len(rows),
                    "met": bool(rows) and all(x["met"] for x in rows), "worst": worst, "rows": rows})
    return out


def build_report(spec: BenchSpec, records: list[dict[str, Any]], env: Mapping[str, Any], timing: Timing,
                 quick: bool) -> dict[str, Any]:
    return {
        "schema": SCHEMA_VERSION,
        "spec": spec.name,
        "title": spec.title,
        "passes": list(spec.passes),
        "metric": {"name": spec.metric.name, "formula": spec.metric.formula},
        "x_axis": spec.x_axis,
        "variants": [{"name": v.name, "role": v.role, "group": v.group,
                      "kernel": getattr(v.kernel, "__name__", str(v.kernel)), "options": dict(v.options)}
                     for v in spec.variants],
        "environment": dict(env),
        "settings": {**timing.__dict__, "quick": quick},
        "notes": spec.notes,
        "results": records,
        "targets": evaluate_targets(spec, records),
        "failures": sum(not r["ok"] for r in records),
    }


def write_json(report: Mapping[str, Any], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1, sort_keys=False) + "\n")
    return path


def _fmt(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def markdown_table(report: Mapping[str, Any]) -> str:
    """One row per case: the metric of every variant, then each pass variant's speedup over its
    baseline and over the hand-written variants."""
    variants = report["variants"]
    metric = report["metric"]["name"]
    by: dict[tuple[Any, ...], dict[str, Mapping[str, Any]]] = {}
    for r in report["results"]:
        by.setdefault(_key(r), {})[r["variant"]] = r
    params = list(report["results"][0]["params"]) if report["results"] else []
    passes = [v for v in variants if v["role"] == "pass"]
    hands = [v for v in variants if v["role"] == "handwritten"]
    ratio_cols = []
    for p in passes:
        base = next(v for v in variants if v["role"] == "baseline" and v["group"] == p["group"])
        ratio_cols.append((f"{p['name']} vs {base['name']}", p["name"], base["name"]))
        ratio_cols += [(f"{p['name']} vs {h['name']}", p["name"], h["name"]) for h in hands]
    head = ["dtype", *params, *[f"{v['name']} ({metric})" for v in variants], *[c[0] for c in ratio_cols]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key, row in by.items():
        first = next(iter(row.values()))
        cells = [first["dtype"], *[str(first["params"][p]) for p in params]]
        for v in variants:
            r = row.get(v["name"])
            cell = "-" if r is None or r.get("ms") is None else (_fmt(r["metric"]) if metric != "ms" else _fmt(r["ms"], 4))
            cells.append(cell + ("" if r is None or r["ok"] else " **FAIL**"))
        for _, a, b in ratio_cols:
            ra, rb = row.get(a), row.get(b)
            cells.append(_fmt(rb["ms"] / ra["ms"], 3) + "x" if ra and rb and ra.get("ms") and rb.get("ms") else "-")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_markdown(report: Mapping[str, Any], path: Path, chart: str | None, chart_note: str = "") -> Path:
    env = report["environment"]
    s = report["settings"]
    parts = [
        f"# Benchmark: {report['title']}",
        "",
        f"Pass(es): `{'`, `'.join(report['passes'])}`. Generated by `triton-ext bench {report['spec']}`; "
        f"do not edit by hand.",
        "",
        f"- GPU: {env.get('gpu', '?')} (driver {env.get('driver', '?')}, CUDA {env.get('cuda', '?')})",
        f"- Triton {env.get('triton')}, torch {env.get('torch', '?')}, Python {env.get('python')}",
        f"- Commit `{env.get('commit')}`{' (uncommitted changes)' if env.get('dirty') else ''}, {env.get('date')}",
        f"- Timing: `triton.testing.do_bench` median ({s['warmup_ms']} ms warm-up, {s['rep_ms']} ms of runs), "
        f"median of {s['rounds']} interleaved rounds; speedup = baseline time / variant time"
        + (" (quick subset)" if s.get("quick") else ""),
        f"- Metric: {report['metric']['name']}" + (f" = {report['metric']['formula']}" if report['metric']['formula'] else ""),
        f"- Correctness: every variant checked against a float64 reference on fresh random inputs: "
        f"{'all passed' if not report['failures'] else str(report['failures']) + ' FAILED'}",
    ]
    if report.get("notes"):
        parts += ["", report["notes"].strip()]
    parts += ["", "## Results", "", markdown_table(report)]
    if report["targets"]:
        parts += ["", "## Targets", "", "| target | cases | worst case | speedup | bound | met |", "|---|---|---|---|---|---|"]
        for t in report["targets"]:
            w = t["worst"]
            parts.append(f"| {t['description']} | {t['cases']} | {w['case'] if w else '-'} | "
                         f"{_fmt(w['speedup'], 3) if w else '-'} | {_fmt(w['bound'], 3) if w else '-'} | "
                         f"{'yes' if t['met'] else '**no**'} |")
    parts += ["", "## Chart", ""]
    parts.append(f"![{report['spec']}]({chart})" if chart else f"No chart: {chart_note or 'matplotlib is not installed'}.")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts) + "\n")
    return path


def write_chart(report: Mapping[str, Any], path: Path) -> str | None:
    """A PNG with one panel per dtype and non-x parameter combination; None if no matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    x_axis = report.get("x_axis") or ""
    results = [r for r in report["results"] if r.get("ms") is not None]
    if not results or x_axis not in results[0]["params"]:
        return None
    panel_of = lambda r: (r["dtype"],) + tuple((k, v) for k, v in r["params"].items() if k != x_axis and k != "heads")  # noqa: E731
    panels = sorted({panel_of(r) for r in results}, key=str)
    cols = min(2, len(panels))
    rows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(6 * cols, 4 * rows), squeeze=False)
    metric = report["metric"]["name"]
    for ax, panel in zip(axes.flat, panels):
        for v in report["variants"]:
            pts = sorted((r["params"][x_axis], r["metric"] if metric != "ms" else r["ms"])
                         for r in results if r["variant"] == v["name"] and panel_of(r) == panel)
            if pts:
                style = {"baseline": "--", "pass": "-", "handwritten": ":"}[v["role"]]
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", label=v["name"])
        ax.set_xscale("log", base=2)
        ax.set_xlabel(x_axis)
        ax.set_ylabel(metric)
        ax.set_title(" ".join([panel[0]] + [f"{k}={v}" for k, v in panel[1:]]))
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.suptitle(f"{report['title']} on {report['environment'].get('gpu', '?')}")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")


def write_chart_svg(report: Mapping[str, Any], path: Path) -> str | None:
    """The same panels as :func:`write_chart`, drawn as SVG without any plotting library."""
    from xml.sax.saxutils import escape

    x_axis = report.get("x_axis") or ""
    results = [r for r in report["results"] if r.get("ms") is not None]
    if not results or x_axis not in results[0]["params"]:
        return None
    metric = report["metric"]["name"]
    panel_of = lambda r: (r["dtype"],) + tuple((k, v) for k, v in r["params"].items() if k != x_axis and k != "heads")  # noqa: E731
    panels = sorted({panel_of(r) for r in results}, key=str)
    w, h, m = 460, 320, 55
    cols = min(2, len(panels))
    rows = math.ceil(len(panels) / cols)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w * cols}" height="{h * rows + 40}" '
           f'font-family="sans-serif" font-size="11">', '<rect width="100%" height="100%" fill="white"/>',
           f'<text x="{w * cols / 2}" y="20" text-anchor="middle" font-size="14">'
           f'{escape(report["title"])} on {escape(str(report["environment"].get("gpu", "?")))}</text>']
    for i, panel in enumerate(panels):
        ox, oy = (i % cols) * w, 40 + (i // cols) * h
        mine = [r for r in results if panel_of(r) == panel]
        xs = sorted({r["params"][x_axis] for r in mine})
        ys = [r["metric"] if metric != "ms" else r["ms"] for r in mine]
        lo, hi = min(0.0, min(ys)), max(ys) * 1.08 or 1.0
        lx = [math.log2(x) for x in xs]
        sx = lambda x: ox + m + (math.log2(x) - lx[0]) / ((lx[-1] - lx[0]) or 1) * (w - 2 * m)  # noqa: E731
        sy = lambda y: oy + h - m + (y - lo) / (hi - lo) * -(h - 2 * m)  # noqa: E731
        title = " ".join([panel[0]] + [f"{k}={v}" for k, v in panel[1:]])
        out.append(f'<text x="{ox + w / 2}" y="{oy + 20}" text-anchor="middle">{escape(title)}</text>')
        out.append(f'<polyline fill="none" stroke="black" points="{ox + m},{oy + m - 10} {ox + m},{oy + h - m} '
                   f'{ox + w - m},{oy + h - m}"/>')
        for x in xs:
            out.append(f'<text x="{sx(x):.1f}" y="{oy + h - m + 15}" text-anchor="middle">{x}</text>')
        for k in range(5):
            y = lo + (hi - lo) * k / 4
            out.append(f'<text x="{ox + m - 5}" y="{sy(y) + 4:.1f}" text-anchor="end">{y:.3g}</text>')
            out.append(f'<line x1="{ox + m}" x2="{ox + w - m}" y1="{sy(y):.1f}" y2="{sy(y):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{ox + w / 2}" y="{oy + h - m + 32}" text-anchor="middle">{escape(x_axis)}</text>')
        out.append(f'<text x="{ox + 12}" y="{oy + h / 2}" transform="rotate(-90 {ox + 12} {oy + h / 2})" '
                   f'text-anchor="middle">{escape(metric)}</text>')
        for j, v in enumerate(report["variants"]):
            pts = sorted((r["params"][x_axis], r["metric"] if metric != "ms" else r["ms"])
                         for r in mine if r["variant"] == v["name"])
            if not pts:
                continue
            color = _COLORS[j % len(_COLORS)]
            dash = {"baseline": ' stroke-dasharray="6,3"', "pass": "", "handwritten": ' stroke-dasharray="2,2"'}[v["role"]]
            coords = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
            out.append(f'<polyline fill="none" stroke="{color}" stroke-width="2"{dash} points="{coords}"/>')
            out += [f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="2.5" fill="{color}"/>' for x, y in pts]
            ly = oy + m + 14 * j
            out.append(f'<line x1="{ox + w - m - 120}" x2="{ox + w - m - 100}" y1="{ly}" y2="{ly}" stroke="{color}" '
                       f'stroke-width="2"{dash}/><text x="{ox + w - m - 95}" y="{ly + 4}">{escape(v["name"])}</text>')
    out.append("</svg>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n")
    return path.name


def summary_markdown(reports: Sequence[Mapping[str, Any]], link_base: Path | None = None) -> str:
    """One row per (spec, pass variant): geometric-mean and worst speedup over its baseline and
    over the hand-written best, and whether the spec's targets are met."""
    lines = ["| pass | benchmark | variant | GPU | speedup vs unchanged (geomean, min..max) | "
             "vs hand-written (geomean) | targets met | details |", "|---|---|---|---|---|---|---|---|"]
    for rep in reports:
        by: dict[tuple[Any, ...], dict[str, Mapping[str, Any]]] = {}
        for r in rep["results"]:
            if r.get("ms"):
                by.setdefault(_key(r), {})[r["variant"]] = r
        variants = rep["variants"]
        met = sum(t["met"] for t in rep["targets"])
        link = rep.get("_path", "")
        for p in (v for v in variants if v["role"] == "pass"):
            base = next(v["name"] for v in variants if v["role"] == "baseline" and v["group"] == p["group"])
            hands = [v["name"] for v in variants if v["role"] == "handwritten"]
            sb = [row[base]["ms"] / row[p["name"]]["ms"] for row in by.values() if base in row and p["name"] in row]
            sh = [row[h]["ms"] / row[p["name"]]["ms"] for row in by.values() for h in hands if h in row and p["name"] in row]
            geo = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None  # noqa: E731
            lines.append(
                f"| `{'`, `'.join(rep['passes'])}` | {rep['title']} | {p['name']} | {rep['environment'].get('gpu', '?')} | "
                f"{_fmt(geo(sb), 3)}x ({_fmt(min(sb) if sb else None, 2)}..{_fmt(max(sb) if sb else None, 2)}) | "
                f"{_fmt(geo(sh), 3) + 'x' if sh else '-'} | {met}/{len(rep['targets'])} | "
                f"[{Path(link).name or 'BENCHMARK.md'}]({link}) |")
    return "\n".join(lines)


def write_outputs(report: Mapping[str, Any], out_dir: Path) -> list[Path]:
    """``bench-<gpu>.json``, the chart (PNG with matplotlib, SVG otherwise) and ``BENCHMARK.md``."""
    slug = gpu_slug(report["environment"].get("gpu", "gpu"))
    written = [write_json(report, out_dir / f"bench-{slug}.json")]
    chart = write_chart(report, out_dir / f"bench-{slug}.png") or write_chart_svg(report, out_dir / f"bench-{slug}.svg")
    if chart:
        written.append(out_dir / chart)
    written.append(write_markdown(report, out_dir / "BENCHMARK.md", chart, "no results to plot"))
    return written


# --------------------------------------------------------------------------- #
# The command
# --------------------------------------------------------------------------- #


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="triton-ext bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("names", nargs="*", metavar="NAME", help="pass, extension or spec names, or bench.py paths")
    p.add_argument("--cpu", action="store_true", help="compile-only check through cubin (no GPU, no torch)")
    p.add_argument("--out", type=Path, help="output folder (default: each spec's own folder; "
                                             "with several specs, OUT/<spec>)")
    p.add_argument("--gpus", type=int, default=1, help="GPUs of this host to use, one process each")
    p.add_argument("--quick", action="store_true", help="the spec's quick subset of shapes and dtypes")
    p.add_argument("--rounds", type=int, default=Timing.rounds, help="interleaved timing rounds per variant")
    p.add_argument("--rep-ms", type=int, default=Timing.rep_ms, help="do_bench repetition time per round (ms)")
    p.add_argument("--warmup-ms", type=int, default=Timing.warmup_ms, help="do_bench warm-up time (ms)")
    p.add_argument("--commit", help="commit to record when the checkout has no git metadata (default: git rev-parse HEAD)")
    p.add_argument("--from-json", type=Path, metavar="FILE",
                   help="rewrite BENCHMARK.md and the chart from a bench-<gpu>.json (e.g. where matplotlib exists)")
    p.add_argument("--compare", metavar="BASELINE", help="regression gate: compare results with committed ones "
                   "(see triton_ext/_bench_compare.py; --current FILE|DIR, --tolerance, --markdown)")
    p.add_argument("--summary", action="store_true",
                   help="print a markdown summary of the committed bench-*.json files instead of running")
    return p


def _out_dir(spec: BenchSpec, out: Path | None, many: bool) -> Path:
    if out is None:
        return Path(spec.directory or ".")
    return out / spec.name if many else out


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--worker"]:
        return _worker_main(*argv[1:4])
    if any(a == "--compare" or a.startswith("--compare=") for a in argv):  # issue 19: regression gate
        from ._bench_compare import main as compare_main

        return compare_main(argv)
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


def _main_gpu(specs: Sequence[BenchSpec], args: argparse.Namespace, timing: Timing) -> int:
    try:
        import torch
    except ImportError:
        raise TritonExtError("bench: GPU mode needs torch (pip install torch); use --cpu for the compile check")
    if not torch.cuda.is_available():
        raise TritonExtError("bench: no CUDA GPU visible; use --cpu for the compile-only check")
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
