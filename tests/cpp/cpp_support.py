"""Shared paths for the C++-side tests (toolchain, build rules, ABI probe, fixture plugins).

Each compiles real code with the project toolchain and runs it inside the stock triton wheel.
"""

from __future__ import annotations


from triton_ext.testing import build_dir, repo_root

REPO = repo_root()
BUILD = build_dir()
TEST_PLUGINS = BUILD / "test-plugins"
