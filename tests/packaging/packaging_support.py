"""Helpers for the packaging tests (a plain module, not a conftest: no name clash across folders)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
BUILD = Path(os.environ.get("TRITON_EXT_BUILD_DIR") or REPO / "build")

_TMP = Path(tempfile.mkdtemp(prefix="triton-ext-packaging-"))
os.environ.setdefault("TRITON_CACHE_DIR", str(_TMP / "triton-cache"))
os.environ.setdefault("TRITON_EXT_CACHE_DIR", str(_TMP / "preflight"))
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")


def ensure_built(name: str) -> Path:
    """Build `name` into BUILD unless its library is there; returns the plugins folder."""
    from triton_ext import _build

    plugins = BUILD / "plugins"
    from triton_ext._manifest import load_manifest

    ext = load_manifest(REPO / "registry.yaml", entry_points=False).extension(name)
    if not (plugins / f"lib{ext.library}.so").exists() or not (BUILD / "CMakeCache.txt").exists():
        result = _build.build([name], BUILD, quiet=True, root=REPO)
        assert result.ok, f"building {name} failed: {result.failed}"
    return plugins
