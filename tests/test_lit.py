"""Every extension's FileCheck tests (`*.mlir` under passes/, backends/, dialects/, language/),
one pytest item per file, run through lit with the repository's lit.cfg.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from triton_ext.testing import repo_root

REPO = repo_root()
ROOTS = ("passes", "backends", "dialects", "language", "tools")
LIT_FILES = sorted(p for root in ROOTS for p in (REPO / root).rglob("*.mlir")
                   if "Inputs" not in p.parts)


def test_there_are_lit_tests() -> None:
    assert LIT_FILES, "no .mlir lit tests found"


@pytest.mark.parametrize("path", LIT_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_lit(path: Path) -> None:
    lit = Path(sys.executable).with_name("lit")
    res = subprocess.run([str(lit), "-v", str(path)], cwd=REPO,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, f"lit failed for {path.relative_to(REPO)}:\n{res.stdout[-6000:]}\n{res.stderr[-2000:]}"
