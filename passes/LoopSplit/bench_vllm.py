"""loop_split's profitability model on an H200 (issue 28): vLLM's attention kernels and the one-loop
causal attention against the hand-split kernel, each variant of the pass timed and compared.

Run from the repository root on the GPU host (triton 3.9.0 and torch on PYTHONPATH, plugins built
in build/plugins, vLLM 0.33.0's kernel files in build/vllm-0.33.0: made here by
``python -m tests.realworld.vllm_modules fetch build/vllm-0.33.0``):

    python -m passes.LoopSplit.bench_vllm            # writes $OUT/real-vllm-h200.json if OUT is set

Variants of the pass (``options`` of triton_ext.enabled):
- ``off``: no pass; ``on``: loop_split with its defaults (profitability model, single drain);
- ``always``: ``profitability=false`` (split wherever legal: the issue's 0.83-0.97x runs);
- ``single``: ``single-drain=true`` (only the main part of a pipelined loop keeps its stages: one drain).

Cases: vLLM 0.33.0 (through its own launchers, fp16, 32 query / 8 KV heads, head_dim 128, 16-token
pages): unified attention 2-D prefill (2 x 2048), 2-D decode (8 x 4096), 3-D decode (8 x 4096),
prefix-prefill (2 x (2048 cached + 512 new)), paged decode (8 x 4096). One-loop causal attention
(passes/LoopSplit/kernels.py: tensor ``tl.where`` and scalar ``if`` forms) at head_dim 64 and 128,
seq 2048, 4096, 8192, against the hand-split kernel. Each variant's output is compared with
``off`` (bitwise and max abs difference); registers and spill stack from ``cuobjdump -res-usage``;
median of interleaved rounds of ``do_bench``. Exit status 1 if an output differs beyond 2e-2.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import torch
import triton
from triton.testing import do_bench

import triton_ext
from triton_ext.testing import import_file

ROOT = Path(__file__).resolve().parents[2]

HERE = Path(__file__).resolve().parent
attn = import_file(__file__, "kernels.py")
real = import_file(__file__, "bench_real.py")  # _res_usage, _compiled_variants

ROUNDS = 5
VARIANTS: dict[str, dict[str, Any] | None] = {
    "off": None, "on": {}, "always": {"profitability": False}, "single": {"single-drain": True},
    # rounding=contract: the folded parts' multiply may fuse into the add (not bitwise as unsplit)
    "contract": {"rounding": "contract"},
}
#: Triton's fp fusion (TRITON_DEFAULT_FP_FUSION): with it off, rounding=contract must be bitwise
#: equal to the unsplit kernel too, which shows contraction is the only source of difference.
FP_FUSION = os.environ.get("TRITON_DEFAULT_FP_FUSION", "1") != "0"


def _ctx(options: dict[str, Any] | None) -> contextlib.AbstractContextManager:
    return contextlib.nullcontext() if options is None else triton_ext.enabled("loop_split", options=options)


def _commit() -> str:
    if os.environ.get("TRITON_EXT_COMMIT"):  # a copied tree's git HEAD can be stale (tools/gpu_run.sh)
        return os.environ["TRITON_EXT_COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _interleaved(fns: dict[str, Callable[[], Any]], options: dict[str, dict[str, Any] | None]) -> dict[str, float]:
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(ROUNDS):
        for name, fn in fns.items():
            with _ctx(options[name]):
                times[name].append(do_bench(fn, warmup=5, rep=25))
    return {k: statistics.median(v) for k, v in times.items()}


def _variant_kernels(jit: Any) -> list[dict[str, Any]]:
    return real._compiled_variants(jit)


def _compare(outs: dict[str, torch.Tensor], base: str = "off") -> dict[str, Any]:
    ref = outs[base].float()
    return {name: {"bitwise": torch.equal(out, outs[base]),
                   "max_abs_diff": (out.float() - ref).abs().max().item()}
            for name, out in outs.items() if name != base}


# -- vLLM ----------------------------------------------------------------------------------------

def _vllm_cases() -> list[tuple[str, Callable[[], Any]]]:
    from tests.realworld import realworld_kernels as rk

    t = rk.Tensors("cuda", seed=0)
    return [
        ("vllm_unified_2d_prefill_2x2048", lambda: rk.vllm_unified_call(t, [2048, 2048], [2048, 2048])),
        ("vllm_unified_2d_decode_8x4096", lambda: rk.vllm_unified_call(t, [1] * 8, [4096] * 8)),
        ("vllm_unified_3d_decode_8x4096", lambda: rk.vllm_unified_call(t, [1] * 8, [4096] * 8, three_d=True)),
        ("vllm_prefix_prefill_2x(2048+512)", lambda: rk.vllm_prefix_prefill_call(t)),
        ("vllm_paged_decode_8x4096", lambda: rk.vllm_paged_decode_call(t)),
    ]


def _vllm_case(name: str, make: Callable[[], Any]) -> dict[str, Any]:
    from tests.realworld.vllm_modules import import_kernel_module

    r: dict[str, Any] = {"name": name, "ok": False}
    try:
        vc = make()
        module = import_kernel_module(vc.module)
        jit = getattr(module, vc.kernel)
        while not hasattr(jit, "device_caches"):
            jit = jit.fn
        out = vc.outputs["out"]
        outs: dict[str, torch.Tensor] = {}
        for variant, options in VARIANTS.items():
            out.zero_()
            with _ctx(options):
                vc.call(module)
            torch.cuda.synchronize()
            outs[variant] = out.clone()
        r["compare"] = _compare(outs)
        r["ok"] = all(c["max_abs_diff"] <= 2e-2 for c in r["compare"].values()) and bool(torch.isfinite(outs["off"]).all())
        # Outputs unchanged: the pass's defaults give the unsplit kernel's bits.
        r["unchanged"] = r["compare"]["on"]["bitwise"]
        r["kernels"] = _variant_kernels(jit)
        fn = lambda: vc.call(module)  # noqa: E731
        ms = _interleaved({v: fn for v in VARIANTS}, VARIANTS)
        r["ms"] = ms
        r["off_over"] = {v: ms["off"] / ms[v] for v in VARIANTS if v != "off"}
    except Exception as exc:  # reported, not fatal
        r["error"] = f"{type(exc).__name__}: {exc}"[:400]
    return r


# -- one-loop causal attention vs hand-split ------------------------------------------------------

ATTN = {  # name -> (form, options)
    "tensor": ("tensor", None), "tensor+on": ("tensor", {}), "tensor+single": ("tensor", {"single-drain": True}),
    "scalar": ("scalar", None), "scalar+on": ("scalar", {}), "scalar+single": ("scalar", {"single-drain": True}),
    "tensor+contract": ("tensor", {"rounding": "contract"}),
    # The registry's mul-rn without scale-after-max: the row maximum over the rounded products.
    "tensor+on-maxafter": ("tensor", {"scale-after-max": False}),
    "hand_split": ("hand_split", None),
    # A diagnosis, not a configuration to use: the scalar form held to the tensor form's register
    # count (Triton's maxnreg launch option) shows what its 224 registers cost at head dim 64.
    "scalar+on,maxnreg=208": ("scalar", {}),
}
#: Launch options of the ATTN rows that have their own.
ATTN_LAUNCH = {"scalar+on,maxnreg=208": {"maxnreg": 208}}


def _attn_case(seq: int, head_dim: int) -> dict[str, Any]:
    heads = 8192 * (2048 // head_dim) // seq
    gen = torch.Generator(device="cuda").manual_seed(seq * 1000 + head_dim)
    q, k, v = (torch.randn((heads, seq, head_dim), device="cuda", dtype=torch.float16, generator=gen)
               for _ in range(3))
    warps = 8 if head_dim == 128 else 4
    fns: dict[str, Callable[[], Any]] = {}
    outs: dict[str, torch.Tensor] = {}
    regs: dict[str, Any] = {}
    for name, (form, options) in ATTN.items():
        out = torch.empty_like(q)
        kernel = attn.KERNELS[form]

        def launch(kernel=kernel, out=out, extra=ATTN_LAUNCH.get(name, {})):
            return kernel[(seq // 128, heads)](q, k, v, out, 1.0 / math.sqrt(head_dim), q.stride(0), q.stride(1),
                                               HEAD_DIM=head_dim, BLOCK_M=128, BLOCK_N=64, num_warps=warps,
                                               num_stages=3, **extra)

        with _ctx(options):
            compiled = launch()
        torch.cuda.synchronize()
        ttgir = compiled.asm["ttgir"]
        regs[name] = {"cuobjdump": real._res_usage(compiled.asm["cubin"]),
                      "ttir_loops": len(attn.top_level_loop_bodies(compiled.asm["ttir"])),
                      "async_wait_num0": ttgir.count("num = 0 : i32")}
        outs[name], fns[name] = out, launch
    ms = _interleaved(fns, {n: o for n, (_, o) in ATTN.items()})
    return {
        "seq": seq, "head_dim": head_dim, "heads": heads, "num_warps": warps, "kernels": regs, "ms": ms,
        "hand_split_over": {n: ms["hand_split"] / ms[n] for n in ATTN if n != "hand_split"},
        "compare_vs_hand_split": _compare(outs, "hand_split"),
        "compare_vs_unsplit": {n: {"bitwise": torch.equal(outs[n], outs[n.split("+")[0]]),
                                   "max_abs_diff": (outs[n].float() - outs[n.split("+")[0]].float()).abs().max().item()}
                               for n in ATTN if "+" in n},
        "ok": all((o.float() - outs["hand_split"].float()).abs().max().item() <= 2e-2 for o in outs.values()),
    }


def _scale_guard_case() -> dict[str, Any]:
    """scale-after-max's guard on the GPU: with a scale that is not positive and finite every
    iteration runs in the masked loop, and the outputs are the unsplit kernel's, bit for bit
    (NaN outputs included: compared as bits)."""
    seq, head_dim, heads = 1024, 64, 16
    gen = torch.Generator(device="cuda").manual_seed(7)
    q, k, v = (torch.randn((heads, seq, head_dim), device="cuda", dtype=torch.float16, generator=gen)
               for _ in range(3))
    rows = []
    for scale in (0.125, -0.125, 0.0, -0.0, float("inf"), float("-inf"), float("nan")):
        outs = {}
        for name, options in (("tensor", None), ("tensor+on", {})):
            out = torch.empty_like(q)
            with _ctx(options):
                attn.attn_fwd_tensor[(seq // 128, heads)](q, k, v, out, scale, q.stride(0), q.stride(1),
                                                          HEAD_DIM=head_dim, BLOCK_M=128, BLOCK_N=64,
                                                          num_warps=4, num_stages=3)
            torch.cuda.synchronize()
            outs[name] = out
        rows.append({"sm_scale": repr(scale), "guard_holds": 0 < scale < float("inf"),
                     "bitwise": torch.equal(outs["tensor"].view(torch.int16), outs["tensor+on"].view(torch.int16)),
                     "nan_outputs": int(torch.isnan(outs["tensor"]).sum())})
    return {"seq": seq, "head_dim": head_dim, "heads": heads, "rows": rows,
            "ok": all(r["bitwise"] for r in rows)}


def main() -> int:
    if not torch.cuda.is_available():
        raise SystemExit("bench_vllm.py needs a CUDA GPU")
    t0 = time.time()
    vllm = []
    for name, make in _vllm_cases():
        r = _vllm_case(name, make)
        vllm.append(r)
        print(f"{name}: ok={r['ok']} off/variant={ {k: round(x, 3) for k, x in r.get('off_over', {}).items()} } "
              f"loops/regs={[(k['ttir_loops'], k['cuobjdump']) for k in r.get('kernels', [])]} {r.get('error', '')}",
              flush=True)
    attention = []
    for head_dim in (64, 128):
        for seq in (2048, 4096, 8192):
            c = _attn_case(seq, head_dim)
            attention.append(c)
            print(f"attn d={head_dim} seq={seq}: hand/variant={ {k: round(x, 3) for k, x in c['hand_split_over'].items()} } "
                  f"ok={c['ok']} regs={ {k: (x['cuobjdump'], x['async_wait_num0']) for k, x in c['kernels'].items()} }",
                  flush=True)
    guard = _scale_guard_case()
    print(f"scale guard: {guard}", flush=True)
    result = {
        "what": "loop_split variants (off / on / always=profitability off / single=single-drain on) on vLLM "
                "attention kernels and one-loop causal attention vs hand-split (issue 28)",
        "commit": _commit(), "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "device": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
        "python": platform.python_version(), "rounds": ROUNDS, "fp_fusion": FP_FUSION, "seconds": round(time.time() - t0, 1),
        "vllm": vllm, "attention": attention, "scale_guard": guard,
    }
    text = json.dumps(result, indent=1)
    print(text)
    out_dir = os.environ.get("OUT")
    if out_dir:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        (Path(out_dir) / ("real-vllm-h200.json" if FP_FUSION else "real-vllmnofusion-h200.json")).write_text(text)
    bad = [r for r in vllm if not (r["ok"] and r["unchanged"]) and "error" not in r] \
        + [c for c in attention if not (c["ok"] and c["compare_vs_unsplit"]["tensor+on"]["bitwise"]
                                        and c["compare_vs_unsplit"]["scalar+on"]["bitwise"])] \
        + ([guard] if not guard["ok"] else [])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
