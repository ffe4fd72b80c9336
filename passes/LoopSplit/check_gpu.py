"""GPU check of loop_split on causal attention: correctness and a first timing.

    python -m passes.LoopSplit.check_gpu --out results.json

For each kernel form (one loop with a tensor mask, one loop with `if start_n >= diag`), head
dim (64, 128) and dtype (fp16, bf16), runs the kernel with loop_split off and on on fresh random
inputs and compares both with a float64 torch reference (asserts closeness). Then times the
unsplit kernel, the same kernel with the pass, and the hand-split kernel with
triton.testing.do_bench. Prints a table and writes everything to --out as JSON. Exits non-zero
if any comparison fails (after writing the JSON).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

import torch  # noqa: E402
import triton  # noqa: E402

import triton_ext  # noqa: E402
from triton_ext.testing import import_file  # noqa: E402

causal_attention = import_file(__file__, "kernels.py")

BLOCK_M, BLOCK_N = 128, 64
TOLERANCE = {"fp16": 2e-2, "bf16": 6e-2}  # max abs error against the float64 reference
TORCH_DTYPE = {"fp16": torch.float16, "bf16": torch.bfloat16}


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, sm_scale: float) -> torch.Tensor:
    q, k, v = (t.to(torch.float64) for t in (q, k, v))
    s = (q @ k.transpose(-1, -2)) * sm_scale
    n = q.shape[-2]
    causal = torch.ones(n, n, dtype=torch.bool, device=q.device).tril()
    s = s.masked_fill(~causal, float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def launch(form: str, q, k, v, out, sm_scale: float):
    heads, n, d = q.shape
    grid = (n // BLOCK_M, heads)
    return causal_attention.KERNELS[form][grid](
        q, k, v, out, sm_scale, q.stride(0), q.stride(1),
        HEAD_DIM=d, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
        num_warps=8 if d == 128 else 4, num_stages=3)


def loop_count(compiled: Any) -> int | None:
    """Top-level-ish scf.for count in the kernel's TTIR, if the launch returned the kernel."""
    asm = getattr(compiled, "asm", None)
    return asm["ttir"].count("scf.for") if asm and "ttir" in asm else None


def run(form: str, split: bool, q, k, v, sm_scale: float):
    out = torch.empty_like(q)
    if split:
        with triton_ext.enabled("loop_split"):
            compiled = launch(form, q, k, v, out, sm_scale)
    else:
        compiled = launch(form, q, k, v, out, sm_scale)
    torch.cuda.synchronize()
    return out, loop_count(compiled)


def bench(form: str, split: bool, q, k, v, sm_scale: float, reps: int) -> float:
    out = torch.empty_like(q)
    fn = lambda: launch(form, q, k, v, out, sm_scale)  # noqa: E731
    if split:
        with triton_ext.enabled("loop_split"):
            return triton.testing.do_bench(fn, rep=reps)
    return triton.testing.do_bench(fn, rep=reps)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("results.json"), help="JSON file to write")
    parser.add_argument("--heads", type=int, default=16, help="batch * heads")
    parser.add_argument("--seq", type=int, nargs="+", default=[1024, 4096], help="sequence lengths (multiples of 128)")
    parser.add_argument("--seed", type=int, default=None, help="RNG seed (default: fresh)")
    parser.add_argument("--rep-ms", type=int, default=200, help="do_bench repetition time in ms")
    parser.add_argument("--no-bench", action="store_true", help="correctness only")
    args = parser.parse_args(argv)

    assert torch.cuda.is_available(), "check_gpu.py needs a CUDA GPU"
    seed = args.seed if args.seed is not None else int(torch.seed() % (2**31))
    torch.manual_seed(seed)
    device = torch.device("cuda")
    results: dict[str, Any] = {
        "device": torch.cuda.get_device_name(), "triton": triton.__version__, "torch": torch.__version__,
        "seed": seed, "block_m": BLOCK_M, "block_n": BLOCK_N, "correctness": [], "timing": [],
    }
    failures = 0

    print(f"{'form':8} {'dtype':5} {'d':>4} {'seq':>6} {'loops off/on':>12} {'err off':>9} {'err on':>9} "
          f"{'on-off':>9} ok")
    for seq in args.seq:
        assert seq % BLOCK_M == 0, f"--seq {seq}: expected a multiple of {BLOCK_M}"
        for dtype in ("fp16", "bf16"):
            for d in (64, 128):
                shape = (args.heads, seq, d)
                q, k, v = (torch.randn(shape, device=device, dtype=TORCH_DTYPE[dtype]) for _ in range(3))
                sm_scale = 1.0 / math.sqrt(d)
                ref = reference(q, k, v, sm_scale)
                for form in ("tensor", "scalar"):
                    off, loops_off = run(form, False, q, k, v, sm_scale)
                    on, loops_on = run(form, True, q, k, v, sm_scale)
                    err_off = (off.double() - ref).abs().max().item()
                    err_on = (on.double() - ref).abs().max().item()
                    diff = (on.double() - off.double()).abs().max().item()
                    tol = TOLERANCE[dtype]
                    ok = (err_off <= tol and err_on <= tol and diff <= tol
                          and math.isfinite(err_on) and (loops_on is None or loops_on >= 2))
                    failures += not ok
                    print(f"{form:8} {dtype:5} {d:>4} {seq:>6} {str(loops_off)+'/'+str(loops_on):>12} "
                          f"{err_off:9.2e} {err_on:9.2e} {diff:9.2e} {'yes' if ok else 'NO'}")
                    results["correctness"].append({
                        "form": form, "dtype": dtype, "head_dim": d, "seq": seq, "heads": args.heads,
                        "loops_off": loops_off, "loops_on": loops_on, "max_err_off": err_off,
                        "max_err_on": err_on, "max_diff_on_off": diff, "tolerance": tol, "ok": ok})

    if not args.no_bench:
        print(f"\n{'dtype':5} {'d':>4} {'seq':>6} {'variant':22} {'ms':>8} {'TFLOP/s':>8} {'vs unsplit':>10}")
        for seq in args.seq:
            for dtype in ("fp16", "bf16"):
                for d in (64, 128):
                    shape = (args.heads, seq, d)
                    q, k, v = (torch.randn(shape, device=device, dtype=TORCH_DTYPE[dtype]) for _ in range(3))
                    sm_scale = 1.0 / math.sqrt(d)
                    # Causal forward: half of the 4 * heads * seq^2 * d flops.
                    flops = 2.0 * args.heads * seq * seq * d
                    variants = [("tensor unsplit", "tensor", False), ("tensor + loop_split", "tensor", True),
                                ("scalar unsplit", "scalar", False), ("scalar + loop_split", "scalar", True),
                                ("hand split", "hand_split", False)]
                    base = None
                    for label, form, split in variants:
                        ms = bench(form, split, q, k, v, sm_scale, args.rep_ms)
                        base = base or ms
                        tflops = flops / (ms * 1e-3) / 1e12
                        print(f"{dtype:5} {d:>4} {seq:>6} {label:22} {ms:8.4f} {tflops:8.1f} {base / ms:9.3f}x")
                        results["timing"].append({
                            "variant": label, "form": form, "loop_split": split, "dtype": dtype,
                            "head_dim": d, "seq": seq, "heads": args.heads, "ms": ms, "tflops": tflops,
                            "speedup_vs_tensor_unsplit": base / ms})

    results["failures"] = failures
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwrote {args.out}; {failures} failing comparison(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
