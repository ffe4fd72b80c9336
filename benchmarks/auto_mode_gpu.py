"""GPU check of the transparent mode, ``TRITON_EXT_ENABLE=auto`` (issue 19.2), over the corpus.

    TRITON_EXT_BUILD_DIR=$PWD/build python -m benchmarks.auto_mode_gpu --out auto-mode-h200.json \
        [--candidates grid_swizzle,loop_split] [--kernels NAME ... | --half 0|1] \
        [--set corpus|realworld|more|all|holdout|all+holdout]

For every kernel of the reliability corpus (tests/corpus/corpus_kernels.py, inputs and launches
from tests/corpus/check_gpu.py) plus grid_swizzle's naive GEMM at 4096^3 and 8192^3 (``--set
corpus``, the default); ``--set realworld``: the third-party kernels of tests/realworld
(realworld_kernels.REALWORLD, launched as their packages' launchers do); ``--set more``: only
those of tests/realworld/more_kernels.py (flag-gems, sageattention; decode and prefill sizes);
``--set all``: both corpora; ``--set holdout``: the hold-out kernels of
tests/realworld/holdout_kernels.py, third-party kernels no pass or rule was tuned on (not in
``all``); ``--set all+holdout``: every one of them (to pick a few from both with ``--kernels``):

1. stock: fresh inputs (fixed seed), one launch, outputs kept; then ``do_bench`` of the launch;
2. auto: the mode is activated (``triton_ext.auto_mode``, what ``TRITON_EXT_ENABLE=auto:...``
   does at import) with an empty decision cache; fresh inputs with the same seed; the first launch
   is timed wall-clock (compiles and times the variants: the first-launch cost); its outputs must
   equal the stock outputs (bit-identical reported, within the kernel's tolerance required);
   then ``do_bench`` of the launch; then a wait for the compiles the budget left running in the
   background (``background_s``), so that what follows times the steady state;
3. GPU time: :data:`GPU_ROUNDS` paired rounds of ``do_bench`` in ABBA order (stock, mode, mode,
   stock; then mode, stock, stock, mode), each mode reading inside its own activation; every slot
   starts the same way, the JITs' kernel caches emptied (what activating the mode does);
4. back to back, as applications launch (``triton_ext._timing.back_to_back_ms``: launches queued
   by the CPU, no flush, wall time per launch, about :data:`B2B_READING_MS` per reading):
   :data:`B2B_PAIRS` pairs of readings (more, up to :data:`B2B_MAX_PAIRS`, until the median ratio
   is known within +-:data:`B2B_HALFWIDTH`), stock then mode or mode then stock in turn, inside one
   activation of the mode (:func:`_interleaved`). After a decision, the two states differ only
   in the kernels in the JITs' caches (the mode runs no code on a cache hit, and its launches key
   as stock ones: checked, ``b2b_stock_keys_kept``; no reading may miss, ``b2b_misses``), so
   each reading installs its state's caches, saved right after that state's launch, and a pair
   is two readings a few milliseconds apart. Pairing whole activations instead (slots of 5
   readings each) left launch-bound kernels at the host's mercy: on the H200 host the Python
   launch path jumps between about 17 and 27 µs per launch for stretches of one to a few slots
   (0.1-0.5 s), so whole slots of the same binary read 1.6x apart, and a round's ratio spread by a
   median 4.6% (interquartile) over the 42 kernels launched at 1.3x their GPU time or more
   (4b604cb; benchmarks/auto_b2b_noise_gpu.py);
5. a second process with the same decision folder must take every choice from disk.

Reports per kernel: choice, applicable passes, variant timings, speedup (stock / auto, the median
of the GPU-time rounds' ratios), back-to-back speedup (the median of its pairs' ratios), first-launch
cost and the stock cold launch's; overall geometric means, the worst kernels, and the spread of the
ratios where the mode kept the stock binary (the harness's noise floor). ``--candidates ''`` takes
the registry's ``auto: true`` passes (bare ``TRITON_EXT_ENABLE=auto``). Default candidates are
grid_swizzle and loop_split.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent import futures
from pathlib import Path
from typing import Any, Callable

import torch
import triton

import triton_ext
from tests.corpus import check_gpu  # the corpus and its input builders (run from the checkout)
from triton_ext.bench.gpu import checkout_commit
from triton_ext.testing import back_to_back_ms, forget_compiled_kernels, jit_kernel_caches
from triton_ext.testing import import_file, repo_root

REPO = repo_root()
#: Launches per back-to-back reading.
B2B_CALLS = 200
#: ABBA rounds of do_bench (GPU time) per kernel.
GPU_ROUNDS = 3
#: Pairs of back-to-back readings (stock, mode) per kernel, at least; more in blocks of as many
#: while the median ratio's 95% interval is wider than +-B2B_HALFWIDTH, up to B2B_MAX_PAIRS.
B2B_PAIRS = 100
B2B_HALFWIDTH = 0.005
B2B_MAX_PAIRS = 800
#: Wall milliseconds one back-to-back reading aims at (launches: 5 to B2B_CALLS).
B2B_READING_MS = 5.0
matmul_naive_kernel = import_file(REPO / "passes" / "GridSwizzle" / "kernels.py").matmul_naive_kernel


def gemm_case(n: int) -> Callable[[], tuple[Callable[[], Any], dict[str, torch.Tensor], float, float]]:
    def build() -> tuple[Callable[[], Any], dict[str, torch.Tensor], float, float]:
        a = torch.randn(n, n, device="cuda", dtype=torch.float16) / n**0.5
        b = torch.randn(n, n, device="cuda", dtype=torch.float16)
        c = torch.empty(n, n, device="cuda", dtype=torch.float16)
        grid = (triton.cdiv(n, 128), triton.cdiv(n, 128))

        def go() -> Any:
            return matmul_naive_kernel[grid](a, b, c, n, n, n, a.stride(0), b.stride(0), c.stride(0), BLOCK_M=128,
                                      BLOCK_N=128, BLOCK_K=64, num_warps=8, num_stages=3)
        return go, {"c": c}, 1e-2, 1e-2
    return build


def corpus_case(name: str) -> Callable[[], tuple[Callable[[], Any], dict[str, torch.Tensor], float, float]]:
    kernel = check_gpu.BY_NAME[name]

    def build() -> tuple[Callable[[], Any], dict[str, torch.Tensor], float, float]:
        run = check_gpu.BUILDERS[name]()
        options = {"num_warps": kernel.num_warps} if kernel.gluon else kernel.options()

        def go() -> Any:
            return kernel.fn[run.grid](*run.args, **kernel.constexprs, **options)
        return go, run.outputs, run.atol, run.rtol
    return build


def realworld_case(kernel: Any) -> Callable[[], tuple[Callable[[], Any], dict[str, torch.Tensor], float, float]]:
    """A kernel of tests/realworld: every tensor argument is compared (in-place kernels included)."""
    from tests.realworld.realworld_kernels import Tensors

    def build() -> tuple[Callable[[], Any], dict[str, torch.Tensor], float, float]:
        fn = kernel.fn()
        launch = kernel.build(Tensors("cuda", seed=0))
        args = launch.args

        def go() -> Any:
            return fn[launch.grid](**args, num_warps=launch.num_warps, num_stages=launch.num_stages)
        # fp8 tensors compared by their bytes (views: they see the kernel's writes).
        outputs = {k: v.view(torch.uint8) if v.dtype in (torch.float8_e4m3fn, torch.float8_e5m2) else v
                   for k, v in args.items() if isinstance(v, torch.Tensor)}
        return go, outputs, launch.atol, launch.rtol
    return build


def _launched(go: Callable[[], Any]) -> str | None:
    """Hash of the binary a launch ran (None where the launcher does not return Triton's kernel)."""
    kernel = go()
    asm = getattr(kernel, "asm", None)
    return hashlib.sha256(asm["cubin"]).hexdigest()[:16] if asm and "cubin" in asm else None


def _paired(candidates: list[str], read: Callable[[], float], rounds: int) -> dict[str, Any]:
    """``rounds`` rounds of stock and of the mode in ABBA order (stock, mode, mode, stock; then
    mode, stock, stock, mode), each mode reading in its own activation; ratio = stock / mode per
    round (a linear drift of the host or the GPU cancels)."""
    stock: list[float] = []
    auto: list[float] = []
    ratios: list[float] = []
    choices: set[str] = set()  # what each activation kept: one over budget is decided again later
    for r in range(rounds):
        pair: dict[str, list[float]] = {"stock": [], "auto": []}
        for which in (("stock", "auto", "auto", "stock") if r % 2 == 0 else ("auto", "stock", "stock", "auto")):
            if which == "auto":
                with triton_ext.auto_mode(*candidates) as mode:
                    pair["auto"].append(read())
                choices.update(d.choice for d in mode.decisions)
            else:
                # The same start as the mode's slot: activating the mode empties the JITs' kernel
                # caches (a walk over every Python object, then a recompile from Triton's disk
                # cache), which leaves the GPU idle for a moment; a stock slot without that gap
                # started on a hotter GPU, which read power-bound GEMMs up to 7% slower than the
                # mode's slots on the same binary (H200 at 4b604cb).
                forget_compiled_kernels()
                pair["stock"].append(read())
        stock.extend(pair["stock"])
        auto.extend(pair["auto"])
        ratios.append(sum(pair["stock"]) / sum(pair["auto"]))
    return {"stock": stock, "auto": auto, "ratios": ratios, "ratio": statistics.median(ratios),
            "choices": sorted(choices)}


def _kernel_caches() -> dict[int, tuple[dict[str, Any], dict[str, Any]]]:
    """Every JIT function's in-memory kernel cache and a copy of what it holds now, by the cache's id."""
    return {id(cache): (cache, dict(cache)) for cache in jit_kernel_caches()}


def _install(state: dict[int, tuple[dict[str, Any], dict[str, Any]]]) -> None:
    for cache, held in state.values():
        if cache != held:
            cache.clear()
            cache.update(held)


def median_halfwidth(ratios: list[float]) -> float:
    """Half-width of an approximate 95% interval of the median of ``ratios``: 1.96 standard errors,
    the median's being 1.2533 sigma / sqrt(n) with sigma estimated from the interquartile range
    (robust to the launch path's occasional 1.6x readings, which would inflate a standard deviation)."""
    if len(ratios) < 4:
        return math.inf
    q1, _, q3 = statistics.quantiles(ratios, n=4)
    return 1.96 * 1.2533 * ((q3 - q1) / 1.349) / math.sqrt(len(ratios))


def _interleaved(go: Callable[[], Any], candidates: list[str], read: Callable[[], float], pairs: int,
                 max_pairs: int | None = None, halfwidth: float = B2B_HALFWIDTH) -> dict[str, Any]:
    """``pairs`` pairs of readings, stock then mode, then mode then stock, and so on, inside one
    activation of the mode; ratio = stock / mode per pair; then ``pairs`` more at a time, up to
    ``max_pairs``, while the median ratio is known to no better than +-``halfwidth``
    (:func:`median_halfwidth`): on the H200 host the pairs of a launch-bound kernel spread so that
    100 left the median +-1.5% wide, and one stock-binary kernel read 0.980x (c9a7c42).

    Each state is what one launch leaves in the JITs' caches: stock, after emptying them as an
    activation does; the mode's, after its launch in the activation (its decision, from disk).
    Before each reading its state's caches are put back, so the reading launches exactly that
    state's kernels through Triton's fast path."""
    import torch

    if pairs < 1:
        raise ValueError(f"pairs must be at least 1, got {pairs}")
    forget_compiled_kernels()
    go()
    torch.cuda.synchronize()
    stock_state = _kernel_caches()
    with triton_ext.auto_mode(*candidates) as mode:
        go()
        torch.cuda.synchronize()
        _settle(mode)  # a decision made again here may leave a compile holding the stages hook
        auto_state = _kernel_caches()
        for key, (cache, _) in auto_state.items():  # a JIT function first seen in the mode's launch
            stock_state.setdefault(key, (cache, {}))
        for key, (cache, _) in stock_state.items():
            auto_state.setdefault(key, (cache, {}))
        # The mode's launch keys as stock's does: every key of the stock state is in the mode's
        # (which also holds its variants' compiles, under keys of their own that no launch computes).
        stock_keys_kept = all(stock_state[k][1].keys() <= auto_state[k][1].keys() for k in stock_state)
        decided = len(mode.decisions)
        stock: list[float] = []
        auto: list[float] = []
        ratios: list[float] = []
        limit = max(pairs, max_pairs or pairs)
        while not ratios or (len(ratios) < limit and median_halfwidth(ratios) > halfwidth):
            for _ in range(pairs):  # a block
                pair: dict[str, float] = {}
                for which in ("stock", "auto") if len(ratios) % 2 == 0 else ("auto", "stock"):
                    _install(stock_state if which == "stock" else auto_state)
                    pair[which] = read()
                stock.append(pair["stock"])
                auto.append(pair["auto"])
                ratios.append(pair["stock"] / pair["auto"])
        _install(auto_state)
        misses = len(mode.decisions) - decided  # a launch of the pairs that was not a cache hit
    return {"stock": stock, "auto": auto, "ratios": ratios, "ratio": statistics.median(ratios),
            "stock_keys_kept": stock_keys_kept, "misses": misses, "choices": sorted({d.choice for d in mode.decisions})}


def _settle(mode: Any) -> float:
    """Seconds spent waiting for the compiles ``mode``'s decisions left running in the background."""
    start = time.perf_counter()
    futures.wait(mode.pending)
    return time.perf_counter() - start


def measure(name: str, build: Callable[[], Any], candidates: list[str], seed: int) -> dict[str, Any]:
    torch.manual_seed(seed)
    go, outputs, atol, rtol = build()
    start = time.perf_counter()
    go()
    torch.cuda.synchronize()
    stock_first_s = time.perf_counter() - start
    stock_out = {k: v.clone() for k, v in outputs.items()}
    stock_ms = [triton.testing.do_bench(go)]

    with triton_ext.auto_mode(*candidates) as auto:
        torch.manual_seed(seed)
        go, outputs, atol, rtol = build()
        start = time.perf_counter()
        go()
        torch.cuda.synchronize()
        first_launch_s = time.perf_counter() - start
        identical = all(torch.equal(outputs[k], stock_out[k]) for k in outputs)
        worst = max(check_gpu.max_violation(outputs[k], stock_out[k].double(), atol, rtol) for k in outputs)
        auto_ms = [triton.testing.do_bench(go)]
        decision = auto.decisions[-1] if auto.decisions else None
        # Compiles the budget left running (variants, or a late combination) fill Triton's disk
        # cache in the background and lend the stages hook meanwhile, so every launch keys through
        # it: an activation started before they end gets the stock kernel for all its launches.
        # The rounds below time the steady state, after them (c9a7c42 timed SGLang's extend
        # attention and vLLM's prefix-prefill stock so, H200); the wait is reported.
        background_s = _settle(auto)
    stock_kernel = _launched(go)
    with triton_ext.auto_mode(*candidates) as again:
        auto_kernel = _launched(go)
        background_s += _settle(again)  # this decision may leave a late combination compiling too
    # A first launch over its budget records no decision, so this activation decides again (with
    # Triton's cache now warm, usually within budget) and the rounds below time *its* choice.
    timed_choice = again.decisions[-1].choice if again.decisions else (decision.choice if decision else None)
    # What that activation did (a decision again, or the follow-up of a late combination: whether
    # the combination lost to the winner or was still compiling shows only here).
    follow_up = ({**again.decisions[-1].record(), "late_combination": again.decisions[-1].late_combination,
                  "error": again.decisions[-1].error, "from_disk": again.decisions[-1].from_disk}
                 if again.decisions else None)
    # Paired rounds in ABBA order (stock, mode, mode, stock, ...): a drift of the host's clock or of
    # the GPU's between readings cancels in each round's ratio; the speedup is the median ratio.
    gpu = _paired(candidates, lambda: triton.testing.do_bench(go), GPU_ROUNDS)
    # Back to back, as applications launch (CPU launch path included, no flush; issue 27.3).
    calls = max(5, min(B2B_CALLS, int(B2B_READING_MS / max(statistics.median(gpu["stock"]), 1e-3))))
    b2b = _interleaved(go, candidates, lambda: back_to_back_ms(go, calls) * 1e3, B2B_PAIRS, B2B_MAX_PAIRS)
    stock_ms.extend(gpu["stock"])
    auto_ms.extend(gpu["auto"])
    s, a = statistics.median(stock_ms), statistics.median(auto_ms)
    bs, ba = statistics.median(b2b["stock"]), statistics.median(b2b["auto"])
    return {"kernel": name, "stock_ms": s, "auto_ms": a, "speedup": gpu["ratio"], "speedup_rounds": gpu["ratios"],
            "b2b_stock_us": bs, "b2b_auto_us": ba, "b2b_speedup": b2b["ratio"], "b2b_rounds": b2b["ratios"],
            "b2b_stock_keys_kept": b2b["stock_keys_kept"], "b2b_misses": b2b["misses"],
            "same_binary": stock_kernel is not None and stock_kernel == auto_kernel, "stock_first_s": stock_first_s,
            "background_s": background_s,
            "decision_error": decision.error if decision else None,
            "same_as_stock": decision.same_as_stock if decision else [],
            "failed_variants": decision.failed if decision else {},
            "changed_outputs": decision.changed_outputs if decision else {},
            "confirm_ms": decision.confirm_ms if decision else {},
            "back_to_back_ms": decision.back_to_back_ms if decision else {},
            "late_combination": decision.late_combination if decision else None, "follow_up": follow_up,
            "compile_s": decision.compile_s if decision else None,
            "phases_s": decision.phases_s if decision else None,
            "spread": max((max(v) - min(v)) / statistics.median(v) for v in (stock_ms, auto_ms)),
            "choice": decision.choice if decision else None, "timed_choice": timed_choice,
            "round_choices": sorted(set(gpu["choices"]) | set(b2b["choices"])),
            "applicable": decision.applicable if decision else [],
            "variant_ms": decision.timings_ms if decision else {}, "refused": decision.refused if decision else None,
            "first_launch_s": first_launch_s, "outputs_identical": identical, "outputs_within_tolerance": worst <= 0}


def cases(only: list[str] | None, which: str = "corpus") -> dict[str, Callable[[], Any]]:
    out: dict[str, Callable[[], Any]] = {}
    if which in ("corpus", "all", "all+holdout"):
        out.update({name: corpus_case(name) for name in check_gpu.BUILDERS})
        out["grid_swizzle_naive_gemm_4096"] = gemm_case(4096)
        out["grid_swizzle_naive_gemm_8192"] = gemm_case(8192)
    if which in ("realworld", "more", "all", "all+holdout"):
        from tests.realworld.more_kernels import MORE
        from tests.realworld.realworld_kernels import REALWORLD

        # MORE holds the launcher-only kernels that REALWORLD (the CPU corpus) leaves out.
        for kernel in MORE if which == "more" else REALWORLD + MORE:
            out.setdefault(kernel.name, realworld_case(kernel))
    if which in ("holdout", "all+holdout"):
        from tests.realworld.holdout_kernels import HOLDOUT

        out.update({kernel.name: realworld_case(kernel) for kernel in HOLDOUT})
    # --kernels' order is the run order: a kernel decided first decides a specialization it shares.
    return {k: out[k] for k in only if k in out} if only else out


def first_launch_over_stock(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Each kernel's first launch under the mode less its own stock cold launch (what issue 27's
    first-launch targets bound): median, max and the kernel of the max. Result files of c9a7c42 and
    earlier hold the raw first launches (``first_launch_s``'s numbers) under this name."""
    over = {r["kernel"]: r["first_launch_s"] - r["stock_first_s"] for r in rows}
    return {"median": statistics.median(over.values()) if over else None,
            "max": max(over.values(), default=None),
            "max_kernel": max(over, key=over.__getitem__) if over else None,
            "stock_cold_median": statistics.median([r["stock_first_s"] for r in rows]) if rows else None}


def first_launch_parts(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Where the mode's first launches went: the median over ``rows`` of the variants' compile and
    of each later step (``Decision.phases_s``; a step a decision did not reach counts as 0 s)."""
    steps = sorted({step for r in rows for step in (r.get("phases_s") or {})})
    parts = {"compile": [r.get("compile_s") or 0.0 for r in rows]}
    parts.update({step: [(r.get("phases_s") or {}).get(step, 0.0) for r in rows] for step in steps})
    return {step: statistics.median(values) for step, values in parts.items() if values}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="auto-mode-h200.json")
    parser.add_argument("--candidates", default="grid_swizzle,loop_split")
    parser.add_argument("--kernels", nargs="*")
    parser.add_argument("--half", type=int, choices=(0, 1), help="every other kernel, from the first (0) or second (1)")
    parser.add_argument("--shard", help="K/N: every N-th kernel from the K-th (0-based), to split a run")
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--set", dest="which", choices=("corpus", "realworld", "more", "all", "holdout", "all+holdout"),
                        default="corpus", help="which kernels: tests/corpus (default), tests/realworld, its "
                        "more_kernels.py, all of these, the hold-out set (tests/realworld/holdout_kernels.py) or all and it")
    parser.add_argument("--child", action="store_true", help="(internal) the second process")
    args = parser.parse_args()
    if args.half is not None and not args.kernels:
        args.kernels = list(cases(None, args.which))[args.half::2]
    if args.shard and not args.kernels:
        k, n = (int(x) for x in args.shard.split("/"))
        args.kernels = list(cases(None, args.which))[k::n]
    candidates = [c for c in args.candidates.split(",") if c]
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    if args.child:
        with triton_ext.auto_mode(*candidates) as auto:
            for name, build in cases(args.kernels, args.which).items():
                torch.manual_seed(args.seed)
                go, *_ = build()
                go()
            torch.cuda.synchronize()
        print(json.dumps([{"kernel": d.kernel, "choice": d.choice, "from_disk": d.from_disk, "refused": d.refused}
                          for d in auto.decisions]))
        return 0
    os.environ["TRITON_EXT_AUTO_DIR"] = tempfile.mkdtemp(prefix="triton-ext-auto-")
    rows = []
    for name, build in cases(args.kernels, args.which).items():
        try:
            rows.append(measure(name, build, candidates, args.seed))
        except Exception as exc:  # report and go on
            rows.append({"kernel": name, "error": f"{type(exc).__name__}: {exc}"})
        r = rows[-1]
        print(f"{name:32} " + (f"{r['speedup']:.3f}x choice={r['choice']!r} timed={r['timed_choice']!r} first launch {r['first_launch_s']:.2f}s "
                               f"b2b {r['b2b_speedup']:.3f}x identical={r['outputs_identical']}" if "error" not in r else r["error"]), flush=True)
    proc = subprocess.run([sys.executable, "-m", "benchmarks.auto_mode_gpu", "--child", "--candidates",
                           args.candidates, "--seed", str(args.seed), "--set", args.which]
                          + (["--kernels", *args.kernels] if args.kernels else []),
                          capture_output=True, text=True, timeout=300, env=os.environ, cwd=REPO)
    second = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else []
    good = [r for r in rows if "error" not in r]
    speedups = [r["speedup"] for r in good]
    geomean = math.exp(sum(math.log(x) for x in speedups) / len(speedups)) if speedups else None
    b2b = [r["b2b_speedup"] for r in good]
    b2b_geomean = math.exp(sum(math.log(x) for x in b2b) / len(b2b)) if b2b else None
    tuned = [d for d in second if not d["refused"]]
    same = [r for r in good if r.get("same_binary")]
    changed = [r for r in good if not r.get("same_binary")]
    report = {
        "commit": checkout_commit(), "date": time.strftime("%Y-%m-%d"),
        "rounds": {"gpu": GPU_ROUNDS, "b2b_pairs": B2B_PAIRS, "b2b_reading_ms": B2B_READING_MS},
        # Where the mode runs the stock binary its launches are Triton's own: the spread of those
        # ratios is the harness's noise floor, not a cost of the mode.
        "noise_floor": {"kernels": len(same), **{key: [min((r[key] for r in same), default=None),
                                                      max((r[key] for r in same), default=None)]
                                                for key in ("speedup", "b2b_speedup")}},
        "changed_binary": [{k: r[k] for k in ("kernel", "choice", "timed_choice", "speedup", "b2b_speedup")}
                           for r in changed],
        "gpu": torch.cuda.get_device_name(), "triton": triton.__version__, "candidates": candidates,
        # The mode's launch-option variants and budget, as set for this run (unset: the defaults).
        "environment": {k: os.environ.get(k) for k in ("TRITON_EXT_AUTO_WARPS", "TRITON_EXT_AUTO_STAGES",
                                                       "TRITON_EXT_AUTO_BUDGET_S")},
        "rows": rows,
        "geomean_speedup": geomean, "worst": min(good, key=lambda r: r["speedup"]) if good else None,
        "b2b_geomean_speedup": b2b_geomean,
        "b2b_worst": min(good, key=lambda r: r["b2b_speedup"]) if good else None,
        "first_launch_over_stock_s": first_launch_over_stock(good),
        "first_launch_parts_s": first_launch_parts(good),
        "all_outputs_within_tolerance": all(r["outputs_within_tolerance"] for r in good),
        "errors": [r for r in rows if "error" in r],
        "second_process": second, "second_process_all_from_disk": bool(tuned) and all(d["from_disk"] for d in tuned),
        "second_process_stderr": proc.stderr[-2000:] if proc.returncode else "",
        "first_launch_s": {"median": statistics.median([r["first_launch_s"] for r in good]) if good else None,
                           "max": max([r["first_launch_s"] for r in good], default=None)},
    }
    Path(args.out).write_text(json.dumps(report, indent=2, default=str))
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], Path(args.out).name).write_text(json.dumps(report, indent=2, default=str))
    print(f"noise floor (stock binary kept): {report['noise_floor']}; changed binary: {report['changed_binary']}")
    print(f"first launch over stock: {report['first_launch_over_stock_s']}")
    print(f"first launch, median seconds per part: {report['first_launch_parts_s']}")
    print(f"back to back: geomean {b2b_geomean}, worst {report['b2b_worst'] and report['b2b_worst']['kernel']} "
          f"{report['b2b_worst'] and report['b2b_worst']['b2b_speedup']:.3f}x")
    print(f"geomean {geomean}, worst {report['worst'] and report['worst']['kernel']} "
          f"{report['worst'] and report['worst']['speedup']:.3f}x, outputs ok {report['all_outputs_within_tolerance']}, "
          f"second process from disk {report['second_process_all_from_disk']}; wrote {args.out}")
    return 0 if report["all_outputs_within_tolerance"] and not report["errors"] else 1


if __name__ == "__main__":
    sys.exit(main())
