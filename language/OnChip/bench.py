"""H200 check and timing of the triton_ext_onchip GEMMs (kernels.py: cp.async groups; TMA copies on
mbarriers; warp-specialized TMA producer + wgmma consumer).

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
from dataclasses import asdict, dataclass, field
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


#: The OnChip GEMMs under test, by name.
VARIANTS = {"cp_async": kernels.matmul, "tma": kernels.matmul_tma, "warp_specialized": kernels.matmul_ws}


@dataclass
class Row:
    dtype: str
    m: int
    n: int
    k: int
    ok: bool
    rel_err: dict[str, float] = field(default_factory=dict)  # by variant, and "tl_dot"
    ms: dict[str, float] = field(default_factory=dict)
    tflops: dict[str, float] = field(default_factory=dict)
    ratio: dict[str, float] = field(default_factory=dict)  # variant speed / tl.dot speed (target >= 0.9)
    errors: dict[str, str] = field(default_factory=dict)


def rel_err(c: torch.Tensor, ref: torch.Tensor) -> float:
    return ((c.double() - ref).abs().max() / ref.abs().max()).item()


def run(dtype_name: str, m: int, n: int, k: int, timed: bool, reps: int, variants: list[str]) -> Row:
    dtype = getattr(torch, dtype_name)
    gen = torch.Generator(device="cuda").manual_seed(m * 31 + n * 7 + k)
    a = torch.randn((m, k), device="cuda", dtype=dtype, generator=gen)
    b = torch.randn((k, n), device="cuda", dtype=dtype, generator=gen)
    ref = a.double() @ b.double()
    row = Row(dtype_name, m, n, k, ok=True)
    row.rel_err["tl_dot"] = rel_err(tl_dot(a, b), ref)
    tol = max(1e-2 if dtype == torch.float16 else 2e-2, 2 * row.rel_err["tl_dot"])
    fns = {"tl_dot": lambda: tl_dot(a, b)}
    for name in variants:
        fn = VARIANTS[name]
        try:  # one failing variant must not hide the others
            err = rel_err(fn(a, b), ref)
        except Exception as exc:
            row.errors[name] = f"{type(exc).__name__}: {exc}"[:2000]
            print(f"{dtype_name} {m}x{n}x{k} {name}: FAILED {row.errors[name]}", file=sys.stderr)
            row.ok = False
            continue
        row.rel_err[name] = err
        row.ok &= bool(err <= tol)
        fns[name] = (lambda f: lambda: f(a, b))(fn)
    torch.cuda.synchronize()
    if timed:
        samples: dict[str, list[float]] = {name: [] for name in fns}
        for _ in range(reps):  # interleaved, so clock and thermal drift hit all alike
            for name, fn in fns.items():
                samples[name].append(triton.testing.do_bench(fn, warmup=25, rep=100))
        flops = 2.0 * m * n * k
        for name, ms in samples.items():
            row.ms[name] = min(ms)
            row.tflops[name] = flops / row.ms[name] * 1e-9
        for name in VARIANTS:
            if name in row.ms:
                row.ratio[name] = row.ms["tl_dot"] / row.ms[name]
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="write the rows as JSON here")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="4096^3 only")
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help=f"comma-separated subset of {', '.join(VARIANTS)}")
    args = parser.parse_args(argv)
    variants = [v for v in args.variants.split(",") if v]
    unknown = set(variants) - set(VARIANTS)
    if unknown:
        parser.error(f"unknown variants {sorted(unknown)}; expected some of {list(VARIANTS)}")
    cases = [(1000, 528, 1008, False), (4096, 4096, 4096, True)]
    if not args.quick:
        cases.append((8192, 8192, 8192, True))
    rows = []
    for dtype_name in ("float16", "bfloat16"):
        for m, n, k, timed in cases:
            try:
                row = run(dtype_name, m, n, k, timed, args.reps, variants)
            except Exception as exc:  # report and go on: one failure must not hide the others
                print(f"{dtype_name} {m}x{n}x{k}: FAILED {type(exc).__name__}: {exc}", file=sys.stderr)
                row = Row(dtype_name, m, n, k, ok=False, errors={"all": f"{type(exc).__name__}: {exc}"})
            rows.append(row)
            print(json.dumps(asdict(row)), flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"device": torch.cuda.get_device_name(), "rows": [asdict(r) for r in rows]},
                                       indent=1))
    print("\nsummary (TFLOP/s; ratio = speed / autotuned tl.dot speed; err = max |C - C64| / max |C64|):")
    for r in rows:
        parts = []
        for name in variants:
            if name in r.errors:
                parts.append(f"{name} FAILED")
            elif name in r.rel_err:
                perf = f" {r.tflops[name]:.0f} TF x{r.ratio[name]:.3f}" if name in r.ratio else ""
                parts.append(f"{name} err {r.rel_err[name]:.1e}{perf}")
        base = f"tl.dot err {r.rel_err.get('tl_dot', float('nan')):.1e}"
        if "tl_dot" in r.tflops:
            base += f" {r.tflops['tl_dot']:.0f} TF"
        print(f"  {r.dtype:9s} {r.m}x{r.n}x{r.k}: {'ok ' if r.ok else 'BAD'} {'; '.join(parts)}; {base}")
    bad = [r for r in rows if not r.ok]
    print(f"{len(rows) - len(bad)}/{len(rows)} cases correct (every variant within tolerance)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
