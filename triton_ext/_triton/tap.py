"""The pipeline tap: place plugin passes next to named built-in passes, and override built-ins.

**The pipeline tap.** Backend stage functions (``make_ttir`` and friends) build a pass manager
with calls such as ``passes.ttir.add_loop_unroll(pm)`` and then ``pm.run(mod, label)``.
:func:`install_tap` wraps, once, every ``add_*`` function of Triton's pass modules and
``ir.pass_manager.run``. The wrappers pass straight through unless a :class:`Plan` is active on
the calling thread; the stage runner activates one while an original stage function runs. With a
plan active, ``add_*`` calls are buffered per pass manager; at ``run`` the buffer is replayed with
the plan's plugin passes spliced in before or after their anchor (``occurrence`` counts within
that pass manager), and passes without an anchor appended to the stage's main run (``make_ttir``,
``make_ttgir``/``gluon_to_ttgir``, ``make_llir``). Each plugin pass may be followed by its
``then`` cleanups. The plan records the order of what it added.

**Overriding built-in passes** (issue 19): a registry pass may take a built-in's place
(``replaces: loop_unroll``) or drop built-ins from its stage's pass managers (``skips:
[triton_licm]``); a ``kind: pipeline`` entry only skips. Both act at the tap: a skipped or
replaced built-in is simply not replayed. Names are Triton's binding names without ``add_``
(``loop_unroll``, ``ttgpuir.coalesce``); the MLIR argument spelling (``triton-licm``) is accepted
too. A name the installed Triton does not bind is an error at enable time.
"""

from __future__ import annotations

import contextlib
import difflib
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Protocol, Sequence

from .._model import PassSpec
from .._preflight import installed_triton_version

__all__ = ["libtriton", "runtime_knobs", "Builtin", "Insertion", "Plan", "install_tap", "uninstall_tap", "activate",
           "current_plan", "builtin_names", "resolve_builtin", "canonical_builtin", "check_overrides"]


def libtriton() -> Any:
    """Triton's C++ bindings (``triton._C.libtriton``), imported on first use."""
    from triton._C import libtriton  # on first use only: importing triton_ext must not import Triton

    return libtriton


def runtime_knobs() -> Any:
    """``triton.knobs.runtime`` (the stages hook's slot), imported on first use."""
    from triton import knobs  # on first use only: importing triton_ext must not import Triton

    return knobs.runtime


# --------------------------------------------------------------------------- #
# The pipeline tap
# --------------------------------------------------------------------------- #


MAIN_RUNS = {
    "ttir": ("make_ttir",),
    "ttgir": ("make_ttgir", "gluon_to_ttgir"),
    "llir": ("make_llir",),
}

# registry spelling -> Triton's binding name (without add_)
ALIASES = {"canonicalize": "canonicalizer", "inline": "inliner"}

# Qualified name prefix preference when a short name is ambiguous.
_PREFERENCE = ("common", "ttir", "ttgpuir", "gluon", "convert", "llvmir")


class AddPass(Protocol):
    def __call__(self, pm: Any, *args: Any, **kwargs: Any) -> None: ...


@dataclass(frozen=True)
class Insertion:
    """One plugin pass to place: its spec and the ``flag=value`` arguments."""

    spec: PassSpec
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class Builtin:
    """A built-in pass binding of Triton: its qualified and short name and the unwrapped function."""

    qualname: str  # e.g. "ttir.loop_unroll", "nvidia.ttnvgpuir.fence_insertion"
    short: str  # e.g. "loop_unroll"
    fn: AddPass  # the original, unwrapped binding


# --------------------------------------------------------------------------- #
# Plans
# --------------------------------------------------------------------------- #


class Plan:
    """What one stage run should add, and a record of what it did add."""

    def __init__(self, stage: str, insertions: Sequence[Insertion]) -> None:
        self.stage = stage
        self.insertions = tuple(insertions)
        # A kind: pipeline entry adds no pass; it only skips (issue 19).
        self.pending: list[Insertion] = [i for i in insertions if i.spec.adds_pass]
        self.order: list[str] = []  # qualified names, plugin passes as "plugin.<name>"
        # Overrides (issue 19): (skip name, pass that asks) and what each removed.
        self.skips: list[tuple[str, str]] = [(n, i.spec.name) for i in insertions for n in i.spec.skips]
        self.removed: list[tuple[str, str, str]] = []  # (built-in qualname, "skipped"|"replaced", by pass)
        #: Every pass of every run, in order: (run label, mark, name) with mark "builtin",
        #: "plugin", "cleanup", "skipped" or "replaced" (the last two did not run).
        self.listing: list[tuple[str, str, str]] = []
        self.runs: list[tuple[str, str]] = []  # (label, pm.get_pipeline_str())
        self.failed_run: tuple[str, tuple[Insertion, ...]] | None = None
        self._buffers: dict[int, tuple[Any, list[tuple[Builtin, tuple[Any, ...], dict[str, Any]]]]] = {}
        self._in_pm: dict[int, list[Insertion]] = {}

    def buffer(self, pm: Any, builtin: Builtin, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self._buffers.setdefault(id(pm), (pm, []))[1].append((builtin, args, kwargs))

    @staticmethod
    def _matches(anchor: str, builtin: Builtin) -> bool:
        if "-" in anchor or anchor not in _builtins:
            try:
                anchor = canonical_builtin(anchor)
            except KeyError:
                return False
        anchor = ALIASES.get(anchor, anchor)
        return anchor == builtin.short or anchor == builtin.qualname or builtin.qualname.endswith("." + anchor)

    def flush(self, pm: Any, label: str) -> None:
        """Replay the buffered adds of ``pm`` with plugin passes spliced in."""
        _, entries = self._buffers.pop(id(pm), (pm, []))
        before: dict[int, list[Insertion]] = {}
        after: dict[int, list[Insertion]] = {}
        instead: dict[int, list[Insertion]] = {}
        placed: list[Insertion] = []
        for ins in list(self.pending):
            anchor = ins.spec.anchor
            if anchor is None:
                continue
            hits = [i for i, (b, _, _) in enumerate(entries) if self._matches(anchor, b)]
            if not hits:
                continue
            index = hits[0] if ins.spec.occurrence == "first" else hits[-1]
            side = instead if ins.spec.replaces else after if ins.spec.after else before
            side.setdefault(index, []).append(ins)
            placed.append(ins)
        tail: list[Insertion] = []
        if label in MAIN_RUNS.get(self.stage, ()):
            tail = [ins for ins in self.pending if ins.spec.anchor is None]
            placed.extend(tail)
        for ins in placed:
            self.pending.remove(ins)
        self._label = label
        for i, (builtin, args, kwargs) in enumerate(entries):
            for ins in before.get(i, ()):
                self._add_plugin(pm, ins)
            skipped_by = next((by for name, by in self.skips if self._matches(name, builtin)), None)
            if i in instead:
                by = instead[i][0].spec.name
                self.removed.append((builtin.qualname, "replaced", by))
                self.listing.append((label, "replaced", builtin.qualname))
                for ins in instead[i]:
                    self._add_plugin(pm, ins)
            elif skipped_by is not None:
                self.removed.append((builtin.qualname, "skipped", skipped_by))
                self.listing.append((label, "skipped", builtin.qualname))
            else:
                builtin.fn(pm, *args, **kwargs)
                self.order.append(builtin.qualname)
                self.listing.append((label, "builtin", builtin.qualname))
            for ins in after.get(i, ()):
                self._add_plugin(pm, ins)
        for ins in tail:
            self._add_plugin(pm, ins)
        self._in_pm[id(pm)] = placed
        try:
            self.runs.append((label, pm.get_pipeline_str()))
        except Exception:  # diagnostics only
            self.runs.append((label, ""))

    def _add_plugin(self, pm: Any, ins: Insertion) -> None:
        passes = libtriton().passes

        getattr(passes.plugin, f"add_{ins.spec.name}")(pm, list(ins.args))
        self.order.append(f"plugin.{ins.spec.name}")
        label = getattr(self, "_label", "")
        self.listing.append((label, "plugin", ins.spec.name))
        for cleanup in ins.spec.then:
            builtin = resolve_builtin(cleanup)
            builtin.fn(pm)
            self.order.append(builtin.qualname)
            self.listing.append((label, "cleanup", builtin.qualname))

    def note_failure(self, pm: Any, label: str) -> None:
        if self.failed_run is None:
            self.failed_run = (label, tuple(self._in_pm.get(id(pm), ())))

    def unmatched_skips(self) -> list[tuple[str, str]]:
        """Skips that removed nothing in this stage: (name, pass that asked)."""
        hit = {(name, by) for name, by in self.skips
               if any(by == r_by and self._matches(name, _builtins[q]) for q, kind, r_by in self.removed
                      if kind == "skipped" and q in _builtins)}
        return [s for s in self.skips if s not in hit]

    def placed_names(self) -> list[str]:
        return [name[len("plugin."):] for name in self.order if name.startswith("plugin.")]


_tls = threading.local()


def current_plan() -> Plan | None:
    return getattr(_tls, "plan", None)


@contextlib.contextmanager
def activate(plan: Plan | None) -> Iterator[Plan | None]:
    """Make ``plan`` the active plan of this thread for the block."""
    previous = current_plan()
    _tls.plan = plan
    try:
        yield plan
    finally:
        _tls.plan = previous


# --------------------------------------------------------------------------- #
# The tap
# --------------------------------------------------------------------------- #

_tap_lock = threading.Lock()
_originals: list[tuple[Any, str, Any]] = []  # (owner, attribute, original)
_builtins: dict[str, Builtin] = {}


def _pass_modules() -> list[tuple[str, Any]]:
    lib = libtriton()

    modules: list[tuple[str, Any]] = []
    for name in dir(lib.passes):
        if name.startswith("_") or name == "plugin":
            continue
        modules.append((name, getattr(lib.passes, name)))
    for vendor in ("nvidia", "amd"):
        vendor_mod = getattr(lib, vendor, None)
        vendor_passes = getattr(vendor_mod, "passes", None)
        for name in dir(vendor_passes) if vendor_passes is not None else ():
            if not name.startswith("_"):
                modules.append((f"{vendor}.{name}", getattr(vendor_passes, name)))
    return modules


def _make_wrapper(builtin: Builtin) -> Callable[..., Any]:
    original = builtin.fn

    def add(pm: Any, *args: Any, **kwargs: Any) -> Any:
        plan = current_plan()
        if plan is None:
            return original(pm, *args, **kwargs)
        plan.buffer(pm, builtin, args, kwargs)
        return None

    add.__name__ = getattr(original, "__name__", f"add_{builtin.short}")
    add.__qualname__ = add.__name__
    add.__doc__ = getattr(original, "__doc__", None)
    add.__wrapped__ = original  # type: ignore[attr-defined]
    return add


def install_tap() -> None:
    """Wrap Triton's ``add_*`` bindings and ``pass_manager.run`` (idempotent)."""
    with _tap_lock:
        if _originals:
            return
        ir = libtriton().ir

        for prefix, module in _pass_modules():
            for attr in dir(module):
                # print_ir adds a pass too; buffering it with the others keeps the order.
                if not (attr.startswith("add_") or attr == "print_ir"):
                    continue
                fn = getattr(module, attr)
                if not callable(fn):
                    continue
                short = attr[4:] if attr.startswith("add_") else attr
                builtin = Builtin(f"{prefix}.{short}", short, fn)
                _builtins[builtin.qualname] = builtin
                _originals.append((module, attr, fn))
                setattr(module, attr, _make_wrapper(builtin))
        original_run = ir.pass_manager.run

        def run(pm: Any, mod: Any, label: str, *args: Any) -> Any:
            plan = current_plan()
            if plan is None:
                return original_run(pm, mod, label, *args)
            plan.flush(pm, label)
            try:
                return original_run(pm, mod, label, *args)
            except Exception:
                plan.note_failure(pm, label)
                raise

        run.__doc__ = original_run.__doc__
        _originals.append((ir.pass_manager, "run", original_run))
        ir.pass_manager.run = run


def uninstall_tap() -> None:
    """Put Triton's bindings back."""
    with _tap_lock:
        while _originals:
            owner, attr, original = _originals.pop()
            setattr(owner, attr, original)
        _builtins.clear()


def builtin_names() -> list[str]:
    install_tap()
    return sorted(_builtins)


def resolve_builtin(name: str) -> Builtin:
    """A built-in pass by registry spelling: ``cse``, ``canonicalize``, ``ttir.loop_unroll``."""
    install_tap()
    name = ALIASES.get(name, name)
    if name in _builtins:
        return _builtins[name]
    candidates = [b for b in _builtins.values() if b.short == name or b.qualname.endswith("." + name)]
    if not candidates:
        shorts = sorted({b.short for b in _builtins.values()} | set(ALIASES))
        close = difflib.get_close_matches(name, shorts, n=1)
        raise KeyError(
            f"unknown built-in pass {name!r}" + (f"; did you mean {close[0]!r}?" if close else "")
        )
    candidates.sort(key=lambda b: next((i for i, p in enumerate(_PREFERENCE) if b.qualname.startswith(p + ".")), 99))
    return candidates[0]


# --------------------------------------------------------------------------- #
# Built-in pass names and overrides (issue 19)
# --------------------------------------------------------------------------- #


# MLIR argument prefixes of Triton's passes; the binding names drop them (triton-licm is
# passes.ttir.add_triton_licm, but tritongpu-coalesce is passes.ttgpuir.add_coalesce).
_MLIR_PREFIXES = ("triton_nvidia_gpu_", "tritongpu_", "tritonamdgpu_", "triton_")


def canonical_builtin(name: str) -> str:
    """The spelling of ``name`` that :func:`resolve_builtin` knows; KeyError (with a
    suggestion) when the installed Triton has no such built-in pass."""
    try:
        resolve_builtin(name)
        return name
    except KeyError as first:
        error = first
    snake = name.replace("-", "_")
    module, _, short = snake.rpartition(".")
    candidates = [snake] + [
        (f"{module}." if module else "") + short[len(p):] for p in _MLIR_PREFIXES if short.startswith(p)
    ]
    for candidate in candidates:
        try:
            resolve_builtin(candidate)
            return candidate
        except KeyError:
            continue
    raise error


def check_overrides(spec: PassSpec, where: str) -> None:
    """Resolve every built-in ``spec`` names (anchor, replaces, skips, then); raise KeyError
    naming the field and the registry line."""
    for field, names in (("replaces", [spec.replaces] if spec.replaces else []), ("skips", list(spec.skips))):
        for name in names:
            try:
                canonical_builtin(name)
            except KeyError as exc:
                raise KeyError(f"{field}: {exc.args[0]} in the installed Triton {installed_triton_version()} ({where})") from None
