"""The stages hook: the only code that assigns Triton's ``add_stages_inspection_hook``.

Triton calls the hook two ways:

* ``hook()`` on every kernel launch and every ``triton.compile``: it must return
  ``(key, hash)``. We answer from a tuple precomputed when the enabled set
  changes; it covers each enabled pass, its options and position, and the
  sha256 of each library (hashed once, at load). Nothing enabled gives
  ``("", "")``, so Triton's cache keys are those of a stock install.
* ``hook(backend, stages, options, language, capability)`` at the end of
  ``backend.add_stages``: we wrap ``stages["ttir" | "ttgir" | "llir"]`` with a
  function that runs the original under a :class:`~triton_ext._pipeline.Plan`
  built from the enabled set as it was at that moment.

A hook installed before ours is chained (called first, its key joined to
ours) and put back by :func:`uninstall`. A failing plugin pass makes the stage
run again without it and warns; with ``TRITON_EXT_STRICT=1`` it raises
:class:`~triton_ext._errors.PassFailedError` instead.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
import tempfile
import threading
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Protocol, Sequence

from ._errors import PassFailedError, TritonExtWarning, UnknownPassError
from ._manifest import Extension, Manifest, PassSpec, load_manifest
from ._overrides import canonical as canonical_builtin, check as check_overrides
from ._pipeline import Insertion, Plan, activate, install_tap, resolve_builtin, uninstall_tap
from ._settings import settings

__all__ = [
    "Enabled",
    "Selection",
    "enable",
    "disable",
    "enabled",
    "current",
    "install",
    "uninstall",
    "record",
]

KEY_VERSION = "triton_ext-2"


class StagesHook(Protocol):
    """Triton's ``PipelineStagesHook``: key/hash query or stage editing."""

    def __call__(self, *args: Any) -> Any: ...


class StageFn(Protocol):
    def __call__(self, src: Any, metadata: dict[str, Any]) -> Any: ...


@dataclass(frozen=True)
class Enabled:
    """One enabled pass: its spec, extension, arguments and library digest."""

    spec: PassSpec
    extension: Extension
    options: tuple[tuple[str, Any], ...]
    library_sha256: str
    #: The pass-infra library's digest: it parses options and nests passes, so it is part of
    #: what a kernel compiles to, like the plugin's own bytes.
    infra_sha256: str = ""

    @property
    def args(self) -> tuple[str, ...]:
        values = dict(self.options)
        return tuple(o.render(values.get(o.name, o.default)) for o in self.spec.options)

    def describe(self) -> dict[str, Any]:
        s = self.spec
        return {
            "extension": self.extension.name,
            "pass": s.name,
            "stage": s.stage,
            "after": s.after,
            "before": s.before,
            "occurrence": s.occurrence,
            "then": list(s.then),
            "replaces": s.replaces,
            "skips": list(s.skips),
            "adds_pass": s.adds_pass,
            "args": list(self.args),
            "targets": [[t.backend, t.min_arch, t.max_arch, list(t.archs)] for t in self.extension.targets],
            "library_sha256": self.library_sha256,
            "infra_sha256": self.infra_sha256,
        }


@dataclass(frozen=True)
class Selection:
    """An immutable enabled set with its precomputed ``(key, hash)``."""

    entries: tuple[Enabled, ...] = ()
    key: str = ""
    hash: str = ""
    key_and_hash: tuple[str, str] = ("", "")

    @classmethod
    def of(cls, entries: Sequence[Enabled]) -> Selection:
        entries = tuple(entries)
        if not entries:
            return cls()
        text = json.dumps([KEY_VERSION] + [e.describe() for e in entries], sort_keys=True)
        digest = hashlib.sha256(text.encode()).hexdigest()
        key = f"{KEY_VERSION}-{digest}"
        return cls(entries, key, digest, (key, digest))

    def names(self) -> tuple[str, ...]:
        return tuple(e.spec.name for e in self.entries)

    def without(self, names: Sequence[str]) -> Selection:
        return Selection.of([e for e in self.entries if e.spec.name not in names])

    def with_(self, new: Sequence[Enabled]) -> Selection:
        replaced = {e.spec.name for e in new}
        return Selection.of([e for e in self.entries if e.spec.name not in replaced] + list(new))


# --------------------------------------------------------------------------- #
# The enabled set
# --------------------------------------------------------------------------- #

_lock = threading.RLock()
_global = Selection()
_scoped: contextvars.ContextVar[Selection | None] = contextvars.ContextVar("triton_ext_selection", default=None)


def current() -> Selection:
    """The enabled set seen by this thread (a scoped ``enabled()`` block wins)."""
    scoped = _scoped.get()
    return scoped if scoped is not None else _global


def _build(names: Sequence[str], options: Mapping[str, Any] | None, manifest: Manifest | None = None) -> list[Enabled]:
    """Resolve names, check options, load libraries; return the new entries."""
    from ._loader import load_extension, loaded_library

    manifest = manifest or load_manifest()
    specs: list[PassSpec] = []
    for name in names:
        if name == "default":
            specs.extend(p for p in manifest.passes if p.enabled_by_default)
        elif (ext := _passless(manifest, name)) is not None:
            # A dialect or language extension without passes: enabling it is loading it (its
            # dialects and builder ops stay registered; Triton cannot unload a library).
            load_extension(ext)
        else:
            specs.extend(manifest.resolve(name))
    options = dict(options or {})
    for option in options:
        if not any(option in {o.name for o in s.options} for s in specs):
            owners = ", ".join(s.name for s in specs) or "nothing"
            declared = sorted({o.name for s in specs for o in s.options})
            raise UnknownPassError(
                f"option {option!r} is declared by none of {owners}; expected one of {declared or 'none'}"
                + (f"; did you mean {_close(option, declared)!r}?" if _close(option, declared) else ""),
                extension=specs[0].extension if specs else None,
            )
    out: list[Enabled] = []
    for spec in specs:
        ext = manifest.extension_of(spec)
        for cleanup in spec.then + ((spec.anchor,) if spec.anchor else ()):
            try:
                canonical_builtin(cleanup)
            except KeyError as exc:
                raise UnknownPassError(
                    f"pass {spec.name} ({ext.source}:{spec.line}) names {exc.args[0]}; fix registry.yaml",
                    extension=ext.name,
                    path=ext.source,
                ) from None
        try:  # replaces/skips (issue 19)
            check_overrides(spec, f"{ext.source}:{spec.line}")
        except KeyError as exc:
            raise UnknownPassError(
                f"pass {spec.name} ({ext.source}:{spec.line}) {exc.args[0]}; fix registry.yaml",
                extension=ext.name,
                path=ext.source,
            ) from None
        values: list[tuple[str, Any]] = []
        for option_name, value in options.items():
            declared = {o.name: o for o in spec.options}
            if option_name in declared:
                try:
                    values.append((option_name, declared[option_name].coerce(value)))
                except TypeError as exc:
                    raise UnknownPassError(f"pass {spec.name}: {exc}", extension=ext.name) from None
        if not spec.adds_pass:  # a kind: pipeline entry: nothing to load (issue 19)
            out.append(Enabled(spec, ext, tuple(sorted(values)), ""))
            continue
        report = load_extension(ext)
        record = loaded_library(report.path)
        infra = record.infra_sha256 if record is not None else ""
        out.append(Enabled(spec, ext, tuple(sorted(values)), report.sha256, infra))
    return out


def _passless(manifest: Manifest, name: str) -> Extension | None:
    """The extension called ``name`` when it declares no passes (a pass name wins)."""
    from ._errors import TritonExtError

    if any(p.name == name for p in manifest.passes):
        return None
    try:
        ext = manifest.extension(name)
    except TritonExtError:
        return None
    return ext if not ext.passes else None


def _close(name: str, known: Sequence[str]) -> str | None:
    import difflib

    hits = difflib.get_close_matches(name, list(known), n=1)
    return hits[0] if hits else None


def enable(*names: str, options: Mapping[str, Any] | None = None) -> Selection:
    """Enable passes (or every pass of an extension) for all threads; install the hook."""
    global _global
    install()
    entries = _build(names, options)
    with _lock:
        _global = _global.with_(entries)
        return _global


def disable(*names: str) -> Selection:
    """Disable passes (or extensions) enabled with :func:`enable`; no names: all."""
    global _global
    with _lock:
        if not names:
            _global = Selection()
            return _global
        manifest = load_manifest()
        drop = [s.name for n in names if _passless(manifest, n) is None for s in manifest.resolve(n)]
        _global = _global.without(drop)
        return _global


@contextlib.contextmanager
def enabled(*names: str, **options: Any) -> Iterator[Selection]:
    """Enable passes for this thread (context) until the block ends.

    Keyword arguments are options; ``max_splits=2`` means the flag ``max-splits``.
    """
    install()
    spelled = {k.replace("_", "-"): v for k, v in options.items()}
    selection = current().with_(_build(names, spelled))
    token = _scoped.set(selection)
    try:
        yield selection
    finally:
        _scoped.reset(token)


# triton-ext autotune hook-in (issue 19): triton_ext.autotune runs each config under its own set.
@contextlib.contextmanager
def using(selection: Selection) -> Iterator[Selection]:
    """Make exactly ``selection`` this thread's (context's) enabled set until the block ends."""
    if _installed is None:  # runs per launch in the autotune and auto modes: skip the lock
        install()
    token = _scoped.set(selection)
    try:
        yield selection
    finally:
        _scoped.reset(token)


# --------------------------------------------------------------------------- #
# The hook
# --------------------------------------------------------------------------- #

_previous: StagesHook | None = None
_installed: StagesHook | None = None
#: Triton's ``AsyncCompileMode`` context variable (``triton.runtime._async_compile.active_mode``),
#: looked up once at install; None in a Triton without async compiles.
_async_mode: contextvars.ContextVar[Any] | None = None
_combined: dict[tuple[str, str, str], tuple[str, str]] = {}
_recording = threading.local()
_keyed = threading.local()


def _key_and_hash() -> tuple[str, str]:
    ours = current()
    previous = _previous
    if previous is None:
        return (ours.key, ours.hash)
    prev_key, prev_hash = previous()
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
        selection = _scoped.get() or _global
        _keyed.selection = selection
        if _async_mode is not None and (mode := _async_mode.get()) is not None:
            _carry_selection_into(mode)
        if _previous is None:
            return selection.key_and_hash
        return _key_and_hash()
    if _previous is not None:
        _previous(*args, **kwargs)
    backend, stages, _options, _language, _capability = args
    # The set this compile's cache key was computed for (see above); later enable/disable calls
    # do not affect this compile.
    selection = getattr(_keyed, "selection", None) or current()
    _keyed.selection = None
    record_all = getattr(_recording, "all_stages", False)  # triton-ext pipeline (issue 19)
    if not selection.entries and not record_all:
        return None
    target = backend.target
    for stage in ("ttir", "ttgir", "llir"):
        if stage not in stages:
            continue  # e.g. Gluon kernels start at ttgir
        entries = [
            e for e in selection.entries
            if e.spec.stage == stage and e.extension.applies_to(target.backend, target.arch)
        ]
        if entries or record_all:
            stages[stage] = _wrap_stage(stage, stages[stage], tuple(entries))
    return None


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

    def submit_under_selection(key: Any, compile_fn: Callable[[], Any], *rest: Any) -> Any:
        selection = current()

        def compile_with_selection() -> Any:
            token = _scoped.set(selection)
            try:
                return compile_fn()
            finally:
                _scoped.reset(token)

        keyed = (key, selection.hash) if selection.entries else key
        return submit(keyed, compile_with_selection, *rest)

    mode.submit = submit_under_selection
    mode._triton_ext_carries_selection = True


def install() -> None:
    """Install the hook (and the pipeline tap), chaining any hook already there."""
    global _previous, _installed, _async_mode
    from triton import knobs

    with _lock:
        if _async_mode is None:
            try:
                from triton.runtime import _async_compile

                _async_mode = _async_compile.active_mode
            except (ImportError, AttributeError):  # a Triton without async compiles
                _async_mode = None
        install_tap()
        current_hook = knobs.runtime.add_stages_inspection_hook
        if _installed is not None and current_hook is _installed:
            return
        _previous = current_hook
        _installed = _hook
        knobs.runtime.add_stages_inspection_hook = _hook


def uninstall() -> None:
    """Put back the hook that was there before :func:`install`; remove the tap."""
    global _previous, _installed
    from triton import knobs

    with _lock:
        if _installed is None:
            return
        if knobs.runtime.add_stages_inspection_hook is _installed:
            knobs.runtime.add_stages_inspection_hook = _previous
        _previous = None
        _installed = None
        _combined.clear()
        uninstall_tap()


def installed() -> bool:
    from triton import knobs

    return _installed is not None and knobs.runtime.add_stages_inspection_hook is _installed


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


# --------------------------------------------------------------------------- #
# Running a stage under a plan
# --------------------------------------------------------------------------- #


def _warn_or_raise(message: str, entry: Enabled) -> None:
    if settings.strict:
        raise PassFailedError(
            message, extension=entry.extension.name, path=entry.extension.library_path(), pass_name=entry.spec.name
        )
    warnings.warn(message, TritonExtWarning, stacklevel=4)


def _reparse(text: str, context: Any) -> Any:
    from triton._C.libtriton import ir

    fd, path = tempfile.mkstemp(suffix=".mlir", prefix="triton-ext-")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        module = ir.parse_mlir_module(path, context)
        module.context = context  # compiler.py sets this attribute; stage functions read it
        return module
    finally:
        os.unlink(path)


#: Launch options a pass may ask for by marking the module ``triton_ext.<field> = 1 : i32``
#: (e.g. nvidia_auto_pdl, whose kernels must be launched with programmatic dependent launch).
#: The request goes into the compile metadata, which Triton caches with the kernel, so the
#: launch setting always travels with the IR that needs it.
LAUNCH_FIELDS = ("launch_pdl", "launch_cooperative_grid")


def _apply_launch_requests(module: Any, metadata: dict[str, Any]) -> None:
    get = getattr(module, "get_int_attr", None)
    if get is None:
        return  # a stage that returned text (llir) carries no marks
    for field in LAUNCH_FIELDS:
        if get(f"triton_ext.{field}") == 1:
            metadata[field] = True


def _wrap_stage(stage: str, original: StageFn, entries: tuple[Enabled, ...]) -> StageFn:
    def run_stage(src: Any, metadata: dict[str, Any]) -> Any:
        active = list(entries)
        snapshot = src.str() if hasattr(src, "str") else None
        context = getattr(src, "context", None)
        while True:
            by_name = {e.spec.name: e for e in active}
            plan = Plan(stage, [Insertion(e.spec, e.args) for e in active])
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
            _apply_launch_requests(result, metadata)
            return result

    run_stage.__name__ = f"triton_ext_{stage}"
    run_stage.__wrapped__ = original  # type: ignore[attr-defined]
    return run_stage
