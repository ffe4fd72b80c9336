"""Targets and writers: the JSON report, BENCHMARK.md, the chart and the summary table."""


from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

from .._settings import repo_root
from .gpu import Timing, gpu_slug
from .spec import SCHEMA_VERSION, BenchSpec, Case


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
    over the hand-written best, and whether the spec's targets are met. Links are relative to the
    folder ``link_base`` (the file the table goes into), else to the repository root."""
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
        if link and link_base is not None:
            link = os.path.relpath(repo_root() / link, link_base)
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


