"""Benchmark spec and H200 check of the triton_ext_onchip GEMMs (``triton-ext bench onchip``).

C = A @ B, fp16 or bf16 in and out, fp32 accumulation. The spec's variants share one signature
(tensor descriptors for A and B): the baseline is Triton's own TMA matmul (``tl.dot`` on
``desc.load`` tiles, pipelined by Triton, 4 stages), the hand-written variants are
``kernels.matmul_tma_kernel`` (TMA copies on mbarriers, async wgmma) and
``kernels.matmul_ws_kernel`` (the same, warp-specialized: a one-warp TMA producer). All use
128x256x64 tiles and 8 warps. ``check`` (``triton-ext bench onchip --check``, or this file run
directly) adds what the spec's variants cannot share a signature with: the cp.async GEMM
(``kernels.matmul_kernel``), Triton's autotuned pointer ``tl.dot`` matmul (MATMUL_CONFIGS) and
the same TMA kernel written in Gluon, on a ragged 1000x528x1008 case and 4096^3 / 8192^3,
every output against a float64 reference, timed interleaved; ratios are against the faster of
the autotuned tl.dot and Gluon (the issue's target is >= 0.9).

    TRITON_EXT_BUILD_DIR=$PWD/build python language/OnChip/bench.py --out $RESULTS/onchip-gemm-h200.json

``--attention`` instead checks and times the causal attention forward (``kernels.attn_fwd_kernel``,
fp16 and/or bf16 (``--dtypes``), head dim 64 and 128, seq 4096 and 8192, BLOCK_N 64 and 128)
against a float64 reference and the fastest launch configuration of the causal attention kernels
of passes/LoopSplit: the hand-split kernel and the one-loop kernel compiled with loop_split
(target >= 0.95):

    TRITON_EXT_BUILD_DIR=$PWD/build python language/OnChip/bench.py --attention --dtypes float16,bfloat16 \
        --out $RESULTS/onchip-attn-h200.json

exits 1 when an output is wrong or a variant fails, and prints the ratios either way.

``--vendor`` (issue 31) compares, in one run, the OnChip candidates of ``kernels.GEMM_VARIANTS``
and ``kernels.ATTN_VARIANTS`` against cuBLAS (``torch.matmul``), every SDPA backend
(``sdpa_kernel``; the fastest counts) and Triton, fp16 and bf16, outputs checked against float64
first; about 4-5 minutes on the H200 (each OnChip candidate first runs once in its own child
process, in parallel, so that a hanging kernel is left out instead of stopping the run):

    TRITON_EXT_BUILD_DIR=$PWD/build python language/OnChip/bench.py --vendor --reps 5 \
        --out $OUT/vendor-h200.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import triton
import triton.language as tl

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier, tma, warpgroup_mma, warpgroup_mma_wait

from triton_ext.bench import GEMM_TFLOPS, BenchSpec, Case, Target, Variant, gemm_inputs
from triton_ext.testing import import_file

kernels = import_file(__file__, "kernels.py", name="triton_ext_onchip_kernels")
# The handwritten variants use triton_ext_onchip's ops: its plugins and passes before any compile
# (the package itself loads nothing at import).
kernels.oc.load()
grouped_tile = kernels.grouped_tile
store_tile = kernels.store_tile

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
    pid_m, pid_n = grouped_tile(M, N, BM, BN, GROUP_M)
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
    import torch

    m, k = a.shape
    n = b.shape[1]
    c = torch.empty((m, n), device=a.device, dtype=a.dtype)
    grid = lambda meta: (triton.cdiv(m, meta["BM"]) * triton.cdiv(n, meta["BN"]), )
    tl_dot_matmul[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                        c.stride(1))
    return c


#: The OnChip GEMMs under test, by name.
VARIANTS = {"cp_async": kernels.matmul, "tma": kernels.matmul_tma, "warp_specialized": kernels.matmul_ws}


# The same TMA-pipelined GEMM written in Gluon (the comparison the issue asks for): 4 stages of
# 128x64 / 64x256 tiles on mbarriers, async wgmma keeping one group in flight, 8 warps.
@gluon.jit
def gluon_matmul_kernel(a_desc, b_desc, C, M, N, K, stride_cm, stride_cn, STAGES: gl.constexpr,
                        GROUP_M: gl.constexpr, num_warps: gl.constexpr):
    BM: gl.constexpr = a_desc.block_type.shape[0]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    BN: gl.constexpr = b_desc.block_type.shape[1]
    dtype: gl.constexpr = a_desc.dtype
    pid = gl.program_id(0)
    num_m = gl.cdiv(M, BM)
    num_n = gl.cdiv(N, BN)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    size_m = gl.minimum(num_m - first_m, GROUP_M)
    off_m = (first_m + (pid % group) % size_m) * BM
    off_n = ((pid % group) // size_m) * BN

    a_smem = gl.allocate_shared_memory(dtype, [STAGES, BM, BK], a_desc.layout)
    b_smem = gl.allocate_shared_memory(dtype, [STAGES, BK, BN], b_desc.layout)
    bars = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for s in gl.static_range(STAGES):
        mbarrier.init(bars.index(s), count=1)
    nbytes: gl.constexpr = (BM * BK + BK * BN) * dtype.primitive_bitwidth // 8
    k_tiles = gl.cdiv(K, BK)
    for s in gl.static_range(STAGES - 1):
        mbarrier.expect(bars.index(s), nbytes, pred=s < k_tiles)
        tma.async_load(a_desc, [off_m, s * BK], bars.index(s), a_smem.index(s), pred=s < k_tiles)
        tma.async_load(b_desc, [s * BK, off_n], bars.index(s), b_smem.index(s), pred=s < k_tiles)

    mma_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[num_warps, 1],
                                                         instr_shape=[16, BN, 16])
    acc = gl.zeros((BM, BN), dtype=gl.float32, layout=mma_layout)
    for kt in range(k_tiles):
        slot = kt % STAGES
        mbarrier.wait(bars.index(slot), (kt // STAGES) & 1)
        acc = warpgroup_mma(a_smem.index(slot), b_smem.index(slot), acc, is_async=True)
        acc, _, _ = warpgroup_mma_wait(1, deps=[acc, a_smem.index(slot), b_smem.index(slot)])
        nxt = kt + STAGES - 1
        nslot = nxt % STAGES
        mbarrier.expect(bars.index(nslot), nbytes, pred=nxt < k_tiles)
        tma.async_load(a_desc, [off_m, nxt * BK], bars.index(nslot), a_smem.index(nslot), pred=nxt < k_tiles)
        tma.async_load(b_desc, [nxt * BK, off_n], bars.index(nslot), b_smem.index(nslot), pred=nxt < k_tiles)
    acc = warpgroup_mma_wait(0, deps=[acc])

    cm = off_m + gl.arange(0, BM, layout=gl.SliceLayout(1, mma_layout))
    cn = off_n + gl.arange(0, BN, layout=gl.SliceLayout(0, mma_layout))
    c_ptrs = C + cm[:, None] * stride_cm + cn[None, :] * stride_cn
    gl.store(c_ptrs, acc.to(C.dtype.element_ty), mask=(cm[:, None] < M) & (cn[None, :] < N))


def gluon_mm(a: torch.Tensor, b: torch.Tensor, bm: int = 128, bn: int = 256, bk: int = 64) -> torch.Tensor:
    import torch
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    m, k = a.shape
    n = b.shape[1]
    c = torch.empty((m, n), device=a.device, dtype=a.dtype)
    dtype = gl.float16 if a.dtype == torch.float16 else gl.bfloat16
    a_desc = TensorDescriptor.from_tensor(a, [bm, bk], gl.NVMMASharedLayout.get_default_for([bm, bk], dtype))
    b_desc = TensorDescriptor.from_tensor(b, [bk, bn], gl.NVMMASharedLayout.get_default_for([bk, bn], dtype))
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn), )
    gluon_matmul_kernel[grid](a_desc, b_desc, c, m, n, k, c.stride(0), c.stride(1), STAGES=4, GROUP_M=8, num_warps=8)
    return c


#: Baselines: the issue's target is 90% of the faster of the two.
BASELINES = {"tl_dot": lambda a, b: tl_dot(a, b), "gluon": gluon_mm}


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
    ratio: dict[str, float] = field(default_factory=dict)  # variant speed / best baseline speed (target >= 0.9)
    errors: dict[str, str] = field(default_factory=dict)


def rel_err(c: torch.Tensor, ref: torch.Tensor) -> float:
    return ((c.double() - ref).abs().max() / ref.abs().max()).item()


def run(dtype_name: str, m: int, n: int, k: int, timed: bool, reps: int, variants: list[str]) -> Row:
    import torch

    dtype = getattr(torch, dtype_name)
    gen = torch.Generator(device="cuda").manual_seed(m * 31 + n * 7 + k)
    a = torch.randn((m, k), device="cuda", dtype=dtype, generator=gen)
    b = torch.randn((k, n), device="cuda", dtype=dtype, generator=gen)
    ref = a.double() @ b.double()
    row = Row(dtype_name, m, n, k, ok=True)
    fns = {}
    for name, fn in BASELINES.items():
        try:
            row.rel_err[name] = rel_err(fn(a, b), ref)
            fns[name] = (lambda f: lambda: f(a, b))(fn)
        except Exception as exc:  # a baseline that fails is reported, not fatal
            row.errors[name] = f"{type(exc).__name__}: {exc}"[:2000]
            print(f"{dtype_name} {m}x{n}x{k} baseline {name}: FAILED {row.errors[name]}", file=sys.stderr, flush=True)
    tol = max([1e-2 if dtype == torch.float16 else 2e-2] + [2 * e for e in row.rel_err.values()])
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
        best = min((row.ms[name] for name in BASELINES if name in row.ms), default=None)
        for name in VARIANTS:
            if name in row.ms and best is not None:
                row.ratio[name] = best / row.ms[name]
    return row


def compare(variants: list[str], quick: bool = False, reps: int = 3,
            log: Callable[[str], None] = print) -> tuple[list[Row], bool]:
    """Every case of the full comparison; returns the rows and whether all outputs were right."""
    cases = [(1000, 528, 1008, False), (4096, 4096, 4096, True)]
    if not quick:
        cases.append((8192, 8192, 8192, True))
    rows = []
    for dtype_name in ("float16", "bfloat16"):
        for m, n, k, timed in cases:
            try:
                row = run(dtype_name, m, n, k, timed, reps, variants)
            except Exception as exc:  # report and go on: one failure must not hide the others
                log(f"{dtype_name} {m}x{n}x{k}: FAILED {type(exc).__name__}: {exc}")
                row = Row(dtype_name, m, n, k, ok=False, errors={"all": f"{type(exc).__name__}: {exc}"})
            rows.append(row)
            log(json.dumps(asdict(row)))
    log("summary (TFLOP/s; ratio = speed / speed of the faster of autotuned tl.dot and Gluon; "
        "err = max |C - C64| / max |C64|):")
    for r in rows:
        parts = []
        for name in variants:
            if name in r.errors:
                parts.append(f"{name} FAILED")
            elif name in r.rel_err:
                perf = f" {r.tflops[name]:.0f} TF x{r.ratio[name]:.3f}" if name in r.ratio else ""
                parts.append(f"{name} err {r.rel_err[name]:.1e}{perf}")
        base = []
        for name in BASELINES:
            text = f"{name} err {r.rel_err.get(name, float('nan')):.1e}"
            if name in r.tflops:
                text += f" {r.tflops[name]:.0f} TF"
            base.append(text if name not in r.errors else f"{name} FAILED")
        log(f"  {r.dtype:9s} {r.m}x{r.n}x{r.k}: {'ok ' if r.ok else 'BAD'} {'; '.join(parts)}; {'; '.join(base)}")
    bad = [r for r in rows if not r.ok]
    log(f"{len(rows) - len(bad)}/{len(rows)} cases correct (every variant within tolerance)")
    return rows, not bad


def _check(log: Callable[[str], None]) -> Mapping[str, Any]:
    """``triton-ext bench onchip --check``: the full comparison (all variants and baselines)."""
    rows, ok = compare(list(VARIANTS), quick=True, reps=2, log=log)
    return {"ok": ok, "rows": [asdict(r) for r in rows]}


# --------------------------------------------------------------------------- #
# The spec (``triton-ext bench onchip``)
# --------------------------------------------------------------------------- #

BM, BN, BK, STAGES, GROUP_M = 128, 256, 64, 4, 8


@triton.jit
def tl_dot_tma_kernel(a_desc, b_desc, C, M, N, K, stride_cm, stride_cn, BM: tl.constexpr, BN: tl.constexpr,
                      BK: tl.constexpr, STAGES: tl.constexpr, GROUP_M: tl.constexpr):
    """Triton's own TMA matmul: tl.dot on descriptor loads; Triton pipelines it (num_stages)."""
    pid_m, pid_n = grouped_tile(M, N, BM, BN, GROUP_M)
    off_m = pid_m * BM
    off_n = pid_n * BN
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for kt in range(tl.cdiv(K, BK)):
        acc = tl.dot(a_desc.load([off_m, kt * BK]), b_desc.load([kt * BK, off_n]), acc)
    store_tile(C, acc, off_m, off_n, M, N, stride_cm, stride_cn, BM, BN)


def _signature(dtype: str) -> dict[str, str]:
    return {"a_desc": f"tensordesc<{dtype}[{BM}, {BK}]>", "b_desc": f"tensordesc<{dtype}[{BK}, {BN}]>",
            "C": f"*{dtype}", "M": "i32", "N": "i32", "K": "i32", "stride_cm": "i32", "stride_cn": "constexpr"}


def _constexprs(case: Case) -> dict[str, Any]:
    return {"BM": BM, "BN": BN, "BK": BK, "STAGES": STAGES, "GROUP_M": GROUP_M, "stride_cn": 1}


def _compile_options(case: Case) -> dict[str, Any]:
    return {"num_warps": 8, "num_stages": STAGES}


def _make_inputs(case: Case, device: Any, generator: Any) -> dict[str, Any]:
    import torch

    p = case.params
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[case.dtype]
    return gemm_inputs(p["M"], p["N"], p["K"], dtype, device, generator)


def _launch(kernel: Any, t: Mapping[str, Any], case: Case) -> Any:
    from triton.tools.tensor_descriptor import TensorDescriptor

    a, b, c = t["a"], t["b"], t["c"]
    m, k = a.shape
    n = b.shape[1]
    a_desc = TensorDescriptor.from_tensor(a, [BM, BK])
    b_desc = TensorDescriptor.from_tensor(b, [BK, BN])
    consts = {key: v for key, v in _constexprs(case).items() if not key.startswith("stride")}
    grid = (triton.cdiv(m, BM) * triton.cdiv(n, BN), )
    return kernel[grid](a_desc, b_desc, c, m, n, k, c.stride(0), c.stride(1), **consts, **_compile_options(case))


def _reference(t: Mapping[str, Any], case: Case) -> Any:
    return t["a"].double() @ t["b"].double()


def _checked(t: Mapping[str, Any], case: Case) -> Any:
    return t["c"]


SPEC = BenchSpec(
    name="onchip",
    passes=(),
    title="onchip: fp16/bf16 GEMM (M = N = K) written with triton_ext_onchip vs Triton's TMA tl.dot",
    variants=(
        Variant("tl_dot_tma", tl_dot_tma_kernel, "baseline"),
        Variant("onchip_tma", kernels.matmul_tma_kernel, "handwritten"),
        Variant("onchip_ws", kernels.matmul_ws_kernel, "handwritten"),
    ),
    shapes=tuple({"M": s, "N": s, "K": s} for s in (4096, 8192)),
    quick_shapes=({"M": 4096, "N": 4096, "K": 4096},),
    check_shapes=({"M": 1000, "N": 528, "K": 1008}, {"M": 4096, "N": 4096, "K": 4096}),
    dtypes=("fp16", "bf16"),
    signature=_signature,
    constexprs=_constexprs,
    compile_options=_compile_options,
    make_inputs=_make_inputs,
    outputs=("c",),
    launch=_launch,
    reference=_reference,
    checked=_checked,
    # Unit-variance C: fp16 output rounding <= 4e-3 below |C| = 8, bf16 <= 3.2e-2.
    tolerance={"fp16": 1e-2, "bf16": 6e-2},
    metric=GEMM_TFLOPS,
    x_axis="M",
    ir_stage="ttgir",
    targets=(
        Target(">= 90% of Triton's TMA tl.dot (issue 20)", "onchip_tma", "tl_dot_tma", 0.9),
        Target("warp-specialized >= 90% of Triton's TMA tl.dot", "onchip_ws", "tl_dot_tma", 0.9),
    ),
    notes=f"{BM}x{BN}x{BK} tiles, {STAGES} stages, 8 warps (+1 producer warp for onchip_ws), grouped order "
          f"({GROUP_M}); --check adds the cp.async GEMM, the autotuned pointer tl.dot and the Gluon kernel.",
    check=_check,
)


# --------------------------------------------------------------------------- #
# Causal attention forward (``--attention``)
# --------------------------------------------------------------------------- #

#: The baselines: the causal attention forward kernels of passes/LoopSplit, the fastest Triton
#: causal attention in this repository: the hand-split kernel (off-diagonal loop without a mask,
#: then the diagonal loop), and the one-loop kernel compiled with the loop_split pass, which was
#: up to 3.7% faster than the hand-split one on the H200 (passes/LoopSplit/results). The other
#: causal forward kernels here are one-loop masked forms of the same computation (the corpus's
#: attention_fwd also writes the log-sum-exp; tests/packaging's attn_fwd), which loop_split turns
#: into the same two loops.
loop_split_kernels = import_file(__file__, "../../passes/LoopSplit/kernels.py", name="triton_ext_loopsplit_kernels")

#: Launch configurations tried per baseline (BLOCK_N, num_warps, num_stages); the fastest counts.
#: hand_split's first is the one passes/LoopSplit/bench_real.py launches (BLOCK_M 128, 8 warps at
#: head dim 128, else 4; 3 stages).
HAND_SPLIT_CONFIGS = {64: [(64, 4, 3), (64, 8, 3), (128, 8, 3)], 128: [(64, 8, 3), (64, 8, 2), (128, 8, 2)]}
LOOP_SPLIT_CONFIGS = {64: [(64, 4, 3), (64, 8, 3)], 128: [(64, 8, 3), (128, 8, 2)]}
#: OnChip configurations timed: BLOCK_N 64 and 128 (BLOCK_M 128, 8 warps).
ONCHIP_ATTN_BLOCK_N = (64, 128)
#: Baseline variant names start with one of these.
ATTN_BASELINES = ("hand_split", "loop_split")


@dataclass
class AttnRow:
    seq: int
    head_dim: int
    heads: int
    ok: bool
    dtype: str = "float16"
    max_abs_err: dict[str, float] = field(default_factory=dict)  # vs float64, heads 0 and last
    ms: dict[str, float] = field(default_factory=dict)
    tflops: dict[str, float] = field(default_factory=dict)  # causal: 2 * 2 * heads * seq^2 * d / 2
    ratio: float | None = None  # fastest onchip speed / fastest baseline speed (target >= 0.95)
    fastest: dict[str, str] = field(default_factory=dict)  # "onchip" / "baseline" -> variant name
    loops: dict[str, int] = field(default_factory=dict)  # loop_split variants: top-level ttir loops (2 = split)
    errors: dict[str, str] = field(default_factory=dict)


def attention_reference(q: Any, k: Any, v: Any, h: int) -> Any:
    """Causal softmax(q k^T / sqrt(d)) v of head ``h`` in float64."""
    import torch

    qh, kh, vh = q[h].double(), k[h].double(), v[h].double()
    seq, d = qh.shape
    s = (qh @ kh.T) / math.sqrt(d)
    s.masked_fill_(torch.ones(seq, seq, device=q.device, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(s, -1) @ vh


def _is_baseline(name: str) -> bool:
    return name.startswith(ATTN_BASELINES)


def run_attention(seq: int, head_dim: int, reps: int, dtype_name: str = "float16") -> AttnRow:
    import contextlib

    import torch
    import triton_ext

    heads = 16384 * (2048 // head_dim) // seq  # as passes/LoopSplit/bench_real.py
    gen = torch.Generator(device="cuda").manual_seed(seq * 1000 + head_dim)
    dtype = getattr(torch, dtype_name)
    q, k, v = (torch.randn((heads, seq, head_dim), device="cuda", dtype=dtype, generator=gen) for _ in range(3))
    scale = 1.0 / math.sqrt(head_dim)
    row = AttnRow(seq, head_dim, heads, ok=True, dtype=dtype_name)
    fns: dict[str, Callable[[], Any]] = {}
    passes: dict[str, bool] = {}  # variant -> compiled and launched with loop_split enabled
    outs: dict[str, Any] = {}

    def ctx(name: str) -> Any:
        return triton_ext.enabled("loop_split") if passes.get(name) else contextlib.nullcontext()

    baselines = [("hand_split", loop_split_kernels.attn_fwd_hand_split, cfg, False)
                 for cfg in HAND_SPLIT_CONFIGS[head_dim]]
    baselines += [("loop_split", loop_split_kernels.attn_fwd_tensor, cfg, True) for cfg in LOOP_SPLIT_CONFIGS[head_dim]]
    for prefix, kernel, (bn, warps, stages), on in baselines:
        name = f"{prefix}_n{bn}_w{warps}_s{stages}"
        out = torch.empty_like(q)

        def launch(kernel=kernel, out=out, bn=bn, warps=warps, stages=stages):
            return kernel[(seq // 128, heads)](q, k, v, out, scale, q.stride(0), q.stride(1), HEAD_DIM=head_dim,
                                               BLOCK_M=128, BLOCK_N=bn, num_warps=warps, num_stages=stages)

        passes[name] = on
        try:
            with ctx(name):
                compiled = launch()
            if on:  # 2: the pass split the causal loop (1 would be the one-loop kernel as written)
                row.loops[name] = len(loop_split_kernels.top_level_loop_bodies(compiled.asm["ttir"]))
            fns[name], outs[name] = launch, out
        except Exception as exc:  # a configuration that does not fit is reported, not fatal
            row.errors[name] = f"{type(exc).__name__}: {exc}"[:2000]
    for bn in ONCHIP_ATTN_BLOCK_N:
        name = f"onchip_n{bn}"
        cfg = dict(kernels.ATTN_CONFIGS[head_dim], BLOCK_N=bn)
        try:
            outs[name] = kernels.attn_fwd(q, k, v, scale, cfg)
            fns[name] = (lambda c: lambda: kernels.attn_fwd(q, k, v, scale, c))(cfg)
        except Exception as exc:
            row.errors[name] = f"{type(exc).__name__}: {exc}"[:2000]
            row.ok = False
    torch.cuda.synchronize()
    for h in sorted({0, heads - 1}):
        ref = attention_reference(q, k, v, h)
        for name, out in outs.items():
            err = (out[h].double() - ref).abs().max().item()
            row.max_abs_err[name] = max(row.max_abs_err.get(name, 0.0), err)
        del ref
    base_err = [e for n, e in row.max_abs_err.items() if _is_baseline(n)]
    tol = max([1e-2 if dtype == torch.float16 else 3e-2] + [2 * e for e in base_err])
    for name, err in row.max_abs_err.items():
        if name.startswith("onchip") and not err <= tol:
            row.ok = False
    if not any(n.startswith("onchip") for n in fns) or not any(_is_baseline(n) for n in fns):
        row.ok = False
        return row
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(reps):  # interleaved, so clock and thermal drift hit all alike
        for name, fn in fns.items():
            with ctx(name):  # the in-memory kernel cache keys on the enabled passes
                samples[name].append(triton.testing.do_bench(fn, warmup=25, rep=100))
    flops = 2.0 * 2.0 * heads * seq * seq * head_dim / 2  # two matmuls, half the blocks (causal)
    for name, ms in samples.items():
        row.ms[name] = min(ms)
        row.tflops[name] = flops / row.ms[name] * 1e-9
    row.fastest["baseline"] = min((n for n in row.ms if _is_baseline(n)), key=row.ms.__getitem__)
    row.fastest["onchip"] = min((n for n in row.ms if n.startswith("onchip")), key=row.ms.__getitem__)
    row.ratio = row.ms[row.fastest["baseline"]] / row.ms[row.fastest["onchip"]]
    return row


def compare_attention(seqs: tuple[int, ...] = (4096, 8192), head_dims: tuple[int, ...] = (64, 128), reps: int = 3,
                      dtypes: tuple[str, ...] = ("float16", ),
                      log: Callable[[str], None] = print) -> tuple[list[AttnRow], bool]:
    """kernels.attn_fwd_kernel vs the fastest Triton causal attention of this repository."""
    rows = []
    for dtype_name in dtypes:
        for head_dim in head_dims:
            for seq in seqs:
                try:
                    row = run_attention(seq, head_dim, reps, dtype_name)
                except Exception as exc:  # report and go on: one failure must not hide the others
                    row = AttnRow(seq, head_dim, 0, ok=False, dtype=dtype_name,
                                  errors={"all": f"{type(exc).__name__}: {exc}"[:2000]})
                rows.append(row)
                log(json.dumps(asdict(row)))
    log("summary (causal attention fwd; TFLOP/s; ratio = fastest onchip / fastest of hand-split and one-loop + "
        "loop_split, target >= 0.95; err = max |O - O64| on heads 0 and last):")
    for r in rows:
        parts = [f"{n} err {e:.1e}" + (f" {r.tflops[n]:.0f} TF" if n in r.tflops else "")
                 for n, e in r.max_abs_err.items()]
        parts += [f"{n} FAILED" for n in r.errors]
        ratio = f"x{r.ratio:.3f} ({r.fastest['onchip']} vs {r.fastest['baseline']})" if r.ratio is not None \
            else "no ratio"
        log(f"  {r.dtype} seq {r.seq} d {r.head_dim}: {'ok ' if r.ok else 'BAD'} {ratio}; {'; '.join(parts)}")
        unsplit = [n for n, loops in r.loops.items() if loops != 2]
        if unsplit:
            log(f"    note: loop_split did not split {unsplit} (top-level loops {[r.loops[n] for n in unsplit]})")
    bad = [r for r in rows if not r.ok]
    log(f"{len(rows) - len(bad)}/{len(rows)} attention cases correct")
    return rows, not bad


# --------------------------------------------------------------------------- #
# Against the vendor libraries (``--vendor``, issue 31): cuBLAS and torch's SDPA
# --------------------------------------------------------------------------- #

#: SDPA backends tried (each that runs counts; the fastest is the baseline). MATH materialises
#: the whole score matrix and is never the fastest, but it is an available backend, so it is
#: timed too (a backend that fails, e.g. out of memory, is recorded under ``errors``).
SDPA_BACKENDS = ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH")


@dataclass
class VendorRow:
    """One case of the vendor comparison: every candidate's error vs float64 and best time."""

    op: str  # "gemm" or "attention"
    dtype: str
    shape: dict[str, int]
    ok: bool = True
    err: dict[str, float] = field(default_factory=dict)  # gemm: max|C-C64|/max|C64|; attention: max|O-O64|
    tol: float = 0.0
    ms: dict[str, float] = field(default_factory=dict)  # best of the interleaved rounds
    tflops: dict[str, float] = field(default_factory=dict)
    fastest: dict[str, str] = field(default_factory=dict)  # "onchip" / "vendor" / "triton" -> candidate
    ratio_vs_vendor: float | None = None  # fastest onchip speed / fastest vendor speed
    ratio_vs_triton: float | None = None  # fastest onchip speed / fastest Triton speed
    target: float = 0.0  # the target for ratio_vs_vendor
    meets_target: bool | None = None
    errors: dict[str, str] = field(default_factory=dict)
    samples: dict[str, list[float]] = field(default_factory=dict)  # every round's time (ms), in round order


def _smoke_child(kind: str, name: str, queue: Any) -> None:
    """Runs in a spawned process: one OnChip candidate on small problems of every dtype (and head
    dim) the timed run uses, so that its kernels are compiled into Triton's cache, each output
    checked against float64; puts (name, "ok" | "wrong: ..." | "error: ...")."""
    import torch

    kernels.oc.load()  # the OnChip plugins and passes (a package import need not load them)
    status = "ok"
    try:
        if kind == "warm":  # compile the Triton baselines of the timed run (their outputs are checked there)
            _warm_triton(name)
            queue.put((name, status))
            return
        for dtype in (torch.float16, torch.bfloat16):
            tol = 2e-2 if dtype == torch.float16 else 6e-2
            if kind == "gemm":
                a = (torch.randn((1024, 1024), device="cuda") / 32).to(dtype)
                b = torch.randn((1024, 1024), device="cuda").to(dtype)
                ref = a.double() @ b.double()
                err = ((kernels.GEMM_VARIANTS[name](a, b).double() - ref).abs().max() / ref.abs().max()).item()
                if not err <= tol:
                    status = f"wrong: {dtype} max rel err {err:.3g}"
                continue
            for head_dim in (64, 128):
                q, k, v = (torch.randn((2, 1024, head_dim), device="cuda", dtype=dtype) for _ in range(3))
                try:
                    out = kernels.ATTN_VARIANTS[name](q, k, v, head_dim ** -0.5)
                except Exception as exc:
                    if _does_not_fit(f"{type(exc).__name__}: {exc}"):
                        continue  # this configuration does not apply to this head dim
                    raise
                err = max((out[h].double() - attention_reference(q, k, v, h)).abs().max().item() for h in (0, 1))
                if not err <= tol:
                    status = f"wrong: {dtype} d{head_dim} max abs err {err:.3g}"
        torch.cuda.synchronize()
    except Exception as exc:
        status = f"error: {type(exc).__name__}: {exc}"[:500]
    queue.put((name, status))


def _warm_triton(what: str) -> None:
    """Compile the Triton baselines of the timed run into the cache (run in a smoke child)."""
    import contextlib

    import torch
    import triton_ext

    for dtype in (torch.float16, torch.bfloat16):
        if what == "triton_gemm":
            a = torch.randn((1024, 1024), device="cuda", dtype=dtype)
            tl_dot(a, a)
            kernels._descriptor_gemm(tl_dot_tma_kernel, a, a, dict(BM=BM, BN=BN, BK=BK, STAGES=STAGES,
                                                                   GROUP_M=GROUP_M, num_warps=8, num_stages=STAGES))
            continue
        for head_dim in (64, 128):
            q = torch.randn((2, 1024, head_dim), device="cuda", dtype=dtype)
            out = torch.empty_like(q)
            for prefix, kernel, configs, on in _attn_baselines(head_dim):
                for bn, warps, stages in configs:
                    with triton_ext.enabled("loop_split") if on else contextlib.nullcontext():
                        kernel[(1024 // 128, 2)](q, q, q, out, 0.1, q.stride(0), q.stride(1), HEAD_DIM=head_dim,
                                                 BLOCK_M=128, BLOCK_N=bn, num_warps=warps, num_stages=stages)
    torch.cuda.synchronize()


def smoke(items: list[tuple[str, str]], timeout: float = 300.0, log: Callable[[str], None] = print) -> dict[str, str]:
    """Each candidate first runs in a child process of its own, all in parallel (which also
    compiles every kernel of the timed run into Triton's cache on all CPU cores). A candidate
    that has not answered after ``timeout`` seconds is killed and recorded as "hang" (a barrier
    phase that never completes), and left out of the timed run, which it would otherwise stop."""
    import multiprocessing as mp
    import queue as queues
    import time

    ctx = mp.get_context("spawn")
    results: dict[str, str] = {}  # "kind:name" -> status
    answers = ctx.Queue()
    procs = {f"{kind}:{name}": ctx.Process(target=_smoke_child, args=(kind, name, answers), daemon=True)
             for kind, name in items}
    for proc in procs.values():
        proc.start()
    kinds = dict((name, kind) for kind, name in items)
    deadline = time.monotonic() + timeout
    while len(results) < len(procs):
        try:
            name, status = answers.get(timeout=max(0.1, deadline - time.monotonic()))
        except queues.Empty:
            break
        results[f"{kinds[name]}:{name}"] = status
        log(f"smoke {kinds[name]} {name}: {status}")
    for key, proc in procs.items():
        if key not in results:
            results[key] = "hang" if proc.is_alive() else f"no answer (exit code {proc.exitcode})"
            log(f"smoke {key}: {results[key]} after {timeout:.0f} s")
        if proc.is_alive():
            proc.kill()
        proc.join(timeout=30)
    return results


def _does_not_fit(error: str) -> bool:
    """A launch configuration that needs more shared memory or registers than the GPU has: not
    a wrong kernel, just a candidate that does not apply to this shape."""
    return "OutOfResources" in error or "out of resource" in error


def _kind(name: str) -> str:
    return name.split(":", 1)[0]  # candidates are "onchip:...", "vendor:...", "triton:..."


def timing_order(names: list[str], round_index: int) -> list[str]:
    """Round ``r`` times the candidates starting from the ``r``-th: the first candidate after an idle
    stretch runs on a cooler GPU at higher clocks (seen: cuBLAS, always first, got its best 4096^3
    time in round 1, 10% under its other rounds), so no candidate may keep that place."""
    k = round_index % len(names) if names else 0
    return names[k:] + names[:k]


#: Milliseconds each candidate runs right before it is timed (do_bench's warm-up), so that it is
#: timed at the clocks it sustains itself, not at those the previous candidate left behind (with
#: 25 ms, SM clocks read 1350-1950 MHz across one kernel's rounds; with 500 ms, 1380-1410).
WARMUP_MS = 500


def _time_interleaved(row: VendorRow, fns: dict[str, Callable[[], Any]], flops: float, reps: int,
                      ctx: Callable[[str], Any], warmup_ms: int | None = None) -> None:
    warmup = WARMUP_MS if warmup_ms is None else warmup_ms
    samples: dict[str, list[float]] = {name: [] for name in fns}
    # Interleaved, so clock and thermal drift hit all alike. Round -1 is run and thrown away: it
    # brings the GPU from the idle checks before it to the load the timed rounds run under.
    for r in range(-1, reps):
        for name in timing_order(list(fns), r):
            if name in row.errors:
                continue
            try:
                with ctx(name):
                    ms = triton.testing.do_bench(fns[name], warmup=warmup, rep=100)
                if r >= 0:
                    samples[name].append(ms)
            except Exception as exc:  # e.g. out of memory in the MATH backend
                row.errors[name] = f"{type(exc).__name__}: {exc}"[:500]
    row.samples = {name: ms for name, ms in samples.items() if ms}
    for name, ms in samples.items():
        if ms and name not in row.errors:
            row.ms[name] = min(ms)
            row.tflops[name] = flops / row.ms[name] * 1e-9
    for kind in ("onchip", "vendor", "triton"):
        timed = [n for n in row.ms if _kind(n) == kind]
        if timed:
            row.fastest[kind] = min(timed, key=row.ms.__getitem__)
    if "onchip" in row.fastest and "vendor" in row.fastest:
        row.ratio_vs_vendor = row.ms[row.fastest["vendor"]] / row.ms[row.fastest["onchip"]]
        row.meets_target = row.ratio_vs_vendor >= row.target
    if "onchip" in row.fastest and "triton" in row.fastest:
        row.ratio_vs_triton = row.ms[row.fastest["triton"]] / row.ms[row.fastest["onchip"]]


def _no_ctx(name: str) -> Any:
    import contextlib

    return contextlib.nullcontext()


def vendor_gemm(dtype_name: str, size: int, reps: int, warmup_ms: int | None = None) -> VendorRow:
    """size^3 GEMM: cuBLAS (torch.matmul), Triton (autotuned tl.dot, TMA tl.dot), OnChip variants."""
    import torch

    dtype = getattr(torch, dtype_name)
    m = n = k = size
    gen = torch.Generator(device="cuda").manual_seed(size * 7 + len(dtype_name))
    # A scaled by 1/sqrt(K): C has unit variance, so one tolerance fits every size.
    a = (torch.randn((m, k), device="cuda", generator=gen) / math.sqrt(k)).to(dtype)
    b = torch.randn((k, n), device="cuda", generator=gen).to(dtype)
    ref = a.double() @ b.double()
    target = 1.00 if size >= 8192 else 0.97
    row = VendorRow("gemm", dtype_name, {"M": m, "N": n, "K": k}, target=target)
    candidates: dict[str, Callable[[Any, Any], Any]] = {
        "vendor:cublas": torch.matmul,
        "triton:tl_dot_autotuned": tl_dot,
        "triton:tl_dot_tma": lambda x, y: kernels._descriptor_gemm(
            tl_dot_tma_kernel, x, y, dict(BM=BM, BN=BN, BK=BK, STAGES=STAGES, GROUP_M=GROUP_M, num_warps=8,
                                          num_stages=STAGES)),
    }
    for name, fn in kernels.GEMM_VARIANTS.items():
        if name not in SKIP:
            candidates[f"onchip:{name}"] = fn
    fns: dict[str, Callable[[], Any]] = {}
    for name, fn in candidates.items():
        try:
            c = fn(a, b)
            torch.cuda.synchronize()
            row.err[name] = ((c.double() - ref).abs().max() / ref.abs().max()).item()
            fns[name] = (lambda f: lambda: f(a, b))(fn)
        except Exception as exc:  # one failing candidate must not hide the others
            row.errors[name] = f"{type(exc).__name__}: {exc}"[:2000]
    # fp16 rounding of a unit-variance C is ~1e-3 relative to max|C|; bf16 ~8e-3.
    row.tol = max([2e-2 if dtype == torch.float16 else 5e-2]
                  + [2 * e for n_, e in row.err.items() if _kind(n_) == "vendor"])
    for name, err in row.err.items():
        if _kind(name) == "onchip" and not err <= row.tol:
            row.ok = False
            fns.pop(name, None)  # a wrong output is not timed
    if any(_kind(n_) == "onchip" and n_ in row.errors and not _does_not_fit(row.errors[n_]) for n_ in candidates):
        row.ok = False
    del ref
    _time_interleaved(row, fns, 2.0 * m * n * k, reps, _no_ctx, warmup_ms)
    return row


def _attn_baselines(head_dim: int) -> list[tuple[str, Any, list[tuple[int, int, int]], bool]]:
    """The Triton attention baselines of the vendor comparison: (name prefix, kernel, launch
    configurations, compiled with loop_split)."""
    return [("hand_split", loop_split_kernels.attn_fwd_hand_split, HAND_SPLIT_CONFIGS[head_dim][:2], False),
            ("loop_split", loop_split_kernels.attn_fwd_tensor, LOOP_SPLIT_CONFIGS[head_dim][:1], True)]


def vendor_attention(dtype_name: str, seq: int, head_dim: int, reps: int, warmup_ms: int | None = None) -> VendorRow:
    """Causal attention forward: every SDPA backend, the repository's fastest Triton kernels
    (LoopSplit's hand-split attention; the one-loop one through loop_split) and OnChip."""
    import contextlib

    import torch
    import torch.nn.functional as F
    import triton_ext
    from torch.nn.attention import SDPBackend, sdpa_kernel

    heads = 16384 * (2048 // head_dim) // seq  # as passes/LoopSplit/bench_real.py
    gen = torch.Generator(device="cuda").manual_seed(seq * 1000 + head_dim)
    dtype = getattr(torch, dtype_name)
    q, k, v = (torch.randn((heads, seq, head_dim), device="cuda", dtype=dtype, generator=gen) for _ in range(3))
    scale = 1.0 / math.sqrt(head_dim)
    row = VendorRow("attention", dtype_name, {"seq": seq, "head_dim": head_dim, "heads": heads, "batch": 1},
                    target=0.97)
    q4, k4, v4 = (t.unsqueeze(0) for t in (q, k, v))  # (1, heads, seq, d): the same memory
    candidates: dict[str, Callable[[], Any]] = {}
    for backend in SDPA_BACKENDS:
        if not hasattr(SDPBackend, backend):
            continue

        def sdpa(backend=getattr(SDPBackend, backend)):
            with sdpa_kernel([backend]):
                return F.scaled_dot_product_attention(q4, k4, v4, is_causal=True, scale=scale)[0]

        candidates[f"vendor:sdpa_{backend.lower()}"] = sdpa
    passes: dict[str, bool] = {}
    for prefix, kernel, configs, on in _attn_baselines(head_dim):
        for bn, warps, stages in configs:
            name = f"triton:{prefix}_n{bn}_w{warps}_s{stages}"
            out = torch.empty_like(q)
            passes[name] = on

            def launch(kernel=kernel, out=out, bn=bn, warps=warps, stages=stages):
                kernel[(seq // 128, heads)](q, k, v, out, scale, q.stride(0), q.stride(1), HEAD_DIM=head_dim,
                                            BLOCK_M=128, BLOCK_N=bn, num_warps=warps, num_stages=stages)
                return out

            candidates[name] = launch
    for name, fn in kernels.ATTN_VARIANTS.items():
        if name not in SKIP:
            candidates[f"onchip:{name}"] = (lambda f: lambda: f(q, k, v, scale))(fn)

    def ctx(name: str) -> Any:
        return triton_ext.enabled("loop_split") if passes.get(name) else contextlib.nullcontext()

    outs: dict[str, Any] = {}
    for name, fn in candidates.items():
        try:
            with ctx(name):
                outs[name] = fn()
            torch.cuda.synchronize()
        except Exception as exc:  # a backend that is not available here is recorded, not fatal
            row.errors[name] = f"{type(exc).__name__}: {exc}"[:2000]
            torch.cuda.empty_cache()
    for h in sorted({0, heads - 1}):
        ref = attention_reference(q, k, v, h)
        for name, out in outs.items():
            err = (out[h].double() - ref).abs().max().item()
            row.err[name] = max(row.err.get(name, 0.0), err)
        del ref
    outs.clear()
    vendor_err = [e for n_, e in row.err.items() if _kind(n_) == "vendor"]
    row.tol = max([1e-2 if dtype == torch.float16 else 3e-2] + [2 * min(vendor_err, default=0.0)])
    fns = {}
    for name, fn in candidates.items():
        if name not in row.err:
            if _kind(name) == "onchip" and not _does_not_fit(row.errors.get(name, "")):
                row.ok = False
            continue
        if not row.err[name] <= row.tol:
            if _kind(name) != "vendor":
                row.ok = False
            continue  # a wrong output is not timed
        fns[name] = fn
    torch.cuda.empty_cache()
    _time_interleaved(row, fns, 2.0 * 2.0 * heads * seq * seq * head_dim / 2, reps, ctx, warmup_ms)
    return row


def _vendor_summary(r: VendorRow) -> str:
    shape = f"seq {r.shape['seq']} d {r.shape['head_dim']}" if "seq" in r.shape else \
        "x".join(str(v) for v in r.shape.values())
    best = ", ".join(f"{kind} {name.split(':', 1)[1]} {r.tflops[name]:.0f} TF" for kind, name in r.fastest.items())
    vs_v = f"x{r.ratio_vs_vendor:.3f}" if r.ratio_vs_vendor is not None else "n/a"
    vs_t = f"x{r.ratio_vs_triton:.3f}" if r.ratio_vs_triton is not None else "n/a"
    met = {True: "meets", False: "MISSES", None: "n/a"}[r.meets_target]
    return (f"  {r.op:9s} {r.dtype:8s} {shape:14s} {'ok ' if r.ok else 'BAD'} vs vendor {vs_v} ({met} "
            f">= {r.target:.2f}), vs Triton {vs_t}; {best}")


#: OnChip candidates the smoke run found hanging or failing (left out of the timed run).
SKIP: dict[str, str] = {}


def compare_vendor(reps: int = 5, what: tuple[str, ...] = ("gemm", "attention"),
                   log: Callable[[str], None] = print, smoke_first: bool = True,
                   partial: Callable[[list[VendorRow], dict[str, str]], None] | None = None,
                   smoke_timeout: float = 300.0,
                   warmup_ms: int | None = None) -> tuple[list[VendorRow], bool, dict[str, str]]:
    """The issue-31 comparison: OnChip vs cuBLAS / every SDPA backend and vs Triton, one run.
    Returns the rows, whether every output was right, and the smoke results."""
    import time

    rows: list[VendorRow] = []
    start = time.monotonic()
    smoked: dict[str, str] = {}
    if smoke_first:
        items = [("gemm", n) for n in kernels.GEMM_VARIANTS if "gemm" in what]
        items += [("attention", n) for n in kernels.ATTN_VARIANTS if "attention" in what]
        items += [("warm", f"triton_{w}") for w in what]
        smoked = smoke(items, timeout=smoke_timeout, log=log)
        SKIP.update({k.split(":", 1)[1]: st for k, st in smoked.items()
                     if not k.startswith("warm:") and not st.startswith(("ok", "wrong"))})
        log(f"smoke run done in {time.monotonic() - start:.0f} s; left out: {sorted(SKIP) or 'none'}")
    cases: list[tuple[str, Callable[[], VendorRow], tuple]] = []
    for dtype_name in ("float16", "bfloat16"):
        if "gemm" in what:
            for size in (4096, 8192):
                cases.append(("gemm", (lambda d=dtype_name, s=size: vendor_gemm(d, s, reps, warmup_ms)),
                              (dtype_name, size)))
        if "attention" in what:
            for head_dim in (64, 128):
                for seq in (4096, 8192):
                    cases.append(("attention",
                                  (lambda d=dtype_name, s=seq, h=head_dim: vendor_attention(d, s, h, reps, warmup_ms)),
                                  (dtype_name, seq, head_dim)))
    for op, fn, key in cases:
        try:
            row = fn()
        except Exception as exc:  # report and go on: one failure must not hide the others
            row = VendorRow(op, key[0], {"case": list(key[1:])}, ok=False,
                            errors={"all": f"{type(exc).__name__}: {exc}"[:2000]})
        for name, status in SKIP.items():
            if (op == "gemm") == (name in kernels.GEMM_VARIANTS):
                row.errors[f"onchip:{name}"] = f"left out: {status} in the smoke run"
                row.ok = False
        rows.append(row)
        log(json.dumps(asdict(row)))
        log(_vendor_summary(row) + f"  [{time.monotonic() - start:.0f} s]")
        if partial is not None:
            partial(rows, smoked)
    log("summary (ratio = fastest OnChip candidate's speed / fastest vendor (cuBLAS or SDPA backend) or Triton "
        "candidate's speed; outputs checked against float64 first, a wrong output is not timed):")
    for r in rows:
        log(_vendor_summary(r))
    bad = [r for r in rows if not r.ok]
    log(f"{len(rows) - len(bad)}/{len(rows)} cases correct; {sum(bool(r.meets_target) for r in rows)}/{len(rows)} "
        f"meet the issue-31 target; {time.monotonic() - start:.0f} s")
    return rows, not bad, smoked


def _results(rows: list[Any], **extra: Any) -> str:
    """The JSON a run writes: GPU, commit (TRITON_EXT_COMMIT first), rows."""
    import torch
    from triton_ext.bench.gpu import checkout_commit

    return json.dumps({"device": torch.cuda.get_device_name(), "commit": checkout_commit(), **extra,
                       "rows": [asdict(r) for r in rows]}, indent=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="H200 check and timing of the triton_ext_onchip GEMMs")
    parser.add_argument("--out", type=Path, default=None, help="write the rows as JSON here")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="4096^3 only")
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help=f"comma-separated subset of {', '.join(VARIANTS)}")
    parser.add_argument("--attention", action="store_true",
                        help="the causal attention forward (seq 4096 and 8192, head dims 64 and 128), not the GEMMs")
    parser.add_argument("--dtypes", default="float16", help="--attention: comma-separated float16, bfloat16")
    parser.add_argument("--vendor", action="store_true",
                        help="issue 31: GEMM (4096^3, 8192^3) and causal attention (d 64/128, seq 4096/8192), "
                             "fp16 and bf16, vs cuBLAS, every SDPA backend and Triton, in one run")
    parser.add_argument("--only", default="gemm,attention", help="--vendor: comma-separated gemm, attention")
    parser.add_argument("--no-smoke", action="store_true",
                        help="--vendor: skip the child-process smoke run that leaves hanging kernels out")
    parser.add_argument("--warmup-ms", type=int, default=WARMUP_MS,
                        help="--vendor: milliseconds each candidate runs right before it is timed")
    parser.add_argument("--smoke-timeout", type=float, default=300.0,
                        help="--vendor: seconds the smoke run waits (compiles included) before calling a kernel hung")
    args = parser.parse_args(argv)
    kernels.oc.load()  # the OnChip plugins and passes (a package import need not load them)
    if args.vendor:
        from triton_ext.bench.gpu import environment

        what = tuple(w for w in args.only.split(",") if w)
        if not what or set(what) - {"gemm", "attention"}:
            parser.error(f"--only must list gemm and/or attention, got {args.only!r}")
        out = args.out
        if out is None and os.environ.get("OUT"):
            out = Path(os.environ["OUT"]) / "vendor-h200.json"
        env = environment()

        def write(vrows: list[VendorRow], smoked: dict[str, str], complete: bool = False) -> None:
            if out:  # after every row: a run cut short still leaves what it measured
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(json.dumps({"what": "language/OnChip/bench.py --vendor (issue 31)",
                                           "environment": env, "reps": args.reps, "complete": complete,
                                           "timing": {"warmup_ms": args.warmup_ms, "order": "rotated each round",
                                                      "untimed_first_round": True},
                                           "smoke": smoked, "rows": [asdict(r) for r in vrows]}, indent=1))

        vrows, ok, smoked = compare_vendor(reps=max(args.reps, 1), what=what,
                                           log=lambda line: print(line, flush=True),
                                           smoke_first=not args.no_smoke, partial=write,
                                           smoke_timeout=args.smoke_timeout, warmup_ms=args.warmup_ms)
        write(vrows, smoked, complete=True)
        if out:
            print(f"wrote {out}", flush=True)
        return 0 if ok else 1
    if args.attention:
        dtypes = tuple(d for d in args.dtypes.split(",") if d)
        if not dtypes or set(dtypes) - {"float16", "bfloat16"}:
            parser.error(f"--dtypes must list float16 and/or bfloat16, got {args.dtypes!r}")
        arows, ok = compare_attention(reps=args.reps, dtypes=dtypes, log=lambda line: print(line, flush=True))
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(_results(arows))
        return 0 if ok else 1
    variants = [v for v in args.variants.split(",") if v]
    unknown = set(variants) - set(VARIANTS)
    if unknown:
        parser.error(f"unknown variants {sorted(unknown)}; expected some of {list(VARIANTS)}")
    rows, ok = compare(variants, quick=args.quick, reps=args.reps, log=lambda line: print(line, flush=True))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(_results(rows))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
