"""The repository's registry.yaml is valid and names folders that exist.

triton-ext's own fixture plugins are exercised in tests/cpp/test_fixture_plugins.py.
"""

from __future__ import annotations

import pytest
from tests.python.conftest import REPO

from triton_ext._manifest import load_manifest


def test_repo_registry_is_valid() -> None:
    path = REPO / "registry.yaml"
    if not path.exists():
        pytest.skip("registry.yaml not written yet")
    manifest = load_manifest(path, entry_points=False)
    for ext in manifest.extensions:
        assert (REPO / ext.directory).is_dir(), f"{ext.name}: directory {ext.directory} missing"
