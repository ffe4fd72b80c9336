"""The guards of ``triton_ext.autotune``'s autotuner (:class:`triton_ext._autotune.PassAutotuner`)
on a real tuning: a config that fails to compile is recorded in the tuning's ``failed`` and the
others are still decided; when every config fails, nothing is timed and no decision is made; a
tuning Triton does not record on disk (a config with a ``pre_hook``, or no tuning key) gets no
decision file either.

On CPU with real compiles: the host-only driver (``HostOnly``, ``tests/python/test_autotune.py``)
and ``warmup=True`` launches, which Triton's ``Autotuner.run`` hands to ``JITFunction.run`` for
every benchmark call and the final launch, so the JIT specializes and compiles through cubin and
returns the kernel unlaunched. Only the GPU times are given (the tuner's ``timer``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import pytest

import triton
import triton.language as tl
from triton.compiler.errors import CompileTimeAssertionFailure
from triton.runtime.jit import MockTensor

from tests.python.test_autotune import host_only  # noqa: F401  (fixture: the host-only driver, a fresh cache)

#: The largest BLOCK :func:`copy_kernel` compiles for.
MAX_BLOCK = 64


@triton.jit
def copy_kernel(x, y, n, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK <= 64, "BLOCK too large")  # MAX_BLOCK: a config above fails to compile
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)


@triton.jit
def no_tensor_kernel(n, BLOCK: tl.constexpr):
    # Only an integer argument: with no key, the tuning key is empty (Triton adds tensor dtypes).
    tl.static_assert(BLOCK <= 64, "BLOCK too large")


class Timer:
    """The tuner's timer with given GPU times: config ``i`` (in the order timed) reads
    ``1 + i / 10`` ms in every round; remembers what it was asked to time."""

    def __init__(self) -> None:
        self.asked: list[list[Any]] = []

    def __call__(self, calls: Mapping[Any, Any], rounds: int) -> dict[Any, Sequence[float]]:
        self.asked.append(list(calls))
        return {c: [1.0 + i / 10] * rounds for i, c in enumerate(calls)}


def _tuner(kernel: Any, configs: list[Any], key: list[str]) -> tuple[Any, Timer]:
    import triton_ext

    tuner = triton_ext.autotune(configs=configs, key=key)(kernel)
    tuner.timer = timer = Timer()
    return tuner, timer


def _decision_files(cache: Path) -> list[Path]:
    return sorted(cache.rglob("*.decision.json"))


def _copy(tuner: Any) -> Any:
    return tuner.run(MockTensor(tl.float32), MockTensor(tl.float32), 1024, grid=(1,), warmup=True)


def test_a_config_that_fails_to_compile_is_recorded_and_the_others_are_decided(host_only: Path) -> None:
    # Guard: _autotune.py PassAutotuner._bench "config not in tuning.calls" -> failed. Without the
    # record the tuning would wait for that config forever: no decision, the timings left at inf.
    import triton_ext

    too_large, fits = (triton_ext.Config({"BLOCK": 2 * MAX_BLOCK}, passes={}),
                       triton_ext.Config({"BLOCK": MAX_BLOCK}, passes={}))
    tuner, timer = _tuner(copy_kernel, [too_large, fits], ["n"])
    kernel = _copy(tuner)
    (tuning,) = tuner.tunings
    assert tuning.failed == [too_large] and list(tuning.calls) == [fits]
    assert tuning.done and tuning.choice is fits and tuner.best_config is fits
    assert timer.asked == [[fits]]  # the failed config is never timed
    assert tuning.results[fits] == [1.0, 1.0, 1.0]  # filled from the rounds, before Triton compared them
    assert kernel.asm["ttir"] and len(_decision_files(host_only)) == 1


def test_every_config_failing_makes_no_decision(host_only: Path) -> None:
    # Guard: _autotune.py PassAutotuner._decide "if not tuning.calls: return". Nothing compiled:
    # nothing is timed, no choice made or written; Triton's own error reaches the caller.
    import triton_ext

    configs = [triton_ext.Config({"BLOCK": 2 * MAX_BLOCK}, passes={}),
               triton_ext.Config({"BLOCK": 4 * MAX_BLOCK}, passes={})]
    tuner, timer = _tuner(copy_kernel, configs, ["n"])
    with pytest.raises(CompileTimeAssertionFailure, match="BLOCK too large"):  # the final launch's compile
        _copy(tuner)
    (tuning,) = tuner.tunings
    assert tuning.done and tuning.failed == configs and tuning.calls == {}
    assert tuning.choice is None and tuning.first == {} and timer.asked == []
    assert tuner.cache.decided is None and _decision_files(host_only) == []


@pytest.mark.parametrize("case", ["pre_hook", "no key"])
def test_a_tuning_triton_does_not_record_gets_no_decision_file(host_only: Path, case: str) -> None:
    # Guard: _autotune.py PassAutotuner.check_disk_cache "if not tuning_key or any(c.pre_hook ...)".
    # Triton neither records nor looks up these tunings (a hook cannot be serialized; no key to
    # look up by), so a decision file would never be read: one more cache write per tuning.
    import triton_ext

    hooked: list[int] = []

    def pre_hook(nargs: dict[str, Any]) -> None:
        hooked.append(nargs["BLOCK"])

    if case == "pre_hook":
        configs = [triton_ext.Config({"BLOCK": 32}, passes={}, pre_hook=pre_hook),
                   triton_ext.Config({"BLOCK": MAX_BLOCK}, passes={})]
        tuner, timer = _tuner(copy_kernel, configs, ["n"])
        _copy(tuner)
        assert hooked == [32, 32]  # the benchmark call, and the final launch of the chosen config
    else:
        configs = [triton_ext.Config({"BLOCK": 32}, passes={}), triton_ext.Config({"BLOCK": MAX_BLOCK}, passes={})]
        tuner, timer = _tuner(no_tensor_kernel, configs, [])
        tuner.run(1024, grid=(1,), warmup=True)
        assert list(tuner.cache) == [()]
    (tuning,) = tuner.tunings
    assert tuning.choice is configs[0] and tuner.best_config is configs[0]  # decided in the process
    assert _decision_files(host_only) == [] and list(host_only.rglob("*.autotune.json")) == []
