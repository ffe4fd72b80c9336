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


def test_auto_candidates_are_the_optimizations_marked_in_the_registry() -> None:
    # Issue 27.3: the transparent mode's bare `auto` tries only passes marked `auto: true`; the
    # occupancy hint (a recorded negative result), the checks and the lowerings are never tried unasked.
    manifest = load_manifest(REPO / "registry.yaml", entry_points=False)
    marked = sorted(p.name for p in manifest.passes if p.auto)
    assert marked == ["grid_swizzle", "loop_split", "nvidia_auto_pdl", "nvidia_pipeline_deeper", "nvidia_pipeline_dots",
                      "nvidia_stream_eviction"]
    assert not next(p for p in manifest.passes if p.name == "nvidia_occupancy_hint").auto
