"""Benchmark specs: the ``BenchSpec`` model a ``bench.py`` declares, and finding specs."""


from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, Sequence

from .._errors import TritonExtError
from .._modules import import_file
from .._settings import settings


SCHEMA_VERSION = 1
ROLES = ("baseline", "pass", "handwritten")
CPU_TARGET = ("cuda", 90, 32)


# --------------------------------------------------------------------------- #
# The spec
# --------------------------------------------------------------------------- #


class Launch(Protocol):
    def __call__(self, kernel: Any, inputs: Mapping[str, Any], case: Case) -> Any: ...


class IRPredicate(Protocol):
    def __call__(self, variant: Variant, off: str, on: str) -> str | None: ...


@dataclass(frozen=True)
class Variant:
    """One way to run the benchmarked computation.

    ``role``: ``baseline`` (the unchanged kernel), ``pass`` (the same kernel compiled with the
    spec's passes enabled through ``triton_ext.enabled``) or ``handwritten`` (the best version
    written by hand). ``group`` ties a pass variant to its baseline (same group); a handwritten
    variant is compared with every group. ``passes`` narrows a pass variant to some of the spec's
    passes (one variant per sanitizer, say); empty means all of them.
    """

    name: str
    kernel: Any
    role: str
    group: str = ""
    options: Mapping[str, Any] = field(default_factory=dict)
    passes: tuple[str, ...] = ()

    def enabled_passes(self, spec_passes: Sequence[str]) -> tuple[str, ...]:
        return tuple(self.passes) or tuple(spec_passes)

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise TritonExtError(f"variant {self.name}: role expected one of {ROLES}, found {self.role!r}")


@dataclass(frozen=True)
class Metric:
    """What a timing is turned into: ``TFLOP/s`` or ``GB/s`` from ``amount(case)`` flops or bytes
    per call (``formula`` says how, for the report), or plain ``ms`` with no amount."""

    name: str = "ms"
    amount: Callable[[Case], float] | None = None
    formula: str = ""

    def value(self, case: Case, ms: float) -> float:
        if self.amount is None:
            return ms
        scale = {"TFLOP/s": 1e12, "GB/s": 1e9}.get(self.name)
        if scale is None:
            raise TritonExtError(f"metric {self.name!r}: expected TFLOP/s, GB/s or ms")
        return self.amount(case) / (ms * 1e-3) / scale

    @property
    def higher_is_better(self) -> bool:
        return self.amount is not None


@dataclass(frozen=True)
class Target:
    """A goal the benchmark measures: ``time(versus) / time(variant) >= min_speedup`` on every
    case where ``where(case)`` holds. With ``allow_spread`` the bound is lowered by the run-to-run
    spread of both timings ("never slower beyond the noise")."""

    description: str
    variant: str
    versus: str
    min_speedup: float
    where: Callable[[Case], bool] = lambda case: True
    allow_spread: bool = False


@dataclass(frozen=True)
class Case:
    """One shape and dtype: ``params`` are the spec's named sizes (seq, head_dim, heads, ...)."""

    dtype: str
    params: Mapping[str, int]

    def label(self) -> str:
        return f"{self.dtype} " + " ".join(f"{k}={v}" for k, v in self.params.items())

    def as_dict(self) -> dict[str, Any]:
        return {"dtype": self.dtype, "params": dict(self.params)}


@dataclass(frozen=True)
class BenchSpec:
    """A benchmark of one or more passes. Callables receive a :class:`Case`.

    - ``signature(dtype)``: ``triton.compile`` signature (CPU mode) of every variant's kernel.
    - ``constexprs(case)`` / ``compile_options(case)``: constexpr values and ``num_warps`` etc.;
      CPU mode compiles each distinct combination once.
    - ``make_inputs(case, device, generator)``: a dict of torch tensors (and scalars).
    - ``outputs``: keys of ``make_inputs``' dict the kernel writes (filled with NaN before a run).
    - ``launch(kernel, inputs, case)``: launch through ``@triton.jit`` and return what it returns.
    - ``reference(inputs, case)``: float64 expected output (or the checked part of it), and
      ``checked(inputs, case)``: the same part of the kernel's output.
    - ``ir_check(variant, off, on)``: ``None`` if the pass did what it should to the kernel's
      ``ir_stage`` text, else why not. Without one, the IR merely has to change.
    - ``check_shapes``: the shapes ``--check`` runs (edge cases not worth timing); default ``shapes``.
    - ``bit_identical``: a pass variant's output must equal its baseline's bit for bit (passes that
      only reorder programs or change cache hints), checked in every GPU run.
    - ``check(log)``: the extension's own GPU checks beyond comparing every variant with the
      reference (planted bugs caught, launch chains...), run by ``triton-ext bench --check``;
      returns a JSON-able mapping with ``"ok"`` (bool). Optional.
    """

    name: str
    passes: tuple[str, ...]
    title: str
    variants: tuple[Variant, ...]
    shapes: tuple[Mapping[str, int], ...]
    dtypes: tuple[str, ...]
    signature: Callable[[str], dict[str, str]]
    constexprs: Callable[[Case], dict[str, Any]]
    compile_options: Callable[[Case], dict[str, Any]]
    make_inputs: Callable[[Case, Any, Any], dict[str, Any]]
    outputs: tuple[str, ...]
    launch: Launch
    reference: Callable[[Mapping[str, Any], Case], Any]
    checked: Callable[[Mapping[str, Any], Case], Any]
    tolerance: Mapping[str, float]
    metric: Metric = Metric()
    x_axis: str = ""
    quick_shapes: tuple[Mapping[str, int], ...] = ()
    quick_dtypes: tuple[str, ...] = ()
    ir_stage: str = "ttir"
    ir_check: IRPredicate | None = None
    targets: tuple[Target, ...] = ()
    notes: str = ""
    bit_identical: bool = False
    check_shapes: tuple[Mapping[str, int], ...] = ()
    check: Callable[[Callable[[str], None]], Mapping[str, Any]] | None = None
    directory: Path | None = None

    def __post_init__(self) -> None:
        names = [v.name for v in self.variants]
        if len(set(names)) != len(names):
            raise TritonExtError(f"bench spec {self.name}: variant names must be unique, found {names}")
        for v in self.variants:
            if v.role == "pass" and not any(b.role == "baseline" and b.group == v.group for b in self.variants):
                raise TritonExtError(f"bench spec {self.name}: pass variant {v.name} has no baseline in group "
                                     f"{v.group!r}; add Variant(..., role='baseline', group={v.group!r})")
        for t in self.targets:
            for n in (t.variant, t.versus):
                if n not in names:
                    raise TritonExtError(f"bench spec {self.name}: target {t.description!r} names {n!r}; "
                                         f"variants are {names}")
        missing = [d for d in self.dtypes if d not in self.tolerance]
        if missing:
            raise TritonExtError(f"bench spec {self.name}: no tolerance for dtypes {missing}")

    def cases(self, quick: bool = False, check: bool = False) -> list[Case]:
        shapes = self.quick_shapes if quick and self.quick_shapes else self.shapes
        if check and self.check_shapes:
            shapes = (self.quick_shapes or self.shapes[:1]) + self.check_shapes if quick else self.check_shapes
        dtypes = self.quick_dtypes if quick and self.quick_dtypes else self.dtypes
        return [Case(d, dict(s)) for d in dtypes for s in shapes]

    def baseline_of(self, variant: Variant) -> Variant:
        return next(b for b in self.variants if b.role == "baseline" and b.group == variant.group)


# --------------------------------------------------------------------------- #
# Finding specs
# --------------------------------------------------------------------------- #


def load_spec(path: Path | str) -> BenchSpec:
    """Import a ``bench.py`` (by path: :func:`triton_ext.bench.import_file`) and return its ``SPEC``."""
    path = Path(path).resolve()
    if not path.is_file():
        raise TritonExtError(f"{path}: no such bench spec; expected a bench.py defining SPEC", path=path)
    module = import_file(path)
    found = getattr(module, "SPEC", None)
    if not isinstance(found, BenchSpec):
        raise TritonExtError(f"{path}: expected a module-level SPEC = BenchSpec(...), found {type(found).__name__}",
                             path=path)
    if found.directory is None:
        object.__setattr__(found, "directory", path.parent)
    return found


def _spec_paths() -> dict[str, tuple[Path, tuple[str, ...]]]:
    """Extension name -> (its bench.py, its pass names), for extensions that have one."""
    from .._manifest import load_manifest

    manifest = load_manifest()
    root = Path(settings.registry).resolve().parent
    out: dict[str, tuple[Path, tuple[str, ...]]] = {}
    for ext in manifest.extensions:
        path = (root / ext.directory / "bench.py") if not Path(ext.directory).is_absolute() else Path(ext.directory) / "bench.py"
        if path.is_file():
            out[ext.name] = (path, tuple(p.name for p in ext.passes))
    return out


def find_specs(names: Sequence[str]) -> list[BenchSpec]:
    """Specs for NAMEs (pass, extension or spec names, or bench.py paths); none: all of them."""
    known = _spec_paths() if not names or any(not n.endswith(".py") for n in names) else {}
    if not names:
        return [load_spec(p) for p, _ in known.values()]
    specs: list[BenchSpec] = []
    for name in names:
        if name.endswith(".py") or os.sep in name:
            specs.append(load_spec(name))
            continue
        hits = [p for ext, (p, passes) in known.items() if name == ext or name in passes]
        if not hits:
            hits = [p for p, _ in known.values() if load_spec(p).name == name]
        if not hits:
            raise TritonExtError(f"bench: no spec for {name!r}; specs exist for "
                                 f"{', '.join(known) or 'no extension'} (a bench.py beside the pass)")
        specs.extend(load_spec(p) for p in hits)
    return specs


