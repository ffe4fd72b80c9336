"""PEP 517 backend of the repository root (``pip install -e .``, ``pip wheel .``).

setuptools builds the editable install, and this wrapper adds ``triton_ext_startup.pth`` to the
editable wheel, so that ``pip install -e .`` installs the start-up hook (``TRITON_EXT_ENABLE``
without an import) and ``pip uninstall triton-ext`` removes it.

A regular wheel or sdist of the root cannot be a working core package: the core needs
``libTritonExtPassInfra.so``, which only the plugin toolchain builds (``triton-ext wheel``).
setuptools alone would build ``triton_ext-0.1.0-py3-none-any.whl`` without it, a package with
the core's name and version whose passes never load. So ``pip wheel .``, ``pip install .`` and
``python -m build`` stop with one line naming the commands that work.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import os
import sys
import zipfile
from pathlib import Path
from typing import Any

from setuptools import build_meta as _setuptools

__all__ = [
    "build_editable", "build_sdist", "build_wheel", "get_requires_for_build_editable",
    "get_requires_for_build_sdist", "get_requires_for_build_wheel",
    "prepare_metadata_for_build_editable", "prepare_metadata_for_build_wheel",
]

REFUSAL = ("triton-ext: a wheel of the repository root would lack libTritonExtPassInfra.so "
           "(built by the plugin toolchain), so it is not built; use `pip install -e .` in a "
           "checkout (tools/setup.sh), `triton-ext wheel --core NAME...` for wheels, or "
           "`pip install --extra-index-url <index>/triton-<version>/simple triton-ext-<name>`")

get_requires_for_build_wheel = _setuptools.get_requires_for_build_wheel
get_requires_for_build_editable = _setuptools.get_requires_for_build_editable
get_requires_for_build_sdist = _setuptools.get_requires_for_build_sdist
prepare_metadata_for_build_wheel = _setuptools.prepare_metadata_for_build_wheel
prepare_metadata_for_build_editable = _setuptools.prepare_metadata_for_build_editable


class RootWheelRefused(SystemExit):
    """Raised instead of building a core wheel without the infra library."""


def _refuse() -> None:
    sys.stderr.write(REFUSAL + "\n")
    sys.stderr.flush()
    raise RootWheelRefused(1)


def build_wheel(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                metadata_directory: str | None = None) -> str:
    _refuse()
    raise AssertionError("unreachable")


def build_sdist(sdist_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    _refuse()
    raise AssertionError("unreachable")


def _startup_hook_module() -> Any:
    """triton_ext/dev/startup_hook.py, loaded by path: importing the triton_ext package would
    import triton, which the isolated build environment does not have."""
    path = Path(__file__).resolve().parents[2] / "triton_ext" / "dev" / "startup_hook.py"
    spec = importlib.util.spec_from_file_location("_triton_ext_startup_hook", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def add_file_to_wheel(wheel: Path, name: str, data: bytes) -> None:
    """Add ``name`` at the root of ``wheel`` and list it in the wheel's RECORD."""
    tmp = wheel.with_suffix(".tmp")
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        record_name = next(n for n in src.namelist() if n.endswith(".dist-info/RECORD"))
        for item in src.infolist():
            if item.filename in (record_name, name):
                continue
            dst.writestr(item, src.read(item.filename))
        dst.writestr(name, data)
        lines = [line for line in src.read(record_name).decode().splitlines()
                 if line and not line.startswith(f"{name},")]
        lines.insert(len(lines) - 1, _record_line(name, data))  # RECORD's own line stays last
        dst.writestr(record_name, "\n".join(lines) + "\n")
    os.replace(tmp, wheel)


def build_editable(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                   metadata_directory: str | None = None) -> str:
    name = _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
    hook = _startup_hook_module()
    add_file_to_wheel(Path(wheel_directory) / name, hook.PTH_NAME, hook.PTH_LINE.encode())
    return name
