"""GPU check of the corpus: every kernel with no pass, each registered pass alone, and all.

    TRITON_EXT_BUILD_DIR=$PWD/build python -m tests.corpus.check_gpu --out corpus-gpu.json   # from the checkout

For each corpus kernel (tests/corpus/corpus_kernels.py) builds fresh random inputs (one seed
per run, the same inputs for every configuration of a kernel), launches the kernel without
plugin passes and under each configuration, and compares every output with a float64 torch
reference and with the output of the unmodified kernel, within the kernel's tolerance.
Passes are discovered from the registry; a pass whose library is not built or whose targets
exclude this GPU is reported as skipped. Prints a table, writes JSON (the "gpu" section that
tests/reliability/reliability_table.py renders, plus every comparison), and exits non-zero if any
comparison failed. Needs torch, triton 3.9.0 and the built plugins.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
os.environ["TRITON_EXT_ENTRY_POINTS"] = os.environ.get("TRITON_EXT_ENTRY_POINTS", "0")

import torch  # noqa: E402
import triton  # noqa: E402

import triton_ext  # noqa: E402
from tests.corpus.corpus_kernels import BY_NAME, CORPUS, CorpusKernel  # noqa: E402

DEV = "cuda"
F64 = torch.float64


@dataclass
class Run:
    """One launch's arguments, grid and outputs, plus the float64 reference of each output."""

    args: list[Any]
    grid: tuple[int, ...]
    outputs: dict[str, torch.Tensor]
    reference: dict[str, torch.Tensor]
    atol: float
    rtol: float


def _randn(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.randn(*shape, device=DEV, dtype=torch.float32).to(dtype)


# --------------------------------------------------------------------------- #
# Inputs and references, one builder per corpus kernel
# --------------------------------------------------------------------------- #


def vector_add() -> Run:
    n = 98_432
    x, y = _randn(n), _randn(n)
    out = torch.empty_like(x)
    return Run([x, y, out, n], (triton.cdiv(n, 256),), {"out": out}, {"out": x.to(F64) + y.to(F64)}, 1e-6, 1e-6)


def fused_softmax() -> Run:
    rows, cols = 1823, 200
    x = _randn(rows, cols)
    out = torch.empty_like(x)
    return Run([out, x, x.stride(0), out.stride(0), rows, cols], (min(rows, 528),), {"out": out},
               {"out": torch.softmax(x.to(F64), dim=1)}, 1e-5, 1e-4)


def _ln_stats(x: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    mean = x.to(F64).mean(1)
    rstd = 1 / torch.sqrt(x.to(F64).var(1, unbiased=False) + eps)
    return mean, rstd


def layer_norm_fwd() -> Run:
    m, n, eps = 256, 500, 1e-5
    x, w, b = _randn(m, n), _randn(n), _randn(n)
    y = torch.empty_like(x)
    mean, rstd = torch.empty(m, device=DEV), torch.empty(m, device=DEV)
    ref = torch.nn.functional.layer_norm(x.to(F64), (n,), w.to(F64), b.to(F64), eps)
    rm, rr = _ln_stats(x, eps)
    return Run([x, y, w, b, mean, rstd, x.stride(0), n, eps], (m,), {"y": y, "mean": mean, "rstd": rstd},
               {"y": ref, "mean": rm, "rstd": rr}, 1e-4, 1e-4)


def layer_norm_bwd_dx() -> Run:
    m, n, eps = 256, 200, 1e-5
    x, dy, w, b = _randn(m, n), _randn(m, n), _randn(n), _randn(n)
    mean, rstd = _ln_stats(x, eps)
    x64 = x.to(F64).requires_grad_()
    torch.nn.functional.layer_norm(x64, (n,), w.to(F64), b.to(F64), eps).backward(dy.to(F64))
    xhat = (x.to(F64) - mean[:, None]) * rstd[:, None]
    dx, dw_part, db_part = torch.empty_like(x), torch.empty_like(x), torch.empty_like(x)
    return Run([dx, dy, dw_part, db_part, x, w, mean.float(), rstd.float(), x.stride(0), n], (m,),
               {"dx": dx, "dw_part": dw_part, "db_part": db_part},
               {"dx": x64.grad, "dw_part": dy.to(F64) * xhat, "db_part": dy.to(F64)}, 1e-3, 1e-3)


def layer_norm_bwd_dwdb() -> Run:
    m, n = 300, 200
    dw_part, db_part = _randn(m, n), _randn(m, n)
    dw, db = torch.empty(n, device=DEV), torch.empty(n, device=DEV)
    return Run([dw_part, db_part, dw, db, m, n], (triton.cdiv(n, 64),), {"dw": dw, "db": db},
               {"dw": dw_part.to(F64).sum(0), "db": db_part.to(F64).sum(0)}, 1e-3, 1e-4)


def _mm_inputs(m: int, n: int, k: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    a, b = _randn(m, k, dtype=torch.float16), _randn(k, n, dtype=torch.float16)
    return a, b, torch.empty(m, n, device=DEV, dtype=torch.float16), a.to(F64) @ b.to(F64)


def matmul() -> Run:
    m, n, k = 300, 260, 200
    a, b, c, ref = _mm_inputs(m, n, k)
    grid = (triton.cdiv(m, 32) * triton.cdiv(n, 32),)
    return Run([a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1)],
               grid, {"c": c}, {"c": ref}, 5e-2, 1e-2)


def matmul_persistent() -> Run:
    m, n, k = 300, 260, 200
    a, b, c, ref = _mm_inputs(m, n, k)
    grid = (min(132, triton.cdiv(m, 32) * triton.cdiv(n, 32)),)
    return Run([a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1)],
               grid, {"c": c}, {"c": ref}, 5e-2, 1e-2)


def matmul_descriptor() -> Run:
    m, n, k = 256, 192, 128  # TMA needs 16-byte aligned row strides
    a, b, c, ref = _mm_inputs(m, n, k)
    return Run([a, b, c, m, n, k], (triton.cdiv(m, 32), triton.cdiv(n, 32)), {"c": c}, {"c": ref}, 5e-2, 1e-2)


def grouped_gemm() -> Run:
    shapes = [(128, 96, 64), (64, 64, 128), (200, 72, 40)]
    outs, refs, a_ptrs, b_ptrs, c_ptrs, sizes, lds, keep = {}, {}, [], [], [], [], [], []
    for g, (m, n, k) in enumerate(shapes):
        a, b, c, ref = _mm_inputs(m, n, k)
        keep += [a, b]
        outs[f"c{g}"], refs[f"c{g}"] = c, ref
        a_ptrs.append(a.data_ptr()), b_ptrs.append(b.data_ptr()), c_ptrs.append(c.data_ptr())
        sizes += [m, n, k]
        lds += [k, n, n]
    t64 = lambda v: torch.tensor(v, device=DEV, dtype=torch.int64)  # noqa: E731
    t32 = lambda v: torch.tensor(v, device=DEV, dtype=torch.int32)  # noqa: E731
    run = Run([t64(a_ptrs), t64(b_ptrs), t64(c_ptrs), t32(sizes), t32(lds), len(shapes)], (132,), outs, refs, 5e-2, 1e-2)
    run.keep = keep  # type: ignore[attr-defined]  # inputs must outlive the launch
    return run


def _attention_reference(q, k, v, causal: bool, sm_scale: float):
    q, k, v = (t.to(F64).requires_grad_() for t in (q, k, v))
    s = (q @ k.transpose(-1, -2)) * sm_scale
    if causal:
        n = q.shape[1]
        s = s.masked_fill(~torch.ones(n, n, dtype=torch.bool, device=DEV).tril(), float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    o = torch.softmax(s, dim=-1) @ v
    return q, k, v, o, lse


def _attention_fwd(causal: bool) -> Run:
    heads, n, d = 4, 200, BY_NAME["attention_fwd"].constexprs["HEAD_DIM"]
    sm_scale = 1 / math.sqrt(d)
    q, k, v = (_randn(heads, n, d, dtype=torch.float16) for _ in range(3))
    o, lse = torch.empty_like(q), torch.empty(heads, n, device=DEV)
    _, _, _, ro, rlse = _attention_reference(q, k, v, causal, sm_scale)
    return Run([q, k, v, o, lse, sm_scale, q.stride(0), q.stride(1), n], (triton.cdiv(n, 32), heads),
               {"o": o, "lse": lse}, {"o": ro.detach(), "lse": rlse.detach()}, 2e-2, 2e-2)


def _attention_bwd(causal: bool) -> Run:
    heads, n, d = 4, 200, BY_NAME["attention_bwd"].constexprs["HEAD_DIM"]
    sm_scale = 1 / math.sqrt(d)
    q, k, v, do = (_randn(heads, n, d, dtype=torch.float16) for _ in range(4))
    q64, k64, v64, o64, lse64 = _attention_reference(q, k, v, causal, sm_scale)
    o64.backward(do.to(F64))
    delta = (o64.detach() * do.to(F64)).sum(-1).float()
    dq = torch.zeros(heads, n, d, device=DEV, dtype=torch.float32)
    dk, dv = torch.empty_like(q), torch.empty_like(q)
    return Run([q, k, v, do, lse64.detach().float(), delta, dq, dk, dv, sm_scale, q.stride(0), q.stride(1), n],
               (triton.cdiv(n, 32), heads), {"dq": dq, "dk": dk, "dv": dv},
               {"dq": q64.grad, "dk": k64.grad, "dv": v64.grad}, 5e-2, 3e-2)


def row_reductions() -> Run:
    m, n = 300, 200
    x = _randn(m, n)
    s, mx, am = torch.empty(m, device=DEV), torch.empty(m, device=DEV), torch.empty(m, device=DEV, dtype=torch.int32)
    return Run([x, s, mx, am, x.stride(0), n], (m,), {"sum": s, "max": mx, "argmax": am},
               {"sum": x.to(F64).sum(1), "max": x.to(F64).max(1).values, "argmax": x.argmax(1).to(F64)}, 1e-4, 1e-5)


def row_scans() -> Run:
    m, n = 64, 100
    x = 1 + 0.01 * _randn(m, n)
    cs, cp = torch.empty_like(x), torch.empty_like(x)
    return Run([x, cs, cp, x.stride(0), n], (m,), {"cumsum": cs, "cumprod": cp},
               {"cumsum": x.to(F64).cumsum(1), "cumprod": x.to(F64).cumprod(1)}, 1e-4, 1e-5)


def histogram_atomics() -> Run:
    n, bins = 100_000, 64
    x = torch.randint(0, bins, (n,), device=DEV, dtype=torch.int32)
    hist, mx = torch.zeros(bins, device=DEV, dtype=torch.int32), torch.full((1,), -1, device=DEV, dtype=torch.int32)
    return Run([x, hist, mx, n, bins], (triton.cdiv(n, 256),), {"hist": hist, "max": mx},
               {"hist": torch.bincount(x.long(), minlength=bins).to(F64), "max": x.max().to(F64).reshape(1)}, 0, 0)


def gluon_axpy() -> Run:
    n, alpha = 100_000, 1.5
    x, y = _randn(n), _randn(n)
    out = torch.empty_like(x)
    return Run([x, y, out, alpha, n], (triton.cdiv(n, 512),), {"out": out}, {"out": alpha * x.to(F64) + y.to(F64)},
               1e-5, 1e-5)


BUILDERS: dict[str, Callable[[], Run]] = {
    "vector_add": vector_add,
    "fused_softmax": fused_softmax,
    "layer_norm_fwd": layer_norm_fwd,
    "layer_norm_bwd_dx": layer_norm_bwd_dx,
    "layer_norm_bwd_dwdb": layer_norm_bwd_dwdb,
    "matmul": matmul,
    "matmul_persistent": matmul_persistent,
    "matmul_descriptor": matmul_descriptor,
    "grouped_gemm": grouped_gemm,
    "attention_fwd": lambda: _attention_fwd(False),
    "attention_fwd_causal": lambda: _attention_fwd(True),
    "attention_bwd": lambda: _attention_bwd(False),
    "attention_bwd_causal": lambda: _attention_bwd(True),
    "row_reductions": row_reductions,
    "row_scans": row_scans,
    "histogram_atomics": histogram_atomics,
    "gluon_axpy": gluon_axpy,
}


# --------------------------------------------------------------------------- #
# Running and comparing
# --------------------------------------------------------------------------- #


def launch(kernel: CorpusKernel, seed: int) -> Run:
    torch.manual_seed(seed)
    run = BUILDERS[kernel.name]()
    options = {"num_warps": kernel.num_warps} if kernel.gluon else kernel.options()
    kernel.fn[run.grid](*run.args, **kernel.constexprs, **options)
    torch.cuda.synchronize()
    return run


def max_violation(out: torch.Tensor, want: torch.Tensor, atol: float, rtol: float) -> float:
    """Largest |out - want| - (atol + rtol |want|); <= 0 means within tolerance (NaN counts as a violation)."""
    got = out.detach().to(F64).reshape(want.shape)
    want = want.detach().to(F64)
    diff = (got - want).abs() - (atol + rtol * want.abs())
    if torch.isnan(got).any() != torch.isnan(want).any():
        return math.inf
    return float(torch.nan_to_num(diff, nan=0.0).max())


def configurations(arch: int) -> tuple[list[tuple[str, list[str]]], list[dict[str, str]]]:
    manifest = triton_ext.manifest()
    runnable, skipped = [], []
    for spec in manifest.passes:
        ext = manifest.extension_of(spec)
        if not ext.applies_to("cuda", arch):
            skipped.append({"pass": spec.name, "reason": f"targets of {ext.name} exclude cuda:{arch}"})
        elif not ext.library_path().exists():
            skipped.append({"pass": spec.name, "reason": f"{ext.library_path()} not built"})
        else:
            runnable.append(spec.name)
    configs = [(name, [name]) for name in runnable]
    if len(runnable) > 1:
        configs.append(("all", runnable))
    return configs, skipped


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="JSON file to write")
    parser.add_argument("--seed", type=int, default=int(time.time()) % 100_000)
    parser.add_argument("--kernels", nargs="*", help="only these corpus kernels")
    args = parser.parse_args()
    from triton_ext.bench.gpu import checkout_commit

    commit = checkout_commit(short=True)  # refuses a dirty checkout unless TRITON_EXT_ALLOW_DIRTY=1
    assert set(BUILDERS) == set(BY_NAME), f"corpus and GPU builders differ: {set(BUILDERS) ^ set(BY_NAME)}"
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device=DEV))
    major, minor = torch.cuda.get_device_capability()
    arch = major * 10 + minor
    configs, skipped = configurations(arch)
    kernels = [k for k in CORPUS if not args.kernels or k.name in args.kernels]
    results: list[dict[str, Any]] = []
    tallies: dict[str, dict[str, Any]] = {}

    def tally(check: str, ok: bool, note: str | None) -> None:
        t = tallies.setdefault(check, {"section": "gpu", "check": check, "tried": 0, "held": 0, "skipped": 0,
                                       "failures": [], "skip_reasons": []})
        t["tried"] += 1
        t["held"] += ok
        if not ok and note and len(t["failures"]) < 20:
            t["failures"].append(note[:500])

    for kernel in kernels:
        try:
            base = launch(kernel, args.seed)
            worst = max(max_violation(base.outputs[o], base.reference[o], base.atol, base.rtol) for o in base.outputs)
            ok, error = worst <= 0, None
        except Exception as exc:
            base, worst, ok, error = None, math.inf, False, f"{type(exc).__name__}: {exc}"
            traceback.print_exc()
        results.append({"kernel": kernel.name, "config": "no-pass", "ok": ok, "vs_reference": worst,
                        "vs_unmodified": 0.0, "error": error})
        tally("unmodified kernel matches float64 reference", ok, f"{kernel.name}: {error or worst}")
        for config, names in configs:
            try:
                with triton_ext.enabled(*names):
                    run = launch(kernel, args.seed)
                worst_ref = max(max_violation(run.outputs[o], run.reference[o], run.atol, run.rtol) for o in run.outputs)
                worst_base = (max(max_violation(run.outputs[o], base.outputs[o].to(F64), run.atol, run.rtol)
                                  for o in run.outputs) if base is not None else math.inf)
                ok, error = worst_ref <= 0 and worst_base <= 0, None
            except Exception as exc:
                worst_ref = worst_base = math.inf
                ok, error = False, f"{type(exc).__name__}: {exc}"
                traceback.print_exc()
            results.append({"kernel": kernel.name, "config": config, "ok": ok, "vs_reference": worst_ref,
                            "vs_unmodified": worst_base, "error": error})
            check = "all passes: output unchanged" if config == "all" else f"pass {config}: output unchanged"
            tally(check, ok, f"{kernel.name}: {error or (worst_ref, worst_base)}")

    print(f"{'kernel':24} {'config':24} {'ok':>4} {'ref-excess':>12} {'base-excess':>12}")
    for r in results:
        print(f"{r['kernel']:24} {r['config']:24} {'yes' if r['ok'] else 'NO':>4} {r['vs_reference']:12.3g} "
              f"{r['vs_unmodified']:12.3g}" + (f"  {r['error'][:80]}" if r["error"] else ""))
    for s in skipped:
        print(f"skipped pass {s['pass']}: {s['reason']}")
    doc = {
        "section": "gpu",
        "title": "Corpus on the GPU: outputs with each pass vs. without",
        "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "environment": {"commit": commit, "triton": triton.__version__, "torch": torch.__version__,
                        "device": torch.cuda.get_device_name(), "capability": arch},
        "meta": {"seed": args.seed, "kernels": [k.name for k in kernels], "configs": [c for c, _ in configs],
                 "skipped_passes": skipped,
                 "tolerance": "|out - want| <= atol + rtol |want| per kernel, vs float64 reference and vs unmodified"},
        "checks": list(tallies.values()),
        "results": results,
    }
    Path(args.out).write_text(json.dumps(doc, indent=2, default=str) + "\n")
    failed = [r for r in results if not r["ok"]]
    print(f"{len(results) - len(failed)}/{len(results)} comparisons held; wrote {args.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
