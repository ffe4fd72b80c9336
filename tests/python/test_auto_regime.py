"""A first launch's regime is read on the no-pass kernel before any variant compiles
(:mod:`triton_ext._regime`): a launch-bound launch keeps no pass and compiles no variant; any other,
or one whose readings fail, is decided as before. The readings run on the host-only driver with
given times (no GPU here); on a GPU, ``bash benchmarks/auto_gpu_checks.sh all0..all3`` reads them."""

from __future__ import annotations

import json
from typing import Any

import pytest
import torch

from tests.python.test_auto_backup import _addmm, _inputs, host_mode  # noqa: F401
from triton_ext import _auto, _regime


def _readings(monkeypatch: pytest.MonkeyPatch, gpu_ms: float, b2b_ms: list[float]) -> None:
    """Give the regime's readings: ``gpu_ms``, then each of ``b2b_ms`` in turn (no GPU here)."""
    b2b = iter(b2b_ms)

    def gpu(go: Any, **_: Any) -> float:
        go()
        return gpu_ms

    def back_to_back(go: Any, calls: int, windows: int) -> float:
        go()
        return next(b2b)

    monkeypatch.setattr(_regime, "flush_buffer", lambda: None)
    monkeypatch.setattr(_regime, "one_call_ms", lambda go: go() or gpu_ms)
    monkeypatch.setattr(_regime, "gpu_time_ms", gpu)
    monkeypatch.setattr(_regime, "back_to_back_ms", back_to_back)


def test_the_no_pass_kernel_is_read_on_restored_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.python.test_auto_outputs import _Mode

    _readings(monkeypatch, 0.010, [0.030, 0.021])
    x = torch.zeros(8)
    before: list[float] = []

    def run(fn: Any, x: torch.Tensor, **_: Any) -> None:  # JITFunction.run of an in-place kernel
        before.append(float(x[0]))
        x += 1

    assert _regime.read_no_pass(_Mode([""]), run, object(), (x,), {}, (1,), [x]) == (0.010, 0.021)
    assert before == [0.0] * 4  # each reading starts from the launch's own arguments
    assert torch.equal(x, torch.zeros(8))  # and the user's launch after them too


def test_a_kernel_too_long_to_be_launch_bound_is_not_read_further(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.python.test_auto_outputs import _Mode

    _readings(monkeypatch, _regime.LONGEST_LAUNCH_BOUND_MS, [])  # no back-to-back reading is given
    monkeypatch.setattr(_regime, "gpu_time_ms", lambda *_, **__: pytest.fail("read further"))
    x = torch.zeros(8)

    def run(fn: Any, x: torch.Tensor, **_: Any) -> None:
        x += 1

    assert _regime.read_no_pass(_Mode([""]), run, object(), (x,), {}, (1,), [x]) is None
    assert torch.equal(x, torch.zeros(8))


def test_readings_that_fail_leave_the_decision_to_go_on(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.python.test_auto_outputs import _Mode

    x = torch.zeros(8)

    def run(fn: Any, x: torch.Tensor, **_: Any) -> None:
        x += 1
        raise RuntimeError("launch failed")

    monkeypatch.setattr(_regime, "flush_buffer", lambda: None)
    assert _regime.read_no_pass(_Mode([""]), run, object(), (x,), {}, (1,), [x]) is None
    assert torch.equal(x, torch.zeros(8))


@pytest.mark.parametrize("b2b_ms, bound", [([0.031, 0.020], True), ([0.0124, 0.011], False)])
def test_a_launch_bound_first_launch_compiles_no_variant(host_mode: Any, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
                                                         tmp_path: Any, b2b_ms: list[float], bound: bool) -> None:
    from tests.python.test_auto import _mode_calls

    _readings(monkeypatch, 0.010, b2b_ms)
    monkeypatch.setattr(_regime, "read_no_pass", _with_gpu_readings(_regime.read_no_pass))
    compiled: list[bool] = []
    compile_variants = _auto.compile_variants

    def recording(*args: Any, **kwargs: Any) -> Any:
        compiled.append(True)
        return compile_variants(*args, **kwargs)

    monkeypatch.setattr(_auto, "compile_variants", recording)
    _mode_calls(lambda: _addmm(*_inputs()))
    decision = host_mode.decisions[-1]
    assert decision.launch_bound == bound and decision.choice == "" and compiled == ([] if bound else [True])
    if bound:
        assert decision.timings_ms == {"": 0.010} and decision.back_to_back_ms == {"": 0.020}
        (path,) = (tmp_path / "auto").glob("*.json")
        record = json.loads(path.read_text())  # later processes read it: no pass, no compile
        assert record["launch_bound"] is True and record["choice"] == "" and record["format"] == _auto.DECISION_FORMAT


def test_with_the_setting_off_a_launch_bound_kernel_is_tuned_and_still_keeps_no_pass(
        host_mode: Any, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    # TRITON_EXT_AUTO_LAUNCH_BOUND=0: no reading first (its readings would say launch-bound), the
    # variants compiled as for any kernel (benchmarks/auto_safety_gpu.py needs them on small kernels).
    from tests.python.test_auto import _mode_calls

    _readings(monkeypatch, 0.010, [0.031, 0.020])
    read: list[bool] = []
    monkeypatch.setattr(_regime, "read_no_pass", lambda *a: read.append(True) or (0.010, 0.020))
    compiled: list[bool] = []
    compile_variants = _auto.compile_variants
    monkeypatch.setattr(_auto, "compile_variants", lambda *a, **k: compiled.append(True) or compile_variants(*a, **k))
    monkeypatch.setenv("TRITON_EXT_AUTO_LAUNCH_BOUND", "0")
    _mode_calls(lambda: _addmm(*_inputs()))
    decision = host_mode.decisions[-1]
    assert read == [] and compiled == [True] and not decision.launch_bound and decision.choice == ""


def _with_gpu_readings(read: Any) -> Any:
    """``read_no_pass`` whose launches succeed: the host-only driver cannot launch, so its ``run``
    stands in for the JIT's (the readings are the given ones)."""
    def read_on_host(auto: Any, run: Any, *args: Any) -> Any:
        return read(auto, lambda *_, **__: None, *args)
    return read_on_host
