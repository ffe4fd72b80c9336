"""The transparent mode's decision rule on the JIT path, where it keeps no pass
(:func:`triton_ext._variants.time_variants`): no variant left after the launch screening, no
variant winning the first rounds, a winner losing the confirming rounds. Each must leave the
decision at no pass, with no error and only the timings the code takes up to that point
(``timings_ms``, ``confirm_ms``, ``back_to_back_ms``), and time nothing further.

No GPU here: the launches are real calls of a stand-in for ``JITFunction.run`` on the launch's
CPU tensors (the backup and the output check are the mode's own), and only the GPU times are
given, per variant and per step (as in ``tests/python/test_auto.py``)."""

from __future__ import annotations

import time
from typing import Any, Callable

import pytest

from tests.python.test_auto import _SlowCombination
from triton_ext import _selection, _variants
from triton_ext._backup import ArgumentBackup
from triton_ext._timing import windows_for

#: The variants of every test: no pass and two candidates.
VARIANTS = ("", "grid_swizzle", "loop_split")


def _decide(monkeypatch: pytest.MonkeyPatch, steps: list[dict[str, float]],
            effect: Callable[[str, tuple[Any, ...]], None] | None = None,
            args: tuple[Any, ...] = ()) -> tuple[_variants.Decision, list[str], list[str]]:
    """``time_variants`` over :data:`VARIANTS` with GPU times ``steps[i][variant]`` in the i-th
    timing step (first rounds, confirming rounds, back to back; a step past the list reads the
    last one); ``effect(variant, args)`` is what
    a launch of ``variant`` does to the arguments. Returns the decision, the variants launched
    in order and the steps each reading was taken in ("rounds", "confirm", "back to back")."""
    auto = _SlowCombination()
    auto.release.set()
    selections = {v: _selection.Selection() for v in VARIANTS}
    auto.selection = lambda variant: selections[variant]  # type: ignore[method-assign]
    launched: list[str] = []
    step: list[int] = []
    taken: list[str] = []

    def current() -> str:
        return next(v for v, s in selections.items() if _selection.current() is s)

    def run(fn: Any, *call_args: Any, **_: Any) -> None:  # JITFunction.run of the current set
        launched.append(current())
        if effect is not None:
            effect(current(), call_args)

    def reading(go: Any, **_: Any) -> float:  # one real launch per reading, the time is given
        go()
        taken.append(("rounds", "confirm", "back to back")[step[-1]])
        return steps[min(step[-1], len(steps) - 1)][current()]  # later steps: the last given

    real_rounds = _variants.interleaved_rounds

    def rounds(labels: Any, time_one: Any, n: int, **kwargs: Any) -> dict[str, list[float]]:
        step.append(len(step))
        return real_rounds(labels, time_one, n, **kwargs)

    monkeypatch.setattr(_variants, "flush_buffer", lambda: None)  # no GPU here
    monkeypatch.setattr(_variants, "gpu_time_ms", reading)
    def back_to_back(go: Any, calls: int, windows: int) -> float:
        # In windows (the fastest kept): a compile left running in the background must not read
        # as a slower kernel.
        assert windows == windows_for(calls, 1.0) == 4, (calls, windows)  # no pass: 1 ms in every test
        return reading(go)

    monkeypatch.setattr(_variants, "back_to_back_ms", back_to_back)
    monkeypatch.setattr(_variants, "interleaved_rounds", rounds)
    kernels = {v: type("Kernel", (), {"asm": {"ptx": v}})() for v in VARIANTS}
    decision = _variants.Decision("k", "", applicable=["grid_swizzle", "loop_split"])
    backup = ArgumentBackup.of(args, copies=2)
    _variants.time_variants(auto, run, object(), 0, args, {}, (1,), kernels, decision,
                            backup, time.perf_counter() + 60.0)
    return decision, launched, taken


def test_no_variant_left_after_the_screening_keeps_no_pass_untimed(monkeypatch: pytest.MonkeyPatch) -> None:
    # Guard: _variants.py "if not decision.applicable: return" after screen_variants. Without it
    # the mode would spend every round timing no pass against nothing on the user's first launch.
    import torch
    from triton.runtime.errors import OutOfResources

    def effect(variant: str, args: tuple[Any, ...]) -> None:
        x, out = args
        if variant == "grid_swizzle":  # its binary does not fit the GPU
            raise OutOfResources(262208, 232448, "shared memory")
        out.copy_(x * 3)
        if variant == "loop_split":  # wrong in its first element
            out[0] = 1.0

    x, out = torch.arange(64, dtype=torch.float32), torch.zeros(64)
    decision, launched, taken = _decide(monkeypatch, [{"": 1.0, "grid_swizzle": 0.5, "loop_split": 0.5}],
                                        effect, (x, out))
    assert list(decision.failed) == ["grid_swizzle"]
    assert decision.changed_outputs == {"loop_split": "2 of 256 bytes differ from the no-pass kernel's outputs"}
    assert decision.applicable == [] and decision.choice == "" and decision.error is None
    assert decision.timings_ms == {} and decision.spreads == {} and decision.confirm_ms == {}
    assert launched == ["", "", "grid_swizzle", "loop_split"] and taken == []


def test_no_winner_in_the_first_rounds_keeps_no_pass_without_confirming(monkeypatch: pytest.MonkeyPatch) -> None:
    # Guard: _variants.py "if not finalists: return". Without it the confirming rounds would time
    # no pass alone, and confirm_ms would claim a confirmation that never compared anything.
    decision, _, taken = _decide(monkeypatch, [{"": 1.0, "grid_swizzle": 1.0, "loop_split": 1.2}])
    assert decision.choice == "" and decision.error is None and decision.keep_on_disk
    assert decision.timings_ms == {"": 1.0, "grid_swizzle": 1.0, "loop_split": 1.2}
    assert decision.confirm_ms == {} and decision.back_to_back_ms == {}
    # Neither variant was faster than no pass in the first round, so neither could win (a winner is
    # faster in every round): the rounds stop after it.
    assert set(taken) == {"rounds"} and len(taken) == 2 * len(VARIANTS)


def test_a_winner_that_loses_the_confirming_rounds_is_not_timed_back_to_back(monkeypatch: pytest.MonkeyPatch) -> None:
    # Guard: _variants.py "if not kept: return". A first-rounds win that fresh rounds do not repeat
    # was noise: no pass, with the confirming medians saying so and no back-to-back timing.
    decision, _, taken = _decide(monkeypatch, [{"": 1.0, "grid_swizzle": 0.8, "loop_split": 1.1},
                                                      {"": 1.0, "grid_swizzle": 1.0}])
    assert decision.choice == "" and decision.error is None and decision.keep_on_disk
    assert decision.timings_ms == {"": 1.0, "grid_swizzle": 0.8, "loop_split": 1.1}
    assert decision.confirm_ms == {"": 1.0, "grid_swizzle": 1.0}
    assert decision.back_to_back_ms == {}
    # grid_swizzle tied no pass in the first confirming round: no second one.
    assert taken.count("confirm") == 2 * 2 and "back to back" not in taken
