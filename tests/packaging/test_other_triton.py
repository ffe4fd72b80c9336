"""Under another Triton release, installed wheels refuse to load in one line naming both versions.

Slow: a fresh venv gets the real triton 3.8.0 from pip (its index or cache; 248 MB, no headers,
which is why it is not supported), then the core and loop_split wheels built here for 3.9.0 with
``--no-deps`` (pip would otherwise refuse the pin, as it should). A script run with
``TRITON_EXT_ENABLE=loop_split`` and no import gets one line from the start-up hook and compiles
without the pass; ``triton-ext doctor`` names the fix.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.packaging.packaging_support import BUILD, REPO, ensure_built

from triton_ext.dev import wheel as _wheel

pytestmark = pytest.mark.slow
OTHER = "3.8.0"


def test_wheels_refuse_another_triton_release_in_one_line(tmp_path: Path) -> None:
    from triton_ext._preflight import installed_triton_version

    built = installed_triton_version()
    assert built != OTHER
    ensure_built("loop_split")
    dist = tmp_path / "dist"
    wheels = [_wheel.build_wheel(_wheel.core_spec(REPO), dist, root=REPO, build_dir=BUILD, quiet=True),
              _wheel.build_wheel(_wheel.extension_spec(REPO, "loop_split", REPO / "registry.yaml"),
                                 dist, root=REPO, build_dir=BUILD, quiet=True)]
    venv = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TRITON_EXT_", "PYTHON")) and k != "TRITON_CACHE_DIR"}
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q"]
    res = subprocess.run([*pip, f"triton=={OTHER}", "pyyaml"], env=env, capture_output=True,
                         text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    res = subprocess.run([*pip, "--no-deps", *map(str, wheels)], env=env, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]

    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(REPO / "tests" / "startup" / "loop_kernel_script.py", work / "script.py")
    run_env = dict(env, TRITON_CACHE_DIR=str(tmp_path / "cache"), TRITON_EXT_CACHE_DIR=str(tmp_path / "pf"))
    on = subprocess.run([str(venv / "bin" / "python"), "-I", "script.py"], cwd=work,
                        env=dict(run_env, TRITON_EXT_ENABLE="loop_split"), capture_output=True,
                        text=True, timeout=600)
    assert on.returncode == 0, on.stderr[-3000:]
    lines = [line for line in on.stderr.splitlines() if line.startswith("triton-ext:")]
    assert len(lines) == 1, on.stderr
    assert f"extension loop_split was built for Triton {built}, but Triton {OTHER} is installed; " \
           f"install triton=={built}" in lines[0]
    assert json.loads(on.stdout)["parent"]["loops"] == 1  # went on without the pass

    doctor = subprocess.run([str(venv / "bin" / "triton-ext"), "doctor"], cwd=work, env=run_env,
                            capture_output=True, text=True, timeout=600)
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    assert f"core: PROBLEM: built for Triton {built}, {OTHER} is installed" in doctor.stdout
    assert f"fix: pip install triton=={built}" in doctor.stdout
