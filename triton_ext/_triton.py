"""The one module that touches Triton's compiler: the pipeline tap, the stage runner and the
stages hook, in that order (each part uses only those before it).

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

**The stage runner** runs a stage under a plan. A failing plugin pass makes the stage run again
without it and warns; with ``TRITON_EXT_STRICT=1`` it raises
:class:`~triton_ext._errors.PassFailedError` instead. A pass whose anchor never appears is
reported the same way. A check (``role: check``, so ``on_failure: error``) always raises: a
kernel never compiles silently without its check. :func:`record` collects the plans (tests,
``triton_ext.record_pipelines``).

**The stages hook** is the only code that assigns Triton's ``add_stages_inspection_hook``.
Triton calls it two ways:

* ``hook()`` on every kernel launch and every ``triton.compile``: it must return
  ``(key, hash)``. We answer from the tuple the selection (:mod:`triton_ext._selection`)
  precomputed when the enabled set changed; it covers each enabled pass, its options and
  position, and the sha256 of each library (hashed once, at load). Nothing enabled gives
  ``("", "")``, so Triton's cache keys are those of a stock install.
* ``hook(backend, stages, options, language, capability)`` at the end of
  ``backend.add_stages``: we wrap ``stages["ttir" | "ttgir" | "llir"]`` with the stage runner
  for the enabled set as it was when the key was computed.

The hook receives the enabled set's state at :func:`install` (this module imports nothing of the
selection). A hook installed before ours is chained (called first, its key joined to ours) and
put back by :func:`uninstall`. :func:`install` recognises our own hook wherever it sits (in the
slot, or inside a hook that chained it) and never chains it to itself; a hook that calls back
into ours while we call it gets an empty answer, so no chain can recurse.

Triton itself is imported on first use (:func:`install`, a stage run), never at import: importing
``triton_ext`` must stay cheap and must not import Triton.
"""

from __future__ import annotations

import contextlib
import contextvars
import difflib
import hashlib
import logging
import os
import tempfile
import threading
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Protocol, Sequence

from ._errors import PassFailedError, TritonExtWarning
from ._launch import apply_launch_requests
from ._log import get as get_logger
from ._model import Extension, PassSpec
from ._preflight import installed_triton_version
from ._settings import settings

__all__ = [
    # what the tap and the runner need of the selection
    "EnabledPass", "SelectionView", "SelectionState",
    # built-in passes and overrides
    "builtin_names", "resolve_builtin", "canonical_builtin", "check_overrides",
    # the pipeline tap
    "Builtin", "Insertion", "Plan", "install_tap", "uninstall_tap", "activate", "current_plan",
    # the stage runner
    "StageFn", "wrap_stage", "record", "records_all_stages",
    # the stages hook
    "StagesHook", "HookState", "stage_editor", "install", "ensure_installed", "uninstall", "installed", "save", "restore",
]

_logger = get_logger("runner")


# --------------------------------------------------------------------------- #
# What this module needs of the enabled set (triton_ext._selection provides it)
# --------------------------------------------------------------------------- #


class EnabledPass(Protocol):
    """One enabled pass as the runner sees it (:class:`triton_ext._selection.Enabled`)."""

    @property
    def spec(self) -> PassSpec: ...

    @property
    def extension(self) -> Extension: ...

    @property
    def args(self) -> tuple[str, ...]: ...


class SelectionView(Protocol):
    """An immutable enabled set with its precomputed cache key (:class:`triton_ext._selection.Selection`)."""

    @property
    def entries(self) -> Sequence[EnabledPass]: ...

    @property
    def key(self) -> str: ...

    @property
    def hash(self) -> str: ...

    @property
    def key_and_hash(self) -> tuple[str, str]: ...


class SelectionState(Protocol):
    """The enabled set's state, owned by :mod:`triton_ext._selection` and handed to :func:`install`:
    the process-wide set and the context-scoped one (``triton_ext.enabled`` blocks)."""

    scoped: contextvars.ContextVar[Any]

    @property
    def process(self) -> SelectionView: ...

    def current(self) -> SelectionView: ...


class _NothingEnabled:
    """The state before :func:`install` receives the real one: nothing enabled anywhere."""

    @dataclass(frozen=True)
    class _Empty:
        entries: tuple[EnabledPass, ...] = ()
        key: str = ""
        hash: str = ""
        key_and_hash: tuple[str, str] = ("", "")

    def __init__(self) -> None:
        self.scoped: contextvars.ContextVar[Any] = contextvars.ContextVar("triton_ext_no_selection", default=None)
        self.process = self._Empty()

    def current(self) -> SelectionView:
        return self.process


_NOTHING_ENABLED = _NothingEnabled()


def _libtriton() -> Any:
    from triton._C import libtriton  # on first use only: importing triton_ext must not import Triton

    return libtriton


def _runtime_knobs() -> Any:
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
        passes = _libtriton().passes

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
    libtriton = _libtriton()

    modules: list[tuple[str, Any]] = []
    for name in dir(libtriton.passes):
        if name.startswith("_") or name == "plugin":
            continue
        modules.append((name, getattr(libtriton.passes, name)))
    for vendor in ("nvidia", "amd"):
        vendor_mod = getattr(libtriton, vendor, None)
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
        ir = _libtriton().ir

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


# --------------------------------------------------------------------------- #
# The stage runner
# --------------------------------------------------------------------------- #


_recording = threading.local()


class StageFn(Protocol):
    def __call__(self, src: Any, metadata: dict[str, Any]) -> Any: ...


@contextlib.contextmanager
def record(all_stages: bool = False) -> Iterator[list[Plan]]:
    """Collect the plans of stages run on this thread inside the block (tests, CLI).

    ``all_stages`` (``triton-ext pipeline``, issue 19) runs every stage under a plan, also
    stages and compiles without enabled passes, so the stock pipeline is recorded too.
    """
    plans: list[Plan] = []
    previous = getattr(_recording, "plans", None)
    previous_all = getattr(_recording, "all_stages", False)
    _recording.plans = plans
    _recording.all_stages = all_stages
    try:
        yield plans
    finally:
        _recording.plans = previous
        _recording.all_stages = previous_all


def records_all_stages() -> bool:
    """True inside ``record(all_stages=True)`` on this thread (the hook wraps every stage)."""
    return getattr(_recording, "all_stages", False)


def _warn_or_raise(message: str, entry: EnabledPass) -> None:
    if entry.spec.on_failure == "error":  # a check: the kernel must not compile without it
        raise PassFailedError(
            message + f"; pass {entry.spec.name} is a check (role: {entry.spec.role}, on_failure: error), so the "
            "kernel is not compiled without it",
            extension=entry.extension.name, path=entry.extension.library_path(), pass_name=entry.spec.name)
    if settings.strict:
        raise PassFailedError(
            message, extension=entry.extension.name, path=entry.extension.library_path(), pass_name=entry.spec.name
        )
    warnings.warn(message, TritonExtWarning, stacklevel=4)


def _reparse(text: str, context: Any) -> Any:
    ir = _libtriton().ir

    fd, path = tempfile.mkstemp(suffix=".mlir", prefix="triton-ext-")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        module = ir.parse_mlir_module(path, context)
        module.context = context  # compiler.py sets this attribute; stage functions read it
        return module
    finally:
        os.unlink(path)


def wrap_stage(stage: str, original: StageFn, entries: tuple[EnabledPass, ...]) -> StageFn:
    def run_stage(src: Any, metadata: dict[str, Any]) -> Any:
        active = list(entries)
        snapshot = src.str() if hasattr(src, "str") else None
        context = getattr(src, "context", None)
        while True:
            by_name = {e.spec.name: e for e in active}
            plan = Plan(stage, [Insertion(e.spec, e.args) for e in active])
            if active and _logger.isEnabledFor(logging.DEBUG):
                kernel = metadata.get("name")
                _logger.debug("stage %s%s: %s", stage, f" of {kernel}" if kernel else "",
                              "; ".join(f"{e.spec.name} at {e.spec.position} ({' '.join(e.args) or 'no options'})"
                                        for e in active))
            plans = getattr(_recording, "plans", None)
            if plans is not None:
                plans.append(plan)
            try:
                with activate(plan):
                    result = original(src, metadata)
            except Exception as exc:
                culprits = plan.failed_run[1] if plan.failed_run else ()
                if not culprits:
                    raise
                names = [c.spec.name for c in culprits]
                first = by_name[names[0]]
                label = plan.failed_run[0] if plan.failed_run else stage
                which = f"pass {names[0]}" if len(names) == 1 else f"one of the passes {', '.join(names)}"
                message = (
                    f"triton-ext: {which} (extension {first.extension.name}) failed in {label} "
                    f"({type(exc).__name__}: {exc})"
                )
                fatal = [n for n in names if by_name[n].spec.on_failure == "error"]
                if fatal:  # a check: compiling without it would hide what it reported
                    raise PassFailedError(
                        message + f"; pass {fatal[0]} is a check (role: {by_name[fatal[0]].spec.role}, on_failure: "
                        "error), so the kernel is not compiled without it: its diagnostics above say what to fix",
                        extension=by_name[fatal[0]].extension.name,
                        path=by_name[fatal[0]].extension.library_path(),
                        pass_name=fatal[0],
                    ) from exc
                if settings.strict:
                    raise PassFailedError(
                        message + "; unset TRITON_EXT_STRICT to compile without it, or disable it",
                        extension=first.extension.name,
                        path=first.extension.library_path(),
                        pass_name=names[0],
                    ) from exc
                if snapshot is None or context is None:
                    raise
                warnings.warn(message + "; compiling this kernel without it", TritonExtWarning, stacklevel=2)
                _logger.info("%s: dropped %s for this kernel after: %s", stage, ", ".join(names), message)
                active = [e for e in active if e.spec.name not in names]
                src = _reparse(snapshot, context)
                if not active:
                    return original(src, metadata)
                continue
            for ins in plan.pending:
                entry = by_name[ins.spec.name]
                where = (
                    f"anchor {ins.spec.anchor!r} ({'after' if ins.spec.after else 'before' if ins.spec.before else 'replaces'})"
                    if ins.spec.anchor
                    else f"the main pass manager run of stage {stage}"
                )
                _warn_or_raise(
                    f"triton-ext: pass {ins.spec.name} (extension {entry.extension.name}) was not run: "
                    f"{where} never appeared in stage {stage} ({entry.extension.source}:{ins.spec.line})",
                    entry,
                )
            for name, by in plan.unmatched_skips():  # issue 19: a skip that removed nothing
                entry = by_name[by]
                _warn_or_raise(
                    f"triton-ext: pass {by} (extension {entry.extension.name}) skips {name!r}, but stage {stage} "
                    f"never added it ({entry.extension.source}:{entry.spec.line})",
                    entry,
                )
            apply_launch_requests(result, metadata)
            return result

    run_stage.__name__ = f"triton_ext_{stage}"
    run_stage.__wrapped__ = original  # type: ignore[attr-defined]
    return run_stage


# --------------------------------------------------------------------------- #
# The stages hook
# --------------------------------------------------------------------------- #


class StagesHook(Protocol):
    """Triton's ``PipelineStagesHook``: key/hash query or stage editing."""

    def __call__(self, *args: Any) -> Any: ...


_previous: StagesHook | None = None
_installed: StagesHook | None = None
#: Triton's ``AsyncCompileMode`` context variable (``triton.runtime._async_compile.active_mode``),
#: looked up once at install; None in a Triton without async compiles.
_async_mode: contextvars.ContextVar[Any] | None = None
_combined: dict[tuple[str, str, str], tuple[str, str]] = {}
_keyed = threading.local()
_lock = threading.RLock()
#: The enabled set the hook answers from, received at :func:`install`.
_state: SelectionState = _NOTHING_ENABLED
#: Called with the stages dict after the enabled passes are placed, in the compiling context
#: (the transparent mode stops a variant's compile before ptxas when its IR is the stock one).
stage_editor: contextvars.ContextVar[Callable[[dict[str, Any]], None] | None] = contextvars.ContextVar(
    "triton_ext_stage_editor", default=None)


def _key_and_hash() -> tuple[str, str]:
    ours = _state.current()
    previous = _previous
    if previous is None:
        return (ours.key, ours.hash)
    if getattr(_keyed, "chaining", False):
        # A hook we chain has called back into ours (it chained ours first): answer as an empty
        # link, so the outermost call adds our key once and the chain ends.
        return ("", "")
    _keyed.chaining = True
    try:
        prev_key, prev_hash = previous()
    finally:
        _keyed.chaining = False
    if not ours.entries:
        return (prev_key, prev_hash)
    memo = (str(prev_key), str(prev_hash), ours.hash)
    hit = _combined.get(memo)
    if hit is None:
        joined = hashlib.sha256(f"{prev_hash}|{ours.hash}".encode()).hexdigest()
        hit = (f"{prev_key}|{ours.key}", joined)
        if len(_combined) > 64:
            _combined.clear()
        _combined[memo] = hit
    return hit


def _hook(*args: Any, **kwargs: Any) -> Any:
    if not args and not kwargs:
        # Every kernel launch comes through here: answer from the selection's prebuilt tuple
        # with as few calls as possible (measured in benchmarks/loader_launch_overhead.py).
        # Remember the set the key was computed for: triton.compile asks for the key before
        # add_stages runs, and a concurrent enable() in between must not put a kernel compiled
        # with other passes under this key.
        selection = _state.scoped.get() or _state.process
        _keyed.selection = selection
        if _async_mode is not None and (mode := _async_mode.get()) is not None:
            _carry_selection_into(mode)
        if _previous is None:
            return selection.key_and_hash
        return _key_and_hash()
    if _previous is not None:
        if getattr(_keyed, "chaining", False):
            return None  # called back through a hook we chain: the outer call edits the stages
        _keyed.chaining = True
        try:
            _previous(*args, **kwargs)
        finally:
            _keyed.chaining = False
    backend, stages, _options, _language, _capability = args
    # The set this compile's cache key was computed for (see above); later enable/disable calls
    # do not affect this compile.
    selection = getattr(_keyed, "selection", None) or _state.current()
    _keyed.selection = None
    record_all = records_all_stages()  # triton-ext pipeline (issue 19): the stock stages too
    if not selection.entries and not record_all:
        return None
    target = backend.target
    # Gluon kernels start at ttgir, in gluon_to_ttgir: ttir passes never run on them, and neither do
    # ttgir passes placed next to a make_ttgir built-in (their anchor is not in Gluon's pipeline).
    gluon = "ttir" not in stages
    for stage in ("ttir", "ttgir", "llir"):
        if stage not in stages:
            continue
        entries = [
            e for e in selection.entries
            if e.spec.stage == stage and e.extension.applies_to(target.backend, target.arch)
            and not (gluon and stage == "ttgir" and e.spec.anchor)
        ]
        if entries or record_all:
            stages[stage] = wrap_stage(stage, stages[stage], tuple(entries))
    _warn_unplaced_checks(selection, stages, target, gluon)
    edit = stage_editor.get()
    if edit is not None:
        edit(stages)
    return None


def _warn_unplaced_checks(selection: SelectionView, stages: dict[str, Any], target: Any, gluon: bool) -> None:
    """A check (``role: check``) never leaves a kernel unchecked silently: say when one cannot run
    on this compile at all (its stage or anchor absent, as for a Gluon kernel, or a target outside
    its extension's). Other passes are simply not applicable there."""
    for e in selection.entries:
        if e.spec.role != "check":
            continue
        if not e.extension.applies_to(target.backend, target.arch):
            why = f"target {target.backend}:{target.arch} is outside the targets of extension {e.extension.name}"
        elif e.spec.stage not in stages:
            why = f"this compile has no {e.spec.stage} stage" + (" (a Gluon kernel starts at ttgir)" if gluon else "")
        elif gluon and e.spec.stage == "ttgir" and e.spec.anchor:
            why = f"its anchor {e.spec.anchor!r} is not in a Gluon kernel's pipeline"
        else:
            continue
        warnings.warn(f"triton-ext: check {e.spec.name} (extension {e.extension.name}) does not run on this kernel: "
                      f"{why}; it compiles without the check", TritonExtWarning, stacklevel=3)


def _carry_selection_into(mode: Any) -> None:
    """Make an ``AsyncCompileMode`` compile under the selection of the thread that submits.

    Under ``AsyncCompileMode`` the JIT computes the kernel's in-memory key on the launching
    thread (through this hook, so with that thread's ``enabled()`` set) but runs
    ``compiler.compile`` on an executor thread, where the scoped set is not visible: the kernel
    would compile without the passes and be cached under the key that names them. Wrapping the
    mode's ``submit`` snapshots the launching thread's selection and installs it around the
    compile on the worker, so the worker's key and stages see the same set. The future's
    de-duplication key gets the selection's hash too: Triton keys it on source and options only,
    so two selections of one kernel would otherwise share one compile.
    """
    if getattr(mode, "_triton_ext_carries_selection", False):
        return
    submit = mode.submit

    state = _state

    def submit_under_selection(key: Any, compile_fn: Callable[[], Any], *rest: Any) -> Any:
        selection = state.current()

        def compile_with_selection() -> Any:
            token = state.scoped.set(selection)
            try:
                return compile_fn()
            finally:
                state.scoped.reset(token)

        keyed = (key, selection.hash) if selection.entries else key
        return submit(keyed, compile_with_selection, *rest)

    mode.submit = submit_under_selection
    mode._triton_ext_carries_selection = True


def install(state: SelectionState) -> None:
    """Install the hook (and the pipeline tap), chaining any hook already there; the hook answers
    from ``state``, the enabled set that :mod:`triton_ext._selection` owns."""
    global _previous, _installed, _async_mode, _state
    with _lock:
        _state = state
        if _async_mode is None:
            try:
                from triton.runtime import _async_compile  # a Triton module: imported at install only

                _async_mode = _async_compile.active_mode
            except (ImportError, AttributeError):  # a Triton without async compiles
                _async_mode = None
        install_tap()
        runtime = _runtime_knobs()
        current_hook = runtime.add_stages_inspection_hook
        if current_hook is not None and _reaches_ours(current_hook):
            # Ours is in the slot already, or inside the hook there (one that chained ours, or
            # ours put back by code that saved it while we were uninstalled): adopt it as it is.
            # Chaining it again would make the hook call itself.
            if _installed is None:
                _previous = None if current_hook is _hook else _previous
                _installed = _hook
            return
        _previous = current_hook
        _installed = _hook
        runtime.add_stages_inspection_hook = _hook


def ensure_installed(state: SelectionState) -> None:
    """:func:`install` unless the hook is installed with ``state`` already: no lock, since the
    autotune and auto modes call this on every launch (``triton_ext._selection.using``)."""
    if _installed is None or _state is not state:
        install(state)


def _reaches_ours(hook: Any, limit: int = 64) -> bool:
    """Whether ``hook`` is our hook or leads to it: through ``__wrapped__``, a bound method's
    object, a ``functools.partial``, closure cells, an object's attributes, or (one level) the
    globals of the function (a module-level hook that chains through a global). Bounded: at
    most ``limit`` objects are looked at, so a hostile or cyclic structure costs little."""
    seen: set[int] = set()
    stack: list[Any] = [hook]
    while stack and len(seen) < limit:
        obj = stack.pop()
        if obj is _hook:
            return True
        if id(obj) in seen or obj is None:
            continue
        seen.add(id(obj))
        stack.extend(getattr(obj, name, None) for name in ("__wrapped__", "__self__", "func", "__func__"))
        cells = getattr(obj, "__closure__", None) or ()
        for cell in cells:
            try:
                stack.append(cell.cell_contents)
            except ValueError:  # an empty cell
                pass
        globals_ = getattr(obj, "__globals__", None)
        if isinstance(globals_, dict) and globals_ is not globals() and any(v is _hook for v in globals_.values()):
            return True
        attrs = getattr(obj, "__dict__", None)
        if isinstance(attrs, dict) and not isinstance(obj, type) and type(obj).__name__ != "module":
            stack.extend(v for v in attrs.values() if callable(v))
    return False


@dataclass(frozen=True)
class HookState:
    """What :func:`save` records: Triton's hook slot and whether (and over what) ours is installed."""

    slot: StagesHook | None
    installed: bool
    previous: StagesHook | None


def save() -> HookState:
    """The hook slot and our installation, for :func:`restore` (the test fixtures use it)."""
    with _lock:
        return HookState(_runtime_knobs().add_stages_inspection_hook, _installed is not None, _previous)


def restore(state: HookState) -> None:
    """Put the slot and our installation back exactly as :func:`save` found them."""
    global _previous, _installed
    with _lock:
        if state.installed:
            install_tap()
        else:
            uninstall_tap()
            _combined.clear()
        _previous = state.previous if state.installed else None
        _installed = _hook if state.installed else None
        _runtime_knobs().add_stages_inspection_hook = state.slot


def uninstall() -> None:
    """Put back the hook that was there before :func:`install`; remove the tap."""
    global _previous, _installed
    with _lock:
        if _installed is None:
            return
        if _runtime_knobs().add_stages_inspection_hook is _installed:
            _runtime_knobs().add_stages_inspection_hook = _previous
        _previous = None
        _installed = None
        _combined.clear()
        uninstall_tap()


def installed() -> bool:
    """Whether our hook is installed and in Triton's slot."""
    return _installed is not None and _runtime_knobs().add_stages_inspection_hook is _installed
