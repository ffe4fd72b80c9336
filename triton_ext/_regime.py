"""A first launch's regime, read on the no-pass kernel before the transparent mode compiles any variant.

A launch is *launch-bound* (:func:`triton_ext._choice.launch_bound`) when, back to back, it takes at
least 1.25x its kernel's GPU time: the GPU waits for the CPU's next launch, and the mode keeps no pass
there (:func:`triton_ext._variants.time_variants`). So it reads the no-pass kernel first and, for such a
launch, compiles no variant: on the H100 at 01ea787, 36 of the corpus's 84 kernels were launch-bound,
and their first launch cost 1.16 s over a stock one (median), 0.47 s of it compiling variants that
could not be kept. With this step (H100, 114ac4b) the 34 it found launch-bound paid 0.06 s, the same
34 having paid 1.07 s at 01ea787 (docs/transparent-mode.md).
"""

from __future__ import annotations

from typing import Any, Callable

from . import _selection
from ._backup import ArgumentBackup
from ._choice import launch_bound
from ._decision import Decision
from ._settings import settings
from ._timing import back_to_back_ms, flush_buffer, gpu_time_ms
from ._variants import REP_MS, Tuner, back_to_back_reading, on_saved_arguments

__all__ = ["LONGEST_LAUNCH_BOUND_MS", "read_no_pass", "launch_bound_decision"]

#: A kernel whose one call takes this long on the GPU (ms) is not read further: it would need a
#: launch path of 1.25x that on the CPU to be launch-bound, where Triton's took at most 42 us a launch
#: on the corpus (H100 host, 01ea787; launch-bound kernels ran at most 22 us on the GPU). Reading it
#: would cost a first launch 26 calls or more (a 100 ms kernel: seconds) for nothing.
LONGEST_LAUNCH_BOUND_MS = 0.2


def one_call_ms(go: Callable[[], Any]) -> float:
    """GPU milliseconds of one call of ``go`` after one untimed call (CUDA events, no flush)."""
    import torch  # on first use: importing triton_ext must not import torch

    go()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    go()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def read_no_pass(auto: Tuner, run: Callable[..., Any], fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                 grid: Any, tensors: list[Any]) -> tuple[float, float] | None:
    """The no-pass kernel's GPU time and back-to-back time per launch (ms), read on this launch's own
    arguments, saved first and restored before each reading and after the last
    (:func:`triton_ext._variants.on_saved_arguments`). ``None`` for a kernel too long to be
    launch-bound (:data:`LONGEST_LAUNCH_BOUND_MS`), and where they cannot be read (arguments that cannot
    be saved, no GPU, a launch that fails): the decision goes on as without this step and meets the
    same cause there, which records it."""
    readings: list[float] = []

    def read(backup: ArgumentBackup) -> None:
        launch_kwargs = auto.launch_kwargs(fn, "", kwargs)
        assert launch_kwargs is not None  # no pass applies to every launch

        def go() -> Any:
            return run(fn, *args, grid=grid, warmup=False, **launch_kwargs)

        with _selection.using(auto.selection("")):
            backup.restore()
            if one_call_ms(go) >= LONGEST_LAUNCH_BOUND_MS:
                return
            backup.restore()
            gpu = gpu_time_ms(go, rep_ms=REP_MS, flush=flush_buffer())
            calls, windows = back_to_back_reading(gpu)
            fastest = float("inf")
            for _ in range(2):  # the faster of two: a pause of this thread lengthens one reading only
                backup.restore()
                fastest = min(fastest, back_to_back_ms(go, calls, windows))
        readings.extend((gpu, fastest))

    try:
        on_saved_arguments(tensors, read)
    except Exception:  # noqa: BLE001 (see the docstring: time_variants meets and records it)
        return None
    return (readings[0], readings[1]) if readings else None


def launch_bound_decision(auto: Tuner, run: Callable[..., Any], fn: Any, args: tuple[Any, ...],
                          kwargs: dict[str, Any], grid: Any, tensors: list[Any], name: str, specialization: str,
                          size: str) -> Decision | None:
    """The decision for a launch-bound launch (no pass, its two readings), or ``None`` to go on and
    compile the variants (not launch-bound, not read: :func:`read_no_pass`, or ``TRITON_EXT_AUTO_LAUNCH_BOUND=0``)."""
    if not settings.auto_launch_bound:
        return None
    regime = read_no_pass(auto, run, fn, args, kwargs, grid, tensors)
    if regime is None or not launch_bound(*regime):
        return None
    return Decision(name, "", {"": regime[0]}, back_to_back_ms={"": regime[1]}, specialization=specialization,
                    launch_size=size, launch_bound=True)
