"""``triton-ext tune``: find the best pass set for a benchmark's kernels (issue 19.3).

    triton-ext tune SPEC [--candidates a,b] [--sweep pass.flag=v1,v2 ...] [--quick] [--cpu] [--out FILE]

SPEC is a bench spec (a pass or extension name with a ``bench.py``, or a path to one). For every
baseline kernel of the spec and every case (shape and dtype):

1. *applicability* (CPU, real compiles for sm_90 through cubin): the kernel is compiled with no
   pass and with each candidate (each registry optimization pass, or ``--candidates``; each
   ``--sweep`` value as its own candidate). A candidate whose PTX (locations stripped) equals the
   stock kernel's does not apply to that kernel and is dropped;
2. *combinations*: every pair of applicable passes (their default options) is added;
3. *timing* (GPU, skipped with ``--cpu``): the spec's own checker and timer
   (``triton_ext.bench.gpu.run_case``) runs the candidates as pass variants of the baseline: output
   checked against the float64 reference, interleaved ``do_bench`` rounds, spread recorded.

It prints a table per case (time, speedup over no pass, spread, correct) and the best
candidate, as a ``triton_ext.Config(..., passes=...)`` line; ``--out`` writes it all as JSON.
The best is the fastest correct candidate; no pass wins unless a candidate is faster.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from .._errors import TritonExtError

__all__ = ["Candidate", "candidates_for", "applicable", "tune_spec", "main"]


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
            raise TritonExtError(f"--sweep {item!r}: expected PASS.FLAG=V1,V2 (grid_swizzle.group-size=4,8,16)")
        name, flag, values = m.groups()
        spec = manifest.find_pass(name)
        option = spec.option(flag)
        for text in values.split(","):
            value: Any = {"int": int, "float": float, "str": str, "bool": lambda t: t.lower() == "true"}[option.type](text)
            out.append(Candidate((name,), ((flag, option.coerce(value)),)))
    return out


def candidates_for(names: Sequence[str], sweep: Sequence[str] = ()) -> list[Candidate]:
    """Single-pass candidates: ``names`` (default: every built optimization pass) plus sweeps."""
    from .._auto import NOT_OPTIMIZATIONS
    from .._manifest import load_manifest

    manifest = load_manifest()
    if not names:
        names = [p.name for p in manifest.passes if p.adds_pass
                 and manifest.extension_of(p).name not in NOT_OPTIMIZATIONS
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
    from ..bench.cpu import _compile_cpu

    stock = _ptx(_compile_cpu(variant.kernel, spec, case, (), {}))
    verdict: dict[str, Any] = {}
    for c in candidates:
        try:
            kernel = _compile_cpu(variant.kernel, spec, case, c.passes, dict(c.options))
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
                good = [t for t in table if t["ok"] and t["ms"]]
                best = min(good, key=lambda t: t["ms"]) if good else None
                row.update(timings=table, best=best)
                for t in table:
                    log(f"  {t['candidate']:40} {t['ms']:.4f} ms  {t['speedup']:.3f}x  spread "
                        f"{100 * (t['spread'] or 0):.1f}%  {'ok' if t['ok'] else 'FAIL ' + str(t['problem'])}")
                if best:
                    log(f"  best: {best['candidate']} ({best['speedup']:.3f}x) -> "
                        f"triton_ext.Config({{...}}, passes={json.dumps(best['passes'])})")
            results.append(row)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="triton-ext tune", description=__doc__.split("\n\n")[0])
    parser.add_argument("spec", help="bench spec: pass or extension name with a bench.py, or a bench.py path")
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
        specs = find_specs([args.spec])
        candidates = candidates_for([c for c in args.candidates.split(",") if c], args.sweep)
        if not args.cpu:
            try:
                import torch
            except ImportError:
                raise TritonExtError("tune: timing needs torch and a GPU; use --cpu for applicability only") from None
            if not torch.cuda.is_available():
                raise TritonExtError("tune: no CUDA GPU visible; use --cpu for applicability only")
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
