"""GPU time of a launch with the CPU's launch cost kept out (the transparent mode, tune, benchmarks).

``triton.testing.do_bench`` records an event pair around each call after an L2 flush. When a
kernel and the flush together take less GPU time than the Python that queues them (a 10 us
kernel behind a 60 us flush, launched through a wrapper or an autotuner), the GPU waits for the
CPU between the events and the wait is counted: seen on the H200 as 10-95% round-to-round
spreads and 0.4x "slowdowns" of the very same kernel launched through a longer Python path.
:func:`gpu_time_ms` queues every call behind a GPU sleep that outlasts the CPU's queueing, so
the GPU never waits and each event pair brackets only the kernel; it checks afterwards that the
sleep was still running when the last call was queued, and measures again with a sleep four
times as long when it was not.

Comparing variants: :func:`interleaved_rounds`. Seen on the H200 (issue 19's corpus run at
cd3daa7): consecutive :func:`gpu_time_ms` calls alternated between two levels about 0.5 us
apart (4.77 / 5.30 us for the same kernel), whatever the kernel, so a variant timed always at
an even position of the sequence looked up to 10% faster than one at an odd position. Each
round therefore times every variant twice, in order and then in reverse order (ABBA): a
variant's two positions ``p`` and ``2n - 1 - p`` have opposite parity and sum to the same
number for every variant, so an alternation and a linear drift both cancel in the round's mean.
"""

from __future__ import annotations

import math
import statistics
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

__all__ = ["gpu_time_ms", "back_to_back_ms", "launch_cost_us", "interleaved_rounds", "flush_buffer", "ReadingPlan",
           "MIN_KERNEL_MS"]

#: Calls per queued batch at most: with 4 queued operations per call this stays below the ~1024
#: operations a CUDA stream queues before the CPU blocks (the backlog must cover every call).
MAX_CALLS = 200
#: A measurement covers at least this much GPU time of the kernel itself (more batches for tiny
#: kernels), so a 5 us kernel is not judged on 0.5 ms of samples.
MIN_KERNEL_MS = 1.0

_calibration_lock = threading.Lock()
_cycles_per_ms: dict[int, float] = {}


def _sleep_ms(ms: float) -> Any:
    """Keep the current stream's GPU busy for about ``ms`` (``torch.cuda._sleep`` spins cycles);
    returns an event recorded at the sleep's end."""
    import torch  # on first use: importing triton_ext must not import torch

    device = torch.cuda.current_device()
    with _calibration_lock:
        rate = _cycles_per_ms.get(device)
        if rate is None:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda._sleep(1_000_000)  # warm up the sleep kernel
            start.record()
            torch.cuda._sleep(20_000_000)
            end.record()
            end.synchronize()
            rate = _cycles_per_ms[device] = 20_000_000 / max(start.elapsed_time(end), 1e-3)
    torch.cuda._sleep(int(ms * rate))
    done = torch.cuda.Event()
    done.record()
    return done


def flush_buffer() -> Any:
    """The L2-flush buffer ``do_bench`` uses (256 MB). Pass one to every :func:`gpu_time_ms` of
    a comparison so each call flushes through the same memory (a new buffer per call may land
    elsewhere, and what stays of it in L2 is what the kernel then evicts).

    A smaller buffer (twice the L2) would not shorten a reading: its ``rep_ms`` of GPU time counts
    the flushes, so a cheaper flush only means more calls, each costing the CPU as much to queue."""
    from triton import runtime  # on first use: importing triton_ext must not import Triton

    return runtime.driver.active.get_empty_cache_for_benchmark()


@dataclass
class ReadingPlan:
    """How :func:`gpu_time_ms` reads one callable: the calls per reading and the CPU's time to
    queue one call (flush included). The first reading finds them (two short estimates, each with
    its own synchronization); later readings of the same callable given the same plan skip that."""

    calls: int = 0
    cpu_ms: float = 0.0


@dataclass
class _Batch:
    times: list[float]
    starved: bool  # the sleep ended before the CPU had queued every call


def _batch(fn: Callable[[], Any], calls: int, cpu_ms: float, cache: Any, slack: float) -> _Batch:
    import torch  # on first use: importing triton_ext must not import torch
    from triton import runtime  # on first use: importing triton_ext must not import Triton

    driver = runtime.driver.active
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(calls)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(calls)]
    asleep = _sleep_ms(min(slack * calls * cpu_ms + 2.0, 1000.0))
    for i in range(calls):
        driver.clear_cache(cache)
        starts[i].record()
        fn()
        ends[i].record()
    # Still sleeping now: every call was queued before the GPU reached the first one, so no
    # event pair can contain a wait for the CPU.
    starved = asleep.query()
    torch.cuda.synchronize()
    return _Batch([s.elapsed_time(e) for s, e in zip(starts, ends)], starved)


def gpu_time_ms(fn: Callable[[], Any], rep_ms: float = 25.0, max_calls: int = MAX_CALLS, *, flush: Any = None,
                min_kernel_ms: float = MIN_KERNEL_MS, stats: dict[str, int] | None = None,
                plan: ReadingPlan | None = None) -> float:
    """Median GPU time of ``fn()`` in ms: an L2 flush before each call (as ``do_bench``), every
    call queued behind a GPU sleep longer than the CPU takes to queue them all.

    About ``rep_ms`` of GPU time (flushes included) in batches of at most ``max_calls`` calls,
    and at least ``min_kernel_ms`` of the kernel's own time. ``flush``: the buffer to flush L2
    with (:func:`flush_buffer`; default: a new one). A batch whose sleep ended before its last
    call was queued is measured again behind a sleep four times as long (at most twice).
    ``stats`` (optional) counts ``batches``, ``retries`` and ``starved`` (batches kept although
    their sleep still ended early: their times may hold a wait for the CPU). ``plan``: this
    callable's :class:`ReadingPlan`, filled by the first reading and reused by later ones."""
    from triton import runtime  # on first use: importing triton_ext must not import Triton

    driver = runtime.driver.active
    cache = flush if flush is not None else flush_buffer()
    plan = plan if plan is not None else ReadingPlan()
    if not plan.calls:
        _plan(fn, driver, cache, rep_ms, min_kernel_ms, plan)
    calls, cpu_ms = plan.calls, plan.cpu_ms
    batches = math.ceil(calls / max_calls)
    times: list[float] = []
    for _ in range(batches):
        slack = 1.5
        batch = _batch(fn, math.ceil(calls / batches), cpu_ms, cache, slack)
        for _ in range(2):
            if not batch.starved:
                break
            slack *= 4
            if stats is not None:
                stats["retries"] = stats.get("retries", 0) + 1
            batch = _batch(fn, math.ceil(calls / batches), cpu_ms, cache, slack)
        if stats is not None:
            stats["batches"] = stats.get("batches", 0) + 1
            stats["starved"] = stats.get("starved", 0) + int(batch.starved)
        times += batch.times
    return statistics.median(times)


def _plan(fn: Callable[[], Any], driver: Any, cache: Any, rep_ms: float, min_kernel_ms: float,
          plan: ReadingPlan) -> None:
    """Estimate the GPU time of a call alone and with its flush, and the CPU (queueing) time."""
    import torch  # on first use: importing triton_ext must not import torch

    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    _sleep_ms(2.0)
    t0 = time.perf_counter()
    start.record()
    for _ in range(5):
        driver.clear_cache(cache)
        fn()
    end.record()
    cpu_ms = (time.perf_counter() - t0) * 1e3 / 5
    end.synchronize()
    gpu_ms = max(start.elapsed_time(end) / 5, 1e-4)
    first = _batch(fn, 5, cpu_ms, cache, 2.0)
    kernel_ms = max(statistics.median(first.times), 1e-4)
    plan.calls = max(5, int(rep_ms / gpu_ms), math.ceil(min_kernel_ms / kernel_ms))
    plan.cpu_ms = cpu_ms


def interleaved_rounds(labels: Sequence[str], time_one: Callable[[str], float], rounds: int,
                       before: Callable[[str], None] | None = None,
                       readings: list[tuple[str, float]] | None = None,
                       drop_slower_than: str | None = None) -> dict[str, list[float]]:
    """Per label, one sample per round: each round calls ``time_one`` for every label in order and
    then in reverse order (ABBA), and a label's sample is the mean of its two readings (see the
    module docstring for why). ``before(label)`` runs before each reading (restore arguments);
    ``readings`` receives every ``(label, reading)`` in the order taken.

    With ``drop_slower_than`` (a label), a label whose sample in a round is not below that label's
    is not read in later rounds (its list is shorter), and the rounds stop when no other label is
    left: for a rule that keeps only variants faster in every round
    (:func:`triton_ext._choice.winners`), the rounds it skips could not change its answer."""
    if rounds < 1:
        raise ValueError(f"interleaved_rounds: rounds must be >= 1, found {rounds}")
    if len(set(labels)) != len(labels):
        raise ValueError(f"interleaved_rounds: labels repeat: {list(labels)}")
    out: dict[str, list[float]] = {label: [] for label in labels}
    for r in range(rounds):
        if r and drop_slower_than is not None:
            labels = [k for k in labels if k == drop_slower_than or out[k][-1] < out[drop_slower_than][-1]]
            if labels == [drop_slower_than]:
                break
        reading: dict[str, list[float]] = {label: [] for label in labels}
        for label in [*labels, *reversed(labels)]:
            if before is not None:
                before(label)
            reading[label].append(time_one(label))
            if readings is not None:
                readings.append((label, reading[label][-1]))
        for label in labels:
            out[label].append(sum(reading[label]) / 2)
    return out


def windows_for(calls: int, call_ms: float) -> int:
    """Windows for a back-to-back reading of ``calls`` launches of a kernel of ``call_ms`` GPU
    time, taken while compiles may run in the background (the transparent mode's): up to four,
    each holding at least 3 ms of the kernel's GPU time. On an H100 (b2b-under-compile-h100.json)
    four windows kept an 0.07 ms kernel's readings within 2.2% of each other while a compile ran
    (one window: up to 72% apart), as close as one window when none ran; a 4 us kernel's readings
    of 2 ms in all, launch-bound, spread more in four windows (4.9% median against 3.0%), each
    window paying its start from an idle GPU, so such a kernel keeps one."""
    return max(1, min(4, int(calls * call_ms / 3.0)))


def back_to_back_ms(fn: Callable[[], Any], calls: int = 100, windows: int = 1) -> float:
    """Wall milliseconds per ``fn()`` over ``calls`` calls queued back to back, no flush, no sleep
    ahead: the CPU's launch path and the GPU's run together, as an application launches a kernel
    in a loop (the transparent mode's second criterion, issue 27.3).

    ``windows`` > 1 splits the calls into that many windows, each timed from an idle GPU, and
    returns the fastest window's time per call. A pause of the launching thread only lengthens a
    reading: while another thread of the process holds the GIL (a compile the transparent mode
    left running in the background; CPython hands it over every 5 ms by default) the GPU runs
    dry, and one 5 ms pause in a reading of 12.5 ms reads as a kernel 40% slower.
    With windows, it lengthens one window, which the minimum leaves out
    (benchmarks/b2b_under_compile_gpu.py measured both on a GPU)."""
    import torch  # on first use: importing triton_ext must not import torch

    if windows < 1 or calls < 1:
        raise ValueError(f"back_to_back_ms: calls and windows must be >= 1, found {calls} and {windows}")
    fn()
    torch.cuda.synchronize()
    per_window = max(1, math.ceil(calls / windows))
    best = math.inf
    for _ in range(windows):
        t0 = time.perf_counter()
        for _ in range(per_window):
            fn()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / per_window)
    return best * 1e3


def launch_cost_us(fn: Callable[[], Any], calls: int = 100) -> float:
    """CPU microseconds per ``fn()`` call while the GPU is busy (what the Python path costs)."""
    import torch  # on first use: importing triton_ext must not import torch

    fn()
    torch.cuda.synchronize()
    _sleep_ms(50.0)
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    cost = (time.perf_counter() - t0) * 1e6 / calls
    torch.cuda.synchronize()
    return cost
