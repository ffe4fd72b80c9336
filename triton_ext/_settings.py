"""Settings of triton-ext, in the manner of ``triton.knobs``.

One typed object, :data:`settings`; each field is bound to one ``TRITON_EXT_*``
environment variable and has a default. The environment is read on every
access, so a changed variable takes effect at once. Tests override fields for a
scope with :meth:`Settings.scope`::

    with settings.scope(strict=True):
        ...
"""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Generic, Iterator, TypeVar

from ._log import parse_level
from ._passlist import split_items

__all__ = ["Settings", "settings", "repo_root"]

T = TypeVar("T")

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def repo_root() -> Path:
    """The checkout that holds this package (where registry.yaml and build/ live)."""
    return Path(__file__).resolve().parent.parent


def _parse_bool(var: str, text: str) -> bool:
    value = text.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"{var}: expected one of 1, 0, true, false, yes, no, on, off; found {text!r}")


def _parse_names(var: str, text: str) -> tuple[str, ...]:
    """Comma-separated items; a comma inside an item's braces (``name{...}``) does not split."""
    return tuple(split_items(text))


def _parse_path(var: str, text: str) -> Path | None:
    return Path(text).expanduser() if text.strip() else None


def _parse_level(var: str, text: str) -> int | None:
    return parse_level(var, text)


def _parse_float(var: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{var}: expected a number of seconds, found {text!r}") from None


def _parse_megabytes(var: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise ValueError(f"{var}: expected a size in MiB (a number >= 0), found {text!r}")
    return value


def _parse_count(var: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(f"{var}: expected a whole number >= 0, found {text!r}")
    return value


@dataclass(frozen=True)
class _Field(Generic[T]):
    """One setting: the variable it reads, how to parse it, and its default."""

    var: str
    parse: Callable[[str, str], T]
    default: Callable[[], T]
    doc: str


_FIELDS: dict[str, _Field[Any]] = {
    "enable": _Field(
        "TRITON_EXT_ENABLE", _parse_names, lambda: (),
        "Comma-separated pass names enabled when triton_ext is imported ('default' = enabled_by_default ones), "
        "each with options in MLIR's syntax if wanted: name{flag=value other-flag=value}.",
    ),
    "strict": _Field(
        "TRITON_EXT_STRICT", _parse_bool, lambda: False,
        "Raise instead of warning when a pass fails or cannot be placed.",
    ),
    "registry": _Field(
        "TRITON_EXT_REGISTRY", _parse_path, lambda: repo_root() / "registry.yaml",
        "The registry.yaml to read.",
    ),
    "build_dir": _Field(
        "TRITON_EXT_BUILD_DIR", _parse_path, lambda: repo_root() / "build",
        "Build tree; libraries are looked up in <build_dir>/plugins.",
    ),
    "cache_dir": _Field(
        "TRITON_EXT_CACHE_DIR", _parse_path, lambda: Path.home() / ".cache" / "triton-ext" / "preflight",
        "Where preflight verdicts are cached.",
    ),
    "probe_timeout": _Field(
        "TRITON_EXT_PROBE_TIMEOUT", _parse_float, lambda: 120.0,
        "Seconds the preflight child may take before the library is rejected.",
    ),
    "auto_backup_mb": _Field(
        "TRITON_EXT_AUTO_BACKUP_MB", _parse_megabytes, lambda: 1024.0,
        "The transparent mode (TRITON_EXT_ENABLE=auto) saves and restores a launch's tensor arguments while it "
        "times variants; above this many MiB it launches that specialization with no pass instead.",
    ),
    "auto_budget_s": _Field(
        "TRITON_EXT_AUTO_BUDGET_S", _parse_float, lambda: 6.0,
        "Seconds the transparent mode may add to a specialization's first launch (compiling and timing "
        "variants, after the no-pass compile a stock launch pays too); past it that specialization keeps the no-pass kernel (compiles still running finish in the "
        "background and fill Triton's cache for the next process).",
    ),
    "auto_warps": _Field(
        "TRITON_EXT_AUTO_WARPS", _parse_bool, lambda: True,
        "The transparent mode also times the launch with half and with twice its num_warps (1 to 16), kept by the "
        "same rules as a pass (outputs bit for bit, faster in GPU time and back to back); 0 leaves them out.",
    ),
    "auto_stages": _Field(
        "TRITON_EXT_AUTO_STAGES", _parse_bool, lambda: True,
        "The transparent mode also times the launch with one pipeline stage less and one more (num_stages 1 to 6), "
        "kept by the same rules as a pass; 0 leaves them out.",
    ),
    "auto_launch_bound": _Field(
        "TRITON_EXT_AUTO_LAUNCH_BOUND", _parse_bool, lambda: True,
        "The transparent mode reads the no-pass kernel first and keeps it, compiling no variant, where launches back "
        "to back take 1.25x its GPU time or more (launch-bound: no faster kernel could show); 0 compiles and times "
        "the variants anyway (no pass is still kept there; the safety check uses it to exercise small kernels).",
    ),
    "auto_compile_threads": _Field(
        "TRITON_EXT_AUTO_COMPILE_THREADS", _parse_count, lambda: 0,
        "Threads that compile the transparent mode's variants concurrently (0: one per CPU core, at most 8; "
        "1: one at a time).",
    ),
    "isolate": _Field(
        "TRITON_EXT_ISOLATE", _parse_bool, lambda: False,
        "Run each stage that has plugin passes in a worker process, so a pass that crashes costs the worker, not "
        "this process: the pass is dropped for that kernel as if it had failed. The transparent mode always "
        "does this for its variants.",
    ),
    "log": _Field(
        "TRITON_EXT_LOG", _parse_level, lambda: None,
        "Log level of triton_ext's decisions (debug, info, warning, error): enabled passes, preflight, loads, "
        "the passes placed in each stage, passes dropped; printed to stderr.",
    ),
    "remarks": _Field(
        "TRITON_EXT_REMARKS", _parse_bool, lambda: False,
        "Every pass enabled from now on that declares a 'remarks' option gets remarks=true (unless its options "
        "set it), so it says why it leaves a kernel, loop or load alone; MLIR_ENABLE_DIAGNOSTICS gets 'remarks' "
        "so Triton prints them on stderr when the kernel compiles.",
    ),
    "entry_points": _Field(
        "TRITON_EXT_ENTRY_POINTS", _parse_bool, lambda: True,
        "Merge registry fragments from the 'triton_ext.extensions' entry point group.",
    ),
}


class Settings:
    """Typed view of the ``TRITON_EXT_*`` environment (see the module docstring)."""

    enable: tuple[str, ...]
    strict: bool
    registry: Path
    build_dir: Path
    cache_dir: Path
    probe_timeout: float
    log: int | None
    remarks: bool
    entry_points: bool
    auto_backup_mb: float
    auto_budget_s: float
    auto_compile_threads: int
    auto_warps: bool
    auto_stages: bool
    auto_launch_bound: bool
    isolate: bool

    def __init__(self) -> None:
        self._overrides: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        field = _FIELDS.get(name)
        if field is None:
            raise AttributeError(f"triton_ext settings have no field {name!r}; known: {', '.join(_FIELDS)}")
        for layer in reversed(self._overrides):
            if name in layer:
                return layer[name]
        text = os.environ.get(field.var)
        if text is None:
            return field.default()
        value = field.parse(field.var, text)
        return field.default() if value is None else value

    @contextlib.contextmanager
    def scope(self, **values: Any) -> Iterator[Settings]:
        """Override fields until the block ends (for tests)."""
        unknown = sorted(set(values) - set(_FIELDS))
        if unknown:
            raise AttributeError(f"unknown settings {unknown}; known: {', '.join(_FIELDS)}")
        layer = dict(values)
        with self._lock:
            self._overrides.append(layer)
        try:
            yield self
        finally:
            with self._lock:
                self._overrides[:] = [other for other in self._overrides if other is not layer]

    @staticmethod
    def describe() -> dict[str, tuple[str, str]]:
        """Field name -> (environment variable, documentation)."""
        return {name: (f.var, f.doc) for name, f in _FIELDS.items()}


settings = Settings()
