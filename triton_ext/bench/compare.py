"""``triton-ext bench --compare BASELINE``: a regression gate over benchmark results (issue 19.6).

    triton-ext bench --compare BASELINE [--current CURRENT] [--markdown]

BASELINE and CURRENT are ``bench-<gpu>.json`` files written by ``triton-ext bench`` or folders
searched for them (CURRENT defaults to the checkout, where a bench run just wrote its files).
Reports are paired by spec and file name (so by GPU); results within them by variant, dtype and
shape. A result *regresses* when its performance (the spec's metric, else 1 / time) falls below
the baseline's by more than the two runs' run-to-run spreads together::

    current_perf < baseline_perf * (1 - (baseline_spread + current_spread + tolerance))

where a spread is ``(max - min) / median`` of a result's interleaved timing rounds, as the bench
records it, and ``--tolerance`` (default 0) adds a fixed margin. A result that was correct in the
baseline and is wrong now also fails the gate. Results only in one side are listed, not failed
(a ``--quick`` run covers fewer shapes). Exit status: 0 no regression, 1 regressions or errors.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from .._errors import TritonExtError
from .._settings import repo_root

__all__ = ["Comparison", "compare_reports", "find_reports", "markdown", "main"]

_SKIP_DIRS = {".git", ".venv", "build", "node_modules", "__pycache__"}


@dataclass(frozen=True)
class Comparison:
    spec: str
    file: str
    variant: str
    case: str
    baseline: float | None  # performance (metric or 1/ms)
    current: float | None
    allowed_drop: float  # fraction
    status: str  # ok | regressed | improved | wrong | missing | new
    unit: str = ""

    @property
    def ratio(self) -> float | None:
        if self.baseline and self.current:
            return self.current / self.baseline
        return None


def _case(r: Mapping[str, Any]) -> str:
    params = ", ".join(f"{k}={v}" for k, v in r.get("params", {}).items())
    return f"{r.get('dtype', '')} {params}".strip()


def _key(r: Mapping[str, Any]) -> tuple[Any, ...]:
    return (r.get("variant"), r.get("dtype"), tuple(sorted((r.get("params") or {}).items())))


def _perf(r: Mapping[str, Any]) -> float | None:
    if r.get("metric"):
        return float(r["metric"])
    if r.get("ms"):
        return 1.0 / float(r["ms"])
    return None


def _load(path: Path) -> dict[str, Any]:
    try:
        report = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise TritonExtError(f"{path}: cannot read a bench report ({exc}); expected a bench-<gpu>.json "
                             f"written by triton-ext bench", path=path) from None
    if not isinstance(report, dict) or "results" not in report or "spec" not in report:
        raise TritonExtError(f"{path}: not a bench report (expected the keys 'spec' and 'results' that "
                             f"triton-ext bench writes)", path=path)
    return report


def find_reports(root: Path) -> dict[tuple[str, str], tuple[Path, dict[str, Any]]]:
    """(spec, file name) -> (path, report) for a file, or every bench-*.json under a folder."""
    if not root.exists():
        raise TritonExtError(f"{root}: no such file or folder; expected a bench-<gpu>.json or a folder with them",
                             path=root)
    paths: Iterable[Path]
    if root.is_file():
        paths = [root]
    else:
        paths = sorted(p for p in root.rglob("bench-*.json") if not (_SKIP_DIRS & set(p.relative_to(root).parts))
                       and re.fullmatch(r"bench-[a-z0-9]+\.json", p.name))  # bench-<gpu>.json reports only
    out: dict[tuple[str, str], tuple[Path, dict[str, Any]]] = {}
    for path in paths:
        report = _load(path)
        out[(report["spec"], path.name)] = (path, report)
    return out


def compare_reports(baseline: Mapping[str, Any], current: Mapping[str, Any], file: str = "",
                    tolerance: float = 0.0) -> list[Comparison]:
    """Compare two reports of one spec, result by result."""
    spec = str(baseline.get("spec"))
    unit = (baseline.get("metric") or {}).get("name") or "1/ms"
    now = {_key(r): r for r in current.get("results", [])}
    out: list[Comparison] = []
    for b in baseline.get("results", []):
        c = now.pop(_key(b), None)
        variant, case = str(b.get("variant")), _case(b)
        base_perf = _perf(b)
        if c is None:
            out.append(Comparison(spec, file, variant, case, base_perf, None, 0.0, "missing", unit))
            continue
        cur_perf = _perf(c)
        drop = (b.get("spread") or 0.0) + (c.get("spread") or 0.0) + tolerance
        if b.get("ok", True) and not c.get("ok", True):
            status = "wrong"
        elif base_perf is None or cur_perf is None:
            status = "missing" if base_perf is not None else "new"
        elif cur_perf < base_perf * (1 - drop):
            status = "regressed"
        elif cur_perf > base_perf * (1 + drop):
            status = "improved"
        else:
            status = "ok"
        out.append(Comparison(spec, file, variant, case, base_perf, cur_perf, drop, status, unit))
    for c in now.values():
        out.append(Comparison(spec, file, str(c.get("variant")), _case(c), None, _perf(c), 0.0, "new", unit))
    return out


def markdown(rows: Sequence[Comparison], unmatched: Sequence[str] = ()) -> str:
    bad = [r for r in rows if r.status in ("regressed", "wrong")]
    head = (f"### Benchmark comparison: {len(bad)} regression(s)" if bad
            else "### Benchmark comparison: no regression") + f" in {len(rows)} result(s)\n"
    lines = [head, "| spec | file | variant | case | committed | now | now / committed | allowed drop | status |",
             "|---|---|---|---|---:|---:|---:|---:|---|"]
    order = {"regressed": 0, "wrong": 1, "improved": 2, "missing": 3, "new": 4, "ok": 5}
    for r in sorted(rows, key=lambda r: (order[r.status], r.spec, r.variant, r.case)):
        base = f"{r.baseline:.4g}" if r.baseline is not None else "-"
        cur = f"{r.current:.4g}" if r.current is not None else "-"
        ratio = f"{r.ratio:.3f}" if r.ratio is not None else "-"
        status = {"regressed": "**REGRESSED**", "wrong": "**WRONG OUTPUT**"}.get(r.status, r.status)
        lines.append(f"| {r.spec} | {r.file} | {r.variant} | {r.case} | {base} | {cur} | {ratio} | "
                     f"{100 * r.allowed_drop:.1f}% | {status} |")
    for text in unmatched:
        lines.append(f"\n{text}")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="triton-ext bench --compare", description=__doc__.split("\n\n")[0])
    parser.add_argument("--compare", type=Path, required=True, metavar="BASELINE",
                        help="committed bench-<gpu>.json, or a folder with such files")
    parser.add_argument("--current", type=Path, default=None, metavar="CURRENT",
                        help="new results: a file or folder (default: the checkout)")
    parser.add_argument("--tolerance", type=float, default=0.0, help="extra allowed drop, as a fraction (0.02 = 2%%)")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table (for $GITHUB_STEP_SUMMARY)")
    args = parser.parse_args(list(argv))
    try:
        baseline = find_reports(args.compare)
        current = find_reports(args.current or repo_root())
        if not baseline:
            raise TritonExtError(f"{args.compare}: no bench-*.json found")
        rows: list[Comparison] = []
        unmatched: list[str] = []
        if args.compare.is_file() and args.current is not None and args.current.is_file():
            # Two files: compare them even if named differently.
            ((_, (_, b)),), ((_, (_, c)),) = baseline.items(), current.items()
            if b["spec"] != c["spec"]:
                raise TritonExtError(f"{args.compare} is spec {b['spec']!r} but {args.current} is spec {c['spec']!r}")
            rows = compare_reports(b, c, args.compare.name, args.tolerance)
        else:
            for key, (path, report) in baseline.items():
                hit = current.get(key)
                if hit is None:
                    unmatched.append(f"no current results for {key[0]} ({path.name}) under {args.current or repo_root()}")
                    continue
                rows.extend(compare_reports(report, hit[1], key[1], args.tolerance))
    except TritonExtError as exc:
        print(f"triton-ext bench: error: {exc}", file=sys.stderr)
        return 1
    bad = [r for r in rows if r.status in ("regressed", "wrong")]
    if args.markdown:
        print(markdown(rows, unmatched))
    else:
        for r in rows:
            if r.status != "ok":
                ratio = f" ({r.ratio:.3f}x, allowed drop {100 * r.allowed_drop:.1f}%)" if r.ratio is not None else ""
                print(f"{r.status:9} {r.spec} {r.variant} {r.case}{ratio}")
        for text in unmatched:
            print(text)
        print(f"triton-ext bench --compare: {len(rows)} result(s), {len(bad)} regression(s)")
    return 1 if bad else 0
