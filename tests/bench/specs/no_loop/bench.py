"""Scratch spec for tests: a kernel without a loop, which loop_split leaves as it is, so the CPU
check must fail ("left the ttir ... unchanged")."""

from __future__ import annotations

import triton
import triton.language as tl

from triton_ext.bench import import_file

make_spec = import_file(__file__, "../scratch_specs.py").make_spec


@triton.jit
def copy(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs).to(tl.float32))


SPEC = make_spec("no_loop", copy)
