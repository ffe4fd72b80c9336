"""The transparent mode's output check (:mod:`triton_ext._outputs`): a variant whose launch leaves
other outputs than the no-pass kernel's is dropped before anything is timed.

The check works on the launch's memory (torch tensors on the CPU here, as on the GPU) and on a
``launch`` callable; the launches below are Python functions writing those tensors, each standing
for a kernel: the right one, a wrong one, one whose float sums land in a run-dependent order (as
with atomics). On the GPU, ``benchmarks/auto_safety_gpu.py`` (``wrong_pass``) runs it with a real
kernel and a real pass that computes a wrong result (tests/fixtures/WrongResult.cpp)."""

from __future__ import annotations

import time
from typing import Any, Callable

import pytest
import torch

from triton_ext import _outputs, _selection, _variants
from triton_ext._backup import ArgumentBackup
from triton_ext._outputs import ENVELOPE, OutputCheck, OutputsUnverifiable


def _check(tensors: list[torch.Tensor], stock: Callable[[], Any]) -> OutputCheck:
    return OutputCheck.of(ArgumentBackup.of(tensors), tensors, stock)


def _variant(check: OutputCheck, launch: Callable[[], Any]) -> str | None:
    check.backup.restore()
    launch()
    return check.differs()


def test_a_variant_must_leave_the_no_pass_outputs_bit_for_bit() -> None:
    x, out = torch.arange(257, dtype=torch.float32) / 7, torch.zeros(257)
    x[3] = 0.0

    def stock() -> None:
        out.copy_(x * 2)

    check = _check([x, out], stock)
    assert check.loose == {} and _variant(check, stock) is None
    assert _variant(check, lambda: out.copy_(x + x)) is None  # the same bits another way

    def one_ulp_more() -> None:
        stock()
        out[200] = torch.nextafter(out[200], torch.tensor(float("inf")))

    assert _variant(check, one_ulp_more) == "1 of 1028 bytes differ from the no-pass kernel's outputs"

    def negative_zero() -> None:  # equal as numbers, not as bits: a pass promises the bits
        stock()
        out[3] = -0.0

    assert _variant(check, negative_zero) == "1 of 1028 bytes differ from the no-pass kernel's outputs"

    def writes_an_input() -> None:
        stock()
        x[0] += 1

    assert _variant(check, writes_an_input) == "2 of 1028 bytes differ from the no-pass kernel's outputs"


def test_the_comparison_goes_slice_by_slice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_outputs, "_CHUNK", 16)  # 64 slices of 16 bytes
    out = torch.zeros(256, dtype=torch.float32)
    check = _check([out], lambda: out.fill_(1.0))
    assert _variant(check, lambda: out.fill_(1.0)) is None

    def last_slice_wrong() -> None:
        out.fill_(1.0)
        out[-1] = 2.0

    assert _variant(check, last_slice_wrong) is not None


def _atomic_sum(x: torch.Tensor, out: torch.Tensor, error: float = 0.0) -> Callable[[], None]:
    """A float sum whose last bits depend on the order the programs arrive in (as with atomics):
    each run adds a fresh rounding-sized perturbation."""
    def launch() -> None:
        noise = torch.randn(out.shape, dtype=torch.float64) * 1e-7
        out.copy_((x.double() * 3 + noise + error).float())
    return launch


def test_where_no_pass_itself_differs_run_to_run_floats_get_an_envelope() -> None:
    torch.manual_seed(0)
    x, out = torch.randn(4096), torch.zeros(4096)
    check = _check([x, out], _atomic_sum(x, out))
    assert list(check.loose) == [1] and len(check.uncertain) == 1
    assert 0 < check.uncertain[0].tolerance < 1e-5
    assert _variant(check, _atomic_sum(x, out)) is None  # one more order of the same sum
    wrong = _variant(check, _atomic_sum(x, out, error=1e-3))
    assert wrong is not None and f"by more than {ENVELOPE:g} times its own run-to-run difference" in wrong


def test_bytes_no_floating_argument_covers_cannot_move_run_to_run() -> None:
    counts = torch.zeros(64, dtype=torch.int32)

    def racy_counter() -> None:  # e.g. slots handed out by an atomic counter, in arrival order
        counts.copy_(torch.randperm(64, dtype=torch.int32))

    with pytest.raises(OutputsUnverifiable, match="differ between two runs outside its floating arguments"):
        _check([counts], racy_counter)


def test_a_float_argument_that_starts_off_the_copys_alignment_is_realigned() -> None:
    # One storage: two uint8 flags at bytes 2-3, then float32 values from byte 4 on. The backup
    # merges them into one region starting at byte 2; the values start at byte 2 of its copy,
    # where no float32 view can start, so they are compared from a realigned copy.
    base = torch.zeros(65, dtype=torch.float32)
    flags, values = base.view(torch.uint8)[2:4], base[1:]
    x = torch.randn(64)
    check = _check([flags, values], lambda: (flags.fill_(1), _atomic_sum(x, values)()))
    assert len(check.backup.regions) == 1 and check.backup.regions[0][0].storage_offset() == 2
    assert len(check.uncertain) == 1 and check.uncertain[0].tensor is values
    assert _variant(check, lambda: (flags.fill_(1), _atomic_sum(x, values)())) is None
    assert _variant(check, lambda: (flags.fill_(2), _atomic_sum(x, values)())) == \
        "bytes the no-pass kernel writes the same in every run differ from its outputs"
    assert _variant(check, lambda: (flags.fill_(1), _atomic_sum(x, values, error=1.0)())) is not None


class _Mode:
    """What :func:`triton_ext._variants.time_variants` needs of the mode: a selection per variant
    (told apart by identity, as the launches below find theirs)."""

    def __init__(self, variants: list[str]) -> None:
        self.selections = {v: _selection.Selection() for v in variants}
        self.variants = list(self.selections.items())
        self.pending: list[Any] = []

    def selection(self, variant: str) -> Any:
        return self.selections[variant]

    def variant_kernel(self, fn: Any, variant: str, *_: Any) -> Any:
        return type("Kernel", (), {"asm": {"ptx": variant}})()

    def launch_kwargs(self, fn: Any, variant: str, kwargs: dict[str, Any]) -> dict[str, Any]:
        return kwargs

    def current(self) -> str:
        return next(v for v, s in self.selections.items() if _selection.current() is s)


def _time(mode: _Mode, run: Callable[..., Any], args: tuple[Any, ...], applicable: list[str],
          times: dict[str, float], monkeypatch: pytest.MonkeyPatch) -> _variants.Decision:
    """``time_variants`` on real tensors, with given GPU-time readings (no GPU here)."""
    def reading(go: Any, **_: Any) -> float:
        go()
        return times[mode.current()]

    monkeypatch.setattr(_variants, "flush_buffer", lambda: None)
    monkeypatch.setattr(_variants, "gpu_time_ms", reading)
    monkeypatch.setattr(_variants, "back_to_back_ms", lambda go, calls, windows: reading(go))
    kernels = {v: mode.variant_kernel(None, v) for v in ["", *applicable]}
    decision = _variants.Decision("k", "", applicable=list(applicable))
    backup = ArgumentBackup.of(args)
    _variants.time_variants(mode, run, object(), 0, args, {}, (1,), kernels, decision,
                            backup, time.perf_counter() + 60.0)
    return decision


def test_the_fastest_variant_is_dropped_when_it_changes_an_output(monkeypatch: pytest.MonkeyPatch) -> None:
    mode = _Mode(["", "grid_swizzle", "loop_split"])
    x, out = torch.arange(128, dtype=torch.float32), torch.zeros(128)
    launched: list[str] = []

    def run(fn: Any, x: torch.Tensor, out: torch.Tensor, **_: Any) -> None:  # JITFunction.run
        launched.append(mode.current())
        out.copy_(x * 2)
        if mode.current() == "loop_split":  # a miscompiled last element: 255.0 for 254.0, one byte
            out[-1] += 1

    decision = _time(mode, run, (x, out), ["grid_swizzle", "loop_split"],
                     {"": 1.0, "grid_swizzle": 0.8, "loop_split": 0.5}, monkeypatch)
    assert decision.changed_outputs == {"loop_split": "1 of 512 bytes differ from the no-pass kernel's outputs"}
    assert decision.applicable == ["grid_swizzle"] and decision.choice == "grid_swizzle"
    assert "loop_split" not in decision.timings_ms and launched.count("loop_split") == 1
    assert launched[:2] == ["", ""]  # no pass twice first: what it leaves, and whether it varies
    assert decision.record()["changed_outputs"] == decision.changed_outputs


def test_a_wrong_combination_of_two_winners_is_not_a_finalist(monkeypatch: pytest.MonkeyPatch) -> None:
    combo = "grid_swizzle+loop_split"
    mode = _Mode(["", "grid_swizzle", "loop_split", combo])
    x, out = torch.randn(128), torch.zeros(128)

    def run(fn: Any, x: torch.Tensor, out: torch.Tensor, **_: Any) -> None:
        out.copy_(x * 2 if mode.current() != combo else x * 2 + 1)

    decision = _time(mode, run, (x, out), ["grid_swizzle", "loop_split"],
                     {"": 1.0, "grid_swizzle": 0.8, "loop_split": 0.9, combo: 0.5}, monkeypatch)
    assert list(decision.changed_outputs) == [combo]
    assert decision.choice == "grid_swizzle" and set(decision.confirm_ms) == {"", "grid_swizzle", "loop_split"}


def test_a_kernel_whose_outputs_cannot_be_checked_keeps_no_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    mode = _Mode(["", "grid_swizzle"])
    slots = torch.zeros(32, dtype=torch.int64)

    def run(fn: Any, slots: torch.Tensor, **_: Any) -> None:
        slots.copy_(torch.randperm(32))

    decision = _time(mode, run, (slots,), ["grid_swizzle"], {"": 1.0, "grid_swizzle": 0.5}, monkeypatch)
    assert decision.choice == "" and decision.timings_ms == {}
    assert decision.error is not None and decision.error.startswith(
        "no pass kept: the no-pass kernel's outputs differ between two runs outside its floating arguments")
    assert not decision.keep_on_disk
