"""GPU time of a launch with the CPU's launch cost kept out (the transparent mode, tune, benchmarks).

``triton.testing.do_bench`` records an event pair around each call after an L2 flush. When a
kernel and the flush together take less GPU time than the Python that queues them (a 10 us
kernel behind a 60 us flush, launched through a wrapper or an autotuner), the GPU waits for the
CPU between the events and the wait is counted: seen on the H200 as 10-95% round-to-round
spreads and 0.4x "slowdowns" of the very same kernel launched through a longer Python path.
:func:`gpu_time_ms` queues every call behind a GPU sleep that outlasts the CPU's queueing, so
the GPU never waits and each event pair brackets only the kernel.
"""

from __future__ import annotations

import statistics
import threading
import time
from typing import Any, Callable

__all__ = ["gpu_time_ms", "launch_cost_us"]

#: Calls per measurement at most: with 4 queued operations per call this stays below the ~1024
#: operations a CUDA stream queues before the CPU blocks (the backlog must cover every call).
MAX_CALLS = 200

_calibration_lock = threading.Lock()
_cycles_per_ms: dict[int, float] = {}


def _sleep_ms(ms: float) -> None:
    """Keep the current stream's GPU busy for about ``ms`` (``torch.cuda._sleep`` spins cycles)."""
    import torch

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


def gpu_time_ms(fn: Callable[[], Any], rep_ms: float = 25.0, max_calls: int = MAX_CALLS) -> float:
    """Median GPU time of ``fn()`` in ms: an L2 flush before each call (as ``do_bench``), every
    call queued behind a GPU sleep longer than the CPU takes to queue them all."""
    import torch
    from triton import runtime

    driver = runtime.driver.active
    cache = driver.get_empty_cache_for_benchmark()
    fn()
    torch.cuda.synchronize()
    # Estimate the GPU time and the CPU (queueing) time of one flush + call.
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
    calls = max(5, min(max_calls, int(rep_ms / gpu_ms)))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(calls)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(calls)]
    _sleep_ms(min(2.0 * calls * cpu_ms + 2.0, 1000.0))
    for i in range(calls):
        driver.clear_cache(cache)
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


def launch_cost_us(fn: Callable[[], Any], calls: int = 100) -> float:
    """CPU microseconds per ``fn()`` call while the GPU is busy (what the Python path costs)."""
    import torch

    fn()
    torch.cuda.synchronize()
    _sleep_ms(50.0)
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    cost = (time.perf_counter() - t0) * 1e6 / calls
    torch.cuda.synchronize()
    return cost
