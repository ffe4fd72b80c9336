"""torch.compile with TRITON_EXT_ENABLE and no import: reach and cache staleness (GPU).

    TRITON_EXT_BUILD_DIR=$PWD/build python -m tests.realworld.check_torch_compile \
        --out tests/realworld/results/torch-compile-h200.json

Runs tests/realworld/torch_compile_child.py (a script that never imports triton_ext) several
times in fresh interpreters. The project is made visible the way an install does it: a site
folder holding ``triton_ext_startup.pth`` and a path ``.pth`` naming this checkout, given to
the children as their user site (``PYTHONUSERBASE``), so nothing is installed on the host and
Inductor's compile workers (subprocesses that inherit the environment) see it too.

All runs share one Inductor cache and one Triton cache, with the FX graph cache and Inductor's
autotune cache on and ``TORCHINDUCTOR_COMPILE_THREADS=4`` (compile workers). The enabled set
changes from run to run; ``nan_inf_check`` makes every kernel that carries it report
the NaN/Inf the child plants (one line per site, printed by the host at exit), so whether a run executed kernels with the pass is seen
at run time, whichever cache served them:

  A  unset                 -> no report   (cold caches)
  B  nan_inf_check         -> reports     (the pass reaches Inductor's kernels, no import)
  C  unset                 -> no report   (B's kernels must not be served)
  D  nan_inf_check         -> reports     (warm caches)
  E  nvidia_auto_pdl       -> no report   (another non-empty set: no stale nan_inf_check kernel)
  F  nan_inf_check, 1 thread, fresh caches -> reports (control without compile workers)

The start-up hook puts the enabled set into torch.compile's cache key tag
(``TORCH_COMPILE_CACHE_KEY_TAG``, see _triton_ext_startup.py). Runs G and H repeat A and B on
fresh caches with that tag turned off (``TRITON_EXT_TORCH_CACHE_TAG=0``) and are recorded, not
judged: they show whether Inductor's caches would serve a stale kernel without it.

Writes JSON with commit, GPU, driver, versions, date, and each run's outcome; exits non-zero if
any expectation fails.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

from triton_ext.dev.startup_hook import PTH_LINE, PTH_NAME

CHILD = HERE / "torch_compile_child.py"
REPORT = re.compile(r"\[triton-ext nan_inf_check\] kernel=(\S+)")

RUNS: list[tuple[str, str | None, int, str, bool | None]] = [
    # name, TRITON_EXT_ENABLE, compile threads, cache set, expect reports (None: recorded only)
    ("A", None, 4, "shared", False),
    ("B", "nan_inf_check", 4, "shared", True),
    ("C", None, 4, "shared", False),
    ("D", "nan_inf_check", 4, "shared", True),
    ("E", "nvidia_auto_pdl", 4, "shared", False),
    ("F", "nan_inf_check", 1, "fresh-F", True),
    ("G", None, 4, "untagged", None),
    ("H", "nan_inf_check", 4, "untagged", None),
]


def make_user_site(base: Path) -> Path:
    """PYTHONUSERBASE folder whose user site has the start-up .pth and this checkout."""
    scheme = "posix_user" if os.name == "posix" else "nt_user"
    site = Path(sysconfig.get_path("purelib", scheme, vars={"userbase": str(base)}))
    site.mkdir(parents=True, exist_ok=True)
    # Processed in name order: the checkout's path first, then the start-up line.
    (site / "00-triton-ext-checkout.pth").write_text(str(REPO) + "\n", encoding="utf-8")
    (site / PTH_NAME).write_text(PTH_LINE, encoding="utf-8")
    return site


def user_site_works(userbase: Path) -> bool:
    probe = subprocess.run([sys.executable, "-c", "import site; print(site.ENABLE_USER_SITE)"],
                           capture_output=True, text=True, env={**os.environ, "PYTHONUSERBASE": str(userbase)})
    return probe.stdout.strip() == "True"


def run_child(name: str, enable: str | None, threads: int, caches: Path, userbase: Path,
              untagged: bool) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TRITON_EXT_ENABLE", "TORCHINDUCTOR_", "TORCH_COMPILE_CACHE_KEY_TAG"))}
    env.update({
        "PYTHONUSERBASE": str(userbase),
        "TRITON_CACHE_DIR": str(caches / "triton"),
        "TORCHINDUCTOR_CACHE_DIR": str(caches / "inductor"),
        "TORCHINDUCTOR_FX_GRAPH_CACHE": "1",
        "TORCHINDUCTOR_AUTOTUNE_LOCAL_CACHE": "1",
        "TORCHINDUCTOR_COMPILE_THREADS": str(threads),
        "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS": "TRITON",
        "TRITON_EXT_BUILD_DIR": os.environ.get("TRITON_EXT_BUILD_DIR", str(REPO / "build")),
        "TRITON_EXT_ENTRY_POINTS": "0",
        "PYTHONUNBUFFERED": "1",
    })
    if enable:
        env["TRITON_EXT_ENABLE"] = enable
    if untagged:
        env["TRITON_EXT_TORCH_CACHE_TAG"] = "0"
    proc = subprocess.run([sys.executable, str(CHILD)], capture_output=True, text=True, env=env, timeout=900)
    # nan_inf_check's lines: the host's one line per site (stderr, exit summary; issue 18's
    # default print=none) or device printf lines (stdout, print=first/every).
    reports = REPORT.findall(proc.stdout + proc.stderr)
    seen: dict[str, Any] = {}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("{"):
            try:
                seen = json.loads(line)
                break
            except json.JSONDecodeError:
                pass
    return {"run": name, "TRITON_EXT_ENABLE": enable, "compile_threads": threads, "returncode": proc.returncode,
            "report_lines": len(reports), "reporting_kernels": sorted(set(reports)), "child": seen,
            "stderr_tail": proc.stderr[-2500:] if proc.returncode else proc.stderr[-600:]}


def _untagged_verdict(results: list[dict[str, Any]]) -> str:
    g = next((r for r in results if r["run"] == "G"), None)
    h = next((r for r in results if r["run"] == "H"), None)
    if not g or not h or g["returncode"] or h["returncode"]:
        return "not determined (a run failed)"
    if h["report_lines"] > 0:
        return "no stale kernel without the tag either (H reported)"
    return ("STALE without the tag: H (nan_inf_check) ran kernels without the pass after G filled "
            "the caches; the cache key tag is what prevents it")


def _commit() -> str:
    from triton_ext.bench.gpu import checkout_commit  # after this module has set the environment

    return checkout_commit(short=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "results" / "torch-compile-h200.json")
    parser.add_argument("--runs", default="".join(r[0] for r in RUNS),
                        help="which runs, in order (default: all, ABCDEFGH)")
    args = parser.parse_args()
    commit = _commit()  # before the run: a dirty checkout is refused now, not after it
    import torch

    results, failures = [], []
    with tempfile.TemporaryDirectory(prefix="triton-ext-torch-compile-") as tmp:
        userbase = Path(tmp) / "userbase"
        site = make_user_site(userbase)
        added: list[Path] = []
        if not user_site_works(userbase):
            # This Python ignores user sites (a venv, or -s): put the two .pth files into its
            # site-packages for the duration of the check instead.
            target = Path(sysconfig.get_paths()["purelib"])
            for pth in site.glob("*.pth"):
                dest = target / pth.name
                dest.write_text(pth.read_text(encoding="utf-8"), encoding="utf-8")
                added.append(dest)
            site = target
        try:
            for name, enable, threads, cache_set, expect in [r for r in RUNS if r[0] in args.runs]:
                rec = run_child(name, enable, threads, Path(tmp) / f"caches-{cache_set}", userbase,
                                untagged=cache_set == "untagged")
                rec["cache_set"] = cache_set
                rec["expect_reports"] = expect
                results.append(rec)
                print(f"run {name}: enable={enable} threads={threads} caches={cache_set} rc={rec['returncode']} "
                      f"reports={rec['report_lines']} kernels={rec['reporting_kernels'][:4]} "
                      f"fx hit/miss={rec['child'].get('fxgraph_cache_hit')}/{rec['child'].get('fxgraph_cache_miss')}",
                      flush=True)
        finally:
            for dest in added:
                dest.unlink(missing_ok=True)
        for rec in results:
            name, enable, threads, expect = rec["run"], rec["TRITON_EXT_ENABLE"], rec["compile_threads"], rec["expect_reports"]
            if expect is None:
                rec["ok"] = None
                continue
            ok = rec["returncode"] == 0 and (rec["report_lines"] > 0) == expect
            if enable and rec["returncode"] == 0 and not rec["child"].get("triton_ext_in_sys_modules"):
                ok = False
                rec["problem"] = "triton_ext was not imported at start-up (the .pth did not run)"
            rec["ok"] = ok
            if not ok:
                failures.append(f"run {name} (TRITON_EXT_ENABLE={enable}, threads={threads}): "
                                f"rc={rec['returncode']} reports={rec['report_lines']} expected "
                                f"{'some' if expect else 'none'}")
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=30).stdout.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        driver = "unknown"
    import triton

    payload = {
        "what": "torch.compile with TRITON_EXT_ENABLE and no import of triton_ext: reach with compile "
                "workers, and no stale kernel when the enabled set changes (FX graph + autotune caches on)",
        "commit": commit,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "gpu": torch.cuda.get_device_name(0), "driver": driver,
        "versions": {"torch": torch.__version__, "triton": triton.__version__, "python": sys.version.split()[0]},
        "site_with_pth": str(site),
        "untagged_stale": _untagged_verdict(results), "runs": results, "failures": failures, "passed": not failures,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {'PASS' if not failures else 'FAIL'}")
    for f in failures:
        print("  FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
