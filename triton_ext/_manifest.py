"""Load registry.yaml (schema 1) and the installed packages' fragments into one :class:`Manifest`.

The registry is read from ``settings.registry`` (``$TRITON_EXT_REGISTRY`` or the
checkout's ``registry.yaml``) and merged with the fragments that installed
packages declare in the ``triton_ext.extensions`` entry point group. The layout
is documented in ``docs/registry-schema.md``.

Three layers, each importing only those below it: the model (:mod:`triton_ext._model`, frozen
dataclasses), validation (:mod:`triton_ext._schema`) and this module, the loading.
"""

from __future__ import annotations

import threading
from importlib import metadata
from pathlib import Path
from typing import Any, Mapping

from ._errors import ManifestError
from ._model import (
    BACKENDS, ENTRY_POINT_GROUP, KINDS, OCCURRENCES, ON_FAILURE, OPTION_TYPES, ROLES, SCHEMA_VERSION, STAGES, STATUSES,
    Extension, Manifest, OptionSpec, PassSpec, Target,
)
from ._merge import merge
from ._schema import parse_registry
from ._settings import settings

__all__ = [
    "SCHEMA_VERSION", "STAGES", "KINDS", "STATUSES", "BACKENDS", "OPTION_TYPES", "OCCURRENCES", "ON_FAILURE", "ROLES",
    "ENTRY_POINT_GROUP", "Manifest", "Extension", "PassSpec", "OptionSpec", "Target", "load_manifest",
    "parse_registry", "merge",
]


# --------------------------------------------------------------------------- #
# Loading, with entry point fragments
# --------------------------------------------------------------------------- #


def _entry_point_fragments() -> list[tuple[Path, Path | None]]:
    """(registry fragment, library dir) from each ``triton_ext.extensions`` entry point.

    An entry point names an object (or a callable returning one) that is either a
    mapping ``{"registry": PATH, "library_dir": PATH}`` or a pair ``(registry, library_dir)``.
    """
    out: list[tuple[Path, Path | None]] = []
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            value = ep.load()
            if callable(value):
                value = value()
            if isinstance(value, Mapping):
                registry, library_dir = value["registry"], value.get("library_dir")
            else:
                registry, library_dir = value
        except Exception as exc:  # a broken package must say which one it is
            raise ManifestError(
                f"entry point {ep.name} = {ep.value} (group {ENTRY_POINT_GROUP}): expected a mapping "
                f"{{'registry': PATH, 'library_dir': PATH}} or a pair, found an error: {exc}; "
                f"fix or uninstall the package that provides it"
            ) from exc
        out.append((Path(registry), Path(library_dir) if library_dir else None))
    return out


_cache_lock = threading.Lock()
_cache: dict[tuple[Any, ...], tuple[Manifest, tuple[tuple[str, float, int], ...]]] = {}


def _records_stamps(manifest: Manifest) -> tuple[tuple[str, float, int], ...]:
    """Stamps of the pass records the manifest's options came from (present or not)."""
    paths = sorted({p.options_source for e in manifest.extensions for p in e.passes if p.options_source})
    return tuple(_stamp(Path(p)) for p in paths)


def _stamp(path: Path) -> tuple[str, float, int]:
    try:
        st = path.stat()
        return (str(path), st.st_mtime, st.st_size)
    except OSError:
        return (str(path), -1.0, -1)


def load_manifest(path: Path | str | None = None, *, entry_points: bool | None = None) -> Manifest:
    """The merged manifest; re-read only when a source file changes."""
    main = Path(path) if path is not None else Path(settings.registry)
    use_eps = settings.entry_points if entry_points is None else entry_points
    fragments = _entry_point_fragments() if use_eps else []
    # Options come from the build's pass records: a rebuild or another build tree re-reads them.
    key = (_stamp(main), str(settings.build_dir)) + tuple((_stamp(p), str(d)) for p, d in fragments)
    with _cache_lock:
        cached = _cache.get(key)
    if cached is not None and _records_stamps(cached[0]) == cached[1]:
        return cached[0]
    parts: list[Manifest] = []
    if main.exists():
        parts.append(_read(main, None))
    elif path is not None:
        raise ManifestError(f"{main}: registry not found; expected a registry.yaml (set TRITON_EXT_REGISTRY)", path=main)
    for fragment, library_dir in fragments:
        parts.append(_read(fragment, library_dir))
    manifest = merge(parts)
    with _cache_lock:
        _cache.clear()
        _cache[key] = (manifest, _records_stamps(manifest))
    return manifest


def _read(path: Path, library_dir: Path | None) -> Manifest:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ManifestError(f"{path}: cannot read registry: {exc.strerror}", path=path) from None
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise ManifestError(f"{path}:{line}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at "
                            f"offset {exc.start}); save the registry as UTF-8", path=path) from None
    return parse_registry(text, path, library_dir, read_sources=True)
