"""The repository root as a pip project: `pip wheel .` (and so `pip install .`) stops with one line
naming the commands that work, instead of building a core package without
libTritonExtPassInfra.so; `pip install -e .` installs the start-up hook with the package."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.packaging.packaging_support import REPO

from triton_ext.dev.startup_hook import PTH_LINE, PTH_NAME


def _pip(*args: str, cwd: Path, isolated: bool = False) -> subprocess.CompletedProcess[str]:
    # Without build isolation this Python's setuptools builds (no download).
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    return subprocess.run([sys.executable, "-m", "pip", *args, "--no-deps",
                           *(() if isolated else ("--no-build-isolation",))],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_pip_wheel_of_the_root_stops_with_one_line(tmp_path: Path) -> None:
    res = _pip("wheel", str(REPO), "-w", str(tmp_path / "out"), cwd=tmp_path)
    assert res.returncode != 0
    assert not list((tmp_path / "out").glob("*.whl")) if (tmp_path / "out").exists() else True
    lines = [line.strip() for line in (res.stdout + res.stderr).splitlines()
             if line.strip().startswith("triton-ext: ")]
    assert len(lines) == 1, res.stdout + res.stderr
    assert "would lack libTritonExtPassInfra.so" in lines[0]
    assert "`pip install -e .`" in lines[0] and "`triton-ext wheel --core" in lines[0]


def test_editable_install_installs_the_startup_hook(tmp_path: Path) -> None:
    venv = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    # pip runs under the fresh venv's Python, which has no setuptools: the build is isolated (pip
    # fetches setuptools from its index or cache).
    res = _pip("--python", str(venv / "bin" / "python"), "install", "-e", str(REPO), cwd=tmp_path,
               isolated=True)
    assert res.returncode == 0, res.stdout + res.stderr
    site = next(venv.glob("lib/python*/site-packages"))
    assert (site / PTH_NAME).read_text() == PTH_LINE
    record = next(site.glob("triton_ext-*.dist-info/RECORD")).read_text()
    assert f"{PTH_NAME},sha256=" in record  # pip uninstall triton-ext removes it too
