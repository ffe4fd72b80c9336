"""Differential regressions of issue 26 for loop_split's run-time guard.

1. Constant loop bounds with a run-time divisor (``offs_m // d``): the divisor only adds a guard
   requirement (d >= 1), so the split points are constants but the guard is not. Where it fails
   (unsigned d >= 2^31, signed d < 0) the comparing loop must run every iteration; the pass used
   to drop it as empty and ran no iteration (0 instead of 44 on the H200).
2. The program-id range the analysis assumes (``tt.get_program_id`` in [0, 2^31 - 1)): a causal
   mask on ``pid * 64 + 10 + arange(0, 64)`` keeps the check ``pid * 64 <= INT32_MAX - 73`` at run
   time. Program ids near 2^31 (where ``pid * 64`` wraps to just below INT32_MAX) make it fail;
   an analysis that assumed smaller ids (the planted mutant ``< 2^24``) drops the check and
   folds wrapped rows as true.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from tests.differential.harness import compare
from tests.differential.host_passes import before_after
from tests.differential.loop_kernels import to_signed

# The issue's kernel (16x16 causal-style mask over 4 constant trips), its accumulator returned.
ISSUE26_TTIR = """
tt.func @k(%d: i32) -> tensor<16x16xi32> {{
  %lb = arith.constant {lb} : i32
  %ub = arith.constant {ub} : i32
  %step = arith.constant {step} : i32
  %zero = arith.constant dense<0> : tensor<16x16xi32>
  %one = arith.constant dense<1> : tensor<16x16xi32>
  %two = arith.constant dense<2> : tensor<16x16xi32>
  %three = arith.constant dense<3> : tensor<16x16xi32>
  %off = arith.constant dense<{off}> : tensor<16xi32>
  %r = tt.make_range {{end = 16 : i32, start = 0 : i32}} : tensor<16xi32>
  %ds = tt.splat %d : i32 -> tensor<16xi32>
  %q = arith.{op} %r, %ds : tensor<16xi32>
  %offs_m = arith.addi %q, %off : tensor<16xi32>
  %acc = scf.for %start_n = %lb to %ub step %step iter_args(%a = %zero) -> (tensor<16x16xi32>) : i32 {{
    %ns = tt.splat %start_n : i32 -> tensor<16xi32>
    %offs_n = arith.addi %ns, %r : tensor<16xi32>
    %me = tt.expand_dims %offs_m {{axis = 1 : i32}} : tensor<16xi32> -> tensor<16x1xi32>
    %ne = tt.expand_dims %offs_n {{axis = 0 : i32}} : tensor<16xi32> -> tensor<1x16xi32>
    %mb = tt.broadcast %me : tensor<16x1xi32> -> tensor<16x16xi32>
    %nb = tt.broadcast %ne : tensor<1x16xi32> -> tensor<16x16xi32>
    %mask = arith.cmpi {pred}, %mb, %nb : tensor<16x16xi32>
    %m3 = arith.muli %a, %three : tensor<16x16xi32>
    %v = arith.select %mask, %one, %two : tensor<16x16xi1>, tensor<16x16xi32>
    %s = arith.addi %m3, %v : tensor<16x16xi32>
    scf.yield %s : tensor<16x16xi32>
  }}
  tt.return %acc : tensor<16x16xi32>
}}
"""

# The issue's divisors: d: u32 (passed as its i32 bits) and nq: i32.
UNSIGNED_DIVISORS = [1, 7, 2**31 - 1, 2**31, 3_000_000_000, 2**32 - 1]
SIGNED_DIVISORS = [1, 7, 2**31 - 1, -1, -2, -7, -(2**31)]
FORMS = [("divui", "uge", UNSIGNED_DIVISORS), ("divsi", "sge", SIGNED_DIVISORS)]
# (offset, lb, ub, step): the issue's loop (low and high parts, empty middle under the guard);
# rows below every column from the start (only a high part: also wrong with max-parts=2); a
# step that is not a power of two; a lower bound off the step's lattice.
LOOPS = [(100, 0, 200, 64), (0, 64, 320, 64), (40, 0, 120, 24), (100, 8, 200, 64)]


def _ttir(op: str, pred: str, off: int, lb: int, ub: int, step: int) -> str:
    return ISSUE26_TTIR.format(op=op, pred=pred, off=off, lb=lb, ub=ub, step=step)


@pytest.mark.parametrize("max_parts", ["3", "2"])
@pytest.mark.parametrize("op,pred,divisors", FORMS, ids=["unsigned", "signed"])
def test_runtime_divisor_with_constant_bounds(op, pred, divisors, max_parts):
    for off, lb, ub, step in LOOPS:
        text = _ttir(op, pred, off, lb, ub, step)
        # Legality, not profitability: the short loops here are ones the model would decline.
        options = (("max-parts", max_parts), ("profitability", "false"))
        assert before_after(text, "loop_split", options).changed, \
            "the pass left the loop alone, so the guard is not exercised"
        cases = [(to_signed(d, 32),) for d in divisors]
        result = compare(text, "loop_split", cases, options=options)
        trips = -(-(ub - lb) // step)
        assert result.before.trips.tolist() == [trips] * len(cases)
        if result.count:
            pytest.fail(result.report(f"{op} {pred} off={off} [{lb}, {ub}) step {step}"),
                        pytrace=False)


def test_issue26_kernel_value():
    # The exact value of the issue's kernel (acc[0, 0] = 44 for every divisor), split or not.
    text = _ttir("divui", "uge", 100, 0, 200, 64)
    result = compare(text, "loop_split", [(to_signed(d, 32),) for d in UNSIGNED_DIVISORS])
    for run in (result.before, result.after):
        assert [int(v[0, 0]) for v in run.returns[0]] == [44] * len(UNSIGNED_DIVISORS)
    assert result.count == 0, result.report("issue 26 kernel")


PID_TTIR = """
tt.func @k(%n: i32) -> tensor<64x64xi32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0> : tensor<64x64xi32>
  %one = arith.constant dense<1> : tensor<64x64xi32>
  %two = arith.constant dense<2> : tensor<64x64xi32>
  %three = arith.constant dense<3> : tensor<64x64xi32>
  %ten = arith.constant dense<10> : tensor<64xi32>
  %pid = tt.get_program_id x : i32
  %start_m = arith.muli %pid, %c64 : i32
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %sm = tt.splat %start_m : i32 -> tensor<64xi32>
  %m0 = arith.addi %sm, %r : tensor<64xi32>
  %offs_m = arith.addi %m0, %ten : tensor<64xi32>
  %acc = scf.for %start_n = %c0 to %n step %c64 iter_args(%a = %zero) -> (tensor<64x64xi32>) : i32 {
    %ns = tt.splat %start_n : i32 -> tensor<64xi32>
    %offs_n = arith.addi %ns, %r : tensor<64xi32>
    %me = tt.expand_dims %offs_m {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %ne = tt.expand_dims %offs_n {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %mb = tt.broadcast %me : tensor<64x1xi32> -> tensor<64x64xi32>
    %nb = tt.broadcast %ne : tensor<1x64xi32> -> tensor<64x64xi32>
    %mask = arith.cmpi sge, %mb, %nb : tensor<64x64xi32>
    %m3 = arith.muli %a, %three : tensor<64x64xi32>
    %v = arith.select %mask, %one, %two : tensor<64x64xi1>, tensor<64x64xi32>
    %s = arith.addi %m3, %v : tensor<64x64xi32>
    scf.yield %s : tensor<64x64xi32>
  }
  tt.return %acc : tensor<64x64xi32>
}
"""


def _near_2_31_program_ids() -> list[int]:
    """Program ids just below 2^31 - 1 (Triton's limit), and those near 2^31 whose ``pid * 64``
    wraps to 2^31 - 64 (pid = 2^31 - 2^25 - 1 - k * 2^26), where ``+ 10 + 63`` passes INT32_MAX;
    small ids for contrast."""
    top = 2**31 - 2
    ids = [top - j for j in range(4)]
    ids += [2**31 - 2**25 - 1 - k * 2**26 for k in range(3)]
    ids += [2**25 - 1, 2**24 - 1, 2**24, 0, 1, 5]
    return ids


def test_program_id_near_2_31_keeps_the_guard():
    pids = _near_2_31_program_ids()
    ns = [0, 64, 130, 640]
    cases = [(n,) for _ in pids for n in ns]
    grid = np.zeros((len(cases), 3), np.int64)
    grid[:, 0] = [p for p in pids for _ in ns]
    result = compare(PID_TTIR, "loop_split", cases, program_id=grid)
    assert result.programs.after_text.count("scf.for") >= 2, result.programs.after_text
    # The ids whose rows wrap give a different accumulator from a fold-all-true low part.
    if result.count:
        before, after = result.before.returns[0], result.after.returns[0]
        bad = sorted({int(grid[i, 0]) for i in range(len(cases))
                      if not np.array_equal(before[i], after[i])})
        pytest.fail(f"program ids {bad}:\n" + result.report("pid * 64 causal mask"), pytrace=False)


# 3. scale-after-max (rounding=mul-rn): the unmasked part takes the row maximum of the unscaled
# scores and scales it once, exact only for a positive finite scale. The scale's guard sends every
# iteration to the masked loop otherwise: s = 0, -0, negative, subnormal-negative, inf, -inf, NaN
# run that failure path. Scores at the limits of f32 (signed zeros, subnormals, inf, NaN) check the
# exactness claim itself on the lanes where the guard holds, bit for bit.
def _scaled_max_ttir(masking: str) -> str:
    """A causal-scores loop: ``qk = x * s``, ``masking`` (TTIR that defines ``%scores`` from
    ``%qk``, the causal mask ``%bm >= %bn`` and ``%diag``, the first column block on the
    diagonal), the row maximum of ``%scores`` and the scores minus it."""
    return f"""
tt.func @k(%start_m: i32, %n_ctx: i32, %s: f32, %a: f32) -> tensor<16x8xf32> {{
  %c0 = arith.constant 0 : i32
  %c7 = arith.constant 7 : i32
  %c8 = arith.constant 8 : i32
  %c16 = arith.constant 16 : i32
  %ninf = arith.constant dense<0xFF800000> : tensor<16x8xf32>
  %zero = arith.constant dense<0.000000e+00> : tensor<16x8xf32>
  %m0 = arith.muli %start_m, %c16 : i32
  %diag = arith.subi %m0, %c7 : i32
  %rm = tt.make_range {{end = 16 : i32, start = 0 : i32}} : tensor<16xi32>
  %sm = tt.splat %m0 : i32 -> tensor<16xi32>
  %offs_m = arith.addi %sm, %rm : tensor<16xi32>
  %offs_n = tt.make_range {{end = 8 : i32, start = 0 : i32}} : tensor<8xi32>
  %em = tt.expand_dims %offs_m {{axis = 1 : i32}} : tensor<16xi32> -> tensor<16x1xi32>
  %en = tt.expand_dims %offs_n {{axis = 0 : i32}} : tensor<8xi32> -> tensor<1x8xi32>
  %as = tt.splat %a : f32 -> tensor<16x8xf32>
  %r = scf.for %start_n = %c0 to %n_ctx step %c8 iter_args(%acc = %zero) -> (tensor<16x8xf32>) : i32 {{
    %sn = tt.splat %start_n : i32 -> tensor<1x8xi32>
    %cols = arith.addi %sn, %en : tensor<1x8xi32>
    %bm = tt.broadcast %em : tensor<16x1xi32> -> tensor<16x8xi32>
    %bn = tt.broadcast %cols : tensor<1x8xi32> -> tensor<16x8xi32>
    %d = arith.subi %bn, %bm : tensor<16x8xi32>
    %df = arith.sitofp %d : tensor<16x8xi32> to tensor<16x8xf32>
    %x = arith.mulf %df, %as : tensor<16x8xf32>
    %ss = tt.splat %s : f32 -> tensor<16x8xf32>
    %qk = arith.mulf %x, %ss : tensor<16x8xf32>
{masking}
    %m = "tt.reduce"(%scores) <{{axis = 1 : i32}}> ({{
    ^bb0(%p: f32, %q: f32):
      %mx = arith.maxnumf %p, %q : f32
      tt.reduce.return %mx : f32
    }}) : (tensor<16x8xf32>) -> tensor<16xf32>
    %me = tt.expand_dims %m {{axis = 1 : i32}} : tensor<16xf32> -> tensor<16x1xf32>
    %mb = tt.broadcast %me : tensor<16x1xf32> -> tensor<16x8xf32>
    %sub = arith.subf %scores, %mb : tensor<16x8xf32>
    %acc2 = arith.addf %acc, %sub : tensor<16x8xf32>
    %acc3 = arith.addf %acc2, %mb : tensor<16x8xf32>
    scf.yield %acc3 : tensor<16x8xf32>
  }}
  tt.return %r : tensor<16x8xf32>
}}
"""


# The tensor form: the mask on every block.
SCALED_MAX_TTIR = _scaled_max_ttir("""\
    %mask = arith.cmpi sge, %bm, %bn : tensor<16x8xi32>
    %scores = arith.select %mask, %qk, %ninf : tensor<16x8xi1>, tensor<16x8xf32>""")

# The scalar form: the mask applied only `if start_n >= diag`. Both parts fold the `if`, so the
# high part keeps the loop's own code for the guard (it starts at lb when the guard fails), with
# the branch made straight-line code (guarded-mask).
SCALED_MAX_IF_TTIR = _scaled_max_ttir("""\
    %on_diag = arith.cmpi sge, %start_n, %diag : i32
    %scores = scf.if %on_diag -> (tensor<16x8xf32>) {
      %mask = arith.cmpi sge, %bm, %bn : tensor<16x8xi32>
      %masked = arith.select %mask, %qk, %ninf : tensor<16x8xi1>, tensor<16x8xf32>
      scf.yield %masked : tensor<16x8xf32>
    } else {
      scf.yield %qk : tensor<16x8xf32>
    }""")

# The same with the branch taken from 8 columns past the diagonal: on the 8-column blocks between,
# the mask would mask but the `if` keeps every score, so the guarded-mask rewrite must keep them too
# (a wrong saturation value masks them).
SCALED_MAX_LATE_IF_TTIR = SCALED_MAX_IF_TTIR.replace(
    "%on_diag = arith.cmpi sge, %start_n, %diag : i32",
    "%late = arith.addi %diag, %c8 : i32\n    %on_diag = arith.cmpi sge, %start_n, %late : i32")

SCALES_HOLDING = [0.125, 1.0, 1e-30, 1e-45, 3.0e38, 1.4426950408889634]
SCALES_FAILING = [0.0, -0.0, -0.5, -1e-45, float("inf"), float("-inf"), float("nan")]
SCORES = [1.0, -1.0, 0.0, -0.0, 1e-38, -3e-39, 1e30, float("inf"), float("-inf"), float("nan")]


@pytest.mark.parametrize("ttir", [SCALED_MAX_TTIR, SCALED_MAX_IF_TTIR, SCALED_MAX_LATE_IF_TTIR],
                         ids=["tensor-mask", "if-mask", "late-if-mask"])
def test_scale_after_max_guard_and_exactness(ttir: str):
    options = (("rounding", "mul-rn"),)
    cases = [(start_m, n_ctx, s, a) for s in SCALES_HOLDING + SCALES_FAILING for a in SCORES
             for start_m in (0, 1, 3) for n_ctx in (0, 8, 24, 64)]
    # start_m * 16 near and past 2^31 (the split point wraps in i32), and negative.
    cases += [(start_m, n_ctx, s, 1.0) for s in (0.125, -0.5, float("nan"))
              for start_m in (2**27 - 1, 2**27, 2**31 - 1, -1, -(2**31)) for n_ctx in (0, 24, 64)]
    result = compare(ttir, "loop_split", cases, options=options)
    after = result.programs.after_text
    assert "arith.cmpf" in after, after  # the scale's guard
    # Rewritten: a row maximum (tensor<16xf32>) scaled with mul.rn.
    assert re.search(r'"mul\.rn\.f32 [^\n]*: tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>', after), after
    failing = [c for c in cases if not (c[2] > 0 and c[2] < float("inf")) and c[1] > 0]
    assert failing, "no case runs the guard's failure path"
    if ttir is not SCALED_MAX_TTIR:
        # The part that keeps the comparisons has the mask without the branch (guarded-mask):
        # where the guard fails it runs every iteration, off the diagonal with the mask's rows
        # saturated to INT_MAX.
        assert "scf.if" not in after and "2147483647" in after, after
    if result.count:
        pytest.fail(result.report("scale-after-max"), pytrace=False)
