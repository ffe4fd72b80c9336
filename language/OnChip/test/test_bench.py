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
