"""Scratch spec for tests: a loop whose ``if i >= 4`` loop_split splits, so the CPU check passes."""

from __future__ import annotations

import triton
import triton.language as tl

from triton_ext.bench import import_file, top_level_loops

make_spec = import_file(__file__, "../scratch_specs.py").make_spec


@triton.jit
def scaled_sum(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(0, n):
        x = tl.load(X + i * BLOCK + offs).to(tl.float32)
        if i >= 4:
            x = x * 2.0
        acc += x
    tl.store(Y + offs, acc)


def _two_loops(variant, off: str, on: str) -> str | None:
    if top_level_loops(off) == 1 and top_level_loops(on) == 2:
        return None
    return f"expected 1 loop before and 2 after, found {top_level_loops(off)} and {top_level_loops(on)}"


SPEC = make_spec("split_scalar", scaled_sum, _two_loops)
