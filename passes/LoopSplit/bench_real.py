"""loop_split on an H200 (issue 17): one-loop causal attention against the hand-split kernel, with
registers, and third-party kernels where the pass fires, each with and without the pass.

Run from the repository root on the GPU host (offline triton and triton_ext on PYTHONPATH; the
third-party wheels from .whl installed; a missing package is reported and skipped):

    python passes/LoopSplit/bench_real.py --out passes/LoopSplit/results/real-h200.json

What it records (JSON):
- ``attention``: the one-loop causal attention forward of ``kernels.py``, fp16, BLOCK_M 128, BLOCK_N 64, 3 stages, 4 warps at head_dim 64 and 8
  at 128, seq 4096 and 8192: the tensor-mask and ``if start_n >= diag`` forms with and without
  loop_split, and the hand-split kernel. Outputs compared bitwise (split vs unsplit and vs
  hand-split) and with the float32 torch reference on two heads; registers and spills from
  ``cuobjdump -res-usage`` on each compiled cubin (and Triton's n_regs/n_spills); median time per
  variant over interleaved rounds and the ratio hand-split / split.
- ``prefill``: third-party one-loop causal prefill attention (sglang 0.5.9's prefill and extend
  kernels, lightllm 0.0.1's context attention; wheels from /work/main/.whl), launched through the
  package's own Python launcher, fp16, 32 query / 8 kv heads, head_dim 128, seq 4096 (batch 2)
  and 8192 (batch 1): outputs with and without the pass (bitwise, max abs difference, error vs
  a float32 torch reference), interleaved timing, registers of every compiled variant.
- ``real``: Liger-Kernel's cross entropy, KL divergence and group norm (loop_split fires on their
  Triton kernels, tests/realworld on the CPU) and FlagGems' causal attention forward if
  ``flag_gems`` imports: outputs with and without the pass (bitwise, and max abs difference),
  interleaved timing, ratio off / on, and whether the pass changed the kernel (``fires``: the TTIR
  loop counts of the variants the JIT compiled differ; when it does not, the ratio is noise).
  The cross entropy time includes its launcher's ``.item()`` syncs and a 512 MB input copy.

``--only no-prefill`` skips the third-party prefill kernels (no wheels needed; about a minute),
``--only liger-d128`` also skips head_dim 64.

Exit status 1 if any output differs beyond its tolerance. Runs in about 2 minutes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch
import triton
from triton.testing import do_bench

import triton_ext

from triton_ext.testing import import_file

HERE = Path(__file__).resolve().parent
attn = import_file(__file__, "kernels.py")  # the attention kernels shared with the tests

BLOCK_M, BLOCK_N = 128, 64
ROUNDS = 5


def _pass_ctx(on: bool) -> contextlib.AbstractContextManager:
    return triton_ext.enabled("loop_split") if on else contextlib.nullcontext()


def _cuobjdump() -> str | None:
    bundled = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    return str(bundled) if bundled.exists() else shutil.which("cuobjdump")


def _res_usage(cubin: bytes) -> dict[str, int] | str:
    tool = _cuobjdump()
    if tool is None:
        return "no cuobjdump"
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        out = subprocess.run([tool, "-res-usage", f.name], capture_output=True, text=True).stdout
    m = re.search(r"REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)", out)
    if not m:
        return out.strip()[-200:]
    return {k: int(v) for k, v in zip(("reg", "stack", "shared", "local"), m.groups())}


def _interleaved(fns: dict[str, Callable[[], Any]], ctxs: dict[str, bool]) -> dict[str, float]:
    """Median ms per variant over ROUNDS rounds, each round running every variant once."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(ROUNDS):
        for name, fn in fns.items():
            with _pass_ctx(ctxs[name]):
                times[name].append(do_bench(fn, warmup=10, rep=40))
    return {k: statistics.median(v) for k, v in times.items()}


# -- one-loop causal attention -----------------------------------------------------------------

ATTN_VARIANTS = {  # name -> (form, loop_split on)
    "tensor": ("tensor", False), "tensor+split": ("tensor", True),
    "scalar": ("scalar", False), "scalar+split": ("scalar", True),
    "hand_split": ("hand_split", False),
    # the scalar form's own op order, split by hand: is its register gap the pass's or the source's?
    "scalar_hand_split": ("scalar_hand_split", False),
}


def _attn_case(seq: int, head_dim: int) -> dict[str, Any]:
    heads = 16384 * (2048 // head_dim) // seq
    gen = torch.Generator(device="cuda").manual_seed(seq * 1000 + head_dim)
    q, k, v = (torch.randn((heads, seq, head_dim), device="cuda", dtype=torch.float16,
                           generator=gen) for _ in range(3))
    warps = 8 if head_dim == 128 else 4
    outs: dict[str, torch.Tensor] = {}
    fns: dict[str, Callable[[], Any]] = {}
    regs: dict[str, Any] = {}
    for name, (form, on) in ATTN_VARIANTS.items():
        out = torch.empty_like(q)
        kernel = attn.KERNELS[form]

        def launch(kernel=kernel, out=out):
            return kernel[(seq // BLOCK_M, heads)](
                q, k, v, out, 1.0 / math.sqrt(head_dim), q.stride(0), q.stride(1),
                HEAD_DIM=head_dim, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=warps, num_stages=3)

        with _pass_ctx(on):
            compiled = launch()
        torch.cuda.synchronize()
        loops = len(attn.top_level_loop_bodies(compiled.asm["ttir"]))
        regs[name] = {"cuobjdump": _res_usage(compiled.asm["cubin"]),
                      "n_regs": getattr(compiled, "n_regs", None),
                      "n_spills": getattr(compiled, "n_spills", None), "ttir_loops": loops}
        outs[name], fns[name] = out, launch
    # float32 reference on the first and last head
    ref_err = {}
    for h in sorted({0, heads - 1}):
        s = (q[h].float() @ k[h].float().T) / math.sqrt(head_dim)
        s.masked_fill_(torch.ones(seq, seq, device="cuda", dtype=torch.bool).triu(1), float("-inf"))
        ref = torch.softmax(s, -1) @ v[h].float()
        for name, out in outs.items():
            ref_err[name] = max(ref_err.get(name, 0.0), (out[h].float() - ref).abs().max().item())
    ms = _interleaved(fns, {n: on for n, (_, on) in ATTN_VARIANTS.items()})
    return {
        "seq": seq, "head_dim": head_dim, "heads": heads, "num_warps": warps,
        "registers": regs, "ms": ms,
        "hand_split_over_split": {f: ms["hand_split"] / ms[f + "+split"] for f in ("tensor", "scalar")}
        | {"scalar_vs_scalar_hand_split": ms["scalar_hand_split"] / ms["scalar+split"]},
        "unsplit_over_split": {f: ms[f] / ms[f + "+split"] for f in ("tensor", "scalar")},
        "bitwise": {f"{f}+split==hand_split": torch.equal(outs[f + "+split"], outs["hand_split"])
                    for f in ("tensor", "scalar")}
        | {"scalar+split==scalar_hand_split": torch.equal(outs["scalar+split"], outs["scalar_hand_split"])}
        | {f"{f}+split=={f}": torch.equal(outs[f + "+split"], outs[f]) for f in ("tensor", "scalar")},
        "max_abs_err_vs_fp32": ref_err,
        "ok": all(e < 2e-2 for e in ref_err.values()),
    }


# -- third-party kernels -----------------------------------------------------------------------

@dataclass
class RealResult:
    name: str
    package: str
    shape: str
    ok: bool = False
    bitwise: bool = False
    max_abs_diff: float = 0.0
    ms_off: float = 0.0
    ms_on: float = 0.0
    speedup: float = 0.0
    error: str = ""
    notes: list[str] = field(default_factory=list)
    #: loop counts / registers of every compiled variant of the kernel; fires: they differ
    kernels: list[dict[str, Any]] = field(default_factory=list)
    fires: bool | None = None


def _outputs(fn: Callable[[], Any]) -> list[torch.Tensor]:
    res = fn()
    res = res if isinstance(res, (tuple, list)) else (res,)
    return [r.detach().clone() for r in res if isinstance(r, torch.Tensor)]


def _real(name: str, package: str, shape: str, make: Callable[[], Callable[[], Any]],
          atol: float) -> RealResult:
    r = RealResult(name, package, shape)
    try:
        fn = make()
        with _pass_ctx(False):
            off = _outputs(fn)
        with _pass_ctx(True):
            on = _outputs(fn)
        torch.cuda.synchronize()
        r.bitwise = all(torch.equal(a, b) for a, b in zip(off, on))
        r.max_abs_diff = max(((a.float() - b.float()).abs().max().item() for a, b in zip(off, on)),
                             default=0.0)
        r.ok = r.max_abs_diff <= atol and len(off) == len(on)
        ms = _interleaved({"off": fn, "on": fn}, {"off": False, "on": True})
        r.ms_off, r.ms_on = ms["off"], ms["on"]
        r.speedup = r.ms_off / r.ms_on
        if name in REAL_JIT:
            r.kernels = _compiled_variants(_jit_of(*REAL_JIT[name]))
            r.fires = len({k["ttir_loops"] for k in r.kernels}) > 1
    except Exception as exc:  # a package that is missing or fails is reported, not fatal
        r.error = f"{type(exc).__name__}: {exc}"[:300]
    return r


def _liger_cross_entropy() -> Callable[[], Any]:
    from liger_kernel.ops.cross_entropy import LigerCrossEntropyFunction

    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(8192, 32000, device="cuda", dtype=torch.bfloat16, generator=g)
    y = torch.randint(0, 32000, (8192,), device="cuda", generator=g)
    # The kernel writes the gradient into its input: each call gets a fresh copy (copy timed too).
    return lambda: LigerCrossEntropyFunction.apply(x.clone(), y, None)


def _liger_kl_div() -> Callable[[], Any]:
    from liger_kernel.ops.kl_div import LigerKLDivLossFunction

    g = torch.Generator(device="cuda").manual_seed(1)
    p = torch.randn(8192, 32000, device="cuda", generator=g).log_softmax(-1)
    t = torch.randn(8192, 32000, device="cuda", generator=g).softmax(-1)
    return lambda: LigerKLDivLossFunction.apply(p, t, "batchmean", False, 1e-10)


def _liger_group_norm() -> Callable[[], Any]:
    from liger_kernel.ops.group_norm import LigerGroupNormFunction

    g = torch.Generator(device="cuda").manual_seed(2)
    x = torch.randn(16, 512, 4096, device="cuda", generator=g)
    w = torch.randn(512, device="cuda", generator=g)
    b = torch.randn(512, device="cuda", generator=g)
    return lambda: LigerGroupNormFunction.apply(x, w, b, 512, 32, 1e-6)


def _flag_gems_attention() -> Callable[[], Any]:
    from flag_gems.ops.attention import scaled_dot_product_attention_forward

    g = torch.Generator(device="cuda").manual_seed(3)
    q, k, v = (torch.randn(4, 16, 4096, 128, device="cuda", dtype=torch.float16, generator=g)
               for _ in range(3))
    return lambda: scaled_dot_product_attention_forward(q, k, v, is_causal=True)


REAL = [
    ("liger_cross_entropy", "liger-kernel", "bf16 8192x32000", _liger_cross_entropy, 0.0),
    ("liger_kl_div", "liger-kernel", "fp32 8192x32000", _liger_kl_div, 0.0),
    ("liger_group_norm", "liger-kernel", "fp32 16x512x4096, 32 groups", _liger_group_norm, 0.0),
    ("flag_gems_attention_causal", "flag-gems", "fp16 4x16x4096x128", _flag_gems_attention, 0.0),
]


#: the @triton.jit kernel each REAL entry launches (whether the pass changed it: TTIR loop counts)
REAL_JIT = {
    "liger_cross_entropy": ("liger_kernel.ops.cross_entropy", "liger_cross_entropy_kernel"),
    "liger_kl_div": ("liger_kernel.ops.kl_div", "_kldiv_kernel_forward"),
    "liger_group_norm": ("liger_kernel.ops.group_norm", "_group_norm_forward_kernel"),
}


# -- third-party causal prefill attention (one loop, pass not applied by hand) ------------------

def _jit_of(module: str, attr: str) -> Any:
    import importlib

    fn = getattr(importlib.import_module(module), attr)
    while not hasattr(fn, "device_caches"):
        fn = fn.fn
    return fn


def _compiled_variants(jit: Any) -> list[dict[str, Any]]:
    """Registers and loop counts of every kernel the JIT compiled (with and without the pass)."""
    out = []
    for cache in jit.device_caches.values():
        for kernel in cache[0].values():
            ttir = kernel.asm.get("ttir", "")
            out.append({"ttir_loops": ttir.count("scf.for"), "ttir_cmpi": ttir.count("arith.cmpi"),
                        "cuobjdump": _res_usage(kernel.asm["cubin"])})
    return sorted(out, key=lambda d: d["ttir_loops"])


def _causal_ref(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, batch: int, seq: int) -> torch.Tensor:
    hq, hkv, d = q.shape[1], k.shape[1], q.shape[2]
    qf = q.view(batch, seq, hq, d).transpose(1, 2)
    kf = k.view(batch, seq, hkv, d).transpose(1, 2).repeat_interleave(hq // hkv, 1)
    vf = v.view(batch, seq, hkv, d).transpose(1, 2).repeat_interleave(hq // hkv, 1)
    o = torch.nn.functional.scaled_dot_product_attention(qf, kf, vf, is_causal=True)
    return o.transpose(1, 2).reshape(batch * seq, hq, d)


def _prefill_inputs(batch: int, seq: int, hq: int = 32, hkv: int = 8, d: int = 128) -> dict[str, Any]:
    g = torch.Generator(device="cuda").manual_seed(seq + batch)
    q = torch.randn(batch * seq, hq, d, device="cuda", dtype=torch.float16, generator=g)
    k = torch.randn(batch * seq, hkv, d, device="cuda", dtype=torch.float16, generator=g)
    v = torch.randn(batch * seq, hkv, d, device="cuda", dtype=torch.float16, generator=g)
    start = torch.arange(0, batch * seq, seq, device="cuda", dtype=torch.int32)
    lens = torch.full((batch,), seq, device="cuda", dtype=torch.int32)
    return dict(q=q, k=k, v=v, o=torch.zeros_like(q), start=start, lens=lens, batch=batch, seq=seq)


def _sglang_module(name: str) -> Any:
    """sglang's kernel module, without its serving stack if the GPU host lacks it
    (tests/realworld/sglang_modules.py)."""
    from tests.realworld.sglang_modules import import_kernel_module

    return import_kernel_module(name)


def _sglang_prefill(x: dict[str, Any]) -> tuple[Callable[[], Any], Any]:
    m = _sglang_module("prefill_attention")

    def run():
        m.context_attention_fwd(x["q"], x["k"], x["v"], x["o"], x["start"], x["lens"], x["seq"], is_causal=True)
        return x["o"]
    return run, m._fwd_kernel


def _sglang_extend(x: dict[str, Any]) -> tuple[Callable[[], Any], Any]:
    m = _sglang_module("extend_attention")

    b, seq = x["batch"], x["seq"]
    qo = torch.arange(0, (b + 1) * seq, seq, device="cuda", dtype=torch.int32)
    kv_indptr = torch.zeros(b + 1, device="cuda", dtype=torch.int32)
    kv_indices = torch.zeros(1, device="cuda", dtype=torch.int64)
    buf = torch.zeros(1, x["k"].shape[1], x["k"].shape[2], device="cuda", dtype=torch.float16)

    def run():
        m.extend_attention_fwd(x["q"], x["k"], x["v"], x["o"], buf, buf, qo, kv_indptr, kv_indices,
                               None, True, None, seq)
        return x["o"]
    return run, m._fwd_kernel


def _lightllm_prefill(x: dict[str, Any]) -> tuple[Callable[[], Any], Any]:
    from lightllm.models.llama.triton_kernel import context_flashattention_nopad as m

    def run():
        m.context_attention_fwd_no_prompt_cache(x["q"], x["k"], x["v"], x["o"], x["start"], x["lens"], x["seq"])
        return x["o"]
    return run, m._fwd_kernel_no_prompt_cache


PREFILL = [
    ("sglang_prefill_attention", "sglang", _sglang_prefill),
    ("sglang_extend_attention", "sglang", _sglang_extend),
    ("lightllm_context_attention", "lightllm", _lightllm_prefill),
]


def _prefill_case(name: str, package: str, make: Callable, batch: int, seq: int) -> dict[str, Any]:
    r: dict[str, Any] = {"name": name, "package": package, "batch": batch, "seq": seq,
                         "shape": f"fp16 {batch}x{seq}, 32 q / 8 kv heads, d 128", "ok": False}
    try:
        x = _prefill_inputs(batch, seq)
        run, jit = make(x)
        with _pass_ctx(False):
            off = run().clone()
        with _pass_ctx(True):
            on = run().clone()
        torch.cuda.synchronize()
        ref = _causal_ref(x["q"].float(), x["k"].float(), x["v"].float(), batch, seq)
        r["bitwise"] = torch.equal(off, on)
        r["max_abs_diff_on_off"] = (off.float() - on.float()).abs().max().item()
        r["max_abs_err_vs_fp32"] = {"off": (off.float() - ref).abs().max().item(),
                                    "on": (on.float() - ref).abs().max().item()}
        r["kernels"] = _compiled_variants(jit)
        r["fires"] = len({k["ttir_loops"] for k in r["kernels"]}) > 1
        ms = _interleaved({"off": run, "on": run}, {"off": False, "on": True})
        r["ms_off"], r["ms_on"] = ms["off"], ms["on"]
        r["speedup"] = ms["off"] / ms["on"]
        r["ok"] = r["max_abs_err_vs_fp32"]["on"] < 2e-2 and r["max_abs_diff_on_off"] < 2e-2
    except Exception as exc:  # a package that is missing or fails is reported, not fatal
        r["error"] = f"{type(exc).__name__}: {exc}"[:300]
    return r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=HERE / "results" / "real-h200.json")
    ap.add_argument("--seqs", type=int, nargs="+", default=[4096, 8192])
    ap.add_argument("--only", choices=("all", "prefill", "no-prefill", "liger-d128"), default="all",
                    help="prefill: only the third-party causal prefill kernels; no-prefill: all but them; "
                         "liger-d128: the Liger kernels and the attention cases at head_dim 128 only")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("bench_real.py needs a CUDA GPU (run it on the H200)")
    t0 = time.time()
    attention = []
    head_dims = {"prefill": (), "liger-d128": (128,)}.get(args.only, (64, 128))
    for head_dim in head_dims:
        for seq in args.seqs:
            case = _attn_case(seq, head_dim)
            attention.append(case)
            regs = {k: v["cuobjdump"] for k, v in case["registers"].items()}
            print(f"attn d={head_dim} seq={seq}: hand/split {case['hand_split_over_split']} "
                  f"bitwise {case['bitwise']} regs {regs}", flush=True)
    prefill = []
    for name, package, make in PREFILL if args.only in ("all", "prefill") else ():
        for seq in args.seqs:
            case = _prefill_case(name, package, make, max(1, 8192 // seq), seq)
            prefill.append(case)
            print(f"{name} seq={seq}: ok={case['ok']} fires={case.get('fires')} bitwise={case.get('bitwise')} "
                  f"off/on={case.get('speedup', 0):.3f} regs={[k['cuobjdump'] for k in case.get('kernels', [])]} "
                  f"{case.get('error', '')}", flush=True)
    real = []
    for name, package, shape, make, atol in REAL if args.only != "prefill" else ():
        r = _real(name, package, shape, make, atol)
        real.append(asdict(r))
        print(f"{name}: ok={r.ok} bitwise={r.bitwise} fires={r.fires} speedup={r.speedup:.3f} "
              f"loops={[k['ttir_loops'] for k in r.kernels]} {r.error}", flush=True)
    result = {
        "what": "loop_split on one-loop causal attention vs hand-split, and third-party kernels "
                "with/without the pass (issue 17)",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "device": torch.cuda.get_device_name(), "torch": torch.__version__,
        "triton": triton.__version__, "python": platform.python_version(),
        "rounds": ROUNDS, "seconds": round(time.time() - t0, 1),
        "attention": attention, "real": real, "prefill": prefill,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(f"wrote {args.out} in {result['seconds']} s")
    bad = [c for c in attention if not c["ok"]] + [r for r in real if not r["ok"] and not r["error"]]
    bad += [c for c in prefill if not c["ok"] and "error" not in c]
    print("summary: " + "; ".join(f"{c['name']}@{c['seq']} " + (f"{c['speedup']:.3f}x ok={c['ok']}"
                                                                if "speedup" in c else "error")
                                  for c in prefill))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
