//===- LoopSplitAnalysis.cpp - Where and whether to split a loop ----------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Model. Each side of an `arith.cmpi` is read as `[iv] + [inv] + [lo, hi]`:
// an optional induction variable, an optional loop-invariant scalar and a
// constant interval. The interval comes from `tt.make_range` bounds and
// integer constants, and is carried through `tt.splat`, `tt.expand_dims`,
// `tt.broadcast`, `arith.addi` and `arith.subi` of a constant. Exactly one
// side may hold the iv. With the iv on the left (the predicate is swapped
// otherwise), L = iv + A + [aLo, aHi], R = B + [bLo, bHi] and C = B - A, the
// whole comparison is constant below P1 = C + k1 and from P2 = C + k2 on,
// where k1 <= k2 follow from the intervals (see planComparison). A scalar
// comparison is the interval [0, 0] on both sides, so k1 == k2.
//
// Wrapping. The interval reasoning is about mathematical values, but the
// kernel computes with wrapping iN arithmetic. Addition modulo 2^N is
// associative, so a sum whose mathematical value fits iN is computed exactly
// whatever the order of the additions; as each side is monotone in the iv and
// in its offsets, it is enough that the extremes fit:
//   lb + A + aLo >= MIN,  (ub - 1) + A + aHi <= MAX,
//   B + bLo >= MIN,       B + bHi <= MAX
// (for unsigned predicates both minimums >= 0 instead of >= MIN: unsigned and
// signed order agree on non-negative values). These are the guard's checks
// (see collectGuard); checks whose values are constants are decided here, so
// a scalar `iv < n` needs no guard at all. For i64 loops with an invariant on
// the iv side the sums have two unknown terms, so the guard instead bounds
// lb, ub, A and B by 2^60, which keeps every sum far from 2^63.
//
// When the guard may fail at run time, the plan always has a middle part that
// keeps the comparison, and the split points are selected so that, on
// failure, the low and high parts are empty and the middle part is [lb, ub):
// the loop then runs exactly as before. When the guard is known to fail, the
// loop is left alone.
//
// Split points (built by LoopSplit.cpp, in i64; i32 values sign-extended):
//   ubE = max(lb, ub)                      (a zero-trip loop stays empty)
//   m1 = clamp(P1, lb, ubE), m2 = clamp(P2, m1, ubE)
//   r(m) = first iteration >= m, or ubE if there is none before ubE
// Low is [lb, m1), mid [r1, m2), high [r2, ub). Every iteration below m1 is
// in low, every one in [m1, m2) in mid (none lies in [m1, r1)), every one
// from m2 on in high; so the parts run exactly the original iterations, in
// order. For i32 loops every value is exact in i64. For i64 loops P = B + k
// is computed with saturation (clamping a saturated value gives the clamp of
// the exact one, since lb and ubE are representable), or as B - A + k, exact
// when the 2^60 bounds of the guard hold (and replaced by the failure values
// when they do not); LoopSplit.cpp explains why r cannot wrap.
//
// Empty parts are dropped when that is known whatever the guard gives: from
// constants (P1 <= lb: no iteration below P1; P2 >= ub: none from P2 on), and
// for bounds written in terms of the comparand (lb = start_m * BM against
// offs_m = start_m * BM + arange), symbolically, see linearDifference. A loop
// where both constant parts are empty is left alone (nothing would fold).
//
//===----------------------------------------------------------------------===//

#include "LoopSplitAnalysis.h"

#include "triton-ext/RangeAnalysis.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "triton/Dialect/Triton/IR/Dialect.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <optional>

using namespace mlir;

namespace mlir::triton_ext::loop_split {
namespace {

/// Exact arithmetic on sums of a few 64-bit values and offsets.
using Wide = __int128;

/// Largest iv coefficient read (`j * TILE_SIZE`); keeps s * iv bounds exact.
constexpr int64_t kMaxScale = int64_t(1) << 20;

/// Recursion limit for the affine walk; masks are a handful of ops deep.
constexpr unsigned kMaxDepth = 16;

/// Adds two offsets; nullopt if the sum leaves [-kMaxOffset, kMaxOffset].
std::optional<int64_t> addOffsets(int64_t a, int64_t b) {
  int64_t sum;
  if (__builtin_add_overflow(a, b, &sum) || sum > kMaxOffset ||
      sum < -kMaxOffset)
    return std::nullopt;
  return sum;
}

/// The constant interval of `range` lies in the signed range of `value`'s
/// element type.
bool fitsElement(const AffineRange &range, Value value) {
  unsigned width =
      getElementTypeOrSelf(value.getType()).getIntOrFloatBitWidth();
  if (width >= 64)
    return true; // |lo|, |hi| <= 2^41
  int64_t max = (int64_t(1) << (width - 1)) - 1;
  return range.lo >= -max - 1 && range.hi <= max;
}

/// `range` with the requirements of `a` and `b` added.
AffineRange withRequirements(AffineRange range, const AffineRange &a,
                             const AffineRange &b) {
  range.requirements.append(a.requirements.begin(), a.requirements.end());
  range.requirements.append(b.requirements.begin(), b.requirements.end());
  return range;
}

/// The loop-invariant scalar `value` stands for (itself, or the source of a
/// tt.splat), or null.
Value invariantScalar(Value value, scf::ForOp loop) {
  if (auto splat = value.getDefiningOp<triton::SplatOp>())
    value = splat.getSrc();
  if (value.getType().isSignlessInteger() &&
      !loop.getRegion().isAncestor(value.getParentRegion()))
    return value;
  return Value();
}

/// Reads `value` as an AffineRange relative to `loop`. Fails for anything
/// whose values are not a known function of the iv (data-dependent) and for
/// non-constant values defined inside the loop.
FailureOr<AffineRange> analyzeAffine(Value value, scf::ForOp loop,
                                     unsigned depth = 0) {
  if (depth > kMaxDepth)
    return failure();
  APInt constant;
  if (matchPattern(value, m_ConstantInt(&constant))) {
    if (constant.getSignificantBits() > 64)
      return failure();
    int64_t c = constant.getSExtValue();
    if (c > kMaxOffset || c < -kMaxOffset)
      return failure();
    return AffineRange{false, Value(), c, c};
  }
  if (value == loop.getInductionVar())
    return AffineRange{true, Value(), 0, 0};
  // A scalar from outside the loop is one invariant term, however it was
  // computed (`start_m * BLOCK_M` need not be understood).
  if (value.getType().isSignlessInteger() &&
      !loop.getRegion().isAncestor(value.getParentRegion()))
    return AffineRange{false, value, 0, 0};

  Operation *def = value.getDefiningOp();
  if (!def)
    return failure();
  return llvm::TypeSwitch<Operation *, FailureOr<AffineRange>>(def)
      .Case<triton::SplatOp>([&](auto op) {
        return analyzeAffine(op.getSrc(), loop, depth + 1);
      })
      .Case<triton::ExpandDimsOp>([&](auto op) {
        return analyzeAffine(op.getSrc(), loop, depth + 1);
      })
      .Case<triton::BroadcastOp>([&](auto op) {
        return analyzeAffine(op.getSrc(), loop, depth + 1);
      })
      .Case<triton::MakeRangeOp>([&](auto op) -> FailureOr<AffineRange> {
        int64_t start = op.getStart(), end = op.getEnd();
        if (end <= start || end > kMaxOffset)
          return failure();
        return AffineRange{false, Value(), start, end - 1};
      })
      .Case<arith::AddIOp>([&](auto op) -> FailureOr<AffineRange> {
        auto lhs = analyzeAffine(op.getLhs(), loop, depth + 1);
        auto rhs = analyzeAffine(op.getRhs(), loop, depth + 1);
        if (failed(lhs) || failed(rhs))
          return failure();
        // Two iv terms would make the side 2*iv; two invariants would need
        // their sum, which may wrap. Neither occurs in the masks we target.
        if ((lhs->hasIv && rhs->hasIv) || (lhs->inv && rhs->inv))
          return failure();
        auto lo = addOffsets(lhs->lo, rhs->lo);
        auto hi = addOffsets(lhs->hi, rhs->hi);
        if (!lo || !hi)
          return failure();
        AffineRange sum{lhs->hasIv || rhs->hasIv,
                        lhs->inv ? lhs->inv : rhs->inv, *lo, *hi};
        sum.ivScale = lhs->hasIv ? lhs->ivScale : rhs->ivScale;
        return withRequirements(sum, *lhs, *rhs);
      })
      // `j * TILE_SIZE` (issue 17, paged and vLLM-style loops): the iv times
      // a positive constant c. c * (iv + [lo, hi]) = c * iv + [c*lo, c*hi]
      // (order kept as c > 0). An invariant times c is not a single value
      // the model can name, so it is refused; so are sides without the iv
      // (`arange * stride` is a range with gaps, its interval would do, but
      // no target mask needs it).
      .Case<arith::MulIOp>([&](auto op) -> FailureOr<AffineRange> {
        for (auto [x, y] : {std::pair(op.getLhs(), op.getRhs()),
                            std::pair(op.getRhs(), op.getLhs())}) {
          std::optional<int64_t> c = getConstantIntValue(y);
          if (!c)
            continue;
          auto side = analyzeAffine(x, loop, depth + 1);
          if (failed(side) || !side->hasIv || side->inv || *c <= 0 ||
              *c > kMaxScale)
            return failure();
          int64_t scale, lo, hi;
          if (__builtin_mul_overflow(side->ivScale, *c, &scale) ||
              scale > kMaxScale ||
              __builtin_mul_overflow(side->lo, *c, &lo) ||
              __builtin_mul_overflow(side->hi, *c, &hi) || lo < -kMaxOffset ||
              hi > kMaxOffset)
            return failure();
          AffineRange out = *side;
          out.ivScale = scale;
          out.lo = lo;
          out.hi = hi;
          return out;
        }
        return failure();
      })
      .Case<arith::SubIOp>([&](auto op) -> FailureOr<AffineRange> {
        auto lhs = analyzeAffine(op.getLhs(), loop, depth + 1);
        auto rhs = analyzeAffine(op.getRhs(), loop, depth + 1);
        // Only a constant interval may be subtracted: -iv or -inv would need
        // a sign in the model.
        if (failed(lhs) || failed(rhs) || rhs->hasIv || rhs->inv)
          return failure();
        auto lo = addOffsets(lhs->lo, -rhs->hi);
        auto hi = addOffsets(lhs->hi, -rhs->lo);
        if (!lo || !hi)
          return failure();
        AffineRange diff{lhs->hasIv, lhs->inv, *lo, *hi};
        diff.ivScale = lhs->ivScale;
        return withRequirements(diff, *lhs, *rhs);
      })
      // Monotone maps of a constant interval (issue 17: `offs_m // k` packs
      // grouped-query heads along M). A side with neither iv nor invariant is
      // a sum of make_range values and constants; when its interval fits the
      // element type, each element's wrapping sum equals its mathematical
      // value (see Wrapping in the header), so the kernel's operands, and
      // hence results, are the mathematical ones (checked by fitsElement;
      // `(arange + 2^31 - 2) / 2` wraps first and is refused). Then
      // x -> trunc(x / k) and
      // x >> s (floor(x / 2^s)) are nondecreasing for k > 0, and so are
      // x -> min(x, y) and max(x, y) in each argument; the image of [lo, hi]
      // lies in [f(lo), f(hi)]. Unsigned division and shifts read the bits
      // as unsigned: equal to the signed value only when lo >= 0. Operands
      // that hold the iv or an invariant are refused: (iv + c) / k is not of
      // the form iv + inv + [lo, hi]. Divisors and shift amounts that are
      // loop-invariant scalars (not constants) are handled below, guarded.
      .Case<arith::DivSIOp, arith::DivUIOp, arith::ShRSIOp, arith::ShRUIOp>(
          [&](Operation *op) -> FailureOr<AffineRange> {
            auto lhs = analyzeAffine(op->getOperand(0), loop, depth + 1);
            if (failed(lhs) || lhs->hasIv || lhs->inv ||
                !fitsElement(*lhs, op->getOperand(0)))
              return failure();
            bool isUnsigned = isa<arith::DivUIOp, arith::ShRUIOp>(op);
            bool isShift = isa<arith::ShRSIOp, arith::ShRUIOp>(op);
            if (isUnsigned && lhs->lo < 0)
              return failure();
            unsigned width = getElementTypeOrSelf(op->getResult(0).getType())
                                 .getIntOrFloatBitWidth();
            std::optional<int64_t> k = getConstantIntValue(op->getOperand(1));
            if (!k) {
              // A run-time divisor (issue 17: `offs_m // num_queries_per_kv`
              // when it is not a constexpr) or shift amount, invariant in the
              // loop. For every divisor k >= 1, trunc(x / k) lies between 0
              // and x, so the image of [lo, hi] is within [min(lo, 0),
              // max(hi, 0)] (looser than with a known k: the band of unknown
              // iterations is wider, never wrong); likewise floor(x / 2^s)
              // for shift amounts s in [0, width - 1] (a larger amount is
              // poison). The guard checks the requirement at run time
              // (a fact may prove it); when it fails only the middle loop,
              // which keeps the comparison, runs. Unsigned ops on lo >= 0 read
              // the same bits, and k >= 1 as a signed value is a non-zero
              // unsigned one no larger, so the bound holds for them too.
              Value amount = invariantScalar(op->getOperand(1), loop);
              if (!amount)
                return failure();
              AffineRange range{false, Value(), std::min<int64_t>(lhs->lo, 0),
                                std::max<int64_t>(lhs->hi, 0),
                                lhs->requirements};
              if (isShift) {
                range.requirements.push_back({amount, 0, /*atMost=*/false});
                range.requirements.push_back(
                    {amount, int64_t(width) - 1, /*atMost=*/true});
              } else {
                range.requirements.push_back({amount, 1, /*atMost=*/false});
              }
              return range;
            }
            if (*k <= 0)
              return failure();
            if (isShift) {
              if (*k >= int64_t(width) || *k >= 62)
                return failure();
              // >> is floor division by 2^s (arithmetic shift).
              return AffineRange{false, Value(), lhs->lo >> *k, lhs->hi >> *k,
                                 lhs->requirements};
            }
            return AffineRange{false, Value(), lhs->lo / *k, lhs->hi / *k,
                               lhs->requirements};
          })
      .Case<arith::MinSIOp, arith::MaxSIOp>(
          [&](Operation *op) -> FailureOr<AffineRange> {
            auto lhs = analyzeAffine(op->getOperand(0), loop, depth + 1);
            auto rhs = analyzeAffine(op->getOperand(1), loop, depth + 1);
            if (failed(lhs) || failed(rhs) || lhs->hasIv || rhs->hasIv ||
                lhs->inv || rhs->inv || !fitsElement(*lhs, op->getOperand(0)) ||
                !fitsElement(*rhs, op->getOperand(1)))
              return failure();
            if (isa<arith::MinSIOp>(op))
              return withRequirements(
                  AffineRange{false, Value(), std::min(lhs->lo, rhs->lo),
                              std::min(lhs->hi, rhs->hi)},
                  *lhs, *rhs);
            return withRequirements(
                AffineRange{false, Value(), std::max(lhs->lo, rhs->lo),
                            std::max(lhs->hi, rhs->hi)},
                *lhs, *rhs);
          })
      .Default([](Operation *) { return failure(); });
}

/// `value` as scale * base + offset, all modulo 2^N as the kernel computes it;
/// base is null for constants. Follows addi/subi/muli with a constant.
struct Linear {
  Value base;
  int64_t scale = 1, offset = 0;
};

Linear linearize(Value value, unsigned depth = 0) {
  APInt constant;
  if (matchPattern(value, m_ConstantInt(&constant)) &&
      constant.getSignificantBits() <= 64)
    return {Value(), 0, constant.getSExtValue()};
  Operation *def = value.getDefiningOp();
  if (!def || depth > kMaxDepth || isa<ShapedType>(value.getType()))
    return {value, 1, 0};
  Linear self{value, 1, 0};
  auto constOperand = [&](Value v) -> std::optional<int64_t> {
    if (matchPattern(v, m_ConstantInt(&constant)) &&
        constant.getSignificantBits() <= 64)
      return constant.getSExtValue();
    return std::nullopt;
  };
  int64_t r1, r2;
  if (auto add = dyn_cast<arith::AddIOp>(def)) {
    for (auto [x, y] : {std::pair(add.getLhs(), add.getRhs()),
                        std::pair(add.getRhs(), add.getLhs())})
      if (auto c = constOperand(y)) {
        Linear l = linearize(x, depth + 1);
        if (__builtin_add_overflow(l.offset, *c, &r1))
          return self;
        return {l.base, l.scale, r1};
      }
  } else if (auto sub = dyn_cast<arith::SubIOp>(def)) {
    if (auto c = constOperand(sub.getRhs())) {
      Linear l = linearize(sub.getLhs(), depth + 1);
      if (__builtin_sub_overflow(l.offset, *c, &r1))
        return self;
      return {l.base, l.scale, r1};
    }
  } else if (auto mul = dyn_cast<arith::MulIOp>(def)) {
    for (auto [x, y] : {std::pair(mul.getLhs(), mul.getRhs()),
                        std::pair(mul.getRhs(), mul.getLhs())})
      if (auto c = constOperand(y)) {
        Linear l = linearize(x, depth + 1);
        if (__builtin_mul_overflow(l.scale, *c, &r1) ||
            __builtin_mul_overflow(l.offset, *c, &r2))
          return self;
        return {l.base, r1, r2};
      }
  }
  return self;
}

/// d such that a == b + d modulo 2^N, if both are linear in the same base
/// with the same scale and |d| < 2^(N-2). Then, as N-bit values, a <= b + d
/// when d >= 0 and a >= b + d when d <= 0: the N-bit a is b + d or b + d
/// minus (resp. plus) 2^N, since b + d overflows at most once.
std::optional<int64_t> linearDifference(const Linear &la, const Linear &lb,
                                        unsigned width) {
  if (!la.base || la.base != lb.base || la.scale != lb.scale)
    return std::nullopt;
  int64_t d;
  int64_t limit = int64_t(1) << (width - 2);
  if (__builtin_sub_overflow(la.offset, lb.offset, &d) || d >= limit ||
      d <= -limit)
    return std::nullopt;
  return d;
}

std::optional<int64_t> linearDifference(Value a, Value b) {
  return linearDifference(linearize(a), linearize(b),
                          a.getType().getIntOrFloatBitWidth());
}

/// Predicate for `b pred a` given `a pred b`.
arith::CmpIPredicate swapPredicate(arith::CmpIPredicate pred) {
  using P = arith::CmpIPredicate;
  switch (pred) {
  case P::slt: return P::sgt;
  case P::sle: return P::sge;
  case P::sgt: return P::slt;
  case P::sge: return P::sle;
  case P::ult: return P::ugt;
  case P::ule: return P::uge;
  case P::ugt: return P::ult;
  case P::uge: return P::ule;
  default: return pred;
  }
}

/// Reads `cmp` as an ordered comparison of an iv-affine side with an
/// invariant side, or fails.
FailureOr<Comparison> planComparison(arith::CmpIOp cmp, scf::ForOp loop) {
  if (cmp.getResult().use_empty())
    return failure();
  auto lhs = analyzeAffine(cmp.getLhs(), loop);
  auto rhs = analyzeAffine(cmp.getRhs(), loop);
  if (failed(lhs) || failed(rhs) || lhs->hasIv == rhs->hasIv)
    return failure();
  Comparison plan;
  plan.cmp = cmp;
  arith::CmpIPredicate pred = cmp.getPredicate();
  plan.ivSide = *lhs;
  plan.otherSide = *rhs;
  if (rhs->hasIv) {
    std::swap(plan.ivSide, plan.otherSide);
    pred = swapPredicate(pred);
  }
  // A scaled iv (s != 1) is read only with no invariant on its side and in
  // i32 loops: the guard then bounds lb and ub alone (see collectGuard), and
  // every split point ceil((B + k) / s) is exact in i64.
  if (plan.ivSide.ivScale != 1 &&
      (plan.ivSide.inv ||
       !loop.getInductionVar().getType().isSignlessInteger(32)))
    return failure();
  using P = arith::CmpIPredicate;
  plan.isUnsigned =
      pred == P::ult || pred == P::ule || pred == P::ugt || pred == P::uge;
  // With L = iv + A + [ivLo, ivHi], R = B + [oLo, oHi] and C = B - A:
  //   L <= R everywhere iff iv + A + ivHi <= B + oLo iff iv < C + oLo-ivHi+1
  //   L <= R nowhere    iff iv + A + ivLo >  B + oHi iff iv >= C + oHi-ivLo+1
  // and likewise for the other predicates; `lt` drops the +1, `ge`/`gt` are
  // the negations of `lt`/`le` so the regions swap their values.
  int64_t below = plan.otherSide.lo - plan.ivSide.hi;
  int64_t above = plan.otherSide.hi - plan.ivSide.lo;
  switch (pred) {
  case P::slt: case P::ult:
    plan.k1 = below, plan.k2 = above, plan.lowValue = true;
    break;
  case P::sle: case P::ule:
    plan.k1 = below + 1, plan.k2 = above + 1, plan.lowValue = true;
    break;
  case P::sgt: case P::ugt:
    plan.k1 = below + 1, plan.k2 = above + 1, plan.lowValue = false;
    break;
  case P::sge: case P::uge:
    plan.k1 = below, plan.k2 = above, plan.lowValue = false;
    break;
  default:
    // eq/ne are known only outside a band and in no contiguous range of
    // iterations on both sides; not worth a split.
    return failure();
  }
  return plan;
}

std::optional<Wide> constantOf(Value value) {
  if (!value)
    return Wide(0);
  if (std::optional<int64_t> c = getConstantIntValue(value))
    return Wide(*c);
  return std::nullopt;
}

/// floor(x / s) and ceil(x / s) for s > 0.
Wide floorDiv(Wide x, Wide s) {
  Wide q = x / s;
  return (x % s != 0 && x < 0) ? q - 1 : q;
}
Wide ceilDiv(Wide x, Wide s) {
  Wide q = x / s;
  return (x % s != 0 && x > 0) ? q + 1 : q;
}

/// The split point ceil((C + k) / s) of `cmp` when C is a constant.
Wide constantPoint(const Comparison &cmp, Wide c, int64_t k) {
  return ceilDiv(c + k, cmp.ivSide.ivScale);
}

bool fitsI64(Wide v) {
  return v >= Wide(std::numeric_limits<int64_t>::min()) &&
         v <= Wide(std::numeric_limits<int64_t>::max());
}

/// Signed bounds of the scalar `value` that the kernel states or Triton
/// guarantees (issue 17.3), from the shared range analysis (RangeAnalysis.h:
/// MLIR's IntegerRangeAnalysis over the loop's function): a
/// `triton_ext_range.assume_range` fact (the program is undefined outside it,
/// as with llvm.intr.assume, so a guard check it proves may be dropped),
/// `tt.get_program_id` (in [0, 2^31 - 1) on every backend), constants, and
/// the arith ops of such values. The analysis bounds the values the kernel
/// holds (wrapping iN arithmetic: a sum that may wrap has its type's full
/// range), which is what the guard's checks are about.
std::optional<std::pair<Wide, Wide>>
factRange(Value value, const range::IntegerRanges &ranges) {
  if (!value.getType().isSignlessInteger())
    return std::nullopt;
  std::optional<range::Interval> r = ranges.signedRange(value);
  if (!r)
    return std::nullopt;
  return std::pair(Wide(r->lo), Wide(r->hi));
}

/// What the range analysis of `loop` runs over: its function (a `tt.func`
/// analyzed alone treats its arguments as unknown), or its outermost
/// ancestor.
Operation *rangeRoot(scf::ForOp loop) {
  if (auto func = loop->getParentOfType<triton::FuncOp>())
    return func;
  Operation *root = loop;
  while (Operation *parent = root->getParentOp())
    root = parent;
  return root;
}

/// Collects the guard's conjuncts, deciding at compile time those it can.
struct GuardCollector {
  Wide typeMin, typeMax;
  SmallVector<GuardCheck, 4> runtime;
  bool knownFalse = false;
  bool unrepresentable = false;

  /// Bounds of the scalars the checks compare (factRange).
  const range::IntegerRanges &ranges;

  GuardCollector(unsigned width, const range::IntegerRanges &ranges)
      : typeMin(-(Wide(1) << (width - 1))),
        typeMax((Wide(1) << (width - 1)) - 1), ranges(ranges) {}

  /// sum(terms) + offset <= bound (atMost) or >= bound. Null terms are zero.
  void add(ArrayRef<Value> terms, Wide offset, bool atMost, Wide bound) {
    SmallVector<Value, 3> unknown;
    for (Value term : terms) {
      if (std::optional<Wide> c = constantOf(term))
        offset += *c;
      else
        unknown.push_back(term);
    }
    auto holds = [&](Wide lhs) { return atMost ? lhs <= bound : lhs >= bound; };
    if (unknown.empty()) {
      knownFalse |= !holds(offset);
      return;
    }
    // Bounds the kernel states (or Triton guarantees) decide the check when
    // every value they allow satisfies it; otherwise it stays a run-time
    // check (a fact never makes the guard fail at compile time: declining
    // would be legal, but the run-time check is as exact).
    Wide sumLo = offset, sumHi = offset;
    bool allKnown = true;
    for (Value term : unknown) {
      std::optional<std::pair<Wide, Wide>> r = factRange(term, ranges);
      if (!r) {
        allKnown = false;
        break;
      }
      sumLo += r->first;
      sumHi += r->second;
    }
    if (allKnown && holds(atMost ? sumHi : sumLo))
      return;
    if (unknown.size() == 1) {
      // term <= t (>= t): always true when t is past the type's extreme on
      // the permissive side, never when it is past the other extreme.
      Wide t = bound - offset;
      if (atMost ? t >= typeMax : t <= typeMin)
        return;
      if (atMost ? t < typeMin : t > typeMax) {
        knownFalse = true;
        return;
      }
      runtime.push_back({unknown, 0, int64_t(t), atMost});
      return;
    }
    if (!fitsI64(offset) || !fitsI64(bound)) {
      unrepresentable = true;
      return;
    }
    runtime.push_back({unknown, int64_t(offset), int64_t(bound), atMost});
  }
};

/// The guard of the file header for `cmp` in `loop`.
GuardCollector collectGuard(const Comparison &cmp, scf::ForOp loop,
                            unsigned width,
                            const range::IntegerRanges &ranges) {
  GuardCollector guard(width, ranges);
  Value lb = loop.getLowerBound(), ub = loop.getUpperBound();
  const AffineRange &iv = cmp.ivSide, &other = cmp.otherSide;
  // The conditions the sides' intervals rely on (run-time divisors).
  for (const AffineRange *side : {&iv, &other})
    for (const Requirement &r : side->requirements)
      guard.add({r.value}, 0, r.atMost, r.bound);
  Value a = iv.inv, b = other.inv;
  if (width == 64 && a) {
    // Two unknown terms on the iv side: bound each value so that no i64 sum
    // of them and the offsets (|offsets| <= 2^42) can reach 2^63. Then the
    // kernel's sums do not wrap and B - A + k is exact.
    for (Value v : {lb, ub, a, b}) {
      guard.add({v}, 0, /*atMost=*/false, -Wide(kMaxI64Runtime));
      guard.add({v}, 0, /*atMost=*/true, Wide(kMaxI64Runtime));
    }
    if (cmp.isUnsigned) {
      guard.add({lb, a}, iv.lo, /*atMost=*/false, 0);
      guard.add({b}, other.lo, /*atMost=*/false, 0);
    }
    return guard;
  }
  Wide lowest = cmp.isUnsigned ? Wide(0) : guard.typeMin;
  if (iv.ivScale != 1) {
    // s * iv + [lo, hi] with no invariant (planComparison): its extremes
    // s * lb + lo and s * (ub - 1) + hi fit iff lb >= ceil((lowest - lo) / s)
    // and ub <= floor((MAX - hi) / s) + 1. The kernel's s * iv may wrap on
    // the way, but the sum is exact modulo 2^N (see Wrapping), so only the
    // extremes matter.
    Wide s = iv.ivScale;
    guard.add({lb}, 0, /*atMost=*/false, ceilDiv(lowest - iv.lo, s));
    guard.add({ub}, 0, /*atMost=*/true, floorDiv(guard.typeMax - iv.hi, s) + 1);
  } else {
    guard.add({lb, a}, iv.lo, /*atMost=*/false, lowest);
    guard.add({ub, a}, Wide(iv.hi) - 1, /*atMost=*/true, guard.typeMax);
  }
  guard.add({b}, other.lo, /*atMost=*/false, lowest);
  guard.add({b}, other.hi, /*atMost=*/true, guard.typeMax);
  return guard;
}

/// k' in [k, k + step) with B - A + k' on the lattice lb + j * step, when
/// that is known for every value of the invariants. The lattice residue of a
/// value v = scale * base + offset (mod 2^N, see linearize) is offset mod
/// step when step divides scale and 2^N: reducing mod 2^N keeps residues mod
/// a power of two up to 2^N, and the signed reading of an N-bit pattern
/// differs from it by a multiple of 2^N. Constants are scale 0.
std::optional<int64_t> latticeOffset(int64_t k, int64_t step, Value lb,
                                     Value a, Value b) {
  if (step <= 1 || (step & (step - 1)) != 0)
    return std::nullopt;
  Wide residue = k;
  for (auto [value, sign] : {std::pair(lb, -1), std::pair(a, -1),
                             std::pair(b, 1)}) {
    if (!value)
      continue;
    Linear l = linearize(value);
    if (l.base && l.scale % step != 0)
      return std::nullopt;
    residue += Wide(sign) * Wide(l.offset);
  }
  Wide r = residue % step;
  if (r < 0)
    r += step;
  Wide shifted = Wide(k) + (r ? step - r : 0);
  // |k| <= 2^41 and step <= 2^40, so this fits; keep the offset bound.
  if (shifted > 2 * Wide(kMaxOffset))
    return std::nullopt;
  return int64_t(shifted);
}

/// First lattice point lb + j * step at or after m, or ubE if none is below
/// ubE (mathematical values, lb <= m <= ubE).
Wide roundUp(Wide m, Wide lb, Wide ubE, Wide step) {
  Wide r = lb + (m - lb + step - 1) / step * step;
  return r < ubE ? r : ubE;
}

/// Values u (as Linear, modulo 2^N) with iv < u on every iteration that
/// runs (signed; the loop is not `unsigned`):
///  - ub itself;
///  - both operands of ub = minsi(x, y), since min(x, y) <= x, y;
///  - x for ub = s * x and x * c for ub = (s * x) * c, with s in {0, 1}
///    (an i1 extended, or a select of 0/1 constants; sglang's and lightllm's
///    `block_mask * end_n`) and c a constant, when lb is a constant >= 0:
///    with s = 0, ub = 0 and the loop [lb, 0) runs nothing; with s = 1, ub is
///    x (resp. x * c modulo 2^N, which linearize(x) scaled by c represents).
SmallVector<Linear, 4> upperBoundsOf(scf::ForOp loop) {
  SmallVector<Linear, 4> out;
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
  bool emptyAtZero = lb && *lb >= 0;
  auto isZeroOrOne = [](Value s) {
    if (auto ext = s.getDefiningOp<arith::ExtUIOp>())
      return ext.getIn().getType().isInteger(1);
    if (auto sel = s.getDefiningOp<arith::SelectOp>()) {
      std::optional<int64_t> t = getConstantIntValue(sel.getTrueValue());
      std::optional<int64_t> f = getConstantIntValue(sel.getFalseValue());
      return t && f && (*t == 0 || *t == 1) && (*f == 0 || *f == 1);
    }
    return false;
  };
  /// x for v = s * x (either order), else null.
  auto maskedBy01 = [&](Value v) -> Value {
    auto mul = v.getDefiningOp<arith::MulIOp>();
    if (!mul)
      return Value();
    if (isZeroOrOne(mul.getLhs()))
      return mul.getRhs();
    if (isZeroOrOne(mul.getRhs()))
      return mul.getLhs();
    return Value();
  };
  SmallVector<Value, 4> work{loop.getUpperBound()};
  while (!work.empty() && out.size() < 8) {
    Value u = work.pop_back_val();
    out.push_back(linearize(u));
    if (auto m = u.getDefiningOp<arith::MinSIOp>()) {
      work.push_back(m.getLhs());
      work.push_back(m.getRhs());
      continue;
    }
    if (!emptyAtZero)
      continue;
    if (Value x = maskedBy01(u)) {
      work.push_back(x);
      continue;
    }
    auto mul = u.getDefiningOp<arith::MulIOp>();
    if (!mul)
      continue;
    for (auto [inner, factor] : {std::pair(mul.getLhs(), mul.getRhs()),
                                 std::pair(mul.getRhs(), mul.getLhs())}) {
      std::optional<int64_t> c = getConstantIntValue(factor);
      Value x = c ? maskedBy01(inner) : Value();
      if (!x)
        continue;
      Linear l = linearize(x);
      int64_t scale, offset;
      if (l.base && !__builtin_mul_overflow(l.scale, *c, &scale) &&
          !__builtin_mul_overflow(l.offset, *c, &offset))
        out.push_back({l.base, scale, offset});
      break;
    }
  }
  return out;
}

struct Emptiness {
  bool low = false, high = false;
};

/// Parts of `cmp`'s own split known to hold no iteration whatever the guard
/// gives (on failure low and high are empty anyway): P1 <= lb puts m1 at lb;
/// P2 >= u for an upper bound u (upperBoundsOf) means no iteration reaches
/// P2. For several comparisons, low ends at the smallest P1 and high starts
/// at the largest P2, so one comparison's empty part empties the plan's.
Emptiness knownEmpty(const Comparison &cmp, Value lbV, Value ubV,
                     std::optional<Wide> lb, std::optional<Wide> ub,
                     ArrayRef<Linear> uppers) {
  Emptiness e;
  Value a = cmp.ivSide.inv, b = cmp.otherSide.inv;
  bool invariantsConstant = !a && !b;
  if (invariantsConstant && lb && constantPoint(cmp, 0, cmp.k1) <= *lb)
    e.low = true;
  if (invariantsConstant && ub && constantPoint(cmp, 0, cmp.k2) >= *ub)
    e.high = true;
  // Bounds written in terms of the comparand, as in causal attention
  // (lb = start_m * BM, ub = (start_m + 1) * BM against offs_m), are
  // compared symbolically; see linearDifference for why wrapping is fine.
  // With C = B: the low part is empty if lb >= B + k1, the high part if
  // some upper bound u <= B + k2.
  if (b && !a && cmp.ivSide.ivScale == 1) {
    auto dLow = linearDifference(lbV, b);
    if (dLow && cmp.k1 <= *dLow && *dLow <= 0)
      e.low = true;
    Linear lbB = linearize(b);
    unsigned width = b.getType().getIntOrFloatBitWidth();
    for (const Linear &u : uppers) {
      auto dHigh = linearDifference(u, lbB, width);
      if (dHigh && 0 <= *dHigh && *dHigh <= cmp.k2)
        e.high = true;
    }
  }
  (void)ubV;
  return e;
}

} // namespace

FailureOr<SplitPlan> analyzeLoop(scf::ForOp loop, const SplitLimits &limits,
                                 const char *&reason) {
  unsigned maxParts = limits.maxParts;
  Type ivType = loop.getInductionVar().getType();
  if (!ivType.isSignlessInteger(32) && !ivType.isSignlessInteger(64)) {
    reason = "induction variable is not i32 or i64";
    return failure();
  }
  // An unsigned loop orders its iterations by unsigned comparison; the model
  // (clamps, rounding, the guard) is signed. Triton does not emit them.
  if (loop.getUnsignedCmp()) {
    reason = "unsigned loop (scf.for unsigned)";
    return failure();
  }
  // `tl.range(..., flatten=True)` asks Triton to fuse the nest under that
  // loop into one loop later in the pipeline; split parts would defeat it
  // (Triton's test_tl_range_fuse counts the loops). Respect the request for
  // the marked loop and every loop inside it.
  for (Operation *op = loop; op; op = op->getParentOfType<scf::ForOp>())
    if (op->hasAttr("tt.flatten")) {
      reason = "inside a loop nest marked tt.flatten";
      return failure();
    }
  // Profitability: every part is a copy of the body. A body whose tiles
  // exceed what registers hold at the usual warp counts (Liger's group norm
  // streams 65536-element fp32 tiles with 4 warps: 512 values per thread)
  // already spills; a second copy adds spill stack and doubles the code
  // (with ptxas on the CPU: stack 8616 -> 11088 bytes, cubin 1.05 -> 1.92 MB)
  // for masks that cost a few instructions per element, and ran 0.803x on
  // the H200. Tiles of causal attention (128x128, 128x256) stay below the
  // default limit.
  if (limits.maxTileElements) {
    WalkResult big = loop.getBody()->walk([&](Operation *op) {
      for (Type type : op->getResultTypes())
        if (auto tensor = dyn_cast<RankedTensorType>(type))
          if (tensor.hasStaticShape() &&
              uint64_t(tensor.getNumElements()) > limits.maxTileElements)
            return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (big.wasInterrupted()) {
      reason = "a tensor in the body exceeds max-tile-elements";
      return failure();
    }
  }
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (!step || *step <= 0 || *step > kMaxOffset) {
    reason = "step is not a constant in (0, 2^40]";
    return failure();
  }
  unsigned width = ivType.getIntOrFloatBitWidth();

  Value lbV = loop.getLowerBound(), ubV = loop.getUpperBound();
  std::optional<Wide> lb = constantOf(lbV), ub = constantOf(ubV);
  if (lb && ub && *lb >= *ub) {
    reason = "the loop runs no iteration";
    return failure();
  }
  // A loop of exactly one iteration (constant bounds, ub - lb <= step; exact
  // in Wide) is left alone. Splitting it is legal (its parts partition the
  // one iteration) but gains nothing: at most one part runs, and canonicalize
  // turns the unsplit loop into straight-line code with iv = lb, which the
  // parts' run-time bounds prevent. It also kept the differential harness
  // from comparing like with like (the unsplit side folded to 0 loop trips,
  // the split side ran the same iteration in a loop: 1 trip, same result).
  if (lb && ub && *ub - *lb <= Wide(*step)) {
    reason = "the loop runs one iteration";
    return failure();
  }
  SmallVector<Linear, 4> uppers = upperBoundsOf(loop);

  // Every candidate comparison, in pre-order. A candidate whose guard is
  // known to fail is left in place (it stays in every part). Folding several
  // is legal as each comparison is constant below its own P1 (from its own
  // P2 on), hence all of them below the smallest P1 (from the largest P2
  // on); the guard is the conjunction of their guards, so on failure low and
  // high are empty and the middle part runs [lb, ub).
  //
  // Which ones are folded: those whose own low part is not known to be
  // empty, as a comparison with an empty low part would empty the plan's.
  // The low part (below every P1) comes first: in causal attention it runs
  // all the off-diagonal blocks, while the high part (past the diagonal, or
  // past seq_len) rarely runs at all; so it is fine that a comparison whose
  // high part is empty (the bound proves the loop never gets past the
  // diagonal) empties the plan's high part. Only when no comparison has a
  // low part are those with a high part folded, in a high-only plan.
  SplitPlan plan;
  plan.step = *step;
  const char *candidateReason = "no comparison of the iv with an invariant";
  struct Candidate {
    Comparison cmp;
    Emptiness empty;
    SmallVector<GuardCheck, 4> guard;
  };
  SmallVector<Candidate, 4> candidates;
  // The range analysis runs over the loop's function, once, when a guard
  // first needs it; nothing changes the IR while this plan is made.
  std::optional<range::IntegerRanges> ranges;
  loop.getBody()->walk<WalkOrder::PreOrder>([&](arith::CmpIOp op) {
    FailureOr<Comparison> cmp = planComparison(op, loop);
    if (failed(cmp))
      return;
    if (!ranges)
      ranges.emplace(rangeRoot(loop));
    GuardCollector guard = collectGuard(*cmp, loop, width, *ranges);
    if (guard.knownFalse || guard.unrepresentable) {
      if (candidates.empty())
        candidateReason =
            guard.knownFalse
                ? "the comparison's operands can wrap (guard known to fail)"
                : "guard constants do not fit i64";
      return;
    }
    Emptiness e = knownEmpty(*cmp, lbV, ubV, lb, ub, uppers);
    if (e.low && e.high) {
      if (candidates.empty())
        candidateReason = "no iteration has a known comparison";
      return;
    }
    candidates.push_back({*cmp, e, std::move(guard.runtime)});
  });
  // A comparison inside `scf.if (c)` where c is another candidate is left
  // alone (`if start_n >= diag: qk = where(offs_m >= start_n + offs_n, ...)`):
  // where c is folded false the region is dead, where it is folded true the
  // inner comparison is what the hand-split kernel keeps; folding it too
  // would only add its guard, and a comparing middle loop, to a split that
  // the outer scalar comparison makes without any.
  auto guardedByCandidate = [&](Candidate &c) {
    for (Operation *op = c.cmp.cmp->getParentOp(); op && op != loop;
         op = op->getParentOp())
      if (auto ifOp = dyn_cast<scf::IfOp>(op))
        for (Candidate &outer : candidates)
          if (ifOp.getCondition().getDefiningOp() ==
              outer.cmp.cmp.getOperation())
            return true;
    return false;
  };
  SmallVector<Candidate, 4> kept;
  for (Candidate &c : candidates)
    if (!guardedByCandidate(c))
      kept.push_back(c);
  candidates = std::move(kept);
  // Split points from the operand of the kernel's `B = X - c` (issue 17:
  // the scalar form's `diag = start_m * BLOCK_M - BLOCK_N + 1`). In i64,
  // extsi(X) - c equals extsi(X - c) unless X - c wraps below MIN, i.e.
  // X < MIN + c. If ub = X + d (linearDifference, d >= 0) and lb is a
  // constant >= MIN + c - 1 + d, every such X gives ub = X + d (exact: X + d
  // < MIN + c + d, far from MAX) <= lb: an empty loop, whose parts are empty
  // whatever the split points (they are clamped to [lb, max(lb, ub)]). So
  // the two agree wherever an iteration runs. (Computing from X spared ptxas
  // 72 bytes of spill stack on the scalar-form attention kernel here.)
  auto setPointBase = [&](Comparison &c) {
    Value b = c.otherSide.inv;
    if (width != 32 || !b || c.ivSide.inv || c.ivSide.ivScale != 1)
      return;
    Value x;
    std::optional<int64_t> shift;
    if (auto add = b.getDefiningOp<arith::AddIOp>()) {
      x = add.getLhs();
      shift = getConstantIntValue(add.getRhs());
    } else if (auto sub = b.getDefiningOp<arith::SubIOp>()) {
      x = sub.getLhs();
      if (auto k = getConstantIntValue(sub.getRhs()))
        shift = -*k;
    }
    if (!x || !shift || *shift >= 0 || *shift < -kMaxOffset || !lb)
      return;
    std::optional<int64_t> d = linearDifference(ubV, x);
    Wide emptyFrom = -(Wide(1) << 31) - Wide(*shift) - 1 + (d ? *d : 0);
    // -shift + d < 2^30 keeps X + d below MAX in that case (no second wrap).
    if (!d || *d < 0 || Wide(-*shift) + *d >= (Wide(1) << 30) ||
        *lb < emptyFrom)
      return;
    c.pointBase = x;
    c.pointShift = *shift;
  };
  bool lowDirected = llvm::any_of(
      candidates, [](const Candidate &c) { return !c.empty.low; });
  for (Candidate &c : candidates) {
    if (lowDirected ? c.empty.low : c.empty.high)
      continue;
    if (c.cmp.ivSide.ivScale == 1) {
      c.cmp.k1Lattice = latticeOffset(c.cmp.k1, *step, lbV, c.cmp.ivSide.inv,
                                      c.cmp.otherSide.inv);
      c.cmp.k2Lattice = latticeOffset(c.cmp.k2, *step, lbV, c.cmp.ivSide.inv,
                                      c.cmp.otherSide.inv);
    }
    setPointBase(c.cmp);
    plan.lowEmpty |= c.empty.low;
    plan.highEmpty |= c.empty.high;
    plan.guard.append(c.guard.begin(), c.guard.end());
    plan.comparisons.push_back(c.cmp);
  }
  if (plan.comparisons.empty()) {
    reason = candidateReason;
    return failure();
  }
  // Profitability: tail masks of row-sized tiles. A tail mask compares the
  // tile of this iteration, `iv + [lo, hi]` (no invariant on the iv side),
  // with the loop's own upper bound: `for i in range(0, n_cols, BLOCK):
  // load(x + i + arange(0, BLOCK), mask=i + arange(0, BLOCK) < n_cols)`. Its
  // masked part is the last iteration (hi < step), its unmasked part the
  // floor((ub - lb) / step) iterations before, so the split gains in
  // proportion to that count and costs a fixed amount: the split points
  // computed before the first load and a second copy of the body. Launchers
  // size these tiles to the row, BLOCK = next_power_of_2(n_cols) up to a cap
  // (Liger, Triton's softmax and layer norm tutorials), so a large step is a
  // row loop that runs once, the masked iteration, at common row lengths:
  // Liger's cross entropy (step 32768, vocab 32000) split into an unmasked
  // loop that never ran and the same masked loop (SASS on the executed path
  // equal but for ~30 more instructions before the first load; cubin 31 ->
  // 53 KB) and ran 0.950x / 0.979x on the H200. At 16384 (Liger's KL
  // divergence, two iterations at vocab 32000) the split ran 1.117x.
  // Comparisons that are not tail masks (causal attention, sequence lengths
  // other than the loop's bound) are not affected.
  if (limits.maxTailStep && uint64_t(*step) > limits.maxTailStep &&
      llvm::all_of(plan.comparisons, [&](const Comparison &c) {
        return c.ivSide.hasIv && !c.ivSide.inv && c.ivSide.ivScale == 1 &&
               c.ivSide.hi < *step && c.otherSide.inv == ubV &&
               !c.otherSide.hasIv && c.otherSide.lo == 0 &&
               c.otherSide.hi == 0;
      })) {
    reason = "only tail masks of a step larger than max-tail-step (the "
             "unmasked part rarely runs)";
    return failure();
  }
  const Comparison &first = plan.comparisons.front();
  bool single = plan.comparisons.size() == 1;
  // With several comparisons P1 = min and P2 = max differ in general.
  plan.hasBand = !single || first.k1 != first.k2;
  plan.needMid = plan.hasBand || !plan.guard.empty();
  plan.lowOnLattice = llvm::all_of(
      plan.comparisons, [](const Comparison &c) { return c.k1Lattice; });
  plan.highOnLattice = llvm::all_of(
      plan.comparisons, [](const Comparison &c) { return c.k2Lattice; });

  bool invariantsConstant = llvm::all_of(plan.comparisons, [](auto &c) {
    return !c.ivSide.inv && !c.otherSide.inv;
  });
  // Constant bounds and invariants: evaluate the split points exactly. The
  // guard may still be undecided (issue 26: a run-time divisor, `offs_m // d`,
  // only adds a requirement on d), so this fixes where the parts lie when it
  // holds, not whether the middle part exists.
  std::optional<std::pair<Wide, Wide>> constantPoints;
  if (invariantsConstant && lb && ub) {
    Wide p1 = constantPoint(first, 0, first.k1);
    Wide p2 = constantPoint(first, 0, first.k2);
    for (const Comparison &c : plan.comparisons) {
      p1 = std::min(p1, constantPoint(c, 0, c.k1));
      p2 = std::max(p2, constantPoint(c, 0, c.k2));
    }
    Wide ubE = *ub, s = *step;
    Wide m1 = std::min(std::max(p1, *lb), ubE);
    Wide m2 = std::min(std::max(p2, m1), ubE);
    Wide r1 = roundUp(m1, *lb, ubE, s), r2 = roundUp(m2, *lb, ubE, s);
    plan.lowEmpty = m1 <= *lb;
    plan.highEmpty = (plan.needMid ? r2 : r1) >= *ub;
    constantPoints = std::pair(m1, m2);
  }
  // With two parts and a comparing part, the comparing part runs to the end
  // (or, if nothing is known below, from the start).
  if (maxParts < 3 && plan.needMid && !plan.lowEmpty)
    plan.highEmpty = true;
  if (plan.lowEmpty && plan.highEmpty) {
    reason = "no iteration has a known comparison";
    return failure();
  }

  plan.lowPart = !plan.lowEmpty;
  plan.highPart = !plan.highEmpty;
  plan.midPart = plan.needMid;
  if (plan.needMid && constantPoints && plan.guard.empty()) {
    // All constant and no run-time guard: the middle part [start, end) may
    // be empty. With a guard it stays: where the guard fails it runs
    // [lb, ub) (issue 26: dropping it ran no iteration for `offs_m // d`
    // with d >= 2^31 unsigned or d < 0 signed, and constant bounds).
    auto [m1, m2] = *constantPoints;
    Wide start = plan.lowEmpty ? *lb : roundUp(m1, *lb, *ub, *step);
    Wide end = plan.highEmpty ? *ub : m2;
    plan.midPart = start < end;
  }
  return plan;
}

} // namespace mlir::triton_ext::loop_split
