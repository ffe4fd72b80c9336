//===- LoopSplit.cpp - Split loops where an iv condition flips -------------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// A causal attention kernel written as one loop evaluates the causal mask on
// every block of keys, although only the blocks that straddle the diagonal
// need it. This pass splits such an `scf.for` into the iterations where the
// comparison is known to be true, known to be false, and not known, and
// replaces the comparison by a constant in the known parts (GitHub issue 4).
//
// Model. Each side of an `arith.cmpi` is read as `[iv] + [inv] + [lo, hi]`:
// an optional induction variable, an optional loop-invariant scalar and a
// constant interval. The interval comes from `tt.make_range` bounds and
// integer constants, and is carried through `tt.splat`, `tt.expand_dims`,
// `tt.broadcast`, `arith.addi` and `arith.subi` of a constant. Exactly one
// side may hold the iv. With the iv on the left (the predicate is swapped
// otherwise) and C = inv(right) - inv(left), the whole comparison is constant
// below P1 = C + k1 and from P2 = C + k2 on, where k1 <= k2 follow from the
// intervals (see `planComparison`). A scalar comparison is the interval
// [0, 0] on both sides, so k1 == k2 and the loop splits in two.
//
// Split points. Computed before the loop in i64 (for i32 loops exactly):
//   ubE = max(lb, ub)                      (a zero-trip loop stays empty)
//   m1 = clamp(P1, lb, ubE), m2 = clamp(P2, m1, ubE)
//   r  = min(lb + ceil((m - lb) / step) * step, ubE)   (first iv >= m)
// and the parts are [lb, m1), [r1, m2), [r2, ub), all with the original step,
// so together they run exactly the original iterations in order. Every value
// lies in [lb, ubE] and so fits the iv type after truncation. Parts that are
// provably empty are dropped: constant bounds fold, and bounds written in
// terms of the comparand (ub = (start_m + 1) * 128 against start_m * 128 +
// arange) are compared symbolically (see linearDifference).
//
// Wrapping. The interval reasoning is about mathematical values, but the
// kernel computes with wrapping i32/i64 arithmetic. Addition modulo 2^N is
// associative, so a sum whose mathematical value is representable is computed
// exactly whatever the order of the additions; it is enough to check the
// extremes of each side. A runtime guard does that (for i32 loops, in i64
// against the i32 limits; for i64 loops, by bounding lb, ub and the
// invariants by 2^60 and constants by 2^40 so that no i64 sum can wrap; for
// unsigned predicates, also that both sides are non-negative, where unsigned
// and signed order agree). When the guard fails, m1 = lb and m2 = ubE: every
// iteration runs in the unspecialized middle part, which keeps the original
// comparison, so the result is always the original one.
//
// Declines (leaves the loop unchanged): non-constant or non-positive step,
// an iv that is not i32/i64, comparisons that are not affine in the iv with
// make_range/constant offsets (data-dependent masks), comparands defined
// inside the loop (other than through the ops above), eq/ne predicates,
// constants too large for the i64 bound, and loops where the known parts are
// statically empty (nothing would fold). One comparison per loop is used: the
// first candidate in pre-order; loop attributes are copied to every part.
//
//===----------------------------------------------------------------------===//

#include "triton-ext/PassInfra.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "triton/Dialect/Triton/IR/Dialect.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Debug.h"

#include <optional>

#define DEBUG_TYPE "triton-ext-loop-split"

namespace mlir::triton_ext {
#define GEN_PASS_DECL_TRITONEXTLOOPSPLIT
#define GEN_PASS_DEF_TRITONEXTLOOPSPLIT
#include "Passes.h.inc"
} // namespace mlir::triton_ext

using namespace mlir;

namespace {

/// Constants and make_range bounds beyond this magnitude are refused. With
/// runtime values bounded by kMaxI64Runtime, i64 sums of a few such terms
/// stay far from 2^63.
constexpr int64_t kMaxOffset = int64_t(1) << 40;
/// Bound on lb, ub and invariants of an i64 loop, checked at run time.
constexpr int64_t kMaxI64Runtime = int64_t(1) << 60;
/// Recursion limit for the affine walk; masks are a handful of ops deep.
constexpr unsigned kMaxDepth = 16;

/// One side of a comparison: [iv] + [inv] + [lo, hi], elementwise.
struct AffineRange {
  bool hasIv = false;
  Value inv; // Loop-invariant scalar, or null for zero.
  int64_t lo = 0, hi = 0;
};

/// Where and how a loop is split on one comparison.
struct SplitPlan {
  arith::CmpIOp cmp;
  AffineRange ivSide, otherSide;
  int64_t k1 = 0, k2 = 0; // Thresholds relative to C = inv(other) - inv(iv).
  bool lowValue = false;  // Value of the comparison for iv < C + k1.
  bool isUnsigned = false;
};

/// Adds two offsets; nullopt if the sum leaves [-kMaxOffset, kMaxOffset].
static std::optional<int64_t> addOffsets(int64_t a, int64_t b) {
  int64_t sum;
  if (__builtin_add_overflow(a, b, &sum) || sum > kMaxOffset ||
      sum < -kMaxOffset)
    return std::nullopt;
  return sum;
}

/// Reads `value` as an AffineRange relative to `loop`. Fails for anything
/// whose values are not a known function of the iv (data-dependent) and for
/// non-constant values defined inside the loop.
static FailureOr<AffineRange> analyzeAffine(Value value, scf::ForOp loop,
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
        return AffineRange{lhs->hasIv || rhs->hasIv,
                           lhs->inv ? lhs->inv : rhs->inv, *lo, *hi};
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
        return AffineRange{lhs->hasIv, lhs->inv, *lo, *hi};
      })
      .Default([](Operation *) { return failure(); });
}

/// `value` as scale * base + offset, all modulo 2^N as the kernel computes it;
/// base is null for constants. Follows addi/subi/muli with a constant.
struct Linear {
  Value base;
  int64_t scale = 1, offset = 0;
};

static Linear linearize(Value value, unsigned depth = 0) {
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
static std::optional<int64_t> linearDifference(Value a, Value b) {
  unsigned width = a.getType().getIntOrFloatBitWidth();
  Linear la = linearize(a), lb = linearize(b);
  if (!la.base || la.base != lb.base || la.scale != lb.scale)
    return std::nullopt;
  int64_t d;
  int64_t limit = int64_t(1) << (width - 2);
  if (__builtin_sub_overflow(la.offset, lb.offset, &d) || d >= limit ||
      d <= -limit)
    return std::nullopt;
  return d;
}

/// Predicate for `b pred a` given `a pred b`.
static arith::CmpIPredicate swapPredicate(arith::CmpIPredicate pred) {
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

/// Builds the split plan for `cmp` in `loop`, or fails if `cmp` is not an
/// ordered comparison of an iv-affine side with an invariant side.
static FailureOr<SplitPlan> planComparison(arith::CmpIOp cmp, scf::ForOp loop) {
  if (cmp.getResult().use_empty())
    return failure();
  auto lhs = analyzeAffine(cmp.getLhs(), loop);
  auto rhs = analyzeAffine(cmp.getRhs(), loop);
  if (failed(lhs) || failed(rhs) || lhs->hasIv == rhs->hasIv)
    return failure();
  SplitPlan plan;
  plan.cmp = cmp;
  arith::CmpIPredicate pred = cmp.getPredicate();
  plan.ivSide = *lhs;
  plan.otherSide = *rhs;
  if (rhs->hasIv) {
    std::swap(plan.ivSide, plan.otherSide);
    pred = swapPredicate(pred);
  }
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

/// Splits scf.for loops on the first suitable iv comparison in their body.
struct SplitLoopOnComparison : OpRewritePattern<scf::ForOp> {
  SplitLoopOnComparison(MLIRContext *ctx, unsigned maxParts)
      : OpRewritePattern(ctx), maxParts(maxParts) {}

  LogicalResult matchAndRewrite(scf::ForOp loop,
                                PatternRewriter &rewriter) const override {
    Type ivType = loop.getInductionVar().getType();
    if (!ivType.isSignlessInteger(32) && !ivType.isSignlessInteger(64))
      return notify(rewriter, loop, "induction variable is not i32 or i64");
    std::optional<int64_t> step = getConstantIntValue(loop.getStep());
    if (!step || *step <= 0 || *step > kMaxOffset)
      return notify(rewriter, loop, "step is not a constant in (0, 2^40]");

    std::optional<SplitPlan> plan;
    loop.getBody()->walk<WalkOrder::PreOrder>([&](arith::CmpIOp cmp) {
      if (auto candidate = planComparison(cmp, loop); succeeded(candidate)) {
        plan = *candidate;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (!plan)
      return notify(rewriter, loop, "no comparison of the iv with an invariant");

    // Everything below is inserted right before the loop, so a decline can
    // erase exactly what was built.
    Operation *before = loop->getPrevNode();
    auto eraseBuilt = [&] {
      for (Operation *op = loop->getPrevNode(); op != before;) {
        Operation *prev = op->getPrevNode();
        rewriter.eraseOp(op);
        op = prev;
      }
    };
    rewriter.setInsertionPoint(loop);
    SplitBounds bounds = buildBounds(rewriter, loop, *plan, *step);

    // A scalar comparison flips at one point and has no middle part. With
    // max-parts=2, a band of unknown iterations runs to the end of the loop.
    bool hasMid = plan->k1 != plan->k2;
    bool hasHigh = !hasMid || maxParts >= 3;
    auto isEmpty = [](Value lb, Value ub) {
      std::optional<int64_t> l = getConstantIntValue(lb);
      std::optional<int64_t> u = getConstantIntValue(ub);
      return l && u && *l >= *u;
    };
    bool lowEmpty = isEmpty(loop.getLowerBound(), bounds.m1);
    bool highEmpty = !hasHigh || isEmpty(bounds.r2, loop.getUpperBound());
    // Bounds written in terms of the comparand, as in causal attention
    // (lb = start_m * BM, ub = (start_m + 1) * BM against offs_m), are
    // compared symbolically; see linearDifference for why wrapping is fine.
    // With C = B (no invariant on the iv side): the low part is empty if
    // lb >= B + k1, the high part if ub <= B + k2.
    Value comparand = plan->otherSide.inv;
    if (comparand && !plan->ivSide.inv) {
      auto dLow = linearDifference(loop.getLowerBound(), comparand);
      if (dLow && plan->k1 <= *dLow && *dLow <= 0)
        lowEmpty = true;
      auto dHigh = linearDifference(loop.getUpperBound(), comparand);
      if (dHigh && 0 <= *dHigh && *dHigh <= plan->k2)
        highEmpty = true;
    }
    // Without a high part the middle one runs to the end (the same
    // iterations: none lies in [m2, ub) when the high part is empty).
    Value midUb = highEmpty ? loop.getUpperBound() : bounds.m2;
    bool midEmpty = !hasMid || isEmpty(bounds.r1, midUb);
    if (lowEmpty && highEmpty) {
      eraseBuilt();
      return notify(rewriter, loop, "no iteration has a known comparison");
    }

    struct Part {
      Value lb, ub;
      std::optional<bool> value; // Constant for the comparison, if known.
    };
    SmallVector<Part, 3> parts;
    if (!lowEmpty)
      parts.push_back({loop.getLowerBound(), bounds.m1, plan->lowValue});
    if (!midEmpty)
      parts.push_back({bounds.r1, midUb, std::nullopt});
    if (!highEmpty)
      parts.push_back({bounds.r2, loop.getUpperBound(), !plan->lowValue});

    SmallVector<Value> carried(loop.getInitArgs());
    for (const Part &part : parts) {
      rewriter.setInsertionPoint(loop);
      IRMapping mapping;
      // Cloning keeps the loop's attributes (tt.num_stages, tt.flatten, ...).
      auto clone = cast<scf::ForOp>(rewriter.clone(*loop, mapping));
      clone.setLowerBound(part.lb);
      clone.setUpperBound(part.ub);
      clone.getInitArgsMutable().assign(carried);
      if (part.value)
        replaceByConstant(rewriter, mapping.lookup(plan->cmp.getResult()),
                          *part.value);
      carried.assign(clone.getResults().begin(), clone.getResults().end());
    }
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] split loop at "
                            << loop.getLoc() << " into " << parts.size()
                            << " parts on " << plan->cmp << "\n");
    rewriter.replaceOp(loop, carried);
    return success();
  }

private:
  /// Narrow-typed bounds of the parts: [lb, m1), [r1, m2), [r2, ub).
  struct SplitBounds {
    Value m1, r1, m2, r2;
  };

  static LogicalResult notify(PatternRewriter &rewriter, scf::ForOp loop,
                              const char *reason) {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << loop.getLoc() << ": "
                            << reason << "\n");
    return rewriter.notifyMatchFailure(loop, reason);
  }

  /// Replaces the cloned comparison `value` by a true/false constant of the
  /// same (scalar or tensor) type.
  static void replaceByConstant(PatternRewriter &rewriter, Value value,
                                bool known) {
    Operation *cmp = value.getDefiningOp();
    rewriter.setInsertionPoint(cmp);
    TypedAttr attr = rewriter.getBoolAttr(known);
    if (auto shaped = dyn_cast<ShapedType>(value.getType()))
      attr = DenseElementsAttr::get(shaped, ArrayRef<Attribute>(attr));
    rewriter.replaceOp(cmp,
                       arith::ConstantOp::create(rewriter, cmp->getLoc(), attr));
  }

  /// Emits the split-point computation described in the file header. All
  /// arithmetic is in i64 and folds when the inputs are constants.
  SplitBounds buildBounds(PatternRewriter &rewriter, scf::ForOp loop,
                          const SplitPlan &plan, int64_t step) const {
    Location loc = loop.getLoc();
    Type ivType = loop.getInductionVar().getType();
    bool narrow = ivType.isSignlessInteger(32);
    Type i64 = rewriter.getI64Type();
    auto cst = [&](int64_t v) -> Value {
      return arith::ConstantOp::create(rewriter, loc, rewriter.getI64IntegerAttr(v));
    };
    auto wide = [&](Value v) -> Value {
      if (!v)
        return cst(0);
      return narrow ? rewriter.createOrFold<arith::ExtSIOp>(loc, i64, v) : v;
    };
    auto add = [&](Value a, Value b) {
      return rewriter.createOrFold<arith::AddIOp>(loc, a, b);
    };
    auto addC = [&](Value a, int64_t c) { return c ? add(a, cst(c)) : a; };
    auto sub = [&](Value a, Value b) {
      return rewriter.createOrFold<arith::SubIOp>(loc, a, b);
    };
    auto max = [&](Value a, Value b) {
      return rewriter.createOrFold<arith::MaxSIOp>(loc, a, b);
    };
    auto min = [&](Value a, Value b) {
      return rewriter.createOrFold<arith::MinSIOp>(loc, a, b);
    };
    auto cmp = [&](arith::CmpIPredicate pred, Value a, Value b) {
      return rewriter.createOrFold<arith::CmpIOp>(loc, pred, a, b);
    };
    auto both = [&](Value a, Value b) {
      return rewriter.createOrFold<arith::AndIOp>(loc, a, b);
    };
    using P = arith::CmpIPredicate;

    Value lb = wide(loop.getLowerBound());
    Value ub = wide(loop.getUpperBound());
    Value ivInv = wide(plan.ivSide.inv);
    Value otherInv = wide(plan.otherSide.inv);
    Value ubE = max(lb, ub);

    // Both sides must be computed without wrapping on every iteration (and be
    // non-negative for unsigned predicates): see "Wrapping" above.
    Value ivMin = add(lb, addC(ivInv, plan.ivSide.lo));
    Value otherMin = addC(otherInv, plan.otherSide.lo);
    Value ok = arith::ConstantOp::create(rewriter, loc, rewriter.getBoolAttr(true));
    if (narrow) {
      Value lo = cst(std::numeric_limits<int32_t>::min());
      Value hi = cst(std::numeric_limits<int32_t>::max());
      // Each side is a sum of at most two i32 values and an offset. A bound
      // needs no check when the offset cannot push past it and there is a
      // single i32 term: iv + [0, 63] cannot go below the iv's own minimum.
      const AffineRange &iv = plan.ivSide, &other = plan.otherSide;
      if (iv.inv || iv.lo < 0)
        ok = both(ok, cmp(P::sge, ivMin, lo));
      if (iv.inv || iv.hi > 0)
        ok = both(ok, cmp(P::sle, add(addC(ub, -1), addC(ivInv, iv.hi)), hi));
      // A constant side (no inv) folds to true or false here.
      if (!other.inv || other.lo < 0)
        ok = both(ok, cmp(P::sge, otherMin, lo));
      if (!other.inv || other.hi > 0)
        ok = both(ok, cmp(P::sle, addC(otherInv, other.hi), hi));
    } else {
      // |lb|, |ub|, |inv| <= 2^60 and offsets <= 2^40 keep every i64 sum
      // here and in the kernel below 2^62.
      Value lo = cst(-kMaxI64Runtime), hi = cst(kMaxI64Runtime);
      for (Value v : {lb, ub, ivInv, otherInv})
        ok = both(ok, both(cmp(P::sge, v, lo), cmp(P::sle, v, hi)));
    }
    if (plan.isUnsigned)
      ok = both(ok, both(cmp(P::sge, ivMin, cst(0)),
                         cmp(P::sge, otherMin, cst(0))));

    Value c = sub(otherInv, ivInv);
    Value m1 = min(max(addC(c, plan.k1), lb), ubE);
    // A scalar comparison flips at one point: m2 == m1. With max-parts=2
    // and a band, m2 and r2 are unused and fold away.
    Value m2 = m1;
    if (plan.k1 != plan.k2)
      m2 = min(max(addC(c, plan.k2), m1), ubE);
    m1 = rewriter.createOrFold<arith::SelectOp>(loc, ok, m1, lb);
    m2 = rewriter.createOrFold<arith::SelectOp>(loc, ok, m2, ubE);

    // First iteration >= m: m - lb >= 0, so unsigned division is the ceiling
    // division we want; clamped to ubE so it stays representable.
    auto roundUp = [&](Value m) -> Value {
      if (step == 1)
        return m;
      Value steps = rewriter.createOrFold<arith::DivUIOp>(
          loc, addC(sub(m, lb), step - 1), cst(step));
      return min(add(lb, rewriter.createOrFold<arith::MulIOp>(loc, steps,
                                                               cst(step))),
                 ubE);
    };
    Value r1 = roundUp(m1);
    Value r2 = m2 == m1 ? r1 : roundUp(m2);
    auto toIv = [&](Value v) -> Value {
      return narrow ? rewriter.createOrFold<arith::TruncIOp>(loc, ivType, v)
                    : v;
    };
    return {toIv(m1), toIv(r1), toIv(m2), toIv(r2)};
  }

  unsigned maxParts;
};

class LoopSplitPass
    : public triton_ext::impl::TritonExtLoopSplitBase<LoopSplitPass> {
public:
  using TritonExtLoopSplitBase::TritonExtLoopSplitBase;

  void runOnOperation() override {
    if (maxParts < 2 || maxParts > 3) {
      getOperation().emitOpError()
          << "triton-ext-loop-split: max-parts must be 2 or 3, got " << maxParts;
      return signalPassFailure();
    }
    // The walk driver visits each original loop once, inner loops first, and
    // not the parts it creates: a part that keeps the comparison is not split
    // again.
    RewritePatternSet patterns(&getContext());
    patterns.add<SplitLoopOnComparison>(&getContext(), maxParts);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

TRITON_EXT_REGISTER_PASS(loop_split, LoopSplitPass);
