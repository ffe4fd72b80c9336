"""``triton-ext tune``: find the best pass set for a benchmark's kernels (issue 19.3).

    triton-ext tune SPEC [--candidates a,b] [--sweep pass.flag=v1,v2 ...] [--quick] [--cpu] [--out FILE]

SPEC is a bench spec (a pass or extension name with a ``bench.py``, or a path to one), or a
kernel of the real-world corpus (``liger_rms_norm_fwd``: tests/realworld, in a checkout, with
torch and the ``realworld`` extra; its package's launch and sizes). For every baseline kernel of
the spec and every case (shape and dtype), or for the corpus kernel:

1. *applicability* (CPU, real compiles for sm_90 through cubin): the kernel is compiled with no
   pass and with each candidate (each registry optimization pass, or ``--candidates``; each
   ``--sweep`` value as its own candidate). A candidate whose PTX (locations stripped) equals the
   stock kernel's does not apply to that kernel and is dropped;
2. *combinations*: every pair of applicable passes (their default options) is added;
3. *timing* (GPU, skipped with ``--cpu``): the spec's own checker and timer
   (``triton_ext.bench.gpu.run_case``) runs the candidates as pass variants of the baseline: output
   checked against the float64 reference, interleaved ``do_bench`` rounds, spread recorded.

   A corpus kernel is timed here instead: no pass and every candidate in interleaved rounds
   (:func:`triton_ext._timing.interleaved_rounds` of :func:`triton_ext.testing.gpu_time_ms`: each
   round reads every candidate in order and then in reverse order) on the package launcher's inputs, each candidate's every
   tensor argument compared with no pass's (bitwise, or within the dtype's tolerance for
   kernels marked nondeterministic).

It prints a table per case (time, speedup over no pass, spread, correct) and the best
candidate, as a ``triton_ext.Config(..., passes=...)`` line; ``--out`` writes it all as JSON.
The best is the fastest correct candidate that beats no pass by more than the noise (the
transparent mode's rule: for a corpus kernel, faster in every paired round and by 1% at the
median, :func:`triton_ext._auto.winners`; for a bench spec, faster by more than the larger of
the two timings' spreads); otherwise no pass.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import itertools
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

from .._errors import TritonExtError

__all__ = ["Candidate", "candidates_for", "applicable", "tune_spec", "corpus_kernel", "tune_corpus", "main"]


@dataclass(frozen=True)
class Candidate:
    passes: tuple[str, ...]
    options: tuple[tuple[str, Any], ...] = ()  # flag -> value, applied to the passes declaring it

    @property
    def label(self) -> str:
        if not self.passes:
            return "no pass"
        opts = "".join(f"{{{k}={v}}}" for k, v in self.options)
        return "+".join(self.passes) + opts

    def config_passes(self) -> dict[str, dict[str, Any]]:
        from .._manifest import load_manifest

        manifest = load_manifest()
        out: dict[str, dict[str, Any]] = {}
        for name in self.passes:
            declared = {o.name for s in manifest.resolve(name) for o in s.options}
            out[name] = {k: v for k, v in self.options if k in declared}
        return out


def _parse_sweep(items: Sequence[str]) -> list[Candidate]:
    from .._manifest import load_manifest

    manifest = load_manifest()
    out: list[Candidate] = []
    for item in items:
        m = re.fullmatch(r"([a-z0-9_]+)\.([a-z0-9-]+)=(.+)", item)
        if not m:
            raise TritonExtError(f"--sweep {item!r}: expected PASS.FLAG=V1,V2 (my_pass.some-flag=4,8,16)")
        name, flag, values = m.groups()
        spec = manifest.find_pass(name)
        option = spec.option(flag)
        for text in values.split(","):
            value: Any = {"int": int, "float": float, "str": str, "bool": lambda t: t.lower() == "true"}[option.type](text)
            out.append(Candidate((name,), ((flag, option.coerce(value)),)))
    return out


def candidates_for(names: Sequence[str], sweep: Sequence[str] = ()) -> list[Candidate]:
    """Single-pass candidates: ``names`` (default: every built pass marked ``auto: true``) plus sweeps."""
    from .._manifest import load_manifest

    manifest = load_manifest()
    if not names:
        names = [p.name for p in manifest.passes if p.adds_pass and p.auto  # registry `auto: true`
                 and manifest.extension_of(p).applies_to("cuda", 90)
                 and manifest.extension_of(p).library_path().exists()]
    for name in names:
        manifest.resolve(name)  # unknown names: UnknownPassError with suggestions
    swept = _parse_sweep(sweep)
    swept_names = {c.passes[0] for c in swept}
    return [Candidate((n,)) for n in names if n not in swept_names] + swept


def _ptx(kernel: Any) -> str:
    text = kernel.asm.get("ptx", "")
    return "\n".join(l for l in text.splitlines() if not l.lstrip().startswith((".loc", ".file", "//")))


def applicable(spec: Any, variant: Any, case: Any, candidates: Sequence[Candidate]) -> dict[str, Any]:
    """Compile ``variant``'s kernel for ``case`` with each candidate; which change its PTX."""
    from ..bench.cpu import compile_cpu

    stock = _ptx(compile_cpu(variant.kernel, spec, case, (), {}))
    verdict: dict[str, Any] = {}
    for c in candidates:
        try:
            kernel = compile_cpu(variant.kernel, spec, case, c.passes, dict(c.options))
            verdict[c.label] = _ptx(kernel) != stock
        except Exception as exc:  # a candidate that breaks the compile does not apply
            verdict[c.label] = f"{type(exc).__name__}: {exc}"
    return verdict


def _with_pairs(singles: Sequence[Candidate]) -> list[Candidate]:
    plain = [c for c in singles if not c.options]
    pairs = [Candidate(a.passes + b.passes) for a, b in itertools.combinations(plain, 2)]
    return list(singles) + pairs


def tune_spec(spec: Any, candidates: Sequence[Candidate], quick: bool, cpu: bool, log: Any = print) -> list[dict[str, Any]]:
    from ..bench import Timing, Variant
    from ..bench.gpu import run_case

    results: list[dict[str, Any]] = []
    baselines = [v for v in spec.variants if v.role == "baseline"]
    for case in spec.cases(quick):
        for base in baselines:
            verdict = applicable(spec, base, case, candidates)
            singles = [c for c in candidates if verdict.get(c.label) is True]
            tried = _with_pairs(singles)
            log(f"{spec.name} {base.name} {case.label()}: applicable {[c.label for c in singles] or 'none'}")
            row: dict[str, Any] = {"spec": spec.name, "kernel": base.name, **case.as_dict(),
                                   "applicable": verdict, "candidates": [c.label for c in tried], "timings": None,
                                   "best": None}
            if not cpu and tried:
                variants = [dataclasses.replace(base, group="tune")]
                names = {}
                for i, c in enumerate(tried):
                    name = f"tune{i}"
                    names[name] = c
                    variants.append(Variant(name, base.kernel, "pass", group="tune", options=dict(c.options),
                                            passes=c.passes))
                derived = dataclasses.replace(spec, variants=tuple(variants), targets=(), ir_check=None)
                records = run_case(derived, case, Timing(), log=lambda s: None)
                stock = next(r for r in records if r["role"] == "baseline")
                table = []
                for r in records:
                    c = names.get(r["variant"], Candidate(()))
                    table.append({"candidate": c.label, "passes": c.config_passes() if c.passes else {},
                                  "ms": r["ms"], "speedup": stock["ms"] / r["ms"] if r["ms"] else None,
                                  "spread": r["spread"], "ok": r["ok"], "problem": r["problem"]})
                best = _best(table)
                row.update(timings=table, best=best)
                for t in table:
                    log(f"  {t['candidate']:40} {t['ms']:.4f} ms  {t['speedup']:.3f}x  spread "
                        f"{100 * (t['spread'] or 0):.1f}%  {'ok' if t['ok'] else 'FAIL ' + str(t['problem'])}")
                if best:
                    log(f"  best: {best['candidate']} ({best['speedup']:.3f}x) -> "
                        f"triton_ext.Config({{...}}, passes={json.dumps(best['passes'])})")
            results.append(row)
    return results


def _best(table: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The fastest correct row that beats no pass by more than both rows' spreads; else no pass."""
    from .._auto import MARGIN

    good = [t for t in table if t["ok"] and t["ms"]]
    stock = next((t for t in good if not t["passes"]), None)
    if stock is None:
        return min(good, key=lambda t: t["ms"]) if good else None
    faster = [t for t in good if t["passes"] and t["ms"] < stock["ms"] * (1 - max(MARGIN, t["spread"] or 0,
                                                                                  stock["spread"] or 0))]
    return min(faster, key=lambda t: t["ms"]) if faster else stock


def corpus_kernel(name: str) -> Any | None:
    """The real-world corpus kernel ``name`` (tests/realworld of this checkout), or None."""
    from ..testing import repo_root

    root = repo_root()
    if not (root / "tests" / "realworld" / "realworld_kernels.py").is_file():
        return None
    from .._modules import import_file

    try:
        import_file(root / "tests", name="tests")  # the checkout's tests package, by its path
        from tests.realworld.realworld_kernels import BY_NAME
    except ImportError as exc:
        raise TritonExtError(f"tune: {name!r} is no bench spec, and the real-world corpus cannot be imported "
                             f"({exc}); it needs torch and the 'realworld' extra (bash tools/setup.sh)") from exc
    return BY_NAME.get(name)


def tune_corpus(kernel: Any, candidates: Sequence[Candidate], cpu: bool, rounds: int = 4,
                log: Any = print) -> dict[str, Any]:
    """Applicability (CPU compiles through cubin) and, unless ``cpu``, timing of one corpus kernel."""
    import triton
    from triton.compiler import ASTSource

    import triton_ext

    from ..testing import CUDA90
    from tests.realworld.realworld_kernels import Tensors, compile_args

    fn = kernel.fn()
    meta = kernel.build(Tensors("meta"))
    signature, constexprs, attrs = compile_args(fn, meta)
    options = {"num_warps": meta.num_warps, "num_stages": meta.num_stages}

    def compile_with(c: Candidate) -> Any:
        src = ASTSource(fn, signature=signature, constexprs=constexprs, attrs=attrs)
        if not c.passes:
            return triton.compile(src, target=CUDA90, options=options)
        with triton_ext.enabled(*c.passes, **{k.replace("-", "_"): v for k, v in c.options}):
            return triton.compile(src, target=CUDA90, options=options)

    stock = _ptx(compile_with(Candidate(())))
    verdict: dict[str, Any] = {}
    for c in candidates:
        try:
            verdict[c.label] = _ptx(compile_with(c)) != stock
        except Exception as exc:  # a candidate that breaks the compile does not apply
            verdict[c.label] = f"{type(exc).__name__}: {exc}"
    singles = [c for c in candidates if verdict.get(c.label) is True]
    tried = _with_pairs(singles)
    log(f"{kernel.name} ({kernel.package}): applicable {[c.label for c in singles] or 'none'}")
    row: dict[str, Any] = {"kernel": kernel.name, "package": kernel.package, "num_warps": meta.num_warps,
                           "num_stages": meta.num_stages, "applicable": verdict,
                           "candidates": [c.label for c in tried], "timings": None, "best": None}
    if cpu or not tried:
        return row
    row["timings"], row["best"] = _time_corpus(kernel, tried, rounds)
    for t in row["timings"]:
        log(f"  {t['candidate']:48} {t['ms']:.4f} ms  {t['speedup']:.3f}x  spread {100 * t['spread']:.1f}%  "
            f"{'ok' if t['ok'] else 'FAIL ' + str(t['problem'])}")
    best = row["best"]
    log(f"  best: {best['candidate']} ({best['speedup']:.3f}x) -> triton_ext.Config({{...}}, "
        f"passes={json.dumps(best['passes'])}, num_warps={meta.num_warps}, num_stages={meta.num_stages})")
    return row


def _time_corpus(kernel: Any, tried: Sequence[Candidate], rounds: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    import statistics

    import torch

    import triton_ext

    from .._auto import paired_ratios, spread, winners
    from .._timing import ReadingPlan, flush_buffer, gpu_time_ms, interleaved_rounds
    from tests.realworld.check_gpu import _clone, _same
    from tests.realworld.realworld_kernels import Tensors

    fn = kernel.fn()
    launch = kernel.build(Tensors("cuda", 0))

    def scope(c: Candidate) -> Any:
        """The candidate's pass set, entered once around many launches (entering resolves names)."""
        opts = {k.replace("-", "_"): v for k, v in c.options}
        return triton_ext.enabled(*c.passes, **opts) if c.passes else _nothing()

    def launch_once(args: dict[str, Any]) -> None:
        fn[launch.grid](**args, num_warps=launch.num_warps, num_stages=launch.num_stages)

    def run(c: Candidate, args: dict[str, Any]) -> None:
        with scope(c):
            launch_once(args)

    everyone = [Candidate(()), *tried]
    base = _clone(launch.args)
    run(everyone[0], base)
    problems: dict[str, str | None] = {}
    for c in tried:
        got = _clone(launch.args)
        run(c, got)
        torch.cuda.synchronize()
        bad = [f"{k}: {_same(base[k], v, kernel.nondeterministic)[1]}" for k, v in got.items()
               if isinstance(v, torch.Tensor) and not _same(base[k], v, kernel.nondeterministic)[0]]
        problems[c.label] = "; ".join(bad) or None
    args = _clone(launch.args)
    by_label = {c.label: c for c in everyone}
    flush = flush_buffer()
    plans = {label: ReadingPlan() for label in by_label}

    def time_one(label: str) -> float:
        with scope(by_label[label]):
            return gpu_time_ms(lambda: launch_once(args), rep_ms=12.5, flush=flush, plan=plans[label])

    ms = interleaved_rounds(list(by_label), time_one, rounds)
    del flush
    stock_ms = statistics.median(ms["no pass"])
    table = []
    for c in everyone:
        med = statistics.median(ms[c.label])
        table.append({"candidate": c.label, "passes": c.config_passes() if c.passes else {}, "ms": med,
                      "rounds_ms": ms[c.label], "speedup": stock_ms / med, "spread": spread(ms[c.label]),
                      "paired_min": min(paired_ratios({"": ms["no pass"], "x": ms[c.label]}, "x")),
                      "ok": problems.get(c.label) is None, "problem": problems.get(c.label)})
    ok = {"": ms["no pass"], **{t["candidate"]: ms[t["candidate"]] for t in table[1:] if t["ok"]}}
    found = winners(ok)
    best = next(t for t in table if t["candidate"] == (found[0] if found else "no pass"))
    return table, best


@contextlib.contextmanager
def _nothing() -> Iterator[None]:
    yield


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="triton-ext tune",
        description="Find the best pass set for a benchmark's kernels: which passes change each "
                    "kernel (CPU compiles), then which are faster (GPU timing).")
    parser.add_argument("spec", help="bench spec (pass or extension name with a bench.py, or a bench.py path) or "
                        "a real-world corpus kernel (tests/realworld, e.g. liger_rms_norm_fwd)")
    parser.add_argument("--candidates", default="", metavar="A,B", help="passes to try (default: every built "
                        "optimization pass for cuda:90)")
    parser.add_argument("--sweep", action="append", default=[], metavar="PASS.FLAG=V1,V2",
                        help="try each value of a pass option as its own candidate")
    parser.add_argument("--quick", action="store_true", help="the spec's quick shapes and dtypes")
    parser.add_argument("--cpu", action="store_true", help="applicability only (compiles; no GPU)")
    parser.add_argument("--out", type=Path, help="write the results as JSON")
    args = parser.parse_args(list(argv) if argv is not None else None)
    from ..bench import find_specs

    try:
        try:
            specs = find_specs([args.spec])
            kernel = None
        except TritonExtError as exc:
            kernel = corpus_kernel(args.spec) if not args.spec.endswith(".py") else None
            if kernel is None:
                raise TritonExtError(f"{exc}; nor is {args.spec!r} a kernel of the real-world corpus "
                                     f"(tests/realworld/realworld_kernels.py)") from None
            specs = []
        candidates = candidates_for([c for c in args.candidates.split(",") if c], args.sweep)
        if not args.cpu:
            try:
                import torch
            except ImportError:
                raise TritonExtError("tune: timing needs torch and a GPU; use --cpu for applicability only") from None
            if not torch.cuda.is_available():
                raise TritonExtError("tune: no CUDA GPU visible; use --cpu for applicability only")
        if kernel is not None:
            results = [tune_corpus(kernel, candidates, args.cpu)]
        else:
            results = [r for spec in specs for r in tune_spec(spec, candidates, args.quick, args.cpu)]
    except TritonExtError as exc:
        print(f"triton-ext tune: error: {exc}", file=sys.stderr)
        return 1
    if args.out:
        args.out.write_text(json.dumps(results, indent=2, default=str))
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
