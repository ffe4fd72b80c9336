"""Parse and validate registry.yaml (schema 1) into frozen dataclasses.

The registry is read from ``settings.registry`` (``$TRITON_EXT_REGISTRY`` or the
checkout's ``registry.yaml``) and merged with the fragments that installed
packages declare in the ``triton_ext.extensions`` entry point group. The layout
is documented in ``docs/registry-schema.md``.

Validation walks the YAML node tree, so every problem is reported as
``FILE:LINE: FIELD: expected ..., found ...``; all problems of a file are
collected into one :class:`~triton_ext._errors.ManifestError`.
"""

from __future__ import annotations

import difflib
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

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
    "parse_registry",
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

    def coerce(self, value: Any) -> Any:
        """Check ``value`` against the declared type; return it (ints widen to float)."""
        ok = {
            "int": isinstance(value, int) and not isinstance(value, bool),
            "float": isinstance(value, (int, float)) and not isinstance(value, bool),
            "bool": isinstance(value, bool),
            "str": isinstance(value, str),
        }[self.type]
        if not ok:
            raise TypeError(f"option {self.name}: expected {self.type}, found {value!r}")
        return float(value) if self.type == "float" else value

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
    #: False for a ``kind: pipeline`` entry: it edits Triton's pipeline and adds no plugin pass.
    adds_pass: bool = True

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
        raise UnknownPassError(
            f"pass {self.name} has no option {name!r}; expected one of {known or 'none'}"
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
# Validation over YAML nodes
# --------------------------------------------------------------------------- #



def _describe(node: yaml.Node) -> str:
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    value = _construct(node)
    if value is None:
        return "nothing"
    return repr(value)


class _Checker:
    """Collects ``FILE:LINE: FIELD: message`` errors while converting nodes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.errors: list[str] = []

    def error(self, node: yaml.Node | None, where: str, message: str) -> None:
        line = node.start_mark.line + 1 if node is not None else 1
        self.errors.append(f"{self.path}:{line}: {where}: {message}")

    def mapping(
        self,
        node: yaml.Node,
        where: str,
        allowed: Iterable[str] | None = None,
        required: Iterable[str] = (),
        owner: yaml.Node | None = None,
    ) -> dict[str, tuple[yaml.Node, yaml.Node]] | None:
        """Key -> (key node, value node); reports duplicates, unknown and missing keys."""
        if not isinstance(node, yaml.MappingNode):
            self.error(node, where, f"expected a mapping, found {_describe(node)}")
            return None
        allowed = list(allowed) if allowed is not None else None
        out: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key_node, value_node in node.value:
            key = _construct(key_node)
            if not isinstance(key, str):
                self.error(key_node, where, f"expected a string key, found {key!r}")
                continue
            field_name = f"{where}.{key}" if where else key
            if key in out:
                first = out[key][0].start_mark.line + 1
                self.error(key_node, field_name, f"duplicate key (first defined on line {first})")
                continue
            if allowed is not None and key not in allowed:
                self.error(
                    key_node,
                    field_name,
                    f"unknown field; expected one of {', '.join(allowed)}" + _suggest(key, allowed),
                )
                continue
            out[key] = (key_node, value_node)
        for key in required:
            if key not in out:
                self.error(owner or node, f"{where}.{key}" if where else key, "required field is missing")
        return out

    def scalar(self, node: yaml.Node, where: str, types: tuple[type, ...], expected: str) -> Any:
        if isinstance(node, yaml.ScalarNode):
            try:
                value = _construct(node, strict=True)
            except yaml.YAMLError as exc:
                self.error(node, where, f"expected {expected}, found a value YAML cannot read "
                                        f"({getattr(exc, 'problem', None) or exc})")
                return None
            if isinstance(value, types) and not (isinstance(value, bool) and bool not in types):
                return value
        self.error(node, where, f"expected {expected}, found {_describe(node)}")
        return None

    def choice(self, node: yaml.Node, where: str, choices: tuple[str, ...]) -> str | None:
        if isinstance(node, yaml.ScalarNode):
            value = _construct(node)
            if value in choices:
                return value
        self.error(node, where, f"expected one of {', '.join(choices)}, found {_describe(node)}")
        return None

    def name(self, node: yaml.Node, where: str, pattern: re.Pattern[str], expected: str) -> str | None:
        value = self.scalar(node, where, (str,), expected)
        if value is not None and not pattern.match(value):
            self.error(node, where, f"expected {expected}, found {value!r}")
            return None
        return value

    def strings(self, node: yaml.Node, where: str, pattern: re.Pattern[str] | None = None) -> tuple[str, ...]:
        if not isinstance(node, yaml.SequenceNode):
            self.error(node, where, f"expected a list of strings, found {_describe(node)}")
            return ()
        out = []
        for i, item in enumerate(node.value):
            value = self.scalar(item, f"{where}[{i}]", (str,), "a string")
            if value is not None and pattern is not None and not pattern.match(value):
                self.error(item, f"{where}[{i}]", f"expected a pass name like 'cse', found {value!r}")
            elif value is not None:
                out.append(value)
        return tuple(out)


def _parse_option(c: _Checker, name: str, key: yaml.Node, node: yaml.Node, where: str) -> OptionSpec | None:
    if not _KEBAB.match(name):
        c.error(key, where, f"expected a kebab-case option flag like 'max-splits', found {name!r}")
    fields = c.mapping(node, where, ("default", "type", "help"), ("default", "type", "help"), owner=key)
    if fields is None:
        return None
    type_ = c.choice(fields["type"][1], f"{where}.type", OPTION_TYPES) if "type" in fields else None
    help_ = c.scalar(fields["help"][1], f"{where}.help", (str,), "a help sentence") if "help" in fields else None
    default = None
    if "default" in fields and type_ is not None:
        python_types = {"int": (int,), "float": (int, float), "bool": (bool,), "str": (str,)}[type_]
        default = c.scalar(fields["default"][1], f"{where}.default", python_types, f"a value of type {type_}")
        if type_ == "float" and default is not None:
            default = float(default)
    if type_ is None or help_ is None or default is None:
        return None
    return OptionSpec(name=name, type=type_, default=default, help=help_)


def _parse_pass(c: _Checker, ext: str, name: str, key: yaml.Node, node: yaml.Node, where: str) -> PassSpec | None:
    if not _SNAKE.match(name):
        c.error(key, where, f"expected a snake_case pass name, found {name!r}")
    allowed = ("stage", "after", "before", "replaces", "skips", "occurrence", "then", "enabled_by_default", "options")
    fields = c.mapping(node, where, allowed, ("stage",), owner=key)
    if fields is None:
        return None
    ok = len(c.errors)
    stage = c.choice(fields["stage"][1], f"{where}.stage", STAGES) if "stage" in fields else None
    after = before = None
    if "after" in fields:
        after = c.name(fields["after"][1], f"{where}.after", _ANCHOR, "a built-in pass name like 'loop_unroll'")
    if "before" in fields:
        before = c.name(fields["before"][1], f"{where}.before", _ANCHOR, "a built-in pass name like 'loop_unroll'")
    if "after" in fields and "before" in fields:
        c.error(fields["before"][0], f"{where}.before", "expected either after or before, found both")
    replaces = None
    skips: tuple[str, ...] = ()
    if "replaces" in fields:
        replaces = c.name(fields["replaces"][1], f"{where}.replaces", _BUILTIN, "a built-in pass name like 'loop_unroll'")
        for other in ("after", "before"):
            if other in fields:
                c.error(fields[other][0], f"{where}.{other}", "expected no after/before with replaces (the pass takes "
                                                             "the replaced pass's place), found both")
    if "skips" in fields:
        skips = c.strings(fields["skips"][1], f"{where}.skips", _BUILTIN)
    occurrence = "first"
    if "occurrence" in fields:
        occurrence = c.choice(fields["occurrence"][1], f"{where}.occurrence", OCCURRENCES) or "first"
        if "after" not in fields and "before" not in fields and "replaces" not in fields:
            c.error(fields["occurrence"][0], f"{where}.occurrence", "expected only with after, before or replaces, found none")
    then = c.strings(fields["then"][1], f"{where}.then", _ANCHOR) if "then" in fields else ()
    enabled_by_default = False
    if "enabled_by_default" in fields:
        enabled_by_default = bool(
            c.scalar(fields["enabled_by_default"][1], f"{where}.enabled_by_default", (bool,), "true or false")
        )
    options: list[OptionSpec] = []
    if "options" in fields:
        option_nodes = c.mapping(fields["options"][1], f"{where}.options")
        for option_name, (option_key, option_node) in (option_nodes or {}).items():
            option = _parse_option(c, option_name, option_key, option_node, f"{where}.options.{option_name}")
            if option is not None:
                options.append(option)
    if len(c.errors) != ok or stage is None:
        return None
    return PassSpec(
        name=name,
        extension=ext,
        stage=stage,
        after=after,
        before=before,
        occurrence=occurrence,
        then=then,
        enabled_by_default=enabled_by_default,
        options=tuple(options),
        line=key.start_mark.line + 1,
        replaces=replaces,
        skips=skips,
    )


def _check_pipeline_pass(c: _Checker, spec: PassSpec, key: yaml.Node, node: yaml.Node, where: str) -> PassSpec:
    """A ``kind: pipeline`` entry adds no pass: it may only skip built-ins."""
    fields = {k.value: k for k, _ in node.value if isinstance(k, yaml.ScalarNode)} if isinstance(node, yaml.MappingNode) else {}
    for name in ("after", "before", "replaces", "then", "options", "occurrence"):
        if name in fields:
            c.error(fields[name], f"{where}.{name}", "expected only stage, skips and enabled_by_default in a "
                                                        "kind: pipeline entry (it adds no pass), found " + name)
    if not spec.skips:
        c.error(key, f"{where}.skips", "required field is missing (a kind: pipeline entry skips at least one built-in)")
    from dataclasses import replace

    return replace(spec, adds_pass=False)


def _parse_targets(c: _Checker, node: yaml.Node, where: str) -> tuple[Target, ...]:
    fields = c.mapping(node, where, BACKENDS)
    if fields is None:
        return ()
    if not fields:
        c.error(node, where, f"expected at least one of {', '.join(BACKENDS)}, found an empty mapping")
    targets = []
    for backend, (_, value) in fields.items():
        sub = f"{where}.{backend}"
        if isinstance(value, yaml.ScalarNode) and value.value in ("", "~", "null"):
            targets.append(Target(backend))
            continue
        allowed = ("min_arch", "max_arch") if backend == "cuda" else ("archs",)
        spec = c.mapping(value, sub, allowed)
        if spec is None:
            continue
        min_arch = max_arch = None
        archs: tuple[str, ...] = ()
        if "min_arch" in spec:
            min_arch = c.scalar(spec["min_arch"][1], f"{sub}.min_arch", (int,), "an integer like 80")
        if "max_arch" in spec:
            max_arch = c.scalar(spec["max_arch"][1], f"{sub}.max_arch", (int,), "an integer like 90")
        if "archs" in spec:
            archs = c.strings(spec["archs"][1], f"{sub}.archs")
        targets.append(Target(backend, min_arch, max_arch, archs))
    return tuple(targets)


def _parse_extension(
    c: _Checker, name: str, key: yaml.Node, node: yaml.Node, where: str, library_dir: Path | None
) -> Extension | None:
    if not _SNAKE.match(name):
        c.error(key, where, f"expected a snake_case extension name like 'loop_split', found {name!r}")
    allowed = ("kind", "directory", "library", "status", "summary", "owners", "targets", "passes")
    required = ("kind", "directory", "library", "status", "summary", "targets")
    # A kind: pipeline entry has no library (issue 19).
    is_pipeline = isinstance(node, yaml.MappingNode) and any(
        getattr(k, "value", None) == "kind" and getattr(v, "value", None) == "pipeline" for k, v in node.value)
    if is_pipeline:
        required = tuple(r for r in required if r != "library")
    fields = c.mapping(node, where, allowed, required, owner=key)
    if fields is None:
        return None
    ok = len(c.errors)
    kind = c.choice(fields["kind"][1], f"{where}.kind", KINDS) if "kind" in fields else None
    directory = c.scalar(fields["directory"][1], f"{where}.directory", (str,), "a folder like passes/LoopSplit") if "directory" in fields else None
    library = c.name(fields["library"][1], f"{where}.library", _IDENT, "a library name like TritonExtLoopSplit") if "library" in fields else None
    if is_pipeline and "library" in fields:
        c.error(fields["library"][0], f"{where}.library", "expected no library in a kind: pipeline entry (it only "
                                                          "edits Triton's pipeline), found one")
    elif is_pipeline:
        library = ""
    status = c.choice(fields["status"][1], f"{where}.status", STATUSES) if "status" in fields else None
    summary = c.scalar(fields["summary"][1], f"{where}.summary", (str,), "a one-sentence summary") if "summary" in fields else None
    owners = c.strings(fields["owners"][1], f"{where}.owners") if "owners" in fields else ()
    targets = _parse_targets(c, fields["targets"][1], f"{where}.targets") if "targets" in fields else ()
    passes: list[PassSpec] = []
    if "passes" in fields:
        pass_nodes = c.mapping(fields["passes"][1], f"{where}.passes")
        for pass_name, (pass_key, pass_node) in (pass_nodes or {}).items():
            spec = _parse_pass(c, name, pass_name, pass_key, pass_node, f"{where}.passes.{pass_name}")
            if spec is not None and is_pipeline:
                spec = _check_pipeline_pass(c, spec, pass_key, pass_node, f"{where}.passes.{pass_name}")
            if spec is not None:
                passes.append(spec)
    elif kind in ("pass", "pipeline"):
        c.error(key, f"{where}.passes", f"required field is missing (kind: {kind} declares at least one pass)")
    if len(c.errors) != ok:
        return None
    return Extension(
        name=name,
        kind=kind,  # type: ignore[arg-type]
        directory=directory,  # type: ignore[arg-type]
        library=library,  # type: ignore[arg-type]
        status=status,  # type: ignore[arg-type]
        summary=summary,  # type: ignore[arg-type]
        owners=owners,
        targets=targets,
        passes=tuple(passes),
        source=c.path,
        line=key.start_mark.line + 1,
        library_dir=library_dir,
    )


MAX_DEPTH = 32


def _construct(node: yaml.Node, strict: bool = False) -> Any:
    """The Python value of a scalar node. A fresh SafeLoader each time: loaders keep state, and
    threads may parse registries at once. A tag YAML cannot construct gives the raw text (the
    field check then reports it), or raises with ``strict``."""
    try:
        return yaml.SafeLoader("").construct_object(node, deep=True)
    except yaml.YAMLError:
        if strict:
            raise
        return getattr(node, "value", None)


def _depth(root: yaml.Node) -> int:
    """Nesting depth of a composed document, without recursion (inputs may be hostile)."""
    deepest, stack = 0, [(root, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            return deepest
        if isinstance(node, yaml.MappingNode):
            stack.extend((n, depth + 1) for pair in node.value for n in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((n, depth + 1) for n in node.value)
    return deepest


def parse_registry(text: str, path: Path | str = "registry.yaml", library_dir: Path | None = None) -> Manifest:
    """Validate one registry document; raise :class:`ManifestError` listing every problem."""
    path = Path(path)
    c = _Checker(path)
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except RecursionError:
        raise ManifestError(f"{path}:1: nested too deeply for a registry; a registry needs at most "
                            "6 levels (extensions.<name>.passes.<pass>.options.<flag>)",
                            path=path) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc)
        raise ManifestError(f"{path}:{line}: not valid YAML: {problem}", path=path) from None
    if root is None:
        raise ManifestError(f"{path}:1: expected a mapping with 'schema' and 'extensions', found an empty file", path=path)
    if _depth(root) > MAX_DEPTH:
        raise ManifestError(f"{path}:1: nested more than {MAX_DEPTH} levels deep; a registry needs "
                            "at most 6 (extensions.<name>.passes.<pass>.options.<flag>)", path=path)
    fields = c.mapping(root, "", ("schema", "extensions"), ("schema", "extensions"))
    extensions: list[Extension] = []
    if fields is not None:
        if "schema" in fields:
            schema = c.scalar(fields["schema"][1], "schema", (int,), f"{SCHEMA_VERSION}")
            if schema is not None and schema != SCHEMA_VERSION:
                c.error(fields["schema"][1], "schema", f"expected {SCHEMA_VERSION}, found {schema}; this triton_ext reads schema {SCHEMA_VERSION} only")
        if "extensions" in fields:
            ext_nodes = c.mapping(fields["extensions"][1], "extensions")
            for ext_name, (ext_key, ext_node) in (ext_nodes or {}).items():
                ext = _parse_extension(c, ext_name, ext_key, ext_node, f"extensions.{ext_name}", library_dir)
                if ext is not None:
                    extensions.append(ext)
    manifest = Manifest(tuple(extensions), (path,))
    _check_unique_passes(c, manifest)
    if c.errors:
        summary = c.errors[0] if len(c.errors) == 1 else f"{len(c.errors)} problems in {path}:\n  " + "\n  ".join(c.errors)
        raise ManifestError(summary, path=path, errors=tuple(c.errors))
    return manifest


def _check_unique_passes(c: _Checker, manifest: Manifest) -> None:
    seen: dict[str, PassSpec] = {}
    for ext in manifest.extensions:
        for spec in ext.passes:
            first = seen.get(spec.name)
            if first is not None:
                first_ext = manifest.extension(first.extension)
                c.errors.append(
                    f"{ext.source}:{spec.line}: extensions.{ext.name}.passes.{spec.name}: "
                    f"expected a pass name unique across extensions, found it also in "
                    f"extension {first.extension} ({first_ext.source}:{first.line}); rename one of them"
                )
            else:
                seen[spec.name] = spec


def merge(manifests: Iterable[Manifest]) -> Manifest:
    """Join manifests; the same extension or pass name from two sources is an error."""
    extensions: list[Extension] = []
    sources: list[Path] = []
    by_name: dict[str, Extension] = {}
    problems: list[str] = []
    for manifest in manifests:
        sources.extend(manifest.sources)
        for ext in manifest.extensions:
            other = by_name.get(ext.name)
            if other is not None:
                problems.append(
                    f"{ext.source}:{ext.line}: extensions.{ext.name}: expected a unique extension name, "
                    f"found it already declared at {other.source}:{other.line}; "
                    f"uninstall one package or rename the extension"
                )
                continue
            by_name[ext.name] = ext
            extensions.append(ext)
    merged = Manifest(tuple(extensions), tuple(sources))
    c = _Checker(Path("registry"))
    _check_unique_passes(c, merged)
    problems.extend(c.errors)
    if problems:
        raise ManifestError(
            problems[0] if len(problems) == 1 else "conflicting registries:\n  " + "\n  ".join(problems),
            errors=tuple(problems),
        )
    return merged


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
_cache: dict[tuple[Any, ...], Manifest] = {}


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
    key = (_stamp(main),) + tuple((_stamp(p), str(d)) for p, d in fragments)
    with _cache_lock:
        cached = _cache.get(key)
    if cached is not None:
        return cached
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
        _cache[key] = manifest
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
    return parse_registry(text, path, library_dir)
