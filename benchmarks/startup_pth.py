"""Interpreter start-up with and without triton_ext_startup.pth, TRITON_EXT_ENABLE unset.

    python benchmarks/startup_pth.py [--runs 300] [--out benchmarks/results/startup-pth.json]

Makes two throw-away venvs (``--without-pip``, so their site-packages hold nothing else), one
with ``triton_ext_startup.pth`` (the file the core wheel and ``triton-ext startup-hook install``
write) and one without, then times ``python -c pass`` in both in interleaved pairs. Also times the .pth line itself in-process with
timeit. Writes JSON with commit, machine and date.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import timeit
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

from triton_ext.bench.gpu import checkout_commit
from triton_ext.dev.startup_hook import PTH_LINE, PTH_NAME


def _site_packages(venv: Path) -> Path:
    out = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    return Path(out)


def _once(python: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([str(python), "-c", "pass"], env=env, check=True)
    return time.perf_counter() - start


def _summary(xs: list[float]) -> dict[str, float]:
    ms = sorted(x * 1e3 for x in xs)
    return {"median_ms": round(statistics.median(ms), 3), "mean_ms": round(statistics.fmean(ms), 3),
            "stdev_ms": round(statistics.stdev(ms), 3), "p10_ms": round(ms[len(ms) // 10], 3),
            "p90_ms": round(ms[9 * len(ms) // 10], 3), "min_ms": round(ms[0], 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "startup-pth.json")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_EXT_") and k != "PYTHONPATH"}
    with tempfile.TemporaryDirectory() as tmp:
        pythons = {}
        for name in ("without", "with"):
            venv = Path(tmp) / name
            subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
            pythons[name] = venv / "bin" / "python"
        (_site_packages(Path(tmp) / "with") / PTH_NAME).write_text(PTH_LINE, encoding="utf-8")
        without, with_pth = [], []
        for _ in range(5):  # warm the page cache
            _once(pythons["without"], env)
            _once(pythons["with"], env)
        for i in range(args.runs):
            # Alternate which comes first so drift hits both the same.
            for present in ((False, True) if i % 2 == 0 else (True, False)):
                if present:
                    with_pth.append(_once(pythons["with"], env))
                else:
                    without.append(_once(pythons["without"], env))
    namespace: dict[str, object] = {}
    os.environ.pop("TRITON_EXT_ENABLE", None)
    line_s = min(timeit.repeat(lambda: exec(PTH_LINE, namespace), number=10000, repeat=5)) / 10000
    # What site.py does for the file at start-up: open it, read the line, exec it.
    import site

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / PTH_NAME).write_text(PTH_LINE, encoding="utf-8")
        addpackage_s = min(timeit.repeat(lambda: site.addpackage(tmp, PTH_NAME, set()), number=2000,
                                         repeat=5)) / 2000
    diffs = [b - a for a, b in zip(without, with_pth)]
    result = {
        "what": "python -c pass in a bare venv, with and without triton_ext_startup.pth, TRITON_EXT_ENABLE unset",
        "commit": checkout_commit(short=True),  # refuses a dirty checkout unless TRITON_EXT_ALLOW_DIRTY=1
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
                    "cpus": os.cpu_count(), "python": sys.version.split()[0],
                    "note": "shared 2-core machine; other jobs were running"},
        "runs": args.runs,
        "pth_line": PTH_LINE.strip(),
        "without_pth": _summary(without),
        "with_pth": _summary(with_pth),
        "paired_difference_ms": {"median": round(statistics.median(diffs) * 1e3, 3),
                                 "mean": round(statistics.fmean(diffs) * 1e3, 3)},
        "pth_line_exec_us": round(line_s * 1e6, 3),
        "site_addpackage_us": round(addpackage_s * 1e6, 3),
        "reading": ("site processes the file in site_addpackage_us (open, read, exec the line: best of 5 x "
                    "2000, in-process); the interpreter runs differ by less than their noise on this "
                    "shared machine (compare min_ms and the paired difference with stdev_ms)"),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
