"""The Triton release a plugin was built for: recorded by the build beside each library, checked
before any plugin code runs; and preflight verdicts that do not travel between environments."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.packaging.packaging_support import BUILD, REPO, ensure_built

from triton_ext import _preflight
from triton_ext._compat import TritonReleaseError, built_for, record_path
from triton_ext._errors import PreflightError
from triton_ext._preflight import installed_triton_version, preflight

LIB = "libTritonExtLoopSplit.so"


@pytest.fixture(scope="module")
def plugins() -> Path:
    from triton_ext.dev import build as _build

    ensure_built("loop_split")
    result = _build.build(["loop_split"], BUILD, quiet=True, root=REPO)  # up to date: writes records
    assert result.ok, result.failed
    return BUILD / "plugins"


def test_build_records_the_triton_release(plugins: Path) -> None:
    for name in (LIB, "libTritonExtPassInfra.so"):
        record = record_path(plugins / name)
        assert json.loads(record.read_text()) == {"triton": installed_triton_version()}
        assert built_for(plugins / name) == installed_triton_version()


def _copy(plugins: Path, dest: Path, *, infra: bool = True) -> Path:
    dest.mkdir()
    shutil.copy(plugins / LIB, dest / LIB)
    if infra:
        shutil.copy(plugins / "libTritonExtPassInfra.so", dest / "libTritonExtPassInfra.so")
    return dest / LIB


def test_other_release_is_refused_in_one_line_before_any_plugin_code(
        plugins: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    library = _copy(plugins, tmp_path / "plugins")
    record_path(library).write_text('{"triton": "3.8.0"}\n')
    monkeypatch.setenv("TRITON_EXT_CACHE_DIR", str(tmp_path / "pf"))
    monkeypatch.setattr(_preflight.subprocess, "run",
                        lambda *a, **k: pytest.fail("the plugin must not be loaded to refuse it"))
    with pytest.raises(TritonReleaseError) as info:
        preflight(library, "loop_split")
    message = str(info.value)
    assert "\n" not in message
    assert f"built for Triton 3.8.0, but Triton {installed_triton_version()} is installed" in message
    assert "install triton==3.8.0" in message


def test_verdict_from_another_environment_is_not_reused(plugins: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # The same plugin bytes pass where libTritonExtPassInfra.so sits beside them (a checkout) ...
    monkeypatch.setenv("TRITON_EXT_CACHE_DIR", str(tmp_path / "pf"))
    assert preflight(_copy(plugins, tmp_path / "with-infra"), "loop_split").passes == ("loop_split",)
    # ... and fail where it does not (a core install without the infra library): the cached
    # verdict of the first must not answer for the second.
    with pytest.raises(PreflightError, match="libTritonExtPassInfra.so"):
        preflight(_copy(plugins, tmp_path / "alone", infra=False), "loop_split")
