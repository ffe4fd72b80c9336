"""Which Triton release a plugin library was built for, checked before any plugin code runs.

A plugin is compiled against one Triton release's headers and links its ``libtriton.so``; any
other release has other C++ symbols and layouts, so loading it there fails in the dynamic
linker or, worse, crashes inside a pass. The build (``triton-ext build``) and every wheel
(``triton-ext wheel``) write a small record beside each library,
``<library stem>.built-for.json`` (``{"triton": "3.9.0"}``); :func:`check_triton_release`
compares it with the installed Triton and refuses a mismatch in one line naming both versions.
A library without a record (built by hand with CMake) is left to the preflight child, which
compares the version compiled into the plugin's ``PluginInfo``.
"""

from __future__ import annotations

import json
from pathlib import Path

from ._errors import PreflightError
from ._settings import repo_root

__all__ = ["RECORD_SUFFIX", "PROBE_VERSION", "API_VERSION", "record_path", "write_record", "built_for", "check_triton_release",
           "TritonReleaseError"]

RECORD_SUFFIX = ".built-for.json"
#: The preflight child's verdict format (part of the verdict cache's file name) and the plugin API
#: version it accepts; here, not in :mod:`triton_ext._probe`, so that the parent never imports the
#: module the child runs as ``python -m triton_ext._probe``.
PROBE_VERSION = 2
API_VERSION = 2


class TritonReleaseError(PreflightError):
    """The library was built for another Triton release than the installed one."""


def record_path(library: Path) -> Path:
    """``.../libTritonExtLoopSplit.so`` -> ``.../libTritonExtLoopSplit.built-for.json``."""
    name = library.name
    stem = name[: -len(".so")] if name.endswith(".so") else name
    return library.with_name(stem + RECORD_SUFFIX)


def write_record(library: Path, triton_version: str, destination: Path | None = None) -> Path:
    """Write the record of ``library`` (to ``destination`` when given) and return its path."""
    path = destination or record_path(library)
    text = json.dumps({"triton": triton_version}) + "\n"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return path


def built_for(library: Path) -> str | None:
    """The Triton release recorded for ``library``, or None when there is no readable record."""
    try:
        data = json.loads(record_path(library).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    version = data.get("triton") if isinstance(data, dict) else None
    return version if isinstance(version, str) and version else None


def check_triton_release(library: Path, installed: str, extension: str | None = None) -> None:
    """Raise :class:`TritonReleaseError` when ``library`` was built for another Triton release."""
    wanted = built_for(library)
    if wanted is None or wanted == installed:
        return
    who = f"extension {extension}" if extension else library.name
    root = repo_root()
    checkout = (root / "CMakeLists.txt").is_file() and (root / "infra").is_dir()
    name = f" {extension}" if extension else ""
    rebuild = f", or rebuild it for {installed} (`triton-ext build{name}`)" if checkout else ""
    raise TritonReleaseError(
        f"{library}: {who} was built for Triton {wanted}, but Triton {installed} is installed; "
        f"install triton=={wanted}{rebuild} (supported releases: docs/compatibility.md)",
        extension=extension, path=library)
