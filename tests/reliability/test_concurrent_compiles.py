"""Threads compile kernels while passes are enabled and disabled around them.

FixtureA tags the module (``triton_ext.fixture_a``), FixtureB every function
(``triton_ext.fixture_b = <value>``, its option), so each kernel's TTIR shows which passes
ran, and with which option value. Worker threads compile inside ``triton_ext.enabled(...)``
with different sets and a per-thread option value; one thread compiles under the global set
only; a toggler flips the global set all the while. Every kernel's TTIR must match the pass
set in force when its compile started, no thread may crash, and afterwards every
(kernel, set) compiled during the storm, fetched again from the shared cache, must still
match its set (a compile under one set must never be cached under another's key).

A global-set compile that a flip overlaps has no single set to match, so it is skipped; every
other one of the global thread's compiles runs in a quiet window (the toggler waits for it while
the scoped threads go on), so at least ``QUIET_COMPILES`` of them are always checked.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.reliability import reliability_summary as summary
import triton
import triton_ext
from tests.corpus.corpus_kernels import BY_NAME, CorpusKernel
from tests.reliability.fixture_plugins import FIXTURE_A, FIXTURE_B, standard_tree
from triton.backends.compiler import GPUTarget
from triton_ext import _selection

SECTION = "concurrency"
TARGET = GPUTarget("cuda", 90, 32)
A, B = "fixture_tag_module", "fixture_tag_functions"
KERNELS = ("vector_add", "row_reductions", "row_scans", "histogram_atomics")
BLOCKS = (64, 128, 256)
SETS: tuple[tuple[str, ...], ...] = ((), (A,), (B,), (A, B))
SCOPED_THREADS = 4
COMPILES_PER_THREAD = 8
QUIET_COMPILES = COMPILES_PER_THREAD // 2  # global-set compiles no flip may overlap


@dataclass(frozen=True)
class Job:
    kernel: str
    block: int
    passes: frozenset[str]
    value: int | None  # FixtureB's option, when B is in the set


def _cause_chain(exc: BaseException) -> str:
    """The innermost causes of a compile error (a CompilationError's message alone hides them)."""
    import traceback

    return "".join(traceback.format_exception(exc))[-4000:]


def _compile(job: Job) -> Any:
    k: CorpusKernel = BY_NAME[job.kernel]
    from triton.compiler import ASTSource

    src = ASTSource(k.fn, signature=k.signature, constexprs={**k.constexprs, "BLOCK": job.block})
    return triton.compile(src, target=TARGET, options=k.options())


def _mismatch(job: Job, ttir: str) -> str | None:
    has_a = "triton_ext.fixture_a" in ttir
    values = set(re.findall(r"triton_ext\.fixture_b = (-?\d+) : i32", ttir))
    want_b = {str(job.value)} if B in job.passes else set()
    if has_a != (A in job.passes) or values != want_b:
        return f"{job}: TTIR has fixture_a={has_a}, fixture_b={sorted(values)}"
    return None


def test_concurrent_compiles_match_their_pass_sets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    standard_tree(tmp_path / "tree", monkeypatch, [FIXTURE_A, FIXTURE_B])
    monkeypatch.setattr(triton.knobs.cache, "dir", str(tmp_path / "cache"), raising=False)
    triton_ext.enable(A, B)  # load both libraries up front (preflight runs once)
    triton_ext.disable()

    errors: list[str] = []
    done: list[Job] = []
    lock = threading.Lock()
    stop = threading.Event()
    version = [0]  # bumped by the toggler after each change of the global set
    quiet = threading.Lock()  # held by the global thread for a compile no flip may overlap
    global_checked = [0]

    def scoped_worker(index: int) -> None:
        value = 100 + index
        try:
            for i in range(COMPILES_PER_THREAD):
                names = SETS[(index + i) % len(SETS)]
                kernel = KERNELS[(index * 3 + i) % len(KERNELS)]
                block = BLOCKS[(index + 2 * i) % len(BLOCKS)]
                options = {"value": value} if B in names else {}
                with triton_ext.enabled(*names, **options) as selection:
                    # The set in force: the thread's names plus the global set at entry.
                    in_force = frozenset(selection.names())
                    b_value = dict(next((e.options for e in selection.entries if e.spec.name == B), ()))
                    job = Job(kernel, block, in_force, b_value.get("value", 7) if B in in_force else None)
                    ttir = _compile(job).asm["ttir"]
                problem = _mismatch(job, ttir)
                summary.record(SECTION, "scoped compile (enabled() per thread) matches its pass set",
                               problem is None, problem)
                with lock:
                    (errors.append(problem) if problem else done.append(job))
        except BaseException as exc:  # a crash in a thread must fail the test, not vanish
            summary.record(SECTION, "scoped compile (enabled() per thread) matches its pass set", False, repr(exc))
            with lock:
                errors.append(f"scoped worker {index}: {type(exc).__name__}: {exc}\n{_cause_chain(exc)}")

    def global_worker() -> None:
        try:
            for i in range(COMPILES_PER_THREAD):
                with quiet if i % 2 else contextlib.nullcontext():
                    before = version[0]
                    in_force = frozenset(_selection.current().names())
                    job = Job(KERNELS[i % len(KERNELS)], BLOCKS[i % len(BLOCKS)], in_force,
                              7 if B in in_force else None)
                    ttir = _compile(job).asm["ttir"]
                    flipped = version[0] != before
                if flipped:
                    summary.skip(SECTION, "global-set compile matches the set", "global set changed during the compile")
                    continue
                problem = _mismatch(job, ttir)
                summary.record(SECTION, "global-set compile matches the set", problem is None, problem)
                with lock:
                    global_checked[0] += 1
                    (errors.append(problem) if problem else done.append(job))
        except BaseException as exc:
            summary.record(SECTION, "global-set compile matches the set", False, repr(exc))
            with lock:
                errors.append(f"global worker: {type(exc).__name__}: {exc}\n{_cause_chain(exc)}")

    def toggler() -> None:
        flips = 0
        while not stop.is_set():
            try:
                with quiet:  # never during a quiet-window compile of the global thread
                    if flips % 2 == 0:
                        triton_ext.enable(A)
                    else:
                        triton_ext.disable(A)
                    version[0] += 1
            except BaseException as exc:
                with lock:
                    errors.append(f"toggler: {type(exc).__name__}: {exc}")
                return
            flips += 1
            time.sleep(0.4)
        summary.note(SECTION, global_set_flips=flips)

    workers = [threading.Thread(target=scoped_worker, args=(i,), name=f"scoped-{i}") for i in range(SCOPED_THREADS)]
    workers.append(threading.Thread(target=global_worker, name="global"))
    flipper = threading.Thread(target=toggler, name="toggler")
    flipper.start()
    for t in workers:
        t.start()
    for t in workers:
        t.join(timeout=600)
    stop.set()
    flipper.join(timeout=60)
    assert not any(t.is_alive() for t in workers), "a compiling thread hung"
    assert not errors, "\n".join(errors)
    # The global set's own check must have run: a storm that skips every global-set compile
    # proves nothing about it.
    assert global_checked[0] >= QUIET_COMPILES, (
        f"only {global_checked[0]} of {COMPILES_PER_THREAD} global-set compiles were checked "
        f"(at least {QUIET_COMPILES} run with no flip)")
    summary.note(SECTION, threads=len(workers) + 1, compiles=len(done), global_checked=global_checked[0])

    # After the storm, single-threaded: each (kernel, set) comes back from the cache unchanged.
    triton_ext.disable()
    for job in sorted(set(done), key=repr):
        options = {"value": job.value} if job.value not in (None, 7) else {}
        with triton_ext.enabled(*sorted(job.passes), **options):
            problem = _mismatch(job, _compile(job).asm["ttir"])
        summary.record(SECTION, "cached kernel re-read after the storm matches its set", problem is None, problem)
        assert problem is None, problem


def test_global_change_between_key_and_stages_does_not_poison_the_cache(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # Deterministic stand-in for another thread calling enable() at the worst moment: a hook
    # installed before triton_ext's is chained and called at add_stages time, before triton_ext
    # reads the enabled set. It enables FixtureA there, once.
    from triton import knobs

    standard_tree(tmp_path / "tree", monkeypatch, [FIXTURE_A])
    monkeypatch.setattr(triton.knobs.cache, "dir", str(tmp_path / "cache"), raising=False)
    triton_ext.enable(A)
    triton_ext.uninstall()
    triton_ext.disable()
    fired: list[bool] = []

    def earlier_hook(*args: Any) -> Any:
        if not args:
            return ("", "")
        if not fired:
            fired.append(True)
            triton_ext.enable(A)  # "another thread" enables the pass mid-compile
        return None

    monkeypatch.setattr(knobs.runtime, "add_stages_inspection_hook", earlier_hook)
    _selection.install_hook()
    job = Job("vector_add", 64, frozenset(), None)
    _compile(job)  # keyed as "no pass", compiled with A
    triton_ext.disable()
    problem = _mismatch(job, _compile(job).asm["ttir"])  # no pass: must not get the A-tagged kernel
    summary.record(SECTION, "enable() between cache key and stages leaves the cache correct", problem is None, problem)
    assert problem is None, problem
