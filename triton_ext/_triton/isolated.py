"""Isolated stages: before a stage with plugin passes runs in this process, a worker process runs
it on a copy of its input, so a pass that ends the process (``exit``) or never returns costs the
worker, not the user's process.

A plugin's code runs inside Triton's compile. A Python exception from a pass is caught and the
pass dropped (:mod:`.runner`); a signal in a pass (a segmentation fault, ``abort``, LLVM's fatal
error) is caught by MLIR's crash recovery, which Triton 3.9 enables on every pass manager run
("reproducer generated at std::errs"), and becomes a failed run. What nothing in the process can
catch is a pass that calls ``exit`` or loops forever: the first ends the user's process, the second
hangs it (and, in the transparent mode, a pool thread that Python's exit then waits for). Preflight
(:mod:`triton_ext._preflight`) runs a library's load in a child; this module does the same for its
passes on one kernel. The transparent mode isolates every variant compile (its candidates run on
kernels nobody tested them on); ``TRITON_EXT_ISOLATE=1`` isolates every compile with plugin passes.

The worker (``python -m triton_ext._stage_worker FD``, one per compiling thread, started on
first use and kept) receives the stage's name, its input module as text, the compile's metadata,
options, target and language, and the enabled passes of the stage; it builds the backend's own
stage function and runs it with the same passes (the stage runner, strict). Its output is
discarded: printing a module and parsing it again loses the locations of block arguments (so
value names and debug lines), so the stage then runs here on the original input, as without
isolation, at the cost of running it twice. Knobs set in Python (``triton.knobs``) rather than in
the environment are not seen by the worker.

Outcomes (:func:`run_stage`): it ran; :class:`StageCrashed` (the worker died or ran past
:data:`TIMEOUT_S`: the passes are at fault, the worker is replaced); :class:`StageNotIsolated`
(the worker could not take the request, or the stage raised a Python error there, which the run
here then handles and reports as always).
"""

from __future__ import annotations

import atexit
import contextvars
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Sequence

__all__ = ["isolate", "wanted", "run_stage", "start", "StageRequest", "StageCrashed", "StageNotIsolated", "TIMEOUT_S",
           "shutdown"]

#: Seconds a stage may run in the worker before it counts as hung (and the worker is killed).
#: The slowest stage measured, make_llir of vLLM's prefix-prefill variants, takes a few seconds;
#: a thread waiting on a hung worker also delays the interpreter's exit by at most this.
TIMEOUT_S = 120.0

#: Seconds a worker may take to import Triton and say it is ready.
_START_S = 60.0

#: Set (to True) by the transparent mode around its variant compiles: isolate this compile's stages.
isolate: contextvars.ContextVar[bool] = contextvars.ContextVar("triton_ext_isolate", default=False)


def wanted() -> bool:
    """Whether stages with plugin passes run isolated here (the mode's variants, or ``TRITON_EXT_ISOLATE``)."""
    if isolate.get():
        return True
    from .._settings import settings

    return bool(settings.isolate)


class StageCrashed(Exception):
    """The worker died (or hung) running the stage: one of its plugin passes crashed."""


class StageNotIsolated(Exception):
    """The stage could not run in the worker for a reason that is not a crash; run it here."""


@dataclass
class StageRequest:
    """What the worker (:mod:`triton_ext._stage_worker`) needs to run one stage."""

    stage: str
    text: str
    metadata: dict[str, Any]
    options: Any
    target: Any
    language: Any
    entries: tuple[Any, ...]
    libraries: tuple[tuple[str, str], ...]  # (library path, extension name) to load first


#: What starts a worker; the socket's file descriptor is appended.
_COMMAND = ("-m", "triton_ext._stage_worker")


class _Worker:
    def __init__(self, command: Sequence[str] = _COMMAND) -> None:
        ours, theirs = socket.socketpair()
        env = dict(os.environ)
        env.pop("TRITON_EXT_ENABLE", None)  # importing triton_ext there must enable nothing
        env["TRITON_EXT_STRICT"] = "1"  # any failure comes back as an error, handled here
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # this process's triton and triton_ext
        try:
            self.process = subprocess.Popen([sys.executable, *command, str(theirs.fileno())],
                                            pass_fds=[theirs.fileno()], env=env, stdin=subprocess.DEVNULL)
        except OSError as exc:
            raise StageNotIsolated(f"the worker could not start: {exc}") from None
        finally:
            theirs.close()
        self.connection = Connection(ours.detach())
        # It says it is ready once it imported Triton: a worker that cannot start is no crash.
        ready = self.connection.poll(_START_S)
        try:
            ok = ready and self.connection.recv_bytes() == b"ready"
        except (EOFError, OSError):
            ok = False
        if not ok:
            self.close()
            raise StageNotIsolated("the worker did not start (see its stderr above)")

    def run(self, request: StageRequest) -> None:
        try:
            self.connection.send_bytes(pickle.dumps(request))
        except (OSError, pickle.PicklingError, TypeError, AttributeError) as exc:
            raise StageNotIsolated(f"the request could not be sent: {type(exc).__name__}: {exc}") from None
        if not self.connection.poll(TIMEOUT_S):
            self.close()
            raise StageCrashed(f"ran past {TIMEOUT_S:g} s (the worker was stopped)")
        try:
            reply = self.connection.recv_bytes()
        except (EOFError, OSError):
            code = self.process.wait()
            self.close()
            raise StageCrashed(_describe_exit(code)) from None
        try:
            status, *rest = pickle.loads(reply)
        except Exception as exc:  # noqa: BLE001  (an unreadable reply is no crash of the passes)
            raise StageNotIsolated(f"unreadable reply from the worker: {type(exc).__name__}: {exc}") from None
        if status != "ok":
            raise StageNotIsolated(rest[0])

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        try:
            self.connection.close()
        finally:
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait()


def _picklable(metadata: dict[str, Any]) -> dict[str, Any]:
    """The entries of ``metadata`` that can be sent (a value that cannot is nothing a stage reads)."""
    kept = {}
    for key, value in metadata.items():
        try:
            pickle.dumps(value)
        except Exception:  # noqa: BLE001  (any pickling failure: leave the value out)
            continue
        kept[key] = value
    return kept


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


_workers = threading.local()
_all: list[_Worker] = []
_all_lock = threading.Lock()


#: Why a worker could not start, once one could not: later compiles do not try again (each try
#: can take up to :data:`_START_S`), they run their stages here.
_cannot_start: str | None = None


def _worker() -> _Worker:
    global _cannot_start
    worker = getattr(_workers, "worker", None)
    if worker is None or not worker.alive():
        if _cannot_start is not None:
            raise StageNotIsolated(_cannot_start)
        try:
            worker = _Worker()
        except StageNotIsolated as exc:
            _cannot_start = str(exc)
            raise
        _workers.worker = worker
        with _all_lock:
            if not _all:
                atexit.register(shutdown)
            _all.append(worker)
    return worker


def start() -> None:
    """Start this thread's worker now, if it has none (benchmarks: outside their timings)."""
    _worker()


def shutdown() -> None:
    """Stop every worker (at exit; tests), and let the next compile try to start one again."""
    global _cannot_start
    _cannot_start = None
    with _all_lock:
        workers, _all[:] = list(_all), []
    for worker in workers:
        worker.close()


def run_stage(stage: str, text: str, metadata: dict[str, Any], options: Any, target: Any, language: Any,
              entries: Sequence[Any]) -> None:
    """Run ``stage`` on the module ``text`` with ``entries`` in this thread's worker. Raises
    :class:`StageCrashed` or :class:`StageNotIsolated` (see the module docstring)."""
    libraries = tuple(dict.fromkeys((str(e.extension.library_path()), e.extension.name) for e in entries))
    request = StageRequest(stage, text, _picklable(metadata), options, target, language, tuple(entries), libraries)
    worker = _worker()
    try:
        worker.run(request)
    except StageCrashed:
        _workers.worker = None
        raise
