"""The transparent mode keeps no pass on a launch-bound kernel (:func:`triton_ext._choice.launch_bound`):
back to back its launches take longer than it runs, so a faster kernel cannot shorten them, and the
back-to-back readings of its variants are the CPU's jitter. On the H100 at c956a04 two such kernels
(16-19 us a launch, 9-11 us of GPU time) kept a variant that read 1.02-1.12x in the decision's rounds
and ran at 0.983x and 0.986x."""

from __future__ import annotations

import logging
import time
from typing import Any

import pytest

from triton_ext import _variants
from triton_ext._backup import ArgumentBackup
from triton_ext._choice import LAUNCH_BOUND, choose_in_both, launch_bound
from triton_ext._decision import Decision


def test_launch_bound_compares_a_launch_back_to_back_with_the_kernels_gpu_time() -> None:
    assert launch_bound(0.0115, 0.0238)  # fg_topk_softmax_prefill on the H100: 11.5 us, 23.8 us a launch
    assert not launch_bound(0.0471, 0.0339)  # a GEMM read with a cold L2: slower than back to back
    assert not launch_bound(0.1, 0.1 * LAUNCH_BOUND * 0.999)
    assert launch_bound(0.1, 0.1 * LAUNCH_BOUND)


def test_choose_in_both_alone_does_not_refuse_a_launch_bound_kernel() -> None:
    # torch.compile's path (no guard in front of a kept launcher) calls it without the rule.
    gpu = {"": [0.0115] * 3, "num_warps/2": [0.0110] * 3}
    assert choose_in_both(gpu, {"": [0.0238] * 3, "num_warps/2": [0.0213] * 3}) == "num_warps/2"


# The decision's readings on fg_topk_softmax_prefill (H100, c956a04): 1.04x GPU time, 1.12x back to
# back at 2.1x its GPU time a launch, and 0.983x as launched. The same gains on a kernel that keeps
# the GPU busy back to back are kept.
@pytest.mark.parametrize("b2b_ms, kept", [({"": 2.0, "grid_swizzle": 1.8}, ""),
                                          ({"": 1.0, "grid_swizzle": 0.9}, "grid_swizzle")])
def test_time_variants_records_a_launch_bound_decision(monkeypatch: pytest.MonkeyPatch, caplog: Any,
                                                       b2b_ms: dict[str, float], kept: str) -> None:
    from tests.python.test_auto_outputs import _Mode

    mode = _Mode(["", "grid_swizzle"])
    kernels = {v: type("Kernel", (), {"asm": {"ptx": v}, "launch_metadata": None})() for v in ("", "grid_swizzle")}

    def gpu(go: Any, **_: Any) -> float:
        go()
        return {"": 1.0, "grid_swizzle": 0.9}[mode.current()]

    def back_to_back(go: Any, calls: int, windows: int) -> float:
        go()
        return b2b_ms[mode.current()]

    monkeypatch.setattr(_variants, "flush_buffer", lambda: None)  # no GPU here
    monkeypatch.setattr(_variants, "gpu_time_ms", gpu)
    monkeypatch.setattr(_variants, "back_to_back_ms", back_to_back)
    decision = Decision("k", "", applicable=["grid_swizzle"])
    _variants.time_variants(mode, lambda *_, **__: None, object(), 0, (), {}, (132,), kernels, decision,
                            ArgumentBackup.of([]), time.perf_counter() + 60.0)
    assert decision.error is None and decision.choice == kept
    assert decision.launch_bound == (kept == "") and decision.record()["launch_bound"] == decision.launch_bound
    with caplog.at_level(logging.INFO, logger="triton_ext.auto"):
        decision.log(logging.getLogger("triton_ext.auto"))
    assert ("launch-bound" in caplog.text) == (kept == "")
