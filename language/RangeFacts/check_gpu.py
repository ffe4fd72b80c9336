"""H200 check of triton_ext_range.assume_range: a kernel using facts gives the float64 reference.

    TRITON_EXT_BUILD_DIR=build python -m language.RangeFacts.check_gpu --out range_facts_gpu.json

Needs torch, triton 3.9.0, triton_ext from this checkout and the built plugins
(`triton-ext build range_facts_ir range_facts`). Fresh random inputs on every run.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path


import torch
import triton
import triton.language as tl

from triton_ext.testing import import_file

triton_ext_range = import_file(__file__, "triton_ext_range", name="triton_ext_range")


@triton.jit
def scale_rows(X, Y, W, n_rows, n_cols, BLOCK: tl.constexpr):
    row = triton_ext_range.assume_range(tl.program_id(0), 0, (1 << 20) - 1)
    n_cols = triton_ext_range.assume_range(n_cols, 1, 1 << 16)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = triton_ext_range.assume_range(start + tl.arange(0, BLOCK), 0, (1 << 16) + BLOCK)
        mask = offs < n_cols
        x = tl.load(X + row * n_cols + offs, mask=mask, other=0.0)
        w = tl.load(W + offs, mask=mask, other=0.0)
        acc += x * w
    tl.store(Y + row, tl.sum(acc, axis=0))


@dataclass
class Case:
    n_rows: int
    n_cols: int
    max_abs_err: float
    tolerance: float
    ok: bool
    ms: float
    facts_lowered: bool


def run_case(n_rows: int, n_cols: int, gen: torch.Generator) -> Case:
    x = torch.randn(n_rows, n_cols, generator=gen, device="cuda", dtype=torch.float32)
    w = torch.randn(n_cols, generator=gen, device="cuda", dtype=torch.float32)
    y = torch.empty(n_rows, device="cuda", dtype=torch.float32)
    k = scale_rows[(n_rows,)](x, y, w, n_rows, n_cols, BLOCK=256)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(20):
        scale_rows[(n_rows,)](x, y, w, n_rows, n_cols, BLOCK=256)
    torch.cuda.synchronize()
    ms = (time.perf_counter() - t0) / 20 * 1e3
    ref = (x.double() @ w.double()).cpu()
    err = (y.double().cpu() - ref).abs().max().item()
    tol = 1e-5 * n_cols ** 0.5 * 4 + 1e-4
    return Case(n_rows, n_cols, err, tol, err <= tol, ms, "triton_ext_range" not in k.asm["ttgir"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True, help="JSON results file")
    args = parser.parse_args(argv)
    triton_ext_range.load()  # the plugins and range_facts_lower, before the first compile
    gen = torch.Generator(device="cuda")
    gen.seed()
    cases = [run_case(r, c, gen) for r, c in ((1, 1), (7, 300), (1024, 4096), (4096, 65536 - 3))]
    print(f"{'rows':>6} {'cols':>7} {'max|err|':>10} {'tol':>10} {'ms':>8}  ok")
    for c in cases:
        print(f"{c.n_rows:>6} {c.n_cols:>7} {c.max_abs_err:>10.3e} {c.tolerance:>10.3e} {c.ms:>8.3f}  {c.ok and c.facts_lowered}")
    result = {"device": torch.cuda.get_device_name(), "triton": triton.__version__,
              "cases": [asdict(c) for c in cases], "ok": all(c.ok and c.facts_lowered for c in cases)}
    args.out.write_text(json.dumps(result, indent=2))
    assert result["ok"], "mismatch against the float64 reference (see table)"
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
