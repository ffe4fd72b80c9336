"""GPU probe (issue 18): what the one-line print costs a GEMM and an attention kernel.

    python -m passes.Sanitizers.probe_print --out $RESULTS/probe-print-h200.json

The print=first line is a device `vprintf` call. Never executed in a correct program, the call
still changes the kernel's register allocation (the ABI of a call; on CPU, the in-house GEMM
compiles to 198 registers without sanitizers, 209 with nan_inf_check, 199 with
nan_inf_check{print=none}; offset_overflow_check 214 vs 192). This times `kernels.bench_kernel`
(GEMM 4096^3 and attention seq 2048, the bench's shapes) off, with each sanitizer as it ships
(print=first) and with print=none (records only, read by `sanitizers.report()/check()`), in
interleaved rounds, and with neither print nor records ("check only": the fast path and the
never-taken count), and prints speed = off / variant. Exits 1 if an output differs from off's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

VARIANTS: list[tuple[str, str | None, dict[str, Any]]] = [
    ("off", None, {}),
    ("nan_inf_check", "nan_inf_check", {}),
    ("nan_inf_check print=none", "nan_inf_check", {"print": "none"}),
    ("nan_inf_check check only", "nan_inf_check", {"print": "none", "records": False}),
    ("offset_overflow_check", "offset_overflow_check", {}),
    ("offset_overflow_check print=none", "offset_overflow_check", {"print": "none"}),
    ("offset_overflow_check check only", "offset_overflow_check",
     {"print": "none", "records": False}),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)

    import torch
    import triton
    from triton.testing import do_bench

    import triton_ext
    from passes.Sanitizers import kernels

    torch.manual_seed(0)
    dev = "cuda"
    cases: dict[str, tuple[Any, Any]] = {}
    n = 4096
    a = torch.randn(n, n, device=dev, dtype=torch.float16)
    b = torch.randn(n, n, device=dev, dtype=torch.float16)
    c = torch.empty(n, n, device=dev, dtype=torch.float16)

    def gemm() -> None:
        kernels.bench_kernel[(triton.cdiv(n, 128), triton.cdiv(n, 128))](
            a, b, b, c, n, n, n, n, n, 1.0, WORKLOAD=1, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64,
            num_warps=4, num_stages=3)

    cases["fp16 GEMM 4096"] = (gemm, c)
    seq, d = 2048, 64
    heads = 16384 * 32 // seq
    q = torch.randn(heads, seq, d, device=dev, dtype=torch.float16)
    k = torch.randn(heads, seq, d, device=dev, dtype=torch.float16)
    v = torch.randn(heads, seq, d, device=dev, dtype=torch.float16)
    o = torch.empty_like(q)

    def attention() -> None:
        kernels.bench_kernel[(triton.cdiv(seq, 128), heads)](
            q, k, v, o, seq, 0, 0, seq * d, d, d ** -0.5, WORKLOAD=2, BLOCK_M=128, BLOCK_N=64,
            BLOCK_K=d, num_warps=4, num_stages=3)

    cases["attention fwd seq 2048"] = (attention, o)

    def run(launch: Any, pass_name: str | None, options: dict[str, Any]) -> float:
        if pass_name is None:
            return do_bench(launch, warmup=25, rep=200)
        with triton_ext.enabled(pass_name, options=options):
            return do_bench(launch, warmup=25, rep=200)

    result: dict[str, Any] = {"device": torch.cuda.get_device_name(), "rounds": args.rounds,
                              "cases": {}}
    ok = True
    for name, (launch, out) in cases.items():
        reference = None
        times: dict[str, list[float]] = {label: [] for label, _, _ in VARIANTS}
        for label, pass_name, options in VARIANTS:  # compile, check the output once
            out.zero_()
            if pass_name is None:
                launch()
            else:
                with triton_ext.enabled(pass_name, options=options):
                    launch()
            torch.cuda.synchronize()
            if reference is None:
                reference = out.clone()
            elif not torch.equal(out, reference):
                ok = False
                print(f"{name} {label}: output differs from off", flush=True)
        for r in range(args.rounds):
            order = VARIANTS if r % 2 == 0 else VARIANTS[::-1]
            for label, pass_name, options in order:
                times[label].append(run(launch, pass_name, options))
        off = statistics.median(times["off"])
        row = {label: {"ms": round(statistics.median(t), 5), "speed": round(off / statistics.median(t), 4),
                       "ms_rounds": [round(x, 5) for x in t]} for label, t in times.items()}
        result["cases"][name] = row
        print(name + ": " + ", ".join(f"{label} {v['speed']:.3f}x" for label, v in row.items()), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
