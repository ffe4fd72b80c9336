"""H200 check and timing of the triton_ext_onchip GEMMs (kernels.matmul_kernel: cp.async groups;
kernels.matmul_tma_kernel: TMA copies on mbarriers).

    TRITON_EXT_BUILD_DIR=$PWD/build python language/OnChip/bench.py --out $RESULTS/onchip-gemm-h200.json

For fp16 and bf16 at 4096^3 and 8192^3 (plus a ragged 1000x528x1008 correctness case: M, N, K not multiples of the tile; N and K
multiples of 16 elements, which cp.async's 16-byte pieces need) it
checks C against a float64 reference and times, in one run and interleaved, the OnChip GEMM
against Triton's own autotuned ``tl.dot`` matmul (MATMUL_CONFIGS below). Exits 1 when an output
is wrong; prints the ratio either way. Needs a GPU with sm_90, torch, triton 3.9.0 and the
plugins built from this checkout (``triton-ext build onchip_ir onchip``).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import triton
import triton.language as tl

from triton_ext.testing import import_file

kernels = import_file(__file__, "kernels.py", name="triton_ext_onchip_kernels")

MATMUL_CONFIGS = [
    triton.Config({"BM": 128, "BN": 256, "BK": 64, "GROUP_M": 8}, num_stages=3, num_warps=8),
    triton.Config({"BM": 128, "BN": 256, "BK": 64, "GROUP_M": 8}, num_stages=4, num_warps=8),
    triton.Config({"BM": 256, "BN": 128, "BK": 64, "GROUP_M": 8}, num_stages=3, num_warps=8),
    triton.Config({"BM": 128, "BN": 128, "BK": 64, "GROUP_M": 8}, num_stages=4, num_warps=4),
    triton.Config({"BM": 128, "BN": 128, "BK": 64, "GROUP_M": 8}, num_stages=4, num_warps=8),
    triton.Config({"BM": 128, "BN": 128, "BK": 128, "GROUP_M": 8}, num_stages=3, num_warps=8),
]


@triton.autotune(configs=MATMUL_CONFIGS, key=["M", "N", "K"])
@triton.jit
def tl_dot_matmul(A, B, C, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    """Triton's plain matmul (the tutorial's structure): Triton pipelines and picks wgmma itself."""
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BM)
    num_n = tl.cdiv(N, BN)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    size_m = tl.minimum(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    rm = (pid_m * BM + tl.arange(0, BM)) % M
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a_ptrs = A + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = B + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for kt in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - kt * BK, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - kt * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    cm = pid_m * BM + tl.arange(0, BM)
    cn = pid_n * BN + tl.arange(0, BN)
    tl.store(C + cm[:, None] * stride_cm + cn[None, :] * stride_cn, acc.to(C.dtype.element_ty),
             mask=(cm[:, None] < M) & (cn[None, :] < N))


def tl_dot(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty((m, n), device=a.device, dtype=a.dtype)
    grid = lambda meta: (triton.cdiv(m, meta["BM"]) * triton.cdiv(n, meta["BN"]), )
    tl_dot_matmul[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                        c.stride(1))
    return c


@dataclass
class Row:
    dtype: str
    m: int
    n: int
    k: int
    onchip_rel_err: float
    onchip_tma_rel_err: float
    tl_dot_rel_err: float
    ok: bool
    onchip_ms: float | None = None
    onchip_tma_ms: float | None = None
    tl_dot_ms: float | None = None
    onchip_tflops: float | None = None
    onchip_tma_tflops: float | None = None
    tl_dot_tflops: float | None = None
    ratio: float | None = None  # cp.async GEMM speed / tl.dot speed (>= 0.9 is the target)
    ratio_tma: float | None = None  # TMA GEMM speed / tl.dot speed


def rel_err(c: torch.Tensor, ref: torch.Tensor) -> float:
    return ((c.double() - ref).abs().max() / ref.abs().max()).item()


def run(dtype_name: str, m: int, n: int, k: int, timed: bool, reps: int) -> Row:
    dtype = getattr(torch, dtype_name)
    gen = torch.Generator(device="cuda").manual_seed(m * 31 + n * 7 + k)
    a = torch.randn((m, k), device="cuda", dtype=dtype, generator=gen)
    b = torch.randn((k, n), device="cuda", dtype=dtype, generator=gen)
    ref = a.double() @ b.double()
    ours = kernels.matmul(a, b)
    ours_tma = kernels.matmul_tma(a, b)
    base = tl_dot(a, b)
    torch.cuda.synchronize()
    e_ours, e_tma, e_base = rel_err(ours, ref), rel_err(ours_tma, ref), rel_err(base, ref)
    tol = max(1e-2 if dtype == torch.float16 else 2e-2, 2 * e_base)
    row = Row(dtype_name, m, n, k, e_ours, e_tma, e_base, ok=bool(e_ours <= tol and e_tma <= tol))
    if timed:
        ms: dict[str, list[float]] = {"ours": [], "tma": [], "base": []}
        fns = {"ours": lambda: kernels.matmul(a, b), "tma": lambda: kernels.matmul_tma(a, b),
               "base": lambda: tl_dot(a, b)}
        for _ in range(reps):  # interleaved, so clock and thermal drift hit all alike
            for name, fn in fns.items():
                ms[name].append(triton.testing.do_bench(fn, warmup=25, rep=100))
        row.onchip_ms, row.onchip_tma_ms, row.tl_dot_ms = min(ms["ours"]), min(ms["tma"]), min(ms["base"])
        flops = 2.0 * m * n * k
        row.onchip_tflops = flops / row.onchip_ms * 1e-9
        row.onchip_tma_tflops = flops / row.onchip_tma_ms * 1e-9
        row.tl_dot_tflops = flops / row.tl_dot_ms * 1e-9
        row.ratio = row.tl_dot_ms / row.onchip_ms
        row.ratio_tma = row.tl_dot_ms / row.onchip_tma_ms
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="write the rows as JSON here")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="4096^3 only")
    args = parser.parse_args(argv)
    cases = [(1000, 528, 1008, False), (4096, 4096, 4096, True)]
    if not args.quick:
        cases.append((8192, 8192, 8192, True))
    rows = []
    for dtype_name in ("float16", "bfloat16"):
        for m, n, k, timed in cases:
            try:
                row = run(dtype_name, m, n, k, timed, args.reps)
            except Exception as exc:  # report and go on: one failure must not hide the others
                print(f"{dtype_name} {m}x{n}x{k}: FAILED {type(exc).__name__}: {exc}", file=sys.stderr)
                row = Row(dtype_name, m, n, k, float("nan"), float("nan"), float("nan"), ok=False)
            rows.append(row)
            print(json.dumps(asdict(row)), flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"device": torch.cuda.get_device_name(), "rows": [asdict(r) for r in rows]},
                                       indent=1))
    print("\nsummary (OnChip GEMMs, cp.async / TMA, vs autotuned tl.dot; ratio = speed / tl.dot speed):")
    for r in rows:
        perf = (f"{r.onchip_tflops:.0f} / {r.onchip_tma_tflops:.0f} vs {r.tl_dot_tflops:.0f} TFLOP/s, "
                f"ratio {r.ratio:.3f} / {r.ratio_tma:.3f}") if r.ratio else "untimed"
        print(f"  {r.dtype:9s} {r.m}x{r.n}x{r.k}: {'ok ' if r.ok else 'BAD'} err {r.onchip_rel_err:.2e} / "
              f"{r.onchip_tma_rel_err:.2e} (tl.dot {r.tl_dot_rel_err:.2e}); {perf}")
    bad = [r for r in rows if not r.ok]
    print(f"{len(rows) - len(bad)}/{len(rows)} outputs correct")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
