"""TTIR kernels for the LoopSplit differential tests, and boundary-weighted arguments for them.

Each kernel is one ``scf.for`` over ``[lb, ub)`` with a constant step whose body compares an
iv-affine side with a loop-invariant side, the way the pass finds it in real kernels: a scalar
``iv + c <pred> n + d`` or a 2-D causal-style mask ``(n + d + rows)[:, None] <pred> (iv + c +
cols)[None, :]``. The body folds the comparison and the iv into an accumulator
(``acc * 3 + select(c, 1, 2) + iv``, wrapping), so a dropped, repeated or reordered iteration,
or a wrong iv, changes the result; the interpreter counts the trips separately.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

PREDICATES = ("slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge", "eq", "ne")


@dataclass(frozen=True)
class LoopKernel:
    form: str  # "scalar" or "tensor"
    width: int  # 32 or 64
    unsigned_loop: bool  # scf.for unsigned
    pred: str
    iv_left: bool = True  # iv side is the cmpi's lhs
    step: int = 1
    iv_off: int = 0  # constant added to the iv side
    inv_off: int = 0  # constant added to the invariant (computed before the loop)
    rows: int = 4  # tensor form: make_range sizes (powers of two)
    cols: int = 4
    ranges: bool = True  # tensor form: False compares splats only (a one-element-wide range)
    const_bounds: tuple[int, int] | None = None  # lb, ub as constants in the IR (args unused)
    inv_inside: bool = False  # compute n + inv_off inside the loop body (as the front end does)
    # lb and n rounded to multiples of the step, `(x / step) * step`, before the loop: the pass
    # then knows where the split points fall on the iteration lattice (issue 17).
    lattice: bool = False
    # tensor form: the rows are `rows_op(make_range, rows_k)` with a constant (issue 17: monotone
    # maps such as vLLM's `offs_m // num_queries_per_kv`): "divsi", "divui", "shrsi", "minsi".
    rows_op: str = ""
    rows_k: int = 0
    # triton_ext_range.assume_range(lo, hi) on lb, ub and n (issue 17.3: facts decide guard
    # checks); arguments must then lie in [lo, hi] (fact_args).
    fact: tuple[int, int] | None = None
    # issue 17, masks AND-ed with a sequence-length mask: a second comparison `iv + iv_off2
    # (+ cols) <second> ub + inv_off2` (ub plays seq_len), AND-ed with the first.
    second: str = ""
    iv_off2: int = 0
    inv_off2: int = 0
    # issue 17, loop bounds: "min" runs to minsi(ub, n) (`min((start_m + 1) * BM, seq_len)`);
    # "mask" to extui(lb < n) * minsi(ub, n) (sglang's `block_mask * end_n`); "mask_scaled" to
    # (extui(lb < n) * ub) * step (lightllm's `block_mask * (start_m + 1) * BLOCK_M`);
    # "mask_select" to minsi(ub, n) * select(lb < n, 1, 0).
    ub_form: str = ""
    # issue 17, paged and vLLM-style loops: the iv side is `iv * iv_scale` (+ iv_off, + cols)
    iv_scale: int = 1
    # issue 17: the loop runs to n + ub_from_n (`(start_m + 1) * BLOCK_M` against `diag =
    # start_m * BLOCK_M - c`, as inv_off < 0 writes it): the %ub argument is unused
    ub_from_n: int | None = None
    lb_zero: bool = False  # the loop starts at the constant 0 (the %lb argument is unused)
    # issue 26: the invariant is `tt.get_program_id x` (times inv_pid when > 1; sign-extended
    # for i64) instead of %n, as in `start_m = tl.program_id(0) * BLOCK_M` (i32/i64 only);
    # the interpreter takes the ids from Machine.program_id.
    inv_pid: int = 0
    # issue 26: a "_rt" rows_op divides (shifts) by a fourth argument %d instead of a value
    # derived from n, so any divisor reaches it (unsigned d >= 2^31, negative, zero)
    div_arg: bool = False
    # issue 26: the invariant side holds no invariant scalar: n is replaced by the constant
    # inv_off (`offs_m = arange(0, 16) // d + 100`), so with constant bounds every split point
    # is a constant (while a run-time divisor still leaves a guard)
    inv_const: bool = False
    # the iv side also holds an invariant: `iv (* iv_scale) + iv_off + %ivinv`, a last argument
    # %ivinv (`kv_start + start_n + offs_n`): guard checks of two unknown terms, and for i64 loops
    # the 2^60 bounds
    iv_inv: bool = False
    # a negative inv_off is subtracted (`n - c`, arith.subi) instead of added
    inv_sub: bool = False

    @property
    def name(self) -> str:
        loop = "u" if self.unsigned_loop else "s"
        shape = f"{self.rows}x{self.cols}" if self.form == "tensor" else "scalar"
        if self.form == "tensor" and not self.ranges:
            shape += "-splat"
        side = "iv-lhs" if self.iv_left else "iv-rhs"
        bounds = f"-bounds{self.const_bounds[0]}..{self.const_bounds[1]}" if self.const_bounds else ""
        return (f"{shape}-i{self.width}-{loop}loop-{self.pred}-{side}-step{self.step}"
                f"-ivoff{self.iv_off}-invoff{self.inv_off}{'-inside' if self.inv_inside else ''}"
                f"{bounds}{'-lattice' if self.lattice else ''}"
                f"{f'-rows-{self.rows_op}{self.rows_k}' if self.rows_op else ''}"
                f"{f'-fact{self.fact[0]}..{self.fact[1]}' if self.fact else ''}"
                f"{f'-and-{self.second}-off{self.iv_off2}/{self.inv_off2}' if self.second else ''}"
                f"{f'-ub-{self.ub_form}' if self.ub_form else ''}{'-lb0' if self.lb_zero else ''}"
                f"{f'-ivx{self.iv_scale}' if self.iv_scale != 1 else ''}"
                f"{f'-ub=n+{self.ub_from_n}' if self.ub_from_n is not None else ''}"
                f"{f'-pidx{self.inv_pid}' if self.inv_pid else ''}{'-divarg' if self.div_arg else ''}"
                f"{'-invconst' if self.inv_const else ''}{'-ivinv' if self.iv_inv else ''}"
                f"{'-sub' if self.inv_sub else ''}")

    def ttir(self) -> str:
        t = f"i{self.width}"
        shape = f"{self.rows}x{self.cols}"
        tens = f"tensor<{shape}x{t}>"
        res_ty = tens if self.form == "tensor" else t
        extra = (f", %d: {t}" if self.div_arg else "") + (f", %ivinv: {t}" if self.iv_inv else "")
        lines = [
            f"tt.func @k(%lb0: {t}, %ub0: {t}, %n0: {t}{extra}) -> {res_ty} {{" if self.fact else
            f"tt.func @k(%lb: {t}, %ub: {t}, %n: {t}{extra}) -> {res_ty} {{",
        ]
        if self.fact:
            lines += [f"  %{v} = triton_ext_range.assume_range %{v}0, {self.fact[0]}, {self.fact[1]} : {t}"
                      for v in ("lb", "ub", "n")]
        lines += [
            f"  %c1 = arith.constant 1 : {t}",
            f"  %c2 = arith.constant 2 : {t}",
            f"  %c3 = arith.constant 3 : {t}",
            f"  %step = arith.constant {self.step} : {t}",
        ]
        inv = "%n"
        if self.inv_pid:
            lines.append("  %pid32 = tt.get_program_id x : i32")
            pid = "%pid32"
            if t != "i32":
                lines.append(f"  %pidw = arith.extsi %pid32 : i32 to {t}")
                pid = "%pidw"
            if self.inv_pid > 1:
                lines += [f"  %pidk = arith.constant {self.inv_pid} : {t}",
                          f"  %pidm = arith.muli {pid}, %pidk : {t}"]
                pid = "%pidm"
            inv = pid
        if self.lattice:
            lines += [f"  %lbq = arith.divsi %lb, %step : {t}",
                      f"  %lba = arith.muli %lbq, %step : {t}",
                      f"  %nq = arith.divsi {inv}, %step : {t}",
                      f"  %na = arith.muli %nq, %step : {t}"]
            inv = "%na"
        inv_lines: list[str] = []
        if self.inv_const:
            lines.append(f"  %invc = arith.constant {self.inv_off} : {t}")
            inv = "%invc"
        elif self.inv_off < 0 and self.inv_sub:
            inv_lines = [f"  %invoff = arith.constant {-self.inv_off} : {t}",
                         f"  %inv = arith.subi {inv}, %invoff : {t}"]
            inv = "%inv"
        elif self.inv_off:
            inv_lines = [f"  %invoff = arith.constant {self.inv_off} : {t}",
                         f"  %inv = arith.addi {inv}, %invoff : {t}"]
            inv = "%inv"
        row_lines: list[str] = []
        if self.form == "tensor":
            lines += [
                f"  %zero = arith.constant dense<0> : {tens}",
                f"  %one = arith.constant dense<1> : {tens}",
                f"  %two = arith.constant dense<2> : {tens}",
                f"  %three = arith.constant dense<3> : {tens}",
            ]
            if self.ranges:
                lines += self._range("rows", self.rows, t)
                lines += self._range("cols", self.cols, t)
            rows = "%rows"
            if self.rows_op.endswith("_rt"):
                # issue 17: a divisor / shift amount known at run time, derived from n so that it
                # is sometimes invalid (<= 0 divisors, shifts < 0 or >= width: the guard fails,
                # or the kernel divides by a negative k): divisions use (n & 7) * 2 - rows_k
                # (odd rows_k: never zero), shifts (n & 7) * 5 - rows_k.
                rows = "%rowsm"
                mul = 5 if self.rows_op.startswith("shr") else 2
                if not self.div_arg:
                    lines += [f"  %k7 = arith.constant 7 : {t}",
                              f"  %kmul = arith.constant {mul} : {t}",
                              f"  %koff = arith.constant {self.rows_k} : {t}",
                              f"  %kand = arith.andi %n, %k7 : {t}",
                              f"  %kscaled = arith.muli %kand, %kmul : {t}",
                              f"  %kv = arith.subi %kscaled, %koff : {t}"]
                row_lines += [
                    f"  %rowsk = tt.splat {'%d' if self.div_arg else '%kv'} : {t} -> tensor<{self.rows}x{t}>",
                    f"  %rowsm = arith.{self.rows_op[:-3]} %rows, %rowsk : tensor<{self.rows}x{t}>"]
            elif self.rows_op:
                rows = "%rowsm"
                row_lines += [
                    f"  %rowsk = arith.constant dense<{self.rows_k}> : tensor<{self.rows}x{t}>",
                    f"  %rowsm = arith.{self.rows_op} %rows, %rowsk : tensor<{self.rows}x{t}>"]
            row_lines += [
                f"  %invs = tt.splat {inv} : {t} -> tensor<{self.rows}x{t}>",
                f"  %rv = arith.addi %invs, {rows} : tensor<{self.rows}x{t}>" if self.ranges else
                f"  %rv = tt.splat {inv} : {t} -> tensor<{self.rows}x{t}>",
                f"  %re = tt.expand_dims %rv {{axis = 1 : i32}} : tensor<{self.rows}x{t}> -> tensor<{self.rows}x1x{t}>",
                f"  %rb = tt.broadcast %re : tensor<{self.rows}x1x{t}> -> {tens}",
            ]
            init = "%zero"
        else:
            lines += [f"  %c0 = arith.constant 0 : {t}"]
            init = "%c0"
        if not self.inv_inside:
            lines += inv_lines + row_lines
        unsigned = "unsigned " if self.unsigned_loop else ""
        lb, ub = ("%lba" if self.lattice else "%lb"), "%ub"
        if self.second:
            lines += [f"  %invoff2 = arith.constant {self.inv_off2} : {t}",
                      f"  %inv2 = arith.addi %ub, %invoff2 : {t}"]
        if self.lb_zero:
            lines += [f"  %lbz = arith.constant 0 : {t}"]
            lb = "%lbz"
        if self.ub_from_n is not None:
            lines += [f"  %ubd = arith.constant {self.ub_from_n} : {t}",
                      f"  %ubn = arith.addi %n, %ubd : {t}"]
            ub = "%ubn"
        if self.ub_form:
            lines += [f"  %ubmin = arith.minsi %ub, %n : {t}"]
            if self.ub_form == "min":
                ub = "%ubmin"
            else:
                lines += [f"  %inblk = arith.cmpi slt, {lb}, %n : {t}"]
                if self.ub_form == "mask_select":  # select(lb < n, 1, 0), the 0/1 on the right
                    lines += [f"  %c0b = arith.constant 0 : {t}",
                              f"  %blk = arith.select %inblk, %c1, %c0b : {t}",
                              f"  %ubm = arith.muli %ubmin, %blk : {t}"]
                else:
                    lines += [f"  %blk = arith.extui %inblk : i1 to {t}"]
                if self.ub_form == "mask_select":
                    pass
                elif self.ub_form == "mask":
                    lines += [f"  %ubm = arith.muli %blk, %ubmin : {t}"]
                else:
                    lines += [f"  %ubm0 = arith.muli %blk, %ub : {t}",
                              f"  %ubm = arith.muli %ubm0, %step : {t}"]
                ub = "%ubm"
        if self.const_bounds:
            lines += [f"  %clb = arith.constant {self.const_bounds[0]} : {t}",
                      f"  %cub = arith.constant {self.const_bounds[1]} : {t}"]
            lb, ub = "%clb", "%cub"
        lines.append(f"  %r = scf.for {unsigned}%iv = {lb} to {ub} step %step iter_args(%a = {init})"
                     f" -> ({res_ty}) : {t} {{")
        # The invariant side: before the loop, or inside it as the front end emits `i < n + 1`
        # (no LICM runs before the pass).
        if self.inv_inside:
            lines += ["  " + ln for ln in inv_lines + row_lines]
        x = "%iv"
        if self.iv_scale != 1:
            lines += [f"    %ivscale = arith.constant {self.iv_scale} : {t}",
                      f"    %ivs0 = arith.muli %iv, %ivscale : {t}"]
            x = "%ivs0"
        if self.iv_off:
            lines += [f"    %ivoff = arith.constant {self.iv_off} : {t}",
                      f"    %x = arith.addi {x}, %ivoff : {t}"]
            x = "%x"
        if self.iv_inv:
            lines += [f"    %xa = arith.addi {x}, %ivinv : {t}"]
            x = "%xa"
        if self.form == "tensor":
            lhs, rhs = ("%cb", "%rb") if self.iv_left else ("%rb", "%cb")
            lines += [
                f"    %xs = tt.splat {x} : {t} -> tensor<{self.cols}x{t}>",
                f"    %cv = arith.addi %xs, %cols : tensor<{self.cols}x{t}>" if self.ranges else
                f"    %cv = tt.splat {x} : {t} -> tensor<{self.cols}x{t}>",
                f"    %ce = tt.expand_dims %cv {{axis = 0 : i32}} : tensor<{self.cols}x{t}> -> tensor<1x{self.cols}x{t}>",
                f"    %cb = tt.broadcast %ce : tensor<1x{self.cols}x{t}> -> {tens}",
                f"    {'%cA' if self.second else '%c'} = arith.cmpi {self.pred}, {lhs}, {rhs} : {tens}",
                *self._second_tensor(x, t, tens, shape),
                f"    %m = arith.muli %a, %three : {tens}",
                f"    %v = arith.select %c, %one, %two : tensor<{shape}xi1>, {tens}",
                f"    %s = arith.addi %m, %v : {tens}",
                f"    %ivs = tt.splat %iv : {t} -> {tens}",
                f"    %y = arith.addi %s, %ivs : {tens}",
            ]
        else:
            lhs, rhs = (x, inv) if self.iv_left else (inv, x)
            lines.append(f"    {'%cA' if self.second else '%c'} = arith.cmpi {self.pred}, {lhs}, {rhs} : {t}")
            if self.second:
                lines += [f"    %ivoff2 = arith.constant {self.iv_off2} : {t}",
                          f"    %x2 = arith.addi %iv, %ivoff2 : {t}",
                          f"    %cB = arith.cmpi {self.second}, %x2, %inv2 : {t}",
                          "    %c = arith.andi %cA, %cB : i1"]
            lines += [
                f"    %m = arith.muli %a, %c3 : {t}",
                f"    %v = arith.select %c, %c1, %c2 : {t}",
                f"    %s = arith.addi %m, %v : {t}",
                f"    %y = arith.addi %s, %iv : {t}",
            ]
        lines += [f"    scf.yield %y : {res_ty}", "  }", f"  tt.return %r : {res_ty}", "}"]
        return "\n".join(lines) + "\n"

    def _second_tensor(self, x: str, t: str, tens: str, shape: str) -> list[str]:
        """The second (sequence-length) mask of the tensor form: one row, broadcast, AND-ed."""
        if not self.second:
            return []
        row = f"tensor<1x{self.cols}x{t}>"
        return [f"    %ivoff2 = arith.constant {self.iv_off2} : {t}",
                f"    %x2 = arith.addi {x}, %ivoff2 : {t}",
                f"    %xs2 = tt.splat %x2 : {t} -> tensor<{self.cols}x{t}>",
                f"    %cv2 = arith.addi %xs2, %cols : tensor<{self.cols}x{t}>" if self.ranges else
                f"    %cv2 = tt.splat %x2 : {t} -> tensor<{self.cols}x{t}>",
                f"    %ce2 = tt.expand_dims %cv2 {{axis = 0 : i32}} : tensor<{self.cols}x{t}> -> {row}",
                f"    %inv2s = tt.splat %inv2 : {t} -> {row}",
                f"    %cB = arith.cmpi {self.second}, %ce2, %inv2s : {row}",
                f"    %cBb = tt.broadcast %cB : tensor<1x{self.cols}xi1> -> tensor<{shape}xi1>",
                f"    %c = arith.andi %cA, %cBb : tensor<{shape}xi1>"]

    @staticmethod
    def _range(name: str, size: int, t: str) -> list[str]:
        # make_range is i32; an i64 loop sees it sign-extended, as the front end emits it.
        rng = f"tensor<{size}xi32>"
        if t == "i32":
            return [f"  %{name} = tt.make_range {{end = {size} : i32, start = 0 : i32}} : {rng}"]
        return [f"  %{name}32 = tt.make_range {{end = {size} : i32, start = 0 : i32}} : {rng}",
                f"  %{name} = arith.extsi %{name}32 : {rng} to tensor<{size}x{t}>"]


# The k(out, lb, ub, n) kernel of issue 14, as the front end emits it (acc * 3 + 1 or 2).
ISSUE14_TTIR = {
    width: f"""
tt.func @k(%lb: i{width}, %ub: i{width}, %n: i{width}) -> i{width} {{
  %c0 = arith.constant 0 : i{width}
  %c1 = arith.constant 1 : i{width}
  %c2 = arith.constant 2 : i{width}
  %c3 = arith.constant 3 : i{width}
  %r = scf.for %iv = %lb to %ub step %c1 iter_args(%a = %c0) -> (i{width}) : i{width} {{
    %c = arith.cmpi slt, %iv, %n : i{width}
    %m = arith.muli %a, %c3 : i{width}
    %v = arith.select %c, %c1, %c2 : i{width}
    %s = arith.addi %m, %v : i{width}
    scf.yield %s : i{width}
  }}
  tt.return %r : i{width}
}}
""" for width in (32, 64)}


def to_signed(v: int, width: int) -> int:
    v &= (1 << width) - 1
    return v - (1 << width) if v >> (width - 1) else v


def trips(lb: int, ub: int, step: int, width: int, unsigned_loop: bool) -> int:
    lo, hi = (lb & ((1 << width) - 1), ub & ((1 << width) - 1)) if unsigned_loop else (lb, ub)
    return 0 if lo >= hi else -((lo - hi) // step)


def in_domain(lb: int, ub: int, step: int, width: int, unsigned_loop: bool, max_trips: int) -> bool:
    """Few enough trips to interpret. The reference is scf.for's own semantics (the trip count
    ``ceildiv(ub - lb, step)``), also where the final increment would leave the type."""
    return trips(lb, ub, step, width, unsigned_loop) <= max_trips


def anchors(width: int) -> list[int]:
    """Values where integer arithmetic changes behaviour: 0, the signed and unsigned limits,
    2^31 and 2^32 (i64), and the powers the pass's guards use (2^40, 2^60..2^62)."""
    top = 1 << (width - 1)
    pts = [0, 1, -1, top - 1, -top, top // 2, -top // 2]
    if width == 64:
        pts += [1 << 31, (1 << 31) - 1, -(1 << 31), 1 << 32, (1 << 32) - 1, 1 << 40, -(1 << 40),
                1 << 60, -(1 << 60), 1 << 61, -(1 << 61), 1 << 62, -(1 << 62)]
    else:
        pts += [1 << 30, -(1 << 30), 1 << 16]
    return pts


def boundary_int(rng: random.Random, width: int, spread: int) -> int:
    """An integer near a limit (most of the time) or anywhere in the type."""
    r = rng.random()
    if r < 0.8:
        return to_signed(rng.choice(anchors(width)) + rng.randint(-spread, spread), width)
    return to_signed(rng.getrandbits(width), width)


def loop_args(rng: random.Random, kernel: LoopKernel, count: int, max_trips: int = 40
              ) -> list[tuple[int, int, int]]:
    """``count`` (lb, ub, n) triples in the kernel's domain, weighted to the limits: empty and
    reversed ranges, bounds near 2^31 / 2^63 / the unsigned wrap, and comparands near the
    bounds (where the split points fall) or at the limits themselves."""
    w, step = kernel.width, kernel.step
    reach = step * max_trips
    near = step * 4 + kernel.rows + kernel.cols + abs(kernel.iv_off) + abs(kernel.inv_off)
    out: list[tuple[int, int, int]] = []
    while len(out) < count:
        lb = boundary_int(rng, w, reach + near)
        kind = rng.random()
        if kind < 0.1:
            span = -rng.randint(0, reach)  # reversed or empty
        elif kind < 0.15:
            span = 0
        else:
            span = rng.randint(1, reach)
        ub = to_signed(lb + span, w)
        k = rng.random()
        if k < 0.6:
            n = to_signed(rng.choice((lb, ub)) + rng.randint(-near, near)
                          - kernel.inv_off + kernel.iv_off * rng.choice((0, 1)), w)
        elif k < 0.9:
            n = boundary_int(rng, w, near)
        else:
            n = to_signed(lb + rng.randint(-near, max(span, 0) + near), w)
        if in_domain(lb, ub, step, w, kernel.unsigned_loop, max_trips):
            out.append((lb, ub, n))
    return out


def fact_args(rng: random.Random, kernel: LoopKernel, count: int, max_trips: int = 40
              ) -> list[tuple[int, int, int]]:
    """``count`` (lb, ub, n) triples inside ``kernel.fact``, weighted to its ends (where the
    guard's checks are decided) and to n near the bounds (where the split points fall)."""
    lo, hi = kernel.fact
    step = kernel.step
    near = step * 4 + kernel.rows + kernel.cols + abs(kernel.iv_off) + abs(kernel.inv_off)

    def pick() -> int:
        r = rng.random()
        if r < 0.4:
            return min(hi, lo + rng.randint(0, step * max_trips + near))
        if r < 0.8:
            return max(lo, hi - rng.randint(0, step * max_trips + near))
        return rng.randint(lo, hi)

    out: list[tuple[int, int, int]] = []
    while len(out) < count:
        lb = pick()
        ub = min(hi, max(lo, lb + rng.randint(-step * 2, step * max_trips)))
        n = (min(hi, max(lo, rng.choice((lb, ub)) + rng.randint(-near, near)))
             if rng.random() < 0.7 else pick())
        if in_domain(lb, ub, step, kernel.width, kernel.unsigned_loop, max_trips):
            out.append((lb, ub, n))
    return out


def bounded_args(rng: random.Random, kernel: LoopKernel, count: int, max_trips: int = 40
                 ) -> list[tuple[int, int, int]]:
    """(lb, ub, n) for the loops from 0 (``lb_zero``) with bounds built from ub and n
    (``ub_form``): ub small enough that the bound (ub, min(ub, n) or ub * step) gives at most
    ``max_trips`` trips, n near 0, near ub or past it (the block mask flips at n = 0) and
    sometimes at the limits."""
    w, step = kernel.width, kernel.step
    near = step * 4 + kernel.rows + kernel.cols + abs(kernel.iv_off) + abs(kernel.inv_off) \
        + abs(kernel.iv_off2) + abs(kernel.inv_off2)
    top = max_trips if kernel.ub_form == "mask_scaled" else step * max_trips
    out: list[tuple[int, int, int]] = []
    while len(out) < count:
        ub = rng.randint(-step * 2, top)
        k = rng.random()
        if k < 0.7:
            n = rng.choice((0, ub, ub * step)) + rng.randint(-near, near)
        elif k < 0.85:
            n = rng.randint(-near, top * step + near)
        else:
            n = boundary_int(rng, w, near)
        lb = boundary_int(rng, w, near)  # unused by the IR when lb_zero
        out.append((lb, to_signed(ub, w), to_signed(n, w)))
    return out
