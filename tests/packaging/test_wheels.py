"""Wheels: build the core wheel and the loop_split wheel, install them into a fresh venv, and
compile a kernel there, outside the repository, with TRITON_EXT_ENABLE=loop_split.

The fresh venv is made with ``python -m venv --without-pip`` and gets no access to this
repository. It reaches the stock triton 3.9.0 (and PyYAML) through one ``.pth`` file naming a
folder of symlinks to exactly those packages in the main venv: reinstalling triton from the
network would cost minutes and a network; ``--system-site-packages`` would not reach the main
venv, and pointing at its whole site-packages would also expose whatever else is there. The
wheels are installed with the main venv's pip (``pip --python``) with ``--no-deps --no-index``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.packaging.packaging_support import BUILD, REPO, ensure_built

from triton_ext.dev import wheel as _wheel

HERE = Path(__file__).resolve().parent
MAIN_SITE = Path(next(p for p in sys.path if p.endswith("site-packages") and (Path(p) / "triton").is_dir()))
SHARED = ("triton", "yaml", "_yaml")


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> dict[str, Path]:
    ensure_built("loop_split")
    out = tmp_path_factory.mktemp("dist")
    core = _wheel.build_wheel(_wheel.core_spec(REPO), out, root=REPO, build_dir=BUILD, quiet=True)
    ext = _wheel.build_wheel(_wheel.extension_spec(REPO, "loop_split", REPO / "registry.yaml"),
                             out, root=REPO, build_dir=BUILD, quiet=True)
    return {"core": core, "loop_split": ext}


@pytest.fixture(scope="module")
def venv(tmp_path_factory, wheels) -> Path:
    root = tmp_path_factory.mktemp("venv")
    env_dir = root / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True)
    deps = root / "deps"
    deps.mkdir()
    for entry in MAIN_SITE.iterdir():
        top = entry.name.split("-")[0].lower()
        if entry.name in SHARED or (entry.name.endswith(".dist-info") and top in ("triton", "pyyaml")):
            (deps / entry.name).symlink_to(entry)
    site = next(env_dir.glob("lib/python*/site-packages"))
    (site / "_main_venv_triton.pth").write_text(f"{deps}\n")
    # Without PYTHONPATH: a checkout on it holds triton_ext.egg-info (from `pip install -e .`), and
    # pip would take the core as installed already.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    subprocess.run([sys.executable, "-m", "pip", "--python", str(env_dir / "bin" / "python"),
                    "install", "--no-deps", "--no-index", "-q",
                    str(wheels["core"]), str(wheels["loop_split"])], check=True, env=env)
    return env_dir


def _run_in_venv(venv: Path, tmp_path: Path, args: list[str], **env: str) -> subprocess.CompletedProcess:
    """Run the venv's python in an empty folder with no repository path anywhere."""
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith(("TRITON_EXT_", "PYTHON")) and k != "TRITON_CACHE_DIR"}
    clean.update(TRITON_CACHE_DIR=str(tmp_path / "cache"), TRITON_EXT_CACHE_DIR=str(tmp_path / "pf"),
                 TRITON_DEFAULT_FP_FUSION="1", **env)
    return subprocess.run([str(venv / "bin" / "python"), "-I", *args], cwd=tmp_path, env=clean,
                          capture_output=True, text=True, timeout=600)


def test_wheel_contents(wheels) -> None:
    with zipfile.ZipFile(wheels["core"]) as z:
        names = set(z.namelist())
        assert "triton_ext/plugins/libTritonExtPassInfra.so" in names
        assert "triton_ext/_loader.py" in names
        assert not any("libTritonExtLoopSplit" in n for n in names)
        record = z.read("triton_ext-0.1.0.dist-info/RECORD").decode()
        assert "triton_ext/plugins/libTritonExtPassInfra.so,sha256=" in record
        assert "triton-ext = triton_ext.dev.cli:main" in z.read("triton_ext-0.1.0.dist-info/entry_points.txt").decode()
        # Start-up activation (issue 16): the .pth and the module it imports, at the top level.
        from triton_ext.dev.startup_hook import PTH_LINE, PTH_NAME

        assert z.read(PTH_NAME).decode() == PTH_LINE
        assert "_triton_ext_startup.py" in names
        assert f"{PTH_NAME},sha256=" in record
    with zipfile.ZipFile(wheels["loop_split"]) as z:
        names = set(z.namelist())
        assert names >= {"triton_ext/plugins/libTritonExtLoopSplit.so", "triton_ext_loop_split/__init__.py",
                         "triton_ext_loop_split/registry.yaml"}
        assert not any("PassInfra" in n for n in names)
        meta = z.read("triton_ext_loop_split-0.1.0.dist-info/METADATA").decode()
        assert "Name: triton-ext-loop-split" in meta and "Requires-Dist: triton-ext==0.1.0" in meta
        eps = z.read("triton_ext_loop_split-0.1.0.dist-info/entry_points.txt").decode()
        assert "[triton_ext.extensions]" in eps and "loop_split = triton_ext_loop_split:fragment" in eps


def test_pass_changes_the_kernel_outside_the_repo(venv, tmp_path) -> None:
    shutil.copy(HERE / "kernel_script.py", tmp_path / "kernel.py")
    off = _run_in_venv(venv, tmp_path, ["kernel.py"])
    assert off.returncode == 0, off.stderr[-4000:]
    on = _run_in_venv(venv, tmp_path, ["kernel.py"], TRITON_EXT_ENABLE="loop_split")
    assert on.returncode == 0, on.stderr[-4000:]
    off_data, on_data = json.loads(off.stdout), json.loads(on.stdout)
    site = str(next(venv.glob("lib/python*/site-packages")))
    assert on_data["triton_ext"].startswith(site), on_data  # the installed copy, not the repo
    assert on_data["extensions"] == ["loop_split"] and on_data["enabled"] == ["loop_split"]
    assert off_data["enabled"] == []
    assert off_data["loops"] == 1
    assert on_data["loops"] > off_data["loops"], (off_data, on_data)
    assert on_data["cubin_bytes"] > 0


def test_installed_wheel_activates_without_import(venv, tmp_path) -> None:
    # The wheel's triton_ext_startup.pth: a script that never imports triton_ext gets the pass.
    shutil.copy(REPO / "tests" / "startup" / "loop_kernel_script.py", tmp_path / "script.py")
    on = _run_in_venv(venv, tmp_path, ["script.py"], TRITON_EXT_ENABLE="loop_split")
    assert on.returncode == 0, on.stderr[-4000:]
    assert json.loads(on.stdout)["parent"] == {"loops": 2, "cubin": True, "triton_ext_imported": True}
    off = _run_in_venv(venv, tmp_path, ["script.py"])
    assert json.loads(off.stdout)["parent"] == {"loops": 1, "cubin": True, "triton_ext_imported": False}


def test_installed_cli_lists_the_extension(venv, tmp_path) -> None:
    res = _run_in_venv(venv, tmp_path, ["-m", "triton_ext", "list", "--json"])
    assert res.returncode == 0, res.stderr
    [ext] = json.loads(res.stdout)
    assert ext["name"] == "loop_split" and ext["built"] is True
    assert "site-packages/triton_ext/plugins/libTritonExtLoopSplit.so" in ext["library"]
    doctor = _run_in_venv(venv, tmp_path, ["-m", "triton_ext", "doctor"])
    assert "loop_split: ok" in doctor.stdout, doctor.stdout + doctor.stderr


def test_installed_extension_conflicting_with_registry_is_a_clear_error(venv, tmp_path) -> None:
    res = _run_in_venv(venv, tmp_path, ["-m", "triton_ext", "list"],
                       TRITON_EXT_REGISTRY=str(REPO / "registry.yaml"))
    assert res.returncode == 1
    assert "extensions.loop_split: expected a unique extension name" in res.stderr
    assert "triton_ext_loop_split/registry.yaml" in res.stderr and "registry.yaml" in res.stderr


def test_entry_points_off_sees_nothing(venv, tmp_path) -> None:
    res = _run_in_venv(venv, tmp_path, ["-m", "triton_ext", "list", "--json"], TRITON_EXT_ENTRY_POINTS="0")
    assert res.returncode == 0 and json.loads(res.stdout) == []


# ----------------------------------------------------------------- error paths of `triton-ext wheel`


def _wheel_cli(*args: str, **env: str) -> subprocess.CompletedProcess:
    full = {**os.environ, **env}
    return subprocess.run([sys.executable, "-m", "triton_ext", "wheel", *args], cwd=REPO,
                          env=full, capture_output=True, text=True, timeout=300)


def test_wheel_unknown_extension(tmp_path) -> None:
    res = _wheel_cli("no_such_thing", "-o", str(tmp_path))
    assert res.returncode == 1
    assert "unknown extension 'no_such_thing'" in res.stderr and "loop_split" in res.stderr


def test_wheel_nothing_built_yet(tmp_path) -> None:
    res = _wheel_cli("loop_split", "-o", str(tmp_path), "--build-dir", str(tmp_path / "empty"))
    assert res.returncode == 1
    assert "nothing built yet" in res.stderr and "triton-ext build loop_split" in res.stderr
    assert not list(tmp_path.glob("*.whl"))


def test_wheel_broken_registry(tmp_path) -> None:
    bad = tmp_path / "registry.yaml"
    bad.write_text("schema: 1\nextensions: [oops\n")
    res = _wheel_cli("loop_split", "-o", str(tmp_path), TRITON_EXT_REGISTRY=str(bad))
    assert res.returncode == 1
    assert f"{bad}: cannot read the registry" in res.stderr


def test_wheel_needs_a_name() -> None:
    res = _wheel_cli()
    assert res.returncode == 2 and "name at least one extension, or --core" in res.stderr
