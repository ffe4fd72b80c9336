"""Load plugin libraries into Triton, once each, after preflight.

Triton's own loader stacks duplicate bindings when a library is loaded twice
and lets the first of two same-named passes win silently; this module refuses
both before ``passes.plugin.extend_with`` sees the library.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from ._errors import LoadError
from ._manifest import Extension
from ._preflight import LibraryReport, preflight

__all__ = ["LoadedLibrary", "load", "load_extension", "loaded", "library_of_pass"]


@dataclass(frozen=True)
class LoadedLibrary:
    """A library Triton has loaded through triton_ext."""

    path: Path
    report: LibraryReport
    extension: str | None


_lock = threading.RLock()
_loaded: dict[Path, LoadedLibrary] = {}


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
        report = preflight(key, extension)
        for other in _loaded.values():
            if other.report.sha256 == report.sha256:
                raise LoadError(
                    f"{key}: the same library is already loaded from {other.path}; expected each library "
                    f"loaded once, found a second copy: load only one of them",
                    extension=extension,
                    path=key,
                )
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
        from triton._C.libtriton import ir, passes

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
        _loaded[key] = LoadedLibrary(key, report, extension)
        return report


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
