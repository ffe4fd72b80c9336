"""Differential tests of the sanitizers' guards: offset_overflow_check, masked_load_poison and
nan_inf_check, each run for real on a kernel and interpreted with and without it over
boundary-weighted i32 arguments (products and sums near 2^31, empty and reversed loops) and
float memory holding 0, denormals, FLT_MAX, +-Inf and NaN.

A sanitizer must not change what a correct kernel computes (stores, trip counts), and what it
reports must be exact: offset_overflow_check's count is the number of lanes whose i32 offset
differs from the exact integer (in at least one iteration, for loop-dependent offsets);
nan_inf_check's count is the number of stored lanes holding NaN or +-Inf; masked_load_poison
changes exactly the masked-off lanes (to NaN, or INT_MIN for integers), which only a kernel that
reads them can see. ``mode=abort`` must abort exactly the programs that report.
"""

from __future__ import annotations

import random
import re

import pytest

import numpy  # noqa: E402,F401  (a test dependency: pip install -e .[test]; a missing one fails)

import numpy as np  # noqa: E402

from tests.differential.harness import compare  # noqa: E402
from tests.differential.interp import mismatched_lanes  # noqa: E402
from tests.differential.loop_kernels import to_signed  # noqa: E402

R = 8
I32_MIN, I32_MAX = -(2**31), 2**31 - 1
SPECIAL = np.array([0.0, 1.5, -2.0, 3.0e38, -3.0e38, np.inf, -np.inf, np.nan, 1e-45, -0.0, 7.0,
                    0.25, 1e-38, 65504.0, -1.0, 2.0], np.float32)

# One kernel for the three sanitizers: a masked load at offsets `a * s + b + arange`, a loop
# over [lb, ub) loading at `iv * s + arange` (a loop-dependent offset), a division that makes
# NaN/Inf from the special values, and a masked store at the first offsets. UNMASKED stores
# every lane (an incorrect kernel that reads the masked-off lanes).
KERNEL = """
tt.func public @k(%out: !tt.ptr<{t}>, %x: !tt.ptr<{t}>, %a: i32, %s: i32, %b: i32, %n: i32,
                  %lb: i32, %ub: i32) {{
  %r = tt.make_range {{end = {R} : i32, start = 0 : i32}} : tensor<{R}xi32>
  %as = arith.muli %a, %s : i32
  %base = arith.addi %as, %b : i32
  %bs = tt.splat %base : i32 -> tensor<{R}xi32>
  %offs = arith.addi %bs, %r : tensor<{R}xi32>
  %ns = tt.splat %n : i32 -> tensor<{R}xi32>
  %m = arith.cmpi slt, %offs, %ns : tensor<{R}xi32>
  %xp = tt.splat %x : !tt.ptr<{t}> -> tensor<{R}x!tt.ptr<{t}>>
  %xq = tt.addptr %xp, %offs : tensor<{R}x!tt.ptr<{t}>>, tensor<{R}xi32>
  %v = tt.load %xq, %m : tensor<{R}x!tt.ptr<{t}>>
  %c1 = arith.constant 1 : i32
  %one = arith.constant dense<{one}> : tensor<{R}x{t}>
  %acc = scf.for %iv = %lb to %ub step %c1 iter_args(%ac = %one) -> (tensor<{R}x{t}>) : i32 {{
    %ivs = arith.muli %iv, %s : i32
    %ivt = tt.splat %ivs : i32 -> tensor<{R}xi32>
    %o2 = arith.addi %ivt, %r : tensor<{R}xi32>
    %q = tt.addptr %xp, %o2 : tensor<{R}x!tt.ptr<{t}>>, tensor<{R}xi32>
    %w = tt.load %q : tensor<{R}x!tt.ptr<{t}>>
    %sum = {add} %ac, %w : tensor<{R}x{t}>
    scf.yield %sum : tensor<{R}x{t}>
  }}
  %y = {div} %v, %acc : tensor<{R}x{t}>
  %op = tt.splat %out : !tt.ptr<{t}> -> tensor<{R}x!tt.ptr<{t}>>
  %oq = tt.addptr %op, %offs : tensor<{R}x!tt.ptr<{t}>>, tensor<{R}xi32>
  tt.store %oq, %y{store_mask} : tensor<{R}x!tt.ptr<{t}>>
  tt.return
}}
"""
OUT, X = 1 << 40, 2 << 40


def kernel(dtype: str = "f32", masked_store: bool = True) -> str:
    floaty = dtype == "f32"
    return KERNEL.format(R=R, t=dtype, one="1.000000e+00" if floaty else "1",
                         add="arith.addf" if floaty else "arith.addi",
                         div="arith.divf" if floaty else "arith.xori",
                         store_mask=", %m" if masked_store else "")


def memory(addr: np.ndarray, ty) -> np.ndarray:
    h = (addr.astype(np.uint64) * np.uint64(2654435761)) >> np.uint64(7)
    if ty.kind == "float":
        return SPECIAL[(h % np.uint64(len(SPECIAL))).astype(np.int64)]
    return (h % np.uint64(1 << 31)).astype(np.int64) - (1 << 30)


def _i32(rng: random.Random) -> int:
    pts = [0, 1, -1, I32_MAX, I32_MIN, 46340, 46341, -46341, 65536, 1 << 30, -(1 << 30), 7, 3]
    if rng.random() < 0.75:
        return to_signed(rng.choice(pts) + rng.randint(-20, 20), 32)
    return to_signed(rng.getrandbits(32), 32)


def sanitizer_args(seed: str, count: int) -> list[tuple[int, ...]]:
    """(a, s, b, n, lb, ub): products a * s and sums near 2^31, comparands n near the offsets,
    loops of 0..12 iterations anywhere (iv * s then wraps for large iv or s)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        a, s, b = _i32(rng), _i32(rng), _i32(rng)
        base = to_signed(a * s + b, 32)
        n = to_signed(base + rng.randint(-3, R + 3), 32) if rng.random() < 0.6 else _i32(rng)
        lb = _i32(rng) if rng.random() < 0.5 else rng.randint(-5, 5)
        ub = min(max(lb + rng.randint(-3, 12), I32_MIN), I32_MAX)  # at most 12 trips
        out.append((a, s, b, n, lb, ub))
    return out


def _reports(result, lanes: int, tag: str) -> dict[int, np.ndarray]:
    """Per-site (source line) reported counts, summed over prints, for each lane."""
    sites: dict[int, np.ndarray] = {}
    for ev in result.prints:
        if tag not in ev.message:
            continue
        site = int(re.search(r"site=\S+:(\d+)", ev.message).group(1))
        counts = sites.setdefault(site, np.zeros(lanes, np.int64))
        counts += np.where(ev.mask, ev.values[0], 0)
    return sites


def _line(text: str, prefix: str) -> int:
    """1-based line of the op starting with ``prefix`` (the sanitizer names that line)."""
    return next(i for i, ln in enumerate(text.splitlines(), 1) if ln.strip().startswith(prefix))


def _assert_exact_per_site(result, cases, exact: np.ndarray, text: str, prefixes: tuple[str, ...],
                           mode: str) -> None:
    """offset_overflow_check's per-site counts equal `exact` (cases x sites, sites named by the
    prefix of their op in `text`), the kernel computes the same, and abort mode aborts exactly
    the cases with a wrap."""
    reports = _reports(result.after, len(cases), "offset_overflow_check")
    sites = tuple(_line(text, p) for p in prefixes)
    assert set(reports) <= set(sites), sorted(reports)
    zero = np.zeros(len(cases), np.int64)
    got = np.stack([reports.get(s, zero) for s in sites], axis=1)
    bad = np.nonzero((got != exact).any(axis=1))[0]
    assert bad.size == 0, [(cases[i], "exact", exact[i].tolist(), "reported", got[i].tolist())
                           for i in bad[:5]]
    _unchanged(result, "memory", "trips", "runaway", "undefined")
    aborted = result.after.assert_failed
    assert (aborted == (exact.sum(axis=1) > 0)).all() if mode == "abort" else not aborted.any()


def _exact_offset_wraps(a: int, s: int, b: int, lb: int, ub: int) -> tuple[int, int]:
    """(lanes of a*s + b + r outside i32, lanes of iv*s + r outside i32 in some iteration)."""
    first = sum(not I32_MIN <= a * s + b + r <= I32_MAX for r in range(R))
    wrapped = set()
    for iv in range(lb, ub):
        wrapped |= {r for r in range(R) if not I32_MIN <= iv * s + r <= I32_MAX}
    return first, len(wrapped)


def _run(text: str, pass_name: str, cases, **options: str):
    if pass_name != "masked_load_poison":
        # The interpreter follows per-program prints; the device records (module globals and
        # atomics, issue 18) and their one-line-per-site election are tested in
        # passes/Sanitizers. print=every prints each program's exact count.
        options = {"print": "every", "records": "false", **options}
    full = [(OUT, X) + c for c in cases]
    return compare(text, pass_name, full, memory=memory, options=tuple(options.items()),
                   forward_stores=True)


def _unchanged(result, *keys: str) -> None:
    """The kernel's stores, trips etc. are the same with the sanitizer. Trips are those of the
    kernel's own loops: offset_overflow_check adds loops of its own (a replay of a loop's
    iterations after it, block loops over a tile, in front of the next loop or at the end), run
    only when some bounds left i32, all marked rolled (`llvm.loop_annotation`), which the test
    kernels' own loops are not."""
    diffs = mismatched_lanes(result.before, result.after, result.cases)
    if "trips" in keys:
        assert not any(result.before.loop_annotated)
        after = [t for t, mine in zip(result.after.loop_trips, result.after.loop_annotated)
                 if not mine]
        assert len(after) == len(result.before.loop_trips)
        trips = sum(after, np.zeros(result.cases, np.uint64))
        diffs["trips"] = trips != result.before.trips
    changed = {k: int(diffs[k].sum()) for k in keys if diffs[k].any()}
    assert not changed, changed


@pytest.mark.parametrize("mode", ["record", "abort"])
def test_offset_overflow_check_counts_exactly(mode):
    cases = sanitizer_args(f"offset-{mode}", 6000)
    text = kernel()
    result = _run(text, "offset_overflow_check", cases, mode=mode)
    wraps = np.array([_exact_offset_wraps(a, s, b, lb, ub) for a, s, b, n, lb, ub in cases])
    assert wraps[:, 0].any() and wraps[:, 1].any() and (wraps.sum(axis=1) == 0).any()
    reports = _reports(result.after, len(cases), "offset_overflow_check")
    first_site, loop_site = _line(text, "%offs ="), _line(text, "%o2 =")
    assert set(reports) <= {first_site, loop_site}, sorted(reports)
    zero = np.zeros(len(cases), np.int64)
    got = np.stack([reports.get(first_site, zero), reports.get(loop_site, zero)], axis=1)
    bad = np.nonzero((got != wraps).any(axis=1))[0]
    assert bad.size == 0, [(cases[i], "exact", wraps[i].tolist(), "reported", got[i].tolist())
                           for i in bad[:5]]
    # What the kernel stores and how often it loops do not change.
    _unchanged(result, "memory", "trips", "runaway", "undefined")
    aborted = result.after.assert_failed
    assert (aborted == (wraps.sum(axis=1) > 0)).all() if mode == "abort" else not aborted.any()


def test_masked_load_poison_keeps_correct_kernels():
    result = _run(kernel(), "masked_load_poison", sanitizer_args("poison", 6000))
    assert result.count == 0, result.report("masked store kernel")


@pytest.mark.parametrize("dtype", ["f32", "i32"])
def test_masked_load_poison_marks_exactly_the_masked_off_lanes(dtype):
    cases = sanitizer_args(f"poison-{dtype}", 6000)
    result = _run(kernel(dtype, masked_store=False), "masked_load_poison", cases)
    (before,), (after,) = ([ev.value for ev in r.stores] for r in (result.before, result.after))
    masked_off = np.array([[not to_signed(to_signed(a * s + b, 32) + r, 32) < n for r in range(R)]
                           for a, s, b, n, lb, ub in cases])
    assert masked_off.any() and (~masked_off).any()
    if dtype == "f32":  # y = v / acc: NaN in v stays NaN
        assert np.isnan(after[masked_off]).all()
        same = (before == after) | (np.isnan(before) & np.isnan(after))
    else:  # y = v xor acc, and interp.py reads masked-off lanes without `other` as -7777
        acc = before ^ -7777
        assert ((after ^ acc)[masked_off] == I32_MIN).all()
        same = before == after
    assert same[~masked_off].all()


@pytest.mark.parametrize("mode,fast_path", [("record", "reload"), ("record", "count"),
                                            ("record", "peak"), ("abort", "reload")])
def test_nan_inf_check_counts_exactly(mode, fast_path):
    # reload (the default) counts the lanes it reads back from the addresses just stored to: the
    # interpreter forwards stores to later loads for it (the kernel's lanes store to distinct
    # addresses, outside the loaded buffer), so its counts must equal the register paths'.
    cases = sanitizer_args(f"naninf-{mode}", 6000)
    result = _run(kernel(), "nan_inf_check", cases, mode=mode, **{"fast-path": fast_path})
    (ev,) = result.before.stores
    bad_lanes = (~np.isfinite(ev.value) & ev.mask).sum(axis=1)
    assert bad_lanes.any() and (bad_lanes == 0).any()
    reports = _reports(result.after, len(cases), "nan_inf_check")
    got = sum(reports.values()) if reports else np.zeros(len(cases), np.int64)
    bad = np.nonzero(got != bad_lanes)[0]
    assert bad.size == 0, [(cases[i], int(bad_lanes[i]), int(got[i])) for i in bad[:5]]
    _unchanged(result, "memory", "trips", "runaway", "undefined")
    aborted = result.after.assert_failed
    assert (aborted == (bad_lanes > 0)).all() if mode == "abort" else not aborted.any()


# A 2-D offset tree (rows * stride + cols, the interval path over two make_ranges) and the same
# plus offsets loaded from memory (tensor leaves that are not ranges: the lane-by-lane path).
KERNEL_2D = """
tt.func public @k(%out: !tt.ptr<f32>, %idx: !tt.ptr<i32>, %m0: i32, %stride: i32, %n0: i32) {
  %r = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
  %ms = tt.splat %m0 : i32 -> tensor<4xi32>
  %rows = arith.addi %ms, %r : tensor<4xi32>
  %re = tt.expand_dims %rows {axis = 1 : i32} : tensor<4xi32> -> tensor<4x1xi32>
  %rb = tt.broadcast %re : tensor<4x1xi32> -> tensor<4x4xi32>
  %ss = tt.splat %stride : i32 -> tensor<4x4xi32>
  %prod = arith.muli %rb, %ss : tensor<4x4xi32>
  %ns = tt.splat %n0 : i32 -> tensor<4xi32>
  %cols = arith.addi %ns, %r : tensor<4xi32>
  %ce = tt.expand_dims %cols {axis = 0 : i32} : tensor<4xi32> -> tensor<1x4xi32>
  %cb = tt.broadcast %ce : tensor<1x4xi32> -> tensor<4x4xi32>
  %offs = arith.addi %prod, %cb : tensor<4x4xi32>
  %ip = tt.splat %idx : !tt.ptr<i32> -> tensor<4x!tt.ptr<i32>>
  %iq = tt.addptr %ip, %r : tensor<4x!tt.ptr<i32>>, tensor<4xi32>
  %ld = tt.load %iq : tensor<4x!tt.ptr<i32>>
  %le = tt.expand_dims %ld {axis = 0 : i32} : tensor<4xi32> -> tensor<1x4xi32>
  %lb = tt.broadcast %le : tensor<1x4xi32> -> tensor<4x4xi32>
  %offs2 = arith.addi %offs, %lb : tensor<4x4xi32>
  %one = arith.constant dense<1.000000e+00> : tensor<4x4xf32>
  %two = arith.constant dense<2.000000e+00> : tensor<4x4xf32>
  %op = tt.splat %out : !tt.ptr<f32> -> tensor<4x4x!tt.ptr<f32>>
  %p1 = tt.addptr %op, %offs : tensor<4x4x!tt.ptr<f32>>, tensor<4x4xi32>
  tt.store %p1, %one : tensor<4x4x!tt.ptr<f32>>
  %p2 = tt.addptr %op, %offs2 : tensor<4x4x!tt.ptr<f32>>, tensor<4x4xi32>
  tt.store %p2, %two : tensor<4x4x!tt.ptr<f32>>
  tt.return
}
"""


def _args_2d(count: int) -> list[tuple[int, int, int]]:
    rng = random.Random("offset-2d")
    return [(_i32(rng), _i32(rng), _i32(rng)) for _ in range(count)]


def _loaded(j: int) -> int:
    from tests.differential.mlir_text import Type

    return int(memory(np.array([X + j], np.int64), Type("int", 32))[0])


@pytest.mark.parametrize("mode", ["record", "abort"])
def test_offset_overflow_check_2d_and_loaded_offsets(mode):
    cases = _args_2d(6000)
    result = compare(KERNEL_2D, "offset_overflow_check", [(OUT, X) + c for c in cases],
                     memory=memory,
                     options=(("mode", mode), ("print", "every"), ("records", "false")))
    loaded = [_loaded(j) for j in range(4)]
    exact = []
    for m0, stride, n0 in cases:
        first = [(m0 + i) * stride + n0 + j for i in range(4) for j in range(4)]
        second = [first[i * 4 + j] + loaded[j] for i in range(4) for j in range(4)]
        exact.append([sum(not I32_MIN <= v <= I32_MAX for v in vals) for vals in (first, second)])
    exact = np.array(exact)
    assert exact[:, 0].any() and exact[:, 1].any() and (exact.sum(axis=1) == 0).any()
    _assert_exact_per_site(result, cases, exact, KERNEL_2D, ("%offs =", "%offs2 ="), mode)


# A GEMM's shape (issue 32): the loaded tile's offset before the loop, the stored tile's offset
# after it, computed again from the kernel's arguments (`(a + i) * t + j`, the epilogue's
# `idx_m * stride_cm + idx_n`). offset_overflow_check reports both in front of the loop, the
# epilogue's bounds test included; the counts must stay exact, and the stores unchanged.
KERNEL_EPILOGUE = """
tt.func public @k(%out: !tt.ptr<f32>, %x: !tt.ptr<f32>, %a: i32, %s: i32, %t: i32, %lb: i32,
                  %ub: i32) {
  %r = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
  %as = tt.splat %a : i32 -> tensor<4xi32>
  %rows = arith.addi %as, %r : tensor<4xi32>
  %re = tt.expand_dims %rows {axis = 1 : i32} : tensor<4xi32> -> tensor<4x1xi32>
  %ss = tt.splat %s : i32 -> tensor<4x1xi32>
  %prod = arith.muli %re, %ss : tensor<4x1xi32>
  %pb = tt.broadcast %prod : tensor<4x1xi32> -> tensor<4x4xi32>
  %ce = tt.expand_dims %r {axis = 0 : i32} : tensor<4xi32> -> tensor<1x4xi32>
  %cb = tt.broadcast %ce : tensor<1x4xi32> -> tensor<4x4xi32>
  %offs = arith.addi %pb, %cb : tensor<4x4xi32>
  %xp = tt.splat %x : !tt.ptr<f32> -> tensor<4x4x!tt.ptr<f32>>
  %xq = tt.addptr %xp, %offs : tensor<4x4x!tt.ptr<f32>>, tensor<4x4xi32>
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.000000e+00> : tensor<4x4xf32>
  %acc = scf.for %iv = %lb to %ub step %c1 iter_args(%ac = %zero) -> (tensor<4x4xf32>) : i32 {
    %w = tt.load %xq : tensor<4x4x!tt.ptr<f32>>
    %sum = arith.addf %ac, %w : tensor<4x4xf32>
    scf.yield %sum : tensor<4x4xf32>
  }
  %r2 = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
  %as2 = tt.splat %a : i32 -> tensor<4xi32>
  %rows2 = arith.addi %as2, %r2 : tensor<4xi32>
  %re2 = tt.expand_dims %rows2 {axis = 1 : i32} : tensor<4xi32> -> tensor<4x1xi32>
  %ts = tt.splat %t : i32 -> tensor<4x1xi32>
  %eprod = arith.muli %re2, %ts : tensor<4x1xi32>
  %eb = tt.broadcast %eprod : tensor<4x1xi32> -> tensor<4x4xi32>
  %ce2 = tt.expand_dims %r2 {axis = 0 : i32} : tensor<4xi32> -> tensor<1x4xi32>
  %cb2 = tt.broadcast %ce2 : tensor<1x4xi32> -> tensor<4x4xi32>
  %eoffs = arith.addi %eb, %cb2 : tensor<4x4xi32>
  %op = tt.splat %out : !tt.ptr<f32> -> tensor<4x4x!tt.ptr<f32>>
  %oq = tt.addptr %op, %eoffs : tensor<4x4x!tt.ptr<f32>>, tensor<4x4xi32>
  tt.store %oq, %acc : tensor<4x4x!tt.ptr<f32>>
  tt.return
}
"""


@pytest.mark.parametrize("mode", ["record", "abort"])
def test_offset_overflow_check_epilogue_after_loop(mode):
    rng = random.Random(f"offset-epilogue-{mode}")
    cases = []
    for _ in range(4000):
        lb = rng.randint(-3, 3)
        cases.append((_i32(rng), _i32(rng), _i32(rng), lb, lb + rng.randint(-2, 4)))
    result = compare(KERNEL_EPILOGUE, "offset_overflow_check", [(OUT, X) + c for c in cases],
                     memory=memory,
                     options=(("mode", mode), ("print", "every"), ("records", "false")))
    exact = np.array([[sum(not I32_MIN <= (a + i) * stride + j <= I32_MAX
                           for i in range(4) for j in range(4)) for stride in (s, t)]
                      for a, s, t, lb, ub in cases])
    assert exact[:, 0].any() and exact[:, 1].any() and (exact.sum(axis=1) == 0).any()
    _assert_exact_per_site(result, cases, exact, KERNEL_EPILOGUE, ("%offs =", "%eoffs ="), mode)


# Offsets whose tensor leaves are not ranges (issue 18): `(a + r) % m` scaled by a stride, as
# in torchao's and Triton's GEMMs (`ram = rm % M`), and a loop over `(iv + r) // d` plus a base,
# as in Liger's group norm (`global_channel = group * cpg + offsets // per_channel`). The pass
# bounds such leaves at run time (sign-aware |x % m| < |m|, division corners) and counts lanes
# only when the bounds leave i32; the counts must stay exact, with negative and extreme m and d.
KERNEL_LEAVES = """
tt.func public @k(%out: !tt.ptr<f32>, %x: !tt.ptr<f32>, %a: i32, %m: i32, %s: i32, %b: i32,
                  %d: i32, %lb: i32, %ub: i32) {
  %r = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
  %as = tt.splat %a : i32 -> tensor<4xi32>
  %rows = arith.addi %as, %r : tensor<4xi32>
  %ms = tt.splat %m : i32 -> tensor<4xi32>
  %ram = arith.remsi %rows, %ms : tensor<4xi32>
  %re = tt.expand_dims %ram {axis = 1 : i32} : tensor<4xi32> -> tensor<4x1xi32>
  %ss = tt.splat %s : i32 -> tensor<4x1xi32>
  %prod = arith.muli %re, %ss : tensor<4x1xi32>
  %pb = tt.broadcast %prod : tensor<4x1xi32> -> tensor<4x4xi32>
  %ce = tt.expand_dims %r {axis = 0 : i32} : tensor<4xi32> -> tensor<1x4xi32>
  %cb = tt.broadcast %ce : tensor<1x4xi32> -> tensor<4x4xi32>
  %offs = arith.addi %pb, %cb : tensor<4x4xi32>
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.000000e+00> : tensor<4xf32>
  %xp = tt.splat %x : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>>
  %bs = tt.splat %b : i32 -> tensor<4xi32>
  %ds = tt.splat %d : i32 -> tensor<4xi32>
  %acc = scf.for %iv = %lb to %ub step %c1 iter_args(%ac = %zero) -> (tensor<4xf32>) : i32 {
    %ivs = tt.splat %iv : i32 -> tensor<4xi32>
    %h = arith.addi %ivs, %r : tensor<4xi32>
    %q = arith.divsi %h, %ds : tensor<4xi32>
    %o2 = arith.addi %bs, %q : tensor<4xi32>
    %xq = tt.addptr %xp, %o2 : tensor<4x!tt.ptr<f32>>, tensor<4xi32>
    %w = tt.load %xq : tensor<4x!tt.ptr<f32>>
    %sum = arith.addf %ac, %w : tensor<4xf32>
    scf.yield %sum : tensor<4xf32>
  }
  %ae = tt.expand_dims %acc {axis = 0 : i32} : tensor<4xf32> -> tensor<1x4xf32>
  %ab = tt.broadcast %ae : tensor<1x4xf32> -> tensor<4x4xf32>
  %op = tt.splat %out : !tt.ptr<f32> -> tensor<4x4x!tt.ptr<f32>>
  %p1 = tt.addptr %op, %offs : tensor<4x4x!tt.ptr<f32>>, tensor<4x4xi32>
  tt.store %p1, %ab : tensor<4x4x!tt.ptr<f32>>
  tt.return
}
"""


def _truncdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _args_leaves(count: int) -> list[tuple[int, ...]]:
    """(a, m, s, b, d, lb, ub) with m, d != 0 (a zero divisor is the kernel's own undefined
    behaviour) and no INT32_MIN / -1 in the loop (likewise)."""
    rng = random.Random("offset-leaves")
    small = [1, -1, 2, -2, 3, 7, -7, 64, 4096, 46341, -46341]
    out = []
    while len(out) < count:
        a, s, b = _i32(rng), _i32(rng), _i32(rng)
        m = rng.choice(small) if rng.random() < 0.5 else _i32(rng)
        d = rng.choice(small) if rng.random() < 0.5 else _i32(rng)
        lb = _i32(rng) if rng.random() < 0.5 else rng.randint(-5, 5)
        ub = min(max(lb + rng.randint(-3, 8), I32_MIN), I32_MAX)
        hs = [to_signed(iv + r, 32) for iv in range(lb, ub) for r in range(4)]
        if m == 0 or d == 0 or (d == -1 and I32_MIN in hs):
            continue
        out.append((a, m, s, b, d, lb, ub))
    return out


def _exact_leaf_wraps(a: int, m: int, s: int, b: int, d: int, lb: int, ub: int) -> list[int]:
    """[lanes of rem(a + i, m) * s + j outside i32, lanes of b + (iv + r) / d outside i32 in
    some iteration], with the kernel's i32 `a + i` and `iv + r`."""
    first = 0
    for i in range(4):
        rem = to_signed(a + i, 32)
        rem = rem - _truncdiv(rem, m) * m
        first += sum(not I32_MIN <= rem * s + j <= I32_MAX for j in range(4))
    wrapped = {r for iv in range(lb, ub) for r in range(4)
               if not I32_MIN <= b + _truncdiv(to_signed(iv + r, 32), d) <= I32_MAX}
    return [first, len(wrapped)]


@pytest.mark.parametrize("mode", ["record", "abort"])
def test_offset_overflow_check_rem_and_div_leaves(mode):
    cases = _args_leaves(4000)
    result = compare(KERNEL_LEAVES, "offset_overflow_check", [(OUT, X) + c for c in cases],
                     memory=memory,
                     options=(("mode", mode), ("print", "every"), ("records", "false")))
    exact = np.array([_exact_leaf_wraps(*c) for c in cases])
    assert exact[:, 0].any() and exact[:, 1].any() and (exact.sum(axis=1) == 0).any()
    _assert_exact_per_site(result, cases, exact, KERNEL_LEAVES, ("%offs =", "%o2 ="), mode)


# masked_load_poison + offset_overflow_check on a masked gather (issue 26 item 2): an index
# loaded under `m` (no `other`: poisoned to INT_MIN in masked-off rows) scales a row offset
# `idx[:, None] * d` (the pointer broadcast to the tile, as Triton emits `W + idx[:, None] * d
# + cols`), read under `m2[:, None]`; and the same rows plus columns as one tree, stored under
# `m[:, None] & (cols < c)[None, :]`. A row is counted when some access touches it or its index
# was loaded (m | m2): a masked-off row that no access touches holds the poison, not an index.
KERNEL_GATHER = """
tt.func public @k(%out: !tt.ptr<f32>, %w: !tt.ptr<f32>, %ids: !tt.ptr<i32>, %n: i32, %n2: i32,
                  %d: i32, %c: i32) {
  %r = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
  %ns = tt.splat %n : i32 -> tensor<4xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<4xi32>
  %ip = tt.splat %ids : !tt.ptr<i32> -> tensor<4x!tt.ptr<i32>>
  %iq = tt.addptr %ip, %r : tensor<4x!tt.ptr<i32>>, tensor<4xi32>
  %idx = tt.load %iq, %m : tensor<4x!tt.ptr<i32>>
  %ie = tt.expand_dims %idx {axis = 1 : i32} : tensor<4xi32> -> tensor<4x1xi32>
  %ds = tt.splat %d : i32 -> tensor<4x1xi32>
  %rows = arith.muli %ie, %ds : tensor<4x1xi32>
  %n2s = tt.splat %n2 : i32 -> tensor<4xi32>
  %m2 = arith.cmpi slt, %r, %n2s : tensor<4xi32>
  %m2e = tt.expand_dims %m2 {axis = 1 : i32} : tensor<4xi1> -> tensor<4x1xi1>
  %m2b = tt.broadcast %m2e : tensor<4x1xi1> -> tensor<4x4xi1>
  %wp = tt.splat %w : !tt.ptr<f32> -> tensor<4x1x!tt.ptr<f32>>
  %wq = tt.addptr %wp, %rows : tensor<4x1x!tt.ptr<f32>>, tensor<4x1xi32>
  %wb = tt.broadcast %wq : tensor<4x1x!tt.ptr<f32>> -> tensor<4x4x!tt.ptr<f32>>
  %ce = tt.expand_dims %r {axis = 0 : i32} : tensor<4xi32> -> tensor<1x4xi32>
  %cb = tt.broadcast %ce : tensor<1x4xi32> -> tensor<4x4xi32>
  %wr = tt.addptr %wb, %cb : tensor<4x4x!tt.ptr<f32>>, tensor<4x4xi32>
  %v = tt.load %wr, %m2b : tensor<4x4x!tt.ptr<f32>>
  %rb = tt.broadcast %rows : tensor<4x1xi32> -> tensor<4x4xi32>
  %offs2 = arith.addi %rb, %cb : tensor<4x4xi32>
  %cs = tt.splat %c : i32 -> tensor<1x4xi32>
  %cm = arith.cmpi slt, %ce, %cs : tensor<1x4xi32>
  %cmb = tt.broadcast %cm : tensor<1x4xi1> -> tensor<4x4xi1>
  %me = tt.expand_dims %m {axis = 1 : i32} : tensor<4xi1> -> tensor<4x1xi1>
  %mb = tt.broadcast %me : tensor<4x1xi1> -> tensor<4x4xi1>
  %sm = arith.andi %mb, %cmb : tensor<4x4xi1>
  %op = tt.splat %out : !tt.ptr<f32> -> tensor<4x4x!tt.ptr<f32>>
  %oq = tt.addptr %op, %offs2 : tensor<4x4x!tt.ptr<f32>>, tensor<4x4xi32>
  tt.store %oq, %v, %sm : tensor<4x4x!tt.ptr<f32>>
  tt.return
}
"""
IDS_SMALL, IDS_LARGE = 3 << 40, 4 << 40


def _gather_memory(addr: np.ndarray, ty) -> np.ndarray:
    """Indices near 0 (IDS_SMALL) or anywhere in [-2^30, 2^30) (IDS_LARGE); floats elsewhere."""
    if ty.kind == "float":
        return memory(addr, ty)
    h = (addr.astype(np.uint64) * np.uint64(2654435761)) >> np.uint64(7)
    small = (h % np.uint64(64)).astype(np.int64) - 8
    return np.where(addr >= IDS_LARGE, memory(addr, ty), small)


def _args_gather(count: int) -> list[tuple[int, ...]]:
    """(ids, n, n2, d, c): rows valid under n (the index mask) and n2 (the read's mask), strides
    that make INT_MIN * d and some loaded index * d wrap, and strides that do not."""
    rng = random.Random("offset-gather")
    out = []
    for _ in range(count):
        ids = rng.choice((IDS_SMALL, IDS_LARGE)) + rng.randint(0, 1 << 20)
        d = rng.choice([0, 1, -1, 2, 3, 16, 4096, 1 << 20, 46341]) if rng.random() < 0.6 else _i32(rng)
        out.append((ids, rng.randint(-1, 5), rng.randint(-1, 5), d, rng.randint(0, 5)))
    return out


def _exact_gather_wraps(ids: int, n: int, n2: int, d: int, c: int) -> list[int]:
    """[rows i with m | m2 whose idx_i * d leaves i32, lanes (i, j) with m whose idx_i * d + j
    leaves i32], idx_i the loaded index under m and the poison INT_MIN elsewhere."""
    from tests.differential.mlir_text import Type

    loaded = _gather_memory(np.array([ids + i for i in range(4)], np.int64), Type("int", 32))
    idx = [int(loaded[i]) if i < n else I32_MIN for i in range(4)]
    rows = sum(not I32_MIN <= idx[i] * d <= I32_MAX for i in range(4) if i < n or i < n2)
    tile = sum(not I32_MIN <= idx[i] * d + j <= I32_MAX for i in range(4) if i < n for j in range(4))
    return [rows, tile]


def test_poison_and_offset_check_compose_on_a_masked_gather():
    from tests.differential.host_passes import _print, pipeline_for
    from tests.differential.interp import Machine
    from tests.differential.mlir_text import parse_module

    cases = _args_gather(3000)
    options = {"print": "every", "records": "false"}
    before = _print(KERNEL_GATHER, pipeline_for("masked_load_poison"))
    after = _print(KERNEL_GATHER, pipeline_for("masked_load_poison")
                   + pipeline_for("offset_overflow_check", options))
    machine = Machine(len(cases), memory=_gather_memory)
    args = [np.array(list(col), dtype=object) for col in zip(*[(OUT, X) + c for c in cases])]
    run_before = machine.run(parse_module(before)["k"], args)
    run_after = machine.run(parse_module(after)["k"], args)
    exact = np.array([_exact_gather_wraps(*c) for c in cases])
    # The cases include rows that wrap only through the poison and real wraps of loaded rows.
    poison_only = [i for i, (ids, n, n2, d, c) in enumerate(cases)
                   if n < 4 and n2 <= n and d not in (0, 1) and not exact[i].any()]
    assert poison_only and exact[:, 0].any() and exact[:, 1].any()
    reports = _reports(run_after, len(cases), "offset_overflow_check")
    sites = (_line(KERNEL_GATHER, "%rows ="), _line(KERNEL_GATHER, "%offs2 ="))
    assert set(reports) <= set(sites), sorted(reports)
    zero = np.zeros(len(cases), np.int64)
    got = np.stack([reports.get(s, zero) for s in sites], axis=1)
    bad = np.nonzero((got != exact).any(axis=1))[0]
    assert bad.size == 0, [(cases[i], "exact", exact[i].tolist(), "reported", got[i].tolist())
                           for i in bad[:5]]
    diffs = mismatched_lanes(run_before, run_after, len(cases))
    changed = {k: int(diffs[k].sum()) for k in ("memory", "trips", "undefined") if diffs[k].any()}
    assert not changed, changed


# A loop nest the user asked to flatten (issue 32): the check of `i * s + b` inside the inner
# loop is carried out of the nest (an i1 through both loops) and reported after it. The count
# is 1 when some iteration the kernel runs wraps (the inner loop must run for `i * s` to be
# computed), else 0.
KERNEL_FLATTEN = """
tt.func public @k(%out: !tt.ptr<f32>, %x: !tt.ptr<f32>, %s: i32, %b: i32, %lb: i32, %ub: i32,
                  %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %one = arith.constant 1.000000e+00 : f32
  scf.for %i = %lb to %ub step %c1 : i32 {
    scf.for %j = %c0 to %n step %c1 : i32 {
      %is = arith.muli %i, %s : i32
      %off = arith.addi %is, %b : i32
      %p = tt.addptr %out, %off : !tt.ptr<f32>, i32
      %q = tt.addptr %p, %j : !tt.ptr<f32>, i32
      tt.store %q, %one : !tt.ptr<f32>
    }
  } {tt.flatten}
  tt.return
}
"""


def _args_flatten(count: int) -> list[tuple[int, ...]]:
    rng = random.Random("offset-flatten")
    out = []
    for _ in range(count):
        s, b = _i32(rng), _i32(rng)
        lb = _i32(rng) if rng.random() < 0.3 else rng.randint(-5, 5)
        ub = min(max(lb + rng.randint(-2, 6), I32_MIN), I32_MAX)
        out.append((s, b, lb, ub, rng.randint(-1, 3)))
    return out


@pytest.mark.parametrize("mode", ["record", "abort"])
def test_offset_overflow_check_flatten_nest_counts_exactly(mode):
    cases = _args_flatten(4000)
    result = compare(KERNEL_FLATTEN, "offset_overflow_check", [(OUT, X) + c for c in cases],
                     memory=memory,
                     options=(("mode", mode), ("print", "every"), ("records", "false")))
    exact = np.array([[int(n > 0 and any(not I32_MIN <= i * s + b <= I32_MAX
                                         for i in range(lb, ub)))]
                      for s, b, lb, ub, n in cases])
    assert exact.any() and not exact.all()
    _assert_exact_per_site(result, cases, exact, KERNEL_FLATTEN, ("%off =",), mode)


# Stores in a loop (issue 32): `out + iv * s + r` changes with the iteration, so nan_inf_check
# carries per-lane counts through the loop and reports once after it; `out2 + r` is written
# again in every iteration (the check per iteration stays). Both reports must be the exact
# number of non-finite lanes stored, summed over the iterations.
KERNEL_LOOP_STORES = """
tt.func public @k(%out: !tt.ptr<f32>, %x: !tt.ptr<f32>, %s: i32, %n: i32, %lb: i32, %ub: i32,
                  %out2: !tt.ptr<f32>) {
  %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
  %ns = tt.splat %n : i32 -> tensor<8xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<8xi32>
  %c1 = arith.constant 1 : i32
  %xp = tt.splat %x : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
  %op = tt.splat %out : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
  %op2 = tt.splat %out2 : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
  %q2 = tt.addptr %op2, %r : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
  scf.for %iv = %lb to %ub step %c1 : i32 {
    %ivs = arith.muli %iv, %s : i32
    %ivt = tt.splat %ivs : i32 -> tensor<8xi32>
    %o = arith.addi %ivt, %r : tensor<8xi32>
    %xq = tt.addptr %xp, %o : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    %v = tt.load %xq : tensor<8x!tt.ptr<f32>>
    %w = arith.mulf %v, %v : tensor<8xf32>
    %oq = tt.addptr %op, %o : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    tt.store %oq, %w, %m : tensor<8x!tt.ptr<f32>>
    tt.store %q2, %v : tensor<8x!tt.ptr<f32>>
  }
  tt.return
}
"""
OUT2 = 5 << 40


def _args_loop_stores(count: int) -> list[tuple[int, ...]]:
    rng = random.Random("naninf-loop")
    out = []
    for _ in range(count):
        lb = rng.randint(-5, 5)
        out.append((rng.choice([0, 1, 3, 8, 1000, 65536]) + rng.randint(0, 3), rng.randint(-1, 9),
                    lb, lb + rng.randint(-2, 7)))
    return out


@pytest.mark.parametrize("mode,fast_path", [("record", "reload"), ("record", "count"),
                                            ("record", "peak"), ("abort", "reload")])
def test_nan_inf_check_loop_stores_count_exactly(mode, fast_path):
    from tests.differential.mlir_text import Type

    cases = _args_loop_stores(3000)
    result = compare(KERNEL_LOOP_STORES, "nan_inf_check", [(OUT, X) + c + (OUT2,) for c in cases],
                     memory=memory, forward_stores=True,
                     options=(("mode", mode), ("fast-path", fast_path), ("print", "every"),
                              ("records", "false")))
    exact = np.zeros((len(cases), 2), np.int64)
    for k, (s, n, lb, ub) in enumerate(cases):
        for iv in range(lb, ub):
            addr = np.array([X + to_signed(iv * s + r, 32) for r in range(R)], np.int64)
            v = memory(addr, Type("float", 32)).astype(np.float32)
            with np.errstate(over="ignore", invalid="ignore"):
                w = v * v
            exact[k, 0] += int((~np.isfinite(w) & (np.arange(R) < n)).sum())
            exact[k, 1] += int((~np.isfinite(v)).sum())
    if mode == "abort":
        # The kernel aborts in the first iteration with a finding, at its first finding store.
        aborted = result.after.assert_failed
        assert (aborted == (exact.sum(axis=1) > 0)).all()
        return
    assert exact[:, 0].any() and exact[:, 1].any() and (exact.sum(axis=1) == 0).any()
    # The first store's counts are carried by the loop (one i32 per lane), not reported in it.
    assert "-> (tensor<8xi32>)" in result.programs.after_text, result.programs.after_text
    reports = _reports(result.after, len(cases), "nan_inf_check")
    sites = (_line(KERNEL_LOOP_STORES, "tt.store %oq"), _line(KERNEL_LOOP_STORES, "tt.store %q2"))
    assert set(reports) <= set(sites), sorted(reports)
    zero = np.zeros(len(cases), np.int64)
    got = np.stack([reports.get(s, zero) for s in sites], axis=1)
    bad = np.nonzero((got != exact).any(axis=1))[0]
    assert bad.size == 0, [(cases[i], "exact", exact[i].tolist(), "reported", got[i].tolist())
                           for i in bad[:5]]
    _unchanged(result, "memory", "trips", "runaway", "undefined")


# A row kernel's shape (issue 32, the layer norms' flag group): two scalar stores (a loaded
# value, then its reciprocal: 1/0 = Inf, 1/denormal = Inf, 1/Inf = 0) and a masked tile store of
# the loaded row times the reciprocal. With the reload fast path (the default) the three stores
# share one flag and one branch (in TTIR every tile counts as small); each site's count must
# still be its own.
KERNEL_FLAG = """
tt.func public @k(%out: !tt.ptr<f32>, %x: !tt.ptr<f32>, %s: i32, %n: i32, %out2: !tt.ptr<f32>) {
  %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
  %ns = tt.splat %n : i32 -> tensor<8xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<8xi32>
  %st = tt.splat %s : i32 -> tensor<8xi32>
  %o = arith.addi %st, %r : tensor<8xi32>
  %xp = tt.splat %x : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
  %xq = tt.addptr %xp, %o : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
  %v = tt.load %xq : tensor<8x!tt.ptr<f32>>
  %x0 = tt.addptr %x, %s : !tt.ptr<f32>, i32
  %sc = tt.load %x0 : !tt.ptr<f32>
  tt.store %out2, %sc : !tt.ptr<f32>
  %one = arith.constant 1.000000e+00 : f32
  %inv = arith.divf %one, %sc : f32
  %c1 = arith.constant 1 : i32
  %out3 = tt.addptr %out2, %c1 : !tt.ptr<f32>, i32
  tt.store %out3, %inv : !tt.ptr<f32>
  %invs = tt.splat %inv : f32 -> tensor<8xf32>
  %w = arith.mulf %v, %invs : tensor<8xf32>
  %op = tt.splat %out : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
  %oq = tt.addptr %op, %r : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
  tt.store %oq, %w, %m : tensor<8x!tt.ptr<f32>>
  tt.return
}
"""


@pytest.mark.parametrize("fast_path", ["reload", "count"])
def test_nan_inf_check_flag_group_counts_each_site_exactly(fast_path):
    from tests.differential.mlir_text import Type

    rng = random.Random("naninf-flag")
    cases = [(rng.randint(0, 4000), rng.choice([0, 1, 5, 8, 100])) for _ in range(4000)]
    result = compare(KERNEL_FLAG, "nan_inf_check", [(OUT, X) + c + (OUT2,) for c in cases],
                     memory=memory, forward_stores=True,
                     options=(("fast-path", fast_path), ("print", "every"), ("records", "false")))
    exact = np.zeros((len(cases), 3), np.int64)
    for k, (s, n) in enumerate(cases):
        v = memory(np.array([X + s + r for r in range(R)], np.int64),
                   Type("float", 32)).astype(np.float32)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            inv = np.float32(1.0) / v[0]
            w = v * inv
        exact[k] = (not np.isfinite(v[0]), not np.isfinite(inv),
                    int((~np.isfinite(w) & (np.arange(R) < n)).sum()))
    assert (exact > 0).any(axis=0).all() and (exact.sum(axis=1) == 0).any()
    grouped = "-> (i32, i32, i32, i32, i32, i32)" in result.programs.after_text
    assert grouped == (fast_path == "reload"), result.programs.after_text
    reports = _reports(result.after, len(cases), "nan_inf_check")
    sites = tuple(_line(KERNEL_FLAG, p) for p in ("tt.store %out2", "tt.store %out3",
                                                   "tt.store %oq"))
    assert set(reports) <= set(sites), sorted(reports)
    zero = np.zeros(len(cases), np.int64)
    got = np.stack([reports.get(site, zero) for site in sites], axis=1)
    bad = np.nonzero((got != exact).any(axis=1))[0]
    assert bad.size == 0, [(cases[i], "exact", exact[i].tolist(), "reported", got[i].tolist())
                           for i in bad[:5]]
    _unchanged(result, "memory", "trips", "runaway", "undefined")
