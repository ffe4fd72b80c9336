"""Back-to-back readings while another thread compiles (the transparent mode's situation when a
variant or a combination still compiles in the background during its timing rounds):

    python -m benchmarks.b2b_under_compile_gpu --out benchmarks/results/b2b-under-compile-h100.json

Two kernels (an add over 16M floats, GPU-bound, and over 4096 floats, launch-bound), each read
against itself (A/A: any ratio off 1 is the reading's noise) in ``--rounds`` pairs of readings of
about 12.5 ms (the mode's), with and without a thread compiling Triton kernels meanwhile, by two
estimators of ``triton_ext.testing.back_to_back_ms``: one window (the mode's reading until
then) and four windows, the fastest kept. Per case: the pairs' ratios, their spread (the
median and the largest distance from 1) and how many pairs differ by more than 2% and 5%."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import torch
import triton
import triton.language as tl

from triton_ext.bench.gpu import checkout_commit
from triton_ext.testing import back_to_back_ms

READING_MS = 12.5


@triton.jit
def add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask), mask=mask)


@triton.jit
def busy(x, SEED: tl.constexpr):
    # Compiled, never launched: enough arithmetic for the compile to take a while in MLIR and LLVM.
    offs = tl.arange(0, 1024)
    v = tl.load(x + offs)
    for i in tl.static_range(12):
        v = v * (1.0 + SEED * 1e-6) + tl.sin(v) * i
    tl.store(x + offs, v)


def compile_until(stop: threading.Event, counter: list[int]) -> None:
    x = torch.empty(1024, device="cuda")
    seed = int(time.time()) % 100000 * 1000  # constexprs never compiled before: each one compiles
    while not stop.is_set():
        busy.warmup(x, SEED=seed, grid=(1,))
        seed += 1
        counter[0] += 1


def pairs(read: Callable[[], float], rounds: int) -> list[float]:
    return [read() / read() for _ in range(rounds)]


def summary(ratios: list[float]) -> dict[str, Any]:
    off = [abs(r - 1) for r in ratios]
    return {"ratios": ratios, "median_off": statistics.median(off), "max_off": max(off),
            "over_2pct": sum(o > 0.02 for o in off), "over_5pct": sum(o > 0.05 for o in off)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args(argv)
    report: dict[str, Any] = {"commit": checkout_commit(), "date": time.strftime("%Y-%m-%d"),
                              "gpu": torch.cuda.get_device_name(), "triton": triton.__version__,
                              "reading_ms": READING_MS, "rounds": args.rounds, "cases": {}}
    for label, n in (("gpu_bound_add_16M", 1 << 24), ("launch_bound_add_4096", 4096)):
        x, y = torch.rand(n, device="cuda"), torch.rand(n, device="cuda")
        out = torch.empty_like(x)
        go = lambda: add[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)  # noqa: E731
        gpu_ms = triton.testing.do_bench(go)
        calls = max(5, min(500, int(READING_MS / max(gpu_ms, 1e-3))))
        case: dict[str, Any] = {"gpu_ms": gpu_ms, "calls": calls}
        for background in (False, True):
            stop, compiled = threading.Event(), [0]
            thread = threading.Thread(target=compile_until, args=(stop, compiled), daemon=True)
            if background:
                thread.start()
                time.sleep(1.0)  # past the first compile's imports
            try:
                for windows in (1, 4):
                    key = f"{'compiling' if background else 'idle'}_windows{windows}"
                    case[key] = summary(pairs(lambda: back_to_back_ms(go, calls, windows), args.rounds))
                    print(f"{label:24s} {key:20s} median off {case[key]['median_off']:.4f} max off "
                          f"{case[key]['max_off']:.4f} >2%: {case[key]['over_2pct']} >5%: {case[key]['over_5pct']}",
                          flush=True)
            finally:
                stop.set()
                if background:
                    thread.join()
                    case["compiles_meanwhile"] = compiled[0]
        report["cases"][label] = case
    Path(args.out).write_text(json.dumps(report, indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
