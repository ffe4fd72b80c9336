"""Choosing among timed variants: pure functions over per-round timings (ms), shared by the
transparent mode (:mod:`triton_ext._auto`) and pass-aware autotuning (:mod:`triton_ext._autotune`).

A *round* times every variant (:func:`triton_ext._timing.interleaved_rounds`), so a drift of the
GPU's clock or of a neighbour's load between rounds hits all of a round's timings alike and
cancels in their per-round ratios. ``fast`` *beats* ``slow`` when the median of the per-round
ratios ``slow / fast`` is at least ``1 + margin`` and ``fast`` was faster in every round.
"""

from __future__ import annotations

import statistics
from typing import Hashable, Mapping, Sequence, TypeVar

__all__ = ["MARGIN", "LAUNCH_BOUND", "spread", "ratios", "beats", "pick", "confirm", "paired_ratios", "winners",
           "choose", "launch_bound", "choose_in_both"]

K = TypeVar("K", bound=Hashable)

#: A variant must beat another by at least this fraction (median of the per-round ratios).
MARGIN = 0.01

#: Back to back, a launch that takes at least this many times its kernel's GPU time (read with a
#: cold L2, so at least as long as the kernel runs back to back) is *launch-bound*.
LAUNCH_BOUND = 1.25


def spread(samples: Sequence[float]) -> float:
    """Run-to-run spread of per-round values: ``(max - min) / median``."""
    if not samples:
        raise ValueError("spread: no timings")
    mid = statistics.median(samples)
    return (max(samples) - min(samples)) / mid if mid > 0 else float("inf")


def ratios(base: Sequence[float], other: Sequence[float]) -> list[float]:
    """Per round, ``base / other`` (> 1: ``other`` was faster in that round)."""
    if len(base) != len(other):
        raise ValueError(f"ratios: {len(base)} rounds against {len(other)}; time the variants in the same rounds")
    return [b / t for b, t in zip(base, other) if t > 0]


def beats(fast: Sequence[float], slow: Sequence[float], margin: float = MARGIN) -> bool:
    """``fast`` is faster than ``slow`` by more than the noise: median of ``slow / fast`` per
    round at least ``1 + margin`` and above 1 in every round."""
    r = ratios(slow, fast)
    return bool(r) and statistics.median(r) >= 1 + margin and min(r) > 1


def pick(timings: Mapping[K, Sequence[float]], passes: Mapping[K, int], margin: float = MARGIN) -> tuple[K, K | None]:
    """``(candidate, baseline)`` from one set of rounds over every variant.

    The fastest variant (by median) is only a draw among noisy equals when others are not
    significantly slower, and a pass that does not help only adds risk; so the *candidate* is
    the variant with the fewest passes (``passes[v]``) among those the fastest does not beat,
    the fastest of them when several tie. The *baseline* is the fastest variant with fewer
    passes than the candidate (``None`` when there is none): the candidate must beat it again
    on fresh rounds (:func:`confirm`), since it won these rounds as the best of several draws."""
    if not timings:
        raise ValueError("pick: no variants")
    medians = {k: statistics.median(v) for k, v in timings.items()}
    fastest = min(medians, key=medians.__getitem__)
    tied = [k for k in timings if k == fastest or not beats(timings[fastest], timings[k], margin)]
    fewest = min(passes[k] for k in tied)
    candidate = min((k for k in tied if passes[k] == fewest), key=medians.__getitem__)
    simpler = [k for k in timings if passes[k] < passes[candidate]]
    baseline = min(simpler, key=medians.__getitem__) if simpler else None
    return candidate, baseline


def confirm(timings: Mapping[K, Sequence[float]], candidate: K, baseline: K, margin: float = MARGIN) -> K:
    """On fresh rounds of the two: the candidate if it beats the baseline again, else the baseline."""
    return candidate if beats(timings[candidate], timings[baseline], margin) else baseline


# -- against no pass (the transparent mode: variant "" is no pass) ----------------------------------


def paired_ratios(timings: Mapping[str, Sequence[float]], variant: str) -> list[float]:
    """Per round, no pass's time over ``variant``'s (> 1: the variant was faster in that round).

    Rounds are interleaved, so a drift of the GPU's clock or of a neighbour's load between rounds
    hits both timings of a round alike and cancels in their ratio."""
    return [b / t for b, t in zip(timings[""], timings[variant]) if t > 0]


def winners(timings: Mapping[str, Sequence[float]], margin: float = MARGIN) -> list[str]:
    """Variants that beat no pass (``""``) by more than the noise, fastest first.

    The noise is measured on the paired ratios ``r`` (:func:`paired_ratios`): ``v`` wins when
    ``median(r) >= 1 + margin`` and ``median(r) - 1 > median(r) - min(r)``, that is, its median
    gain exceeds the spread of its rounds below the median: it was faster than no pass in every
    round. A variant slower in any round, or faster by less than ``margin``, loses; so does one
    with fewer rounds than no pass (left out of the rounds after one it lost:
    ``interleaved_rounds(..., drop_slower_than="")``)."""
    if "" not in timings:
        raise ValueError("winners: the timings must include no pass (key '')")
    found: dict[str, float] = {}
    for name, samples in timings.items():
        if name != "" and len(samples) == len(timings[""]) and beats(samples, timings[""], margin):
            found[name] = statistics.median(paired_ratios(timings, name))
    return sorted(found, key=lambda n: -found[n])


def choose(timings: Mapping[str, Sequence[float]], margin: float = MARGIN) -> str:
    """The fastest winner (:func:`winners`), or ``""`` (no pass) when none wins."""
    found = winners(timings, margin)
    return found[0] if found else ""


def launch_bound(gpu_ms: float, back_to_back_ms: float, ratio: float = LAUNCH_BOUND) -> bool:
    """Whether launches back to back take ``ratio`` times the kernel's GPU time or more: the GPU
    waits for the CPU's next launch, so a faster kernel cannot shorten a launch, and the launch-size
    guard a kept variant runs behind only adds to it. Here the back-to-back readings of the variants
    are also the CPU's jitter: on the H100 (c956a04) two kernels taking 16-19 us a launch for 9-11 us
    of GPU time each read 1.02-1.12x faster with a variant in the decision's rounds and ran at
    0.983-0.986x. The transparent mode keeps no pass on such a kernel
    (:func:`triton_ext._variants.time_variants`); torch.compile's path, where a kept pass replaces
    the config's launcher and no guard is called, keeps :func:`choose_in_both`'s choice."""
    return back_to_back_ms >= ratio * gpu_ms


def choose_in_both(gpu: Mapping[str, Sequence[float]], back_to_back: Mapping[str, Sequence[float]],
                   margin: float = MARGIN) -> str:
    """The fastest variant that wins (:func:`winners`) both on GPU time and launched back to back
    (each from its own interleaved rounds, ``""`` = no pass in both), or ``""``.

    A pass can win GPU time and lose back to back (issue 27: an occupancy hint 1.2x faster in
    isolated GPU time, 2.4x slower per launch in a loop); such a pass is never kept."""
    in_b2b = set(winners(back_to_back, margin))
    return next((v for v in winners(gpu, margin) if v in in_b2b), "")
