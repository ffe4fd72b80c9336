"""Probe: would unrolling third-party kernels' innermost loops win on Hopper, as a transparent-mode variant?

    python -m benchmarks.loop_unroll_probe_gpu --out loop-unroll-probe-h100.json [--set all|holdout|both]
        [--kernels NAME ...]

Triton unrolls an ``scf.for`` that carries ``tt.loop_unroll_factor`` (its ``loop_unroll`` pass, the
last one of ``make_ttir``; ``tl.range(..., loop_unroll_factor=N)`` sets it). A pass could set that
attribute where the kernel's author did not, so before writing one this measures what it would buy,
with no plugin: Triton's stages hook edits the module handed to ``make_ttir``, marking every
innermost loop that loads memory and carries no unroll factor of its own, in three variants:
factor 2 and 4 on loops without a dot (reductions, decode attention by ``tl.sum``, scans), factor 2
on loops with a dot (GEMMs and attentions, where unrolling competes with the software pipeliner).
A variant counts only where every byte of every tensor argument equals the stock launch's (the
mode's own rule); it is timed in GPU time (``do_bench``) and back to back, against stock timed
beside it. Where outputs differ the row records by how much.

The edit goes through the module's text (print, add the attribute, parse into the same context):
Triton's Python bindings set attributes only on operations they build, not on parsed ones.
Result: benchmarks/results/loop-unroll-probe-h100.json; what it means: docs/transparent-mode.md.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import torch
import triton
from triton import knobs
from triton._C.libtriton import ir

from benchmarks.launch_option_probe_gpu import identical, snapshot, times
from triton_ext.bench.gpu import checkout_commit


@dataclass(frozen=True)
class Unroll:
    """One variant: unroll factor, and whether it applies to loops with a dot or to loops without."""

    factor: int
    dots: bool

    @property
    def name(self) -> str:
        return f"unroll{self.factor}_{'dot' if self.dots else 'nodot'}_loops"


VARIANTS = (Unroll(2, False), Unroll(4, False), Unroll(2, True))
_LOOP_END = re.compile(r"(?P<close>\s*\})(?:\s*\{(?P<attrs>.*)\})?(?P<rest>.*)$")


def mark_innermost_loops(text: str, unroll: Unroll) -> tuple[str, int]:
    """``text`` (a printed module) with ``tt.loop_unroll_factor`` on each innermost loop the variant
    covers, and how many loops it marked. A loop's region ends at the first later line indented as
    its ``scf.for`` line and starting with ``}``; that line carries the loop's attribute dictionary."""
    lines = text.split("\n")
    marked = 0
    for i, line in enumerate(lines):
        if " scf.for " not in line or not line.rstrip().endswith("{"):
            continue
        indent = len(line) - len(line.lstrip())
        end = next(j for j in range(i + 1, len(lines))
                   if lines[j].lstrip().startswith("}") and len(lines[j]) - len(lines[j].lstrip()) == indent)
        body = "\n".join(lines[i + 1:end])
        if " scf.for " in body or "tt.load" not in body or "tt.loop_unroll_factor" in lines[end]:
            continue
        if ("tt.dot" in body) != unroll.dots:
            continue
        found = _LOOP_END.match(lines[end])
        assert found, lines[end]
        attrs = [a for a in [found["attrs"], f"tt.loop_unroll_factor = {unroll.factor} : i32"] if a]
        lines[end] = f"{found['close']} {{{', '.join(attrs)}}}{found['rest']}"
        marked += 1
    return "\n".join(lines), marked


def marked_module(module: Any, unroll: Unroll) -> tuple[Any, int]:
    text, marked = mark_innermost_loops(module.str(), unroll)
    if not marked:
        return module, 0
    fd, path = tempfile.mkstemp(suffix=".mlir")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        parsed = ir.parse_mlir_module(path, module.context)
    finally:
        os.unlink(path)
    parsed.context = module.context
    return parsed, marked


class UnrollHook:
    """Triton's stages hook for the probe: the variant in force (None: stock) keys the caches and
    edits the module ``make_ttir`` receives."""

    def __init__(self) -> None:
        self.variant: Unroll | None = None
        self.marked = 0

    def __call__(self, backend: Any = None, stages: Any = None, options: Any = None, language: Any = None,
                 capability: Any = None) -> Any:
        if stages is None:
            key = self.variant.name if self.variant else "stock"
            return key, key
        if self.variant is None or "ttir" not in stages:
            return None
        unroll, make_ttir = self.variant, stages["ttir"]

        def ttir(module: Any, metadata: Any) -> Any:
            module, self.marked = marked_module(module, unroll)
            return make_ttir(module, metadata)
        stages["ttir"] = ttir
        return None


def kernels(which: str, only: list[str]) -> dict[str, Any]:
    from tests.realworld.holdout_kernels import HOLDOUT
    from tests.realworld.more_kernels import MORE
    from tests.realworld.realworld_kernels import REALWORLD

    chosen = {"all": REALWORLD + MORE, "holdout": HOLDOUT, "both": REALWORLD + MORE + HOLDOUT}[which]
    out: dict[str, Any] = {}
    for kernel in chosen:
        if not only or kernel.name in only:
            out.setdefault(kernel.name, kernel)
    return out


def difference(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> float:
    return max(float((a[k].double() - b[k].double()).abs().nan_to_num(float("inf")).max()) for k in a if a[k].numel())


def probe(kernel: Any, hook: UnrollHook) -> dict[str, Any]:
    from tests.realworld.realworld_kernels import Tensors

    fn = kernel.fn()

    def build() -> tuple[Callable[[], Any], dict[str, torch.Tensor]]:
        launch = kernel.build(Tensors("cuda", seed=0))

        def go() -> Any:
            return fn[launch.grid](**launch.args, num_warps=launch.num_warps, num_stages=launch.num_stages)
        return go, {k: v for k, v in launch.args.items() if isinstance(v, torch.Tensor)}

    hook.variant = None
    go, outputs = build()
    go()
    reference = snapshot(outputs)
    stock_runs = [times(go)]
    row: dict[str, Any] = {"kernel": kernel.name, "package": kernel.package, "variants": {}}
    for unroll in VARIANTS:
        entry: dict[str, Any] = {}
        hook.variant, hook.marked = unroll, 0
        try:
            vgo, voutputs = build()
            t0 = time.perf_counter()
            vgo()
            entry["first_s"] = time.perf_counter() - t0
            entry["marked_loops"] = hook.marked
            if not hook.marked:
                continue
            result = snapshot(voutputs)
            entry["identical"] = identical(reference, result)
            if not entry["identical"]:
                entry["max_abs_difference"] = difference(reference, result)
            entry["gpu_ms"], entry["b2b_ms"] = times(vgo)
            hook.variant = None
            stock_runs.append(times(go))
        except Exception as exc:  # noqa: BLE001 - a variant that does not compile or fit is a result
            entry["error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
        finally:
            hook.variant = None
        row["variants"][unroll.name] = entry
    row["stock_gpu_ms"] = statistics.median(g for g, _ in stock_runs)
    row["stock_b2b_ms"] = statistics.median(b for _, b in stock_runs)
    for entry in row["variants"].values():
        if "gpu_ms" in entry:
            entry["gpu_speedup"] = row["stock_gpu_ms"] / entry["gpu_ms"]
            entry["b2b_speedup"] = row["stock_b2b_ms"] / entry["b2b_ms"]
    return row


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per variant: kernels it applied to, wins (GPU time and back to back both over 1.02x), losses
    (either under 0.98x), changed outputs, failures."""
    out: dict[str, Any] = {}
    for unroll in VARIANTS:
        entries = [(r["kernel"], r["variants"][unroll.name]) for r in rows if unroll.name in r.get("variants", {})]
        timed = [(k, e) for k, e in entries if "gpu_speedup" in e]
        out[unroll.name] = {
            "applied": len(entries),
            "wins": sorted(k for k, e in timed if e["identical"] and min(e["gpu_speedup"], e["b2b_speedup"]) > 1.02),
            "losses": sorted(k for k, e in timed if min(e["gpu_speedup"], e["b2b_speedup"]) < 0.98),
            "changed_outputs": sorted(k for k, e in entries if e.get("identical") is False),
            "failed": sorted(k for k, e in entries if "error" in e),
        }
    return out


def write(args: argparse.Namespace, rows: list[dict[str, Any]]) -> None:
    import json

    result = {"commit": checkout_commit(), "date": time.strftime("%Y-%m-%d"), "gpu": torch.cuda.get_device_name(),
              "triton": triton.__version__, "set": args.set, "variants": [u.name for u in VARIANTS],
              "summary": summary(rows), "rows": rows}
    Path(args.out).write_text(json.dumps(result, indent=1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--set", choices=("all", "holdout", "both"), default="both")
    parser.add_argument("--kernels", nargs="*", default=[])
    args = parser.parse_args()
    hook = UnrollHook()
    knobs.runtime.add_stages_inspection_hook = hook
    rows: list[dict[str, Any]] = []
    for name, kernel in kernels(args.set, args.kernels).items():
        try:
            row = probe(kernel, hook)
        except Exception:  # noqa: BLE001 - the stock launch itself failed: say so and go on
            row = {"kernel": name, "error": traceback.format_exc()[-600:]}
        rows.append(row)
        print(name, {n: (round(e.get("gpu_speedup", 0), 3), round(e.get("b2b_speedup", 0), 3), e.get("identical"),
                         e.get("error", "")[:60]) for n, e in row.get("variants", {}).items()}, flush=True)
        torch.cuda.empty_cache()
        write(args, rows)  # after every kernel: a run cut short keeps what it measured
    print(summary(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
