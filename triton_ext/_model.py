"""The registry's model: frozen dataclasses for extensions, passes, options and targets.

The bottom of the manifest layer: :mod:`triton_ext._schema` validates registry.yaml into these
classes and :mod:`triton_ext._manifest` loads and merges the registries. The layout is documented
in ``docs/registry-schema.md``.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from ._errors import UnknownPassError
from ._settings import settings

__all__ = [
    "SCHEMA_VERSION", "STAGES", "KINDS", "STATUSES", "BACKENDS", "OPTION_TYPES", "OCCURRENCES", "ON_FAILURE", "ROLES",
    "ENTRY_POINT_GROUP", "COMPILE_OPTIONS", "JOINABLE", "Manifest", "Extension", "PassSpec", "OptionSpec", "Target", "suggest",
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
#: The launch options whose transparent-mode variants a pass may join (registry ``joins``).
JOINABLE = ("num_warps", "num_stages")
ENTRY_POINT_GROUP = "triton_ext.extensions"
#: Triton compile options a pass may take an option value from (registry ``compile_options``):
#: fields that CUDA's and HIP's options share, which the IR a pass sees does not carry.
COMPILE_OPTIONS = ("num_warps", "num_stages", "num_ctas")

SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
KEBAB = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: A Python module path (``triton_ext_sanitizers``) and an entry point (``module:function``).
MODULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
ENTRY_POINT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$")
ANCHOR = re.compile(r"^([a-z][a-z0-9_]*\.)*[a-z][a-z0-9_]*$")
# skips/replaces also accept the MLIR argument spelling (triton-licm), see _triton.tap.canonical_builtin.
BUILTIN = re.compile(r"^([a-z][a-z0-9_]*\.)*[a-z][a-z0-9_-]*$")
#: An MLIR operation name as TTIR prints it: ``tt.dot``, ``scf.for``.
OP_NAME = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$")


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
    #: Option values this pass takes on one backend unless the user sets them (registry
    #: ``target_options``, e.g. a value that only one backend can compile).
    target_options: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()
    #: Passes of the same extension enabled along with this one, with their defaults (registry
    #: ``with:``): a helper at another stage that this pass's output needs to run well.
    companions: tuple[str, ...] = ()
    #: Options set at each compile from the kernel's own compile options (registry
    #: ``compile_options``: flag -> one of :data:`COMPILE_OPTIONS`), e.g. the ``num_stages`` a kernel
    #: is compiled with, which its IR does not say.
    compile_options: tuple[tuple[str, str], ...] = ()
    #: Launch attributes the pass may ask for by marking the module (registry ``launch_requests``,
    #: a subset of :data:`triton_ext._launch.LAUNCH_FIELDS`): known before a compile, so a caller
    #: that cannot launch such kernels as it launches the rest (Inductor's static launcher) can
    #: leave the pass out without compiling it.
    launch_requests: tuple[str, ...] = ()
    #: Operations without one of which in a kernel's TTIR the pass leaves the kernel as it is
    #: (registry ``needs_ops``): the transparent mode does not compile its variant for such a kernel.
    needs_ops: tuple[str, ...] = ()
    #: The transparent mode's launch-option variants this pass joins (registry ``joins``, a subset
    #: of :data:`JOINABLE`): every such variant is compiled with the pass, which keeps a result
    #: the option alone would change (an integer product's overflow behaviour, say).
    joins: tuple[str, ...] = ()

    def options_for(self, backend: str) -> dict[str, Any]:
        """The registry's option values for ``backend`` (empty when it names none)."""
        return dict(next((values for name, values in self.target_options if name == backend), ()))

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
            + suggest(name, known),
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
    #: The extension's own Python package (registry ``package``, e.g. ``triton_ext_sanitizers``):
    #: a folder of that name in ``directory`` in a checkout, installed by the extension's wheel.
    package: str | None = None
    #: ``module:function`` of that package the loader calls whenever one of the extension's passes
    #: is enabled (registry ``on_enable``; the function is idempotent).
    on_enable: str | None = None

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
                f"unknown extension {name!r}; known: {', '.join(known) or 'none'}" + suggest(name, known)
            ) from None

    def find_pass(self, name: str) -> PassSpec:
        """The pass called ``name``; :class:`UnknownPassError` lists the known ones."""
        for spec in self.passes:
            if spec.name == name:
                return spec
        known = [p.name for p in self.passes]
        raise UnknownPassError(
            f"unknown pass {name!r}; known passes: {', '.join(known) or 'none'}"
            + suggest(name, known + list(self._by_name))
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


def suggest(name: str, known: Iterable[str]) -> str:
    """``; did you mean 'x'?`` for the known name closest to ``name``, or an empty string."""
    close = difflib.get_close_matches(name, list(known), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _int_text(text: str) -> int:
    """An int as MLIR's option parser reads one (decimal, or 0x/0o/0b prefixed)."""
    try:
        return int(text, 10)
    except ValueError:
        return int(text, 0)
