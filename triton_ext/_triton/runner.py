"""The stage runner: run a stage under a plan of the enabled passes.

**The stage runner** runs a stage under a plan. A failing plugin pass makes the stage run again
without it and warns (passes that shared the failed pass manager run are first tried one by one
beside the others, so only the failing one is dropped); with ``TRITON_EXT_STRICT=1`` it raises
:class:`~triton_ext._errors.PassFailedError` instead. A pass whose anchor never appears is
reported the same way. A check (``role: check``, so ``on_failure: error``) always raises: a
kernel never compiles silently without its check. :func:`record` collects the plans (tests,
``triton_ext.record_pipelines``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import threading
import warnings
from typing import Any, Iterator, Protocol

from .._errors import PassCrashedError, PassFailedError, TritonExtWarning
from .._launch import apply_launch_requests
from .._log import get as get_logger
from .._model import Extension, PassSpec
from .._settings import settings
from . import isolated
from .tap import Insertion, Plan, activate, libtriton

__all__ = ["EnabledPass", "StageFn", "wrap_stage", "reparse", "record", "records_all_stages"]

_logger = get_logger("runner")


class EnabledPass(Protocol):
    """One enabled pass as the runner sees it (:class:`triton_ext._selection.Enabled`)."""

    @property
    def spec(self) -> PassSpec: ...

    @property
    def extension(self) -> Extension: ...

    @property
    def args(self) -> tuple[str, ...]: ...

    def for_target(self, backend: str) -> "EnabledPass": ...

    def for_compile(self, compile_options: Any) -> "EnabledPass": ...


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


def reparse(text: str, context: Any) -> Any:
    """The module ``text`` parsed into ``context`` (a stage's input again, or in a worker)."""
    ir = libtriton().ir

    fd, path = tempfile.mkstemp(suffix=".mlir", prefix="triton-ext-")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        module = ir.parse_mlir_module(path, context)
        module.context = context  # compiler.py sets this attribute; stage functions read it
        return module
    finally:
        os.unlink(path)


def _probe_isolated(stage: str, snapshot: str, metadata: dict[str, Any], compile_info: tuple[Any, ...],
                    active: list[EnabledPass]) -> None:
    """Run the stage on a copy of its input in a worker first (:mod:`.isolated`): raises
    :class:`.isolated.StageCrashed` if a pass crashes or hangs there. Any other outcome (it ran,
    it raised a Python error, the worker could not take it) lets the stage run here as always."""
    options, target, language = compile_info
    try:
        isolated.run_stage(stage, snapshot, metadata, options, target, language, active)
    except isolated.StageNotIsolated as exc:
        _logger.debug("stage %s: the isolated run did not complete (%s); running it here", stage, exc)


def _narrow(stage: str, original: StageFn, snapshot: str, context: Any, metadata: dict[str, Any],
            active: list[EnabledPass], suspects: list[EnabledPass]) -> tuple[EnabledPass, ...]:
    """The suspects that fail on their own. Passes placed at one anchor share a pass manager run,
    so its failure does not say which of them failed: each suspect is run again beside the passes
    that are not suspects, on a fresh parse of the stage's input. Only a failing compile pays for
    this. Where none fails alone (they fail together), every suspect stays a culprit."""
    others = [e for e in active if all(e is not s for s in suspects)]
    failing = []
    for suspect in suspects:
        trial = Plan(stage, [Insertion(e.spec, e.args) for e in [*others, suspect]])
        try:
            with activate(trial):
                original(reparse(snapshot, context), dict(metadata))
        except Exception:
            if trial.failed_run and any(i.spec.name == suspect.spec.name for i in trial.failed_run[1]):
                failing.append(suspect)
    return tuple(failing) or tuple(suspects)


def wrap_stage(stage: str, original: StageFn, entries: tuple[EnabledPass, ...],
               compile_info: tuple[Any, ...] | None = None) -> StageFn:
    """``original`` run under a plan of ``entries``. ``compile_info`` (the compile's options,
    target and language) lets a worker run the stage first when that is wanted (:mod:`.isolated`)."""
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
                if active and compile_info is not None and snapshot is not None and isolated.wanted():
                    _probe_isolated(stage, snapshot, metadata, compile_info, active)
                with activate(plan):
                    result = original(src, metadata)
            except Exception as exc:
                # A crash or hang in the isolated worker (:mod:`.isolated`) is a failure of every
                # pass of the stage, met before this process ran it: ``src`` is untouched.
                crashed = isinstance(exc, isolated.StageCrashed)
                culprits = tuple(active) if crashed else plan.failed_run[1] if plan.failed_run else ()
                if not culprits:
                    raise
                if not crashed and len(culprits) > 1 and snapshot is not None and context is not None:
                    culprits = _narrow(stage, original, snapshot, context, metadata, active,
                                       [by_name[c.spec.name] for c in culprits])
                names = [c.spec.name for c in culprits]
                first = by_name[names[0]]
                which = (f"pass {names[0]}" if len(names) == 1 else "one of the passes " + ", ".join(
                    f"{n} (extension {by_name[n].extension.name})" for n in names))
                if len(names) == 1:
                    which += f" (extension {first.extension.name})"
                if crashed:
                    message = (f"triton-ext: {which} crashed in stage {stage} "
                               f"of {metadata.get('name', 'a kernel')}, in an isolated worker ({exc})")
                else:
                    label = plan.failed_run[0] if plan.failed_run else stage
                    message = f"triton-ext: {which} failed in {label} ({type(exc).__name__}: {exc})"
                error = PassCrashedError if crashed else PassFailedError
                fatal = [n for n in names if by_name[n].spec.on_failure == "error"]
                if fatal:  # a check: compiling without it would hide what it reported
                    raise error(
                        message + f"; pass {fatal[0]} is a check (role: {by_name[fatal[0]].spec.role}, on_failure: "
                        "error), so the kernel is not compiled without it: its diagnostics above say what to fix",
                        extension=by_name[fatal[0]].extension.name,
                        path=by_name[fatal[0]].extension.library_path(),
                        pass_name=fatal[0],
                    ) from exc
                if settings.strict or (crashed and isolated.isolate.get()):  # the mode drops the variant
                    raise error(
                        message + ("; unset TRITON_EXT_STRICT to compile without it, or disable it"
                                   if settings.strict else ""),
                        extension=first.extension.name,
                        path=first.extension.library_path(),
                        pass_name=names[0],
                    ) from exc
                if snapshot is None or context is None:
                    raise
                warnings.warn(message + "; compiling this kernel without it", TritonExtWarning, stacklevel=2)
                _logger.info("%s: dropped %s for this kernel after: %s", stage, ", ".join(names), message)
                active = [e for e in active if e.spec.name not in names]
                if not crashed:  # the failed run may have changed it
                    src = reparse(snapshot, context)
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
