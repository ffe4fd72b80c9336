"""The pairing of benchmarks/auto_mode_gpu.py, whose readings the transparent mode's documented
numbers come from: ABBA order, the mode active in exactly its own slots, a slot's value the median
of its readings. The readings here are the slot's own position (no GPU needed); the mode is the
real one, activated and put back by the harness."""

from __future__ import annotations

import pytest

from triton_ext import _auto


def test_rounds_are_abba_and_each_slot_is_the_median_of_its_readings() -> None:
    from benchmarks.auto_mode_gpu import _paired

    seen: list[str] = []
    activations: list[object] = []

    def read() -> float:
        mode = _auto.active()
        if mode is not None and (not activations or activations[-1] is not mode):
            activations.append(mode)
        first_of_slot = len(seen) % 3 == 0
        seen.append("A" if mode is not None else "S")
        # The first reading of a slot is slow (an activation's recompile, a host hiccup): the
        # slot's median must leave it out. Otherwise the mode reads 10, stock 11.
        return 1000.0 if first_of_slot else (10.0 if mode is not None else 11.0)

    result = _paired(["loop_split"], read, rounds=2, readings=3)
    assert "".join(seen) == "".join(slot * 3 for slot in "SAASASSA")
    assert len(activations) == 4  # one activation per mode slot, its readings inside it
    assert result["ratios"] == [pytest.approx(1.1), pytest.approx(1.1)]
    assert result["ratio"] == pytest.approx(1.1)
    assert result["stock"] == [11.0] * 4 and result["auto"] == [10.0] * 4
    assert _auto.active() is None  # put back after every slot


def test_one_reading_per_slot_keeps_every_reading() -> None:
    from benchmarks.auto_mode_gpu import _paired

    values = iter([4.0, 2.0, 2.0, 4.0])  # stock, mode, mode, stock
    result = _paired(["loop_split"], lambda: next(values), rounds=1)
    assert result["stock"] == [4.0, 4.0] and result["auto"] == [2.0, 2.0]
    assert result["ratio"] == pytest.approx(2.0)


def test_forget_compiled_kernels_empties_every_jit_functions_cache() -> None:
    # What every slot of the pairing starts with, stock ones included (what activating the mode does).
    import triton

    from triton_ext.testing import forget_compiled_kernels

    @triton.jit
    def kernel(x):  # noqa: ANN001 - a Triton argument
        pass

    compiled = object()
    kernel.device_caches[0] = ({"a specialization": compiled}, None, None, None)
    forget_compiled_kernels()
    assert kernel.device_caches[0][0] == {}
