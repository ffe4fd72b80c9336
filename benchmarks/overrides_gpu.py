"""GPU timing of the built-in-pass overrides worked example (issue 19.4, docs/overriding-passes.md).

    TRITON_EXT_BUILD_DIR=$PWD/build python -m benchmarks.overrides_gpu --out overrides-h200.json

Kernels and registry entries are those of docs/examples/overrides/measure.py (the CPU measurement):
``scaled_rows`` (a loop asking for 4x unrolling) stock vs ``skip_loop_unroll``, and a naive GEMM
stock vs ``skip_licm``, each at two sizes. Outputs must match the stock kernel's (bit-identical
for scaled_rows' per-row order is not guaranteed, so allclose at 1e-5 relative; the GEMM exactly).
Times: ``triton.testing.do_bench`` medians of 5 rounds, stock and override interleaved; spread =
(max - min) / median over the rounds. About a minute on an H200.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any, Callable

import torch
import triton

import triton_ext
from triton_ext import canonical_passes
from triton_ext.testing import import_file, repo_root

# Sets TRITON_EXT_REGISTRY to the repository registry + the example entries, on import.
measure = import_file(repo_root() / "docs" / "examples" / "overrides" / "measure.py")

# The per-launch pass set goes through triton_ext.tunable (a precomputed selection per set), so
# timing does not include enabling passes.
ROWS = triton_ext.tunable(measure.scaled_rows)
GEMM = triton_ext.tunable(measure.gemm)


def timed(fn: Callable[[], Any], rounds: list[float]) -> None:
    rounds.append(triton.testing.do_bench(fn, warmup=25, rep=100))


def case_rows(n_rows: int, width: int) -> dict[str, Any]:
    x = torch.randn(n_rows, width, device="cuda")
    w = torch.randn(width, device="cuda")
    outs = {v: torch.empty(width, device="cuda") for v in ("stock", "skip_loop_unroll")}
    block = 256
    grid = (1,)

    def run(variant: str) -> Callable[[], Any]:
        names = () if variant == "stock" else (variant,)

        passes = canonical_passes(list(names))

        def go() -> None:  # stock and override both go through the same wrapper
            ROWS[grid](x, outs[variant], w, n_rows, x.stride(0), BLOCK=block, triton_ext_passes=passes)
        return go

    return compare(run, lambda: torch.allclose(outs["stock"], outs["skip_loop_unroll"], rtol=1e-5, atol=1e-4),
                   ("stock", "skip_loop_unroll"), {"n_rows": n_rows, "width": block})


def case_gemm(M: int, N: int, K: int) -> dict[str, Any]:
    a = torch.randn(M, K, device="cuda", dtype=torch.float16) / K**0.5
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    outs = {v: torch.empty(M, N, device="cuda", dtype=torch.float16) for v in ("stock", "skip_licm")}
    grid = (triton.cdiv(M, 128), triton.cdiv(N, 128))

    def run(variant: str) -> Callable[[], Any]:
        names = () if variant == "stock" else (variant,)

        passes = canonical_passes(list(names))

        def go() -> None:
            GEMM[grid](a, b, outs[variant], M, N, K, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64,
                       num_warps=8, num_stages=3, triton_ext_passes=passes)
        return go

    return compare(run, lambda: torch.equal(outs["stock"], outs["skip_licm"]), ("stock", "skip_licm"),
                   {"M": M, "N": N, "K": K})


def compare(run: Callable[[str], Callable[[], Any]], same: Callable[[], bool], variants: tuple[str, str],
            shape: dict[str, Any]) -> dict[str, Any]:
    for v in variants:
        run(v)()
    torch.cuda.synchronize()
    identical = bool(same())
    rounds: dict[str, list[float]] = {v: [] for v in variants}
    for _ in range(5):
        for v in variants:
            timed(run(v), rounds[v])
    med = {v: statistics.median(r) for v, r in rounds.items()}
    spread = max((max(r) - min(r)) / statistics.median(r) for r in rounds.values())
    return {"shape": shape, "ms": med, "rounds_ms": rounds, "speedup_of_override": med[variants[0]] / med[variants[1]],
            "spread": spread, "outputs_match": identical}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="overrides-h200.json")
    args = parser.parse_args()
    rows = {
        "scaled_rows/skip_loop_unroll": [case_rows(4096, 256), case_rows(65536, 256)],
        "gemm/skip_licm": [case_gemm(4096, 4096, 4096), case_gemm(8192, 8192, 4096)],
    }
    report = {"gpu": torch.cuda.get_device_name(), "triton": triton.__version__, "results": rows,
              "ok": all(r["outputs_match"] for rs in rows.values() for r in rs)}
    Path(args.out).write_text(json.dumps(report, indent=2))
    for name, rs in rows.items():
        for r in rs:
            print(f"{name} {r['shape']}: override {r['speedup_of_override']:.3f}x vs stock "
                  f"(spread {r['spread']:.3f}), outputs match {r['outputs_match']}")
    print(f"wrote {args.out}")
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
