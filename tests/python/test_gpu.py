"""On a machine with a GPU: the in-memory kernel cache of @triton.jit follows the enabled set.

runtime/jit.py asks the hook for its hash on every launch; a kernel compiled
with a pass enabled must not be handed back once it is disabled (and back).
Skipped without an active GPU driver.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import triton
import triton.language as tl

import triton_ext


def gpu_available() -> bool:
    try:
        return triton.runtime.driver.active.get_current_target().backend in ("cuda", "hip")
    except Exception:
        return False


pytestmark = pytest.mark.skipif(not gpu_available(), reason="needs a GPU")


@triton.jit
def scalar_kernel(n, BLOCK: tl.constexpr):
    # No pointers, so no tensor library is needed to launch it.
    x = tl.arange(0, BLOCK) + n
    tl.static_assert(BLOCK > 0)
    if tl.sum(x, axis=0) == -1:
        tl.device_print("never", n)


def test_jit_launches_do_not_reuse_a_stale_kernel(registry: Path) -> None:
    def launch() -> bool:
        kernel = scalar_kernel[(1,)](3, BLOCK=32)
        triton.runtime.driver.active.synchronize() if hasattr(triton.runtime.driver.active, "synchronize") else None
        return "tt.func public @foo" in kernel.asm["ttir"]

    assert not launch()
    triton_ext.enable("plugin")
    assert launch()
    triton_ext.disable()
    assert not launch()
    with triton_ext.enabled("plugin"):
        assert launch()
    assert not launch()


def test_async_compile_mode_compiles_with_the_scoped_passes(registry: Path) -> None:
    # Under AsyncCompileMode the JIT compiles on an executor thread; the kernel it caches under the
    # key that names the pass must have been compiled with the pass (a later synchronous launch in
    # the same enabled() block gets exactly that kernel).
    from concurrent.futures import ThreadPoolExecutor

    from triton.runtime._async_compile import AsyncCompileMode

    triton_ext.enable("plugin")  # installs the hook
    triton_ext.disable()
    with ThreadPoolExecutor(max_workers=2) as pool:
        with AsyncCompileMode(pool):
            with triton_ext.enabled("plugin"):
                scalar_kernel.warmup(7, BLOCK=64, grid=(1,))
            scalar_kernel.warmup(7, BLOCK=128, grid=(1,))
    with triton_ext.enabled("plugin"):
        assert "tt.func public @foo" in scalar_kernel[(1,)](7, BLOCK=64).asm["ttir"]
    assert "tt.func public @foo" not in scalar_kernel[(1,)](7, BLOCK=128).asm["ttir"]


def test_gpu_time_keeps_the_cpu_launch_cost_out() -> None:
    # A one-block kernel launched plainly and through a wrapper that burns 200 us of CPU per
    # launch: do_bench counts the GPU's wait for the CPU, gpu_time_ms (what the transparent mode,
    # tune and the pass-selection benchmark time with) gives the kernel's own time for both.
    import time

    from triton_ext.testing import gpu_time_ms, launch_cost_us

    def plain() -> None:
        scalar_kernel[(1,)](3, BLOCK=32)

    def slow() -> None:
        end = time.perf_counter() + 200e-6
        while time.perf_counter() < end:
            pass
        plain()

    fast_ms, slow_ms = gpu_time_ms(plain), gpu_time_ms(slow)
    assert slow_ms < fast_ms * 1.5 + 0.002, (fast_ms, slow_ms)
    assert triton.testing.do_bench(slow, return_mode="median") > slow_ms + 0.1  # the wait do_bench counts
    assert launch_cost_us(slow) >= 200 > launch_cost_us(plain)


def test_interleaved_rounds_time_one_kernel_alike_under_every_label() -> None:
    # Three labels launching the very same ~5 us kernel: each round reads them in order and then
    # in reverse order, so the alternation seen between consecutive gpu_time_ms readings on the
    # H200 (about 0.5 us, up to 10% of such a kernel) cancels and the labels agree per round.
    from triton_ext._choice import ratios
    from triton_ext._timing import flush_buffer, interleaved_rounds
    from triton_ext.testing import gpu_time_ms

    flush = flush_buffer()
    raw: list[tuple[str, float]] = []
    got = interleaved_rounds(["a", "b", "c"], lambda _: gpu_time_ms(lambda: scalar_kernel[(1,)](3, BLOCK=32),
                                                                    rep_ms=12.5, flush=flush), 4, readings=raw)
    worst = max(abs(r - 1) for label in ("b", "c") for r in ratios(got["a"], got[label]))
    print("per-round ms", got, "readings", [round(v * 1e3, 2) for _, v in raw])
    assert worst < 0.05, (worst, got)  # the old order read such kernels up to 10% apart



def test_a_reading_plan_found_once_serves_later_readings_alike() -> None:
    # The transparent mode reads each variant 8 or more times; only the first reading estimates the
    # calls per reading and the CPU's queueing time (ReadingPlan), later ones reuse them. Readings
    # with the plan must agree with readings that estimate afresh, in interleaved order.
    from triton_ext.testing import ReadingPlan, flush_buffer, gpu_time_ms, interleaved_rounds

    flush, plan = flush_buffer(), ReadingPlan()

    def launch() -> None:
        scalar_kernel[(1,)](3, BLOCK=32)

    got = interleaved_rounds(["fresh", "planned"], lambda label: gpu_time_ms(
        launch, rep_ms=12.5, flush=flush, plan=plan if label == "planned" else None), 3)
    calls = plan.calls
    assert calls >= 5 and plan.cpu_ms > 0, plan
    gpu_time_ms(launch, rep_ms=12.5, flush=flush, plan=plan)
    assert plan.calls == calls  # reused, not estimated again
    fresh, planned = sorted(got["fresh"])[1], sorted(got["planned"])[1]
    print("median ms", fresh, planned, plan)
    assert abs(planned / fresh - 1) < 0.1, got


def test_back_to_back_windows_leave_a_pause_of_the_launching_thread_out() -> None:
    # One pause of the launching thread (here 4 ms; in the transparent mode, a compile left running
    # in the background holding the GIL) lengthens a one-window reading of 100 launches by 40 us a
    # launch; with four windows it lengthens one window, which the minimum leaves out.
    import time

    from triton_ext.testing import back_to_back_ms

    count = [0]

    def paused_once() -> None:
        count[0] += 1
        if count[0] == 10:  # inside the first window (25 launches after the warm-up call)
            time.sleep(0.004)
        scalar_kernel[(1,)](3, BLOCK=32)

    plain = min(back_to_back_ms(lambda: scalar_kernel[(1,)](3, BLOCK=32), 100) for _ in range(3))
    one = back_to_back_ms(paused_once, 100)
    count[0] = 0
    four = back_to_back_ms(paused_once, 100, windows=4)
    print("ms per launch: plain", plain, "one window", one, "four windows", four)
    assert one > plain + 0.03  # the pause, spread over 100 launches
    assert four < plain + 0.02
