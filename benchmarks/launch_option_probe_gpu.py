"""Probe: what would choosing a launch option (``num_warps``, ``num_stages``) buy, where the kernel's
caller fixed one?

    python -m benchmarks.launch_option_probe_gpu --out num-warps-probe-h100.json [--option num_warps]
        [--set all|holdout] [--min-gpu-us 15] [--results benchmarks/results/auto-mode-all0-h100.json ...]

Many third-party kernels are launched with a hand-picked ``num_warps`` and ``num_stages`` (vLLM,
Liger, SGLang, the corpus's launchers). Before building such a lever into the transparent mode,
this measures its reach with no plugin at all: for every kernel whose stock GPU time in the given
result files is at least ``--min-gpu-us``, the launch is repeated with other values of the option
(``num_warps``: half, twice and four times, 1 to 16, measured first at 9c385a2, then built into the
mode; ``num_stages``: 1, one less and one more, 1 to 6), on fresh inputs of the same seed; a variant
counts only where every byte of every tensor argument equals the stock launch's (the mode's own
rule), and is timed in GPU time (``do_bench``) and back to back (``back_to_back_ms``), against
stock timed beside it.

Writes one row per kernel: stock times, each variant's times, whether its outputs were identical
or why it failed, and the best identical variant's ratios.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import traceback
from pathlib import Path
from typing import Any, Callable

import torch
import triton
from triton.testing import do_bench

from triton_ext.bench.gpu import checkout_commit
from triton_ext.testing import back_to_back_ms

Built = tuple[Callable[[], Any], dict[str, torch.Tensor]]


def realworld_builder(kernel: Any, option: str) -> tuple[Callable[[int], Built], int]:
    from tests.realworld.realworld_kernels import Tensors

    first = kernel.build(Tensors("cuda", seed=0))
    base = {"num_warps": first.num_warps, "num_stages": first.num_stages}[option]

    def build(value: int) -> Built:
        fn = kernel.fn()
        launch = kernel.build(Tensors("cuda", seed=0))
        options = {"num_warps": launch.num_warps, "num_stages": launch.num_stages, option: value}

        def go() -> Any:
            return fn[launch.grid](**launch.args, **options)
        return go, {k: v for k, v in launch.args.items() if isinstance(v, torch.Tensor)}
    return build, base


def corpus_builder(name: str, option: str) -> tuple[Callable[[int], Built], int] | None:
    from tests.corpus import check_gpu

    kernel = check_gpu.BY_NAME[name]
    if kernel.gluon:  # layouts written for one warp count
        return None

    def build(value: int) -> Built:
        torch.manual_seed(0)
        run = check_gpu.BUILDERS[name]()
        options = dict(kernel.options(), **{option: value})

        def go() -> Any:
            return kernel.fn[run.grid](*run.args, **kernel.constexprs, **options)
        tensors = {f"arg{i}": a for i, a in enumerate(run.args) if isinstance(a, torch.Tensor)}
        return go, {**tensors, **run.outputs}
    return build, kernel.options()[option]


def other_values(option: str, base: int) -> list[int]:
    """The values of ``option`` the probe tries beside the launch's own ``base``."""
    if option == "num_warps":
        tried, low, high = (base // 2, base * 2, base * 4), 1, 16
    else:
        tried, low, high = (1, base - 1, base + 1), 1, 6
    return sorted({v for v in tried if low <= v <= high and v != base})


def builders(which: str, option: str) -> dict[str, tuple[Callable[[int], Built], int]]:
    out: dict[str, tuple[Callable[[int], Built], int]] = {}
    if which == "all":
        from tests.corpus import check_gpu
        from tests.realworld.more_kernels import MORE
        from tests.realworld.realworld_kernels import REALWORLD

        for name in check_gpu.BUILDERS:
            built = corpus_builder(name, option)
            if built:
                out[name] = built
        for kernel in REALWORLD + MORE:
            out.setdefault(kernel.name, realworld_builder(kernel, option))
    else:
        from tests.realworld.holdout_kernels import HOLDOUT

        out.update({kernel.name: realworld_builder(kernel, option) for kernel in HOLDOUT})
    return out


def snapshot(outputs: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    torch.cuda.synchronize()
    return {k: v.detach().clone() for k, v in outputs.items()}


def identical(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    """Every byte of every tensor equal (a 0-d tensor too: its bytes are viewed through a 1-d copy)."""
    def raw(t: torch.Tensor) -> torch.Tensor:
        return t.contiguous().reshape(-1).view(torch.uint8)
    return a.keys() == b.keys() and all(a[k].shape == b[k].shape and torch.equal(raw(a[k]), raw(b[k])) for k in a)


def times(go: Callable[[], Any]) -> tuple[float, float]:
    gpu = do_bench(go, warmup=25, rep=100)
    b2b = statistics.median(back_to_back_ms(go, calls=100) for _ in range(5))
    return gpu, b2b


def binary(kernel: Any) -> bytes | None:
    """The cubin of the kernel a launch returned (Triton's ``JITFunction.run`` returns it)."""
    return getattr(kernel, "asm", {}).get("cubin")


def probe(name: str, build: Callable[[int], Built], base: int, option: str) -> dict[str, Any]:
    go, outputs = build(base)
    t0 = time.perf_counter()
    stock_kernel = go()
    stock_first_s = time.perf_counter() - t0
    reference = snapshot(outputs)
    row: dict[str, Any] = {"kernel": name, option: base, "stock_first_s": stock_first_s, "variants": {}}
    stock_runs = [times(go)]
    for w in other_values(option, base):
        entry: dict[str, Any] = {}
        try:
            vgo, voutputs = build(w)
            t0 = time.perf_counter()
            kernel = vgo()
            entry["first_s"] = time.perf_counter() - t0
            if binary(kernel) is not None and binary(kernel) == binary(stock_kernel):
                entry["same_binary"] = True  # the option changed nothing here: nothing to time
                row["variants"][str(w)] = entry
                continue
            entry["identical"] = identical(reference, snapshot(voutputs))
            if entry["identical"]:
                entry["gpu_ms"], entry["b2b_ms"] = times(vgo)
                stock_runs.append(times(go))
        except Exception as exc:  # noqa: BLE001 - a config the kernel cannot take is a result
            entry["error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
        row["variants"][str(w)] = entry
    row["stock_gpu_ms"] = statistics.median(g for g, _ in stock_runs)
    row["stock_b2b_ms"] = statistics.median(b for _, b in stock_runs)
    best = None
    for w, entry in row["variants"].items():
        if "gpu_ms" in entry:
            gpu = row["stock_gpu_ms"] / entry["gpu_ms"]
            b2b = row["stock_b2b_ms"] / entry["b2b_ms"]
            entry["gpu_speedup"], entry["b2b_speedup"] = gpu, b2b
            if min(gpu, b2b) > 1 and (best is None or b2b > best[1]):
                best = (w, b2b, gpu)
    row["best"] = {option: int(best[0]), "b2b_speedup": best[1], "gpu_speedup": best[2]} if best else None
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--option", choices=("num_warps", "num_stages"), default="num_warps")
    parser.add_argument("--set", choices=("all", "holdout"), default="all")
    parser.add_argument("--min-gpu-us", type=float, default=15.0)
    parser.add_argument("--results", nargs="*", default=[])
    args = parser.parse_args()
    gpu_us = {}
    for path in args.results:
        for r in json.loads(Path(path).read_text())["rows"]:
            gpu_us[r["kernel"]] = r["stock_ms"] * 1e3
    rows: list[dict[str, Any]] = []
    for name, (build, base) in builders(args.set, args.option).items():
        if gpu_us and gpu_us.get(name, 0.0) < args.min_gpu_us:
            continue
        try:
            row = probe(name, build, base, args.option)
        except Exception:  # noqa: BLE001
            row = {"kernel": name, "error": traceback.format_exc()[-600:]}
        rows.append(row)
        best = row.get("best")
        print(name, row.get(args.option), {w: (round(e.get("gpu_speedup", 0), 3), round(e.get("b2b_speedup", 0), 3),
                                               e.get("identical"), e.get("error", "")[:60])
                                           for w, e in row.get("variants", {}).items()}, best, flush=True)
        torch.cuda.empty_cache()
        write(args, rows)  # after every kernel: a run cut short keeps what it measured
    result = write(args, rows)
    print({k: v for k, v in result.items() if k != "rows"})
    return 0


def write(args: argparse.Namespace, rows: list[dict[str, Any]]) -> dict[str, Any]:
    b2b = [r["best"]["b2b_speedup"] if r.get("best") else 1.0 for r in rows if "error" not in r]
    result = {"commit": checkout_commit(), "date": time.strftime("%Y-%m-%d"), "gpu": torch.cuda.get_device_name(),
              "triton": triton.__version__, "option": args.option, "set": args.set, "min_gpu_us": args.min_gpu_us,
              "rows": rows,
              "kernels": len(rows), "improved": sum(1 for r in rows if r.get("best")),
              "b2b_geomean_best": statistics.geometric_mean(b2b) if b2b else None}
    Path(args.out).write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    raise SystemExit(main())
