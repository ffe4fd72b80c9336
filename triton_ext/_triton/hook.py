"""The stages hook: the only code that assigns Triton's ``add_stages_inspection_hook``.

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
put back by :func:`uninstall`. :func:`lend` puts the hook in the slot for a block only (the
transparent mode, between whose decisions the slot stays empty). :func:`install` recognises our own hook wherever it sits (in the
slot, or inside a hook that chained it) and never chains it to itself; a hook that calls back
into ours while we call it gets an empty answer, so no chain can recurse.

Triton itself is imported on first use (:func:`install`, a stage run), never at import: importing
``triton_ext`` must stay cheap and must not import Triton.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import threading
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Protocol, Sequence

from .._errors import TritonExtWarning
from .runner import EnabledPass, records_all_stages, wrap_stage
from .tap import install_tap, runtime_knobs, uninstall_tap

__all__ = ["SelectionView", "SelectionState", "StagesHook", "HookState", "stage_editor", "install", "ensure_installed",
           "uninstall", "installed", "save", "restore", "lend", "permanent"]


# --------------------------------------------------------------------------- #
# What the hook needs of the enabled set (triton_ext._selection provides it)
# --------------------------------------------------------------------------- #


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
#: Lent installs (:func:`lend`): how many blocks hold the hook in the slot, and whether it was put
#: there by a lend (then the last lend out takes it away again; :func:`install` makes it permanent).
_lent = 0
_lent_installed = False
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
    backend, stages, options, language, _capability = args
    # The set this compile's cache key was computed for (see above); later enable/disable calls
    # do not affect this compile.
    selection = getattr(_keyed, "selection", None) or _state.current()
    _keyed.selection = None
    record_all = records_all_stages()  # triton-ext pipeline (issue 19): the stock stages too
    if selection.entries or record_all:
        _wrap_stages(selection, backend.target, stages, options, language, record_all)
    # The transparent mode's stop for a variant (its passes', or a launch option's with none).
    edit = stage_editor.get()
    if edit is not None:
        edit(stages)
    return None


def _wrap_stages(selection: SelectionView, target: Any, stages: dict[str, Any], options: Any, language: Any,
                 record_all: bool) -> None:
    """Put each stage's enabled passes (or, with ``record_all``, its recording) around it."""
    # Gluon kernels start at ttgir, in gluon_to_ttgir: ttir passes never run on them, and neither do
    # ttgir passes placed next to a make_ttgir built-in (their anchor is not in Gluon's pipeline).
    gluon = "ttir" not in stages
    for stage in ("ttir", "ttgir", "llir"):
        if stage not in stages:
            continue
        entries = [
            e.for_target(target.backend).for_compile(options) for e in selection.entries
            if e.spec.stage == stage and e.extension.applies_to(target.backend, target.arch)
            and not (gluon and stage == "ttgir" and e.spec.anchor)
        ]
        if entries or record_all:
            stages[stage] = wrap_stage(stage, stages[stage], tuple(entries), (options, target, language))
    _warn_unplaced_checks(selection, stages, target, gluon)


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
    """Install the hook (and the pipeline tap) for good, chaining any hook already there; the hook
    answers from ``state``, the enabled set that :mod:`triton_ext._selection` owns."""
    global _lent_installed
    with _lock:
        _lent_installed = False  # installed for good: no lend takes it away
        _put(state)


def _put(state: SelectionState) -> None:
    """Put our hook in the slot (chaining the hook there), answering from ``state``; under ``_lock``."""
    global _previous, _installed, _async_mode, _state
    _state = state
    if _async_mode is None:
        try:
            from triton.runtime import _async_compile  # a Triton module: imported at install only

            _async_mode = _async_compile.active_mode
        except (ImportError, AttributeError):  # a Triton without async compiles
            _async_mode = None
    install_tap()
    runtime = runtime_knobs()
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


def key_without_hook(key: str, hook_hash: str) -> str:
    """The JIT's cache key ``key`` as computed with no hook in Triton's slot: Triton appends the
    entry ``("custom_pipeline", <hash>)`` to a launch's specialization only while a hook is
    installed (``JITFunction.run`` in triton 3.9); the rest of the key is the same."""
    return key.replace(f", '(\"custom_pipeline\", {hook_hash})'", "", 1)


def permanent() -> bool:
    """Whether the hook is installed for good (by :func:`install`: ``enable``, ``enabled``, ...),
    not only lent by the transparent mode for a decision."""
    return _installed is not None and not _lent_installed


@contextlib.contextmanager
def lend(state: SelectionState) -> Iterator[None]:
    """Our hook in Triton's slot, answering from ``state``, for the block only, unless it is
    installed for good already.

    The transparent mode (:mod:`triton_ext._auto`) keeps the slot empty between its decisions, so
    that a launch calls no code of triton-ext (Triton calls the hook on every launch while one is
    installed); it lends the hook around the compiles and timings of a decision. Blocks nest and
    overlap across threads (counted); when the last one ends the slot is put back exactly as it was
    (another tool's hook included), unless something else took the slot meanwhile or
    :func:`install` made ours permanent."""
    global _lent, _lent_installed, _previous, _installed
    with _lock:
        if _installed is None:
            _put(state)
            _lent_installed = True
        _lent += 1
    try:
        yield
    finally:
        with _lock:
            _lent -= 1
            if _lent == 0 and _lent_installed:
                runtime = runtime_knobs()
                if runtime.add_stages_inspection_hook is _installed:
                    runtime.add_stages_inspection_hook = _previous
                _previous = None
                _installed = None
                _lent_installed = False
                _combined.clear()


def ensure_installed(state: SelectionState) -> None:
    """:func:`install` unless the hook is installed with ``state`` already (for good, or lent by
    :func:`lend`, which stays a lend): no lock, since the autotune and auto modes call this on
    every launch (``triton_ext._selection.using``)."""
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
        return HookState(runtime_knobs().add_stages_inspection_hook, _installed is not None, _previous)


def restore(state: HookState) -> None:
    """Put the slot and our installation back exactly as :func:`save` found them."""
    global _previous, _installed, _lent, _lent_installed
    with _lock:
        _lent, _lent_installed = 0, False
        if state.installed:
            install_tap()
        else:
            uninstall_tap()
            _combined.clear()
        _previous = state.previous if state.installed else None
        _installed = _hook if state.installed else None
        runtime_knobs().add_stages_inspection_hook = state.slot


def uninstall() -> None:
    """Put back the hook that was there before :func:`install`; remove the tap."""
    global _previous, _installed, _lent_installed
    with _lock:
        _lent_installed = False
        if _installed is None:
            return
        if runtime_knobs().add_stages_inspection_hook is _installed:
            runtime_knobs().add_stages_inspection_hook = _previous
        _previous = None
        _installed = None
        _combined.clear()
        uninstall_tap()


def installed() -> bool:
    """Whether our hook is installed and in Triton's slot."""
    return _installed is not None and runtime_knobs().add_stages_inspection_hook is _installed
