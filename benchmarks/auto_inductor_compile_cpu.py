"""Seconds the transparent mode adds to compiling a torch.compile'd kernel (Inductor's path).

    python3 -m benchmarks.auto_inductor_compile_cpu [--rounds N] \
        [--out benchmarks/results/auto-inductor-compile-cpu.json]

Inductor compiles each generated kernel in ``CachingAutotuner.precompile``; under the mode every
config also compiles once per candidate pass (:mod:`triton_ext._inductor_compile`). Here two
kernels written as Inductor generates them (``tests/realworld/inductor_kernels.py``: a fused
pointwise kernel and a row reduction, each with two configs) are compiled for cuda:90 on the CPU,
through Inductor's own ``CachingAutotuner``, in four ways, each in a fresh Triton cache:

* ``stock``: without the mode;
* ``auto``: under ``triton_ext.auto_mode()`` (the registry's candidates), a variant stopping as soon
  as its IR is its config's no-pass kernel's (since 754eeb5);
* ``auto_without_needs_ops``: ``auto`` with the registry's ``needs_ops`` ignored
  (``triton_ext.testing.ignoring_needs_ops``), as before 2026-12-06: every candidate compiles
  until it stops, also those declaring operations the kernel lacks;
* ``auto_to_the_end``: the same with that stop off (``triton_ext.testing.inductor_variants_to_the_end``),
  as before 754eeb5: every variant runs LLVM and ptxas and is then compared by its code.

Wall seconds of ``precompile`` per kernel, the median of ``--rounds``; the mode's plugins are loaded
before the timings, and its activation (once per process in use) is outside them (before 2026-12-06
they included it: about 0.13 s each on 2 cores). No GPU needed: Inductor's driver activation is
skipped and the target is given.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import triton

import triton_ext
from triton_ext.bench.gpu import checkout_commit
from triton_ext.testing import ignoring_needs_ops, inductor_variants_to_the_end

from tests.realworld.inductor_kernels import autotuner, without_gpu

#: Two configs per kernel, as Inductor's heuristics give a pointwise kernel and a reduction.
CONFIGS = {
    "pointwise": [triton.Config({"XBLOCK": 1024}, num_warps=4), triton.Config({"XBLOCK": 256}, num_warps=2)],
    "reduction": [triton.Config({"XBLOCK": 1, "RBLOCK": 2048}, num_warps=8),
                  triton.Config({"XBLOCK": 64, "RBLOCK": 8}, num_warps=4)],
}


def _precompile_s(kind: str, how: str) -> float:
    """Seconds of the precompile alone: the mode's activation (once per process in use) is not timed."""
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="inductor-bench-")
    tuner = autotuner(kind, *CONFIGS[kind])
    with (triton_ext.auto_mode() if how != "stock" else contextlib.nullcontext()), \
            (inductor_variants_to_the_end() if how == "auto_to_the_end" else contextlib.nullcontext()), \
            (ignoring_needs_ops() if how == "auto_without_needs_ops" else contextlib.nullcontext()):
        start = time.perf_counter()
        tuner.precompile(warm_cache_only=True)
        return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    without_gpu()  # no GPU here; the compile names its target
    with triton_ext.auto_mode() as mode:  # loads the candidates' plugins before any timing
        candidates = [name for name, _ in mode.variants if name]
    for kind in ("pointwise", "reduction"):  # Inductor's and Triton's first-use costs, untimed
        _precompile_s(kind, "auto")
    rows = {}
    for kind in ("pointwise", "reduction"):
        seconds: dict[str, list[float]] = {"stock": [], "auto": [], "auto_without_needs_ops": [], "auto_to_the_end": []}
        for _ in range(args.rounds):
            for how in seconds:
                seconds[how].append(_precompile_s(kind, how))
        rows[kind] = {how: round(statistics.median(s), 4) for how, s in seconds.items()}
        rows[kind]["rounds_s"] = {how: [round(x, 4) for x in s] for how, s in seconds.items()}
        print(f"{kind:10s} stock {rows[kind]['stock']:.3f} s, auto {rows[kind]['auto']:.3f} s, without needs_ops "
              f"{rows[kind]['auto_without_needs_ops']:.3f} s, every variant to the end "
              f"{rows[kind]['auto_to_the_end']:.3f} s")
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    result = {"commit": checkout_commit(), "date": now,
              "machine": platform.machine(), "cpus": os.cpu_count(), "triton": triton.__version__,
              "python": platform.python_version(), "candidates": candidates, "configs_per_kernel": 2,
              "rounds": args.rounds, "rows": rows}
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
