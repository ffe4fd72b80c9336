"""Parse and validate registry.yaml (schema 1) into frozen dataclasses.

The registry is read from ``settings.registry`` (``$TRITON_EXT_REGISTRY`` or the
checkout's ``registry.yaml``) and merged with the fragments that installed
packages declare in the ``triton_ext.extensions`` entry point group. The layout
is documented in ``docs/registry-schema.md``.

This module is the model (frozen dataclasses) and the loading; validation of the YAML
is :mod:`triton_ext._schema`.
"""

from __future__ import annotations

import difflib
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping


from ._errors import ManifestError, UnknownPassError
from ._settings import settings

__all__ = [
    "SCHEMA_VERSION",
    "STAGES",
    "Manifest",
    "Extension",
    "PassSpec",
    "OptionSpec",
    "Target",
    "load_manifest",
]

SCHEMA_VERSION = 1
STAGES = ("ttir", "ttgir", "llir")
# "pipeline" (issue 19): entries that only edit Triton's own pipeline (skips) and need no library.
KINDS = ("pass", "dialect", "backend", "language", "pipeline")
STATUSES = ("stable", "experimental")
BACKENDS = ("cuda", "hip")
OPTION_TYPES = ("int", "float", "bool", "str")
OCCURRENCES = ("first", "last")
#: What a failing pass does to the compile: ``skip`` compiles the kernel without the pass (with a
#: warning; an error under TRITON_EXT_STRICT), ``error`` fails it (checks: skipping one would hide
#: the mistake it reports).
ON_FAILURE = ("skip", "error")
#: What a pass is for (issue 30): ``optimization`` (the default for pass and backend extensions;
#: the transparent mode may try it), ``check`` (reports mistakes: failing to apply it is an error,
#: ``on_failure: error`` unless the registry says otherwise) and ``language`` (lowers a dialect or
#: language extension's ops; the default for those kinds).
ROLES = ("optimization", "check", "language")
ENTRY_POINT_GROUP = "triton_ext.extensions"

_SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
_KEBAB = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ANCHOR = re.compile(r"^([a-z][a-z0-9_]*\.)*[a-z][a-z0-9_]*$")
# skips/replaces also accept the MLIR argument spelling (triton-licm), see _overrides.canonical.
_BUILTIN = re.compile(r"^([a-z][a-z0-9_]*\.)*[a-z][a-z0-9_-]*$")


# --------------------------------------------------------------------------- #
# The data model
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class OptionSpec:
    """One pass option, spelled like its ``Passes.td`` flag (kebab-case)."""

    name: str
    type: str
    default: Any
    help: str
    #: Constraints the pass declares (Passes.td's EnumOption values, MinOption/RangeOption bounds,
    #: an unsigned C++ type's 0), as the build's pass records give them.
    choices: tuple[Any, ...] = ()
    minimum: int | float | None = None
    #: Where the option is declared ("LoopSplit/Passes.td" or the registry line).
    origin: str = ""
    maximum: int | float | None = None

    def coerce(self, value: Any) -> Any:
        """Check ``value`` against the declared type and constraints; return it (ints widen to float).

        Raises ``TypeError`` for a wrong type and ``ValueError`` for a value the pass refuses."""
        ok = {
            "int": isinstance(value, int) and not isinstance(value, bool),
            "float": isinstance(value, (int, float)) and not isinstance(value, bool),
            "bool": isinstance(value, bool),
            "str": isinstance(value, str),
        }[self.type]
        where = f" (declared in {self.origin})" if self.origin else ""
        if not ok:
            raise TypeError(f"option {self.name}: expected {self.expected()}, found {value!r}{where}")
        low = self.minimum is not None and value < self.minimum
        high = self.maximum is not None and value > self.maximum
        if (self.choices and value not in self.choices) or low or high:
            raise ValueError(f"option {self.name}: expected {self.expected()}, found {value!r}{where}")
        return float(value) if self.type == "float" else value

    def expected(self) -> str:
        """What the option accepts, in words: ``one of record, abort``, ``an int in [2, 3]``."""
        if self.choices:
            return "one of " + ", ".join(map(str, self.choices))
        if self.type == "bool":
            return "true or false"
        article = "an" if self.type == "int" else "a"
        if self.minimum is not None and self.maximum is not None:
            return f"{article} {self.type} in [{self.minimum}, {self.maximum}]"
        if self.minimum is not None:
            return f"{article} {self.type} >= {self.minimum}"
        if self.maximum is not None:
            return f"{article} {self.type} <= {self.maximum}"
        return {"int": "an int", "float": "a float", "str": "a string"}[self.type]

    def parse_text(self, text: str) -> Any:
        """The value of ``text`` as written in a pass pipeline or ``TRITON_EXT_ENABLE``
        (``max-parts=2``, ``records=false``, ``mode=abort``), then checked by :meth:`coerce`."""
        value: Any = text
        if self.type == "bool":
            value = {"true": True, "1": True, "false": False, "0": False}.get(text.strip().lower(), text)
        elif self.type in ("int", "float"):
            try:
                value = _int_text(text) if self.type == "int" else float(text)
            except ValueError:
                value = text
        return self.coerce(value)

    def render(self, value: Any) -> str:
        """The ``flag=value`` argument handed to ``passes.plugin.add_<pass>``."""
        text = ("true" if value else "false") if self.type == "bool" else str(value)
        return f"{self.name}={text}"


@dataclass(frozen=True)
class PassSpec:
    """Where and how one plugin pass runs."""

    name: str
    extension: str
    stage: str
    after: str | None = None
    before: str | None = None
    occurrence: str = "first"
    then: tuple[str, ...] = ()
    enabled_by_default: bool = False
    options: tuple[OptionSpec, ...] = ()
    line: int = 0
    # Overrides of built-in passes (issue 19, docs/registry-schema.md "Overriding built-in passes").
    replaces: str | None = None
    skips: tuple[str, ...] = ()
    on_failure: str = "skip"
    #: False for a ``kind: pipeline`` entry: it edits Triton's pipeline and adds no plugin pass.
    adds_pass: bool = True
    #: A candidate of the transparent mode's bare ``TRITON_EXT_ENABLE=auto`` (registry ``auto:``,
    #: default false: checks, lowerings and negative results are never tried unasked; issue 27.3).
    auto: bool = False
    #: What the pass is for (:data:`ROLES`); a ``check`` fails the compile when it cannot run.
    role: str = "optimization"
    #: The build's pass records the options were read from ("" when the registry declares them);
    #: when the file is missing the options are not known until the extension is built.
    options_source: str = ""

    @property
    def anchor(self) -> str | None:
        return self.after or self.before or self.replaces

    @property
    def position(self) -> str:
        """Human-readable place, e.g. ``ttir after loop_unroll (first)`` or ``ttir end``."""
        skips = f", skipping {', '.join(self.skips)}" if self.skips else ""
        if not self.adds_pass:
            return f"{self.stage}: no pass{skips}"
        if self.replaces:
            return f"{self.stage} in place of {self.replaces} ({self.occurrence}){skips}"
        return self._place() + skips

    def _place(self) -> str:
        if self.after:
            return f"{self.stage} after {self.after} ({self.occurrence})"
        if self.before:
            return f"{self.stage} before {self.before} ({self.occurrence})"
        return f"{self.stage} end"

    def option(self, name: str) -> OptionSpec:
        for option in self.options:
            if option.name == name:
                return option
        known = [o.name for o in self.options]
        if not known and self.options_source and not Path(self.options_source).is_file():
            raise UnknownPassError(
                f"pass {self.name}: its options are not known yet: {self.options_source} is missing; "
                f"build the extension (`triton-ext build {self.extension}`)",
                extension=self.extension,
            )
        raise UnknownPassError(
            f"pass {self.name} has no option {name!r}; expected one of {', '.join(known) or 'none'}"
            + _suggest(name, known),
            extension=self.extension,
        )


@dataclass(frozen=True)
class Target:
    """A backend an extension applies to, with optional architecture limits."""

    backend: str
    min_arch: int | None = None
    max_arch: int | None = None
    archs: tuple[str, ...] = ()

    def accepts(self, arch: Any) -> bool:
        if self.archs and str(arch) not in self.archs:
            return False
        if isinstance(arch, int):
            if self.min_arch is not None and arch < self.min_arch:
                return False
            if self.max_arch is not None and arch > self.max_arch:
                return False
        return True


@dataclass(frozen=True)
class Extension:
    """One registry entry."""

    name: str
    kind: str
    directory: str
    library: str
    status: str
    summary: str
    owners: tuple[str, ...] = ()
    targets: tuple[Target, ...] = ()
    passes: tuple[PassSpec, ...] = ()
    source: Path = Path("registry.yaml")
    line: int = 0
    library_dir: Path | None = None  # None: <build_dir>/plugins

    @property
    def library_file(self) -> str:
        return f"lib{self.library}.so"

    def library_path(self, build_dir: Path | None = None) -> Path:
        """Where the built library is expected."""
        if self.library_dir is not None:
            return self.library_dir / self.library_file
        return Path(build_dir or settings.build_dir) / "plugins" / self.library_file

    def applies_to(self, backend: str, arch: Any) -> bool:
        """True when the extension declares ``backend`` and ``arch`` is in range."""
        return any(t.backend == backend and t.accepts(arch) for t in self.targets)


@dataclass(frozen=True)
class Manifest:
    """All extensions known, from registry.yaml and entry point fragments."""

    extensions: tuple[Extension, ...] = ()
    sources: tuple[Path, ...] = ()
    _by_name: Mapping[str, Extension] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {e.name: e for e in self.extensions})

    @property
    def passes(self) -> tuple[PassSpec, ...]:
        return tuple(p for e in self.extensions for p in e.passes)

    def extension(self, name: str) -> Extension:
        try:
            return self._by_name[name]
        except KeyError:
            known = list(self._by_name)
            raise UnknownPassError(
                f"unknown extension {name!r}; known: {', '.join(known) or 'none'}" + _suggest(name, known)
            ) from None

    def find_pass(self, name: str) -> PassSpec:
        """The pass called ``name``; :class:`UnknownPassError` lists the known ones."""
        for spec in self.passes:
            if spec.name == name:
                return spec
        known = [p.name for p in self.passes]
        raise UnknownPassError(
            f"unknown pass {name!r}; known passes: {', '.join(known) or 'none'}"
            + _suggest(name, known + list(self._by_name))
            + f" (registry: {', '.join(str(s) for s in self.sources) or 'none'})"
        )

    def resolve(self, name: str) -> tuple[PassSpec, ...]:
        """A pass name gives that pass; an extension name gives all its passes."""
        if any(p.name == name for p in self.passes):
            return (self.find_pass(name),)
        if name in self._by_name and self._by_name[name].passes:
            return self._by_name[name].passes
        return (self.find_pass(name),)  # raises with the list of known passes

    def extension_of(self, spec: PassSpec) -> Extension:
        return self._by_name[spec.extension]


def _suggest(name: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


# --------------------------------------------------------------------------- #
# Loading, with entry point fragments
# --------------------------------------------------------------------------- #


def _entry_point_fragments() -> list[tuple[Path, Path | None]]:
    """(registry fragment, library dir) from each ``triton_ext.extensions`` entry point.

    An entry point names an object (or a callable returning one) that is either a
    mapping ``{"registry": PATH, "library_dir": PATH}`` or a pair ``(registry, library_dir)``.
    """
    from importlib.metadata import entry_points

    out: list[tuple[Path, Path | None]] = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
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


def _int_text(text: str) -> int:
    """An int as MLIR's option parser reads one (decimal, or 0x/0o/0b prefixed)."""
    try:
        return int(text, 10)
    except ValueError:
        return int(text, 0)


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
    from ._schema import merge

    manifest = merge(parts)
    with _cache_lock:
        _cache.clear()
        _cache[key] = (manifest, _records_stamps(manifest))
    return manifest


def __getattr__(name: str) -> Any:
    # parse_registry and merge live in ._schema (validation); importable from here as before.
    if name in ("parse_registry", "merge"):
        from . import _schema

        return getattr(_schema, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _read(path: Path, library_dir: Path | None) -> Manifest:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ManifestError(f"{path}: cannot read registry: {exc.strerror}", path=path) from None
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise ManifestError(f"{path}:{line}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at "
                            f"offset {exc.start}); save the registry as UTF-8", path=path) from None
    from ._schema import parse_registry

    return parse_registry(text, path, library_dir, read_sources=True)
