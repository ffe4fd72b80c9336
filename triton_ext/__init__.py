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

from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from ._errors import (
    LoadError,
    ManifestError,
    OptionError,
    PassFailedError,
    PreflightError,
    TritonExtError,
    TritonExtWarning,
    UnknownPassError,
)
from ._manifest import Manifest, load_manifest
from ._settings import settings
from . import _log

if TYPE_CHECKING:  # _preflight imports _probe, which runs as `python -m triton_ext._probe`
    from ._preflight import LibraryReport

__all__ = [
    "enable",
    "disable",
    "enabled",
    "enabled_passes",
    "load",
    "load_extension",
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
    from . import _stages

    _stages.enable(*names, options=options, **keywords)


def disable(*names: str) -> None:
    """Disable passes enabled with :func:`enable`; with no names, disable all."""
    from . import _stages

    _stages.disable(*names)


def enabled(*names: str, options: Mapping[str, Any] | None = None, **keywords: Any) -> Any:
    """Context manager: enable passes for the current thread until the block ends (options as
    for :func:`enable`)."""
    from . import _stages

    return _stages.enabled(*names, options=options, **keywords)


def enabled_passes() -> dict[str, dict[str, Any]]:
    """Pass name -> ``{"extension", "stage", "position", "options"}`` as this thread sees it."""
    from . import _stages

    out: dict[str, dict[str, Any]] = {}
    for entry in _stages.current().entries:
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
    from . import _loader

    return _loader.load(path)


def load_extension(name: str) -> LibraryReport:
    """Load a registry extension's library by extension name (a dialect, a language's builder
    ops, or passes without enabling them); checked in a child process first, loaded once."""
    from . import _loader

    return _loader.load_extension(manifest().extension(name))


def check_library(path: str | Path, extension: str | None = None) -> LibraryReport:
    """Check a plugin library in a child process without loading it here (preflight); raises
    :class:`PreflightError` saying what to fix. Verdicts are cached by the library's sha256."""
    from ._preflight import preflight

    return preflight(Path(path), extension)


def record_pipelines() -> Any:
    """Context manager collecting, for each stage compiled on this thread inside the block, the
    plan that ran (``plan.stage``, ``plan.runs``: the pass-manager pipelines, ``plan.order``)."""
    from . import _stages

    return _stages.record()


def manifest() -> Manifest:
    """The registry: registry.yaml merged with installed packages' fragments."""
    return load_manifest()


def uninstall() -> None:
    """Remove the stages hook (restoring any earlier one) and the pipeline tap."""
    from . import _stages

    _stages.uninstall()


# triton-ext autotune hook-in (issue 19): Config, tunable and autotune import triton, so they
# load on first use (``triton_ext.Config``), not at ``import triton_ext``.
_AUTOTUNE_NAMES = ("Config", "tunable", "autotune", "passes_of", "canonical_passes")


def __getattr__(name: str) -> Any:
    if name in _AUTOTUNE_NAMES:
        from . import _autotune

        return getattr(_autotune, name)
    if name == "auto_mode":  # the transparent mode for a block (TRITON_EXT_ENABLE=auto for a process)
        from . import _auto

        return _auto.auto_mode
    raise AttributeError(f"module 'triton_ext' has no attribute {name!r}")


def _enable_from_environment() -> None:
    names = settings.enable
    if names and names[0].split(":")[0] == "auto":  # issue 19: TRITON_EXT_ENABLE=auto[:a,b]
        from . import _auto

        _auto.activate(_auto.parse(names) or ())
        return
    if names:
        from ._selection import enable_text

        enable_text(",".join(names), origin="TRITON_EXT_ENABLE")


def _doctor_process() -> bool:
    """True in ``triton-ext doctor`` / ``python -m triton_ext doctor``, which must run (and report
    the cause) when TRITON_EXT_ENABLE names something that cannot be enabled."""
    import sys

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
