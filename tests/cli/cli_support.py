"""Helpers for the CLI tests (`triton-ext new`, `triton-ext test`); a plain module, not a conftest,
so that its name does not clash with other test folders' conftest.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from triton_ext.testing import repo_root

REPO = repo_root()


#: What a checkout needs to configure, build and lit-test extensions (no extensions themselves).
CHECKOUT_FILES = ("CMakeLists.txt", "cmake", "infra", "triton_ext", "lit.cfg.py", "pyproject.toml",
                  "registry.yaml")


def scratch_checkout(dest: Path) -> Path:
    """A copy of the repository's build scaffolding, with the real registry.yaml."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in CHECKOUT_FILES:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dest / name)
    return dest


def cli(*args: str, cwd: Path = REPO, **env: str) -> subprocess.CompletedProcess:
    """`python -m triton_ext ARGS` from this repository."""
    full = {**os.environ, "PYTHONPATH": str(REPO), **env}
    return subprocess.run([sys.executable, "-m", "triton_ext", *args], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=900)
