"""What each sanitizer adds to named corpus kernels, compiled for sm_90 on a CPU (issue 32).

    python -m tests.realworld.lastmile_cpu --kernels fg_rotary_prefill liger_cross_entropy \
        [--checks nan_inf_check offset_overflow_check all] [--dump DIR] [--json FILE]

For each kernel of the real-world corpus (``tests/realworld``, launched as its package's launcher
launches it, on ``meta`` tensors) and each variant (no pass, each check alone, ``all``: the three
together) it compiles through the stock pipeline to a cubin and prints one row: registers and
stack bytes per thread (``cuobjdump -res-usage``), shared memory of the launch (Triton's
metadata), and static counts of the SASS: instructions (NOPs left out), barriers (``BAR``),
shared-memory accesses (``STS``/``LDS``), shuffles (``SHFL``), global atomics (``RED``/``ATOM``),
global stores (``STG``) and loads (``LDG``), the TTGIR's ``tt.reduce`` count, and ``loop A/B``:
the static instructions of the largest SASS loop, and of its path that takes every conditional
forward branch (the reporting branches a clean program jumps over; :func:`loop_facts`), and
``clean``: instructions / ``BAR`` / ``SHFL`` on the whole kernel's path that takes every
conditional forward branch and conditional ``EXIT`` (:func:`clean_path_facts`). ``--dump``
writes each variant's TTGIR, PTX and SASS under ``DIR/<kernel>/`` to compare by hand.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

CHECKS = ("nan_inf_check", "offset_overflow_check", "masked_load_poison")
_COUNTED = ("BAR", "STS", "LDS", "SHFL", "RED", "ATOM", "STG", "LDG")


def _tool(name: str) -> str:
    import triton

    return str(Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / name)


def sass_facts(cubin: bytes) -> tuple[dict[str, int], str]:
    """Registers, stack and SASS opcode counts of a cubin, and its SASS text."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(cubin)
        usage = subprocess.run([_tool("cuobjdump"), "-res-usage", str(path)], capture_output=True,
                               text=True, check=True).stdout
        sass = subprocess.run([_tool("cuobjdump"), "-sass", str(path)], capture_output=True,
                              text=True, check=True).stdout
    m = re.search(r"REG:(\d+) STACK:(\d+)", usage)
    if not m:
        raise RuntimeError(f"cuobjdump -res-usage printed no REG/STACK: {usage[:200]!r}")
    ops = re.findall(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9]*)", sass)
    ops = [op for op in ops if op != "NOP"]
    facts = {"regs": int(m.group(1)), "stack": int(m.group(2)), "sass": len(ops)}
    facts.update({name: ops.count(name) for name in _COUNTED})
    # sm_90 spells the global atomics REDG / ATOMG.
    facts["RED"] += ops.count("REDG")
    facts["ATOM"] += ops.count("ATOMG")
    return facts, sass


def loop_facts(sass: str) -> dict[str, int]:
    """Static instructions of the SASS's largest loop (a backward branch and its target, NOPs
    left out), and of the path through it that takes every conditional forward branch inside it
    (``loop_jump``): with the sanitizers' reporting branches, which a clean program jumps over,
    an estimate of what one clean iteration issues. Zero without a loop."""
    ins = [(int(a, 16), text.strip()) for a, text in
           re.findall(r"/\*([0-9a-f]{4,})\*/\s+([^;]*);", sass)]
    at = {addr: i for i, (addr, _) in enumerate(ins)}
    best = (0, -1)
    for i, (addr, text) in enumerate(ins):
        m = re.search(r"\bBRA\b.*?(0x[0-9a-f]+)", text)
        target = int(m.group(1), 16) if m else None
        if target is not None and target <= addr and target in at and i - at[target] > best[1] - best[0]:
            best = (at[target], i)
    body = ins[best[0]:best[1] + 1]
    jump, i = 0, 0
    while i < len(body):
        addr, text = body[i]
        jump += not text.startswith("NOP")
        m = re.match(r"@!?P\d\s+BRA\s+(?:\S+\s+)?(0x[0-9a-f]+)", text)
        target = int(m.group(1), 16) if m else None
        if target is not None and target > addr and target in at and at[target] <= best[1]:
            i = at[target] - best[0]
            continue
        i += 1
    return {"loop": sum(not t.startswith("NOP") for _, t in body), "loop_jump": jump}


def clean_path_facts(sass: str) -> dict[str, int]:
    """Static instructions, barriers and shuffles on the kernel's path that takes every
    conditional forward branch and conditional ``EXIT`` (NOPs left out), from its first
    instruction to the first ``EXIT`` it reaches; a loop's body is counted once. The sanitizers'
    reporting branches and record updates are jumped over this way, so for a loopless kernel it
    estimates what a clean program issues (some of the kernel's own code that only some threads
    run, such as a scalar store, is jumped over too, in every variant alike)."""
    ins = [(int(a, 16), text.strip()) for a, text in
           re.findall(r"/\*([0-9a-f]{4,})\*/\s+([^;]*);", sass)]
    at = {addr: i for i, (addr, _) in enumerate(ins)}
    facts = {"path": 0, "path_BAR": 0, "path_SHFL": 0}
    i = 0
    while i < len(ins):
        addr, text = ins[i]
        op = re.sub(r"^@!?U?P\w+\s+", "", text).split(" ")[0]
        if not text.startswith("NOP"):
            facts["path"] += 1
            facts["path_BAR"] += op.startswith("BAR")
            facts["path_SHFL"] += op.startswith("SHFL")
        if op == "EXIT":
            break
        m = re.match(r"(@!?U?P\w+\s+)?BRA\s+(?:\S+\s+)?(0x[0-9a-f]+)", text)
        target = int(m.group(2), 16) if m else None
        if target is not None and target > addr and target in at:
            i = at[target]
            continue
        i += 1
    return facts


def compile_variants(name: str, variants: list[str], dump: Path | None) -> dict[str, Any]:
    """variant -> facts for one corpus kernel (an error string where the compile failed)."""
    import triton
    from triton.compiler import ASTSource

    from tests.realworld.realworld_kernels import BY_NAME, Tensors, compile_args
    from triton_ext.testing import CUDA90, enabled_label

    kernel = BY_NAME[name]
    fn = kernel.fn()
    launch = kernel.build(Tensors("meta"))
    signature, constexprs, attrs = compile_args(fn, launch)
    options = {"num_warps": launch.num_warps, "num_stages": launch.num_stages}
    row: dict[str, Any] = {"num_warps": launch.num_warps, "grid": list(launch.grid)}
    for variant in variants:
        src = ASTSource(fn, signature=signature, constexprs=constexprs, attrs=attrs)
        try:
            if variant == "off":
                compiled = triton.compile(src, target=CUDA90, options=options)
            else:
                with enabled_label("+".join(CHECKS) if variant == "all" else variant):
                    compiled = triton.compile(src, target=CUDA90, options=options)
        except Exception as exc:  # noqa: BLE001  (recorded; the other variants still run)
            row[variant] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
            continue
        facts, sass = sass_facts(compiled.asm["cubin"])
        facts.update(loop_facts(sass))
        facts.update(clean_path_facts(sass))
        facts["shared"] = int(compiled.metadata.shared)
        ttgir = compiled.asm["ttgir"]
        facts["reduce"] = ttgir.count('"tt.reduce"')
        facts["ptx_lines"] = compiled.asm["ptx"].count("\n")
        row[variant] = facts
        if dump:
            out = dump / name
            out.mkdir(parents=True, exist_ok=True)
            (out / f"{variant}.ttgir").write_text(ttgir)
            (out / f"{variant}.ptx").write_text(compiled.asm["ptx"])
            (out / f"{variant}.sass").write_text(sass)
    return row


def fmt(facts: dict[str, Any]) -> str:
    if "error" in facts:
        return facts["error"]
    return ("regs {regs:3d} stack {stack:3d} smem {shared:6d} sass {sass:5d} BAR {BAR:2d} STS+LDS {sl:2d} "
            "SHFL {SHFL:3d} RED+ATOM {ra:2d} STG {STG:3d} LDG {LDG:3d} reduce {reduce:2d} "
            "loop {loop:4d}/{loop_jump:4d} clean {path:4d}/{path_BAR:2d}/{path_SHFL:3d}").format(
                sl=facts["STS"] + facts["LDS"], ra=facts["RED"] + facts["ATOM"], **facts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", nargs="+", required=True, help="corpus kernel names")
    parser.add_argument("--checks", nargs="*", default=["nan_inf_check", "offset_overflow_check", "all"],
                        help="variants besides 'off' (a check name or 'all')")
    parser.add_argument("--dump", type=Path, help="write TTGIR/PTX/SASS per variant under DIR/<kernel>/")
    parser.add_argument("--json", type=Path, help="write the facts as JSON")
    args = parser.parse_args(argv)
    import triton

    triton.knobs.cache.dir = tempfile.mkdtemp(prefix="lastmile-cpu-")
    result = {}
    for name in args.kernels:
        row = compile_variants(name, ["off", *args.checks], args.dump)
        result[name] = row
        print(f"{name} (warps {row['num_warps']}, grid {row['grid']})")
        for variant in ["off", *args.checks]:
            print(f"  {variant:22s} {fmt(row[variant])}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
