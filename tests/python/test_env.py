"""Settings, TRITON_EXT_ENABLE at import, and what importing does by itself."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.python.conftest import REPO
from triton_ext import settings

CHILD = textwrap.dedent(
    """\
    import sys
    import triton_ext  # first: conftest clears TRITON_EXT_ENABLE for the test session
    from tests.python.conftest import compile_kernel, renamed
    from triton import knobs
    print("hook", knobs.runtime.add_stages_inspection_hook is not None)
    print("renamed", renamed(compile_kernel()))
    print("enabled", sorted(triton_ext.enabled_passes()))
    """
)


def run_child(env_extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO), **env_extra)
    code = CHILD
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)


def test_triton_ext_enable_at_import(registry: Path, build_dir: Path) -> None:
    proc = run_child({"TRITON_EXT_ENABLE": "plugin"})
    assert proc.returncode == 0, proc.stderr
    assert "hook True" in proc.stdout and "renamed True" in proc.stdout and "enabled ['plugin']" in proc.stdout


def test_import_alone_does_nothing(registry: Path) -> None:
    proc = run_child({})
    assert proc.returncode == 0, proc.stderr
    assert "hook False" in proc.stdout and "renamed False" in proc.stdout


def test_triton_ext_enable_unknown_name_fails_loudly(registry: Path) -> None:
    proc = run_child({"TRITON_EXT_ENABLE": "plugn"})
    assert proc.returncode != 0
    assert "UnknownPassError" in proc.stderr and "did you mean 'plugin'?" in proc.stderr


def test_settings_read_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TRITON_EXT_ENABLE", " a, b ,")
    monkeypatch.setenv("TRITON_EXT_STRICT", "yes")
    monkeypatch.setenv("TRITON_EXT_BUILD_DIR", str(tmp_path))
    assert settings.enable == ("a", "b") and settings.strict is True and settings.build_dir == tmp_path
    monkeypatch.setenv("TRITON_EXT_STRICT", "sometimes")
    with pytest.raises(ValueError, match="TRITON_EXT_STRICT: expected one of 1, 0"):
        settings.strict
    monkeypatch.delenv("TRITON_EXT_STRICT")
    monkeypatch.delenv("TRITON_EXT_BUILD_DIR")
    assert settings.strict is False and settings.build_dir == REPO / "build"


def test_settings_scope_overrides_and_restores() -> None:
    before = settings.strict
    with settings.scope(strict=not before):
        assert settings.strict is (not before)
    assert settings.strict is before
    with pytest.raises(AttributeError, match="unknown settings"):
        with settings.scope(nonsense=1):
            pass
