#!/usr/bin/env python3
"""Mutation testing: plant one small bug at a time in an extension's C++ and check that the
extension's own tests notice it.

The mutants are listed in ``tests/mutation/mutants.yaml`` (file, exact old text, new text, the
extension whose suite must kill it). For each mutant this script

1. syncs a scratch copy of the checkout (``build/mutation/tree``: tracked and untracked files
   that git does not ignore; the user's tree is never edited, and the copy keeps its own build
   folder, so a rerun rebuilds only what changed),
2. applies the edit there (``old`` must occur exactly once, else the mutant is ``stale``),
3. rebuilds only that extension (``python -m triton_ext build NAME`` in the copy),
4. runs the extension's lit folders, then its pytest paths (stopping at the first failure unless
   ``--all-tests``), and records ``killed`` (with the first failing test) or ``survived``,
5. restores the file (always, also on Ctrl-C or an error).

A baseline run of every suite involved, unmutated, comes first (``--no-baseline`` skips it): a
suite that fails without a mutant would "kill" everything. Results go to
``tests/mutation/results.json`` for a full run (commit, date, per-mutant outcome and duration),
to ``build/mutation/results-partial.json`` with ``--only`` (``--only ... --update`` merges into
``results.json``, each mutant's row keeping the commit and date it was run at). Exit status 0
only when every mutant in the written file was killed.

    python tools/mutate.py --list
    python tools/mutate.py                                  # every mutant, about 1-3 min each
    python tools/mutate.py --only loop-split-pid-range-2-24,offset-overflow-make-range-end
    python tools/mutate.py --only nvidia_auto_pdl --all-tests  # every test that kills each
    python tools/mutate.py --only loop_split --update      # rerun some, keep the rest
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

import yaml

REPO = Path(__file__).resolve().parent.parent
MUTANTS = REPO / "tests" / "mutation" / "mutants.yaml"
RESULTS = REPO / "tests" / "mutation" / "results.json"
WORK = REPO / "build" / "mutation"
#: Folders of the scratch copy that the sync leaves alone (its build output and caches).
_KEEP = {"build", ".pytest_cache", "__pycache__", ".venv", ".git"}


class MutationError(Exception):
    """The mutant list or the checkout cannot be used (the message says what to fix)."""


@dataclass(frozen=True)
class Suite:
    lit: tuple[str, ...]
    pytest: tuple[str, ...]
    needs: tuple[str, ...] = ()  # other extensions the tests load (built once, unmutated)


@dataclass(frozen=True)
class Mutant:
    id: str
    extension: str
    file: str
    old: str
    new: str
    why: str
    pytest: tuple[str, ...] = ()

    def line(self, root: Path) -> int | None:
        """1-based line of the edit in ``root`` (None when the text is not there)."""
        text = (root / self.file).read_text(encoding="utf-8")
        at = text.find(self.old)
        return None if at < 0 else text.count("\n", 0, at) + 1


@dataclass
class Outcome:
    id: str
    extension: str
    file: str
    line: int | None
    outcome: str  # killed | survived | stale | build-error | baseline-failed
    killed_by: list[str] = field(default_factory=list)
    stage: str | None = None  # lit | pytest | timeout
    duration_s: float = 0.0
    detail: str = ""


@dataclass(frozen=True)
class MutantList:
    suites: dict[str, Suite]
    mutants: tuple[Mutant, ...]


def load_mutants(path: Path = MUTANTS) -> MutantList:
    """Parses and checks the mutant list (ids unique, every extension has a suite)."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or "mutants" not in data or "suites" not in data:
        raise MutationError(f"{path}: expected top-level keys 'suites' and 'mutants'")
    suites = {name: Suite(tuple(s.get("lit", ())), tuple(s.get("pytest", ())),
                          tuple(s.get("needs", ())))
              for name, s in data["suites"].items()}
    mutants, seen = [], set()
    for i, m in enumerate(data["mutants"]):
        missing = [k for k in ("id", "extension", "file", "old", "new", "why") if k not in m]
        if missing:
            raise MutationError(f"{path}: mutant #{i + 1} lacks {', '.join(missing)}")
        if m["id"] in seen:
            raise MutationError(f"{path}: mutant id {m['id']!r} appears twice")
        if m["extension"] not in suites:
            raise MutationError(f"{path}: mutant {m['id']!r} names extension {m['extension']!r} "
                                f"with no suite; known: {', '.join(sorted(suites))}")
        if m["old"] == m["new"]:
            raise MutationError(f"{path}: mutant {m['id']!r} changes nothing")
        seen.add(m["id"])
        mutants.append(Mutant(m["id"], m["extension"], m["file"], m["old"], m["new"],
                              " ".join(m["why"].split()), tuple(m.get("pytest", ()))))
    return MutantList(suites, tuple(mutants))


def select(mutants: Sequence[Mutant], only: str | None) -> list[Mutant]:
    """``--only``: comma-separated mutant ids or extension names."""
    if not only:
        return list(mutants)
    wanted = {w.strip() for w in only.split(",") if w.strip()}
    known = {m.id for m in mutants} | {m.extension for m in mutants}
    unknown = sorted(wanted - known)
    if unknown:
        raise MutationError(f"--only: unknown {', '.join(unknown)}; see --list")
    return [m for m in mutants if m.id in wanted or m.extension in wanted]


# --- the scratch copy ------------------------------------------------------------------------

def _source_files(root: Path) -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=root, capture_output=True, check=True).stdout
    return [p for p in out.decode().split("\0") if p and (root / p).is_file()]


def sync_tree(root: Path, tree: Path) -> int:
    """Makes ``tree`` hold exactly root's source files; returns how many were (re)written.
    Changed files get a fresh mtime, so Ninja rebuilds what they feed."""
    files = _source_files(root)
    wanted = set(files)
    written = 0
    for rel in files:
        src, dst = root / rel, tree / rel
        data = src.read_bytes()
        if dst.is_file() and dst.read_bytes() == data:
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(data)
        shutil.copymode(src, dst)
        written += 1
    for dirpath, dirnames, filenames in os.walk(tree):
        dirnames[:] = [d for d in dirnames if d not in _KEEP]
        for name in filenames:
            rel = os.path.relpath(os.path.join(dirpath, name), tree)
            if rel not in wanted:
                os.unlink(os.path.join(dirpath, name))
    return written


def _env(tree: Path, cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    for var in ("TRITON_EXT_BUILD_DIR", "TRITON_EXT_REGISTRY", "TRITON_EXT_ENABLE"):
        env.pop(var, None)  # the copy's own build/ and registry.yaml
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(tree), env.get("PYTHONPATH")) if p)
    env["TRITON_CACHE_DIR"] = str(cache)
    env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # as tools/test.sh runs the suite
    if shutil.which("ccache") and "CMAKE_CXX_COMPILER_LAUNCHER" not in env:
        env["CMAKE_CXX_COMPILER_LAUNCHER"] = "ccache"
        env.setdefault("CCACHE_BASEDIR", str(REPO.parent))
    return env


@dataclass
class Run:
    ok: bool
    output: str
    timed_out: bool = False


def _run(cmd: Sequence[str], tree: Path, env: dict[str, str], timeout: float) -> Run:
    try:
        res = subprocess.run(list(cmd), cwd=tree, env=env, capture_output=True, text=True,
                             timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"")
        out = out.decode(errors="replace") if isinstance(out, bytes) else out
        return Run(False, out, timed_out=True)
    return Run(res.returncode == 0, res.stdout + res.stderr)


def build(tree: Path, extensions: Sequence[str], env: dict[str, str], timeout: float) -> Run:
    return _run([sys.executable, "-m", "triton_ext", "build", *extensions], tree, env, timeout)


def _lit() -> str:
    """The lit script of this Python's environment (lit has no ``python -m lit``)."""
    beside = Path(sys.executable).with_name("lit")
    found = str(beside) if beside.exists() else shutil.which("lit")
    if not found:
        raise MutationError("lit not found next to this Python or on PATH; pip install lit")
    return found


_LIT_FAIL = re.compile(r"^\s*(?:FAIL|XPASS|UNRESOLVED|TIMEOUT): \S+ :: (\S+)", re.M)
_PYTEST_FAIL = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.M)


def run_suite(tree: Path, suite: Suite, extra_pytest: Sequence[str], env: dict[str, str],
              timeout: float, all_tests: bool) -> tuple[str | None, list[str], str]:
    """Runs lit then pytest; returns (stage that failed or None, failing tests, output tail)."""
    failed_stage, failing, tail = None, [], ""
    deadline = time.monotonic() + timeout
    if suite.lit:
        cmd = [_lit(), "-q", *suite.lit]
        res = _run(cmd, tree, env, max(1.0, deadline - time.monotonic()))
        if res.timed_out:
            return "timeout", [f"lit timed out after {timeout:.0f}s"], res.output[-3000:]
        if not res.ok:
            failed_stage, tail = "lit", res.output[-3000:]
            failing += [f"lit: {t}" for t in _LIT_FAIL.findall(res.output)] or ["lit: (see detail)"]
            if not all_tests:
                return failed_stage, failing, tail
    paths = [*suite.pytest, *extra_pytest]
    if paths:
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE",
               *(() if all_tests else ("-x",)), *paths]
        res = _run(cmd, tree, env, max(1.0, deadline - time.monotonic()))
        if res.timed_out:
            return "timeout", failing + [f"pytest timed out after {timeout:.0f}s"], res.output[-3000:]
        if not res.ok:
            failed_stage = failed_stage or "pytest"
            tail = tail or res.output[-3000:]
            failing += [f"pytest: {t}" for t in _PYTEST_FAIL.findall(res.output)] \
                or ["pytest: (see detail)"]
    return failed_stage, failing, tail


def run_mutant(m: Mutant, tree: Path, suites: dict[str, Suite], env: dict[str, str],
               timeout: float, all_tests: bool, log) -> Outcome:
    start = time.monotonic()
    path = tree / m.file
    original = path.read_text(encoding="utf-8")
    line = m.line(tree)
    result = Outcome(m.id, m.extension, m.file, line, "stale")
    count = original.count(m.old)
    if count != 1:
        result.detail = (f"the old text occurs {count} times in {m.file} (must be once): "
                         "update tests/mutation/mutants.yaml to the current source")
        return result
    try:
        path.write_text(original.replace(m.old, m.new, 1), encoding="utf-8")
        built = build(tree, [m.extension], env, timeout)
        if not built.ok:
            result.outcome = "build-error"
            result.detail = built.output[-3000:]
            return result
        stage, failing, tail = run_suite(tree, suites[m.extension], m.pytest, env, timeout,
                                         all_tests)
        if stage is None:
            result.outcome = "survived"
        else:
            result.outcome, result.stage, result.killed_by = "killed", stage, failing
            result.detail = tail if stage == "timeout" or "(see detail)" in " ".join(failing) else ""
        return result
    finally:
        path.write_text(original, encoding="utf-8")
        result.duration_s = round(time.monotonic() - start, 1)
        log(f"  {result.outcome:<12} {m.id}  ({result.duration_s:.0f}s)"
            + (f"  <- {result.killed_by[0]}" if result.killed_by else ""))


def _git(*args: str) -> str:
    res = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
    return res.stdout.strip() if res.returncode == 0 else ""


def _versions() -> dict[str, str]:
    try:
        import triton
        tv = triton.__version__
    except Exception as exc:  # recorded, not fatal: the children report the real failure
        tv = f"unavailable ({type(exc).__name__})"
    return {"python": platform.python_version(), "triton": tv}


def list_mutants(ml: MutantList) -> None:
    for m in ml.mutants:
        line = m.line(REPO)
        where = f"{m.file}:{line}" if line else f"{m.file} (STALE: old text not found)"
        print(f"{m.id:<42} {m.extension:<24} {where}\n    {m.why}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--only", help="comma-separated mutant ids or extension names")
    ap.add_argument("--mutants", type=Path, default=MUTANTS, help="the mutant list (YAML)")
    ap.add_argument("--output", type=Path,
                    help="results JSON (default: tests/mutation/results.json for a full run or "
                         "--update, build/mutation/results-partial.json with --only)")
    ap.add_argument("--tree", type=Path, default=WORK / "tree",
                    help="the scratch copy (kept between runs for incremental builds)")
    ap.add_argument("--timeout", type=float, default=1800.0,
                    help="seconds per mutant for the build and for its tests (default 1800)")
    ap.add_argument("--no-baseline", action="store_true",
                    help="skip running the suites unmutated first")
    ap.add_argument("--update", action="store_true",
                    help="merge this run's mutants into the existing results file (the others "
                         "keep their recorded outcome) instead of replacing it")
    ap.add_argument("--all-tests", action="store_true",
                    help="run every test of the suite against each mutant and record all that "
                         "fail (slower; shows how many tests hold each rule)")
    args = ap.parse_args(argv)
    log = lambda s: print(s, flush=True)  # noqa: E731

    try:
        ml = load_mutants(args.mutants)
        if args.list:
            list_mutants(ml)
            return 0
        chosen = select(ml.mutants, args.only)
    except MutationError as exc:
        print(f"mutate: {exc}", file=sys.stderr)
        return 2
    output = args.output or (WORK / "results-partial.json" if args.only and not args.update
                             else RESULTS)
    tree = args.tree.resolve()
    tree.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    log(f"mutate: syncing {tree} ... {sync_tree(REPO, tree)} files written")

    outcomes: list[Outcome] = []
    extensions = sorted({m.extension for m in chosen})
    needed = sorted({n for e in extensions for n in ml.suites[e].needs} - set(extensions))
    with tempfile.TemporaryDirectory(prefix="mutate-cache-") as cache:
        env = _env(tree, Path(cache))
        log(f"mutate: building {', '.join(extensions + needed)}")
        built = build(tree, extensions + needed, env, args.timeout)
        if not built.ok:
            print(f"mutate: the unmutated build fails:\n{built.output[-4000:]}", file=sys.stderr)
            return 2
        broken: dict[str, str] = {}
        if not args.no_baseline:
            for ext in extensions:
                extra = sorted({p for m in chosen if m.extension == ext for p in m.pytest})
                t0 = time.monotonic()
                stage, failing, tail = run_suite(tree, ml.suites[ext], extra, env, args.timeout,
                                                 all_tests=False)
                log(f"  baseline     {ext}: {'ok' if stage is None else 'FAILS'} "
                    f"({time.monotonic() - t0:.0f}s)")
                if stage is not None:
                    broken[ext] = f"the suite fails without a mutant: {', '.join(failing[:3])}\n{tail}"
        for m in chosen:
            if m.extension in broken:
                outcomes.append(Outcome(m.id, m.extension, m.file, m.line(tree), "baseline-failed",
                                        detail=broken[m.extension]))
                log(f"  baseline-failed {m.id}")
                continue
            outcomes.append(run_mutant(m, tree, ml.suites, env, args.timeout, args.all_tests, log))
        # Leave the copy's plugins built from the unmutated sources.
        build(tree, extensions, env, args.timeout)

    run = {
        "commit": _git("rev-parse", "HEAD"),
        "dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": "python tools/mutate.py " + " ".join(sys.argv[1:] if argv is None else argv),
        **_versions(),
        "all_tests": args.all_tests,
        "baseline": not args.no_baseline,
        "duration_s": round(time.monotonic() - started, 1),
    }
    rows = [{**asdict(o), "commit": run["commit"], "date": run["date"]} for o in outcomes]
    runs = [run]
    if args.update and output.is_file():
        old = json.loads(output.read_text(encoding="utf-8"))
        fresh = {r["id"] for r in rows}
        listed = {m.id for m in ml.mutants}
        rows = [r for r in old.get("mutants", []) if r["id"] not in fresh and r["id"] in listed] + rows
        order = {m.id: i for i, m in enumerate(ml.mutants)}
        rows.sort(key=lambda r: order.get(r["id"], len(order)))
        runs = old.get("runs", []) + [run]
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
    report = {"schema": 1, **run, "runs": runs, "summary": counts, "mutants": rows}
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    log(f"mutate: {', '.join(f'{v} {k}' for k, v in sorted(counts.items()))}; wrote {output}")
    return 0 if counts.get("killed", 0) == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
