"""A lane-parallel interpreter of the arith/scf/tt subset, with exact integer semantics.

One run executes a function for N argument sets at once ("lanes"): every SSA value is a numpy
array of shape ``(N, *tensor_shape)``. Integers of every width are held as int64 numbers that are
the sign-extension of their N-bit two's-complement pattern, so i1/i8/i16/i32/i64 wrap exactly,
signed and unsigned predicates and min/max read the right view, and division follows MLIR
(trunc/ceil/floor, division by zero or INT_MIN / -1 is undefined behaviour and flagged per lane).

Control flow is executed SIMT-style under an active mask: ``scf.if`` runs both regions under
complementary masks and selects; ``scf.for`` computes each lane's trip count exactly
(``ceildiv(ub - lb, step)`` when ``lb < ub`` under the loop's signedness, else 0) and runs
iteration k on the lanes with k < trips. Every executed iteration is counted per lane and per
loop, so a transformed program can be compared by results AND by trip counts. A lane whose loop
would run more than ``max_trips`` iterations is marked ``runaway`` (its exact trip count is still
recorded) instead of being executed, so a miscompile that turns 7 iterations into 6e18 is
reported, not waited for. A loop whose final increment ``lb + trips * step`` leaves the type's
range is marked ``iv_wrap``: lowered to LLVM (``iv < ub``, ``iv += step`` wrapping) it would not
stop where scf.for's trip count says.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from tests.differential.mlir_text import Block, Func, Op, Type, UnsupportedIR

Array = np.ndarray


def wrap(x: Array, width: int) -> Array:
    """Sign-extended value of the low ``width`` bits of int64 ``x``."""
    if width >= 64:
        return x.astype(np.int64, copy=False)
    off = 1 << (width - 1)
    return ((x + off) & ((1 << width) - 1)) - off


def unsigned(x: Array, width: int) -> Array:
    """The unsigned value of a canonical ``width``-bit integer (uint64 for i64)."""
    if width >= 64:
        return x.astype(np.int64, copy=False).view(np.uint64)
    return x & ((1 << width) - 1)


def _cmp(pred: str, a: Array, b: Array, width: int) -> Array:
    if pred in ("eq", "ne", "slt", "sle", "sgt", "sge"):
        x, y = a, b
    elif pred in ("ult", "ule", "ugt", "uge"):
        x, y = unsigned(a, width), unsigned(b, width)
    else:
        raise UnsupportedIR(f"arith.cmpi predicate {pred}")
    op = pred[-2:] if pred not in ("eq", "ne") else pred
    r = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[op]
    return np.where(r, -1, 0).astype(np.int64)


def _cmpf(pred: str, a: Array, b: Array) -> Array:
    unordered = np.isnan(a) | np.isnan(b)
    base = pred[1:] if pred[0] in "ou" else pred
    with np.errstate(invalid="ignore"):
        table = {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b,
                 "ge": a >= b, "rd": ~unordered, "no": unordered}
    if pred == "true":
        r = np.ones_like(unordered)
    elif pred == "false":
        r = np.zeros_like(unordered)
    elif pred == "ord":
        r = ~unordered
    elif pred == "uno":
        r = unordered
    elif pred[0] == "o":
        r = table[base] & ~unordered
    elif pred[0] == "u":
        r = table[base] | unordered
    else:
        raise UnsupportedIR(f"arith.cmpf predicate {pred}")
    return np.where(r, -1, 0).astype(np.int64)


def _signed_zero(r: Array, a: Array, b: Array, is_max: bool) -> Array:
    """``r`` (a min or max of ``a`` and ``b``) with -0 ordered below +0, as IEEE 754-2019's
    maximum/maximumNumber and LLVM's llvm.maximum order them (numpy returns either zero; LLVM's
    maxnum may, so this is one of its allowed results, the one a sign-aware max gives)."""
    both = (a == 0) & (b == 0)
    negative = np.signbit(a) & np.signbit(b) if is_max else np.signbit(a) | np.signbit(b)
    return np.where(both, np.where(negative, -0.0, 0.0).astype(r.dtype), r)


def _floordiv(a: int, b: int) -> int:
    return a // b


def _truncdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _ceildiv(a: int, b: int) -> int:
    return -((-a) // b)


@dataclass
class StoreEvent:
    addr: Array
    value: Array
    mask: Array  # bool, same shape, already and-ed with the active lanes


@dataclass
class PrintEvent:
    message: str
    mask: Array  # (N,) lanes that printed
    values: list[Array]


@dataclass
class RunResult:
    returns: list[Array]
    stores: list[StoreEvent]
    prints: list[PrintEvent]
    trips: Array  # (N,) uint64: iterations executed over all loops
    loop_trips: list[Array]  # per scf.for op, in program order of first execution
    loop_annotated: list[bool]  # per entry of loop_trips: the op has an llvm.loop_annotation
    runaway: Array  # (N,) bool
    iv_wrap: Array  # (N,) bool
    undefined: Array  # (N,) bool: division by zero, INT_MIN / -1, shift >= width, step <= 0
    assert_failed: Array  # (N,) bool


@dataclass
class Machine:
    lanes: int
    max_trips: int = 4096
    #: initial memory: value at an address (int64 addresses; per element type kind).
    memory: Callable[[Array, Type], Array] | None = None
    #: (N, 3) program ids and grid sizes for tt.get_program_id / tt.get_num_programs.
    program_id: Array | None = None
    num_programs: Array | None = None
    #: a load reads what this run stored at its address (same case), else ``memory``. Off by
    #: default: most kernels here never read what they wrote, and a stateless memory keeps the
    #: interpreter cheap; nan_inf_check's reload fast path reads back its own store.
    forward_stores: bool = False
    _stores: list[StoreEvent] = field(default_factory=list)
    _prints: list[PrintEvent] = field(default_factory=list)
    _loops: dict[int, Array] = field(default_factory=dict)

    def run(self, func: Func, args: Sequence[Array | int | float]) -> RunResult:
        n = self.lanes
        if len(args) != len(func.args):
            raise ValueError(f"@{func.name} takes {len(func.args)} arguments, got {len(args)}")
        self._stores, self._prints, self._loops, self._annotated = [], [], {}, {}
        self.trips = np.zeros(n, np.uint64)
        self.runaway = np.zeros(n, bool)
        self.iv_wrap = np.zeros(n, bool)
        self.undefined = np.zeros(n, bool)
        self.assert_failed = np.zeros(n, bool)
        env: dict[str, Array] = {}
        for name, ty, value in zip(func.args, func.arg_types, args):
            env[name] = self._coerce(value, ty)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            rets = self._block(func.body, env, np.ones(n, bool))
        return RunResult(rets, self._stores, self._prints, self.trips,
                         list(self._loops.values()),
                         [self._annotated[key] for key in self._loops], self.runaway, self.iv_wrap,
                         self.undefined, self.assert_failed)

    # -- helpers ---------------------------------------------------------------------------
    def _coerce(self, value: Array | int | float, ty: Type) -> Array:
        n = self.lanes
        if ty.kind == "float":
            arr = np.asarray(value, np.float64 if ty.width == 64 else np.float32)
        else:
            arr = np.asarray(value)
            if arr.dtype == object or arr.dtype == np.uint64:
                arr = np.array([int(v) & ((1 << 64) - 1) for v in np.ravel(arr)],
                               np.uint64).view(np.int64).reshape(arr.shape)
            arr = wrap(arr.astype(np.int64), ty.width if ty.kind == "int" else 64)
        return np.broadcast_to(arr, (n,) + ty.shape) if arr.shape != (n,) + ty.shape else arr

    def _full(self, value: object, ty: Type) -> Array:
        if ty.kind == "float":
            return np.full((self.lanes,) + ty.shape, value,
                           np.float64 if ty.width == 64 else np.float32)
        v = int(value)  # type: ignore[arg-type]
        v = ((v + (1 << 63)) % (1 << 64)) - (1 << 63)
        return wrap(np.full((self.lanes,) + ty.shape, v, np.int64), ty.width)

    @staticmethod
    def _lanewise(mask: Array, like: Array) -> Array:
        return mask.reshape(mask.shape + (1,) * (like.ndim - mask.ndim))

    def _flag_undefined(self, bad: Array, active: Array) -> None:
        if bad.ndim > 1:
            bad = bad.reshape(bad.shape[0], -1).any(axis=1)
        self.undefined |= bad & active

    def _pyint(self, fn: Callable[[int, int], int], a: Array, b: Array, width: int,
               unsigned_ops: bool, active: Array) -> Array:
        av = unsigned(a, width) if unsigned_ops else a
        bv = unsigned(b, width) if unsigned_ops else b
        zero = bv == 0
        if not unsigned_ops:
            zero = zero | ((av == -(1 << (width - 1))) & (bv == -1))
        self._flag_undefined(zero, active)
        flat_a = np.broadcast_to(av, np.broadcast_shapes(av.shape, bv.shape)).ravel().tolist()
        flat_b = np.broadcast_to(bv, np.broadcast_shapes(av.shape, bv.shape)).ravel().tolist()
        out = [fn(int(x), int(y) or 1) & ((1 << 64) - 1) for x, y in zip(flat_a, flat_b)]
        res = np.array(out, np.uint64).view(np.int64).reshape(np.broadcast_shapes(av.shape, bv.shape))
        return wrap(res, width)

    # -- execution -------------------------------------------------------------------------
    def _block(self, block: Block, env: dict[str, Array], active: Array) -> list[Array]:
        for op in block.ops:
            if op.name in ("scf.yield", "tt.return", "tt.reduce.return"):
                return [env[o] for o in op.operands]
            outs = self._op(op, env, active)
            for name, value in zip(op.results, outs):
                env[name] = value
        return []

    def _op(self, op: Op, env: dict[str, Array], active: Array) -> list[Array]:
        name = op.name
        ins = [env[o] for o in op.operands]
        ty = op.types[0] if op.types else None
        if name == "arith.constant":
            return [self._full(op.attrs["value"], ty)]
        if name == "scf.for":
            return self._for(op, ins, env, active)
        if name == "scf.if":
            cond = ins[0] != 0
            then = self._block(op.regions[0], env, active & cond)
            els = self._block(op.regions[1], env, active & ~cond)
            return [np.where(self._lanewise(cond, t), t, e) for t, e in zip(then, els)]
        if name.startswith("arith.") or name.startswith("math."):
            return [self._arith(op, ins, ty, active)]
        if name.startswith("tt."):
            return self._tt(op, ins, ty, env, active)
        if name == "triton_ext_range.assume_range":
            # A value outside the stated range is undefined behaviour (as llvm.intr.assume).
            x = ins[0]
            self._flag_undefined((x < op.attrs["lo"]) | (x > op.attrs["hi"]), active)
            return [x]
        raise UnsupportedIR(f"op {name} is outside the interpreted subset: {op.text}")

    def _arith(self, op: Op, ins: list[Array], ty: Type, active: Array) -> Array:
        name = op.name[op.name.index(".") + 1:]
        if name == "cmpi":
            return _cmp(op.attrs["predicate"], ins[0], ins[1], op.attrs["operand_type"].width)
        if name == "cmpf":
            return _cmpf(op.attrs["predicate"], ins[0], ins[1])
        if name == "select":
            c = ins[0] != 0
            return np.where(self._lanewise(c, ins[1]) if c.ndim < ins[1].ndim else c, ins[1], ins[2])
        if ty.kind == "float":
            a = ins[0]
            b = ins[1] if len(ins) > 1 else None
            fl = {"addf": lambda: a + b, "subf": lambda: a - b, "mulf": lambda: a * b,
                  "divf": lambda: a / b, "negf": lambda: -a, "absf": lambda: np.abs(a),
                  "maxnumf": lambda: _signed_zero(np.fmax(a, b), a, b, True),
                  "minnumf": lambda: _signed_zero(np.fmin(a, b), a, b, False),
                  "maximumf": lambda: _signed_zero(np.maximum(a, b), a, b, True),
                  "minimumf": lambda: _signed_zero(np.minimum(a, b), a, b, False)}
            dt = np.float64 if ty.width == 64 else np.float32
            if name in fl:
                return fl[name]().astype(dt)
            if name in ("sitofp", "uitofp"):
                src = self._src_width(op)
                return (unsigned(a, src) if name == "uitofp" else a).astype(dt)
            if name in ("extf", "truncf"):
                return a.astype(dt)
            raise UnsupportedIR(f"arith.{name} on floats: {op.text}")
        w = ty.width if ty.kind == "int" else 64
        a = ins[0]
        b = ins[1] if len(ins) > 1 else None
        if name == "addi":
            return wrap(a + b, w)
        if name == "subi":
            return wrap(a - b, w)
        if name == "muli":
            return wrap(a * b, w)
        if name in ("andi", "ori", "xori"):
            return {"andi": a & b, "ori": a | b, "xori": a ^ b}[name]
        if name in ("maxsi", "minsi"):
            return np.maximum(a, b) if name == "maxsi" else np.minimum(a, b)
        if name in ("maxui", "minui"):
            ge = unsigned(a, w) >= unsigned(b, w)
            return np.where(ge, a, b) if name == "maxui" else np.where(ge, b, a)
        if name in ("divsi", "remsi", "ceildivsi", "floordivsi"):
            fn = {"divsi": _truncdiv, "remsi": lambda x, y: x - _truncdiv(x, y) * y,
                  "ceildivsi": _ceildiv, "floordivsi": _floordiv}[name]
            return self._pyint(fn, a, b, w, False, active)
        if name in ("divui", "remui", "ceildivui"):
            fn = {"divui": lambda x, y: x // y, "remui": lambda x, y: x % y,
                  "ceildivui": lambda x, y: -((-x) // y)}[name]
            return self._pyint(fn, a, b, w, True, active)
        if name in ("shli", "shrsi", "shrui"):
            sh = unsigned(b, w)
            self._flag_undefined(sh >= w, active)
            s = np.minimum(sh, w - 1).astype(np.int64)
            if name == "shli":
                return wrap(np.left_shift(a, s), w)
            if name == "shrsi":
                return np.right_shift(a, s)
            return wrap(np.right_shift(unsigned(a, w).astype(np.uint64), s.astype(np.uint64))
                        .view(np.int64) if w >= 64 else np.right_shift(unsigned(a, w), s), w)
        if name in ("extsi", "index_cast"):
            return wrap(a, w)
        if name in ("extui", "index_castui"):
            src = self._src_width(op)
            return wrap(unsigned(a, src).astype(np.uint64).view(np.int64) if src >= 64
                        else unsigned(a, src), w)
        if name == "trunci":
            return wrap(a, w)
        if name in ("fptosi", "fptoui"):
            return wrap(np.trunc(a).astype(np.int64), w)
        raise UnsupportedIR(f"arith.{name}: {op.text}")

    @staticmethod
    def _src_width(op: Op) -> int:
        from tests.differential.mlir_text import parse_type, _sig

        _, sig = _sig(op.text.split("=", 1)[-1])
        return parse_type(sig.split(" to ")[0]).width

    def _tt(self, op: Op, ins: list[Array], ty: Type | None, env: dict[str, Array],
            active: Array) -> list[Array]:
        name = op.name[3:]
        n = self.lanes
        if name == "splat":
            src = ins[0].reshape((n,) + (1,) * len(ty.shape))
            return [np.broadcast_to(src, (n,) + ty.shape).copy()]
        if name == "make_range":
            r = np.arange(op.attrs["start"], op.attrs["end"], dtype=np.int64)
            return [np.broadcast_to(r, (n,) + ty.shape).copy()]
        if name == "expand_dims":
            return [np.expand_dims(ins[0], op.attrs["axis"] + 1)]
        if name in ("broadcast", "reshape"):
            if name == "reshape":
                return [ins[0].reshape((n,) + ty.shape)]
            return [np.broadcast_to(ins[0], (n,) + ty.shape).copy()]
        if name == "addptr":
            p, off = ins
            if off.ndim < p.ndim:
                off = self._lanewise(off, p)
            if p.ndim < off.ndim:
                p = self._lanewise(p, off)
            return [np.broadcast_to(p + off, (n,) + ty.shape).copy()]
        if name == "store":
            addr, value = ins[0], ins[1]
            mask = (ins[2] != 0) if len(ins) > 2 else np.ones(value.shape, bool)
            mask = mask & self._lanewise(active, mask)
            self._stores.append(StoreEvent(np.broadcast_to(addr, value.shape).copy(),
                                           value.copy(), mask))
            return []
        if name == "load":
            addr = ins[0]
            if self.memory is None:
                raise UnsupportedIR("tt.load needs Machine.memory")
            data = self.memory(addr, ty)
            if self.forward_stores:
                data = self._forwarded(addr, data)
            if len(ins) > 1:
                mask = ins[1] != 0
                other = ins[2] if len(ins) > 2 else None
                if other is None:
                    # Triton leaves masked-off lanes undefined: model them as a value no
                    # correct program may depend on (the differential tests check that).
                    other = np.full_like(data, -7777 if ty.kind == "int" else 7777.5)
                data = np.where(mask, data, other)
            return [data]
        if name in ("get_program_id", "get_num_programs"):
            src = self.program_id if name == "get_program_id" else self.num_programs
            if src is None:
                raise UnsupportedIR(f"tt.{name} needs Machine.program_id/num_programs")
            return [src[:, op.attrs["axis"]].astype(np.int64)]
        if name == "print":
            self._prints.append(PrintEvent(op.attrs["message"], active.copy(), [v.copy() for v in ins]))
            return []
        if name == "assert":
            c = ins[0] != 0
            bad = ~c if c.ndim == 1 else ~c.reshape(n, -1).all(axis=1)
            self.assert_failed |= bad & active
            return []
        if name == "dot":
            # acc + a @ b per lane; floats in float64 then rounded to the result type once (the
            # differential tests compare a program with itself, not with a GPU's roundings).
            a, b, acc = ins
            if ty.kind == "float":
                dt = np.float64 if ty.width == 64 else np.float32
                return [(acc.astype(np.float64) + np.matmul(a.astype(np.float64), b.astype(np.float64))).astype(dt)]
            return [wrap(acc + np.matmul(a.astype(object), b.astype(object)), ty.width)]
        if name == "reduce":
            return self._reduce(op, ins, active)
        if name == "elementwise_inline_asm":
            # loop_split's rounded multiply (rounding=mul-rn): PTX mul.rn is one correctly
            # rounded product, never fused, subnormals kept, as numpy's f32/f64 multiply.
            if op.attrs.get("asm") in ("mul.rn.f32 $0, $1, $2;", "mul.rn.f64 $0, $1, $2;"):
                return [(ins[0] * ins[1]).astype(ins[0].dtype)]
            raise UnsupportedIR(f"inline asm outside the interpreted subset: {op.text}")
        if name == "dot":
            a, b, c = ins
            return [(np.matmul(a.astype(np.float64), b.astype(np.float64)) + c).astype(c.dtype)]
        raise UnsupportedIR(f"tt.{name} is outside the interpreted subset: {op.text}")

    def _forwarded(self, addr: Array, data: Array) -> Array:
        """``data`` with each lane replaced by the last value stored at its address (per case,
        in program order; later lanes of one store win, as a later store does)."""
        n = self.lanes
        flat_addr = np.broadcast_to(addr, data.shape).reshape(n, -1)
        out = data.reshape(n, -1).copy()
        for ev in self._stores:
            ev_addr, ev_val, ev_mask = (x.reshape(n, -1) for x in (ev.addr, ev.value, ev.mask))
            for k in range(ev_addr.shape[1]):
                hit = ev_mask[:, k:k + 1] & (ev_addr[:, k:k + 1] == flat_addr)
                out = np.where(hit, ev_val[:, k:k + 1].astype(out.dtype), out)
        return out.reshape(data.shape)

    def _reduce(self, op: Op, ins: list[Array], active: Array) -> list[Array]:
        axis = op.attrs["axis"] + 1
        parts = [np.moveaxis(x, axis, 0) for x in ins]
        acc = [p[0] for p in parts]
        blk = op.regions[0]
        k = len(ins)
        for i in range(1, parts[0].shape[0]):
            env = dict(zip(blk.args, acc + [p[i] for p in parts]))
            acc = self._block(blk, env, active)
            if len(acc) != k:
                raise UnsupportedIR("tt.reduce region yields the wrong number of values")
        return acc

    def _for(self, op: Op, ins: list[Array], env: dict[str, Array], active: Array) -> list[Array]:
        lb, ub, step = ins[0], ins[1], ins[2]
        carried = [x.copy() for x in ins[3:]]
        blk = op.regions[0]
        ivty = blk.arg_types[0]
        w = ivty.width
        is_unsigned = bool(op.attrs.get("unsigned"))
        self._flag_undefined(step <= 0, active)
        lo = unsigned(lb, w) if is_unsigned else lb
        hi = unsigned(ub, w) if is_unsigned else ub
        nonempty = (lo < hi) & (step > 0)
        diff = (ub.astype(np.int64) - lb.astype(np.int64)).view(np.uint64) if w >= 64 else \
            (hi.astype(np.int64) - lo.astype(np.int64)).astype(np.uint64)
        st = np.where(step > 0, step, 1).astype(np.uint64)
        trips = np.where(nonempty, diff // st + (diff % st != 0), 0).astype(np.uint64)
        trips = np.where(active, trips, 0).astype(np.uint64)
        # Final increment lb + trips * step beyond the type (exact, in Python ints for i64).
        if w >= 64:
            lim = (1 << 64) - 1 if is_unsigned else (1 << 63) - 1
            los = lo.tolist()
            wr = [t and (int(a) + int(t) * int(s)) > lim
                  for a, t, s in zip(los, trips.tolist(), st.tolist())]
            self.iv_wrap |= np.array(wr, bool) & active
        else:
            lim = (1 << w) - 1 if is_unsigned else (1 << (w - 1)) - 1
            end = lo.astype(np.int64) + trips.astype(np.int64) * st.astype(np.int64)
            self.iv_wrap |= (trips > 0) & (end > lim) & active
        run_away = trips > np.uint64(self.max_trips)
        self.runaway |= run_away
        trips_run = np.where(run_away, 0, trips).astype(np.uint64)
        key = id(op)
        self._loops[key] = self._loops.get(key, np.zeros(self.lanes, np.uint64)) + trips
        self._annotated[key] = bool(op.attrs.get("annotated"))
        self.trips += trips
        stop = int(trips_run.max()) if trips_run.size else 0
        for k in range(stop):
            act = active & (trips_run > k)
            iv = wrap(lb + np.int64(k) * step, w)
            local = dict(env)
            local[blk.args[0]] = iv
            for name, value in zip(blk.args[1:], carried):
                local[name] = value
            ys = self._block(blk, local, act)
            carried = [np.where(self._lanewise(act, y), y, c) for y, c in zip(ys, carried)]
        return carried


def final_memory(stores: list[StoreEvent]) -> tuple[Array, Array, Array]:
    """(lane, address, value) of the last write to each address of each lane, sorted."""
    if not stores:
        e = np.zeros(0, np.int64)
        return e, e, e
    lanes, addrs, vals, seqs = [], [], [], []
    seq = 0
    for ev in stores:
        idx = np.nonzero(ev.mask)
        lanes.append(idx[0])
        addrs.append(ev.addr[idx])
        v = ev.value[idx]
        vals.append(v.astype(np.float64).view(np.int64) if v.dtype.kind == "f" else v)
        seqs.append(seq + np.arange(idx[0].size))
        seq += idx[0].size
    lane, addr, val, sq = (np.concatenate(x) for x in (lanes, addrs, vals, seqs))
    order = np.lexsort((sq, addr, lane))
    lane, addr, val = lane[order], addr[order], val[order]
    last = np.ones(lane.size, bool)
    last[:-1] = (lane[1:] != lane[:-1]) | (addr[1:] != addr[:-1])
    return lane[last], addr[last], val[last]


def mismatched_lanes(a: RunResult, b: RunResult, lanes: int) -> dict[str, Array]:
    """Per-lane differences between two runs of the same arguments: reason -> bool (N,)."""
    out: dict[str, Array] = {}
    ret = np.zeros(lanes, bool)
    if len(a.returns) != len(b.returns):
        ret[:] = True
    for x, y in zip(a.returns, b.returns):
        if x.dtype.kind == "f":
            diff = ~((x == y) | (np.isnan(x) & np.isnan(y)))
        else:
            diff = x != y
        ret |= diff.reshape(lanes, -1).any(axis=1) if diff.ndim > 1 else diff
    out["result"] = ret
    out["memory"] = _memory_differs(a, b, lanes)
    out["trips"] = a.trips != b.trips
    out["runaway"] = a.runaway != b.runaway
    out["iv_wrap"] = b.iv_wrap & ~a.iv_wrap
    out["undefined"] = b.undefined & ~a.undefined
    out["assert"] = a.assert_failed != b.assert_failed
    return out


def _memory_differs(a: RunResult, b: RunResult, lanes: int) -> Array:
    la, aa, va = final_memory(a.stores)
    lb, ab, vb = final_memory(b.stores)
    mem = np.zeros(lanes, bool)
    if la.size == lb.size and (la == lb).all() and (aa == ab).all() and (va == vb).all():
        return mem
    seen: dict[tuple[int, int], list[object]] = {}
    for tag, (ls, as_, vs) in enumerate(((la, aa, va), (lb, ab, vb))):
        for lane, addr, val in zip(ls.tolist(), as_.tolist(), vs.tolist()):
            seen.setdefault((lane, addr), [None, None])[tag] = val
    for (lane, _), (x, y) in seen.items():
        if x != y:
            mem[lane] = True
    return mem
