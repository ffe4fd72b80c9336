"""H200 check of nvidia_occupancy_hint: row softmax with the row held in registers.

    TRITON_EXT_BUILD_DIR=<build> python -m backends.nvidia.OccupancyHint.check_gpu --out occupancy-hint-h200.json

Row softmax over wide rows keeps the whole row in registers (memory bound, register heavy), the
case where ptxas' own choice can leave an SM at few resident CTAs. For each (columns, num_warps)
the kernel is compiled as written and with ``min-ctas-per-sm`` = 2, 4 and 8 (a variant the pass
declines is reported as such); outputs must be bit-identical to the unhinted kernel and match a
float64 reference on fresh random inputs. Times are medians of ``triton.testing.do_bench`` in
interleaved rounds; effective bandwidth counts one read and one write of the matrix. Needs torch,
triton 3.9.0, this repository and the built plugins (``TRITON_EXT_BUILD_DIR``).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

import torch  # noqa: E402
import triton  # noqa: E402
from triton.testing import do_bench  # noqa: E402

from triton_ext.testing import import_file
import triton_ext  # noqa: E402
softmax_kernel = import_file(__file__, "kernels.py").softmax_kernel

HINTS = (None, 2, 4, 8)




@dataclass
class Row:
    rows: int
    cols: int
    num_warps: int
    min_ctas_per_sm: int | None
    hinted: bool
    registers: int
    us: float
    gbps: float
    speedup_vs_unhinted: float
    bit_identical: bool


def _launch(x: torch.Tensor, y: torch.Tensor, num_warps: int, hint: int | None) -> Any:
    args = (x, y, x.shape[1], x.stride(0))
    kw = {"BLOCK": triton.next_power_of_2(x.shape[1]), "num_warps": num_warps}
    if hint is None:
        return softmax_kernel[(x.shape[0],)](*args, **kw)
    with triton_ext.enabled("nvidia_occupancy_hint", min_ctas_per_sm=hint):
        return softmax_kernel[(x.shape[0],)](*args, **kw)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--rows", type=int, default=16384)
    parser.add_argument("--cols", type=int, nargs="+", default=[4096, 8192, 16384])
    parser.add_argument("--warps", type=int, nargs="+", default=[4, 8])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    gen = torch.Generator(device="cuda")
    gen.manual_seed(82)
    results: list[Row] = []
    for cols in args.cols:
        x = torch.randn(args.rows, cols, device="cuda", dtype=torch.float32, generator=gen)
        ref = torch.softmax(x.double(), dim=1)
        for warps in args.warps:
            outs: dict[Any, torch.Tensor] = {}
            kernels: dict[Any, Any] = {}
            for hint in HINTS:
                y = torch.empty_like(x)
                kernels[hint] = _launch(x, y, warps, hint)
                torch.cuda.synchronize()
                outs[hint] = y
            err = (outs[None].double() - ref).abs().max().item()
            assert err < 1e-5, f"cols={cols} warps={warps}: max error {err} vs float64"
            for hint in HINTS:
                assert torch.equal(outs[hint], outs[None]), f"cols={cols} warps={warps} hint={hint}: differs"
            times: dict[Any, list[float]] = {h: [] for h in HINTS}
            for _ in range(args.rounds):
                for hint in HINTS:
                    y = outs[hint]
                    times[hint].append(do_bench(lambda: _launch(x, y, warps, hint), warmup=25, rep=100) * 1e3)
            base = statistics.median(times[None])
            for hint in HINTS:
                t = statistics.median(times[hint])
                k = kernels[hint]
                hinted = hint is not None and ".minnctapersm" in k.asm["ptx"]
                results.append(Row(args.rows, cols, warps, hint, hinted, int(getattr(k, "n_regs", -1)), t,
                                   2 * x.numel() * 4 / (t * 1e-6) / 1e9, base / t, True))

    print(f"{'cols':>6} {'warps':>5} {'minctas':>7} {'hinted':>6} {'regs':>4} {'us':>9} {'GB/s':>7} {'speedup':>7}")
    for r in results:
        print(f"{r.cols:>6} {r.num_warps:>5} {str(r.min_ctas_per_sm):>7} {str(r.hinted):>6} {r.registers:>4} "
              f"{r.us:>9.2f} {r.gbps:>7.0f} {r.speedup_vs_unhinted:>7.3f}")
    Path(args.out).write_text(json.dumps({
        "check": "nvidia_occupancy_hint", "gpu": torch.cuda.get_device_name(), "triton": triton.__version__,
        "torch": torch.__version__, "python": platform.python_version(), "rounds": args.rounds,
        "rows": [asdict(r) for r in results]}, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
