"""The pip index: `triton-ext wheel --index DIR` builds manylinux wheels into
DIR/triton-<release>/simple, and a fresh virtual environment with no compiler on PATH installs two
extensions from it with pip; TRITON_EXT_ENABLE then splits a loop in a script that never imports
triton_ext.

Slow (it builds three wheels; about a minute with the build tree up to date), but part of the
suite. The fresh venv is made with ``python -m venv --without-pip``; the triton 3.9.0 it needs is
the one already installed for this Python, reached through one ``.pth`` naming a folder of
symlinks to exactly triton and PyYAML (as test_wheels.py does): pip sees ``triton==3.9.0``
installed and satisfied, as it would in a user's environment that has it, so the install step
fetches only what the index serves (1 GB of triton would otherwise be unpacked again). pip is
the main venv's, run with ``--python`` on the fresh one, with ``--extra-index-url
file://.../triton-3.9.0/simple`` (the page pip reads is the index's, with sha256 fragments).
"""

from __future__ import annotations

import html.parser
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from tests.packaging.packaging_support import BUILD, REPO, ensure_built

from triton_ext.dev import index as _index

pytestmark = pytest.mark.slow

MAIN_SITE = Path(next(p for p in sys.path if p.endswith("site-packages") and (Path(p) / "triton").is_dir()))
EXTENSIONS = ("loop_split", "grid_swizzle")
PROJECTS = {"triton-ext", "triton-ext-loop-split", "triton-ext-grid-swizzle"}


def installed_triton_version() -> str:
    from triton_ext._preflight import installed_triton_version

    return installed_triton_version()


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> Path:
    for name in EXTENSIONS:
        ensure_built(name)
    out = tmp_path_factory.mktemp("index")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_EXT_")}
    env["TRITON_EXT_BUILD_DIR"] = str(BUILD)
    res = subprocess.run([sys.executable, "-m", "triton_ext", "wheel", "--index", str(out), *EXTENSIONS],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    return out


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.links.append(dict(attrs))


def _links(page: Path) -> list[dict[str, str | None]]:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.links


def test_index_layout_and_hashes(index: Path) -> None:
    simple = index / f"triton-{installed_triton_version()}" / "simple"
    assert {link["href"] for link in _links(simple / "index.html")} == {f"{p}/" for p in PROJECTS}
    assert (index / "index.html").is_file()
    for project in PROJECTS:
        [link] = _links(simple / project / "index.html")
        href = str(link["href"])
        name, _, fragment = href.partition("#sha256=")
        wheel = simple / project / name
        assert _index._sha256(wheel) == fragment
        assert link["data-requires-python"] == ">=3.11"
        assert "-py3-none-manylinux_2_" in name and name.endswith("_x86_64.whl"), name


def test_every_wheel_is_manylinux_and_pinned(index: Path) -> None:
    release = installed_triton_version()
    wheels = sorted((index / f"triton-{release}" / "simple").glob("*/*.whl"))
    assert len(wheels) == 3
    for wheel in wheels:
        shown = _index.auditwheel_show(wheel)
        tag = wheel.name.rsplit("-", 1)[1].removesuffix(".whl")
        # auditwheel names the policy the symbol versions allow; the only libraries outside it
        # are libtriton.so and libTritonExtPassInfra.so, which the dependencies provide.
        assert f'constrains the platform tag to "{tag}"' in shown, shown
        requires = [v for k, v in _index._wheel_metadata_all(wheel) if k == "Requires-Dist"]
        assert f"triton=={release}" in requires, requires
        with zipfile.ZipFile(wheel) as z:
            records = [n for n in z.namelist() if n.endswith(".built-for.json")]
            assert len(records) == 1 and json.loads(z.read(records[0])) == {"triton": release}
        if not wheel.name.startswith("triton_ext-"):
            assert "triton-ext==0.1.0" in requires, requires


def _no_compiler_path(root: Path, venv: Path) -> str:
    """PATH with the venv's bin and a folder of the few tools a Python program may call."""
    tools = root / "tools-bin"
    tools.mkdir()
    for tool in ("sh", "uname", "ldconfig"):
        found = shutil.which(tool) or (f"/sbin/{tool}" if Path(f"/sbin/{tool}").exists() else None)
        if found:
            (tools / tool).symlink_to(found)
    return os.pathsep.join([str(venv / "bin"), str(tools)])


def test_fresh_venv_installs_from_the_index_and_splits(index: Path, tmp_path: Path) -> None:
    release = installed_triton_version()
    venv = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    deps = tmp_path / "deps"
    deps.mkdir()
    for entry in MAIN_SITE.iterdir():
        top = entry.name.split("-")[0].lower()
        if entry.name in ("triton", "yaml", "_yaml") or (
                entry.name.endswith(".dist-info") and top in ("triton", "pyyaml")):
            (deps / entry.name).symlink_to(entry)
    site = next(venv.glob("lib/python*/site-packages"))
    (site / "_host_triton.pth").write_text(f"{deps}\n")
    path = _no_compiler_path(tmp_path, venv)
    for compiler in ("cc", "gcc", "g++", "c++", "clang", "cmake", "ninja"):
        assert shutil.which(compiler, path=path) is None, compiler
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TRITON_EXT_", "PYTHON", "CMAKE", "CC", "CXX")) and k != "TRITON_CACHE_DIR"}
    env["PATH"] = path
    url = (index / f"triton-{release}" / "simple").as_uri()
    start = time.monotonic()
    res = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"),
                          "install", "--only-binary", ":all:", "--retries", "1", "--timeout", "30",
                          "--extra-index-url", url, "triton-ext-loop-split", "triton-ext-grid-swizzle"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    took = time.monotonic() - start
    assert res.returncode == 0, res.stdout + res.stderr
    assert took < 60, f"pip install took {took:.0f} s"
    installed = res.stdout.splitlines()[-1]
    assert "triton-ext-0.1.0" in installed and "triton-ext-loop-split-0.1.0" in installed
    assert "triton-ext-grid-swizzle-0.1.0" in installed and "triton-3" not in installed, installed
    assert (site / "triton_ext_startup.pth").is_file()
    assert (site / "triton_ext" / "plugins" / "libTritonExtPassInfra.so").is_file()

    script = tmp_path / "script.py"
    shutil.copy(REPO / "tests" / "startup" / "loop_kernel_script.py", script)
    run_env = dict(env, TRITON_CACHE_DIR=str(tmp_path / "cache"), TRITON_EXT_CACHE_DIR=str(tmp_path / "pf"),
                   TRITON_DEFAULT_FP_FUSION="1")
    work = tmp_path / "work"
    work.mkdir()
    on = subprocess.run([str(venv / "bin" / "python"), "-I", str(script)], cwd=work,
                        env=dict(run_env, TRITON_EXT_ENABLE="loop_split,grid_swizzle"),
                        capture_output=True, text=True, timeout=600)
    assert on.returncode == 0, on.stderr[-4000:]
    assert json.loads(on.stdout)["parent"] == {"loops": 2, "cubin": True, "triton_ext_imported": True}
    off = subprocess.run([str(venv / "bin" / "python"), "-I", str(script)], cwd=work, env=run_env,
                         capture_output=True, text=True, timeout=600)
    assert json.loads(off.stdout)["parent"] == {"loops": 1, "cubin": True, "triton_ext_imported": False}
    # The README's demo runs on the installed wheels too (tools/demo.sh with TRITON_EXT_INDEX).
    demo = subprocess.run([str(venv / "bin" / "python"), str(REPO / "examples" / "demo.py")], cwd=work,
                          env=run_env, capture_output=True, text=True, timeout=600)
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "loop 1: unmasked" in demo.stdout and "loop 2: MASKED" in demo.stdout, demo.stdout
    assert "loop_split" in demo.stdout and "built, preflight ok, passes loop_split" in demo.stdout
    doctor = subprocess.run([str(venv / "bin" / "triton-ext"), "doctor"], cwd=work, env=run_env,
                            capture_output=True, text=True, timeout=600)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "loop_split: ok" in doctor.stdout and "grid_swizzle: ok" in doctor.stdout, doctor.stdout
    assert f"core: {site / 'triton_ext'} (with libTritonExtPassInfra.so)" in doctor.stdout
    assert f"start-up hook: installed ({site / 'triton_ext_startup.pth'})" in doctor.stdout
    assert "toolchain" not in doctor.stdout  # nothing to build outside a checkout
    # A broken install gets a fix that works outside a checkout (pip, the index), not a build.
    (site / "triton_ext" / "plugins" / "libTritonExtGridSwizzle.so").unlink()
    doctor = subprocess.run([str(venv / "bin" / "triton-ext"), "doctor"], cwd=work,
                            env=dict(run_env, TRITON_EXT_ENABLE="grid_swizzle"),
                            capture_output=True, text=True, timeout=600)
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    assert "grid_swizzle: PROBLEM (TRITON_EXT_ENABLE names grid_swizzle)" in doctor.stdout
    assert (f"fix: pip install --extra-index-url <wheel index>/triton-{release}/simple "
            "triton-ext-grid-swizzle") in doctor.stdout, doctor.stdout
    assert "triton-ext build" not in doctor.stdout
