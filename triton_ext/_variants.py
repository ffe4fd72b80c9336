"""Compiling and timing the transparent mode's variants (:mod:`triton_ext._auto`, issue 27).

:func:`compile_variants` compiles every candidate pass's variant of a launch concurrently on a thread pool
(:func:`_pool`), each stopped as soon as its IR after the last stage with one of its passes, and its launch
metadata, equal the no-pass kernel's (the ``stage_editor`` slot of the stages hook; :func:`stop_if_stock`);
:func:`time_variants` times the applicable ones on the launch's own arguments: interleaved rounds of GPU time,
confirmation rounds, then back to back (:func:`triton_ext._choice.choose_in_both`); :func:`time_combination` times the
combination of two winners against the one chosen, once that one's rounds are over (in the same first launch, or in a
later activation when it compiled too late). All stop at the first-launch budget (``TRITON_EXT_AUTO_BUDGET_S``).
"""

from __future__ import annotations

import contextvars
import os
import re
import statistics
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, Callable, Mapping, Protocol

from . import _launch_options, _selection, _triton
from ._backup import ArgumentBackup, tensors_of
from ._choice import choose_in_both, launch_bound, spread, winners
from ._decision import Decision
from ._errors import PassCrashedError
from ._launch_size import guarded_while_timed
from ._outputs import OutputCheck, OutputsUnverifiable
from ._settings import settings
from ._triton import isolated
from ._timing import ReadingPlan, back_to_back_ms, flush_buffer, gpu_time_ms, interleaved_rounds, windows_for

__all__ = ["ROUNDS", "CONFIRM_ROUNDS", "REP_MS", "Decision", "Tuner", "compile_variants", "time_variants", "describe_error",
           "compile_failure", "time_combination", "back_to_back_reading", "on_saved_arguments", "may_change",
           "screen_variants", "OverBudget", "check_budget", "SameAsStock", "PASS_STAGES", "last_stage",
           "stop_if_stock"]


class Tuner(Protocol):
    """What compiling and timing variants need of the transparent mode (:mod:`triton_ext._auto`)."""

    variants: list[tuple[str, _selection.Selection]]
    pending: list[Any]

    def selection(self, variant: str) -> _selection.Selection: ...

    def joined(self, variant: str, stock_ttir: Any) -> str: ...

    def variant_kernel(self, fn: Any, variant: str, args: tuple[Any, ...], kwargs: dict[str, Any], grid: Any) -> Any: ...

    def launch_kwargs(self, fn: Any, variant: str, kwargs: dict[str, Any]) -> dict[str, Any] | None: ...


def describe_error(exc: BaseException) -> str:
    """One line for a decision's error: the exception type and its first line."""
    first = (str(exc).strip().splitlines() or [""])[0]
    return f"{type(exc).__name__}: {first[:300]}"


def compile_failure(error: BaseException) -> str:
    """Why a variant's compile gave no kernel: its passes crashed or hung in their isolated worker (:class:`PassCrashedError`
    says how), or the compile failed (a pass failing under ``TRITON_EXT_STRICT=1``, ptxas, ...)."""
    return str(error) if isinstance(error, PassCrashedError) else f"it failed to compile: {describe_error(error)}"


def screen_variants(decision: Decision, variants: list[str], launch: Callable[[str], Any],
                    differs: Callable[[], str | None]) -> list[str]:
    """Launch each of ``variants`` once, from the saved inputs; return those left, having recorded the ones that fail
    in ``decision.failed`` and the ones whose launch left other outputs than the no-pass kernel's (``differs``:
    :meth:`OutputCheck.differs`) in ``decision.changed_outputs``.

    Triton finds that a binary needs more shared memory than the GPU has only when it loads it, at the first launch
    (``OutOfResources``). One such variant must not end the whole decision: the others are still timed."""
    left = []
    for variant in variants:
        try:
            launch(variant)
        except Exception as exc:
            decision.failed[variant] = describe_error(exc)
            continue
        changed = differs()
        if changed is not None:
            decision.changed_outputs[variant] = changed
            continue
        left.append(variant)
    return left


#: Interleaved timing rounds over every applicable variant, then over the finalists again (each
#: round reads every variant twice, :func:`triton_ext._timing.interleaved_rounds`).
ROUNDS = 4
CONFIRM_ROUNDS = 3
#: GPU time per reading (two readings per variant and round).
REP_MS = 12.5


def back_to_back_reading(call_ms: float) -> tuple[int, int]:
    """Calls and windows of one back-to-back reading of a kernel of ``call_ms`` GPU time: about :data:`REP_MS` of it,
    5 to 500 calls, in windows, the fastest kept (:func:`windows_for`: a compile the budget left running holds the GIL
    at times, and a pause of the launching thread would read as a slower kernel)."""
    calls = max(5, min(500, int(REP_MS / max(call_ms, 1e-3))))
    return calls, windows_for(calls, call_ms)


def combination_reserve_s(reading_s: float) -> float:
    """Seconds to keep, past a combination's compile, for what follows it: the rounds, the confirming rounds and the
    back-to-back rounds over the winner and the combination (two readings per variant and round, each about
    ``reading_s``), with half again for the launches between readings, and never less than a tenth of the budget."""
    readings = 2 * 2 * (ROUNDS + 2 * CONFIRM_ROUNDS)
    return max(1.5 * readings * reading_s, 0.1 * settings.auto_budget_s)


#: Warp-count variants are compiled only for kernels whose no-pass compile took at most this
#: share of the first-launch budget (see :func:`compile_variants`).
WARPS_COMPILE_SHARE = 0.25


class OverBudget(Exception):
    """The first-launch budget (``TRITON_EXT_AUTO_BUDGET_S``) ran out."""


def check_budget(deadline: float, step: str) -> None:
    if time.perf_counter() > deadline:
        raise OverBudget(f"over the first-launch budget of {settings.auto_budget_s:g} s (TRITON_EXT_AUTO_BUDGET_S) "
                         f"before {step}: no pass kept")


class SameAsStock(Exception):
    """A variant's IR after the last stage its passes run in is the no-pass kernel's: its compile
    stops there (before ``make_ttgir`` for passes that all run in ``make_ttir``)."""


#: The stages a pass can run in, in order, and the stage each one feeds.
PASS_STAGES = ("ttir", "ttgir", "llir")
_NEXT_STAGE = {"ttir": "ttgir", "ttgir": "llir", "llir": "ptx"}
#: Launch metadata a variant must share with the no-pass kernel to count as the same kernel: what
#: a pass can ask for besides its IR (:mod:`triton_ext._launch`), and, once ``make_llir`` has
#: computed them, the kernel's launch dimensions.
_LAUNCH_METADATA = ("launch_pdl", "launch_cooperative_grid")
_LLIR_METADATA = ("num_warps", "num_ctas", "shared") + _LAUNCH_METADATA


def last_stage(selection: _selection.Selection) -> str:
    """The last stage in which ``selection`` runs a pass or edits Triton's pipeline (its
    companions and ``kind: pipeline`` entries included); ``llir`` when it has none."""
    stages = [e.spec.stage for e in selection.entries if e.spec.stage in PASS_STAGES]
    return max(stages, key=PASS_STAGES.index) if stages else "llir"


def may_change(selection: _selection.Selection, stock_ttir: Any) -> bool:
    """Whether ``selection``'s passes may change a kernel whose no-pass TTIR is ``stock_ttir``: not
    when every one of them declares ``needs_ops`` (registry) and the TTIR has none of its
    operations; a TTIR not known may be changed. Such a variant is not compiled at all: it could
    only rebuild the no-pass kernel (``tests/python/test_needs_ops.py`` holds the declarations to
    the corpus)."""
    if not isinstance(stock_ttir, str):
        return True

    def has(op: str) -> bool:  # as TTIR prints it: `tt.dot %a, ...`; `tt.dot` is not `tt.dot_scaled`
        return re.search(rf"(?<![\w.]){re.escape(op)}(?![\w.])", stock_ttir) is not None

    return not selection.entries or any(not e.spec.needs_ops or any(map(has, e.spec.needs_ops))
                                        for e in selection.entries)


def stop_if_stock(stock_asm: dict[str, Any], stock_metadata: Any, last: str) -> Callable[[dict[str, Any]], None]:
    """A stage editor that stops a variant's compile (:class:`SameAsStock`) as soon as the IR
    leaving a stage, from ``last`` (the last stage with one of its passes) on, is the no-pass
    kernel's IR of that stage, with the same launch metadata.

    Every later stage then runs exactly as for the no-pass kernel (same IR, same options, no pass
    of the variant), so the rest of the compile can only rebuild the no-pass binary. Comparing
    right after ``last``, rather than at the LLVM IR only, spares a variant of ``make_ttir``
    passes that does not apply both ``make_ttgir`` and ``make_llir``; the later comparisons catch
    a change that a later stage undoes."""
    checks = []
    for stage in PASS_STAGES[PASS_STAGES.index(last):]:
        fields = _LLIR_METADATA if stage == "llir" else _LAUNCH_METADATA
        checks.append((stage, stock_asm.get(stage), {f: getattr(stock_metadata, f, None) for f in fields}))

    def same(metadata: dict[str, Any], expected: dict[str, Any]) -> bool:
        return all(bool(metadata.get(f)) == bool(v) if f in _LAUNCH_METADATA else metadata.get(f) == v
                   for f, v in expected.items())

    def edit(stages: dict[str, Any]) -> None:
        for stage, stock_text, expected in checks:
            following = _NEXT_STAGE[stage]
            if following not in stages or not isinstance(stock_text, str):
                continue

            def unless_stock(src: Any, metadata: dict[str, Any], _run: Any = stages[following],
                             _text: str = stock_text, _expected: dict[str, Any] = expected) -> Any:
                if same(metadata, _expected) and (src if isinstance(src, str) else str(src)) == _text:
                    raise SameAsStock()
                return _run(src, metadata)

            stages[following] = unless_stock

    return edit

_pool_lock = threading.Lock()
_executor: Any = None


def _pool() -> Any:
    """The threads that compile variants: ``TRITON_EXT_AUTO_COMPILE_THREADS``, default one per CPU
    core, at most 8."""
    global _executor
    threads = settings.auto_compile_threads or max(1, min(8, os.cpu_count() or 1))
    with _pool_lock:
        if _executor is None or _executor._max_workers != threads:
            _executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="triton-ext-auto")
        return _executor


def _submit_compile(auto: Tuner, fn: Any, device: int, variant: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                    grid: Any, edit_stages: Callable[[dict[str, Any]], None] | None = None) -> Future[Any]:
    """``variant``'s kernel for this launch, compiled on the pool (:func:`_pool`)."""

    def compile_one() -> Any:
        import torch  # on first use: importing triton_ext must not import torch

        if torch.cuda.is_available():
            torch.cuda.set_device(device)  # the JIT of this thread looks up the launch's device
        token = _triton.stage_editor.set(edit_stages)
        # Its passes run on a kernel nobody tested them on: in a worker process, which a crash or
        # a hang of theirs ends instead of the user's process (:mod:`triton_ext._triton.isolated`).
        isolating = isolated.isolate.set(True)
        try:
            with _selection.lend_hook():  # held until this compile ends, past the budget too
                return auto.variant_kernel(fn, variant, args, kwargs, grid)
        finally:
            isolated.isolate.reset(isolating)
            _triton.stage_editor.reset(token)

    return _pool().submit(contextvars.copy_context().run, compile_one)


def compile_variants(auto: Tuner, fn: Any, device: int, args: tuple[Any, ...], kwargs: dict[str, Any], grid: Any,
                     kernels: dict[str, Any], same: list[str], deadline: float,
                     crashed: dict[str, str], stock_s: float = 0.0) -> list[str]:
    """Compile every candidate variant concurrently (compiles are CPU work: MLIR passes, LLVM,
    ptxas), each stopped after the last stage with one of its passes when its IR and launch
    metadata there are the no-pass kernel's (it does not apply: :func:`stop_if_stock`).

    Fills ``kernels``; returns the variants still compiling at ``deadline`` (they finish in the
    background, filling Triton's on-disk cache for the next process; :attr:`Tuner.pending` holds
    them); ``same`` receives the variants stopped as the stock kernel or not compiled because
    their passes need operations the kernel lacks (:func:`may_change`), ``crashed`` those whose
    passes crashed or hung in their isolated worker or whose compile failed, with what happened,
    and the warp counts left out because the no-pass kernel took ``stock_s`` seconds, over a
    quarter of the budget, to compile (they would compile about as long beside the passes, and
    slowed fla's attention dK/dV past the budget, 61d2585)."""
    stock = kernels[""]
    stock_asm = stock.asm if hasattr(stock, "asm") else {}
    candidates = [auto.joined(v, stock_asm.get("ttir")) for v, _ in auto.variants[1:]]
    lacking = [v for v in candidates if not may_change(auto.selection(v), stock_asm.get("ttir"))
               or not _launch_options.may_change(v, stock_asm.get("ttir")) or auto.launch_kwargs(fn, v, kwargs) is None]
    same.extend(lacking)
    variants = [v for v in candidates if v not in lacking]
    if stock_s > WARPS_COMPILE_SHARE * settings.auto_budget_s:
        for variant in [v for v in variants if _launch_options.split(v)[1]]:
            variants.remove(variant)
            crashed[variant] = (f"not compiled: the kernel took {stock_s:.1f} s to compile, over a quarter of the "
                                f"first-launch budget of {settings.auto_budget_s:g} s")
    if not variants:
        return []
    # A depth is settled once make_ttgir ran: one that rebuilds the no-pass kernel stops there, not
    # after make_llir (25 of 63 depth variants of the real-world kernels: auto_depth_stop_cpu.py).
    futures = {variant: _submit_compile(auto, fn, device, variant, args, kwargs, grid,
                                        stop_if_stock(stock_asm, stock.metadata,
                                                      _launch_options.settled_stage(variant)
                                                      or last_stage(auto.selection(variant))))
               for variant in variants}
    wait(list(futures.values()), timeout=max(deadline - time.perf_counter(), 0.0))
    late = [v for v, f in futures.items() if not f.done()]
    auto.pending.extend(f for f in futures.values() if not f.done())
    for variant in [v for v in late if _launch_options.split(v)[1]]:  # optional: the passes' decision stands
        late.remove(variant)
        crashed[variant] = f"still compiling when the first-launch budget of {settings.auto_budget_s:g} s ran out"
    for variant, future in futures.items():
        if not future.done():
            continue
        error = future.exception()
        if error is None:
            kernels[variant] = future.result()
        elif isinstance(error, SameAsStock):
            same.append(variant)  # does not apply
        else:  # it crashed in its isolated worker, or it cannot compile: dropped, and said so
            crashed[variant] = compile_failure(error)
    return late

def time_variants(auto: Tuner, run: Callable[..., Any] | None, fn: Any, device: int, args: tuple[Any, ...],
                  kwargs: dict[str, Any], grid: Any, kernels: dict[str, Any], decision: Decision,
                  backup: ArgumentBackup, deadline: float, combine: bool = True) -> None:
    """Check and time the applicable variants; set ``decision``'s choice and timings (no pass on any failure,
    with ``decision.error`` saying why). Every variant timed first left the no-pass kernel's outputs
    (:mod:`triton_ext._outputs`). When the chosen one and another winner can run together (``combine``), it is
    then timed against their combination (:func:`time_combination`)."""
    assert run is not None  # JITFunction.run as it was before the mode wrapped it
    check: OutputCheck | None = None
    pair: list[str] = []
    reading_s = 0.0

    def go(variant: str) -> Callable[[], Any]:  # its passes: the caller's enabled set, entered once per reading
        launch_kwargs = auto.launch_kwargs(fn, variant, kwargs)
        assert launch_kwargs is not None  # a launch option that does not apply was never compiled
        return lambda: run(fn, *args, grid=grid, warmup=False, **launch_kwargs)

    try:
        flush = flush_buffer()  # one buffer for every reading of the comparison
        plans: dict[str, ReadingPlan] = {}  # each variant's first reading finds its calls per reading

        def gpu_one(variant: str) -> float:
            with _selection.using(auto.selection(variant)):
                return gpu_time_ms(go(variant), rep_ms=REP_MS, flush=flush,
                                   plan=plans.setdefault(variant, ReadingPlan()))

        def before_reading(step: str) -> Callable[[str], None]:
            # The budget is checked before every reading, not only between steps: a kernel of
            # 100 ms would otherwise add seconds of rounds past it.
            def before(_: str) -> None:
                check_budget(deadline, step)
                backup.restore()
            return before

        taken: list[tuple[str, float]] = []

        def gpu(variants: list[str], rounds: int) -> dict[str, list[float]]:
            # A variant slower than no pass in one round is not read again: it cannot win.
            check_budget(deadline, "timing")
            return interleaved_rounds(variants, gpu_one, rounds, before=before_reading("timing"), readings=taken,
                                      drop_slower_than="")

        def launch(variant: str) -> None:
            backup.restore()
            with _selection.using(auto.selection(variant)):
                go(variant)()

        with decision.phase("check"):
            check = OutputCheck.of(backup, list(tensors_of((*args, *kwargs.values()))), lambda: launch(""))
            decision.changed_outputs.update(_launch_options.reordering(decision.applicable, kernels))
            decision.applicable = screen_variants(decision, [v for v in decision.applicable
                                                             if v not in decision.changed_outputs], launch,
                                                  check.differs)
        if not decision.applicable:
            return
        with decision.phase("rounds"):
            timings = gpu(["", *decision.applicable], ROUNDS)
        reading_s = decision.phases_s["rounds"] / max(len(taken), 1)
        decision.timings_ms = {v: statistics.median(t) for v, t in timings.items()}
        decision.spreads = {v: spread(t) for v, t in timings.items()}
        found = winners(timings)
        if combine:
            pair = _launch_options.combinable(found)
        if not found:
            return
        with decision.phase("confirm"):  # the two fastest: the first in GPU time (a cold L2) may lose back
            # to back (a warm one) where the next wins (H100: a 2.4 ms GEMM's first winner, 1.03x and 0.955x)
            confirm = gpu(["", *found[:2]], CONFIRM_ROUNDS)
        decision.confirm_ms = {v: statistics.median(t) for v, t in confirm.items()}
        kept = winners(confirm)
        if not kept:
            return
        # The launch regime: back to back through the JIT, as the user launches the kernel, each
        # variant behind the guard it would be placed behind (issue 27.3; against a winner, "" too).
        check_budget(deadline, "timing back to back")
        calls, windows = back_to_back_reading(decision.timings_ms[""])

        def b2b_one(variant: str) -> float:
            with _selection.using(auto.selection(variant)):
                return back_to_back_ms(go(variant), calls, windows)
        placed = [kernels[v] for v in (*kept, *([""] if isinstance(auto, _AgainstWinner) else []))]
        with decision.phase("back_to_back"), guarded_while_timed(fn, device, placed, kernels[""], decision.launch_size):
            b2b = interleaved_rounds(["", *kept], b2b_one, CONFIRM_ROUNDS,
                                     before=before_reading("timing back to back"), drop_slower_than="")
        decision.back_to_back_ms = {v: statistics.median(t) for v, t in b2b.items()}
        decision.launch_bound = launch_bound(decision.confirm_ms[""], decision.back_to_back_ms[""])
        decision.choice = "" if decision.launch_bound else choose_in_both(confirm, b2b)
    except (OverBudget, OutputsUnverifiable) as exc:  # each says why no pass is kept
        decision.error = str(exc)
        decision.choice = ""
    except Exception as exc:  # a variant that fails to launch: the user's launch runs with no pass
        decision.error = f"timing failed, no pass kept: {describe_error(exc)}"
        decision.choice = ""
    finally:
        if check is not None:
            check.release()
    if len(pair) == 2 and decision.choice in pair:
        # The two winners together need one more full compile (vLLM's prefix-prefill: about 6 s on
        # the H200 host). It starts only now: a compile running beside the winner's readings made
        # them read slower than the winner runs (3da52cd lost vLLM's 3-D decode and SGLang's decode
        # stage 1 so), and one compiled before them held up their confirmation.
        first = {name: dict(getattr(decision, name)) for name in _TIMINGS}
        decision.late_combination = "+".join(sorted(pair))
        time_combination(auto, run, fn, device, args, kwargs, grid, kernels[decision.choice], decision, backup, deadline,
                         reading_s=reading_s, compiled=kernels)
        for name in _TIMINGS:  # the first rounds' readings stay; the combination's (against the winner) join them
            setattr(decision, name, first[name] | {v: t for v, t in getattr(decision, name).items() if v not in first[name]})


#: The decision's per-variant readings, as :func:`time_variants` sets them.
_TIMINGS = ("timings_ms", "confirm_ms", "back_to_back_ms", "spreads")


def on_saved_arguments(tensors: list[Any], timing: Callable[[ArgumentBackup], None]) -> None:
    """Run ``timing`` with the launch's tensors saved (:class:`ArgumentBackup`: the inputs, and
    the baseline's outputs), then put them back: the user's launch runs on the memory it started
    with. Raises :class:`BackupRefused` when they cannot be saved."""
    backup = ArgumentBackup.of(tensors, copies=2)
    try:
        timing(backup)
    finally:
        try:
            backup.restore()
        finally:
            backup.release()


class _AgainstWinner:
    """The tuner seen by :func:`time_variants` when a winner, not no pass, is the variant to beat:
    its label ``""`` stands for ``winner``."""

    def __init__(self, auto: Tuner, winner: str) -> None:
        self.auto, self.winner = auto, winner
        self.variants, self.pending = auto.variants, auto.pending

    def selection(self, variant: str) -> _selection.Selection:
        return self.auto.selection(variant or self.winner)

    def joined(self, variant: str, stock_ttir: Any) -> str:
        return self.auto.joined(variant, stock_ttir)

    def variant_kernel(self, fn: Any, variant: str, args: tuple[Any, ...], kwargs: dict[str, Any], grid: Any) -> Any:
        return self.auto.variant_kernel(fn, variant or self.winner, args, kwargs, grid)

    def launch_kwargs(self, fn: Any, variant: str, kwargs: dict[str, Any]) -> dict[str, Any] | None:
        return self.auto.launch_kwargs(fn, variant or self.winner, kwargs)


def time_combination(auto: Tuner, run: Callable[..., Any] | None, fn: Any, device: int, args: tuple[Any, ...],
                     kwargs: dict[str, Any], grid: Any, winner_kernel: Any, decision: Decision,
                     backup: ArgumentBackup, deadline: float, reading_s: float | None = None,
                     compiled: Mapping[str, Any] | None = None) -> None:
    """The combination of two winners (``decision.late_combination``), timed against the one
    chosen (``decision.choice``): right after that one's own rounds (:func:`time_variants`,
    which passes the kernels it ``compiled`` and its readings' seconds, ``reading_s``), or in a
    later activation when the combination compiled too late (in Triton's cache by now, usually).
    Compile the combination and keep it only if it beats ``winner`` by :func:`time_variants`'
    rules, with ``winner`` in no pass's place: same outputs bit for bit, faster in GPU time and
    back to back. On anything else ``winner`` stays: it already won against no pass, in GPU time
    and back to back, and a decision made again from scratch could lose it to one noisy round
    (vLLM's 3-D unified decode lost a 1.25x winner so at e788147).

    Sets ``decision``'s choice (the winner or the combination), its timings (under those names),
    why the combination was not kept where its timing failed (``decision.failed``; the winner's
    choice stands, so ``decision.error`` stays unset), and its late combination again when the
    combination is still compiling at ``deadline`` or its rounds did not fit before it: the next
    activation then times it."""
    winner, combo = decision.choice, decision.late_combination
    assert winner and combo is not None
    decision.late_combination = None
    future = _submit_compile(auto, fn, device, combo, args, kwargs, grid)
    # Waited for only while the rounds after it still fit (one that arrived later would leave no
    # time for them); without readings of this launch yet, each is taken as twice a reading's
    # GPU time.
    reserve = combination_reserve_s(2 * 2 * REP_MS / 1e3 if reading_s is None else reading_s)
    with decision.phase("combination"):
        wait([future], timeout=max(deadline - reserve - time.perf_counter(), 0.0))
    if not future.done():
        auto.pending.append(future)
        decision.late_combination = combo
        return
    if future.exception() is not None:
        decision.failed[combo] = compile_failure(future.exception())
        return
    kernels = {"": winner_kernel, combo: future.result()}
    if kernels[combo].asm.get("ptx", "") == winner_kernel.asm.get("ptx", ""):  # the winner's code: nothing to time
        return
    # A launch option's combination is checked against its passes alone where that kernel is at
    # hand (the winner may be the launch option, whose layouts it shares by construction).
    decision.changed_outputs.update(_launch_options.reordering([combo], {**kernels, **(compiled or {})}))
    if combo in decision.changed_outputs:
        return
    applicable = decision.applicable
    decision.applicable = [combo]
    time_variants(_AgainstWinner(auto, winner), run, fn, device, args, kwargs, grid, kernels, decision, backup, deadline,
                  combine=False)
    if compiled is not None:
        decision.applicable = applicable
    for timings in (getattr(decision, name) for name in _TIMINGS):
        if "" in timings:
            timings[winner] = timings.pop("")
    decision.choice = decision.choice or winner
    if decision.error is not None:  # time_variants speaks of no pass; here the winner stays
        decision.failed[combo] = decision.error.replace("no pass kept", f"{winner} kept")
        decision.error = None
        if time.perf_counter() > deadline:
            decision.late_combination = combo  # its rounds did not fit: the next activation's turn
