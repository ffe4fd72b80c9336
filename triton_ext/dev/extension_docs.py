"""``triton-ext docs [--check] [NAME...]``: the generated parts of each extension's README.

Every extension README (the ``directory`` of its registry entry) is a reference with the sections
:data:`REQUIRED_SECTIONS`. Two of its parts are generated, between markers:

- ``<!-- generated:options -->`` ... ``<!-- end generated -->``: the options of the extension's
  passes as TableGen resolved them (the build's ``lib<Target>.passes.records``, read by
  :mod:`triton_ext._pass_records` through the manifest, as ``triton-ext info`` shows them): flag,
  type, default, what it accepts (EnumOption values, MinOption/RangeOption bounds) and help.
  The records exist once the extension is built (``triton-ext build``; ``tools/test.sh`` builds
  every extension); without them this command fails and says so.
- ``<!-- generated:results -->`` ... ``<!-- end generated -->``: one table per kind of run in the
  extension's ``results/`` folder (``bench``, ``check``, ``real-vllm``, ...: the file name without
  its ``-<gpu>.json``), from the newest H200 file of that kind; the caption names the file, the
  commit and date it records and whether the tree was dirty. How a file becomes a table: a
  ``triton-ext bench`` report shows its targets, a bench check run its cases, a real-kernel sweep
  (``tests/realworld/check_gpu.py``) one row per pass, a file listed in ``docs/result-views.yaml`` the columns
  chosen there, and any other file the lists of records at its top level.

Without ``--check`` the blocks are rewritten in place; with it nothing is written and the exit
status is 1 when a README differs from what its committed data gives (``tests/test_docs.py``
runs the same check).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import yaml

from .._errors import TritonExtError
from .._manifest import Extension, load_manifest
from .._settings import repo_root

__all__ = ["REQUIRED_SECTIONS", "OPTIONS_BEGIN", "RESULTS_BEGIN", "END", "options_markdown",
           "results_markdown", "render_readme", "readme_path", "main"]

OPTIONS_BEGIN = "<!-- generated:options (triton-ext docs) -->"
RESULTS_BEGIN = "<!-- generated:results (triton-ext docs) -->"
END = "<!-- end generated -->"

#: The level-2 headings every extension README has, in this order.
REQUIRED_SECTIONS = ("## What it does", "## When to use it", "## Options", "## Results")

#: results/<kind>-<gpu>.json (tests/test_layout.py lists the kinds a results folder may hold).
_RESULT_NAME = re.compile(r"^(?P<kind>[a-z0-9]+(?:-[a-z0-9]+)?)-(?P<gpu>[a-z0-9]+)\.json$")
GPU = "h200"


def readme_path(ext: Extension, root: Path | None = None) -> Path:
    return (root or repo_root()) / ext.directory / "README.md"


# --------------------------------------------------------------------------- #
# Options
# --------------------------------------------------------------------------- #


def _cell(text: Any) -> str:
    return str(text).replace("\n", " ").replace("|", "\\|").strip()


def _default(value: Any) -> str:
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    return f"`{value}`" if value != "" else '`""`'


def options_markdown(ext: Extension) -> str:
    """The Options block of ``ext``: one row per option of each of its passes."""
    if not ext.passes:
        return (f"`{ext.name}` declares no passes, so it has no options.\n")
    sources = set()
    lines = ["| Pass | Option | Type | Default | Accepts | Description |", "|---|---|---|---|---|---|"]
    for p in ext.passes:
        if p.options_source and not Path(p.options_source).is_file():
            raise TritonExtError(
                f"the options of pass {p.name} are not known: {p.options_source} (the pass records the "
                f"build writes beside the plugin) is missing; build the extension first: "
                f"`triton-ext build {ext.name}` (tools/test.sh builds every extension)")
        if p.options_source:
            sources.add(Path(p.options_source).name)
        if not p.options:
            lines.append(f"| `{p.name}` | - | | | | no options |")
        for o in p.options:
            lines.append(f"| `{p.name}` | `{o.name}` | {o.type} | {_default(o.default)} | {_cell(o.expected())} | "
                         f"{_cell(o.help)} |")
    td = f"{ext.directory}/Passes.td"
    origin = (f"From `{td}` as TableGen resolves it (the build's "
              f"{', '.join(sorted(sources))}; `triton-ext info {ext.name}` shows the same)."
              if sources else "Declared in registry.yaml.")
    usage = (f" Set them as in MLIR pipelines: `{ext.passes[0].name}{{option=value}}` in `TRITON_EXT_ENABLE`, "
             f"`triton-ext opt --pass`, or `triton_ext.enable(\"{ext.passes[0].name}\", option=value)` "
             "(dashes become underscores).")
    return origin + usage + "\n\n" + "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- #
# Results
# --------------------------------------------------------------------------- #


def _get(doc: Any, dotted: str) -> Any:
    """``doc["a"]["b"][0]`` for ``"a.b.0"``; None where a part is missing."""
    for part in dotted.split(".") if dotted else ():
        if isinstance(doc, list) and part.isdigit() and int(part) < len(doc):
            doc = doc[int(part)]
        elif isinstance(doc, dict) and part in doc:
            doc = doc[part]
        else:
            return None
    return doc


def _num(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        if value == 0:
            return "0"
        if abs(value) >= 100:
            return f"{value:.1f}"
        if abs(value) >= 0.01:
            return f"{value:.3f}"
        return f"{value:.3g}"
    if isinstance(value, dict):
        return " ".join(f"{k}={_num(v)}" for k, v in value.items() if not isinstance(v, (dict, list)))
    if isinstance(value, list):
        return ", ".join(_num(v) for v in value if not isinstance(v, (dict, list)))
    return _cell(value)


@dataclass(frozen=True)
class Table:
    """Rows at ``rows`` (a list of records, or a mapping whose keys fill the column ``key``) with
    the ``columns`` (header, dotted path); ``meta`` overrides where the caption's commit, date and
    GPU are read."""

    rows: str
    columns: tuple[tuple[str, str], ...]
    title: str = ""
    key: str = ""


@dataclass(frozen=True)
class View:
    tables: tuple[Table, ...]
    meta: dict[str, str] = field(default_factory=dict)


def _table(rows: Any, columns: Sequence[tuple[str, str]], key: str = "") -> list[str]:
    items = list(rows.items()) if isinstance(rows, dict) else [(None, r) for r in rows or ()]
    head = ([key] if key else []) + [h for h, _ in columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, row in items:
        cells = ([_cell(name)] if key else []) + [_num(_get(row, path)) for _, path in columns]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def views(root: Path | None = None) -> dict[str, View]:
    """Files whose records are too nested for the automatic table, and the columns to show: data in
    ``docs/result-views.yaml`` (they name the keys the extensions' scripts write)."""
    path = (root or repo_root()) / "docs" / "result-views.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {} if path.is_file() else {}
    return {name: View(tuple(Table(t["rows"], tuple((h, c) for h, c in t["columns"]), t.get("title", ""),
                                   t.get("key", "")) for t in spec["tables"]), dict(spec.get("meta", {})))
            for name, spec in data.items()}


def _meta(doc: dict[str, Any], view: View | None) -> tuple[str, str, str, Any]:
    """(commit, date, gpu, dirty) as the file records them."""
    env = doc.get("environment") if isinstance(doc.get("environment"), dict) else {}
    over = view.meta if view is not None else {}

    def first(*paths: str) -> Any:
        for path in paths:
            value = _get(doc, path) if path else None
            if value not in (None, ""):
                return value
        return None

    commit = first(over.get("commit", ""), "environment.commit", "commit")
    # A hash inside a note needs a letter (a date or a count is not one); a commit field that is a
    # hash alone may be all digits (git's short form of 9654598ebd...).
    alone = re.fullmatch(r"[0-9a-f]{7,40}", str(commit or "").strip())
    found = alone.group(0) if alone else next(
        (h for h in re.findall(r"\b[0-9a-f]{7,40}\b", str(commit or "")) if re.search(r"[a-f]", h)), None)
    date = first(over.get("date", ""), "environment.date", "date", "when")
    dated = re.search(r"\d{4}-\d{2}-\d{2}", str(date or first(over.get("what", "")) or ""))
    gpu = first("environment.gpu", "gpu", "device", "probe_print.device")
    return (found[:7] if found else "", dated.group(0) if dated else "", str(gpu or ""),
            env.get("dirty") if env else None)


def _caption(doc: dict[str, Any], rel: str, view: View | None) -> str:
    commit, date, gpu, dirty = _meta(doc, view)
    parts = [f"[`{rel}`]({rel})", gpu or "GPU not recorded",
             f"commit {commit}" if commit else "commit not recorded",
             date or "date not recorded"]
    if dirty:
        parts.append("the tree had uncommitted changes")
    return "Source: " + ", ".join(parts) + "."


def _is_bench(doc: dict[str, Any]) -> bool:
    return "schema" in doc and "targets" in doc and "results" in doc and "metric" in doc


def _bench(doc: dict[str, Any]) -> list[str]:
    lines = [f"{_cell(doc['title'])}: the benchmark's targets (speedup = baseline time / pass time).", "",
             "| target | variant | vs | cases | speedup min..max | met |", "|---|---|---|---:|---|---|"]
    for t in doc["targets"]:
        speeds = [r["speedup"] for r in t.get("rows", []) if r.get("speedup") is not None]
        spread = f"{min(speeds):.3f}..{max(speeds):.3f}" if speeds else "-"
        lines.append(f"| {_cell(t['description'])} | {t['variant']} | {t['versus']} | {t['cases']} | {spread} | "
                     f"{'yes' if t['met'] else 'no'} |")
    return lines


def _bench_check(doc: dict[str, Any]) -> list[str]:
    records = doc["records"]
    variants = sorted({r["variant"] for r in records})
    worst = max((r["max_abs_err"] / r["tolerance"] for r in records
                 if r.get("max_abs_err") is not None and r.get("tolerance")), default=None)
    return ["Outputs of every variant against the reference (`triton-ext bench --check`).", "",
            "| cases | variants | failures | worst error / tolerance |", "|---:|---|---:|---:|",
            f"| {len(records)} | {', '.join(variants)} | {doc.get('failures', 0)} | {_num(worst)} |"]


def _is_sweep(doc: dict[str, Any]) -> bool:
    return isinstance(doc.get("kernels"), list) and isinstance(doc.get("passes"), list) and "versions" in doc


def _sweep(doc: dict[str, Any]) -> list[str]:
    kernels = doc["kernels"]
    lines = [f"Third-party kernels, each firing pass against no pass ({len(kernels)} kernels, "
             f"{doc.get('rounds')} interleaved timing rounds; speedup = time without / with).", "",
             "| pass | fires on | outputs unchanged | speedup median | best | worst |",
             "|---|---:|---:|---:|---:|---:|"]
    for p in doc["passes"]:
        recs = [k.get("passes", {}).get(p, {}) for k in kernels]
        firing = [r for r in recs if r.get("fires")]
        same = sum(1 for r in firing if r.get("outputs_unchanged"))
        speed = [r["speedup"] for r in firing if r.get("speedup")]
        lines.append(f"| `{p}` | {len(firing)}/{len(kernels)} | {same}/{len(firing)} | "
                     f"{_num(statistics.median(speed) if speed else None)} | {_num(max(speed) if speed else None)} | "
                     f"{_num(min(speed) if speed else None)} |")
    for failure in doc.get("failures") or ():
        lines += ["", f"Failure: {_cell(failure)}"]
    return lines


def _flat_columns(rows: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Scalar fields of the records, and the scalar fields of their one-level mappings."""
    columns: list[tuple[str, str]] = []
    for row in rows:
        for k, v in row.items():
            if isinstance(v, dict):
                subs = [(f"{k}.{s}", f"{k}.{s}") for s, w in v.items() if not isinstance(w, (dict, list))]
            elif isinstance(v, list) and any(isinstance(w, (dict, list)) for w in v):
                subs = []
            else:
                subs = [(k, k)]
            columns += [c for c in subs if c not in columns]
    return columns


def _automatic(doc: Any) -> list[str]:
    tables = [(k, v) for k, v in doc.items() if isinstance(v, list) and v and all(isinstance(r, dict) for r in v)]
    if tables:
        lines: list[str] = []
        for name, rows in tables:
            lines += ([""] if lines else []) + [f"`{name}`:", ""] + _table(rows, _flat_columns(rows))
        return lines
    groups = [(k, v) for k, v in doc.items() if isinstance(v, dict)]
    if groups:  # a mapping of groups of scalars (an exploration)
        return ["| group | case | value |", "|---|---|---:|"] + [
            f"| {_cell(g)} | {_cell(k)} | {_num(v)} |" for g, values in groups for k, v in values.items()]
    raise TritonExtError("no records to tabulate; add a view for this file to docs/result-views.yaml")


def result_files(ext: Extension, root: Path | None = None) -> list[Path]:
    """The newest H200 JSON of each kind in the extension's results/ folder, by kind."""
    folder = (root or repo_root()) / ext.directory / "results"
    newest: dict[str, tuple[str, Path]] = {}
    for path in sorted(folder.glob("*.json")):
        m = _RESULT_NAME.match(path.name)
        if m is None or m.group("gpu") != GPU:
            continue
        doc = json.loads(path.read_text(encoding="utf-8"))
        date = _meta(doc, views(root).get(_rel_repo(path, root)))[1] if isinstance(doc, dict) else ""
        kind = m.group("kind")
        if kind not in newest or date > newest[kind][0]:
            newest[kind] = (date, path)
    return [path for _, path in sorted(newest.values(), key=lambda dp: _kind_order(dp[1].name))]


def _kind_order(name: str) -> tuple[int, str]:
    order = ("bench", "check", "real", "vendor", "explore")
    kind = name.split("-")[0]
    return (order.index(kind) if kind in order else len(order), name)


def _rel_repo(path: Path, root: Path | None) -> str:
    return path.relative_to(root or repo_root()).as_posix()


def results_markdown(ext: Extension, root: Path | None = None) -> str:
    """The Results block of ``ext``: one table per kind of run in its results/ folder."""
    files = result_files(ext, root)
    if not files:
        folder = (root or repo_root()) / ext.directory / "results"
        others = [p.name for p in sorted(folder.glob("*.json")) if _RESULT_NAME.match(p.name)]
        if others:  # measured, on another GPU than the one these tables are for
            return (f"No H200 results are committed for `{ext.name}`; on other GPUs: "
                    + ", ".join(f"[{name}](results/{name})" for name in others)
                    + (" ([BENCHMARK.md](results/BENCHMARK.md))" if (folder / "BENCHMARK.md").exists() else "")
                    + ".\n")
        return (f"No H200 results are committed for `{ext.name}` (its tests run on the CPU; see the "
                "lit and pytest files in this folder).\n")
    parts = []
    for path in files:
        rel_repo = _rel_repo(path, root)
        rel = path.relative_to(path.parent.parent).as_posix()
        doc = json.loads(path.read_text(encoding="utf-8"))
        view = views(root).get(rel_repo)
        try:
            if view is not None:
                body: list[str] = []
                for t in view.tables:
                    rows = _get(doc, t.rows)
                    if rows is None:
                        raise TritonExtError(f"{rel_repo}: no records at {t.rows!r} (docs/result-views.yaml)")
                    body += ([""] if body else []) + ([t.title + ":", ""] if t.title else []) + _table(rows, t.columns, t.key)
            elif _is_bench(doc):
                body = _bench(doc)
            elif doc.get("mode") == "check" and "records" in doc:
                body = _bench_check(doc)
            elif _is_sweep(doc):
                body = _sweep(doc)
            else:
                body = _automatic(doc)
        except TritonExtError as exc:
            raise TritonExtError(f"{rel_repo}: {exc}") from None
        kind = _RESULT_NAME.match(path.name).group("kind")  # type: ignore[union-attr]
        parts.append("\n".join([f"### {kind}", "", _caption(doc, rel, view), "", *body]))
    bench = path.parent / "BENCHMARK.md"
    tail = ("\n\nEvery case of the benchmark: [results/BENCHMARK.md](results/BENCHMARK.md)."
            if bench.is_file() else "")
    return "\n\n".join(parts) + tail + "\n"


# --------------------------------------------------------------------------- #
# README blocks
# --------------------------------------------------------------------------- #


def _replace(text: str, begin: str, body: str, where: str) -> str:
    start = text.find(begin)
    end = text.find(END, start + len(begin)) if start >= 0 else -1
    if start < 0 or end < 0:
        raise TritonExtError(f"{where}: expected the markers {begin!r} ... {END!r} where the generated part goes")
    return text[:start + len(begin)] + "\n" + body + text[end:]


def render_readme(text: str, ext: Extension, where: str = "README.md", root: Path | None = None) -> str:
    """``text`` with its generated Options and Results blocks made from the committed data."""
    text = _replace(text, OPTIONS_BEGIN, options_markdown(ext), where)
    return _replace(text, RESULTS_BEGIN, results_markdown(ext, root), where)


def missing_sections(text: str) -> list[str]:
    """The required headings ``text`` lacks, or has out of order."""
    headings = [ln.strip() for ln in text.splitlines() if ln.startswith("## ")]
    found = [h for h in REQUIRED_SECTIONS if h in headings]
    missing = [h for h in REQUIRED_SECTIONS if h not in headings]
    if not missing and [h for h in headings if h in REQUIRED_SECTIONS] != list(REQUIRED_SECTIONS):
        missing = [f"{' / '.join(found)} (out of order)"]
    return missing


def _extensions(names: Iterable[str]) -> list[Extension]:
    manifest = load_manifest()
    names = list(names)
    root = repo_root()
    exts = [manifest.extension(n) for n in names] if names else list(manifest.extensions)
    return [e for e in exts if (root / e.directory / "README.md").is_file() or names]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="triton-ext docs", description=__doc__.splitlines()[0].split(": ", 1)[1])
    parser.add_argument("names", nargs="*", help="extensions (default: every one in the registry)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a README is stale")
    args = parser.parse_args(argv)
    stale = []
    try:
        for ext in _extensions(args.names):
            path = readme_path(ext)
            text = path.read_text(encoding="utf-8")
            new = render_readme(text, ext, str(path.relative_to(repo_root())))
            if new != text:
                stale.append(str(path.relative_to(repo_root())))
                if not args.check:
                    path.write_text(new, encoding="utf-8")
    except TritonExtError as exc:
        print(f"triton-ext docs: error: {exc}", file=sys.stderr)
        return 1
    if args.check and stale:
        print("stale (run `triton-ext docs`): " + ", ".join(stale), file=sys.stderr)
        return 1
    for path in stale:
        print(f"updated {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
