"""triton-ext's own fixture plugins and registry, once the C++ build has produced them.

These tests skip when ``build/plugins/libTritonExtTestFixture*.so`` (or the repo's
registry.yaml) do not exist yet; the same behaviour is covered with Triton's own
test plugin elsewhere.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest

import triton_ext
from conftest import REPO, compile_kernel
from triton_ext import _stages
from triton_ext._errors import LoadError, PassFailedError, TritonExtWarning
from triton_ext._manifest import load_manifest
from triton_ext._preflight import preflight


def fixture_libraries() -> list[Path]:
    build = Path(os.environ.get("TRITON_EXT_BUILD_DIR") or REPO / "build")
    roots = {REPO / "build" / "plugins", build / "plugins"}
    return sorted({p for root in roots for p in root.glob("libTritonExtTestFixture*.so")})


FIXTURES = fixture_libraries()
needs_fixtures = pytest.mark.skipif(not FIXTURES, reason="fixture plugins not built (build/plugins/libTritonExtTestFixture*.so)")


def registry_for(libraries: list[Path], directory: Path) -> Path:
    lines = ["schema: 1", "extensions:"]
    for lib in libraries:
        report = preflight(lib)
        library = lib.name[len("lib"):-len(".so")]
        lines += [
            f"  {library.lower()}:",
            "    kind: pass",
            "    directory: tests/fixtures",
            f"    library: {library}",
            "    status: experimental",
            "    summary: Test fixture.",
            "    targets:",
            "      cuda: {}",
            "    passes:",
        ]
        lines += [f"      {name}:\n        stage: ttir" for name in report.passes]
    path = directory / "registry.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


@needs_fixtures
@pytest.mark.parametrize("library", FIXTURES, ids=lambda p: p.name)
def test_fixture_passes_preflight(library: Path) -> None:
    report = preflight(library)
    assert report.api_version == 2 and report.triton_version == "3.9.0" and report.passes


@needs_fixtures
@pytest.mark.parametrize("library", FIXTURES, ids=lambda p: p.name)
def test_fixture_runs_at_the_end_of_ttir(library: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # One fixture at a time; a failing fixture must warn (or raise in strict mode),
    # a fixture reusing a loaded pass name must be refused at load.
    monkeypatch.setenv("TRITON_EXT_REGISTRY", str(registry_for([library], tmp_path)))
    monkeypatch.setenv("TRITON_EXT_BUILD_DIR", str(library.parent.parent))
    names = [p.name for p in load_manifest().passes]
    try:
        triton_ext.enable(*names)
    except LoadError as exc:
        assert "already provided by" in str(exc) or "already loaded" in str(exc)
        return
    with warnings.catch_warnings(record=True) as caught, _stages.record() as plans:
        warnings.simplefilter("always")
        kernel = compile_kernel(block=8)
    assert "cubin" in kernel.asm
    failed = [w for w in caught if issubclass(w.category, TritonExtWarning)]
    if failed:
        assert "failed in make_ttir" in str(failed[0].message)
        with triton_ext.settings.scope(strict=True), pytest.raises(PassFailedError):
            compile_kernel(block=4)
    else:
        assert plans[0].placed_names() == names


def test_repo_registry_is_valid() -> None:
    path = REPO / "registry.yaml"
    if not path.exists():
        pytest.skip("registry.yaml not written yet")
    manifest = load_manifest(path, entry_points=False)
    for ext in manifest.extensions:
        assert (REPO / ext.directory).is_dir(), f"{ext.name}: directory {ext.directory} missing"
