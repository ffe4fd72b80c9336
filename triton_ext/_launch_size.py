"""Which launches a transparent-mode choice holds for: those of the size it was decided at (issue 27.3).

The JIT's key (the specialization) does not hold the grid, so one decision would serve every
launch of a specialization, whatever its size. A variant that wins where the launch fills the GPU
with waves of programs can lose where there are fewer programs than SMs: on the H100
(2026-12-07, b1d7a06) vLLM's unified attention chose ``num_stages_minus_1`` at a prefill launch
(about 8,200 programs, 1.036x) and the same specialization launched at decode (64 programs) ran it
at 0.947x. With one program per SM nothing hides a program's memory latency but its own pipeline
stages, and the dropped stage is missed; at prefill the shared memory it freed let more programs
share an SM. The boundary is a property of the GPU, not of a kernel: at least one program per SM
(``waves``) or not (``under_one_wave``).

So a chosen variant is placed behind :class:`SizeGuardedKernel`: launches of the size class the
decision timed run the variant, the others the no-pass kernel (never slower than stock there:
it is stock). Its cost is one Python call per launch, only for specializations where a variant
was chosen (``benchmarks/auto_overhead.py``); a no-pass decision places the stock kernel itself.
That call is paid in the decision's back-to-back readings too (:func:`guarded_while_timed`): on
launch-bound kernels it can cost more than a pass wins.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Iterator, Mapping, Sequence

__all__ = ["UNDER_ONE_WAVE", "WAVES", "SIZES", "programs", "size_class", "sm_count", "launch_size",
           "SizeGuardedKernel", "guarded_while_timed"]

UNDER_ONE_WAVE = "under_one_wave"  # fewer programs than the GPU has SMs
WAVES = "waves"  # at least one program per SM
SIZES = (UNDER_ONE_WAVE, WAVES)


def programs(grid: Sequence[int]) -> int:
    """Programs a launch of ``grid`` (1 to 3 dimensions, as ``JITFunction.run`` reads it) starts."""
    if not 1 <= len(grid) <= 3:
        raise ValueError(f"a grid has 1 to 3 dimensions, not {len(grid)}: {tuple(grid)!r}")
    count = 1
    for n in grid:
        count *= int(n)
    return count


def size_class(count: int, sms: int) -> str:
    """``under_one_wave`` for fewer than ``sms`` programs, else ``waves``."""
    return UNDER_ONE_WAVE if count < sms else WAVES


@functools.lru_cache(maxsize=None)
def sm_count(device: int) -> int:
    """The device's SM count, as Triton's driver reports it."""
    from triton.runtime.driver import driver  # on first use: importing triton_ext must not import Triton

    count = int(driver.active.utils.get_device_properties(device)["multiprocessor_count"])
    if count < 1:
        raise ValueError(f"device {device} reports {count} SMs")
    return count


def launch_size(grid: Any, bound_args: Mapping[str, Any], device: int) -> str:
    """The size class of a launch, from ``JITFunction.run``'s ``grid`` (a sequence, or a callable
    of the bound arguments, called as ``run`` calls it) and the device."""
    return size_class(programs(grid(bound_args) if callable(grid) else grid), sm_count(device))


class SizeGuardedKernel:
    """The kernel the JIT's cache holds for a specialization where the mode chose a variant.

    ``JITFunction.run`` launches a cached kernel as ``kernel.run(grid_0, grid_1, grid_2, stream,
    kernel.function, kernel.packed_metadata, launch_metadata, enter_hook, exit_hook, *args)``:
    :meth:`run` launches ``chosen`` when the grid is of the decided ``size`` and ``stock``
    otherwise, each with its own function handle and metadata (the ones passed are ignored).
    Nothing is stored per launch, so threads launching at different sizes cannot mix the two.
    Anything else (``asm``, ``metadata``, launch-enter hooks' metadata) is ``chosen``'s."""

    function = None  # run() passes each side's own; Triton reads these before calling run()
    packed_metadata = None

    def __init__(self, chosen: Any, stock: Any, size: str, sms: int) -> None:
        if size not in SIZES:
            raise ValueError(f"unknown launch size {size!r}; one of {SIZES}")
        self.chosen, self.stock, self.size, self.sms = chosen, stock, size, sms
        self._under = size == UNDER_ONE_WAVE
        self.launch_metadata = chosen.launch_metadata  # None unless a launch-enter hook is set

    def side(self, grid_0: int, grid_1: int = 1, grid_2: int = 1) -> Any:
        """The kernel a launch of this grid runs."""
        return self.chosen if (grid_0 * grid_1 * grid_2 < self.sms) is self._under else self.stock

    def run(self, grid_0: int, grid_1: int, grid_2: int, stream: int, _function: Any, _packed: Any,
            *rest: Any) -> Any:
        # side() written out: every launch of the specialization runs this, one call fewer counts.
        side = self.chosen if (grid_0 * grid_1 * grid_2 < self.sms) is self._under else self.stock
        launch = side.run  # loads the binary on first use, which sets side.function
        return launch(grid_0, grid_1, grid_2, stream, side.function, side.packed_metadata, *rest)

    def __getitem__(self, grid: Sequence[int]) -> Any:  # CompiledKernel's own kernel[grid](*args)
        return self.side(*grid)[grid]

    def __getattr__(self, name: str) -> Any:
        chosen = self.__dict__.get("chosen")  # not yet set while copy or pickle builds one
        if chosen is None or name.startswith("__"):
            raise AttributeError(name)
        return getattr(chosen, name)

    def __repr__(self) -> str:
        return f"SizeGuardedKernel({getattr(self.chosen, 'name', '?')}: chosen at {self.size}, {self.sms} SMs)"


@contextlib.contextmanager
def guarded_while_timed(fn: Any, device: int, chosen: Sequence[Any], stock: Any, size: str) -> Iterator[None]:
    """While the kept variants (``chosen``, compiled kernels) are timed back to back, the JIT's cache
    holds each behind the guard it would be placed behind, so their readings pay the guard's call
    as their launches will. The readings launch at the decision's ``size``: ``stock`` is never run.
    On the H100 (6a14be5, 2026-12-07) readings without it had kept a programmatic-dependent-launch
    pass on seven launch-bound kernels (about 16 us a launch; 1.02-1.05x back to back at a29d999,
    before the guard), and behind it five of them ran at 0.987-0.996x."""
    caches = getattr(fn, "device_caches", {})
    cache = caches[device][0] if device in caches else {}  # `in`: the JIT's defaultdict adds nothing
    swapped = {key: kernel for key, kernel in cache.items() if any(kernel is c for c in chosen)}
    if size in SIZES:
        for key, kernel in swapped.items():
            cache[key] = SizeGuardedKernel(kernel, stock, size, sm_count(device))
    try:
        yield
    finally:
        cache.update(swapped)
