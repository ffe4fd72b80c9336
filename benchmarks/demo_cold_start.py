"""How long the README's main command (``bash tools/demo.sh``) takes on a fresh machine.

    python3 benchmarks/demo_cold_start.py [--out benchmarks/results/demo-cold-start.json]

A fresh clone of this checkout's HEAD, run with empty caches: ``HOME`` and ``XDG_CACHE_HOME`` point
at a new empty folder (no pip cache, no plugin toolchain), ``PIP_FIND_LINKS`` is cleared (every
wheel comes from the package index), no ccache. clang 19 is the one thing it does not remove (an
apt package); ``--clang-apt`` times ``apt-get update`` plus reinstalling it (root only) and adds
that to the total. Records each phase from the demo's own ``[setup]``/``[toolchain]`` lines, the
disk each part takes, the load average (other jobs on the machine slow it) and the commit.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLANG_PACKAGES = ("clang-19", "libclang-cpp19", "libclang-common-19-dev", "libllvm19", "llvm-19-linker-tools")


def _du_mb(path: Path) -> float:
    out = subprocess.run(["du", "-sm", str(path)], capture_output=True, text=True).stdout.split()
    return float(out[0]) if out else 0.0


def _clang_apt_seconds() -> float:
    start = time.monotonic()
    subprocess.run(["apt-get", "update", "-q"], check=True, capture_output=True)
    subprocess.run(["apt-get", "install", "--reinstall", "-y", "-q", *CLANG_PACKAGES], check=True, capture_output=True)
    return time.monotonic() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "demo-cold-start.json")
    parser.add_argument("--clang-apt", action="store_true", help="also time apt-get update + reinstalling clang 19")
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.strip()
    work = Path(tempfile.mkdtemp(prefix="demo-cold-"))
    clone, home = work / "clone", work / "home"
    home.mkdir()
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_FIND_LINKS", "CCACHE", "CMAKE_CXX_COMPILER_LAUNCHER",
                                                                   "TRITON_EXT_", "VIRTUAL_ENV"))}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), PIP_NO_CACHE_DIR="1")
    load_before = os.getloadavg()
    clang_s = _clang_apt_seconds() if args.clang_apt else None
    start = time.monotonic()
    marks: list[tuple[float, str]] = []
    proc = subprocess.Popen(["bash", "tools/demo.sh"], cwd=clone, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    tail: list[str] = []
    for line in proc.stdout:
        if line.startswith(("[setup]", "=== ", "triton-ext build:")):
            marks.append((round(time.monotonic() - start, 1), line.strip()[:120]))
        tail = (tail + [line.rstrip()])[-30:]
    rc = proc.wait()
    total = time.monotonic() - start
    result = {
        "what": "bash tools/demo.sh from a fresh clone with empty caches (pip from the index, toolchain fetched, "
                "loop_split built, the demo's compiles)",
        "commit": commit, "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": {"cpus": os.cpu_count(), "python": platform.python_version(), "system": platform.platform()},
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "exit_status": rc, "demo_seconds": round(total, 1),
        "clang_apt_seconds": None if clang_s is None else round(clang_s, 1),
        "total_seconds": round(total + (clang_s or 0.0), 1),
        "phases": marks,
        "disk_mb": {"venv": _du_mb(clone / ".venv"), "toolchain": _du_mb(home / ".cache" / "triton-ext"),
                    "build": _du_mb(clone / "build")},
        "tail": tail if rc else tail[-5:],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: result[k] for k in ("exit_status", "demo_seconds", "clang_apt_seconds", "total_seconds",
                                             "disk_mb", "load_average_before")}, indent=1))
    shutil.rmtree(work, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
