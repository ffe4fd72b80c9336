"""triton-ext: out-of-tree MLIR passes for the stock Triton wheel.

Importing this package does nothing to Triton unless ``TRITON_EXT_ENABLE`` is
set (``TRITON_EXT_ENABLE=loop_split,other``; ``default`` names the passes marked
``enabled_by_default``; options in MLIR's syntax: ``nan_inf_check{mode=abort}``). Then,
as on :func:`enable`, the registry is read, option values are checked, the libraries
are checked in a child process and loaded, and the stages hook is installed so that
each enabled pass runs at its declared place::

    import triton_ext
    triton_ext.enable("loop_split", options={"max-parts": 2})
    with triton_ext.enabled("loop_split", options={"max-parts": 3}):
        ...  # kernels compiled here on this thread use max-parts=3

Options are spelled as the pass's flag (``options={"max-parts": 2}``), the one documented form;
keyword arguments with ``_`` for ``-`` (``max_parts=2``) are accepted by both functions.

``TRITON_EXT_STRICT=1`` turns warnings about failing or unplaced passes into
:class:`PassFailedError`. See ``docs/registry-schema.md`` for registry.yaml.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from ._errors import (
    LoadError,
    ManifestError,
    OptionError,
    PassCrashedError,
    PassFailedError,
    PreflightError,
    TritonExtError,
    TritonExtWarning,
    UnknownPassError,
)
from . import _auto, _extensions, _loader, _log, _selection, _triton
from ._auto import auto_mode
from ._manifest import Manifest, load_manifest
from ._preflight import LibraryReport, preflight
from ._settings import settings

if TYPE_CHECKING:
    from types import ModuleType

__all__ = [
    "enable",
    "disable",
    "enabled",
    "enabled_passes",
    "load",
    "load_extension",
    "import_extension",
    "check_library",
    "record_pipelines",
    "manifest",
    "settings",
    "uninstall",
    "TritonExtError",
    "ManifestError",
    "PreflightError",
    "LoadError",
    "UnknownPassError",
    "OptionError",
    "PassFailedError",
    "PassCrashedError",
    "TritonExtWarning",
    "Config",
    "tunable",
    "autotune",
    "passes_of",
    "canonical_passes",
    "auto_mode",
]


def enable(*names: str, options: Mapping[str, Any] | None = None, **keywords: Any) -> None:
    """Enable passes by pass or extension name, for every thread; options by flag spelling."""
    _selection.enable(*names, options=options, **keywords)


def disable(*names: str) -> None:
    """Disable passes enabled with :func:`enable`; with no names, disable all."""
    _selection.disable(*names)


def enabled(*names: str, options: Mapping[str, Any] | None = None, **keywords: Any) -> Any:
    """Context manager: enable passes for the current thread until the block ends (options as
    for :func:`enable`)."""
    return _selection.enabled(*names, options=options, **keywords)


def enabled_passes() -> dict[str, dict[str, Any]]:
    """Pass name -> ``{"extension", "stage", "position", "options"}`` as this thread sees it."""
    out: dict[str, dict[str, Any]] = {}
    for entry in _selection.current().entries:
        values = dict(entry.options)
        out[entry.spec.name] = {
            "extension": entry.extension.name,
            "stage": entry.spec.stage,
            "position": entry.spec.position,
            "options": {o.name: values.get(o.name, o.default) for o in entry.spec.options},
        }
    return out


def load(path: str) -> LibraryReport:
    """Check a plugin library in a child process and load it into Triton (once)."""
    return _loader.load(path)


def load_extension(name: str) -> LibraryReport:
    """Load a registry extension's library by extension name (a dialect, a language's builder
    ops, or passes without enabling them); checked in a child process first, loaded once."""
    return _loader.load_extension(manifest().extension(name))


def import_extension(name: str) -> ModuleType:
    """Import a registry extension's own Python package (registry ``package``) by extension name:
    ``triton_ext.import_extension("sanitizers")`` is ``triton_ext_sanitizers`` (``report()``,
    ``check()``), from the extension's folder in a checkout or as its wheel installed it."""
    return _extensions.import_package(manifest().extension(name))


def check_library(path: str | Path, extension: str | None = None) -> LibraryReport:
    """Check a plugin library in a child process without loading it here (preflight); raises
    :class:`PreflightError` saying what to fix. Verdicts are cached by the library's sha256."""
    return preflight(Path(path), extension)


def record_pipelines() -> Any:
    """Context manager collecting, for each stage compiled on this thread inside the block, the
    plan that ran (``plan.stage``, ``plan.runs``: the pass-manager pipelines, ``plan.order``)."""
    return _triton.record()


def manifest() -> Manifest:
    """The registry: registry.yaml merged with installed packages' fragments."""
    return load_manifest()


def uninstall() -> None:
    """Remove the stages hook (restoring any earlier one) and the pipeline tap."""
    _triton.uninstall()


# triton-ext autotune hook-in (issue 19): Config, tunable and autotune import triton, so they
# load on first use (``triton_ext.Config``), not at ``import triton_ext``.
_AUTOTUNE_NAMES = ("Config", "tunable", "autotune", "passes_of", "canonical_passes")


def __getattr__(name: str) -> Any:
    if name in _AUTOTUNE_NAMES:
        from . import _autotune  # imports Triton: on first use, not at import triton_ext

        return getattr(_autotune, name)
    raise AttributeError(f"module 'triton_ext' has no attribute {name!r}")


def _enable_from_environment() -> None:
    names = settings.enable
    if names and names[0].split(":")[0] == "auto":  # issue 19: TRITON_EXT_ENABLE=auto[:a,b]
        _auto.activate(_auto.parse(names) or ())
        return
    if names:
        _selection.enable_text(",".join(names), origin="TRITON_EXT_ENABLE")


def _doctor_process() -> bool:
    """True in ``triton-ext doctor`` / ``python -m triton_ext doctor``, which must run (and report
    the cause) when TRITON_EXT_ENABLE names something that cannot be enabled."""
    argv = list(getattr(sys, "orig_argv", sys.argv))
    for i, arg in enumerate(argv):
        if arg.endswith("triton-ext") or (arg == "triton_ext" and argv[i - 1:i] == ["-m"]):
            return argv[i + 1:i + 2] == ["doctor"]
    return False


_log.configure()
try:
    _enable_from_environment()
except Exception:
    if not _doctor_process():
        raise
