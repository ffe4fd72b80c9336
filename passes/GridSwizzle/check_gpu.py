"""H200 check of grid_swizzle: every tile computed, outputs bit-identical with and without the pass.

    TRITON_EXT_BUILD_DIR=<build> python -m passes.GridSwizzle.check_gpu --out check-h200.json

For each shape (several with M not a multiple of 8 * BLOCK_M, so the last group is short, and
with N and K off the block sizes), on fresh random inputs (a new seed per shape): the naive 2-D
GEMM compiled with the pass reads the grid size in its PTX (it was swizzled) and the one without
it does not; with C filled with NaN before each run, the swizzled kernel's C (group sizes 8 and 3)
equals the unswizzled kernel's bit for bit, and both match a float64 reference. The hand-grouped
kernel's C is compared too (same tile code, so it is expected bit-identical; reported, not
required). The timing comparison is the benchmark's job (``triton-ext bench grid_swizzle``).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

import torch  # noqa: E402
import triton  # noqa: E402

from triton_ext.testing import import_file
import triton_ext  # noqa: E402
_kernels = import_file(__file__, "kernels.py")
matmul_grouped_kernel, matmul_naive_kernel = _kernels.matmul_grouped_kernel, _kernels.matmul_naive_kernel

BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 64
OPTIONS = {"num_warps": 8, "num_stages": 3}
TOLERANCE = 1e-2  # C has unit variance (A scaled by 1/sqrt(K)); fp16 output rounding < 4e-3
GROUP_SIZES = (8, 3)
# (M, N, K): M / BLOCK_M tiles = 15, 23, 3 (short last groups), 32 and 64 (whole groups).
SHAPES = [(1920, 2176, 1000), (2944, 384, 512), (300, 4000, 256), (4096, 4096, 4096), (8192, 8192, 8192)]


def _launch(kernel, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor):
    m, k = a.shape
    n = b.shape[1]
    tiles = (triton.cdiv(m, BLOCK_M), triton.cdiv(n, BLOCK_N))
    grid = (tiles[0] * tiles[1],) if kernel is matmul_grouped_kernel else tiles
    return kernel[grid](a, b, c, m, n, k, a.stride(0), b.stride(0), c.stride(0),
                        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, **OPTIONS)


def _run(kernel, a: torch.Tensor, b: torch.Tensor, passes: dict[str, dict]) -> tuple[torch.Tensor, bool, str]:
    """C, whether the compiled kernel reads the grid size (the swizzle's signature in PTX), and
    its TTIR."""
    c = torch.full((a.shape[0], b.shape[1]), float("nan"), device="cuda", dtype=torch.float16)
    with triton_ext.enabled(*passes, **next(iter(passes.values()), {})):
        compiled = _launch(kernel, a, b, c)
    torch.cuda.synchronize()
    ptx = compiled.asm["ptx"]
    return c, "%nctaid.x" in ptx and "%nctaid.y" in ptx, compiled.asm["ttir"]


def _group_size(ttir: str) -> int | None:
    """The group size the swizzle was built with: the constant first clamped to the grid."""
    ir = re.sub(r"\s*loc\((?:[^()]|\([^()]*\))*\)", "", ttir)
    found = re.search(r"= arith\.minsi (%\S+), ", ir)
    if not found:
        return None
    value = re.search(rf"{re.escape(found.group(1))} = arith\.constant (-?\d+) : i32", ir)
    return int(value.group(1)) if value else None


def run(m: int, n: int, k: int, seed: int) -> dict:
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = (torch.randn(m, k, device="cuda", generator=g) / math.sqrt(k)).half()
    b = torch.randn(k, n, device="cuda", generator=g).half()
    ref = a.double() @ b.double()
    off, swizzled_off, _ = _run(matmul_naive_kernel, a, b, {})
    err = (off.double() - ref).abs().max().item()  # NaN (a tile never written) fails below
    record = {"M": m, "N": n, "K": k, "tiles": [triton.cdiv(m, BLOCK_M), triton.cdiv(n, BLOCK_N)],
              "seed": seed, "max_abs_err_vs_fp64": err, "off_reads_grid_size": swizzled_off}
    ok = not swizzled_off and math.isfinite(err) and err < TOLERANCE
    for group in GROUP_SIZES:
        on, swizzled, ttir = _run(matmul_naive_kernel, a, b, {"grid_swizzle": {"group_size": group}})
        identical = bool(torch.equal(on, off))
        record[f"g{group}_swizzled"] = swizzled and _group_size(ttir) == group
        record[f"g{group}_bit_identical"] = identical
        ok = ok and record[f"g{group}_swizzled"] and identical
    hand, _, _ = _run(matmul_grouped_kernel, a, b, {})
    record["hand_grouped_bit_identical"] = bool(torch.equal(hand, off))
    record["ok"] = ok
    return record


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    seed = torch.seed() % (1 << 31)  # fresh inputs every run; recorded for reproduction
    results = [run(m, n, k, seed + i) for i, (m, n, k) in enumerate(SHAPES)]
    for r in results:
        print(json.dumps(r))
    ok = all(r["ok"] for r in results)
    print(f"{sum(r['ok'] for r in results)}/{len(results)} shapes: swizzled (group sizes "
          f"{', '.join(map(str, GROUP_SIZES))}), outputs bit-identical, fp64 ok")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"device": torch.cuda.get_device_name(), "triton": triton.__version__,
                                        "results": results}, indent=1) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
