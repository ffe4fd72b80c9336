"""Helpers for the packaging tests (a plain module, not a conftest: no name clash across folders)."""

from __future__ import annotations

from pathlib import Path

from triton_ext.testing import build_dir, repo_root

REPO = repo_root()
BUILD = build_dir()



def ensure_built(name: str) -> Path:
    """Build `name` into BUILD unless its library is there; returns the plugins folder."""
    from triton_ext.dev import build as _build

    plugins = BUILD / "plugins"
    from triton_ext._manifest import load_manifest

    ext = load_manifest(REPO / "registry.yaml", entry_points=False).extension(name)
    if not (plugins / f"lib{ext.library}.so").exists() or not (BUILD / "CMakeCache.txt").exists():
        result = _build.build([name], BUILD, quiet=True, root=REPO)
        assert result.ok, f"building {name} failed: {result.failed}"
    return plugins
