"""What each sanitizer adds to each corpus kernel's machine code (sm_90, compiled on a CPU).

    python -m tests.realworld.sanitizer_costs --out tests/realworld/results/sanitizer-costs-cpu.json \
        [--kernels NAME ...]
    python -m tests.realworld.sanitizer_costs --table offset_overflow_check --kernels NAME ...

For every kernel of ``realworld_kernels.py`` it compiles the launch the corpus uses three times
(no pass, ``nan_inf_check``, ``offset_overflow_check``) with the stock wheel's ptxas and records,
from the wheel's ``cuobjdump``: registers and stack bytes per thread, and the SASS instruction
count (static, NOPs left out) with the barriers (``BAR``), shared-memory accesses (``STS``/``LDS``)
and warp shuffles (``SHFL``) among them. The overhead table (``sanitizer_overhead.py --costs``)
prints these next to each kernel that misses its target: they say what a correct program pays
for the check that stays (a register or occupancy step, a cross-warp step, extra instructions
per stored element), which the GPU time alone does not.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

CHECKS = ("nan_inf_check", "offset_overflow_check")
_COUNTED = ("BAR", "STS", "LDS", "SHFL")


@dataclass
class Cost:
    """Machine-code facts of one compiled kernel (per thread; SASS counts are static)."""

    registers: int
    stack: int
    instructions: int
    BAR: int
    STS: int
    LDS: int
    SHFL: int


def _cuobjdump() -> Path:
    import triton

    return Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"


def cost_of(cubin: bytes) -> Cost:
    """Registers, stack and SASS instruction counts of a cubin (the wheel's cuobjdump)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(cubin)
        tool = str(_cuobjdump())
        usage = subprocess.run([tool, "-res-usage", str(path)], capture_output=True, text=True,
                               check=True).stdout
        sass = subprocess.run([tool, "-sass", str(path)], capture_output=True, text=True,
                              check=True).stdout
    m = re.search(r"REG:(\d+) STACK:(\d+)", usage)
    if not m:
        raise RuntimeError(f"cuobjdump -res-usage printed no REG/STACK: {usage[:200]!r}")
    ops = re.findall(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9]*)", sass)
    ops = [op for op in ops if op != "NOP"]
    return Cost(int(m.group(1)), int(m.group(2)), len(ops),
                **{name: ops.count(name) for name in _COUNTED})


def compute_costs(kernels: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """kernel -> {"off": Cost, check: Cost, ...} as dicts; a failed compile records its error."""
    import triton
    from triton.compiler import ASTSource

    import triton_ext
    from tests.realworld.realworld_kernels import REALWORLD, Tensors, compile_args
    from triton_ext.testing import CUDA90

    triton.knobs.cache.dir = tempfile.mkdtemp(prefix="sanitizer-costs-")
    result: dict[str, dict[str, Any]] = {}
    for kernel in REALWORLD:
        if kernels and kernel.name not in kernels:
            continue
        fn = kernel.fn()
        launch = kernel.build(Tensors("meta"))
        signature, constexprs, attrs = compile_args(fn, launch)
        src = ASTSource(fn, signature=signature, constexprs=constexprs, attrs=attrs)
        options = {"num_warps": launch.num_warps, "num_stages": launch.num_stages}
        row: dict[str, Any] = {}
        for variant in ("off", *CHECKS):
            try:
                if variant == "off":
                    compiled = triton.compile(src, target=CUDA90, options=options)
                else:
                    with triton_ext.enabled(variant):
                        compiled = triton.compile(src, target=CUDA90, options=options)
                row[variant] = asdict(cost_of(compiled.asm["cubin"]))
            except Exception as exc:  # noqa: BLE001  (recorded; the other kernels still run)
                row[variant] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        result[kernel.name] = row
        print(f"costs: {kernel.name} {row}", flush=True)
    return result


def describe(costs: dict[str, Any], check: str) -> str:
    """One clause for the overhead table: what `check` adds to this kernel's machine code."""
    off, on = costs.get("off"), costs.get(check)
    if not off or not on or "error" in off or "error" in on:
        return ""
    parts = [f"registers {off['registers']} -> {on['registers']}"]
    if on["stack"] != off["stack"]:
        parts.append(f"stack {off['stack']} -> {on['stack']} B")
    grow = on["instructions"] - off["instructions"]
    parts.append(f"SASS instructions {off['instructions']} -> {on['instructions']} "
                 f"({grow / max(off['instructions'], 1):+.0%})")
    if on["BAR"] != off["BAR"]:
        parts.append(f"barriers {off['BAR']} -> {on['BAR']}")
    return "CPU sm_90: " + ", ".join(parts)


def table(costs: dict[str, dict[str, Any]], check: str) -> str:
    """Markdown: per kernel, registers / stack / SASS instructions / barriers off and with `check`."""
    def cell(c: dict[str, Any] | None) -> str:
        if not c or "error" in c:
            return "-"
        return f"{c['registers']} / {c['stack']} / {c['instructions']} / {c['BAR']}"

    rows = ["| kernel | off | " + check + " |", "|---|---|---|"]
    rows += [f"| {name} | {cell(row.get('off'))} | {cell(row.get(check))} |" for name, row in costs.items()]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="JSON file to write")
    parser.add_argument("--table", metavar="CHECK", choices=CHECKS,
                        help="print a Markdown table of off vs CHECK instead of writing JSON")
    parser.add_argument("--kernels", nargs="*", default=None, help="corpus kernel names (default: all)")
    args = parser.parse_args(argv)
    if not args.out and not args.table:
        parser.error("give --out FILE and/or --table CHECK")
    costs = compute_costs(args.kernels)
    if args.table:
        print(table(costs, args.table))
    if not args.out:
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(costs, indent=1) + "\n")
    failed = [f"{k} {v}" for k, row in costs.items() for v, c in row.items() if "error" in c]
    print(f"wrote {args.out}: {len(costs)} kernels, {len(failed)} failed compiles")
    for line in failed:
        print("  FAILED", line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
