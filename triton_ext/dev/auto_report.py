"""``triton-ext auto report`` and ``forget``: the transparent mode's decisions on disk.

    triton-ext auto report [--dir DIR] [--json] [--kernel NAME] [--remove-stale]
    triton-ext auto forget [--dir DIR] (--kernel NAME | --all)

Each first launch under ``TRITON_EXT_ENABLE=auto`` that finished its timing records its choice
in ``$TRITON_EXT_AUTO_DIR`` (default ``~/.cache/triton-ext/auto``), one JSON file per kernel
specialization and GPU; later processes take the choice from there. This prints one line per
file: kernel, choice, the GPU and back-to-back timings per variant, the first launch's cost and
the file. A file timed by older rules (its ``format`` is not the mode's ``DECISION_FORMAT``) is
marked stale: the mode no longer reads it and tunes that kernel again; ``--remove-stale`` deletes
such files. (In a running process, ``logging.getLogger("triton_ext.auto")`` reports each decision
as it is made, from disk or timed.)

A decision stands until the kernel's source, its specialization, the GPU, the candidate set or a
plugin's bytes change. ``forget`` deletes a kernel's decisions (or all) so that its next first
launch, in a process started afterwards, tunes it again: for a decision timed while the host was
busy, whose back-to-back readings then measured the CPU (a launch path slower than the kernel keeps
no pass; H100, 114ac4b: vLLM's 3-D decode attention kept none where a quieter host had kept 1.26x).
A running process keeps the kernels it already placed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Sequence

from .._decision import LAUNCH_BOUND_WHY

__all__ = ["main", "read_decisions", "forget", "paced_by_the_cpu"]

#: A variant at least this much faster than no pass in the confirming GPU rounds, where no pass was
#: kept because it did not win back to back, is reported as a win the launch path hid.
HIDDEN_WIN = 1.05


def read_decisions(directory: Path) -> list[dict[str, Any]]:
    """Every decision file under ``directory`` (unreadable ones with an ``error`` field), each with
    ``stale``: written under older rules, so the mode no longer reads it."""
    from .._auto import DECISION_FORMAT

    out: list[dict[str, Any]] = []
    for path in sorted(directory.glob("*.json")):
        try:
            record = json.loads(path.read_text())
            if not isinstance(record, dict) or "choice" not in record:
                raise ValueError("no 'choice' field")
            # Files before format 3 carry no format: the name's hash held it, which a reader cannot undo.
            record["stale"] = record.get("format") != DECISION_FORMAT
        except (OSError, ValueError) as exc:
            record = {"error": f"{type(exc).__name__}: {exc}"}
        record["file"] = str(path)
        out.append(record)
    return out


def forget(directory: Path, kernel: str | None) -> tuple[list[str], list[str]]:
    """Delete the decisions of ``kernel`` (every decision file, unreadable ones too, for ``None``)
    under ``directory``; returns the files deleted and the kernels the folder held."""
    records = read_decisions(directory)
    gone = [r["file"] for r in records if kernel is None or r.get("kernel") == kernel]
    for file in gone:
        Path(file).unlink(missing_ok=True)
    return gone, sorted({str(r["kernel"]) for r in records if "kernel" in r})


def _forget(directory: Path, kernel: str | None) -> int:
    gone, kernels = forget(directory, kernel)
    if not gone and kernel is not None:
        print(f"no decisions of kernel {kernel!r} in {directory}"
              + (f"; it holds: {', '.join(kernels)}" if kernels else ""), file=sys.stderr)
        return 1
    for file in gone:
        print(f"removed: {file}")
    print(f"forgot {len(gone)} decision(s){'' if kernel is None else f' of {kernel}'} in {directory}: "
          "the next first launch of a process started now tunes again")
    return 0


def paced_by_the_cpu(record: dict[str, Any]) -> tuple[str, float, float] | None:
    """For a decision that kept no pass although a variant ran at least :data:`HIDDEN_WIN` times
    faster on the GPU (its confirming rounds) and was then read back to back: that variant, its GPU
    speedup and its back-to-back speedup. Launched back to back, the CPU's launch path set the pace
    (or the host was busy while the mode timed it); on a quieter host ``forget`` retimes it."""
    def times(name: str) -> dict[str, float]:  # a file edited by hand may hold anything
        values = record.get(name)
        return {k: v for k, v in values.items() if isinstance(v, (int, float)) and v > 0} \
            if isinstance(values, dict) else {}

    gpu, b2b = times("confirm_ms"), times("back_to_back_ms")
    if record.get("choice") or "" not in gpu or "" not in b2b:
        return None
    found = [(gpu[""] / t, v) for v, t in gpu.items() if v and v in b2b and gpu[""] / t >= HIDDEN_WIN]
    if not found:
        return None
    speedup, variant = max(found)
    return variant, speedup, b2b[""] / b2b[variant]


def _ms(values: dict[str, float]) -> str:
    return ", ".join(f"{k or 'none'} {v * 1e3:.1f} us" for k, v in values.items()) or "-"


def _describe(r: dict[str, Any]) -> list[str]:
    """The report's lines for one readable decision file."""
    size = r.get("launch_size")
    out = [f"  {r.get('kernel', '?')}: {r['choice'] or 'no pass'}"
           + (f" at launches {size.replace('_', ' ')}, no pass at the others" if r["choice"] and size else "")
           + f" (first launch {r.get('first_launch_s', 0.0):.2f} s, GPU {r.get('gpu', '?')})"
           + (" [stale: older rules, not read]" if r.get("stale") else "")]
    if r.get("launch_bound"):
        out.append(f"    launch-bound: {LAUNCH_BOUND_WHY}, so no pass is kept")
    out.append(f"    applicable: {', '.join(r.get('applicable') or []) or 'none'};"
               f" same as no pass: {', '.join(r.get('same_as_stock') or []) or 'none'}")
    if r.get("compile_s") or r.get("phases_s"):
        parts = {"compiling variants": r.get("compile_s") or 0.0, **(r.get("phases_s") or {})}
        out.append("    first launch, seconds: "
                   + ", ".join(f"{k.replace('_', ' ')} {v:.2f}" for k, v in parts.items()))
    out.append(f"    GPU time: {_ms(r.get('timings_ms') or {})}")
    if r.get("back_to_back_ms"):
        out.append(f"    back to back: {_ms(r['back_to_back_ms'])}")
    hidden = paced_by_the_cpu(r)
    if hidden is not None:
        out.append(f"    no pass kept although {hidden[0]} ran {hidden[1]:.2f}x faster on the GPU: back to back it"
                   f" read {hidden[2]:.2f}x, the launch path setting the pace (a busy host?); on a quieter one"
                   f" `triton-ext auto forget --kernel {r.get('kernel', '?')}` retimes it")
    for variant, why in (r.get("failed") or {}).items():
        out.append(f"    could not compile or launch, dropped: {variant}: {why}")
    for variant, why in (r.get("changed_outputs") or {}).items():
        out.append(f"    changed the outputs, dropped: {variant}: {why}")
    if r.get("late_combination"):
        out.append("    still compiling when chosen, timed against the choice at the next launch: "
                   f"{r['late_combination']}")
    out.append(f"    {r['file']}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    from .._auto import cache_dir

    parser = argparse.ArgumentParser(prog="triton-ext auto", description="The transparent mode's decisions on disk: "
                                     "print them (one line per kernel specialization and GPU), or forget some.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("report", help="print the decisions on disk")
    p.add_argument("--dir", type=Path, help="decision folder (default: $TRITON_EXT_AUTO_DIR or ~/.cache/triton-ext/auto)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--kernel", help="only this kernel's decisions")
    p.add_argument("--remove-stale", action="store_true",
                   help="delete the decisions timed by older rules, which the mode no longer reads")
    f = sub.add_parser("forget",
                       help="delete decisions, so that a process started afterwards tunes those kernels again")
    f.add_argument("--dir", type=Path,
                   help="decision folder (default: $TRITON_EXT_AUTO_DIR or ~/.cache/triton-ext/auto)")
    which = f.add_mutually_exclusive_group(required=True)
    which.add_argument("--kernel", help="this kernel's decisions (its function's name, as `report` prints it)")
    which.add_argument("--all", action="store_true", help="every decision in the folder")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    directory = args.dir or cache_dir()
    if args.command == "forget":
        return _forget(directory, args.kernel)
    records = [r for r in read_decisions(directory) if not args.kernel or r.get("kernel") == args.kernel]
    if args.remove_stale:
        for r in [r for r in records if r.get("stale")]:
            Path(r["file"]).unlink(missing_ok=True)
            print(f"removed (stale: older rules): {r['file']}")
        records = [r for r in records if not r.get("stale")]
    if args.json:
        print(json.dumps(records, indent=2))
        return 0
    if not records:
        print(f"no decisions in {directory}")
        return 0
    stale = sum(1 for r in records if r.get("stale"))
    print(f"{len(records)} decision(s) in {directory}"
          + (f", {stale} stale (older rules: not read; `triton-ext auto report --remove-stale` deletes them)"
             if stale else ""))
    for r in records:
        try:
            lines = [f"  unreadable: {r['file']}: {r['error']}"] if "error" in r else _describe(r)
        except (TypeError, ValueError, AttributeError) as exc:  # a field the mode does not write so
            lines = [f"  unreadable: {r['file']}: a field holds what the mode never writes "
                     f"({type(exc).__name__}: {exc}); `triton-ext auto forget` can delete it"]
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
