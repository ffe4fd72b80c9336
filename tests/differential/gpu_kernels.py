"""Triton kernels for the LoopSplit differential checks through the ordinary JIT.

``issue14`` and ``issue14_n_plus_one`` are the kernels of issue 14 as written there. ``batch``
runs one argument set per program (bounds and comparand loaded from tensors, so one launch
covers thousands of cases) and stores the accumulator and the trip count; its constexprs pick
the predicate (< <= > >= == !=), signed or unsigned comparison, step, offsets, and the scalar
or 2-D tensor form. Host reference: ``reference``. ``issue26_unsigned`` / ``issue26_signed``
are the reproducers of issue 26 (a run-time divisor with constant loop bounds), reference
``issue26_reference``.
"""

from __future__ import annotations

import triton
import triton.language as tl

PREDS = ("lt", "le", "gt", "ge", "eq", "ne")


@triton.jit
def issue14(out, lb, ub, n):
    acc = 0
    for i in range(lb, ub):
        if i < n:
            acc = acc * 3 + 1
        else:
            acc = acc * 3 + 2
    tl.store(out, acc)


@triton.jit
def issue14_n_plus_one(out, lb, ub, n):
    acc = 0
    for i in range(lb, ub):
        if i < n + 1:
            acc = acc * 3 + 1
        else:
            acc = acc * 3 + 2
    tl.store(out, acc)


@triton.jit
def _compare(x, y, PRED: tl.constexpr):
    if PRED == 0:
        c = x < y
    elif PRED == 1:
        c = x <= y
    elif PRED == 2:
        c = x > y
    elif PRED == 3:
        c = x >= y
    elif PRED == 4:
        c = x == y
    else:
        c = x != y
    return c


@triton.jit
def batch(lbs, ubs, ns, out, trips, STEP: tl.constexpr, IV_OFF: tl.constexpr,
          INV_OFF: tl.constexpr, PRED: tl.constexpr, UNSIGNED: tl.constexpr,
          TENSOR: tl.constexpr, R: tl.constexpr):
    pid = tl.program_id(0)
    lb = tl.load(lbs + pid)
    ub = tl.load(ubs + pid)
    n = tl.load(ns + pid)
    cnt = 0
    if TENSOR:
        rows = tl.arange(0, R)
        acc = tl.zeros((R, R), dtype=lbs.dtype.element_ty)
        for i in range(lb, ub, STEP):
            cols = i + IV_OFF + rows
            inv = n + INV_OFF + rows
            if UNSIGNED:
                c = _compare(cols.to(tl.uint64 if lbs.dtype.element_ty == tl.int64 else tl.uint32,
                                     bitcast=True)[None, :],
                             inv.to(tl.uint64 if lbs.dtype.element_ty == tl.int64 else tl.uint32,
                                    bitcast=True)[:, None], PRED)
            else:
                c = _compare(cols[None, :], inv[:, None], PRED)
            acc = acc * 3 + tl.where(c, 1, 2) + i
            cnt += 1
        offs = pid * R * R + rows[:, None] * R + rows[None, :]
        tl.store(out + offs, acc)
    else:
        acc = lb * 0
        for i in range(lb, ub, STEP):
            x = i + IV_OFF
            inv = n + INV_OFF
            if UNSIGNED:
                c = _compare(x.to(tl.uint64 if lbs.dtype.element_ty == tl.int64 else tl.uint32,
                                  bitcast=True),
                             inv.to(tl.uint64 if lbs.dtype.element_ty == tl.int64 else tl.uint32,
                                    bitcast=True), PRED)
            else:
                c = _compare(x, inv, PRED)
            acc = acc * 3 + tl.where(c, 1, 2) + i
            cnt += 1
        tl.store(out + pid, acc)
    tl.store(trips + pid, cnt)


# Issue 26: a run-time divisor of the rows and constant loop bounds. acc[0, 0] = 44 for every
# divisor (rows 0 // d + 100 = 100 is >= the columns of the first two trips only); the pass
# used to return 0 where its guard d >= 1 fails (unsigned d >= 2^31, signed nq < 0). Not
# specialized on the divisor, so d = 1 also takes the run-time path.
@triton.jit(do_not_specialize=["d"])
def issue26_unsigned(out, d: tl.uint32):
    offs_m = tl.arange(0, 16).to(tl.uint32) // d + 100
    acc = tl.zeros([16, 16], dtype=tl.int32)
    for start_n in range(0, 200, 64):
        offs_n = start_n + tl.arange(0, 16)
        mask = offs_m[:, None] >= offs_n[None, :]
        acc = acc * 3 + tl.where(mask, 1, 2)
    r = tl.arange(0, 16)
    tl.store(out + r[:, None] * 16 + r[None, :], acc)


@triton.jit(do_not_specialize=["nq"])
def issue26_signed(out, nq):
    offs_m = tl.arange(0, 16) // nq + 100
    acc = tl.zeros([16, 16], dtype=tl.int32)
    for start_n in range(0, 200, 64):
        offs_n = start_n + tl.arange(0, 16)
        mask = offs_m[:, None] >= offs_n[None, :]
        acc = acc * 3 + tl.where(mask, 1, 2)
    r = tl.arange(0, 16)
    tl.store(out + r[:, None] * 16 + r[None, :], acc)


# The issue's ten launches: (kernel, divisor).
ISSUE26_LAUNCHES = ([("issue26_unsigned", d) for d in (1, 7, 2**31 - 1, 2**31, 3_000_000_000,
                                                       2**32 - 1)]
                    + [("issue26_signed", nq) for nq in (-1, -2, -7, 3)])


def issue26_reference(divisor: int, signed: bool) -> list[int]:
    """The 16x16 accumulator of the issue 26 kernels, row-major, in exact integers."""
    out = []
    for row in range(16):
        q = int(row / divisor) if signed else row // divisor  # trunc (signed), floor (unsigned)
        for col in range(16):
            acc = 0
            for start_n in range(0, 200, 64):
                acc = acc * 3 + (1 if q + 100 >= start_n + col else 2)
            out.append(acc)
    return out


def _wrap(v: int, width: int) -> int:
    v &= (1 << width) - 1
    return v - (1 << width) if v >> (width - 1) else v


def reference(lb: int, ub: int, n: int, *, width: int, step: int, iv_off: int, inv_off: int,
              pred: str, unsigned: bool, rows: int = 0) -> tuple[list[int], int]:
    """The batch kernel's (acc elements, trip count) for one argument set, in exact integers."""
    mask = (1 << width) - 1
    count = max(0, -((lb - ub) // step))
    lanes = [(r, c) for r in range(rows) for c in range(rows)] if rows else [(0, 0)]
    acc = [0] * len(lanes)
    for k in range(count):
        i = lb + k * step
        for j, (r, c) in enumerate(lanes):
            x = _wrap(i + iv_off + c, width)
            y = _wrap(n + inv_off + r, width)
            if unsigned:
                x, y = x & mask, y & mask
            ok = {"lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y, "eq": x == y,
                  "ne": x != y}[pred]
            acc[j] = _wrap(acc[j] * 3 + (1 if ok else 2) + i, width)
    return acc, count
