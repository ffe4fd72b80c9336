"""GPU differential check of loop_split through the ordinary JIT (issue 14).

    python -m tests.differential.check_gpu [--out tests/differential/results/check-h200.json]

1. The launches of issue 14, each without and with ``triton_ext.enabled("loop_split")``:
   ``issue14`` with (0, 10, 5), (2^61, 2^61 + 10, 2^61 + 5), (2^62, 2^62 + 10, 2^62 + 3), and
   ``issue14_n_plus_one`` (``if i < n + 1``) with (0, 8, 2^31 - 1); compared with each other and
   with the exact host value.
2. A generated sample of boundary cases: the ``batch`` kernel (one argument set per program)
   for i32/i64, signed/unsigned comparison, the six predicates, scalar and 4x4 tensor forms,
   steps 1/3/64, over argument sets weighted to the limits (empty and reversed ranges, bounds
   near 2^31, 2^61..2^63 and the unsigned wrap). Stored accumulators and trip counts must be
   equal with and without the pass, and equal to the exact host model on a subsample.

Before a kernel compiled with the pass is launched, its TTIR is interpreted on the host
(tests/differential/interp.py) and argument sets it would run away on (a wrapped split point)
are reported and not launched, so a miscompile cannot hang the GPU. Writes JSON to --out; exits
non-zero on any mismatch (after writing it).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

import numpy as np  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402

from tests.differential import gpu_kernels as gk  # noqa: E402
import triton_ext  # noqa: E402
from tests.differential.loop_kernels import LoopKernel, loop_args, trips  # noqa: E402

DEFAULT_OUT = HERE / "results" / "check-h200.json"
ISSUE14 = [("issue14", (0, 10, 5)), ("issue14", (2**61, 2**61 + 10, 2**61 + 5)),
           ("issue14", (2**62, 2**62 + 10, 2**62 + 3)), ("issue14_n_plus_one", (0, 8, 2**31 - 1))]
MAX_TRIPS = 40


def _issue14_reference(kernel: str, lb: int, ub: int, n: int) -> int:
    width = 32 if all(-(2**31) <= v < 2**31 for v in (lb, ub, n)) else 64
    acc, bound = 0, n + 1 if kernel == "issue14_n_plus_one" else n
    bound = gk._wrap(bound, width)
    for i in range(lb, ub):
        acc = gk._wrap(acc * 3 + (1 if i < bound else 2), width)
    return acc


def run_issue14() -> list[dict[str, Any]]:
    rows = []
    for name, args in ISSUE14:
        fn = getattr(gk, name)
        results = {}
        for label, enabled in (("without", False), ("with", True)):
            out = torch.zeros(1, dtype=torch.int64, device="cuda")
            if enabled:
                with triton_ext.enabled("loop_split"):
                    fn[(1,)](out, *args)
            else:
                fn[(1,)](out, *args)
            torch.cuda.synchronize()
            results[label] = int(out.item())
        ref = _issue14_reference(name, *args)
        rows.append({"kernel": name, "args": [str(a) for a in args], **results, "reference": ref,
                     "ok": results["without"] == results["with"] == ref})
    return rows


def _host_runaway(compiled: Any, cases: list[tuple[int, int, int]]) -> np.ndarray:
    """Lanes on which the compiled TTIR, interpreted on the host, runs away or newly wraps its
    iv (all False if the TTIR is outside the interpreter's subset)."""
    from tests.differential.jit_interp import kernel_func, run_programs
    from tests.differential.mlir_text import UnsupportedIR

    try:
        func = kernel_func(compiled.asm["ttir"])
        res = run_programs(func, [[c[k] for c in cases] for k in range(3)], len(cases),
                           max_trips=4 * MAX_TRIPS)
    except (UnsupportedIR, ValueError, KeyError) as exc:
        print(f"host interpretation skipped: {exc}")
        return np.zeros(len(cases), bool)
    return res.runaway | res.iv_wrap


def run_batch(config: dict[str, Any], cases: list[tuple[int, int, int]]) -> dict[str, Any]:
    width, r = config["width"], config["R"]
    dt = torch.int64 if width == 64 else torch.int32
    n = len(cases)
    lbs, ubs, ns = (torch.tensor([c[k] for c in cases], dtype=dt, device="cuda") for k in range(3))
    per = r * r if config["TENSOR"] else 1
    kwargs = {k: config[k] for k in ("STEP", "IV_OFF", "INV_OFF", "PRED", "UNSIGNED", "TENSOR", "R")}
    outs = {}
    skipped = np.zeros(n, bool)
    for label, enabled in (("without", False), ("with", True)):
        out = torch.zeros(n * per, dtype=dt, device="cuda")
        trip = torch.zeros(n, dtype=torch.int32, device="cuda")
        with triton_ext.enabled("loop_split") if enabled else contextlib.nullcontext():
            if enabled and hasattr(gk.batch, "warmup"):
                compiled = gk.batch.warmup(lbs, ubs, ns, out, trip, grid=(n,), **kwargs)
                skipped = _host_runaway(compiled, cases)
            sel = torch.nonzero(torch.tensor(~skipped, device="cuda")).flatten()
            if not skipped.any():  # the tensors the warmup specialized on
                gk.batch[(n,)](lbs, ubs, ns, out, trip, **kwargs)
            elif len(sel):
                gk.batch[(len(sel),)](lbs[sel], ubs[sel], ns[sel], out, trip, **kwargs)
            torch.cuda.synchronize()
        outs[label] = (out.view(n, per)[: len(sel)].cpu(), trip[: len(sel)].cpu(), sel.cpu())
    # Without the pass every case ran; with it, the kept ones (in order): compare those.
    sel = outs["with"][2]
    wo_acc, wo_trip = outs["without"][0][sel], outs["without"][1][sel]
    wi_acc, wi_trip = outs["with"][0], outs["with"][1]
    bad = ((wo_acc != wi_acc).any(dim=1) | (wo_trip != wi_trip)).numpy()
    examples = []
    for j in np.nonzero(bad)[0][:5].tolist():
        lane = int(sel[j])
        examples.append({"args": [str(v) for v in cases[lane]],
                         "without": wo_acc[j].tolist()[:4], "with": wi_acc[j].tolist()[:4],
                         "trips_without": int(wo_trip[j]), "trips_with": int(wi_trip[j])})
    for lane in np.nonzero(skipped)[0][:5].tolist():
        examples.append({"args": [str(v) for v in cases[lane]], "with": "runaway on the host"})
    # Exact host model on a subsample of the cases launched without the pass.
    ref_bad = 0
    all_wo_acc, all_wo_trip = outs["without"][0], outs["without"][1]
    pred = gk.PREDS[config["PRED"]]
    for lane in range(0, n, max(1, n // 128)):
        acc, count = gk.reference(*cases[lane], width=width, step=config["STEP"],
                                  iv_off=config["IV_OFF"], inv_off=config["INV_OFF"], pred=pred,
                                  unsigned=config["UNSIGNED"], rows=r if config["TENSOR"] else 0)
        if all_wo_acc[lane].tolist() != acc or int(all_wo_trip[lane]) != count:
            ref_bad += 1
    return {"config": config, "cases": n, "mismatches": int(bad.sum()) + int(skipped.sum()),
            "host_runaway": int(skipped.sum()), "reference_mismatches": ref_bad,
            "examples": examples}


def configs() -> list[dict[str, Any]]:
    out = []
    steps = itertools.cycle((1, 3, 64))
    for width, unsigned, tensor, pred in itertools.product((32, 64), (False, True), (False, True),
                                                           range(len(gk.PREDS))):
        out.append({"width": width, "UNSIGNED": unsigned, "TENSOR": tensor, "PRED": pred,
                    "STEP": next(steps), "IV_OFF": 1 if pred % 2 else 0,
                    "INV_OFF": -2 if pred % 3 == 0 else 1, "R": 4})
    return out


def cases_for(config: dict[str, Any], count: int, seed: int) -> list[tuple[int, int, int]]:
    # Argument sets in the GPU's domain: the original loop's final increment must not wrap
    # (lowered to LLVM it would not stop), at most MAX_TRIPS iterations.
    kernel = LoopKernel("tensor" if config["TENSOR"] else "scalar", config["width"], False, "slt",
                        step=config["STEP"], iv_off=config["IV_OFF"], inv_off=config["INV_OFF"],
                        rows=config["R"], cols=config["R"])
    rng = random.Random(f"{seed}-{sorted(config.items())}")
    limit = (1 << (config["width"] - 1)) - 1
    out: list[tuple[int, int, int]] = []
    while len(out) < count:
        for lb, ub, n in loop_args(rng, kernel, count, MAX_TRIPS):
            if lb + trips(lb, ub, config["STEP"], config["width"], False) * config["STEP"] <= limit:
                out.append((lb, ub, n))
    return out[:count]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--cases", type=int, default=4096, help="argument sets per batch config")
    p.add_argument("--seed", type=int, default=14)
    args = p.parse_args(argv)
    start = time.time()
    result: dict[str, Any] = {"device": torch.cuda.get_device_name(), "triton": triton.__version__}
    result["issue14"] = run_issue14()
    for row in result["issue14"]:
        print(f"{row['kernel']}{tuple(row['args'])}: without={row['without']} with={row['with']} "
              f"reference={row['reference']} {'ok' if row['ok'] else 'MISMATCH'}")
    batch = []
    for config in configs():
        row = run_batch(config, cases_for(config, args.cases, args.seed))
        batch.append(row)
        print(f"{config}: {row['mismatches']} of {row['cases']} differ"
              f" (host runaway {row['host_runaway']}, reference {row['reference_mismatches']})")
    result["batch"] = batch
    result["batch_cases"] = sum(r["cases"] for r in batch)
    result["seconds"] = round(time.time() - start, 1)
    ok = all(r["ok"] for r in result["issue14"]) and all(
        r["mismatches"] == 0 and r["reference_mismatches"] == 0 for r in batch)
    result["ok"] = ok
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"{'OK' if ok else 'MISMATCH'}: {result['batch_cases']} generated cases, "
          f"{len(result['issue14'])} issue-14 launches; wrote {args.out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
