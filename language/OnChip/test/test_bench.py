"""CPU tests of bench.py --vendor's smoke run (issue 31): a candidate whose kernel never returns
is killed and left out, the others are answered, without a GPU (the children here stand in for
the GPU work of ``bench._smoke_child``)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from triton_ext.testing import import_file

bench = import_file(__file__, "../bench.py", name="triton_ext_onchip_bench")


def _child(kind: str, name: str, queue: Any) -> None:
    if name == "hangs":
        time.sleep(600)  # a barrier phase that never completes
    if name == "dies":
        raise SystemExit(3)
    queue.put((name, "ok" if name != "wrong" else "wrong: max rel err 1"))


def test_smoke_leaves_out_a_candidate_that_hangs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench, "_smoke_child", _child)
    lines: list[str] = []
    start = time.monotonic()
    got = bench.smoke([("gemm", "fine"), ("gemm", "hangs"), ("attention", "wrong"), ("attention", "dies")],
                      timeout=20, log=lines.append)
    assert got == {"gemm:fine": "ok", "gemm:hangs": "hang", "attention:wrong": "wrong: max rel err 1",
                   "attention:dies": "no answer (exit code 3)"}, got
    assert time.monotonic() - start < 60  # the hanging child was killed, not waited for
    assert "smoke gemm:hangs: hang after 20 s" in lines


def test_a_configuration_that_does_not_fit_is_not_a_wrong_kernel() -> None:
    assert bench._does_not_fit("OutOfResources: out of resource: shared memory, Required: 262220")
    assert not bench._does_not_fit("CompilationError: at 3:4: mma: a and b must both be fp16 or bf16")


def test_rounds_rotate_throw_away_the_first_and_keep_every_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    # do_bench stands in for the GPU: it records who ran when, with which warm-up, and returns a
    # time that grows with the call count, so the first call (the thrown-away round) is the fastest.
    calls: list[tuple[str, int]] = []

    def fake_do_bench(fn: Any, warmup: int, rep: int) -> float:
        calls.append((fn(), warmup))
        if calls[-1][0] == "breaks" and len(calls) > 4:
            raise RuntimeError("out of memory")
        return float(len(calls))

    monkeypatch.setattr(bench.triton.testing, "do_bench", fake_do_bench)
    names = ["vendor:a", "onchip:b", "triton:c", "breaks"]
    row = bench.VendorRow("gemm", "float16", {})
    bench._time_interleaved(row, {n: (lambda n=n: n) for n in names}, 1e9, 3, bench._no_ctx, warmup_ms=123)
    assert {w for _, w in calls} == {123}
    # Round -1 starts from the last candidate and is not kept; round r starts from the r-th; the
    # candidate that failed (call 8) is skipped from then on.
    assert [n for n, _ in calls] == ["breaks", "vendor:a", "onchip:b", "triton:c",
                                     "vendor:a", "onchip:b", "triton:c", "breaks",
                                     "onchip:b", "triton:c", "vendor:a",
                                     "triton:c", "vendor:a", "onchip:b"]
    assert row.samples == {"vendor:a": [5.0, 11.0, 13.0], "onchip:b": [6.0, 9.0, 14.0], "triton:c": [7.0, 10.0, 12.0]}
    assert row.ms == {"vendor:a": 5.0, "onchip:b": 6.0, "triton:c": 7.0}
    assert "breaks" in row.errors and row.fastest == {"vendor": "vendor:a", "onchip": "onchip:b", "triton": "triton:c"}
    assert bench.timing_order(["x", "y", "z"], 4) == ["y", "z", "x"]
