"""GPU check: autotuned kernels (``@triton.autotune``) under the transparent mode, launched through
their packages' own functions, so Triton's autotuner times its configs at the first call.

    TRITON_EXT_BUILD_DIR=$PWD/build python -m benchmarks.auto_autotuned_gpu --out auto-autotuned-h200.json

Two child processes, each with a fresh Triton cache (cold first calls, as a user's first run):
stock, and the mode with the registry's ``auto: true`` passes. Each calls every case once (the
first call: the autotuner compiles and times every config; under the mode, only the config it
picks is decided), then times later calls back to back. Reported per case: the autotuner's config
count, first-call seconds (stock, mode), the mode's decisions (the point: one per specialization
of the config the autotuner picks, where before each config timed was decided), its choice,
back-to-back microseconds per call, and the outputs of the two processes compared (the autotuner picks by
timing, so the two may pick different configs: within tolerance is required, bit-identical is
reported).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

#: (name, module, function, build(torch) -> args, autotuner attribute for the config count, atol, rtol)
CASES: list[tuple[str, str, str, Callable[[Any], tuple[Any, ...]], str, float, float]] = [
    ("fla_softmax_fwd", "fla.ops.utils.softmax", "softmax_fwd",
     lambda torch: (torch.randn(16384, 1024, device="cuda"),), "softmax_fwd_kernel", 1e-5, 1e-5),
    ("fla_matmul", "fla.ops.utils.matmul", "matmul",
     lambda torch: (torch.randn(2048, 2048, device="cuda", dtype=torch.float16) / 45,
                    torch.randn(2048, 2048, device="cuda", dtype=torch.float16)), "matmul_kernel", 1e-2, 1e-2),
    ("torchao_fp8_act_quant_lhs", "torchao.prototype.blockwise_fp8_training.kernels",
     "triton_fp8_blockwise_act_quant_lhs",
     lambda torch: (torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16),),
     "triton_fp8_blockwise_act_quant_lhs_kernel", 0.0, 0.0),
    # A whole fla operator (gated delta rule, chunked forward): its six kernels, several autotuned,
    # each decided at its first launch inside the one call; the config count is its output kernel's.
    ("fla_chunk_gated_delta_rule", "fla.ops.gated_delta_rule", "chunk_gated_delta_rule",
     lambda torch: (torch.randn(2, 2048, 16, 128, device="cuda", dtype=torch.bfloat16),
                    torch.randn(2, 2048, 16, 128, device="cuda", dtype=torch.bfloat16),
                    torch.randn(2, 2048, 16, 128, device="cuda", dtype=torch.bfloat16),
                    torch.nn.functional.logsigmoid(torch.randn(2, 2048, 16, device="cuda")),
                    torch.rand(2, 2048, 16, device="cuda", dtype=torch.bfloat16),
                    None, None, False, True),  # scale, initial state, no final state, l2-normalised q and k
     "fla.ops.common.chunk_o:chunk_fwd_kernel_o", 5e-2, 5e-2),
]


def _autotuner(module: Any, attr: str) -> Any:
    """The Triton autotuner under the module's kernel attribute (through heuristics wrappers)."""
    from triton.runtime.autotuner import Autotuner

    if ":" in attr:  # the kernel lives in another module than the function called
        import importlib

        module_name, attr = attr.split(":")
        module = importlib.import_module(module_name)
    obj = getattr(module, attr)
    while obj is not None and not isinstance(obj, Autotuner):
        obj = getattr(obj, "fn", None)
    return obj


def _picked(module: Any, attr: str) -> str | None:
    """The config the kernel's autotuner picked (each process times its configs and may pick another)."""
    best = getattr(_autotuner(module, attr), "best_config", None)
    return str(best) if best is not None else None


def child(mode: bool, outputs_dir: Path) -> list[dict[str, Any]]:
    import importlib

    import torch
    import triton.testing

    import triton_ext
    from triton_ext.testing import back_to_back_ms

    rows = []
    with triton_ext.auto_mode() if mode else contextlib.nullcontext() as auto:
        for name, module_name, function, build, attr, _, _ in CASES:
            module = importlib.import_module(module_name)
            fn = getattr(module, function)
            torch.manual_seed(0)
            args = build(torch)
            before = len(auto.decisions) if auto else 0
            torch.cuda.synchronize()
            start = time.perf_counter()
            out = fn(*args)
            torch.cuda.synchronize()
            first_s = time.perf_counter() - start
            outs = tuple(o for o in (out if isinstance(out, tuple) else (out,)) if o is not None)
            torch.save([o.detach().cpu() for o in outs], outputs_dir / f"{name}.pt")
            decisions = auto.decisions[before:] if auto else []
            b2b = statistics.median(back_to_back_ms(lambda: fn(*args), 100) * 1e3 for _ in range(15))
            # GPU time (L2 flushed): tells a slower kernel from a slower launch path.
            gpu_us = triton.testing.do_bench(lambda: fn(*args), warmup=25, rep=100) * 1e3
            rows.append({"case": name, "configs": len(_autotuner(module, attr).configs), "first_call_s": first_s,
                         "picked": _picked(module, attr),
                         "decisions": [{"kernel": d.kernel, "choice": d.choice, "applicable": d.applicable,
                                        "first_launch_s": d.first_launch_s, "refused": d.refused,
                                        "error": d.error} for d in decisions],
                         "b2b_us": b2b, "gpu_us": gpu_us})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="auto-autotuned-h200.json")
    parser.add_argument("--child", choices=("stock", "auto"))
    parser.add_argument("--outputs")
    parser.add_argument("--cases", nargs="*", help="only these cases (default: all)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="processes per configuration, in alternating pairs (stock, auto, auto, stock, ...): "
                             "one pair cannot tell the mode from the host's moods between processes")
    args = parser.parse_args()
    if args.cases:
        CASES[:] = [c for c in CASES if c[0] in args.cases]
    if args.child:
        print(json.dumps(child(args.child == "auto", Path(args.outputs))))
        return 0
    import torch
    import triton

    from benchmarks.auto_torch_compile import alternating
    from triton_ext.bench.gpu import checkout_commit

    order = [which for which, _ in alternating(args.repeats, "auto")]
    runs: dict[str, list[dict[str, Any]]] = {"stock": [], "auto": []}
    dirs: dict[str, list[Path]] = {"stock": [], "auto": []}
    for which in order:
        out_dir = Path(tempfile.mkdtemp(prefix=f"autotuned-{which}-"))
        env = {**os.environ, "TRITON_CACHE_DIR": tempfile.mkdtemp(prefix="triton-cache-"),
               "TRITON_EXT_AUTO_DIR": tempfile.mkdtemp(prefix="triton-ext-auto-")}
        proc = subprocess.run([sys.executable, "-m", "benchmarks.auto_autotuned_gpu", "--child", which,
                               "--outputs", str(out_dir), *(["--cases", *args.cases] if args.cases else [])],
                              env=env, capture_output=True, text=True, timeout=600)
        if proc.returncode:
            print(proc.stderr[-4000:], file=sys.stderr)
            return 1
        runs[which].append({r["case"]: r for r in json.loads(proc.stdout.strip().splitlines()[-1])})
        dirs[which].append(out_dir)
    rows = []
    for name, *_, atol, rtol in CASES:
        stocks, autos = [r[name] for r in runs["stock"]], [r[name] for r in runs["auto"]]

        def outputs(d: Path) -> list[Any]:  # fp8 outputs are compared by their bytes
            return [x.view(torch.uint8) if x.element_size() == 1 else x for x in torch.load(d / f"{name}.pt")]

        a = outputs(dirs["stock"][0])
        others = [outputs(d) for d in dirs["auto"]]
        identical = all(torch.equal(x, y) for b in others for x, y in zip(a, b))
        close = all(torch.allclose(x.double(), y.double(), atol=atol, rtol=rtol) if x.is_floating_point()
                    else torch.equal(x, y) for b in others for x, y in zip(a, b))
        stock_b2b = statistics.median(r["b2b_us"] for r in stocks)
        auto_b2b = statistics.median(r["b2b_us"] for r in autos)
        stock_first = statistics.median(r["first_call_s"] for r in stocks)
        auto_first = statistics.median(r["first_call_s"] for r in autos)
        rows.append({"case": name, "configs": stocks[0]["configs"], "stock_first_call_s": stock_first,
                     "auto_first_call_s": auto_first, "auto_over_stock_s": auto_first - stock_first,
                     "picked": {"stock": [r.get("picked") for r in stocks], "auto": [r.get("picked") for r in autos]},
                     "decisions": autos[0]["decisions"], "stock_b2b_us": stock_b2b, "auto_b2b_us": auto_b2b,
                     "b2b_us_per_process": {"stock": [r["b2b_us"] for r in stocks], "auto": [r["b2b_us"] for r in autos]},
                     "gpu_us_per_process": {"stock": [r["gpu_us"] for r in stocks], "auto": [r["gpu_us"] for r in autos]},
                     "b2b_speedup": stock_b2b / auto_b2b, "outputs_identical": identical,
                     "outputs_within_tolerance": close})
        print(f"{name:28} configs {stocks[0]['configs']:3} first call {stock_first:.2f} s -> {auto_first:.2f} s, "
              f"decisions {[(d['kernel'], d['choice']) for d in autos[0]['decisions']]}, b2b per process "
              f"stock {[round(r['b2b_us'], 1) for r in stocks]} auto {[round(r['b2b_us'], 1) for r in autos]} us "
              f"(GPU time {[round(r['gpu_us'], 1) for r in stocks]} / {[round(r['gpu_us'], 1) for r in autos]}), "
              f"identical {identical}, close {close}")
    report = {"commit": checkout_commit(), "date": time.strftime("%Y-%m-%d"), "gpu": torch.cuda.get_device_name(),
              "triton": triton.__version__, "repeats": args.repeats,
              "order": order,
              "rows": rows}
    Path(args.out).write_text(json.dumps(report, indent=2))
    return 0 if all(r["outputs_within_tolerance"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
