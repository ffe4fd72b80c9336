"""Turn check_gpu.py's JSON into the table "Reach on real kernels" (docs/results.md).

    python tests/realworld/gpu_table.py tests/realworld/results/realworld-gpu-h200.json [--readme docs/results.md]

One row per pass and package: on how many kernels the pass fires, on how many of those the
outputs were unchanged, and the median and best speedup (no-pass time / pass time) over the
kernels it fires on. With ``--readme`` the table replaces the text between the markers
``<!-- reach-on-real-kernels:begin -->`` and ``<!-- reach-on-real-kernels:end -->``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

BEGIN = "<!-- reach-on-real-kernels:begin -->"
END = "<!-- reach-on-real-kernels:end -->"


def render(data: dict[str, Any], source: str) -> str:
    kernels = data["kernels"]
    packages = sorted({k["package"] for k in kernels})
    versions = data["versions"]
    pkg_text = ", ".join(f"{p} {versions.get(p, '?')}" for p in packages)
    lines = [
        f"{data['gpu']}, driver {data['driver']}, triton {data['versions'].get('triton_imported', data['versions'].get('triton', '?')).split(' ')[0]}, "
        f"torch {data['versions'].get('torch')}, commit {data['commit']}, {data['date'][:10]}; "
        f"{len(kernels)} kernels from {pkg_text}; "
        f"{data['rounds']} interleaved timing rounds ([json]({source})).",
        "",
        "| pass | package | fires on | outputs unchanged | speedup median | best | worst |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for p in data["passes"]:
        for pkg in packages:
            ks = [k for k in kernels if k["package"] == pkg]
            recs = [k.get("passes", {}).get(p, {}) for k in ks]
            firing = [r for r in recs if r.get("fires")]
            errors = [r for r in recs if "error" in r] + [k for k in ks if "error" in k]
            same = sum(1 for r in firing if r.get("outputs_unchanged"))
            # A timing of 0 means the variant could not be timed (see the JSON), not a speedup.
            speed = [r["speedup"] for r in firing if r.get("speedup")]
            cell = lambda v: f"{v:.3f}" if v is not None else "-"  # noqa: E731
            fires = f"{len(firing)}/{len(ks)}" + (f" ({len(errors)} errors)" if errors else "")
            lines.append(f"| `{p}` | {pkg} | {fires} | {same}/{len(firing)} | "
                         f"{cell(statistics.median(speed) if speed else None)} | "
                         f"{cell(max(speed) if speed else None)} | {cell(min(speed) if speed else None)} |")
    if data.get("failures"):
        lines += ["", "Failures: " + "; ".join(data["failures"])]
    unverifiable = sorted({u.split(" + ")[0] for u in data.get("unverifiable", [])})
    if unverifiable:
        lines += ["", "Not counted as unchanged, and not as a pass failure: " + ", ".join(unverifiable)
                  + " (the kernel without any pass does not repeat its own output on the same inputs)."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", type=Path)
    parser.add_argument("--readme", type=Path, default=None)
    args = parser.parse_args(argv)
    data = json.loads(args.json.read_text(encoding="utf-8"))
    if args.readme:
        source = os.path.relpath(args.json.resolve(), args.readme.resolve().parent)
    else:
        source = str(args.json)
    table = render(data, source)
    if args.readme:
        text = args.readme.read_text(encoding="utf-8")
        if BEGIN not in text or END not in text:
            print(f"{args.readme}: markers {BEGIN} / {END} not found", file=sys.stderr)
            return 1
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        args.readme.write_text(head + BEGIN + "\n" + table + END + tail, encoding="utf-8")
        print(f"updated {args.readme}")
    else:
        sys.stdout.write(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
