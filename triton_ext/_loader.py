"""Load plugin libraries into Triton, once each, after preflight.

Triton's own loader stacks duplicate bindings when a library is loaded twice
and lets the first of two same-named passes win silently; this module refuses
both before ``passes.plugin.extend_with`` sees the library.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

from ._errors import LoadError
from ._manifest import Extension
from ._log import get as _get_logger
from ._preflight import LibraryReport, preflight, sha256_file

_logger = _get_logger("loader")

__all__ = ["LoadedLibrary", "load", "load_extension", "loaded", "library_of_pass", "loaded_library", "infra_sha256"]

#: The shared library every plugin links against (option parsing, pass nesting, the entry point's
#: tables). It is loaded once per process, by soname, from whichever plugin folder came first.
INFRA_LIBRARY = "libTritonExtPassInfra.so"


@dataclass(frozen=True)
class LoadedLibrary:
    """A library Triton has loaded through triton_ext."""

    path: Path
    report: LibraryReport
    extension: str | None
    #: sha256 of the libTritonExtPassInfra.so serving this library ("" if it links none).
    infra_sha256: str = ""


_lock = threading.RLock()
_loaded: dict[Path, LoadedLibrary] = {}
_digests: dict[tuple[str, int, int], str] = {}


def _mapped_infra() -> Path | None:
    """The infra library the dynamic linker really mapped into this process, if any.

    A plugin finds it through ``RUNPATH=$ORIGIN``, but once one copy is mapped every later plugin
    reuses it by soname, whatever sits beside that plugin: only the process's own map says which
    bytes run.
    """
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.rstrip("\n").split(maxsplit=5)[-1]
                if path.endswith("/" + INFRA_LIBRARY):
                    return Path(path)
    except OSError:
        pass
    return None


def _links_infra(plugin: Path) -> bool:
    # The soname sits in the dynamic string table of every library that has it as DT_NEEDED.
    try:
        return INFRA_LIBRARY.encode() in plugin.read_bytes()
    except OSError:
        return False


def infra_sha256(plugin: Path) -> str:
    """sha256 of the pass-infra library serving ``plugin`` ("" when it links none).

    Part of the compile-cache key: the infra parses pass options and nests passes, so new infra
    bytes can change what a kernel compiles to although no plugin changed.
    """
    if not _links_infra(plugin):
        return ""
    path = _mapped_infra()
    if path is None:
        beside = plugin.parent / INFRA_LIBRARY
        path = beside if beside.exists() else None
    if path is None:
        return ""
    try:
        st = os.stat(path)
    except OSError:
        return ""
    memo = (str(path), st.st_mtime_ns, st.st_size)
    with _lock:
        digest = _digests.get(memo)
        if digest is None:
            digest = _digests[memo] = sha256_file(path)
        return digest


def loaded() -> tuple[LoadedLibrary, ...]:
    with _lock:
        return tuple(_loaded.values())


def library_of_pass(name: str) -> LoadedLibrary | None:
    with _lock:
        for lib in _loaded.values():
            if name in lib.report.passes:
                return lib
    return None


def load(path: str | Path, extension: str | None = None) -> LibraryReport:
    """Preflight ``path`` and hand it to Triton; loading the same path again is a no-op."""
    key = Path(path).resolve()
    with _lock:
        if key in _loaded:
            return _loaded[key].report
        # A second copy of loaded bytes is refused before preflight: its verdict is keyed by what
        # lies beside the copy, which a stray copy may lack (its child would fail for that instead).
        digest = sha256_file(key) if key.is_file() else None
        for other in _loaded.values():
            if other.report.sha256 == digest:
                raise LoadError(
                    f"{key}: the same library is already loaded from {other.path}; expected each library "
                    f"loaded once, found a second copy: load only one of them",
                    extension=extension,
                    path=key,
                )
        report = preflight(key, extension)
        for other in _loaded.values():
            clash = sorted(set(other.report.passes) & set(report.passes))
            if clash:
                raise LoadError(
                    f"{key}: pass {clash[0]!r} is already provided by {other.path}"
                    f"{f' (extension {other.extension})' if other.extension else ''}; expected unique pass "
                    f"names, found a duplicate: Triton would silently keep the first. Rename the pass in one library",
                    extension=extension,
                    path=key,
                )
            twice = sorted(set(other.report.dialects) & set(report.dialects))
            if twice:
                raise LoadError(
                    f"{key}: dialect {twice[0]!r} is already registered by {other.path}; expected each "
                    f"dialect from one library, found two: Triton aborts on the second copy. Load only one",
                    extension=extension,
                    path=key,
                )
        from triton._C.libtriton import ir, passes  # on first use: importing triton_ext must not import Triton

        bound = [n for n in report.passes if hasattr(passes.plugin, f"add_{n}")]
        if bound:
            raise LoadError(
                f"{key}: passes.plugin.add_{bound[0]} is already bound by a library loaded outside triton_ext; "
                f"expected a free name: load plugins through triton_ext only",
                extension=extension,
                path=key,
            )
        try:
            passes.plugin.extend_with(str(key))
            if report.dialects:
                ir.extend_dialects_with(str(key))
            if report.ops:
                ir.builder.extend_with(str(key))
        except RuntimeError as exc:
            raise LoadError(f"{key}: Triton refused the library: {exc}", extension=extension, path=key) from exc
        _loaded[key] = LoadedLibrary(key, report, extension, infra_sha256(key))
        _logger.info("loaded %s (extension %s): passes %s%s%s", key, extension or "-", ", ".join(report.passes) or "none",
                     f"; dialects {', '.join(report.dialects)}" if report.dialects else "",
                     f"; builder ops {', '.join(report.ops)}" if report.ops else "")
        return report


def loaded_library(path: str | Path) -> LoadedLibrary | None:
    """The record of a library loaded through :func:`load` (None if it was not)."""
    with _lock:
        return _loaded.get(Path(path).resolve())


def load_extension(ext: Extension) -> LibraryReport:
    """Load the library of a registry entry and check it provides the declared passes."""
    path = ext.library_path()
    report = load(path, ext.name)
    missing = [p.name for p in ext.passes if p.name not in report.passes]
    if missing:
        raise LoadError(
            f"{path}: registry entry {ext.name} ({ext.source}:{ext.line}) declares pass {missing[0]!r}, "
            f"the library provides {', '.join(report.passes) or 'no passes'}; "
            f"rebuild with `triton-ext build {ext.name}` or fix registry.yaml",
            extension=ext.name,
            path=path,
        )
    return report
