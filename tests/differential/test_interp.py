"""The oracle itself: every integer op the interpreter knows, at every width (i1, i8, i16, i32,
i64), on the limits of the type, against plain Python integer semantics (two's complement,
trunc/ceil/floor division, undefined behaviour flagged per lane)."""

from __future__ import annotations

import itertools

import pytest

import numpy  # noqa: E402,F401  (a test dependency: pip install -e .[test]; a missing one fails)

import numpy as np  # noqa: E402

from tests.differential.harness import columns  # noqa: E402
from tests.differential.host_passes import print_ir  # noqa: E402
from tests.differential.interp import Machine  # noqa: E402
from tests.differential.loop_kernels import to_signed  # noqa: E402
from tests.differential.mlir_text import parse_module  # noqa: E402

WIDTHS = (1, 8, 16, 32, 64)


def _values(w: int) -> list[int]:
    top = 1 << (w - 1)
    vals = {0, 1, -1, top - 1, -top, top - 2, -top + 1, 2, -2, 3, 7, -7, top // 2, -top // 2}
    return sorted({to_signed(v, w) for v in vals})


def _u(v: int, w: int) -> int:
    return v & ((1 << w) - 1)


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


# op -> (python function on (a, b, w) returning the exact result or None for undefined behaviour)
BINARY = {
    "addi": lambda a, b, w: a + b,
    "subi": lambda a, b, w: a - b,
    "muli": lambda a, b, w: a * b,
    "andi": lambda a, b, w: a & b,
    "ori": lambda a, b, w: a | b,
    "xori": lambda a, b, w: a ^ b,
    "maxsi": lambda a, b, w: max(a, b),
    "minsi": lambda a, b, w: min(a, b),
    "maxui": lambda a, b, w: a if _u(a, w) >= _u(b, w) else b,
    "minui": lambda a, b, w: a if _u(a, w) <= _u(b, w) else b,
    "divsi": lambda a, b, w: None if b == 0 or (a == -(1 << (w - 1)) and b == -1) else _trunc_div(a, b),
    "remsi": lambda a, b, w: None if b == 0 or (a == -(1 << (w - 1)) and b == -1) else a - _trunc_div(a, b) * b,
    "ceildivsi": lambda a, b, w: None if b == 0 or (a == -(1 << (w - 1)) and b == -1) else -((-a) // b),
    "floordivsi": lambda a, b, w: None if b == 0 or (a == -(1 << (w - 1)) and b == -1) else a // b,
    "divui": lambda a, b, w: None if b == 0 else _u(a, w) // _u(b, w),
    "remui": lambda a, b, w: None if b == 0 else _u(a, w) % _u(b, w),
    "ceildivui": lambda a, b, w: None if b == 0 else -((-_u(a, w)) // _u(b, w)),
    "shli": lambda a, b, w: None if _u(b, w) >= w else a << _u(b, w),
    "shrsi": lambda a, b, w: None if _u(b, w) >= w else a >> _u(b, w),
    "shrui": lambda a, b, w: None if _u(b, w) >= w else _u(a, w) >> _u(b, w),
}
PREDS = {
    "eq": lambda a, b, w: a == b, "ne": lambda a, b, w: a != b,
    "slt": lambda a, b, w: a < b, "sle": lambda a, b, w: a <= b,
    "sgt": lambda a, b, w: a > b, "sge": lambda a, b, w: a >= b,
    "ult": lambda a, b, w: _u(a, w) < _u(b, w), "ule": lambda a, b, w: _u(a, w) <= _u(b, w),
    "ugt": lambda a, b, w: _u(a, w) > _u(b, w), "uge": lambda a, b, w: _u(a, w) >= _u(b, w),
}


def _module(w: int) -> str:
    t = f"i{w}"
    lines = [f"tt.func @f(%a: {t}, %b: {t}) -> ({', '.join([t] * len(BINARY) + ['i1'] * len(PREDS))}) {{"]
    names = []
    for op in BINARY:
        lines.append(f"  %{op} = arith.{op} %a, %b : {t}")
        names.append(f"%{op}")
    for p in PREDS:
        lines.append(f"  %{p} = arith.cmpi {p}, %a, %b : {t}")
        names.append(f"%{p}")
    lines.append(f"  tt.return {', '.join(names)} : {', '.join([t] * len(BINARY) + ['i1'] * len(PREDS))}")
    lines.append("}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("w", WIDTHS)
def test_binary_ops_and_predicates_at_the_limits(w):
    cases = list(itertools.product(_values(w), repeat=2))
    func = parse_module(print_ir(_module(w)))["f"]
    # One lane per op and pair, so undefined behaviour is attributed to the one op that has it.
    for k, (op, fn) in enumerate(BINARY.items()):
        res = Machine(len(cases)).run(func, columns(cases))
        got = res.returns[k]
        for lane, (a, b) in enumerate(cases):
            exp = fn(a, b, w)
            if exp is None:
                continue  # undefined here; other ops of the same lane may be fine
            assert int(got[lane]) == to_signed(exp, w), (op, w, a, b, int(got[lane]))
    ub = np.array([any(fn(a, b, w) is None for fn in BINARY.values()) for a, b in cases])
    assert (res.undefined == ub).all()
    for k, (p, fn) in enumerate(PREDS.items(), start=len(BINARY)):
        got = res.returns[k]
        exp = np.array([-1 if fn(a, b, w) else 0 for a, b in cases])
        assert (got == exp).all(), (p, w)


CASTS = [(8, 16), (8, 64), (16, 32), (32, 64), (1, 32), (1, 64)]


@pytest.mark.parametrize("src,dst", CASTS)
def test_casts_at_the_limits(src, dst):
    text = (f"tt.func @f(%a: i{src}, %b: i{dst}) -> (i{dst}, i{dst}, i{src}) {{\n"
            f"  %s = arith.extsi %a : i{src} to i{dst}\n"
            f"  %u = arith.extui %a : i{src} to i{dst}\n"
            f"  %t = arith.trunci %b : i{dst} to i{src}\n"
            f"  tt.return %s, %u, %t : i{dst}, i{dst}, i{src}\n}}\n")
    func = parse_module(print_ir(text))["f"]
    cases = list(zip(_values(src) * 3, _values(dst) * 3))
    res = Machine(len(cases)).run(func, columns(cases))
    for lane, (a, b) in enumerate(cases):
        assert int(res.returns[0][lane]) == a
        assert int(res.returns[1][lane]) == to_signed(_u(a, src), dst)
        assert int(res.returns[2][lane]) == to_signed(b, src)


@pytest.mark.parametrize("w,unsigned_loop", list(itertools.product((8, 16, 32, 64), (False, True))))
def test_loop_trip_counts_at_the_limits(w, unsigned_loop):
    t = f"i{w}"
    kind = "unsigned " if unsigned_loop else ""
    text = (f"tt.func @f(%lb: {t}, %ub: {t}, %step: {t}) -> {t} {{\n"
            f"  %c0 = arith.constant 0 : {t}\n"
            f"  %r = scf.for {kind}%iv = %lb to %ub step %step iter_args(%a = %c0) -> ({t}) : {t} {{\n"
            f"    %x = arith.xori %a, %iv : {t}\n    scf.yield %x : {t}\n  }}\n"
            f"  tt.return %r : {t}\n}}\n")
    func = parse_module(print_ir(text))["f"]
    top = 1 << (w - 1)
    cases = []
    for lb in _values(w):
        for d in (-3, -1, 0, 1, 2, 5, 17):
            for step in (1, 2, 3, 7):
                cases.append((lb, to_signed(lb + d, w), step))
    res = Machine(len(cases), max_trips=64).run(func, columns(cases))
    for lane, (lb, ub, step) in enumerate(cases):
        lo, hi = (_u(lb, w), _u(ub, w)) if unsigned_loop else (lb, ub)
        trips = max(0, -((lo - hi) // step))
        if trips > 64:
            assert res.runaway[lane]
            continue
        acc = 0
        for k in range(trips):
            acc ^= to_signed(lb + k * step, w)
        assert (int(res.returns[0][lane]), int(res.trips[lane])) == (acc, trips), (lb, ub, step)
        assert bool(res.iv_wrap[lane]) == (trips > 0 and lo + trips * step > (
            (1 << w) - 1 if unsigned_loop else top - 1))
