"""GPU check of the sanitizers (issue 18): planted bugs caught with one line per site, clean
kernels silent, the Python API's records exact, Triton's own instrumentation and
compute-sanitizer on the same bugs, and overhead on the in-house benchmarks.

    python -m passes.Sanitizers.check_gpu --out passes/Sanitizers/results/check-h200.json

Needs torch, triton 3.9.0, this repository (triton_ext) and the built TritonExtSanitizers plugin
(``TRITON_EXT_BUILD_DIR`` if not the default build dir). About 4-6 minutes on an H200;
``--skip-bench`` / ``--skip-tools`` leave parts out. Parts:

1. Scenarios, each in a child process (device printf goes to the child's stdout; a device abort
   kills its CUDA context). A scenario passes when its output has exactly one report line per
   expected site (none for a clean kernel), the records from ``triton_ext_sanitizers.report()``
   carry the expected lane totals and first index, and, where the kernel is correct, its result
   matches a float64 reference. Includes issue 18's ``torch.compile``d ``log(x) * 2 + 1`` over
   4096 floats, repeated launches (one line until ``report()`` re-arms the site), and
   ``check()`` raising ``SanitizerError`` without killing the process.
2. Tools (``--skip-tools`` leaves them out): each planted bug run without triton_ext under
   ``TRITON_DEBUG=1`` (Triton's i32 overflow checks and device asserts),
   ``TRITON_INSTRUMENTATION_MODE=fpsan`` / ``iisan`` (the 3.9.0 modes that compile these
   kernels; ``gsan``/``consan`` detect races only), and ``compute-sanitizer --tool memcheck`` if
   it is on PATH or in /usr/local/cuda/bin. Records caught or not, output lines and the warm
   kernel time against the plain run.
3. Overhead: ``triton-ext bench sanitizers`` (memory-bound, GEMM, attention; off, each
   sanitizer, all three) into ``results/`` (its ``--quick`` shapes when parts 1-2 took
   longer than ``--budget-s``), and each kernel's time in the scenarios and tools.

Prints a table, writes everything to --out as JSON (and a .log beside it), exits non-zero if a
scenario fails (after writing the JSON).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from triton_ext.testing import import_file, repo_root

HERE = Path(__file__).resolve().parent
REPO = repo_root()
#: Children run as this module from the repository root, like the parent (no sys.path edits).
MODULE = "passes.Sanitizers.check_gpu"

# A report line. By default (print=none) the host prints one per site with findings:
# `[triton-ext PASS] kernel=K site=S WHAT: lanes=N programs=P first index=...`, when
# sanitizers.report() collects the records (the child does, once) or at exit for findings nobody
# collected. With the opt-in print=first the device adds `pid (x, y, z) idx ()[triton-ext PASS]
# kernel=K site=S WHAT; first report of this site, lanes in this program=N` (print=every: `WHAT=N`
# per program). Both kinds count, only at the start of a line: the text of a SanitizerError the
# child prints (indented, or JSON after `RAISED`) is not a report line (the H200 run of
# 2026-12-01 counted it in nan_check_raises).
REPORT = re.compile(r"^(?:pid \([^)]*\) idx \([^)]*\))?\[triton-ext (\w+)\] kernel=(\S+) site=(\S+) "
                    r"([^=;:\n]+?)(?:(?:;[^=\n]*)?=\s*(-?\d+)|: lanes=(\d+))", re.M)
#: The torch.compile child prints this between its first call (compile, Inductor's autotuning
#: of candidate configs on the real input, run) and its second (the chosen kernel, one launch).
SECOND_CALL = "SECOND_CALL"
ALL = ("nan_inf_check", "masked_load_poison", "offset_overflow_check")
CHILD_TIMEOUT_S = 180


@dataclass
class Outcome:
    name: str
    passes: list[str]
    expected_lines: dict[str, int]      # "kernel site what" -> report lines expected
    expected_records: dict[str, dict[str, int]]  # same key -> {"lanes": n, "first_index": i}
    lines: dict[str, int] = field(default_factory=dict)
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    output_lines: int = 0
    aborted: bool = False
    expect_abort: bool = False
    abort_site_seen: bool | None = None
    raised: str | None = None
    expect_raise: str | None = None
    correct: bool | None = None          # result vs float64 reference (None: not checked)
    first_call_lines: int | None = None  # torch.compile: lines of the compile + autotune call
    first_call_copies: int | None = None  # ... and the compiled copies that found something
    kernel_ms: float | None = None
    wall_s: float = 0.0
    detail: str = ""

    @property
    def ok(self) -> bool:
        records_ok = all(self.records.get(k, {}).get(f) == v
                         for k, want in self.expected_records.items() for f, v in want.items())
        if not self.expect_abort and set(self.records) != set(self.expected_records):
            records_ok = False
        raise_ok = (self.expect_raise is None) or (self.raised is not None
                                                   and self.expect_raise in self.raised)
        # One line per site per compiled copy at most (each copy is its own launch).
        copies_ok = (self.first_call_lines is None or self.first_call_copies is None
                     or self.first_call_lines <= self.first_call_copies)
        return (copies_ok and self.lines == self.expected_lines and self.aborted == self.expect_abort
                and self.abort_site_seen is not False and self.correct is not False
                and (records_ok or self.expect_abort) and raise_ok)


# --------------------------------------------------------------------------- child side

def _timed(torch: Any, launch: Callable[[], Any], reps: int = 5) -> float:
    """Median warm time (ms) of `launch` with CUDA events (works under compute-sanitizer)."""
    launch()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        launch()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def _child(scenario: str, plain: bool) -> None:
    """Runs one scenario; `plain` runs it without triton_ext (for the tool comparison)."""
    import contextlib

    import torch
    import triton

    kernels = import_file(__file__, "kernels.py")

    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
    spec = SCENARIOS[scenario]
    if plain:
        ctx: Any = contextlib.nullcontext()
        api = None
    else:
        import triton_ext

        api = triton_ext.import_extension("sanitizers")
        if spec.get("global"):
            # Inductor compiles on other threads: enable for every thread.
            triton_ext.enable(*spec["passes"], options=spec.get("options"))
            ctx = contextlib.nullcontext()
        else:
            ctx = triton_ext.enabled(*spec["passes"], options=spec.get("options"))
    state: dict[str, Any] = {}
    with ctx:
        correct = spec["run"](torch, triton, kernels, "cuda", state, api)
        torch.cuda.synchronize()
        if api is not None and not spec.get("no_report"):
            # Collects (and prints: one host line per site) what the run found, re-arming it.
            records = [{"key": _key(r.site.kernel, r.site.location, r.site.what),
                        "lanes": r.lanes, "programs": r.programs, "first_index": r.first_index}
                       for r in api.report()]
            print(f"RECORDS {json.dumps(records)}", flush=True)
        if "launch" in state and not spec.get("no_timing") and not (
                api is not None and spec.get("no_report")):
            # (not in no_report scenarios: their findings are for check() or the exit summary;
            # not with print=first: report() re-armed the site, the timed launches print again)
            print(f"KERNEL_MS {_timed(torch, state['launch'])}", flush=True)
            if api is not None:
                api.reset()  # the timed launches' findings: no line at exit
    print(f"RESULT {json.dumps({'correct': correct, **state.get('extra', {})})}", flush=True)


def _ratio_inputs(torch: Any, dev: str, n: int) -> tuple[Any, Any, Any]:
    x = torch.rand(n, device=dev) + 0.5
    y = torch.rand(n, device=dev) + 0.5
    bad = torch.randperm(n, device=dev)[:37]
    x[bad] = 0.0
    y[bad] = 0.0  # 0/0 = NaN at 37 places
    return x, y, bad


def _ratio_output_ok(torch: Any, x: Any, y: Any, out: Any, bad: Any) -> bool:
    """x / y (float64 reference) in every lane but the planted ones, NaN in those."""
    good = torch.ones(x.numel(), dtype=torch.bool, device=x.device)
    good[bad] = False
    return bool(torch.allclose(out[good].double(), x[good].double() / y[good].double(), rtol=1e-6)
                and torch.isnan(out[bad]).all())


def _run_ratio_pair(torch, triton, kernels, dev, state, api) -> bool:
    n, block = 1 << 20, 1024
    x, y, bad = _ratio_inputs(torch, dev, n)
    total, out = torch.empty_like(x), torch.empty_like(x)

    def launch() -> None:
        kernels.ratio_pair_kernel[(triton.cdiv(n, block),)](x, y, total, out, n, BLOCK=block)

    launch()
    torch.cuda.synchronize()
    state["extra"] = {"first_bad": int(bad.min())}
    state["launch"] = launch
    return bool(torch.equal(total, x + y)) and _ratio_output_ok(torch, x, y, out, bad)


def _run_ratio(torch, triton, kernels, dev, state, api) -> bool:
    n, block = 1 << 20, 1024
    x, y, bad = _ratio_inputs(torch, dev, n)
    out = torch.empty_like(x)

    def launch() -> None:
        kernels.ratio_kernel[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block)

    launch()
    torch.cuda.synchronize()
    state["extra"] = {"first_bad": int(bad.min())}
    state["launch"] = launch
    return _ratio_output_ok(torch, x, y, out, bad)


def _run_ratio_unrolled(torch, triton, kernels, dev, state, api) -> bool:
    n, block, unroll = (1 << 20) - 1000, 128, 8  # a partial last program
    x, y, bad = _ratio_inputs(torch, dev, n)
    out = torch.empty_like(x)

    def launch() -> None:
        kernels.ratio_unrolled_kernel[(triton.cdiv(n, block * unroll),)](x, y, out, n,
                                                                       BLOCK=block, UNROLL=unroll)

    launch()
    torch.cuda.synchronize()
    # The site's tile is one block of 128 lanes; the 8 stores of a program number their lanes
    # from pid * 128 alike, so the first index is the smallest pid * 128 + lane.
    state["extra"] = {"first_bad": int(((bad // (block * unroll)) * block + bad % block).min())}
    state["launch"] = launch
    return _ratio_output_ok(torch, x, y, out, bad)


LN_ROWS = (4096, 1000, 1024)  # rows, cols, BLOCK: a partial row block, 8 warps


def _run_layer_norm_rows(clean: bool) -> Callable[..., bool]:
    """layer_norm_rows_kernel with eps = 0: 37 rows with one NaN (mean, rstd and every stored lane
    of the row NaN) and 23 constant rows (variance 0: rstd Inf, the row's stored lanes 0 * Inf =
    NaN, and its 24 masked-off lanes too, which are never stored and must not count); none of
    either when `clean`. The flag group's records: mean 37 lanes, rstd 60, the row 60 * cols."""

    def run(torch, triton, kernels, dev, state, api) -> bool:
        rows, cols, block = LN_ROWS
        x = torch.randn(rows, cols, device=dev)
        perm = torch.randperm(rows, device=dev)
        nan_rows, const_rows = perm[:37], perm[37:60]
        if not clean:
            x[nan_rows, 5] = float("nan")
            x[const_rows] = 2.0
        y = torch.empty(rows, cols, device=dev, dtype=torch.float16)
        mean = torch.empty(rows, device=dev)
        rstd = torch.empty(rows, device=dev)

        def launch() -> None:
            kernels.layer_norm_rows_kernel[(rows,)](x, y, mean, rstd, cols, 0.0, BLOCK=block,
                                                    num_warps=8)

        launch()
        torch.cuda.synchronize()
        bad = torch.zeros(rows, dtype=torch.bool, device=dev)
        if not clean:
            bad[nan_rows] = True
            bad[const_rows] = True
        ref_mean = x.double().mean(dim=1)
        ref_rstd = 1.0 / (x.double() - ref_mean[:, None]).pow(2).mean(dim=1).sqrt()
        ref_y = (x.double() - ref_mean[:, None]) * ref_rstd[:, None]
        good = ~bad
        ok = bool(torch.allclose(mean[good].double(), ref_mean[good], rtol=1e-4, atol=1e-5)
                  and torch.allclose(rstd[good].double(), ref_rstd[good], rtol=1e-3)
                  and torch.allclose(y[good].double(), ref_y[good], rtol=1e-2, atol=1e-2)
                  and torch.isnan(y[bad]).all())
        if not clean:
            ok = ok and bool(torch.isnan(mean[nan_rows]).all() and torch.isnan(rstd[nan_rows]).all()
                             and torch.isinf(rstd[const_rows]).all())
            first = int(bad.nonzero().min())
            state["extra"] = {"first_nan_row": int(nan_rows.min()), "first_bad_row": first,
                              "first_bad_lane": first * block}
        state["launch"] = launch
        return ok

    return run


RATIO_2D = (1000, 100, 16, 128)  # rows, cols, BLOCK_R, BLOCK_C: 16 lanes per thread (4 warps)


def _run_ratio_2d(torch, triton, kernels, dev, state, api) -> bool:
    rows, cols, block_r, block_c = RATIO_2D
    x, y, bad = _ratio_inputs(torch, dev, rows * cols)
    out = torch.empty_like(x)

    def launch() -> None:
        kernels.ratio_2d_kernel[(triton.cdiv(rows, block_r),)](x, y, out, rows, cols,
                                                              BLOCK_R=block_r, BLOCK_C=block_c)

    launch()
    torch.cuda.synchronize()
    i, j = bad // cols, bad % cols  # pid * tile + row-major lane in the tile
    firsts = (i // block_r) * (block_r * block_c) + (i % block_r) * block_c + j
    state["extra"] = {"first_bad": int(firsts.min())}
    state["launch"] = launch
    return _ratio_output_ok(torch, x, y, out, bad)


RATIO_ROWS = (1000, 500, 8, 512)  # rows, cols, ROWS_PER_PROG, BLOCK: 4 lanes per thread (4 warps)


#: Rows of 2048 floats (16-aligned: vectorized runs of 4 lanes per thread, 4 repetitions of the
#: 4-warp layout), so nan_inf_check's loop path reduces two in-thread axes (issue 32).
RATIO_ROWS_WIDE = (300, 2048, 8, 2048)


def _run_ratio_rows(torch, triton, kernels, dev, state, api, shape=RATIO_ROWS,
                    kernel: str = "ratio_rows_kernel") -> bool:
    rows, cols, per_prog, block = shape
    x, y, bad = _ratio_inputs(torch, dev, rows * cols)
    out = torch.empty_like(x)

    def launch() -> None:
        getattr(kernels, kernel)[(triton.cdiv(rows, per_prog),)](x, y, out, rows, cols,
                                                                ROWS_PER_PROG=per_prog,
                                                                BLOCK=block)

    launch()
    torch.cuda.synchronize()
    # The site's tile is one row (BLOCK lanes); every iteration of a program numbers its lanes
    # from pid * BLOCK, so the first index is the smallest pid * BLOCK + column.
    i, j = bad // cols, bad % cols
    state["extra"] = {"first_bad": int(((i // per_prog) * block + j).min())}
    state["launch"] = launch
    return _ratio_output_ok(torch, x, y, out, bad)


def _run_ratio_rearm(torch, triton, kernels, dev, state, api) -> bool:
    # Three launches print one line (the record counts 3 x 37 lanes); report() re-arms the site,
    # so the fourth launch prints a second line; the final record holds that launch alone.
    n, block = 1 << 20, 1024
    x, y, bad = _ratio_inputs(torch, dev, n)
    out = torch.empty_like(x)
    for _ in range(3):
        kernels.ratio_kernel[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block)
    first = api.report()
    kernels.ratio_kernel[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block)
    torch.cuda.synchronize()
    state["extra"] = {"first_report_lanes": sum(r.lanes for r in first),
                      "first_bad": int(bad.min())}
    return sum(r.lanes for r in first) == 3 * 37


def _run_ratio_raises(torch, triton, kernels, dev, state, api) -> bool:
    n, block = 1 << 20, 1024
    x, y, _ = _ratio_inputs(torch, dev, n)
    out = torch.empty_like(x)
    kernels.ratio_kernel[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block)
    try:
        api.check()
    except api.SanitizerError as exc:
        print(f"RAISED {json.dumps(str(exc))}", flush=True)
    # The process and its CUDA context are alive: run a clean kernel after the exception.
    y2 = torch.empty_like(x)
    kernels.scale_kernel[(triton.cdiv(n, block),)](x, y2, n, 2.0, BLOCK=block)
    torch.cuda.synchronize()
    return bool(torch.allclose(y2, x * 2.0))


def _run_window(torch, triton, kernels, dev, state, api) -> None:
    n, block = 1000 * 1024 + 300, 1024  # the last block has 724 masked lanes
    x = torch.randn(n, device=dev)
    out = torch.empty(triton.cdiv(n, block), device=dev)

    def launch() -> None:
        kernels.window_sum_kernel[(out.numel(),)](x, out, n, BLOCK=block)

    launch()
    torch.cuda.synchronize()
    state["launch"] = launch
    return None  # the result is wrong by design when masked lanes are poisoned


def _run_masked_sum(torch, triton, kernels, dev, state, api) -> bool:
    n, block = 1000 * 1024 + 300, 1024
    x = torch.randn(n, device=dev)
    out = torch.empty(triton.cdiv(n, block), device=dev)

    def launch() -> None:
        kernels.masked_sum_kernel[(out.numel(),)](x, out, n, BLOCK=block)

    launch()
    torch.cuda.synchronize()
    pad = torch.zeros(out.numel() * block, dtype=torch.float64, device=dev)
    pad[:n] = x.double()
    state["launch"] = launch
    return bool(torch.allclose(out.double(), pad.view(-1, block).sum(1), atol=1e-3))


def _run_gather(torch, triton, kernels, dev, state, api) -> bool:
    """A masked embedding lookup whose last block is partial (issue 26 item 2): correct, so
    masked_load_poison + offset_overflow_check must report nothing."""
    n, d, block, vocab = 1000 * 64 + 5, 128, 64, 50000
    w = torch.randn(vocab, d, device=dev)
    ids = torch.randint(0, vocab, (n,), dtype=torch.int32, device=dev)
    out = torch.empty(n, d, device=dev)

    def launch() -> None:
        kernels.gather_rows_kernel[(triton.cdiv(n, block),)](w, ids, out, n, D=d, BLOCK=block)

    launch()
    torch.cuda.synchronize()
    state["launch"] = launch
    return bool(torch.equal(out, w[ids.long()]))


ROW_STRIDE, ROW_COLS, ROW_BLOCK = 1 << 24, 1000, 1024


def _run_rows(rows: int) -> Callable[..., bool]:
    def run(torch, triton, kernels, dev, state, api) -> bool:
        # int8 rows 16 MiB apart; the kernel's pointer starts 2 GiB into a 4 GiB buffer, so a
        # wrapped (negative) i32 offset still lands inside the buffer and the kernel finishes.
        base = torch.randint(-128, 127, (1 << 32,), dtype=torch.int8, device=dev)
        x = base[1 << 31:]
        out = torch.empty(rows * ROW_COLS, dtype=torch.int8, device=dev)
        def launch() -> None:
            kernels.row_copy_kernel[(rows,)](x, out, ROW_STRIDE, ROW_COLS, BLOCK=ROW_BLOCK)

        launch()
        torch.cuda.synchronize()
        state["launch"] = launch
        safe = min(rows, (1 << 31) // ROW_STRIDE)
        idx = (torch.arange(safe, device=dev)[:, None] * ROW_STRIDE
               + torch.arange(ROW_COLS, device=dev)[None, :])
        return bool(torch.equal(out.view(rows, ROW_COLS)[:safe], x[idx]))
    return run


def _run_row_sums(rows: int) -> Callable[..., bool]:
    """row_sum_kernel (issue 32): _run_rows' layout, both buffers 4 GiB with the pointer in the
    middle (the wrapped load and the wrapped store stay inside them), three loop trips."""
    def run(torch, triton, kernels, dev, state, api) -> bool:
        base = torch.randint(-128, 127, (1 << 32,), dtype=torch.int8, device=dev)
        x = base[1 << 31:]
        sink = torch.zeros(1 << 32, dtype=torch.int8, device=dev)
        out = sink[1 << 31:]

        def launch() -> None:
            kernels.row_sum_kernel[(rows,)](x, out, ROW_STRIDE, ROW_STRIDE, ROW_COLS, 3,
                                            BLOCK=ROW_BLOCK)

        launch()
        torch.cuda.synchronize()
        state["launch"] = launch
        safe = min(rows, (1 << 31) // ROW_STRIDE)
        idx = (torch.arange(safe, device=dev)[:, None] * ROW_STRIDE
               + torch.arange(ROW_COLS, device=dev)[None, :])
        want = (x[idx].to(torch.int32) * 3).to(torch.int8)  # int8 sums wrap as the kernel's
        return bool(torch.equal(out[idx], want))
    return run


def _run_scale(torch, triton, kernels, dev, state, api) -> bool:
    n, block = (1 << 24) + 17, 1024
    x = torch.randn(n, device=dev)
    y = torch.empty_like(x)

    def launch() -> None:
        kernels.scale_kernel[(triton.cdiv(n, block),)](x, y, n, 1.5, BLOCK=block)

    launch()
    torch.cuda.synchronize()
    state["launch"] = launch
    return bool(torch.allclose(y.double(), x.double() * 1.5))


def _matmul(torch, triton, kernels, a, b):
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty(m, n, dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(m, 128), triton.cdiv(n, 128))
    kernels.matmul_kernel[grid](a, b, c, m, n, k, a.stride(0), b.stride(0), c.stride(0),
                                BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_stages=3, num_warps=4)
    return c


def _run_gemm(torch, triton, kernels, dev, state, api) -> bool:
    a = torch.randn(1000, 512, dtype=torch.float16, device=dev)  # M, N not multiples of 128
    b = torch.randn(512, 777, dtype=torch.float16, device=dev)
    c = _matmul(torch, triton, kernels, a, b)
    torch.cuda.synchronize()
    state["launch"] = lambda: _matmul(torch, triton, kernels, a, b)
    return bool((c.double() - a.double() @ b.double()).abs().max() < 0.1)


def _flush_device_printf() -> None:
    # Device printf lands in the C library's stdout buffer (block-buffered into a pipe); flush
    # it so that the lines come before what Python prints next.
    import ctypes

    ctypes.CDLL(None).fflush(None)


def _run_torch_compile(torch, triton, kernels, dev, state, api) -> bool:
    # Issue 18: this printed 61,000-69,000 lines under the per-program printf.
    fn = torch.compile(lambda x: torch.log(x) * 2 + 1)
    x = torch.randn(4096, device=dev)  # about half negative: NaN there
    # First call: compile; Inductor benchmarks its candidate configs (one compiled copy each,
    # each with its own records) on x, then runs the winner.
    fn(x)
    torch.cuda.synchronize()
    _flush_device_printf()
    if api is not None:
        copies = api.report(per_copy=True)  # re-arms every copy
        merged = api.merge(copies)
        state["first_call"] = {"copies": len(copies), "sites": len(merged),
                               "lanes": sum(r.lanes for r in merged)}
    print(SECOND_CALL, flush=True)
    out = fn(x)  # the chosen kernel: one launch
    torch.cuda.synchronize()
    _flush_device_printf()
    nans = int(torch.isnan(out).sum())
    neg = x < 0
    state["extra"] = {"nan_lanes": nans, "first_nan": int(torch.nonzero(torch.isnan(out))[0]),
                      **({"first_call": state["first_call"]} if "first_call" in state else {})}
    return bool(nans == int(neg.sum()) and torch.allclose(out[~neg], torch.log(x[~neg]) * 2 + 1))


def _site(name: str) -> str:
    kernels = import_file(__file__, "kernels.py")
    return f"{kernels.SOURCE}:{kernels.site_line(name)}"


def _key(kernel: str, site: str, what: str) -> str:
    return f"{kernel} {site} {what}"


OVERFLOW_ROWS = 200  # rows >= 128 wrap: 128 * 2**24 = 2**31
NAN = "store non-finite"
WRAP = "i32 offset overflow lanes"


def _one(kernel: str, site: str, what: str) -> Callable[[], dict[str, int]]:
    return lambda: {_key(kernel, _site(site), what): 1}


SCENARIOS: dict[str, dict[str, Any]] = {
    "nan_record": {
        "passes": ["nan_inf_check"], "run": _run_ratio, "bug": True,
        "lines": _one("ratio_kernel", "ratio_store", NAN),
        # first_index: the smallest NaN element (1-D kernel: pid * BLOCK + lane = element)
        "records": lambda extra: {_key("ratio_kernel", _site("ratio_store"), NAN):
                                  {"lanes": 37, "first_index": extra["first_bad"]}}},
    # Two stores sharing one fast path (issue 18): the clean one stays silent, the NaN one
    # reports its exact lanes and first index.
    "nan_pair": {
        "passes": ["nan_inf_check"], "run": _run_ratio_pair,
        "lines": _one("ratio_pair_kernel", "pair_ratio_store", NAN),
        "records": lambda extra: {_key("ratio_pair_kernel", _site("pair_ratio_store"), NAN):
                                  {"lanes": 37, "first_index": extra["first_bad"]}}},
    # A 2-D masked tile through the default count fast path and the peak one: same records.
    "nan_2d_count": {
        "passes": ["nan_inf_check"], "options": {"fast-path": "count"}, "run": _run_ratio_2d,
        "lines": _one("ratio_2d_kernel", "ratio_2d_store", NAN),
        "records": lambda extra: {_key("ratio_2d_kernel", _site("ratio_2d_store"), NAN):
                                  {"lanes": 37, "first_index": extra["first_bad"]}}},
    "nan_2d_peak": {
        "passes": ["nan_inf_check"], "options": {"fast-path": "peak"}, "run": _run_ratio_2d,
        "lines": _one("ratio_2d_kernel", "ratio_2d_store", NAN),
        "records": lambda extra: {_key("ratio_2d_kernel", _site("ratio_2d_store"), NAN):
                                  {"lanes": 37, "first_index": extra["first_bad"]}}},
    # fast-path=warp (opt-in): per-warp counts and masked tensor atomics; lanes and first index
    # must be exact (a 1-D tile through the [R, W, C] view, a 2-D tile with warps on rows).
    "nan_record_warp": {
        "passes": ["nan_inf_check"], "options": {"fast-path": "warp"}, "run": _run_ratio,
        "lines": _one("ratio_kernel", "ratio_store", NAN),
        "records": lambda extra: {_key("ratio_kernel", _site("ratio_store"), NAN):
                                  {"lanes": 37, "first_index": extra["first_bad"]}}},
    "nan_2d_warp": {
        "passes": ["nan_inf_check"], "options": {"fast-path": "warp"}, "run": _run_ratio_2d,
        "lines": _one("ratio_2d_kernel", "ratio_2d_store", NAN),
        "records": lambda extra: {_key("ratio_2d_kernel", _site("ratio_2d_store"), NAN):
                                  {"lanes": 37, "first_index": extra["first_bad"]}}},
    # fast-path=reload: the peak clean path; the reporting branch reloads the stored lanes
    # (exact lanes and first index from memory; a 1-D and a 2-D masked tile, and a store in a
    # loop, whose branch reloads in the loop body).
    "nan_record_reload": {
        "passes": ["nan_inf_check"], "options": {"fast-path": "reload"}, "run": _run_ratio,
        "lines": _one("ratio_kernel", "ratio_store", NAN),
        "records": lambda extra: {_key("ratio_kernel", _site("ratio_store"), NAN):
                                  {"lanes": 37, "first_index": extra["first_bad"]}}},
    "nan_2d_reload": {
        "passes": ["nan_inf_check"], "options": {"fast-path": "reload"}, "run": _run_ratio_2d,
        "lines": _one("ratio_2d_kernel", "ratio_2d_store", NAN),
        "records": lambda extra: {_key("ratio_2d_kernel", _site("ratio_2d_store"), NAN):
                                  {"lanes": 37, "first_index": extra["first_bad"]}}},
    # A store in a loop: the count path updates the records in the loop body.
    "nan_loop_count": {
        "passes": ["nan_inf_check"], "options": {"fast-path": "count"}, "run": _run_ratio_rows,
        "lines": _one("ratio_rows_kernel", "ratio_rows_store", NAN),
        "records": lambda extra: {_key("ratio_rows_kernel", _site("ratio_rows_store"), NAN):
                                  {"lanes": 37, "first_index": extra["first_bad"]}}},
    "nan_loop_wide": {
        "passes": ["nan_inf_check"], "options": {"fast-path": "reload"},
        "run": lambda *a: _run_ratio_rows(*a, shape=RATIO_ROWS_WIDE),
        "lines": _one("ratio_rows_kernel", "ratio_rows_store", NAN),
        "records": lambda extra: {_key("ratio_rows_kernel", _site("ratio_rows_store"), NAN):
                                  {"lanes": 37, "first_index": extra["first_bad"]}}},
    # The loop path's per-thread peak ignores the mask: the 12 masked-off columns of every row
    # hold 0/0 = NaN (never stored), so their threads take the branch in every iteration and
    # must count only the 37 planted lanes.
    "nan_loop_masked_nan": {
        "passes": ["nan_inf_check"],
        "run": lambda *a: _run_ratio_rows(*a, kernel="ratio_rows_nan_tail_kernel"),
        "lines": _one("ratio_rows_nan_tail_kernel", "ratio_rows_nan_tail_store", NAN),
        "records": lambda extra: {
            _key("ratio_rows_nan_tail_kernel", _site("ratio_rows_nan_tail_store"), NAN):
            {"lanes": 37, "first_index": extra["first_bad"]}}},
    # An unrolled loop (tl.static_range): 8 stores of one line, one reduction and one record
    # update for all of them (site run; Liger's MoE gather).
    "nan_unrolled_site_run": {
        "passes": ["nan_inf_check"], "run": _run_ratio_unrolled,
        "lines": _one("ratio_unrolled_kernel", "ratio_unrolled_store", NAN),
        "records": lambda extra: {
            _key("ratio_unrolled_kernel", _site("ratio_unrolled_store"), NAN):
            {"lanes": 37, "first_index": extra["first_bad"]}}},
    # A row kernel's mean, rstd and row stores share one flag and one branch (flag group, issue
    # 32, the layer norms): each site keeps its own exact record.
    "nan_flag_group": {
        "passes": ["nan_inf_check"], "run": _run_layer_norm_rows(clean=False),
        "lines": lambda: {_key("layer_norm_rows_kernel", _site(site), NAN): 1
                          for site in ("ln_mean_store", "ln_rstd_store", "ln_y_store")},
        "records": lambda extra: {
            _key("layer_norm_rows_kernel", _site("ln_mean_store"), NAN):
                {"lanes": 37, "first_index": extra["first_nan_row"]},
            _key("layer_norm_rows_kernel", _site("ln_rstd_store"), NAN):
                {"lanes": 60, "first_index": extra["first_bad_row"]},
            _key("layer_norm_rows_kernel", _site("ln_y_store"), NAN):
                {"lanes": 60 * LN_ROWS[1], "first_index": extra["first_bad_lane"]}}},
    "nan_flag_group_clean": {"passes": ["nan_inf_check"], "run": _run_layer_norm_rows(clean=True)},
    "nan_loop_reload": {
        "passes": ["nan_inf_check"], "options": {"fast-path": "reload"}, "run": _run_ratio_rows,
        "lines": _one("ratio_rows_kernel", "ratio_rows_store", NAN),
        "records": lambda extra: {_key("ratio_rows_kernel", _site("ratio_rows_store"), NAN):
                                  {"lanes": 37, "first_index": extra["first_bad"]}}},
    "nan_rearm": {
        "passes": ["nan_inf_check"], "run": _run_ratio_rearm,
        "lines": lambda: {_key("ratio_kernel", _site("ratio_store"), NAN): 2},
        "records": lambda extra: {_key("ratio_kernel", _site("ratio_store"), NAN):
                                  {"lanes": 37, "first_index": extra["first_bad"]}}},
    # check() raises instead of printing; it re-arms the site, so nothing is printed at exit.
    "nan_check_raises": {
        "passes": ["nan_inf_check"], "run": _run_ratio_raises, "no_report": True,
        "lines": lambda: {}, "raises": "ratio_store"},
    # The opt-in immediate device line (print=first): one device line and the host's one.
    "nan_print_first": {
        "passes": ["nan_inf_check"], "options": {"print": "first"}, "run": _run_ratio,
        "no_timing": True,
        "lines": lambda: {_key("ratio_kernel", _site("ratio_store"), NAN): 2},
        "records": lambda extra: {_key("ratio_kernel", _site("ratio_store"), NAN):
                                  {"lanes": 37, "first_index": extra["first_bad"]}}},
    # Nobody calls report()/check(): the one line per site comes from the exit summary.
    "nan_exit_summary": {
        "passes": ["nan_inf_check"], "run": _run_ratio, "no_report": True,
        "lines": _one("ratio_kernel", "ratio_store", NAN)},
    "nan_abort": {"passes": ["nan_inf_check"], "options": {"mode": "abort"}, "run": _run_ratio,
                  "abort": "ratio_store"},
    "poison_window_sum": {
        "passes": ["masked_load_poison", "nan_inf_check"], "run": _run_window, "bug": True,
        "lines": _one("window_sum_kernel", "window_store", NAN),
        # one stored lane (the sum) in the last program (1000)
        "records": lambda extra: {_key("window_sum_kernel", _site("window_store"), NAN):
                                  {"lanes": 1, "first_index": 1000}}},
    "poison_masked_sum_clean": {"passes": list(ALL), "run": _run_masked_sum},
    "offset_record": {
        "passes": ["offset_overflow_check"], "run": _run_rows(OVERFLOW_ROWS), "bug": True,
        "lines": _one("row_copy_kernel", "row_offset", WRAP),
        "records": lambda extra: {_key("row_copy_kernel", _site("row_offset"), WRAP):
                                  {"lanes": (OVERFLOW_ROWS - 128) * ROW_BLOCK,
                                   "first_index": 128 * ROW_BLOCK}}},
    "offset_abort": {"passes": ["offset_overflow_check"], "options": {"mode": "abort"},
                     "run": _run_rows(OVERFLOW_ROWS), "abort": "row_offset"},
    "offset_clean": {"passes": ["offset_overflow_check"], "run": _run_rows(127)},
    # The same wrap around a loop (issue 32): the load's offset (before the loop) and the
    # store's (after it) both report in front of the loop, with the same records as in place.
    "offset_loop_record": {
        "passes": ["offset_overflow_check"], "run": _run_row_sums(OVERFLOW_ROWS), "bug": True,
        "lines": lambda: {_key("row_sum_kernel", _site(site), WRAP): 1
                          for site in ("loop_load_offset", "loop_store_offset")},
        "records": lambda extra: {_key("row_sum_kernel", _site(site), WRAP):
                                  {"lanes": (OVERFLOW_ROWS - 128) * ROW_BLOCK,
                                   "first_index": 128 * ROW_BLOCK}
                                  for site in ("loop_load_offset", "loop_store_offset")}},
    "offset_loop_clean": {"passes": ["offset_overflow_check"], "run": _run_row_sums(127)},
    # A masked gather with the poison and the offset check together: silent (issue 26 item 2).
    "poison_gather_clean": {"passes": ["masked_load_poison", "offset_overflow_check"],
                            "run": _run_gather},
    "scale_clean": {"passes": list(ALL), "run": _run_scale},
    "gemm_clean": {"passes": list(ALL), "run": _run_gemm},
    "torch_compile_nan": {"passes": ["nan_inf_check"], "run": _run_torch_compile,
                          "dynamic_site": True, "global": True,
                          "env": {"TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1"}},
}


# -------------------------------------------------------------------------- parent side

def _run_child(args: list[str], env: dict[str, str] | None = None,
               wrapper: list[str] | None = None) -> tuple[int, str, float]:
    start = time.perf_counter()
    try:
        # One pipe for both streams: the host's report lines (stderr) keep their place among
        # the device printf lines and the child's markers (stdout, flushed).
        proc = subprocess.run([*(wrapper or []), sys.executable, "-m", MODULE, *args],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=CHILD_TIMEOUT_S, cwd=REPO, env={**os.environ, **(env or {})})
        rc, text = proc.returncode, proc.stdout
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout or b""
        rc, text = 124, (out.decode() if isinstance(out, bytes) else out) + "\nTIMEOUT"
    return rc, text, time.perf_counter() - start


def _scenario(name: str) -> Outcome:
    spec = SCENARIOS[name]
    rc, text, wall = _run_child(["--child", name], env=spec.get("env"))
    result = re.search(r"^RESULT (.*)$", text, re.M)
    extra = json.loads(result.group(1)) if result else {}
    out = Outcome(name, list(spec["passes"]),
                  spec["lines"]() if "lines" in spec else {},
                  spec["records"](extra) if "records" in spec and result else {},
                  expect_abort="abort" in spec, expect_raise=spec.get("raises"))
    if out.expect_raise:
        out.expect_raise = _site(out.expect_raise)
    out.wall_s = round(wall, 1)
    out.output_lines = len(text.splitlines())
    lines: Counter[str] = Counter()
    counted = text
    if spec.get("dynamic_site") and SECOND_CALL in text:
        # Lines of the second call only: one launch of the kernel Inductor chose. The first
        # call's lines (one per compiled candidate config) are kept apart.
        before, counted = text.split(SECOND_CALL, 1)
        out.first_call_lines = sum(1 for _ in REPORT.finditer(before))
    for m in REPORT.finditer(counted):
        lines[_key(m.group(2), m.group(3), m.group(4).strip())] += 1
    out.lines = dict(lines)
    records = re.search(r"^RECORDS (.*)$", text, re.M)
    if records:
        out.records = {r["key"]: {k: r[k] for k in ("lanes", "programs", "first_index")}
                       for r in json.loads(records.group(1))}
    raised = re.search(r"^RAISED (.*)$", text, re.M)
    out.raised = json.loads(raised.group(1)) if raised else None
    kernel_ms = re.search(r"^KERNEL_MS (\S+)$", text, re.M)
    out.kernel_ms = float(kernel_ms.group(1)) if kernel_ms else None
    out.aborted = rc != 0 or result is None
    if result:
        out.correct = extra.get("correct")
    if spec.get("dynamic_site") and result:
        out.first_call_copies = extra.get("first_call", {}).get("copies")
        # Inductor names the kernel and the site: one line for the one store, and a record whose
        # lanes are the NaN count and whose first index is the first NaN (1-D kernel).
        keys = list(out.lines)
        out.expected_lines = {keys[0]: 1} if len(keys) == 1 else {"<one Inductor site>": 1}
        out.expected_records = {k: {"lanes": extra["nan_lanes"], "first_index": extra["first_nan"]}
                                for k in out.records}
        if len(out.records) != 1:
            out.expected_records = {"<one Inductor record>": {}}
    if out.expect_abort:
        out.expected_lines = out.lines  # the device assert stops at the first program
        out.abort_site_seen = (f"site={_site(spec['abort'])}" in text
                               and ("Assertion" in text or "assert" in text.lower()))
    out.detail = text[-2000:] if not out.ok else ""
    return out


# ------------------------------------------------------------------- nearest tools (plain runs)

BUGS = {"nan_record": "NaN from 0/0 at a store", "poison_window_sum": "read of masked-off lanes",
        "offset_record": "i32 offset wrap (still inside the buffer)"}
# What counts as a tool reporting the bug: a device assert (TRITON_DEBUG's overflow checks,
# instrumentation asserts) or a compute-sanitizer error summary.
SIGNS = re.compile(r"Assertion|device-side assert|ERROR SUMMARY: [1-9]")


def _compute_sanitizer() -> str | None:
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    for candidate in ("/usr/local/cuda/bin/compute-sanitizer",
                      *sorted(map(str, Path("/usr/local").glob("cuda-*/bin/compute-sanitizer")))):
        if os.path.exists(candidate):
            return candidate
    return None


def _tools() -> list[dict[str, Any]]:
    sanitizer = _compute_sanitizer()
    configs: list[tuple[str, dict[str, str], list[str] | None]] = [
        ("plain", {}, None),
        ("TRITON_DEBUG=1", {"TRITON_DEBUG": "1"}, None),
        ("TRITON_INSTRUMENTATION_MODE=fpsan", {"TRITON_INSTRUMENTATION_MODE": "fpsan"}, None),
        ("TRITON_INSTRUMENTATION_MODE=iisan", {"TRITON_INSTRUMENTATION_MODE": "iisan"}, None),
    ]
    if sanitizer:
        configs.append(("compute-sanitizer memcheck", {}, [sanitizer, "--tool", "memcheck"]))
    rows = []
    for bug, what in BUGS.items():
        plain_ms = None
        for label, env, wrapper in configs:
            rc, text, wall = _run_child(["--child", bug, "--plain"], env=env, wrapper=wrapper)
            ms = re.search(r"^KERNEL_MS (\S+)$", text, re.M)
            kernel_ms = float(ms.group(1)) if ms else None
            if label == "plain":
                plain_ms = kernel_ms
            body = "\n".join(ln for ln in text.splitlines()
                             if not ln.startswith(("RESULT", "KERNEL_MS", "RECORDS")))
            caught = bool(SIGNS.search(body)) if label != "plain" else False
            rows.append({"bug": bug, "what": what, "tool": label, "rc": rc, "caught": caught,
                         "output_lines": len(body.splitlines()), "kernel_ms": kernel_ms,
                         "slowdown": (kernel_ms / plain_ms) if kernel_ms and plain_ms else None,
                         "wall_s": round(wall, 1), "tail": body[-600:]})
    # triton_ext's own rows come from the scenarios (same kernels, same inputs).
    return rows


def _bench(out_dir: Path, quick: bool) -> dict[str, Any]:
    start = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-m", "triton_ext", "bench", "sanitizers",
                               "--out", str(out_dir), *(["--quick"] if quick else [])],
                              capture_output=True, text=True, cwd=REPO, timeout=300)
        rc, text = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired:
        rc, text = 124, "triton-ext bench sanitizers timed out after 300 s"
    wall = time.perf_counter() - start
    result: dict[str, Any] = {"rc": rc, "wall_s": round(wall, 1), "out": str(out_dir),
                              "quick": quick, "tail": text[-3000:]}
    for path in sorted(out_dir.glob("bench-*.json")):
        result["json"] = str(path)
    return result


# ------------------------------------------------------------- print-cost probe (issue 18)
# A device line (print=first) is a `vprintf` call. Never executed in a correct program, the call
# still changes the kernel's register allocation (the ABI of a call; on CPU, the in-house GEMM
# compiles to 198 registers without sanitizers, 209 + a 16-byte stack frame with
# nan_inf_check{print=first}, 199 with the default print=none; offset_overflow_check 214 + 64 B
# vs 192). `--probe-print OUT` times bench_kernel's GEMM 4096^3 and attention seq 2048 off, with
# each sanitizer as it ships (print=none: the host prints from the records), with the opt-in
# device line (print=first) and with neither print nor records ("check only"), in interleaved
# rounds; speed = off / variant.

PROBE_VARIANTS: list[tuple[str, str | None, dict[str, Any]]] = [
    ("off", None, {}),
    ("nan_inf_check", "nan_inf_check", {}),
    ("nan_inf_check print=first", "nan_inf_check", {"print": "first"}),
    ("nan_inf_check check only", "nan_inf_check", {"records": False}),
    ("offset_overflow_check", "offset_overflow_check", {}),
    ("offset_overflow_check print=first", "offset_overflow_check", {"print": "first"}),
    ("offset_overflow_check check only", "offset_overflow_check", {"records": False}),
]


def _write_probe(out: Path, key: str, result: dict[str, Any]) -> None:
    """Writes `result` under `key` of the JSON object in `out`, keeping the other probes' keys
    (both probes go to results/explore-<gpu>.json, the one exploration file the folder layout
    allows)."""
    data: dict[str, Any] = {}
    if out.exists():
        try:
            loaded = json.loads(out.read_text())
            data = loaded if isinstance(loaded, dict) and "device" not in loaded else {}
        except json.JSONDecodeError:
            data = {}
    data[key] = result
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {key} into {out}")


def _probe_print(out: Path, rounds: int = 5) -> int:
    import torch
    import triton
    from triton.testing import do_bench

    import triton_ext

    kernels = import_file(__file__, "kernels.py")
    torch.manual_seed(0)
    dev = "cuda"
    cases: dict[str, tuple[Any, Any]] = {}
    n = 4096
    a = torch.randn(n, n, device=dev, dtype=torch.float16)
    b = torch.randn(n, n, device=dev, dtype=torch.float16)
    c = torch.empty(n, n, device=dev, dtype=torch.float16)

    def gemm() -> None:
        kernels.bench_kernel[(triton.cdiv(n, 128), triton.cdiv(n, 128))](
            a, b, b, c, n, n, n, n, n, 1.0, WORKLOAD=1, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64,
            num_warps=4, num_stages=3)

    cases["fp16 GEMM 4096"] = (gemm, c)
    seq, d = 2048, 64
    heads = 16384 * 32 // seq
    q = torch.randn(heads, seq, d, device=dev, dtype=torch.float16)
    k = torch.randn(heads, seq, d, device=dev, dtype=torch.float16)
    v = torch.randn(heads, seq, d, device=dev, dtype=torch.float16)
    o = torch.empty_like(q)

    def attention() -> None:
        kernels.bench_kernel[(triton.cdiv(seq, 128), heads)](
            q, k, v, o, seq, 0, 0, seq * d, d, d ** -0.5, WORKLOAD=2, BLOCK_M=128, BLOCK_N=64,
            BLOCK_K=d, num_warps=4, num_stages=3)

    cases["attention fwd seq 2048"] = (attention, o)

    def run(launch: Any, pass_name: str | None, options: dict[str, Any]) -> float:
        if pass_name is None:
            return do_bench(launch, warmup=25, rep=200)
        with triton_ext.enabled(pass_name, options=options):
            return do_bench(launch, warmup=25, rep=200)

    from triton_ext.bench.gpu import checkout_commit

    result: dict[str, Any] = {"device": torch.cuda.get_device_name(), "rounds": rounds,
                              "commit": checkout_commit(), "cases": {}}
    ok = True
    for name, (launch, produced) in cases.items():
        reference = None
        times: dict[str, list[float]] = {label: [] for label, _, _ in PROBE_VARIANTS}
        for label, pass_name, options in PROBE_VARIANTS:  # compile, check the output once
            produced.zero_()
            if pass_name is None:
                launch()
            else:
                with triton_ext.enabled(pass_name, options=options):
                    launch()
            torch.cuda.synchronize()
            if reference is None:
                reference = produced.clone()
            elif not torch.equal(produced, reference):
                ok = False
                print(f"{name} {label}: output differs from off", flush=True)
        for r in range(rounds):
            order = PROBE_VARIANTS if r % 2 == 0 else PROBE_VARIANTS[::-1]
            for label, pass_name, options in order:
                times[label].append(run(launch, pass_name, options))
        off = statistics.median(times["off"])
        row = {label: {"ms": round(statistics.median(t), 5), "speed": round(off / statistics.median(t), 4),
                       "ms_rounds": [round(x, 5) for x in t]} for label, t in times.items()}
        result["cases"][name] = row
        print(name + ": " + ", ".join(f"{label} {v['speed']:.3f}x" for label, v in row.items()), flush=True)
    _write_probe(out, "probe_print", result)
    return 0 if ok else 1


# ------------------------------------------------------- fast-path probe (issue 18, row kernels)
# nan_inf_check's default fast path for a single store in the kernel's entry block (count: one
# two-operand reduction of (count, first lane), nothing of the tile live after it) against the
# previous one (peak: a NaN-propagating max, then a branch that recounts from |value|, keeping
# the tile live across the reduction: Liger RMS-norm forward 39 -> 47 registers on CPU). Times the
# corpus's ~15 us row kernels off / count / peak / warp in ABBA rounds of gpu_time_ms (speed = off /
# variant; launches queued behind a GPU sleep, so no wait for the CPU is timed) and checks that
# each variant's outputs equal the plain run's bitwise.

FAST_PATH_KERNELS = ("liger_rms_norm_fwd", "liger_layer_norm_fwd", "fla_layer_norm_fwd",
                     "liger_softmax_single", "liger_geglu_fwd", "liger_swiglu_fwd",
                     "liger_fused_add_rms_norm_fwd", "fla_softmax_fwd", "liger_rms_norm_bwd")
FAST_PATH_VARIANTS: list[tuple[str, dict[str, Any] | None]] = [
    ("off", None), ("count", {"fast-path": "count"}), ("peak", {"fast-path": "peak"}),
    ("warp", {"fast-path": "warp"}), ("reload (default)", {})]


def _probe_fast_path(out: Path, rounds: int = 5, kernels: tuple[str, ...] = FAST_PATH_KERNELS) -> int:
    import torch

    from triton_ext.bench.gpu import checkout_commit

    result: dict[str, Any] = {"device": torch.cuda.get_device_name(), "commit": checkout_commit(),
                              "rounds": rounds, "kernels": {}}
    ok = True
    for name in kernels:
        try:
            ok &= _probe_fast_path_kernel(name, rounds, result)
        except Exception as exc:  # noqa: BLE001  (recorded; the other kernels still run)
            ok = False
            result["kernels"][name] = {"error": f"{type(exc).__name__}: {exc}"[:500]}
            print(f"{name}: ERROR {type(exc).__name__}: {exc}", flush=True)
    sanitizers_found = []
    try:
        import triton_ext

        sanitizers = triton_ext.import_extension("sanitizers")
        sanitizers_found = [r.line() for r in sanitizers.report(echo=False)]
    except Exception as exc:  # noqa: BLE001
        sanitizers_found = [f"report() failed: {exc}"]
    result["findings"] = sanitizers_found  # clean kernels: none expected
    for label in ("count", "peak", "warp", "reload (default)"):
        speeds = [k[label]["speed"] for k in result["kernels"].values() if label in k]
        if speeds:
            print(f"{label}: median {statistics.median(speeds):.3f}x worst {min(speeds):.3f}x "
                  f"over {len(speeds)} kernels", flush=True)
    if sanitizers_found:
        print("findings on clean inputs:", *sanitizers_found, sep="\n  ")
    _write_probe(out, "probe_fast_path", result)
    return 0 if ok else 1


def _probe_fast_path_kernel(name: str, rounds: int, result: dict[str, Any]) -> bool:
    """Times one corpus kernel off / count / peak into result["kernels"][name]; False when a
    variant's outputs differ from the plain run's."""
    import torch

    import triton_ext
    from tests.realworld.realworld_kernels import BY_NAME, Tensors
    from triton_ext.testing import flush_buffer, gpu_time_ms, interleaved_rounds

    kernel = BY_NAME[name]
    fn = kernel.fn()
    launch = kernel.build(Tensors("cuda", 0))

    def enabled(options: dict[str, Any] | None) -> Any:
        return (triton_ext.enabled("nan_inf_check", options=options) if options is not None
                else contextlib.nullcontext())

    def launch_once(args: dict[str, Any]) -> None:
        fn[launch.grid](**args, num_warps=launch.num_warps, num_stages=launch.num_stages)

    def run(args: dict[str, Any], options: dict[str, Any] | None) -> None:
        with enabled(options):
            launch_once(args)

    outputs: dict[str, list[Any]] = {}
    for label, options in FAST_PATH_VARIANTS:  # compile; outputs of one launch on fresh inputs
        fresh = {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in launch.args.items()}
        run(fresh, options)
        torch.cuda.synchronize()
        outputs[label] = [v for v in fresh.values() if isinstance(v, torch.Tensor)]

    def equal(a: Any, b: Any) -> bool:
        if torch.equal(a, b):
            return True
        if not a.is_floating_point():
            return False
        if launch.nondeterministic:  # atomics: the order of additions varies
            return torch.allclose(a.float(), b.float(), atol=1e-3, rtol=1e-3, equal_nan=True)
        return torch.equal(a.nan_to_num(), b.nan_to_num())

    same = {label: all(equal(a, b) for a, b in zip(outs, outputs["off"]))
            for label, outs in outputs.items()}
    variants = dict(FAST_PATH_VARIANTS)
    flush = flush_buffer()

    def reading(label: str) -> float:
        # The pass set is entered once around a reading (entering it costs milliseconds: per
        # launch it timed the context, window 1 of session 5 read 0.001-0.007x).
        with enabled(variants[label]):
            return gpu_time_ms(lambda: launch_once(launch.args), flush=flush)

    times = interleaved_rounds(list(variants), reading, rounds)
    off = statistics.median(times["off"])
    row = {label: {"ms": round(statistics.median(t), 5), "speed": round(off / statistics.median(t), 4),
                   "same_output": same[label]} for label, t in times.items()}
    result["kernels"][name] = row
    print(f"{name}: " + ", ".join(f"{label} {v['speed']:.3f}x{'' if v['same_output'] else ' OUTPUT DIFFERS'}"
                                  for label, v in row.items()), flush=True)
    return all(same.values())


def _tools_table(tools: list[dict[str, Any]], outcomes: list[Outcome]) -> str:
    """README table: what each tool catches on the planted bugs, its cost and output volume."""
    ours = {o.name: o for o in outcomes}
    rows = ["| planted bug | tool | caught | output lines | kernel ms | time / plain |",
            "|---|---|---|---|---|---|"]
    for bug, what in BUGS.items():
        plain = next((r["kernel_ms"] for r in tools if r["bug"] == bug and r["tool"] == "plain"), None)
        for r in (r for r in tools if r["bug"] == bug):
            if r["tool"] == "plain":
                continue
            ms = f"{r['kernel_ms']:.4f}" if r["kernel_ms"] else "- (aborted)"
            sl = f"{r['slowdown']:.2f}" if r["slowdown"] else "-"
            rows.append(f"| {what} | {r['tool']} | {'yes' if r['caught'] else 'no'} | "
                        f"{r['output_lines']} | {ms} | {sl} |")
        o = ours.get(bug)
        if o:
            sl = f"{o.kernel_ms / plain:.2f}" if o.kernel_ms and plain else "-"
            ms = f"{o.kernel_ms:.4f}" if o.kernel_ms else "-"
            rows.append(f"| {what} | triton_ext {'+'.join(o.passes)} | "
                        f"{'yes' if o.lines else 'no'} ({sum(o.lines.values())} line, records) | "
                        f"{o.output_lines} | {ms} | {sl} |")
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="JSON file for the results")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--plain", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--skip-tools", action="store_true", help="no TRITON_DEBUG / "
                        "instrumentation-mode / compute-sanitizer comparison")
    parser.add_argument("--skip-bench", action="store_true", help="no triton-ext bench run")
    parser.add_argument("--probe-print", type=Path, metavar="JSON",
                        help="only time what the one-line print costs GEMM/attention (issue 18); "
                             "written under 'probe_print' of JSON (results/explore-<gpu>.json)")
    parser.add_argument("--probe-fast-path", type=Path, metavar="JSON",
                        help="only time nan_inf_check's count vs peak fast path on the corpus's "
                             "row kernels (issue 18); written under 'probe_fast_path' of JSON")
    parser.add_argument("--fast-path-kernels", nargs="+", metavar="NAME",
                        help="corpus kernels for --probe-fast-path (default: the row kernels; "
                             "e.g. the GEMM/attention epilogues torchao_qt_int8_mm "
                             "sglang_extend_attention)")
    parser.add_argument("--bench-out", type=Path, default=HERE / "results",
                        help="folder for the bench's JSON/PNG/BENCHMARK.md (default: results/)")
    parser.add_argument("--only", nargs="*", help="scenario names to run (default: all)")
    parser.add_argument("--budget-s", type=float, default=200,
                        help="run the bench's quick shapes only when scenarios and tools took "
                             "longer than this")
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.plain)
        return 0
    if args.probe_print:
        return _probe_print(args.probe_print)
    if args.probe_fast_path:
        return _probe_fast_path(args.probe_fast_path, kernels=tuple(args.fast_path_kernels or
                                                                    FAST_PATH_KERNELS))
    if not args.out:
        parser.error("--out is required")
    log: list[str] = []

    def say(text: str = "") -> None:
        print(text, flush=True)
        log.append(text)

    t0 = time.perf_counter()
    outcomes = [_scenario(name) for name in (args.only or SCENARIOS)]
    say(f"{'scenario':26} {'ok':3} {'lines':>5} {'out':>5} {'aborted':8} {'correct':8} "
        f"{'kernel ms':>9}  records")
    for o in outcomes:
        ms = f"{o.kernel_ms:9.4f}" if o.kernel_ms is not None else f"{'-':>9}"
        say(f"{o.name:26} {'yes' if o.ok else 'NO':3} {sum(o.lines.values()):5} "
            f"{o.output_lines:5} {str(o.aborted):8} {str(o.correct):8} {ms}  "
            f"{ {k.split()[0] + ' ' + Path(k.split()[1]).name: v for k, v in o.records.items()} }")
        if o.first_call_lines is not None:
            say(f"  first call (compile + autotune): {o.first_call_lines} line(s) from "
                f"{o.first_call_copies} compiled copies; counted above: the second call")
        if not o.ok:
            say(f"  expected lines {o.expected_lines} records {o.expected_records} "
                f"raise {o.expect_raise}\n  got lines {o.lines} raised {o.raised}\n"
                f"  output tail:\n{o.detail}")

    tools: list[dict[str, Any]] = []
    if not args.skip_tools:
        tools = _tools()
        ours = {o.name: o for o in outcomes}
        say(f"\n{'bug':18} {'tool':36} {'caught':6} {'lines':>6} {'kernel ms':>9} {'x plain':>7}")
        for row in tools:
            ms = f"{row['kernel_ms']:9.4f}" if row["kernel_ms"] else f"{'-':>9}"
            sl = f"{row['slowdown']:7.2f}" if row["slowdown"] else f"{'-':>7}"
            say(f"{row['bug']:18} {row['tool']:36} {str(row['caught']):6} "
                f"{row['output_lines']:6} {ms} {sl}")
        for bug in BUGS:
            o = ours.get(bug)
            if o:
                plain = next((r["kernel_ms"] for r in tools if r["bug"] == bug
                              and r["tool"] == "plain"), None)
                sl = (o.kernel_ms / plain) if o.kernel_ms and plain else None
                say(f"{bug:18} {'triton_ext (' + ','.join(o.passes) + ')':36} "
                    f"{str(bool(o.lines)):6} {o.output_lines:6} "
                    f"{(f'{o.kernel_ms:9.4f}' if o.kernel_ms else '-'):>9} "
                    f"{(f'{sl:7.2f}' if sl else '-'):>7}")

    if tools:
        say("\nREADME table (passes/Sanitizers/README.md, 'Against the nearest tools'):")
        say(_tools_table(tools, outcomes))

    bench: dict[str, Any] = {}
    if not args.skip_bench:
        # The full bench takes about two minutes; past the budget, its quick shapes only.
        quick = time.perf_counter() - t0 > args.budget_s
        bench = _bench(args.bench_out, quick)
        say(f"\ntriton-ext bench sanitizers{' --quick' if quick else ''}: rc={bench['rc']} in "
            f"{bench['wall_s']}s -> {bench.get('json', bench['out'])}")
        say(bench["tail"][-1500:])

    import torch
    import triton
    from triton_ext.bench.gpu import checkout_commit

    result = {"device": torch.cuda.get_device_name(), "commit": checkout_commit(),
              "triton": triton.__version__,
              "torch": torch.__version__, "compute_sanitizer": _compute_sanitizer(),
              "wall_s": round(time.perf_counter() - t0, 1),
              "scenarios": [asdict(o) | {"ok": o.ok} for o in outcomes], "tools": tools,
              "bench": bench}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    args.out.with_suffix(".log").write_text("\n".join(log) + "\n")
    say(f"\nwrote {args.out} ({result['wall_s']} s)")
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
