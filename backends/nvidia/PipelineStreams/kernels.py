"""Kernels shared by the tests and bench.py of nvidia_pipeline_streams, nvidia_pipeline_dots and
nvidia_pipeline_deeper, and how the dot-loop tests compile them (``compile_dot_loop``).

``row_sum_kernel`` is the case the pass is for: one program per row, a loop without a dot that
streams the row (``range(start, end, BLOCK)``, so tests can put the bounds anywhere in the
integer range). ``row_sum_staged_kernel`` is the same loop with ``tl.range(..., num_stages=3)``
written by hand. ``dot_loop_kernel`` is nvidia_pipeline_dots's case when it is compiled with
``num_stages=1`` (and a loop nvidia_pipeline_streams leaves alone); ``dot_loop_staged_kernel``
is it with ``tl.range(..., num_stages=STAGES)`` written by hand (2: what nvidia_pipeline_dots
should give it; 4: what nvidia_pipeline_deeper should give it compiled with ``num_stages=3``).
"""

import re
from typing import Any

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton_ext.testing import compile_through_cubin


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, start, end, stride, BLOCK: tl.constexpr):
    # Sums x[row, 0:end - start]; the induction variable runs over [start, end).
    row = tl.program_id(0)
    n = end - start
    acc = tl.zeros([BLOCK], tl.float32)
    for i in range(start, end, BLOCK):
        cols = (i - start) + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < n, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def row_sum_staged_kernel(x_ptr, out_ptr, start, end, stride, BLOCK: tl.constexpr):
    # row_sum_kernel with the pipelining written by hand (the benchmark's handwritten variant).
    row = tl.program_id(0)
    n = end - start
    acc = tl.zeros([BLOCK], tl.float32)
    for i in tl.range(start, end, BLOCK, num_stages=3):
        cols = (i - start) + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < n, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def running_sum_kernel(x_ptr, n_cols, BLOCK: tl.constexpr):
    # In place, each block adds the block before it, which the previous iteration stored: a load
    # prefetched before that store would read the old value (left alone).
    row = tl.program_id(0)
    for start in range(BLOCK, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        prev = tl.load(x_ptr + row * n_cols + cols - BLOCK, mask=mask)
        cur = tl.load(x_ptr + row * n_cols + cols, mask=mask)
        tl.store(x_ptr + row * n_cols + cols, cur + prev, mask=mask)


@triton.jit
def dot_loop_kernel(a_ptr, b_ptr, c_ptr, n_tiles, TILE: tl.constexpr):
    # A loop with a dot: Triton pipelines it with the kernel's num_stages; with num_stages=1 it
    # does not, and nvidia_pipeline_dots asks it to.
    offs = tl.arange(0, TILE)[:, None] * TILE + tl.arange(0, TILE)[None, :]
    acc = tl.zeros([TILE, TILE], dtype=tl.float32)
    for t in range(0, n_tiles):
        acc = tl.dot(tl.load(a_ptr + t * TILE * TILE + offs), tl.load(b_ptr + offs), acc)
    tl.store(c_ptr + offs, acc)


@triton.jit
def dot_loop_staged_kernel(a_ptr, b_ptr, c_ptr, n_tiles, TILE: tl.constexpr, STAGES: tl.constexpr):
    # dot_loop_kernel with tl.range(..., num_stages=STAGES) written by hand.
    offs = tl.arange(0, TILE)[:, None] * TILE + tl.arange(0, TILE)[None, :]
    acc = tl.zeros([TILE, TILE], dtype=tl.float32)
    for t in tl.range(0, n_tiles, num_stages=STAGES):
        acc = tl.dot(tl.load(a_ptr + t * TILE * TILE + offs), tl.load(b_ptr + offs), acc)
    tl.store(c_ptr + offs, acc)


HOPPER = GPUTarget("cuda", 90, 32)
AMPERE = GPUTarget("cuda", 80, 32)
ASYNC_COPY = "ttg.async_copy_global_to_local"
DOT_SIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "n_tiles": "i32"}
#: 16-byte aligned pointers, as the JIT specializes torch tensors: the pipeliner skips loads of
#: less than 32 bits per thread, which unaligned fp16 loads are.
ALIGNED = {(i,): [["tt.divisibility", 16]] for i in range(3)}


def compile_dot_loop(pass_name: str, enabled: bool, kernel_stages: int, hand_staged: int | None = None,
                     target: GPUTarget = HOPPER, **options: Any) -> Any:
    """``kernel_stages``: Triton's num_stages for the kernel; ``hand_staged``: compile
    dot_loop_staged_kernel with that ``tl.range`` depth instead of dot_loop_kernel; ``options``:
    the pass's (``extra_stages=2`` is its ``extra-stages``)."""
    fn, constexprs = (dot_loop_kernel, {"TILE": 64}) if hand_staged is None else \
        (dot_loop_staged_kernel, {"TILE": 64, "STAGES": hand_staged})
    return compile_through_cubin(fn, DOT_SIG, constexprs, target=target,
                                 attrs=ALIGNED, options={"num_stages": kernel_stages},
                                 pass_options={k.replace("_", "-"): v for k, v in options.items()},
                                 passes=[pass_name] if enabled else [])


def body(ir: str) -> str:
    """The IR without its module attributes (which name the plugins the compile loaded)."""
    return "\n".join(line for line in ir.splitlines() if "module attributes" not in line)


def stages(ir: str) -> list[str]:
    """Every ``tt.num_stages`` the IR's loops carry."""
    return re.findall(r"tt\.num_stages = (\d+)", ir)
