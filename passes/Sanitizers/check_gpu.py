"""GPU check of the sanitizer passes: planted bugs caught at the right line, no false
positives on correct kernels, and overhead.

    python -m passes.Sanitizers.check_gpu --out sanitizers-h200.json

Needs torch, triton 3.9.0, this repository (triton_ext) and the built TritonExtSanitizers plugin
(`TRITON_EXT_BUILD_DIR` if not the default build dir). Every scenario runs in a child process
(device printf goes to the child's stdout; an abort kills its CUDA context). A scenario passes
when the reports in its output are exactly the expected (kernel, file:line, total count) and,
where the kernel is correct, its result matches a float64 torch reference on fresh random inputs.
Then triton.testing.do_bench times a memory-bound vector kernel and a GEMM with the sanitizers
off and on. Prints a table, writes everything to --out as JSON, exits non-zero if a check fails
(after writing the JSON).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from triton_ext.testing import import_file

HERE = Path(__file__).resolve().parent

REPORT = re.compile(r"pid \((\d+), (\d+), (\d+)\).*?\[triton-ext (\w+)\] kernel=(\S+) "
                    r"site=(\S+) ([^=]+)=\s*(-?\d+)")
ALL = ("nan_inf_check", "masked_load_poison", "offset_overflow_check")


@dataclass
class Outcome:
    name: str
    passes: list[str]
    expected: dict[str, int]            # "kernel site what" -> total count over programs
    found: dict[str, int] = field(default_factory=dict)
    aborted: bool = False
    expect_abort: bool = False
    abort_site_seen: bool | None = None
    correct: bool | None = None         # result vs float64 reference (None: not checked)
    detail: str = ""

    @property
    def ok(self) -> bool:
        return (self.found == self.expected and self.aborted == self.expect_abort
                and self.abort_site_seen is not False and self.correct is not False)


# --------------------------------------------------------------------------- child side

def _child(scenario: str) -> None:
    import torch
    import triton

    kernels = import_file(__file__, "kernels.py")
    import triton_ext

    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
    dev = "cuda"
    spec = SCENARIOS[scenario]
    passes, options = spec["passes"], spec.get("options", {})
    with triton_ext.enabled(*passes, **options):
        correct = spec["run"](torch, triton, kernels, dev)
    torch.cuda.synchronize()
    print(f"RESULT {json.dumps({'correct': correct})}", flush=True)


def _run_ratio(torch, triton, kernels, dev) -> bool:
    n, block = 1 << 20, 1024
    x = torch.rand(n, device=dev) + 0.5
    y = torch.rand(n, device=dev) + 0.5
    bad = torch.randperm(n, device=dev)[:37]
    x[bad] = 0.0
    y[bad] = 0.0  # 0/0 = NaN at 37 places
    out = torch.empty_like(x)
    kernels.ratio_kernel[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block)
    torch.cuda.synchronize()
    ref = x.double() / y.double()
    good = torch.ones(n, dtype=torch.bool, device=dev)
    good[bad] = False
    return bool(torch.allclose(out[good].double(), ref[good], rtol=1e-6)
                and torch.isnan(out[bad]).all())


def _run_window(torch, triton, kernels, dev) -> bool:
    n, block = 1000 * 1024 + 300, 1024  # the last block has 724 masked lanes
    x = torch.randn(n, device=dev)
    out = torch.empty(triton.cdiv(n, block), device=dev)
    kernels.window_sum_kernel[(out.numel(),)](x, out, n, BLOCK=block)
    return None  # the result is wrong by design when masked lanes are poisoned


def _run_masked_sum(torch, triton, kernels, dev) -> bool:
    n, block = 1000 * 1024 + 300, 1024
    x = torch.randn(n, device=dev)
    out = torch.empty(triton.cdiv(n, block), device=dev)
    kernels.masked_sum_kernel[(out.numel(),)](x, out, n, BLOCK=block)
    torch.cuda.synchronize()
    pad = torch.zeros(out.numel() * block, dtype=torch.float64, device=dev)
    pad[:n] = x.double()
    return bool(torch.allclose(out.double(), pad.view(-1, block).sum(1), atol=1e-3))


ROW_STRIDE, ROW_COLS, ROW_BLOCK = 1 << 24, 1000, 1024


def _run_rows(rows: int) -> Callable[..., bool]:
    def run(torch, triton, kernels, dev) -> bool:
        # int8 rows 16 MiB apart; the kernel's pointer starts 2 GiB into a 4 GiB buffer, so a
        # wrapped (negative) i32 offset still lands inside the buffer and the kernel finishes.
        base = torch.randint(-128, 127, (1 << 32,) + (), dtype=torch.int8, device=dev)
        x = base[1 << 31:]
        out = torch.empty(rows * ROW_COLS, dtype=torch.int8, device=dev)
        kernels.row_copy_kernel[(rows,)](x, out, ROW_STRIDE, ROW_COLS, BLOCK=ROW_BLOCK)
        torch.cuda.synchronize()
        safe = min(rows, (1 << 31) // ROW_STRIDE)
        idx = (torch.arange(safe, device=dev)[:, None] * ROW_STRIDE
               + torch.arange(ROW_COLS, device=dev)[None, :])
        return bool(torch.equal(out.view(rows, ROW_COLS)[:safe], x[idx]))
    return run


def _run_scale(torch, triton, kernels, dev) -> bool:
    n, block = (1 << 24) + 17, 1024
    x = torch.randn(n, device=dev)
    y = torch.empty_like(x)
    kernels.scale_kernel[(triton.cdiv(n, block),)](x, y, n, 1.5, BLOCK=block)
    torch.cuda.synchronize()
    return bool(torch.allclose(y.double(), x.double() * 1.5))


def _matmul(torch, triton, kernels, a, b):
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty(m, n, dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(m, 128), triton.cdiv(n, 128))
    kernels.matmul_kernel[grid](a, b, c, m, n, k, a.stride(0), b.stride(0), c.stride(0),
                                BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_stages=3, num_warps=4)
    return c


def _run_gemm(torch, triton, kernels, dev) -> bool:
    a = torch.randn(1000, 512, dtype=torch.float16, device=dev)  # M, N not multiples of 128
    b = torch.randn(512, 777, dtype=torch.float16, device=dev)
    c = _matmul(torch, triton, kernels, a, b)
    torch.cuda.synchronize()
    return bool((c.double() - a.double() @ b.double()).abs().max() < 0.1)


def _site(name: str) -> str:
    kernels = import_file(__file__, "kernels.py")
    return f"{kernels.SOURCE}:{kernels.site_line(name)}"


def _key(kernel: str, site: str, what: str) -> str:
    return f"{kernel} {site} {what}"


OVERFLOW_ROWS = 200  # rows >= 128 wrap: 128 * 2**24 = 2**31
SCENARIOS: dict[str, dict[str, Any]] = {
    "nan_record": {"passes": ["nan_inf_check"], "run": _run_ratio,
                   "expect": lambda: {_key("ratio_kernel", _site("ratio_store"),
                                           "store non-finite"): 37}},
    "nan_abort": {"passes": ["nan_inf_check"], "options": {"mode": "abort"}, "run": _run_ratio,
                  "abort": "ratio_store"},
    "poison_window_sum": {"passes": ["masked_load_poison", "nan_inf_check"], "run": _run_window,
                          "expect": lambda: {_key("window_sum_kernel", _site("window_store"),
                                                  "store non-finite"): 1}},
    "poison_masked_sum_clean": {"passes": list(ALL), "run": _run_masked_sum,
                                "expect": lambda: {}},
    "offset_record": {"passes": ["offset_overflow_check"], "run": _run_rows(OVERFLOW_ROWS),
                      "expect": lambda: {_key("row_copy_kernel", _site("row_offset"),
                                              "i32 offset overflow lanes"):
                                         (OVERFLOW_ROWS - 128) * ROW_BLOCK}},
    "offset_abort": {"passes": ["offset_overflow_check"], "options": {"mode": "abort"},
                     "run": _run_rows(OVERFLOW_ROWS), "abort": "row_offset"},
    "offset_clean": {"passes": ["offset_overflow_check"], "run": _run_rows(127),
                     "expect": lambda: {}},
    "scale_clean": {"passes": list(ALL), "run": _run_scale, "expect": lambda: {}},
    "gemm_clean": {"passes": list(ALL), "run": _run_gemm, "expect": lambda: {}},
}


# -------------------------------------------------------------------------- parent side

def _scenario(name: str) -> Outcome:
    spec = SCENARIOS[name]
    proc = subprocess.run([sys.executable, __file__, "--child", name], capture_output=True,
                          text=True, timeout=600)
    text = proc.stdout + proc.stderr
    out = Outcome(name, list(spec["passes"]), spec["expect"]() if "expect" in spec else {},
                  expect_abort="abort" in spec)
    # Every thread of a program prints the same line: count each (program, site) once.
    per_program: dict[tuple[str, ...], int] = {}
    for m in REPORT.finditer(text):
        per_program[m.groups()[:7]] = int(m.group(8))
    totals: dict[str, int] = defaultdict(int)
    for key, count in per_program.items():
        totals[_key(key[4], key[5], key[6])] += count
    out.found = dict(totals)
    result = re.search(r"^RESULT (.*)$", proc.stdout, re.M)
    out.aborted = proc.returncode != 0 or result is None
    if result:
        out.correct = json.loads(result.group(1))["correct"]
    if out.expect_abort:
        out.expected = out.found  # the print before the assert may or may not flush
        out.abort_site_seen = (f"site={_site(spec['abort'])}" in text
                               and ("Assertion" in text or "assert" in text.lower()))
    out.detail = text[-1500:] if not out.ok else ""
    return out


def _bench(passes: tuple[str, ...]) -> dict[str, float]:
    import torch
    import triton

    kernels = import_file(__file__, "kernels.py")
    import triton_ext

    dev = "cuda"
    n = 1 << 27
    x = torch.randn(n, device=dev)
    y = torch.empty_like(x)
    a = torch.randn(4096, 4096, dtype=torch.float16, device=dev)
    b = torch.randn(4096, 4096, dtype=torch.float16, device=dev)
    with triton_ext.enabled(*passes):
        vec = triton.testing.do_bench(
            lambda: kernels.scale_kernel[(triton.cdiv(n, 1024),)](x, y, n, 1.5, BLOCK=1024),
            warmup=50, rep=300)
        gemm = triton.testing.do_bench(lambda: _matmul(torch, triton, kernels, a, b),
                                       warmup=50, rep=300)
    return {"vector_ms": vec, "gemm_ms": gemm,
            "vector_gbps": 2 * n * 4 / vec / 1e6, "gemm_tflops": 2 * 4096 ** 3 / gemm / 1e9}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="JSON file for the results")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child)
        return 0
    if not args.out:
        parser.error("--out is required")

    outcomes = [_scenario(name) for name in SCENARIOS]
    print(f"{'scenario':26} {'ok':3} {'aborted':8} {'correct':8} found")
    for o in outcomes:
        print(f"{o.name:26} {'yes' if o.ok else 'NO':3} {str(o.aborted):8} {str(o.correct):8} "
              f"{o.found}")
        if not o.ok:
            print(f"  expected {o.expected}\n  output tail:\n{o.detail}")

    # Interleave configurations twice and keep the better time of each.
    configs = {"off": (), "nan_inf_check": ("nan_inf_check",), "all": ALL}
    timing: dict[str, dict[str, float]] = {}
    for _ in range(2):
        for label, passes in configs.items():
            t = _bench(passes)
            if label not in timing:
                timing[label] = t
            else:
                timing[label] = {k: (min(timing[label][k], v) if k.endswith("_ms")
                                     else max(timing[label][k], v)) for k, v in t.items()}
    print(f"\n{'config':15} {'vector ms':>10} {'overhead':>9} {'gemm ms':>9} {'overhead':>9}")
    for label, t in timing.items():
        vo = t["vector_ms"] / timing["off"]["vector_ms"] - 1
        go = t["gemm_ms"] / timing["off"]["gemm_ms"] - 1
        t["vector_overhead"], t["gemm_overhead"] = vo, go
        print(f"{label:15} {t['vector_ms']:10.4f} {vo:9.2%} {t['gemm_ms']:9.4f} {go:9.2%}")

    import torch
    import triton
    result = {"device": torch.cuda.get_device_name(), "triton": triton.__version__,
              "scenarios": [asdict(o) | {"ok": o.ok} for o in outcomes], "timing": timing}
    args.out.write_text(json.dumps(result, indent=2))
    print(f"\nwrote {args.out}")
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
