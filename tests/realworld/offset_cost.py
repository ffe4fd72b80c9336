"""CPU cost table of a sanitizer on corpus kernels (sm_90, no GPU): registers, spill stack bytes,
SASS instructions and barriers with the pass off and on.

    python -m tests.realworld.offset_cost [--pass offset_overflow_check] [KERNEL ...]

Defaults to the kernels that missed issue 18's overhead targets with offset_overflow_check.
Needs torch (the corpus builds its launch arguments with meta tensors) and ptxas/cuobjdump
from the triton wheel (what ``compiled.asm["sass"]`` uses).
"""

from __future__ import annotations

import argparse
import re
import tempfile
from dataclasses import dataclass

SLOW = ("torchao_qt_int8_mm", "torchao_scaled_int8_mm", "liger_mm_int8int2",
        "sglang_extend_attention", "liger_group_norm_fwd", "torchao_hqq_mixed_mm",
        "sglang_prefill_attention")


@dataclass
class Cost:
    regs: int
    stack: int
    sass: int
    bars: int

    def __str__(self) -> str:
        return f"{self.regs:4d} {self.stack:4d} {self.sass:6d} {self.bars:3d}"


def _sass_counts(sass: str) -> tuple[int, int]:
    # One instruction a line: `<control>\t<opcode> ...;` (labels and the header have no tab).
    lines = [ln.split("\t", 1)[1] for ln in sass.splitlines() if "\t" in ln]
    instrs = [ln for ln in lines if not ln.startswith("NOP")]
    bars = [ln for ln in instrs if re.match(r"(@!?U?P\w+ )?BAR\b", ln)]
    return len(instrs), len(bars)


def _res_usage(cubin: bytes) -> tuple[int, int]:
    """(registers, spill stack bytes) from the wheel's cuobjdump (no GPU needed)."""
    import subprocess

    from triton import knobs

    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        out = subprocess.check_output([knobs.nvidia.cuobjdump.path, "-res-usage", f.name], text=True)
    regs = re.search(r"REG:(\d+)", out)
    stack = re.search(r"STACK:(\d+)", out)
    if not regs or not stack:
        raise RuntimeError(f"cuobjdump -res-usage printed no REG/STACK:\n{out}")
    return int(regs.group(1)), int(stack.group(1))


def cost(name: str, check: str | None) -> Cost:
    import triton
    from triton.compiler import ASTSource

    import triton_ext
    from triton_ext.testing import CUDA90

    from tests.realworld.realworld_kernels import BY_NAME, Tensors, compile_args

    kernel = BY_NAME[name]
    fn = kernel.fn()
    launch = kernel.build(Tensors("meta"))
    signature, constexprs, attrs = compile_args(fn, launch)
    src = ASTSource(fn, signature=signature, constexprs=constexprs, attrs=attrs)
    options = {"num_warps": launch.num_warps, "num_stages": launch.num_stages}
    triton.knobs.cache.dir = tempfile.mkdtemp(prefix="offset-cost-")
    if check:
        with triton_ext.enabled(check):
            compiled = triton.compile(src, target=CUDA90, options=options)
    else:
        compiled = triton.compile(src, target=CUDA90, options=options)
    instrs, bars = _sass_counts(compiled.asm["sass"])
    regs, stack = _res_usage(compiled.asm["cubin"])
    return Cost(regs, stack, instrs, bars)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kernels", nargs="*", default=list(SLOW))
    parser.add_argument("--pass", dest="check", default="offset_overflow_check")
    args = parser.parse_args()
    print(f"{'kernel':28s} {'off: regs stack sass bar':>24s} | {'check: regs stack sass bar':>26s}")
    for name in args.kernels:
        off, on = cost(name, None), cost(name, args.check)
        print(f"{name:28s} {off!s:>24s} | {on!s:>26s}", flush=True)


if __name__ == "__main__":
    main()
