"""Validation of registry.yaml (schema 1) over YAML nodes, into the model of :mod:`._model`.

Validation walks the YAML node tree, so every problem is reported as
``FILE:LINE: FIELD: expected ..., found ...``; all problems of a file are
collected into one :class:`~triton_ext._errors.ManifestError`.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterable

import yaml

from ._errors import ManifestError
from ._launch import LAUNCH_FIELDS
from ._merge import check_unique_passes
from ._yaml import compose_registry
from ._model import (
    BACKENDS, COMPILE_OPTIONS, JOINABLE, KINDS, OCCURRENCES, ON_FAILURE, OPTION_TYPES, ROLES, SCHEMA_VERSION, STAGES, STATUSES, Extension,
    Manifest, OptionSpec, PassSpec, Target, ANCHOR, BUILTIN, ENTRY_POINT, IDENT, KEBAB, MODULE, OP_NAME, SNAKE, suggest,
)
from ._pass_records import DeclaredOption, flag_of, read_pass_records, records_path

__all__ = ["parse_registry", "merge"]



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

    read_sources = False  # read Passes.td beside the registry (parse_registry's read_sources)

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
                    f"unknown field; expected one of {', '.join(allowed)}" + suggest(key, allowed),
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

    def strings(self, node: yaml.Node, where: str, pattern: re.Pattern[str] | None = None,
                like: str = "a pass name like 'cse'") -> tuple[str, ...]:
        if not isinstance(node, yaml.SequenceNode):
            self.error(node, where, f"expected a list of strings, found {_describe(node)}")
            return ()
        out = []
        for i, item in enumerate(node.value):
            value = self.scalar(item, f"{where}[{i}]", (str,), "a string")
            if value is not None and pattern is not None and not pattern.match(value):
                self.error(item, f"{where}[{i}]", f"expected {like}, found {value!r}")
            elif value is not None:
                out.append(value)
        return tuple(out)


def _parse_option(c: _Checker, name: str, key: yaml.Node, node: yaml.Node, where: str) -> OptionSpec | None:
    if not KEBAB.match(name):
        c.error(key, where, f"expected a kebab-case option flag like 'max-splits', found {name!r}")
    fields = c.mapping(node, where, ("default", "type", "help", "allowed", "min", "max"), ("default", "type", "help"),
                       owner=key)
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
    # Constraints (an installed fragment carries those of the pass records: `triton-ext wheel`).
    allowed = c.strings(fields["allowed"][1], f"{where}.allowed") if "allowed" in fields else ()
    if allowed and type_ != "str":
        c.error(fields["allowed"][0], f"{where}.allowed", f"expected allowed values only for type str, found type {type_}")
    bounds: dict[str, int | None] = {}
    for bound in ("min", "max"):
        bounds[bound] = c.scalar(fields[bound][1], f"{where}.{bound}", (int,), "an integer") if bound in fields else None
        if bound in fields and type_ not in ("int", "float"):
            c.error(fields[bound][0], f"{where}.{bound}", f"expected {bound} only for type int or float, found type {type_}")
    if type_ is None or help_ is None or default is None:
        return None
    option = OptionSpec(name=name, type=type_, default=default, help=help_, choices=allowed, minimum=bounds["min"],
                        maximum=bounds["max"], origin=f"{c.path.name}:{key.start_mark.line + 1}")
    try:
        option.coerce(default)
    except (TypeError, ValueError) as exc:
        c.error(fields["default"][1], f"{where}.default", f"expected a default the option accepts: {exc}")
    return option


def _parse_target_options(c: _Checker, node: yaml.Node, where: str) -> tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]:
    """``{backend: {option: value}}``; a value for an option the pass lacks is ignored when it runs."""
    return tuple((b, tuple((k, c.scalar(v, f"{where}.{b}.{k}", (str, int, bool), "a string, integer or boolean"))
                           for k, (_, v) in (c.mapping(n, f"{where}.{b}") or {}).items()))
                 for b, (_, n) in (c.mapping(node, where, BACKENDS) or {}).items())


def _parse_compile_options(c: _Checker, node: yaml.Node, where: str) -> tuple[tuple[str, str], ...]:
    """``{option-flag: compile-option}``: the pass's option takes the kernel's compile option."""
    out: list[tuple[str, str]] = []
    for flag, (key, value) in (c.mapping(node, where) or {}).items():
        if not KEBAB.match(flag):
            c.error(key, f"{where}.{flag}", f"expected a kebab-case option flag like 'kernel-num-stages', found {flag!r}")
            continue
        name = c.choice(value, f"{where}.{flag}", COMPILE_OPTIONS)
        if name is not None:
            out.append((flag, name))
    return tuple(out)


def _check_compile_options(c: _Checker, spec: PassSpec, node: yaml.Node, where: str) -> None:
    """Each ``compile_options`` flag names an int option of the pass, once its options are known
    (declared here or read from the build's pass records)."""
    if not spec.options:
        return  # not built yet: checked when the options are known (`triton-ext check`)
    declared = {o.name: o for o in spec.options}
    field = next((v for k, v in node.value if k.value == "compile_options"), node)
    for flag, _name in spec.compile_options:
        option = declared.get(flag)
        if option is None:
            c.error(field, f"{where}.compile_options.{flag}",
                    f"expected an option of pass {spec.name} ({', '.join(sorted(declared))}), found {flag!r}")
        elif option.type != "int":
            c.error(field, f"{where}.compile_options.{flag}",
                    f"expected an int option (compile options are ints), found {flag!r} of type {option.type}")


def _parse_pass(c: _Checker, ext: str, name: str, key: yaml.Node, node: yaml.Node, where: str,
                role: str = "optimization") -> PassSpec | None:
    if not SNAKE.match(name):
        c.error(key, where, f"expected a snake_case pass name, found {name!r}")
    allowed = ("stage", "after", "before", "replaces", "skips", "occurrence", "then", "enabled_by_default", "options",
               "on_failure", "auto", "role", "target_options", "with", "compile_options", "launch_requests", "needs_ops", "joins")
    fields = c.mapping(node, where, allowed, ("stage",), owner=key)
    if fields is None:
        return None
    ok = len(c.errors)
    stage = c.choice(fields["stage"][1], f"{where}.stage", STAGES) if "stage" in fields else None
    after = before = None
    if "after" in fields:
        after = c.name(fields["after"][1], f"{where}.after", ANCHOR, "a built-in pass name like 'loop_unroll'")
    if "before" in fields:
        before = c.name(fields["before"][1], f"{where}.before", ANCHOR, "a built-in pass name like 'loop_unroll'")
    if "after" in fields and "before" in fields:
        c.error(fields["before"][0], f"{where}.before", "expected either after or before, found both")
    replaces = None
    skips: tuple[str, ...] = ()
    if "replaces" in fields:
        replaces = c.name(fields["replaces"][1], f"{where}.replaces", BUILTIN, "a built-in pass name like 'loop_unroll'")
        for other in ("after", "before"):
            if other in fields:
                c.error(fields[other][0], f"{where}.{other}", "expected no after/before with replaces (the pass takes "
                                                             "the replaced pass's place), found both")
    if "skips" in fields:
        skips = c.strings(fields["skips"][1], f"{where}.skips", BUILTIN)
    occurrence = "first"
    if "occurrence" in fields:
        occurrence = c.choice(fields["occurrence"][1], f"{where}.occurrence", OCCURRENCES) or "first"
        if "after" not in fields and "before" not in fields and "replaces" not in fields:
            c.error(fields["occurrence"][0], f"{where}.occurrence", "expected only with after, before or replaces, found none")
    then = c.strings(fields["then"][1], f"{where}.then", ANCHOR) if "then" in fields else ()
    companions = c.strings(fields["with"][1], f"{where}.with", SNAKE) if "with" in fields else ()
    enabled_by_default = "enabled_by_default" in fields and bool(
        c.scalar(fields["enabled_by_default"][1], f"{where}.enabled_by_default", (bool,), "true or false"))
    auto = "auto" in fields and bool(c.scalar(fields["auto"][1], f"{where}.auto", (bool,), "true or false"))
    if "role" in fields:
        role = c.choice(fields["role"][1], f"{where}.role", ROLES) or role
    # A check fails the compile when it cannot be applied (compiling without it would hide what
    # it reports); other passes are dropped for that kernel. on_failure says otherwise explicitly.
    on_failure = "error" if role == "check" else "skip"
    if "on_failure" in fields:
        on_failure = c.choice(fields["on_failure"][1], f"{where}.on_failure", ON_FAILURE) or on_failure
    options: list[OptionSpec] = []
    if "options" in fields:
        option_nodes = c.mapping(fields["options"][1], f"{where}.options")
        for option_name, (option_key, option_node) in (option_nodes or {}).items():
            option = _parse_option(c, option_name, option_key, option_node, f"{where}.options.{option_name}")
            if option is not None:
                options.append(option)
    target_options = _parse_target_options(c, fields["target_options"][1], f"{where}.target_options") \
        if "target_options" in fields else ()
    compile_options = _parse_compile_options(c, fields["compile_options"][1], f"{where}.compile_options") \
        if "compile_options" in fields else ()
    requests = c.strings(fields["launch_requests"][1], f"{where}.launch_requests") if "launch_requests" in fields else ()
    needs_ops = c.strings(fields["needs_ops"][1], f"{where}.needs_ops", OP_NAME, "an operation name like 'tt.dot'") \
        if "needs_ops" in fields else ()
    joins = c.strings(fields["joins"][1], f"{where}.joins") if "joins" in fields else ()
    for option in (o for o in joins if o not in JOINABLE):
        c.error(fields["joins"][1], f"{where}.joins",
                f"expected launch options the transparent mode varies, among {', '.join(JOINABLE)}, found {option!r}")
    for request in (r for r in requests if r not in LAUNCH_FIELDS):
        c.error(fields["launch_requests"][1], f"{where}.launch_requests",
                f"expected launch fields among {', '.join(LAUNCH_FIELDS)}, found {request!r}")
    if len(c.errors) != ok or stage is None:
        return None
    return PassSpec(
        name=name, extension=ext, stage=stage, after=after, before=before, occurrence=occurrence, then=then,
        enabled_by_default=enabled_by_default, options=tuple(options), line=key.start_mark.line + 1, replaces=replaces,
        skips=skips, on_failure=on_failure, auto=auto, role=role, target_options=target_options, companions=companions,
        compile_options=compile_options, launch_requests=requests, needs_ops=needs_ops, joins=joins,
    )


def _check_pipeline_pass(c: _Checker, spec: PassSpec, key: yaml.Node, node: yaml.Node, where: str) -> PassSpec:
    """A ``kind: pipeline`` entry adds no pass: it may only skip built-ins."""
    fields = {k.value: k for k, _ in node.value if isinstance(k, yaml.ScalarNode)} if isinstance(node, yaml.MappingNode) else {}
    for name in ("after", "before", "replaces", "then", "options", "occurrence", "on_failure", "auto", "role", "launch_requests",
                 "needs_ops", "joins"):
        if name in fields:
            c.error(fields[name], f"{where}.{name}", "expected only stage, skips and enabled_by_default in a "
                                                        "kind: pipeline entry (it adds no pass), found " + name)
    if not spec.skips:
        c.error(key, f"{where}.skips", "required field is missing (a kind: pipeline entry skips at least one built-in)")
    return replace(spec, adds_pass=False)


def _has_passes_td(c: _Checker, directory: str | None) -> Path | None:
    """The extension folder's Passes.td (relative to the registry file) when the registry is read
    from a checkout and the folder has one; None otherwise (an installed fragment carries the
    options it was built with: `triton-ext wheel`)."""
    if directory is None or not c.read_sources:
        return None
    path = c.path.parent / directory / "Passes.td"
    return path if path.is_file() else None


def _options_from_records(c: _Checker, spec: PassSpec, td: Path, records: Path,
                          table: dict[str, tuple[DeclaredOption, ...]] | None, key: yaml.Node, where: str) -> PassSpec:
    """``spec`` with the options its Passes.td declares, as the build's pass records give them
    (TableGen's own resolution: shared classes, EnumOption values, RangeOption bounds)."""
    declared = table.get(flag_of(spec.name)) if table is not None else None
    if spec.options:
        if declared is not None:
            c.error(key, f"{where}.options", f"expected no options here: {td.name} declares the options of "
                    f"{spec.name} ({', '.join(o.flag for o in declared) or 'none'}); remove them from the registry")
        return spec  # not built yet, or Passes.td does not declare this pass: the registry's stand
    if declared is None:  # not built yet: the build writes the options (`triton-ext build`)
        return replace(spec, options_source=str(records))
    origin = f"{td.parent.name}/{td.name}"
    options = tuple(OptionSpec(o.flag, o.type, o.default, o.help, o.allowed, o.minimum, origin, o.maximum)
                    for o in declared)
    return replace(spec, options=options, options_source=str(records))


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
    if not SNAKE.match(name):
        c.error(key, where, f"expected a snake_case extension name like 'my_extension', found {name!r}")
    allowed = ("kind", "directory", "library", "status", "summary", "owners", "targets", "passes", "role", "package",
               "on_enable")
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
    library = c.name(fields["library"][1], f"{where}.library", IDENT, "a library name like TritonExtLoopSplit") if "library" in fields else None
    if is_pipeline and "library" in fields:
        c.error(fields["library"][0], f"{where}.library", "expected no library in a kind: pipeline entry (it only "
                                                          "edits Triton's pipeline), found one")
    elif is_pipeline:
        library = ""
    status = c.choice(fields["status"][1], f"{where}.status", STATUSES) if "status" in fields else None
    summary = c.scalar(fields["summary"][1], f"{where}.summary", (str,), "a one-sentence summary") if "summary" in fields else None
    owners = c.strings(fields["owners"][1], f"{where}.owners") if "owners" in fields else ()
    targets = _parse_targets(c, fields["targets"][1], f"{where}.targets") if "targets" in fields else ()
    role = ("language" if kind in ("dialect", "language") else "optimization")
    if "role" in fields:
        role = c.choice(fields["role"][1], f"{where}.role", ROLES) or role
    package = on_enable = None
    if "package" in fields:
        package = c.name(fields["package"][1], f"{where}.package", MODULE, "a Python package name like triton_ext_onchip")
    if "on_enable" in fields:
        on_enable = c.name(fields["on_enable"][1], f"{where}.on_enable", ENTRY_POINT,
                           "module:function of the extension's package, like triton_ext_sanitizers:on_enable")
        if on_enable is not None and package is None:
            c.error(fields["on_enable"][0], f"{where}.on_enable", "expected a package field naming the extension's "
                                                                  "Python package, found none")
        elif on_enable is not None and package is not None and on_enable.split(":")[0].split(".")[0] != package:
            c.error(fields["on_enable"][1], f"{where}.on_enable", f"expected a function of the package {package} "
                                                                  f"({package}:function), found {on_enable!r}")
    passes: list[PassSpec] = []
    td = _has_passes_td(c, directory)
    records = table = None
    if td is not None and library:
        records = records_path(Extension(name, kind or "pass", directory or "", library, "", "",  # type: ignore[arg-type]
                                         library_dir=library_dir).library_path())
        if records.is_file():
            try:
                table = read_pass_records(records)
            except ManifestError as exc:
                c.errors.append(exc.message)
    if "passes" in fields:
        pass_nodes = c.mapping(fields["passes"][1], f"{where}.passes")
        for pass_name, (pass_key, pass_node) in (pass_nodes or {}).items():
            spec = _parse_pass(c, name, pass_name, pass_key, pass_node, f"{where}.passes.{pass_name}", role)
            if spec is not None and td is not None and records is not None:
                spec = _options_from_records(c, spec, td, records, table, pass_key, f"{where}.passes.{pass_name}")
            if spec is not None and is_pipeline:
                spec = _check_pipeline_pass(c, spec, pass_key, pass_node, f"{where}.passes.{pass_name}")
            if spec is not None and spec.compile_options:
                _check_compile_options(c, spec, pass_node, f"{where}.passes.{pass_name}")
            if spec is not None:
                passes.append(spec)
        declared = {spec.name for spec in passes}
        for spec in passes:
            for companion in spec.companions:
                if companion == spec.name or companion not in declared:
                    node = next((v for k, v in pass_nodes[spec.name][1].value if k.value == "with"),
                                pass_nodes[spec.name][1])
                    c.error(node, f"{where}.passes.{spec.name}.with",
                            f"expected other passes of extension {name} ({', '.join(sorted(declared - {spec.name})) or 'none'}), "
                            f"found {companion!r}")
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
        package=package,
        on_enable=on_enable,
    )


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


def parse_registry(text: str, path: Path | str = "registry.yaml", library_dir: Path | None = None,
                   *, read_sources: bool = False) -> Manifest:
    """Validate one registry document; raise :class:`ManifestError` listing every problem.

    With ``read_sources`` (the registry read from disk by ``load_manifest``), the options of each
    pass whose extension folder next to the registry has a ``Passes.td`` come from the build's pass
    records (what TableGen made of it, beside the library; none until it is built)."""
    path = Path(path)
    c = _Checker(path)
    c.read_sources = read_sources
    root = compose_registry(text, path)
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
    check_unique_passes(c.errors, manifest)
    if c.errors:
        summary = c.errors[0] if len(c.errors) == 1 else f"{len(c.errors)} problems in {path}:\n  " + "\n  ".join(c.errors)
        raise ManifestError(summary, path=path, errors=tuple(c.errors))
    return manifest
