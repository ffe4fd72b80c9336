"""Every extension's FileCheck tests (`*.mlir` under passes/, backends/, dialects/, language/),
one pytest item per file, run through lit with the repository's lit.cfg.py.

The files this session selects run in one lit invocation over two workers (lit's own ``-j``;
each RUN line starts a Python, so this halves their wall time on two cores), and each item
reports its file's lit result: a file fails its item exactly when ``lit -v FILE`` would exit
non-zero (FAIL, XPASS, UNRESOLVED, TIMEOUT), with lit's output for that file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from triton_ext.testing import repo_root

REPO = repo_root()
ROOTS = ("passes", "backends", "dialects", "language", "tools")
LIT_FILES = sorted(p for root in ROOTS for p in (REPO / root).rglob("*.mlir")
                   if "Inputs" not in p.parts)
#: lit's result codes for which `lit FILE` exits 0.
LIT_OK = {"PASS", "XFAIL", "UNSUPPORTED"}


def test_there_are_lit_tests() -> None:
    assert LIT_FILES, "no .mlir lit tests found"


@pytest.fixture(scope="module")
def lit_results(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One lit run over the files whose items this session runs: relative path -> lit's record
    (``code``, ``output``), plus ``"__run__"``: the run's exit status, stdout and stderr."""
    selected = sorted({str(item.callspec.params["path"]) for item in request.session.items
                       if item.module is request.module and hasattr(item, "callspec")
                       and "path" in item.callspec.params})
    out = tmp_path_factory.mktemp("lit") / "results.json"
    lit = Path(sys.executable).with_name("lit")
    jobs = max(1, min(2, os.cpu_count() or 1))
    res = subprocess.run([str(lit), "-v", "-j", str(jobs), "-o", str(out), *selected], cwd=REPO,
                         capture_output=True, text=True, timeout=1800)
    results: dict[str, Any] = {"__run__": res}
    if out.exists():
        for test in json.loads(out.read_text(encoding="utf-8"))["tests"]:
            results[test["name"].split(" :: ", 1)[1]] = test
    return results


@pytest.mark.parametrize("path", LIT_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_lit(path: Path, lit_results: dict[str, Any]) -> None:
    rel = str(path.relative_to(REPO))
    record = lit_results.get(rel)
    if record is None:
        run = lit_results["__run__"]
        pytest.fail(f"lit reported no result for {rel} (exit {run.returncode}):\n"
                    f"{run.stdout[-6000:]}\n{run.stderr[-2000:]}")
    assert record["code"] in LIT_OK, f"lit failed for {rel} ({record['code']}):\n{record['output'][-6000:]}"
