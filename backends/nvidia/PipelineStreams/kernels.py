"""Kernels shared by the tests and bench.py of nvidia_pipeline_streams and nvidia_pipeline_dots.

``row_sum_kernel`` is the case the pass is for: one program per row, a loop without a dot that
streams the row (``range(start, end, BLOCK)``, so tests can put the bounds anywhere in the
integer range). ``row_sum_staged_kernel`` is the same loop with ``tl.range(..., num_stages=3)``
written by hand. ``dot_loop_kernel`` is nvidia_pipeline_dots's case when it is compiled with
``num_stages=1`` (and a loop nvidia_pipeline_streams leaves alone); ``dot_loop_staged_kernel``
is it with ``tl.range(..., num_stages=2)`` written by hand.
"""

import triton
import triton.language as tl


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
def dot_loop_staged_kernel(a_ptr, b_ptr, c_ptr, n_tiles, TILE: tl.constexpr):
    # dot_loop_kernel with tl.range(..., num_stages=2) written by hand.
    offs = tl.arange(0, TILE)[:, None] * TILE + tl.arange(0, TILE)[None, :]
    acc = tl.zeros([TILE, TILE], dtype=tl.float32)
    for t in tl.range(0, n_tiles, num_stages=2):
        acc = tl.dot(tl.load(a_ptr + t * TILE * TILE + offs), tl.load(b_ptr + offs), acc)
    tl.store(c_ptr + offs, acc)


@triton.jit
def dot_loop_staged4_kernel(a_ptr, b_ptr, c_ptr, n_tiles, TILE: tl.constexpr):
    # dot_loop_kernel with tl.range(..., num_stages=4) written by hand: what nvidia_pipeline_deeper
    # should give a kernel compiled with num_stages=3.
    offs = tl.arange(0, TILE)[:, None] * TILE + tl.arange(0, TILE)[None, :]
    acc = tl.zeros([TILE, TILE], dtype=tl.float32)
    for t in tl.range(0, n_tiles, num_stages=4):
        acc = tl.dot(tl.load(a_ptr + t * TILE * TILE + offs), tl.load(b_ptr + offs), acc)
    tl.store(c_ptr + offs, acc)
