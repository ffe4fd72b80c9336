"""Pass selection on the GPU (issue 19, "Done when"): no pass, each pass, pairs, the transparent
mode's choice and pass-aware autotuning, per kernel of the real-kernel corpus and the bench kernels.

    TRITON_EXT_BUILD_DIR=$PWD/build python -m benchmarks.pass_selection_gpu --set realworld \
        --out benchmarks/results/pass-selection-realworld-h200.json
    TRITON_EXT_BUILD_DIR=$PWD/build python -m benchmarks.pass_selection_gpu --set bench \
        --out benchmarks/results/pass-selection-bench-h200.json

``--shard 0/2`` and ``--shard 1/2`` split a set into two runs of under 4 minutes each on an H200;
``--merge A.json B.json --out X.json`` joins their reports (CPU only). ``--budget`` (280 s) bounds a
run: kernels not timed by then are reported as such and the report is still written.

Items: ``--set realworld`` is tests/realworld (35 kernels of liger-kernel, fla-core, torchao,
launched as their packages' launchers do, inputs from ``realworld_kernels.py``; checks reuse
``tests/realworld/check_gpu.py``); ``--set bench`` is every baseline kernel of the bench specs
(grid_swizzle, loop_split, sanitizers, nvidia_occupancy_hint, nvidia_stream_eviction) at their
quick shapes. Candidates: every built performance pass for
the GPU (loop_split, grid_swizzle, nvidia_auto_pdl, nvidia_occupancy_hint,
nvidia_stream_eviction; never the sanitizers).

1. *Compile and check* (one child process per item, ``--jobs`` at once, one shared cold Triton
   cache): launch with no pass (twice: a kernel that does not repeat its own output cannot be
   checked), then each candidate alone (with the cache cold: their summed wall time is what the
   transparent mode's first launch spends compiling) and each pair of firing candidates: a
   variant *fires* when its PTX (locations stripped) differs from the stock kernel's, and a
   firing variant's every tensor argument must equal the no-pass output (bitwise, or within the
   dtype's tolerance for kernels marked nondeterministic).
2. *Time* (one process, nothing else on the GPU; kernels come from the warm cache), per item:
   the transparent mode (``triton_ext.auto_mode``, empty decision folder) makes its decision on the
   first launch (*warm first-launch cost*), and its outputs are compared with no pass's;
   ``triton_ext.autotune`` over ``triton_ext.Config``s that differ only in passes (no pass, each
   firing pass, each firing pair; the launcher's ``num_warps``/``num_stages``) tunes on a scratch
   copy, then its launch on fresh inputs is compared with no pass's. Then every variant (no pass,
   each firing pass and pair, ``auto`` launched through the mode with the recorded choice,
   ``autotuned`` launched through the autotuner) is launched once to record the digest of the
   cubin it runs, then timed in ``--rounds`` interleaved rounds
   (:func:`triton_ext.testing.interleaved_rounds`: each round reads every variant in order and
   then in reverse order and takes the mean of its two readings, which cancels a linear drift
   and the alternation seen between consecutive readings on the H200) by
   ``triton_ext.testing.gpu_time_ms`` (the kernel's median GPU time over >= 1 ms of its runs, an
   L2 flush before each call through one buffer per kernel, every call queued behind a GPU
   sleep checked to outlast the CPU's queueing, so the CPU's launch cost stays out: with
   ``do_bench`` a 10 us kernel launched through a longer Python path measured up to 2.5x slower
   on the H200, the GPU waiting for the CPU).

Verdicts per item (:func:`verdicts`, :func:`summarize`): every ratio is per round, summarized alike for every
variant: ``x`` = median over rounds of no pass / variant, spread = ``(max - min) / median`` of
those ratios. ``auto_ok``: x >= 0.99, or auto launched the no-pass kernel's very cubin (then x
compares a kernel with itself: noise, reported but not a verdict). ``autotuned_ok``: median over
rounds of reference / autotuned >= 1 - its spread, reference = the better of no pass and the
best single pass (or the same cubin), or >= 1 - the run-to-run spread (:func:`run_to_run_spread`).
Summary: geometric mean and worst auto speedup, kernels at >= 1.03x (autotuned and auto, third
party only for ``realworld``), outputs, first-launch costs. Writes the JSON and a markdown table
beside it (``.md``). Exits 1 when an output changed or a child failed; the speed targets are
reported (``targets``), not enforced.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import datetime
import itertools
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from tests.realworld import check_gpu  # sets the environment the corpus check uses, and its helpers
from triton_ext.testing import ratios, spread

REPO = Path(__file__).resolve().parents[1]
PERFORMANCE_PASSES = ("loop_split", "grid_swizzle", "nvidia_auto_pdl", "nvidia_occupancy_hint", "nvidia_stream_eviction")
# Every bench spec's baseline kernels but nvidia_auto_pdl's: that bench replays a CUDA graph it
# caches per enabled pass set, so a launch under the transparent mode would replay the no-pass graph.
BENCH_SPECS = ("grid_swizzle", "loop_split", "sanitizers", "nvidia_occupancy_hint", "nvidia_stream_eviction")
OPTION_KEYS = ("num_warps", "num_stages", "num_ctas", "maxnreg")
#: The transparent mode's floor (issue 19: "no kernel below 0.99x").
AUTO_FLOOR = 0.99


@dataclass
class Item:
    name: str
    package: str  # PyPI distribution, or "bench:<spec>"
    third_party: bool
    fn: Any  # the JITFunction
    nondeterministic: bool  # outputs compared within the dtype's tolerance instead of bitwise
    num_warps: int
    num_stages: int
    fresh: Callable[[], dict[str, Any]]  # new inputs, the same values every call
    call: Callable[[Any, dict[str, Any], bool], Any]  # (kernel or autotuner, inputs, pass launch options?)


class _WithoutOptions:
    """``kernel[grid](..., num_warps=...)`` for an autotuner, whose configs carry the options."""

    def __init__(self, tuned: Any) -> None:
        self.tuned = tuned

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        run = self.tuned[grid]
        return lambda *a, **kw: run(*a, **{k: v for k, v in kw.items() if k not in OPTION_KEYS})


def realworld_items(seed: int) -> dict[str, Callable[[], Item]]:
    from tests.realworld.realworld_kernels import REALWORLD, Tensors

    def make(kernel: Any) -> Callable[[], Item]:
        def build() -> Item:
            launch = kernel.build(Tensors("cuda", seed))
            master = launch.args

            def call(k: Any, inputs: dict[str, Any], options: bool = True) -> Any:
                extra = {"num_warps": launch.num_warps, "num_stages": launch.num_stages} if options else {}
                return k[launch.grid](**inputs, **extra)
            return Item(kernel.name, kernel.package, True, kernel.fn(), kernel.nondeterministic, launch.num_warps,
                        launch.num_stages, lambda: check_gpu._clone(master), call)
        return build
    return {k.name: make(k) for k in REALWORLD}


def bench_items(seed: int) -> dict[str, Callable[[], Item]]:
    import torch

    from triton_ext.bench import find_specs

    out: dict[str, Callable[[], Item]] = {}
    for spec in find_specs(list(BENCH_SPECS)):
        for case in spec.cases(quick=True):
            for base in (v for v in spec.variants if v.role == "baseline"):
                name = f"{spec.name}.{base.name}." + ".".join(f"{k}{v}" for k, v in case.params.items()) + f".{case.dtype}"

                def build(spec: Any = spec, case: Any = case, base: Any = base, name: str = name) -> Item:
                    gen = torch.Generator(device="cuda")
                    gen.manual_seed(seed)
                    master = spec.make_inputs(case, "cuda", gen)
                    opts = spec.compile_options(case)

                    def call(k: Any, inputs: dict[str, Any], options: bool = True) -> Any:
                        return spec.launch(k if options else _WithoutOptions(k), inputs, case)
                    # Compared within the dtype's tolerance, not bitwise: a bench spec's own check is
                    # "within tolerance of a float64 reference", and loop_split legitimately changes
                    # rounding once a select is gone (Triton then contracts `qk * scale - m` into an
                    # FMA): on the H200 its attention outputs differ from no pass by one fp16 ulp
                    # while equal bitwise to the hand-split kernel's (passes/LoopSplit/results).
                    return Item(name, f"bench:{spec.name}", False, base.kernel, True, opts.get("num_warps", 4),
                                opts.get("num_stages", 3), lambda: check_gpu._clone(master), call)
                out[name] = build
    return out


def items_of(which: str, seed: int) -> dict[str, Callable[[], Item]]:
    return realworld_items(seed) if which == "realworld" else bench_items(seed)


def candidates() -> list[str]:
    import triton_ext

    manifest = triton_ext.manifest()
    out = []
    for name in PERFORMANCE_PASSES:
        try:
            spec = manifest.find_pass(name)
        except Exception:  # noqa: BLE001  (not in this registry)
            continue
        ext = manifest.extension_of(spec)
        if ext.applies_to("cuda", 90) and ext.library_path().exists():
            out.append(name)
    return out


def _ptx(kernel: Any) -> str:
    """The kernel's PTX without locations and comments (what auto mode and ``triton-ext tune`` compare)."""
    text = kernel.asm.get("ptx", "")
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith((".loc", ".file", "//")))


def _install_hook() -> None:
    """Install triton_ext's stages hook, as auto mode does at import (an empty ``enabled`` block)."""
    import triton_ext

    with triton_ext.enabled():
        pass


def _compare(item: Item, base: dict[str, Any], got: dict[str, Any]) -> dict[str, str]:
    """Argument -> why it differs from the no-pass output (empty: unchanged)."""
    import torch

    out = {}
    for arg, value in got.items():
        if isinstance(value, torch.Tensor):
            ok, detail = check_gpu._same(base[arg], value, item.nondeterministic)
            if not ok:
                out[arg] = detail
    return out


# -- 1. compile and check (a child per item) --------------------------------------------------------


def child(which: str, name: str, seed: int, cands: list[str]) -> dict[str, Any]:
    import torch

    import triton_ext

    _install_hook()  # as auto mode does at import: the stock compile below is the one it reuses
    item = items_of(which, seed)[name]()
    rec: dict[str, Any] = {"kernel": name, "package": item.package, "third_party": item.third_party,
                           "num_warps": item.num_warps, "num_stages": item.num_stages, "variants": {}}
    t0 = time.perf_counter()
    base = item.fresh()
    stock = item.call(item.fn, base)
    torch.cuda.synchronize()
    rec["stock_first_launch_s"] = round(time.perf_counter() - t0, 3)
    base_ptx = _ptx(stock)
    again = item.fresh()
    item.call(item.fn, again)
    torch.cuda.synchronize()
    unrepeatable = _compare(item, base, again)
    rec["baseline_repeatable"] = not unrepeatable
    if unrepeatable:
        rec["baseline_differences"] = unrepeatable

    ptx: dict[str, str] = {}

    def variant(names: tuple[str, ...]) -> None:
        label = "+".join(names)
        v: dict[str, Any] = {}
        rec["variants"][label] = v
        try:
            x = item.fresh()
            t0 = time.perf_counter()
            with triton_ext.enabled(*names):
                k = item.call(item.fn, x)
            torch.cuda.synchronize()
            v["first_launch_s"] = round(time.perf_counter() - t0, 3)
            ptx[label] = _ptx(k)
            v["fires"] = ptx[label] != base_ptx
            if len(names) > 1:
                v["same_ptx_as"] = [n for n in names if ptx.get(n) == ptx[label]]
            if v["fires"]:
                mismatches = _compare(item, base, x)
                v["outputs_unchanged"] = not mismatches
                if mismatches:
                    v["mismatches"] = mismatches
        except Exception as exc:  # noqa: BLE001  (recorded; the parent reports it)
            v["error"] = f"{type(exc).__name__}: {' '.join(str(exc).split())[:600]}"
            v["traceback"] = traceback.format_exc()[-1500:]

    for p in cands:
        variant((p,))
    # The transparent mode's first launch with a cold cache compiles every candidate (what the
    # launches above did, one each) and then times those that fire (measured warm, in the timing
    # process: timing here would share the GPU with the other children).
    rec["candidates_compile_s"] = round(sum(rec["variants"][p].get("first_launch_s", 0.0) for p in cands), 3)
    firing = [p for p in cands if rec["variants"][p].get("fires")]
    for a, b in itertools.combinations(sorted(firing), 2):  # sorted as auto mode names a pair
        variant((a, b))
    return rec


# -- 2. timing (one process) ------------------------------------------------------------------------

#: GPU time per reading; every round reads each variant twice (in order, then in reverse order).
REP_MS = 12.5


def alternation(readings: list[tuple[str, float]]) -> float | None:
    """How much readings at odd positions of the sequence exceed those at even positions (mean of
    each label's relative difference; 0: no alternation between consecutive readings)."""
    by_label: dict[str, tuple[list[float], list[float]]] = {}
    for i, (label, value) in enumerate(readings):
        by_label.setdefault(label, ([], []))[i % 2].append(value)
    diffs = [(statistics.mean(odd) - statistics.mean(even)) / statistics.mean(even)
             for even, odd in by_label.values() if even and odd]
    return round(statistics.mean(diffs), 5) if diffs else None


def _cubin_digest(kernel: Any) -> str | None:
    """The digest of the cubin a launch ran (None when the launcher does not return the kernel)."""
    import hashlib

    cubin = getattr(kernel, "asm", {}).get("cubin") if kernel is not None else None
    return hashlib.sha256(cubin).hexdigest()[:16] if isinstance(cubin, bytes) else None


def time_items(which: str, plan: dict[str, list[str]], seed: int, rounds: int, cands: list[str],
               out: Path, deadline: float) -> None:
    import torch

    import triton_ext
    from triton_ext.testing import flush_buffer, gpu_time_ms, interleaved_rounds, launch_cost_us

    _install_hook()
    builders = items_of(which, seed)
    results: dict[str, Any] = {}
    for name, variants in plan.items():
        rec: dict[str, Any] = {}
        results[name] = rec
        if time.time() > deadline:  # leave the parent time to write the report
            rec["not_timed"] = "over the time budget (--budget)"
            continue
        try:
            item = builders[name]()
            stock_out = item.fresh()
            item.call(item.fn, stock_out)
            torch.cuda.synchronize()

            os.environ["TRITON_EXT_AUTO_DIR"] = tempfile.mkdtemp(prefix="auto-warm-")
            with triton_ext.auto_mode(*cands) as auto:
                x = item.fresh()
                t0 = time.perf_counter()
                item.call(item.fn, x)
                torch.cuda.synchronize()
                rec["auto_first_launch_s"] = round(time.perf_counter() - t0, 3)
                d = auto.decisions[-1]
                rec["auto"] = {"choice": d.choice, "applicable": d.applicable, "refused": d.refused,
                               "timings_ms": d.timings_ms, "confirm_ms": d.confirm_ms, "spreads": d.spreads,
                               "error": d.error}
            rec["auto_mismatches"] = _compare(item, stock_out, x)
            del x

            sets = [()] + [tuple(v.split("+")) for v in variants]
            configs = [triton_ext.Config({}, passes=list(s), num_warps=item.num_warps, num_stages=item.num_stages)
                       for s in sets]
            tuned = triton_ext.autotune(configs=configs, key=[], cache_results=False)(item.fn)
            scratch = item.fresh()
            t0 = time.perf_counter()
            item.call(tuned, scratch, False)
            torch.cuda.synchronize()
            rec["autotune_s"] = round(time.perf_counter() - t0, 3)
            del scratch
            best = triton_ext.passes_of(tuned.best_config) or {}

            def label_of(config: Any) -> str:
                return "+".join(sets_order(triton_ext.passes_of(config) or {}, sets)) or "none"

            tuning = tuned.tunings[-1]
            rec["autotune_decision"] = {
                "first_ms": {label_of(c): [round(x, 5) for x in v] for c, v in tuning.first.items()},
                "candidate": label_of(tuning.candidate) if tuning.candidate is not None else None,
                "baseline": label_of(tuning.baseline) if tuning.baseline is not None else None,
                "confirm_ms": {label_of(c): [round(x, 5) for x in v] for c, v in tuning.confirm.items()},
                "failed": [label_of(c) for c in tuning.failed]}
            rec["autotuned"] = {"choice": "+".join(p for p in sets_order(best, sets)),
                                "timings_ms": {"+".join(s) or "none": round(float(t[0] if isinstance(t, (list, tuple)) else t), 5)
                                               for s, t in zip(sets, [tuned.configs_timings.get(c) for c in configs])
                                               if t is not None} if getattr(tuned, "configs_timings", None) else {}}
            x = item.fresh()
            item.call(tuned, x, False)
            torch.cuda.synchronize()
            rec["autotuned_mismatches"] = _compare(item, stock_out, x)
            del x, stock_out

            inputs = item.fresh()

            def launcher(label: str) -> Callable[[], Any]:
                """One launch of ``label``'s variant (to be called inside :func:`scope`)."""
                if label == "autotuned":
                    return lambda: item.call(tuned, inputs, False)
                return lambda: item.call(item.fn, inputs)

            @contextlib.contextmanager
            def scope(label: str) -> Iterator[None]:
                if label == "auto":
                    with triton_ext.auto_mode(*cands) as again:  # a new mode object: the choice comes from disk
                        yield
                    reused.append(bool(again.decisions) and all(
                        d.refused or (d.from_disk and d.choice == rec["auto"]["choice"]) for d in again.decisions))
                elif label in ("none", "autotuned"):
                    yield
                else:
                    with triton_ext.enabled(*label.split("+")):
                        yield

            reused: list[bool] = []
            labels = ["none", *variants, "auto", "autotuned"]
            # The kernel each label launches (its cubin's digest): auto or autotuned keeping no
            # pass launch the very kernel "none" launches, and their ratio is then noise.
            rec["cubin"] = {}
            for label in labels:
                with scope(label):
                    rec["cubin"][label] = _cubin_digest(launcher(label)())
            torch.cuda.synchronize()
            flush = flush_buffer()  # one L2-flush buffer for every reading of this kernel

            rec["queueing"] = queueing = {}  # gpu_time_ms's check that its sleep outlasted the CPU

            def time_one(label: str) -> float:
                with scope(label):
                    return gpu_time_ms(launcher(label), rep_ms=REP_MS, flush=flush,
                                       stats=queueing.setdefault(label, {}))

            raw: list[tuple[str, float]] = []
            ms = interleaved_rounds(labels, time_one, rounds, readings=raw)
            rec["alternation"] = alternation(raw)
            del flush
            # What each path costs the CPU per launch (kept out of the GPU times above).
            rec["launch_us"] = {}
            for label in ("none", "auto", "autotuned"):
                with scope(label):
                    rec["launch_us"][label] = round(launch_cost_us(launcher(label)), 2)
            rec["ms"] = {k: [round(x, 5) for x in v] for k, v in ms.items()}
            rec["auto_choice_reused_from_disk"] = all(reused)
            del inputs, tuned
        except Exception as exc:  # noqa: BLE001
            rec["timing_error"] = f"{type(exc).__name__}: {' '.join(str(exc).split())[:600]}"
            rec["traceback"] = traceback.format_exc()[-1500:]
        torch.cuda.empty_cache()
        out.write_text(json.dumps(results), encoding="utf-8")


def sets_order(best: dict[str, Any], sets: list[tuple[str, ...]]) -> tuple[str, ...]:
    """The tuple among ``sets`` naming exactly the passes of ``best``."""
    for s in sets:
        if set(s) == set(best):
            return s
    return tuple(sorted(best))


# -- verdicts and reports -------------------------------------------------------------------------


def verdicts(rec: dict[str, Any]) -> None:
    """Add speedups and verdicts to an item's record (in place).

    Every ratio is taken per round (the rounds interleave the variants) and summarized the same
    way for every variant: ``x`` = median over rounds of no pass's time / the variant's, its
    spread ``(max - min) / median`` of those per-round ratios."""
    if "candidates_compile_s" in rec and "auto_first_launch_s" in rec:
        rec["auto_cold_first_launch_s"] = round(rec["candidates_compile_s"] + rec["auto_first_launch_s"], 3)
    ms = rec.get("ms")
    if not ms:
        return
    per_round = {k: ratios(ms["none"], v) for k, v in ms.items()}
    x = {k: statistics.median(r) for k, r in per_round.items()}
    rec["median_ms"] = {k: round(statistics.median(v), 5) for k, v in ms.items()}
    rec["time_spread"] = {k: round(spread(v), 4) for k, v in ms.items()}  # of each variant's own times
    rec["spread"] = {k: round(spread(r), 4) for k, r in per_round.items()}  # of its ratios to no pass
    rec["speedup"] = {k: round(v, 4) for k, v in x.items()}
    singles = [k for k in ms if k not in ("none", "auto", "autotuned") and "+" not in k]
    best_single = max(singles, key=x.get) if singles else None
    ref = "none" if best_single is None or x[best_single] <= 1 else best_single
    rec["best_single"] = best_single
    rec["reference"] = ref  # the better of no pass and the best single pass
    cubin = rec.get("cubin") or {}
    vs_ref = ratios(ms[ref], ms["autotuned"])
    rec["autotuned_vs_reference"] = round(statistics.median(vs_ref), 4)
    rec["autotuned_vs_reference_spread"] = round(spread(vs_ref), 4)
    rec["autotuned_same_cubin_as_reference"] = bool(cubin.get("autotuned")) and cubin.get("autotuned") == cubin.get(ref)
    # Within the rounds' spread: no slower than the reference by more than the spread of their
    # per-round ratios (the final verdict, with the run-to-run spread, is set by summarize()).
    rec["autotuned_ok_rounds"] = (statistics.median(vs_ref) >= 1 - spread(vs_ref)
                                  or rec["autotuned_same_cubin_as_reference"])
    rec["autotuned_ok"] = rec["autotuned_ok_rounds"]
    # Run to run: the same ratio (no pass / config) measured in two independent sessions of this
    # run, the autotuner's rounds (on a copy of the inputs) and the rounds above.
    first = (rec.get("autotune_decision") or {}).get("first_ms") or {}
    rec["run_to_run"] = {c: round(abs(math.log(statistics.median(ratios(first["none"], first[c]))
                                                / statistics.median(per_round[c]))), 5)
                         for c in first if c != "none" and c in per_round and "none" in first}
    rec["auto_speedup"] = rec["speedup"]["auto"]
    rec["autotuned_speedup"] = rec["speedup"]["autotuned"]
    # auto keeping no pass launches the stock kernel itself: its ratio compares a kernel with itself.
    rec["auto_same_cubin_as_none"] = bool(cubin.get("auto")) and cubin.get("auto") == cubin.get("none")
    rec["auto_ok"] = rec["auto_speedup"] >= AUTO_FLOOR or rec["auto_same_cubin_as_none"]


def geomean(xs: list[float]) -> float | None:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def markdown(payload: dict[str, Any]) -> str:
    s = payload["summary"]
    lines = [f"# Pass selection: {payload['set']} ({payload['gpu']}, commit {payload['commit']}, {payload['date']})", "",
             f"Candidates: {', '.join(payload['candidates'])}. Each kernel's variants are timed in {payload['rounds']} "
             "interleaved rounds; a round reads every variant twice, in order and then in reverse order, and takes the "
             "mean (on the H200, consecutive readings alternated between two levels ~0.5 us apart: a variant always read "
             "at an even position looked up to 10% faster). A reading is `triton_ext.testing.gpu_time_ms`: the median "
             "GPU time of >= 1 ms of the kernel's own runs, an L2 flush before each (one flush buffer per kernel), every "
             "call queued behind a GPU sleep, checked to outlast the CPU's queueing, so the CPU's launch cost stays out "
             "(reported apart: launch us). x = median over rounds of (no pass / variant) in that round; spread = "
             "(max - min) / median of those per-round ratios, the same for every variant. "
             "`auto` = the transparent mode (`TRITON_EXT_ENABLE=auto`; choice recorded, then reused from disk); "
             "`autotuned` = `triton_ext.autotune` over configs differing only in passes.", "",
             "Target checks, stated plainly: *auto >= 0.99x* passes for a kernel when its x >= 0.99 **or** the mode "
             "launched a cubin byte-identical to the no-pass kernel's (it kept no pass): the GPU then runs the very same "
             "code with the same arguments, so that x compares a kernel with itself and only measures noise (marked "
             "`same` below, its x still shown). The mode's real cost for such a kernel is on the CPU (launch us), not "
             "in x. *autotuned never slower* passes when the median of (reference / autotuned) per round is >= 1 - "
             "its spread, the reference being the better of no pass and the best single pass (or when both launch the "
             "same cubin), or when that median is >= 1 - the run-to-run spread: the 90th percentile, over every "
             "kernel and config, of how much the config's ratio to no pass moved between two independent timing "
             "sessions of this same run (the autotuner's own rounds on a copy of the inputs, and the rounds in this "
             "table). Per-round spreads alone understate it: a 0.5% difference measured consistently in one session "
             "reversed in the other (e.g. fla_rotary + nvidia_occupancy_hint, window 1). Kernels that pass only "
             "by the run-to-run spread are listed.", "",
             f"- auto: geometric mean {s['auto_geomean']:.4f}x, worst {s['auto_worst'][0]} {s['auto_worst'][1]:.4f}x, "
             f"{s['auto_at_1_03']} kernel(s) >= 1.03x; below 0.99x: {s['auto_below_0_99'] or 'none'} "
             f"(of those with a different kernel than no pass: {s['auto_below_0_99_distinct'] or 'none'})"
             if s.get("auto_geomean") else "- auto: no timings",
             f"- autotuned: geometric mean {s['autotuned_geomean']:.4f}x, {s['autotuned_at_1_03']} kernel(s) >= 1.03x"
             f"{' (third party)' if payload['set'] == 'realworld' else ''}; never slower than the better of no pass and "
             f"the best single pass (within spread) on {s['autotuned_ok']}/{s['timed']}"
             f"{'; not on: ' + ', '.join(s['autotuned_slower']) if s['autotuned_slower'] else ''}; run-to-run "
             f"spread {100 * (s.get('run_to_run_spread_p90') or 0):.2f}% (90th percentile; median "
             f"{100 * (s.get('run_to_run_spread_median') or 0):.2f}%); passing only within it: "
             f"{', '.join(s.get('autotuned_ok_only_within_run_to_run') or []) or 'none'}"
             if s.get("autotuned_geomean") else "",
             f"- outputs unchanged: {s['outputs_unchanged']} ({len(payload['failures'])} failure(s) in all, "
             f"{len(payload['unverifiable'])} unverifiable)",
             f"- first launch in auto mode: cold cache median {s['cold_first_launch_s']['median']} s, max "
             f"{s['cold_first_launch_s']['max']} s (stock cold launch median {s['stock_first_launch_s']['median']} s); "
             f"warm compile cache (timing only) median {s['warm_first_launch_s']['median']} s, max "
             f"{s['warm_first_launch_s']['max']} s",
             f"- CPU cost per launch (median over kernels, us): {s.get('launch_us_median')}",
             f"- readings whose GPU sleep ended before the CPU had queued every call (their times could hold a "
             f"wait for the CPU; each was retried behind a longer sleep first): {s.get('starved_batches')} of "
             f"{s.get('batches')} batches",
             f"- alternation between consecutive readings (median over kernels of |odd - even| / even, cancelled "
             f"by the in-order/reverse-order rounds): {s.get('alternation_median_abs')}",
             f"- targets: {payload.get('targets')}", "",
             "| kernel | no pass ms | best single | x | pairs x | auto choice | auto x (spread) | autotuned | "
             "autotuned x | vs ref (spread) | ok | first launch s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in payload["kernels"]:
        if "speedup" not in r:
            lines.append(f"| {r['kernel']} | {r.get('error') or r.get('timing_error') or r.get('not_timed') or 'no firing pass (auto = no pass)'} "
                         "|  |  |  |  |  |  |  |  |  |  |")
            continue
        sp, spr = r["speedup"], r["spread"]
        pairs = " ".join(f"{k}:{v:.3f}" for k, v in sp.items() if "+" in k) or "-"
        bs = r["best_single"]
        same = " same" if r.get("auto_same_cubin_as_none") else ""
        lines.append(f"| {r['kernel']} | {r['median_ms']['none']:.4f} | {bs or '-'} | "
                     f"{sp[bs]:.3f} | {pairs} | {r['auto']['choice'] or 'none'} | {sp['auto']:.3f}{same} "
                     f"({100 * spr['auto']:.1f}%) | {r['autotuned']['choice'] or 'none'} | {sp['autotuned']:.3f} | "
                     f"{r['autotuned_vs_reference']:.3f} ({100 * r['autotuned_vs_reference_spread']:.1f}%) | "
                     f"{'yes' if r['autotuned_ok'] else 'NO'} | {r.get('auto_cold_first_launch_s')} / {r.get('auto_first_launch_s')} |")
    lines += ["", "first launch s: cold Triton cache (the candidates' compiles, measured with other kernels compiling "
              "at once, plus the timing) / warm cache (the timing of the variants alone). vs ref: median of (reference "
              "/ autotuned) per round, reference = the better of no pass and the best single pass."]
    return "\n".join(lines) + "\n"


def run_to_run_spread(records: list[dict[str, Any]]) -> float | None:
    """The 90th percentile, over every kernel and config, of how much a config's ratio to no pass
    moved between the two independent timing sessions of this run (:func:`verdicts`)."""
    xs = sorted(x for r in records for x in (r.get("run_to_run") or {}).values())
    return xs[min(len(xs) - 1, int(0.9 * len(xs)))] if xs else None


def summarize(which: str, records: list[dict[str, Any]], not_timed: list[str], changed_outputs: list[str],
              compile_s: float) -> tuple[dict[str, Any], dict[str, bool]]:
    """The summary and the issue's targets over items whose records :func:`verdicts` completed.

    Sets each record's final ``autotuned_ok``: the autotuned kernel is no slower than the
    reference by more than the larger of its per-round spread and the run-to-run spread
    (:func:`run_to_run_spread`); ``autotuned_ok_rounds`` keeps the per-round verdict alone."""
    timed = [r for r in records if "speedup" in r]
    r2r = run_to_run_spread(timed)
    for r in timed:
        r["autotuned_ok"] = r["autotuned_ok_rounds"] or (
            r2r is not None and r["autotuned_vs_reference"] >= 1 - max(r2r, r["autotuned_vs_reference_spread"]))
    # A kernel no candidate changes runs the stock kernel in every mode: speedup 1 by construction.
    untouched = [r for r in records if "error" not in r and "not_timed" not in r and "timing_error" not in r
                 and not any(v.get("fires") and "error" not in v for v in r.get("variants", {}).values())]
    auto_x = {**{r["kernel"]: r["auto_speedup"] for r in timed}, **{r["kernel"]: 1.0 for r in untouched}}
    tuned_x = {**{r["kernel"]: r["autotuned_speedup"] for r in timed}, **{r["kernel"]: 1.0 for r in untouched}}
    worst = min(auto_x.items(), key=lambda kv: kv[1]) if auto_x else ("", 0.0)

    def stats(key: str) -> dict[str, float | None]:
        xs = [r[key] for r in records if isinstance(r.get(key), (int, float))]
        return {"median": round(statistics.median(xs), 2) if xs else None, "max": round(max(xs), 2) if xs else None}

    third = {r["kernel"] for r in records if r.get("third_party", False)}
    summary = {
        "kernels": len(records), "timed": len(timed), "no_firing_pass": [r["kernel"] for r in untouched],
        "not_timed": not_timed, "compile_check_s": round(compile_s, 1),
        "auto_geomean": geomean(list(auto_x.values())), "auto_worst": list(worst),
        "auto_below_0_99": sorted(k for k, v in auto_x.items() if v < AUTO_FLOOR),
        "auto_below_0_99_distinct": sorted(r["kernel"] for r in timed if not r["auto_ok"]),
        "auto_same_cubin_as_none": sorted(r["kernel"] for r in timed if r.get("auto_same_cubin_as_none")),
        "auto_at_1_03": sum(1 for v in auto_x.values() if v >= 1.03),
        "auto_choices": {r["kernel"]: r["auto"]["choice"] for r in timed},
        "autotuned_geomean": geomean(list(tuned_x.values())),
        "autotuned_at_1_03": sum(1 for k, v in tuned_x.items() if v >= 1.03 and (k in third or which == "bench")),
        "autotuned_ok": sum(1 for r in timed if r["autotuned_ok"]),
        "autotuned_slower": [r["kernel"] for r in timed if not r["autotuned_ok"]],
        "run_to_run_spread_p90": round(r2r, 5) if r2r is not None else None,
        "run_to_run_spread_median": round(statistics.median(x for r in timed for x in r.get("run_to_run", {}).values()), 5)
        if any(r.get("run_to_run") for r in timed) else None,
        "autotuned_ok_only_within_run_to_run": [r["kernel"] for r in timed
                                                if r["autotuned_ok"] and not r["autotuned_ok_rounds"]],
        "outputs_unchanged": not changed_outputs, "changed_outputs": sorted(set(changed_outputs)),
        "cold_first_launch_s": stats("auto_cold_first_launch_s"), "warm_first_launch_s": stats("auto_first_launch_s"),
        "stock_first_launch_s": stats("stock_first_launch_s"),
        "starved_batches": sum(v.get("starved", 0) for r in timed for v in r.get("queueing", {}).values()),
        "batches": sum(v.get("batches", 0) for r in timed for v in r.get("queueing", {}).values()),
        "alternation_median_abs": round(statistics.median(abs(r["alternation"]) for r in timed
                                                          if r.get("alternation") is not None), 5)
        if any(r.get("alternation") is not None for r in timed) else None,
        "launch_us_median": {label: round(statistics.median(xs), 2) for label in ("none", "auto", "autotuned")
                             if (xs := [r["launch_us"][label] for r in timed if label in r.get("launch_us", {})])},
    }
    targets = {"autotuned_never_slower": summary["autotuned_ok"] == len(timed), "all_timed": not not_timed}
    if which == "realworld":
        targets.update({"autotuned_1_03_on_5_third_party": summary["autotuned_at_1_03"] >= 5,
                        "auto_geomean_1_02": (summary["auto_geomean"] or 0) >= 1.02,
                        # x >= 0.99, or the very kernel no pass runs (see markdown())
                        "auto_none_below_0_99": not summary["auto_below_0_99_distinct"]})
    return summary, targets


def merge(paths: list[Path], out: Path) -> int:
    """One report from the shards' reports (``--shard i/n`` runs of the same set and commit)."""
    parts = [json.loads(p.read_text(encoding="utf-8")) for p in paths]
    first = parts[0]
    if len({(p["set"], p["commit"], tuple(p["candidates"])) for p in parts}) != 1:
        raise SystemExit(f"--merge: the reports differ in set, commit or candidates: {[str(p) for p in paths]}")
    records = [r for p in parts for r in p["kernels"]]
    for rec in records:  # recomputed from the raw timings, so the merged report uses this code's rules
        verdicts(rec)
    failures = [f for p in parts for f in p["failures"]]
    payload = {**first, "shards": [{"file": p.name, "date": d["date"], "wall_seconds": d["wall_seconds"]}
                                   for p, d in zip(paths, parts)],
               "wall_seconds": round(sum(d["wall_seconds"] for d in parts), 1), "kernels": records,
               "failures": failures, "unverifiable": [u for p in parts for u in p["unverifiable"]]}
    summary, targets = summarize(first["set"], records, [n for p in parts for n in p["summary"]["not_timed"]],
                                 [c for p in parts for c in p["summary"]["changed_outputs"]],
                                 max(p["summary"]["compile_check_s"] for p in parts))
    payload.update(summary=summary, targets=targets)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=1, default=str) + "\n", encoding="utf-8")
    out.with_suffix(".md").write_text(markdown(payload), encoding="utf-8")
    print(f"wrote {out} and {out.with_suffix('.md')}")
    print(json.dumps({"summary": summary, "targets": targets}, default=str))
    return 1 if failures else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=("realworld", "bench"), default="realworld")
    parser.add_argument("--out", type=Path, required=False)
    parser.add_argument("--kernels", nargs="*", default=None)
    parser.add_argument("--rounds", type=int, default=4, help="interleaved rounds (each reads every variant twice)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=max(1, min(14, (os.cpu_count() or 2) - 2)))
    parser.add_argument("--timeout", type=int, default=200, help="seconds per compile-and-check child")
    parser.add_argument("--budget", type=float, default=280, help="seconds for the whole run: kernels not timed "
                        "by then are reported as not timed, so the report is always written")
    parser.add_argument("--deadline", type=float, default=float("inf"), help=argparse.SUPPRESS)
    parser.add_argument("--shard", default=None, metavar="I/N", help="only every N-th kernel from the I-th (0-based); "
                        "--merge joins the shards' reports")
    parser.add_argument("--merge", nargs="+", type=Path, default=None, metavar="JSON",
                        help="write --out from these shard reports (no GPU needed)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--child-out", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--timing-plan", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--candidates", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        rec = child(args.set, args.child, args.seed, args.candidates.split(","))
        args.child_out.write_text(json.dumps(rec), encoding="utf-8")
        return 0
    if args.timing_plan:
        time_items(args.set, json.loads(args.timing_plan.read_text(encoding="utf-8")), args.seed, args.rounds,
                   args.candidates.split(","), args.child_out, args.deadline)
        return 0

    out = args.out or REPO / "benchmarks" / "results" / f"pass-selection-{args.set}-h200.json"
    if args.merge:
        return merge(args.merge, out)
    started = time.time()
    cands = candidates()
    names = [n for n in items_of(args.set, args.seed) if args.kernels is None or n in args.kernels]
    if args.shard:
        i, n = (int(x) for x in args.shard.split("/"))
        if not 0 <= i < n:
            raise SystemExit(f"--shard {args.shard}: expected I/N with 0 <= I < N")
        names = names[i::n]
    tmp = Path(tempfile.mkdtemp(prefix="pass-selection-"))
    os.environ["TRITON_CACHE_DIR"] = str(tmp / "triton-cache")  # cold, shared by every child
    base_cmd = [sys.executable, "-m", "benchmarks.pass_selection_gpu", "--set", args.set, "--seed", str(args.seed),
                "--candidates", ",".join(cands)]

    def check(name: str) -> dict[str, Any]:
        child_out = tmp / f"{abs(hash(name))}.json"
        t0 = time.time()
        try:
            proc = subprocess.run([*base_cmd, "--child", name, "--child-out", str(child_out)], capture_output=True,
                                  text=True, timeout=args.timeout, cwd=REPO)
            rc, tail = proc.returncode, (proc.stdout + proc.stderr)[-3000:]
        except subprocess.TimeoutExpired:
            rc, tail = -1, f"timed out after {args.timeout}s"
        rec = json.loads(child_out.read_text()) if rc == 0 and child_out.exists() else {
            "kernel": name, "error": f"child exited {rc}", "log_tail": tail}
        rec["seconds"] = round(time.time() - t0, 1)
        return rec

    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        records = list(pool.map(check, names))
    compile_s = time.time() - started
    print(f"{len(records)} kernels compiled and checked in {compile_s:.0f}s; timing", flush=True)
    plan = {r["kernel"]: [k for k, v in r["variants"].items() if v.get("fires") and "error" not in v]
            for r in records if "error" not in r}
    plan = {k: v for k, v in plan.items() if v}
    plan_file, timing_out = tmp / "plan.json", tmp / "timing.json"
    plan_file.write_text(json.dumps(plan))
    t0 = time.time()
    deadline = started + args.budget - 20  # the last kernel's timing and the report
    try:
        proc = subprocess.run([*base_cmd, "--timing-plan", str(plan_file), "--child-out", str(timing_out), "--rounds",
                               str(args.rounds), "--deadline", str(deadline)], capture_output=True, text=True, cwd=REPO,
                              timeout=max(30.0, started + args.budget + 60 - time.time()))
    except subprocess.TimeoutExpired as exc:
        proc = subprocess.CompletedProcess(exc.cmd, -9, str(exc.stdout or ""), f"timing process killed after {exc.timeout:.0f}s")
    timing = json.loads(timing_out.read_text()) if timing_out.exists() else {}
    failures: list[str] = []
    unverifiable: list[str] = []
    not_timed: list[str] = []
    changed_outputs: list[str] = []
    if proc.returncode != 0:
        failures.append(f"timing process exited {proc.returncode}: {(proc.stdout + proc.stderr)[-1500:]}")
    print(f"timing took {time.time() - t0:.0f}s", flush=True)

    for rec in records:
        rec.update(timing.get(rec["kernel"], {}))
        verdicts(rec)
        k = rec["kernel"]
        if "error" in rec:
            failures.append(f"{k}: {rec['error']} {rec.get('log_tail', '')[-600:]}")
            continue
        if "timing_error" in rec:
            failures.append(f"{k}: timing: {rec['timing_error']}")
        if (rec.get("auto") or {}).get("error"):
            failures.append(f"{k}: auto mode: {rec['auto']['error']}")
        if rec.get("auto_choice_reused_from_disk") is False:
            failures.append(f"{k}: a new auto mode did not take the recorded choice from disk")
        if "not_timed" in rec or (k in plan and k not in timing):
            rec.setdefault("not_timed", "the timing process ended first")
            not_timed.append(k)
        changed: list[str] = []
        for label, v in rec["variants"].items():
            if "error" in v:
                failures.append(f"{k} + {label}: {v['error']}")
            elif v.get("fires") and not v.get("outputs_unchanged"):
                changed.append(f"{label} {v.get('mismatches')}")
        for what in ("auto_mismatches", "autotuned_mismatches"):
            if rec.get(what):
                changed.append(f"{what.split('_mismatches')[0]} {rec[what]}")
        for c in changed:
            if rec.get("baseline_repeatable") is False:
                unverifiable.append(f"{k}: {c} (the kernel without passes does not repeat its own output)")
            else:
                failures.append(f"{k}: outputs changed: {c}")
                changed_outputs.append(k)
        if "speedup" in rec:
            print(f"{k:40} none {rec['median_ms']['none']:.4f}ms  best single {rec['best_single']} "
                  f"{rec['speedup'][rec['best_single']]:.3f}x  auto[{rec['auto']['choice'] or 'none'}] "
                  f"{rec['auto_speedup']:.3f}x  autotuned[{rec['autotuned']['choice'] or 'none'}] "
                  f"{rec['autotuned_speedup']:.3f}x {'ok' if rec['autotuned_ok_rounds'] else 'slower than the reference by more than the rounds spread'}", flush=True)
        else:
            print(f"{k:40} no firing pass: auto and autotuning keep no pass", flush=True)

    summary, targets = summarize(args.set, records, not_timed, changed_outputs, compile_s)
    payload = {
        "what": "pass selection: no pass, each pass, pairs, transparent auto mode, pass-aware autotuning",
        "set": args.set, "commit": check_gpu._commit(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        **check_gpu._gpu_info(), "versions": check_gpu._versions(), "candidates": cands, "rounds": args.rounds,
        "seed": args.seed, "shard": args.shard, "wall_seconds": round(time.time() - started, 1), "summary": summary,
        "targets": targets,
        "failures": failures, "unverifiable": unverifiable, "kernels": records,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=1, default=str) + "\n", encoding="utf-8")
    out.with_suffix(".md").write_text(markdown(payload), encoding="utf-8")
    print(f"wrote {out} and {out.with_suffix('.md')} in {payload['wall_seconds']}s")
    print(json.dumps({"summary": summary, "targets": targets}, default=str))
    for u in unverifiable:
        print("  UNVERIFIABLE", u)
    for f in failures:
        print("  FAIL", f[:1500])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
