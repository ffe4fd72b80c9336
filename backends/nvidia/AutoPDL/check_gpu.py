"""H200 check of nvidia_auto_pdl: a chain of small dependent kernels in a CUDA graph.

    TRITON_EXT_BUILD_DIR=<build> python -m backends.nvidia.AutoPDL.check_gpu --out auto-pdl-h200.json

Each step of the chain reads the previous step's output at its own index and at an index one
block-and-a-bit away (so every CTA reads data written by other CTAs of the previous kernel; a
missing or misplaced wait shows up as wrong values) and writes a new buffer. The chain of
``--length`` launches is captured in one CUDA graph and replayed; the time per kernel boundary is
graph time / length. Variants, interleaved in every round:

* ``baseline``: the kernel as written, launched normally;
* ``auto_pdl``: nvidia_auto_pdl (launch-dependents after the last load), launched with PDL;
* ``auto_pdl_after_wait``: the same with launch-dependents right after the wait.

Checks: the pass variants are compiled with ``launch_pdl`` and carry ``griddepcontrol.wait`` in
their PTX; all variants give bit-identical outputs; and the baseline matches a float64 reference
of the chain on fresh random inputs. Needs torch, triton 3.9.0, this repository and the built
plugins (``TRITON_EXT_BUILD_DIR``).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent

import torch  # noqa: E402
import triton  # noqa: E402

from triton_ext.testing import import_file
import triton_ext  # noqa: E402
step_kernel = import_file(__file__, "kernels.py").step_kernel

BLOCK = 1024
A, B, C = 0.5, 0.25, 1.0






@dataclass(frozen=True)
class Variant:
    name: str
    passes: tuple[str, ...]
    options: tuple[tuple[str, str], ...] = ()


VARIANTS = (
    Variant("baseline", ()),
    Variant("auto_pdl", ("nvidia_auto_pdl",)),
    Variant("auto_pdl_after_wait", ("nvidia_auto_pdl",), (("launch_dependents", "after-wait"),)),
)


@dataclass
class Row:
    n: int
    length: int
    variant: str
    us_per_kernel: float
    speedup_vs_baseline: float
    bit_identical_to_baseline: bool
    launch_pdl: bool


def _with_variant(variant: Variant, fn: Callable[[], Any]) -> Any:
    if not variant.passes:
        return fn()
    with triton_ext.enabled(*variant.passes, **dict(variant.options)):
        return fn()


def _chain(bufs: list[torch.Tensor], n: int, length: int, shift: int) -> None:
    grid = (triton.cdiv(n, BLOCK),)
    for i in range(length):
        step_kernel[grid](bufs[i % 2], bufs[(i + 1) % 2], n, shift, BLOCK=BLOCK)


def _reference(x: torch.Tensor, length: int, shift: int) -> torch.Tensor:
    v = x.double().cpu()
    for _ in range(length):
        v = v * A + torch.roll(v, -shift) * B + C
    return v


def _capture(variant: Variant, x: torch.Tensor, n: int, length: int, shift: int):
    bufs = [x.clone(), torch.empty_like(x)]
    # Compile and warm up outside the capture.
    compiled = _with_variant(variant, lambda: step_kernel[(triton.cdiv(n, BLOCK),)](
        bufs[0], bufs[1], n, shift, BLOCK=BLOCK))
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        bufs[0].copy_(x)
        _with_variant(variant, lambda: _chain(bufs, n, length, shift))
        stream.synchronize()
        with torch.cuda.graph(graph, stream=stream):
            _with_variant(variant, lambda: _chain(bufs, n, length, shift))
    torch.cuda.synchronize()
    return graph, bufs, compiled


def _run_once(graph: Any, bufs: list[torch.Tensor], x: torch.Tensor, length: int) -> torch.Tensor:
    bufs[0].copy_(x)
    graph.replay()
    torch.cuda.synchronize()
    return bufs[length % 2].clone()


def _time(graph: Any, replays: int) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(replays):
        graph.replay()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1e3 / replays  # microseconds per replay


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="JSON file to write")
    parser.add_argument("--length", type=int, default=64, help="kernels per graph")
    parser.add_argument("--sizes", type=int, nargs="+", default=[4096, 65536, 1 << 20])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--replays", type=int, default=50)
    args = parser.parse_args()

    device = torch.device("cuda")
    gen = torch.Generator(device=device)
    gen.manual_seed(8)
    rows: list[Row] = []
    for n in args.sizes:
        shift = BLOCK + 17 if n > BLOCK else 17  # crosses CTA boundaries
        x = torch.randn(n, device=device, dtype=torch.float32, generator=gen)
        captured = {v.name: _capture(v, x, n, args.length, shift) for v in VARIANTS}
        outputs = {name: _run_once(g, bufs, x, args.length) for name, (g, bufs, _) in captured.items()}
        ref = _reference(x, args.length, shift)
        err = (outputs["baseline"].double().cpu() - ref).abs().max().item()
        assert err <= 1e-4 * max(1.0, ref.abs().max().item()), f"n={n}: baseline vs float64 max error {err}"
        for v in VARIANTS:
            compiled = captured[v.name][2]
            pdl = bool(getattr(getattr(compiled, "metadata", None), "launch_pdl", False))
            if v.passes:
                assert pdl, f"{v.name}: kernel not compiled with launch_pdl"
                assert "griddepcontrol.wait" in compiled.asm["ptx"], f"{v.name}: no griddepcontrol.wait in PTX"
            assert torch.equal(outputs[v.name], outputs["baseline"]), f"n={n}: {v.name} differs from baseline"
        times: dict[str, list[float]] = {v.name: [] for v in VARIANTS}
        for _ in range(args.rounds):
            for v in VARIANTS:  # interleaved, so clock and thermal drift hit every variant alike
                times[v.name].append(_time(captured[v.name][0], args.replays) / args.length)
        base = statistics.median(times["baseline"])
        for v in VARIANTS:
            t = statistics.median(times[v.name])
            pdl = bool(getattr(captured[v.name][2].metadata, "launch_pdl", False))
            rows.append(Row(n, args.length, v.name, t, base / t, True, pdl))
        # The graphs stay correct after timing (replays raced nothing).
        for v in VARIANTS:
            g, bufs, _ = captured[v.name]
            assert torch.equal(_run_once(g, bufs, x, args.length), outputs["baseline"]), f"{v.name}: drift"

    print(f"{'n':>9} {'variant':<22} {'us/kernel':>10} {'speedup':>8} {'pdl':>5}")
    for r in rows:
        print(f"{r.n:>9} {r.variant:<22} {r.us_per_kernel:>10.3f} {r.speedup_vs_baseline:>8.3f} {str(r.launch_pdl):>5}")
    result = {
        "check": "nvidia_auto_pdl",
        "gpu": torch.cuda.get_device_name(),
        "triton": triton.__version__,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "block": BLOCK,
        "rounds": args.rounds,
        "replays": args.replays,
        "rows": [asdict(r) for r in rows],
    }
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
