"""The repository's registry.yaml is valid and names folders that exist.

triton-ext's own fixture plugins are exercised in tests/cpp/test_fixture_plugins.py.
"""

from __future__ import annotations

from tests.python.conftest import REPO

from triton_ext._manifest import load_manifest


def test_repo_registry_is_valid() -> None:
    path = REPO / "registry.yaml"
    assert path.exists(), f"{path} is missing: the checkout's registry must exist"
    manifest = load_manifest(path, entry_points=False)
    for ext in manifest.extensions:
        assert (REPO / ext.directory).is_dir(), f"{ext.name}: directory {ext.directory} missing"
