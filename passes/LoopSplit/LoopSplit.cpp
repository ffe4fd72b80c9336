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
// LoopSplitAnalysis.cpp decides whether and where to split (the model, the
// run-time guard against wrapping, and why the parts run exactly the
// original iterations); it builds no IR, so a declined loop is untouched.
// This file builds what the plan describes: the guard, the split points and
// the parts, each a clone of the loop with its own bounds.
//
// Declines (leaves the loop unchanged): non-constant or non-positive step,
// an iv that is not i32/i64, `scf.for unsigned` loops, loops in a nest marked
// `tt.flatten` (Triton fuses it later), comparisons that are
// not affine in the iv with make_range/constant offsets (data-dependent
// masks), comparands defined inside the loop (other than through the ops
// above), eq/ne predicates, constants beyond 2^40, a guard known to fail (the
// comparison's arithmetic always wraps), and loops where the known parts are
// statically empty (nothing would fold). Every candidate comparison in the
// body is folded in the known parts (issue 17), unless it would empty a part
// the earlier ones know; loop attributes are copied to every part.
//
//===----------------------------------------------------------------------===//

#include "LoopSplitAnalysis.h"
#include "LoopSplitGuardedMask.h"
#include "LoopSplitProfitability.h"
#include "LoopSplitRounding.h"
#include "triton-ext/PassInfra.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "triton/Dialect/Triton/IR/Dialect.h"
#include "llvm/Support/Debug.h"

#include <limits>

#define DEBUG_TYPE "triton-ext-loop-split"

namespace mlir::triton_ext {
#define GEN_PASS_DECL_TRITONEXTLOOPSPLIT
#define GEN_PASS_DEF_TRITONEXTLOOPSPLIT
#include "Passes.h.inc"
} // namespace mlir::triton_ext

using namespace mlir;
using namespace mlir::triton_ext::loop_split;

namespace {

/// Builds, right before the loop, the guard and the bounds of the parts
/// described in LoopSplitAnalysis.h. Values are created on first use, in i64
/// (i32 bounds sign-extended: every value is then exact), and fold when their
/// inputs are constants.
class PartBounds {
public:
  /// `alsoRequired`, when given, is one more i1 conjunct of the guard (the
  /// checks the rewrites of the known parts rely on); the plan must then
  /// have a middle part, which runs every iteration when it fails.
  PartBounds(PatternRewriter &rewriter, scf::ForOp loop, const SplitPlan &plan,
             Value alsoRequired = {})
      : rewriter(rewriter), loop(loop), plan(plan), loc(loop.getLoc()),
        ivType(loop.getInductionVar().getType()),
        narrow(ivType.isSignlessInteger(32)), alsoRequired(alsoRequired) {
    assert((!alsoRequired || plan.midPart) &&
           "a guard needs a middle part to fall back to");
  }

  /// End of the low part: m1, or lb when the guard fails.
  Value lowEnd() {
    if (!plan.needMid && plan.highEmpty)
      return loop.getUpperBound();
    return toIv(select(m1(), lbW()));
  }
  /// Start of the middle part: r1, or lb when the guard fails.
  Value midStart() {
    if (plan.lowEmpty)
      return loop.getLowerBound();
    return toIv(select(r1(), lbW()));
  }
  /// End of the middle part: m2, or ub (as ubE) when the guard fails.
  Value midEnd() {
    if (plan.highEmpty)
      return loop.getUpperBound();
    return toIv(select(m2(), ubE()));
  }
  /// Start of the high part: r2, or ubE (nothing) when the guard fails.
  Value highStart() {
    if (!plan.needMid)
      return plan.lowEmpty ? loop.getLowerBound() : toIv(r1());
    return toIv(select(r2(), ubE()));
  }

private:
  static constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  using P = arith::CmpIPredicate;

  Value cst(int64_t v) {
    return arith::ConstantOp::create(rewriter, loc,
                                     rewriter.getI64IntegerAttr(v));
  }
  Value ivCst(int64_t v) {
    return arith::ConstantOp::create(rewriter, loc,
                                     rewriter.getIntegerAttr(ivType, v));
  }
  Value wide(Value v) {
    if (!v)
      return cst(0);
    return narrow ? rewriter.createOrFold<arith::ExtSIOp>(
                        loc, rewriter.getI64Type(), v)
                  : v;
  }
  Value toIv(Value v) {
    return narrow ? rewriter.createOrFold<arith::TruncIOp>(loc, ivType, v) : v;
  }
  Value add(Value a, Value b) {
    return rewriter.createOrFold<arith::AddIOp>(loc, a, b);
  }
  Value addC(Value a, int64_t c) { return c ? add(a, cst(c)) : a; }
  Value sub(Value a, Value b) {
    return rewriter.createOrFold<arith::SubIOp>(loc, a, b);
  }
  Value max(Value a, Value b) {
    return rewriter.createOrFold<arith::MaxSIOp>(loc, a, b);
  }
  Value min(Value a, Value b) {
    return rewriter.createOrFold<arith::MinSIOp>(loc, a, b);
  }
  Value cmp(P pred, Value a, Value b) {
    return rewriter.createOrFold<arith::CmpIOp>(loc, pred, a, b);
  }
  Value pick(Value cond, Value a, Value b) {
    return rewriter.createOrFold<arith::SelectOp>(loc, cond, a, b);
  }
  /// `onSuccess` if the guard holds, else `onFailure`.
  Value select(Value onSuccess, Value onFailure) {
    Value ok = guard();
    return ok ? pick(ok, onSuccess, onFailure) : onSuccess;
  }

  Value lbW() {
    if (!lbWide)
      lbWide = wide(loop.getLowerBound());
    return lbWide;
  }
  /// max(lb, ub): a zero-trip loop keeps every part empty.
  Value ubE() {
    if (!ubEff)
      ubEff = max(lbW(), wide(loop.getUpperBound()));
    return ubEff;
  }

  /// The conjunction of the run-time checks, or null if there are none.
  Value guard() {
    if (guardBuilt)
      return okValue;
    guardBuilt = true;
    for (const GuardCheck &check : plan.guard) {
      P pred = check.atMost ? P::sle : P::sge;
      Value holds;
      if (check.terms.size() == 1) {
        // bound fits the iv type (checked by the analysis).
        holds = cmp(pred, check.terms.front(), ivCst(check.bound));
      } else {
        Value sum = wide(check.terms.front());
        for (Value term : ArrayRef(check.terms).drop_front())
          sum = add(sum, wide(term));
        holds = cmp(pred, addC(sum, check.offset), cst(check.bound));
      }
      okValue = okValue ? rewriter.createOrFold<arith::AndIOp>(loc, okValue,
                                                               holds)
                        : holds;
    }
    if (alsoRequired)
      okValue = okValue ? rewriter.createOrFold<arith::AndIOp>(loc, okValue,
                                                               alsoRequired)
                        : alsoRequired;
    return okValue;
  }

  /// P = B - A + k for comparison `c`, the first iteration (k1) or the end
  /// (k2) of its band. For i32 loops exact in i64. For i64 loops with an
  /// invariant A on the iv side, exact when the guard's 2^60 bounds hold
  /// (otherwise the guard replaces every use). Otherwise B + k saturates at
  /// the i64 limits, which clamp() below turns into the same result as the
  /// exact value since lb and ubE are i64 values (and min/max of saturated
  /// values are the saturated min/max of the exact ones).
  Value point(const Comparison &c, int64_t k) {
    Value a = c.ivSide.inv, b = c.otherSide.inv;
    if (c.ivSide.ivScale != 1) {
      // ceil((B + k) / s), s > 0, for i32 loops only (the analysis refuses
      // the others): B + k is exact in i64; with q = trunc(x / s) and
      // r = x - q * s, ceil is q + 1 when r > 0 (x > 0 not a multiple of s)
      // and q otherwise (trunc rounds negative values up already).
      Value x = addC(wide(b), k);
      Value s = cst(c.ivSide.ivScale);
      Value q = rewriter.createOrFold<arith::DivSIOp>(loc, x, s);
      Value r = sub(x, rewriter.createOrFold<arith::MulIOp>(loc, q, s));
      return pick(cmp(P::sgt, r, cst(0)), addC(q, 1), q);
    }
    if (narrow && c.pointBase) // B = X + shift; see setPointBase
      return addC(wide(c.pointBase), c.pointShift + k);
    if (narrow || a)
      return addC(sub(wide(b), wide(a)), k);
    if (!b)
      return cst(k);
    if (k > 0)
      return pick(cmp(P::sgt, b, cst(kMax - k)), cst(kMax), add(b, cst(k)));
    if (k < 0)
      return pick(cmp(P::slt, b, cst(kMin - k)), cst(kMin), add(b, cst(k)));
    return b;
  }

  /// The smallest P1 (every comparison is known below it) or the largest P2
  /// (every one is known from it on), using the lattice offsets when known.
  Value lowPoint() {
    Value p;
    for (const Comparison &c : plan.comparisons) {
      Value q = point(c, c.k1Lattice.value_or(c.k1));
      p = p ? min(p, q) : q;
    }
    return p;
  }
  Value highPoint() {
    Value p;
    for (const Comparison &c : plan.comparisons) {
      Value q = point(c, c.k2Lattice.value_or(c.k2));
      p = p ? max(p, q) : q;
    }
    return p;
  }

  /// With known lattice offsets (Comparison::k1Lattice), m1 is computed from
  /// B - A + k1Lattice instead of B - A + k1: the clamps of the two agree on
  /// which iterations lie below them, as no iteration lies in
  /// [P1, P1 + k1Lattice - k1). So m1 is itself an iteration (or lb or ubE)
  /// and r1 == m1: no division, and the low part ends where the middle part
  /// starts, in one value, as in a hand-split kernel. The minimum of lattice
  /// points is one, so this holds for several comparisons when every one has
  /// a lattice offset. Likewise for m2 and r2.
  Value m1() {
    if (!m1Value)
      m1Value = min(max(lowPoint(), lbW()), ubE());
    return m1Value;
  }
  Value m2() {
    if (!m2Value) {
      const Comparison &c = plan.comparisons.front();
      bool single = plan.comparisons.size() == 1;
      bool sameK = single && (c.k1Lattice && c.k2Lattice
                                  ? *c.k1Lattice == *c.k2Lattice
                                  : !plan.hasBand);
      m2Value = sameK ? m1() : min(max(highPoint(), m1()), ubE());
    }
    return m2Value;
  }
  Value r1() {
    if (!r1Value)
      r1Value = plan.lowOnLattice ? m1() : roundUp(m1());
    return r1Value;
  }
  Value r2() {
    if (!r2Value) {
      if (plan.highOnLattice)
        r2Value = m2();
      else
        r2Value = plan.hasBand ? roundUp(m2()) : r1();
    }
    return r2Value;
  }

  /// First iteration lb + j * step >= m, or ubE if there is none below ubE,
  /// for lb <= m <= ubE. For i64 loops nothing wraps: m - lb is in [0, 2^64)
  /// and read as unsigned by divui; q * step <= m - lb, so r0 = lb + q * step
  /// lies in [lb, m] (the i64 sums are exact modulo 2^64 and land in range);
  /// if r0 < m, the next iteration r0 + step is used only when ubE - r0 (in
  /// [0, 2^64), compared unsigned) exceeds step, i.e. when r0 + step < ubE.
  /// (`lb + ceil((m - lb) / step) * step` wraps in i64 for ub within one step
  /// of INT64_MAX; it is used for i32 loops only, where it is exact in i64.)
  Value roundUp(Value m) {
    if (plan.step == 1)
      return m;
    Value step = cst(plan.step);
    if (narrow) {
      // i32 values in i64: m - lb + step - 1 < 2^33 + 2^40, nothing wraps.
      Value steps = rewriter.createOrFold<arith::DivUIOp>(
          loc, addC(sub(m, lbW()), plan.step - 1), step);
      return min(
          add(lbW(), rewriter.createOrFold<arith::MulIOp>(loc, steps, step)),
          ubE());
    }
    Value q = rewriter.createOrFold<arith::DivUIOp>(loc, sub(m, lbW()), step);
    Value r0 =
        add(lbW(), rewriter.createOrFold<arith::MulIOp>(loc, q, step));
    Value next = pick(cmp(P::ugt, sub(ubE(), r0), step), add(r0, step), ubE());
    return pick(cmp(P::eq, r0, m), m, next);
  }

  PatternRewriter &rewriter;
  scf::ForOp loop;
  const SplitPlan &plan;
  Location loc;
  Type ivType;
  bool narrow;
  Value alsoRequired;
  bool guardBuilt = false;
  Value lbWide, ubEff, okValue, m1Value, m2Value, r1Value, r2Value;
};

/// Splits scf.for loops on the first suitable iv comparison in their body.
struct SplitLoopOnComparison : OpRewritePattern<scf::ForOp> {
  SplitLoopOnComparison(MLIRContext *ctx, const SplitLimits &limits,
                        const ProfitOptions &profitOptions,
                        Rounding rounding, bool scaleAfterMax, bool guardedMask,
                        bool remarks)
      : OpRewritePattern(ctx), limits(limits), profitOptions(profitOptions),
        rounding(rounding), scaleAfterMaxOption(scaleAfterMax),
        guardedMaskOption(guardedMask), remarks(remarks) {}

  LogicalResult matchAndRewrite(scf::ForOp loop,
                                PatternRewriter &rewriter) const override {
    // Decide first: nothing below runs, and no IR changes, on a decline.
    const char *reason = "";
    FailureOr<SplitPlan> plan = analyzeLoop(loop, limits, reason);
    if (failed(plan))
      return decline(loop, rewriter, reason, /*legal=*/false);
    // Whether it pays (LoopSplitProfitability.cpp: issue 28's model).
    ProfitDecision profit = decideProfit(loop, *plan, profitOptions);
    if (profit.declineReason)
      return decline(loop, rewriter, profit.declineReason, /*legal=*/true);
    // Not a cost but a result: checked with or without the model
    // (LoopSplitRounding.cpp).
    bool roundParts = false;
    if (rounding != Rounding::Contract && findContractionHazard(loop, *plan)) {
      if (rounding == Rounding::Decline)
        return decline(loop, rewriter,
                       "a folded mask separates a multiply from an add, which "
                       "would then contract into an FMA and change results "
                       "(rounding=mul-rn on CUDA, or rounding=contract)",
                       /*legal=*/true);
      if (!canKeepRounding(loop, *plan))
        return decline(loop, rewriter,
                       "a folded mask separates a multiply from an add and "
                       "the multiply is not an f32/f64 tensor one of the loop body "
                       "(rounding=contract splits anyway)",
                       /*legal=*/true);
      roundParts = true;
    }

    struct Part {
      Value lb, ub;
      std::optional<bool> low; // Comparisons known: each is its lowValue
                               // (true) or its negation (false).
    };
    rewriter.setInsertionPoint(loop);
    // Row maxima of scaled scores in the rounded parts: taken before the
    // scale where it is positive and finite (LoopSplitRounding.h), else every
    // iteration runs in the middle part, which keeps the loop's own code.
    SmallVector<Value> scales;
    Value scalesOk;
    // The guard needs a part that keeps the loop's own code to fall back to.
    // A plan of two folded parts (the scalar-form attention) gets one by
    // keeping the comparisons in its high part, which then runs every
    // iteration where the guard fails. In attention that part is the short
    // one, the diagonal (the low part is the main one, as for singleDrain);
    // where it is not, its iterations still run the unsplit loop's code. A
    // third loop made for the guard alone made that kernel spill at head
    // dim 64.
    bool twoFolded = plan->lowPart && plan->highPart && !plan->midPart;
    if (roundParts && scaleAfterMaxOption && (plan->midPart || twoFolded))
      scales = rowMaximumScales(loop, *plan);
    if (!scales.empty() && twoFolded)
      plan->keepComparisonsInHighPart();
    for (Value scale : scales) {
      auto type = cast<FloatType>(scale.getType());
      Location loc = loop.getLoc();
      Value zero = arith::ConstantOp::create(rewriter, loc,
                                             rewriter.getFloatAttr(type, 0.0));
      Value inf = arith::ConstantOp::create(
          rewriter, loc,
          FloatAttr::get(type, APFloat::getInf(type.getFloatSemantics())));
      // Ordered compares: false for NaN.
      Value ok = arith::AndIOp::create(
          rewriter, loc,
          arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGT,
                                scale, zero),
          arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OLT,
                                scale, inf));
      scalesOk =
          scalesOk ? arith::AndIOp::create(rewriter, loc, scalesOk, ok) : ok;
    }
    PartBounds bounds(rewriter, loop, *plan, scalesOk);
    SmallVector<Part, 3> parts;
    if (plan->lowPart)
      parts.push_back({loop.getLowerBound(), bounds.lowEnd(), true});
    if (plan->midPart)
      parts.push_back({bounds.midStart(), bounds.midEnd(), std::nullopt});
    if (plan->highPart)
      parts.push_back({bounds.highStart(), loop.getUpperBound(), false});

    SmallVector<Value> carried(loop.getInitArgs());
    bool singleDrain = profitOptions.enabled && profitOptions.singleDrain &&
                       profit.pipelined && parts.size() > 1;
    for (auto [index, part] : llvm::enumerate(parts)) {
      rewriter.setInsertionPoint(loop);
      IRMapping mapping;
      // Cloning keeps the loop's attributes (tt.num_stages, ...).
      auto clone = cast<scf::ForOp>(rewriter.clone(*loop, mapping));
      clone.setLowerBound(part.lb);
      clone.setUpperBound(part.ub);
      clone.getInitArgsMutable().assign(carried);
      if (part.low && roundParts)
        keepRounding(
            loop, *plan,
            [&](Operation *op) { return mapping.lookup(op); }, rewriter);
      if (part.low) {
        for (Comparison c : plan->comparisons)
          replaceByConstant(rewriter, mapping.lookup(c.cmp.getResult()),
                            *part.low == c.lowValue);
        if (!scales.empty())
          scaleAfterMax(clone, scales, rewriter);
      } else if (guardedMaskOption) {
        // The part that keeps the comparisons: a branch on one of them that
        // only applies a mask becomes straight-line code
        // (LoopSplitGuardedMask.h).
        SmallVector<Value> conditions;
        for (Comparison c : plan->comparisons)
          conditions.push_back(mapping.lookup(c.cmp.getResult()));
        absorbGuardedMasks(clone, conditions, rewriter);
      }
      // One pipeline drain: only the main part keeps the loop's stages.
      if (singleDrain && index != profit.mainPart)
        clone->setAttr("tt.num_stages", rewriter.getI32IntegerAttr(1));
      carried.assign(clone.getResults().begin(), clone.getResults().end());
    }
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] split loop at "
                            << loop.getLoc() << " into " << parts.size()
                            << " parts on " << plan->comparisons.size()
                            << " comparison(s), the first "
                            << plan->comparisons.front().cmp << "\n");
    rewriter.replaceOp(loop, carried);
    return success();
  }

private:
  /// Leaves `loop` alone, saying why (a remark when the `remarks` option is
  /// set; the reason also goes to notifyMatchFailure and LLVM_DEBUG). Only
  /// declines of loops that the analysis could split (`legal`) and those of
  /// its limits are remarked: "no comparison" on every loop would be noise.
  LogicalResult decline(scf::ForOp loop, PatternRewriter &rewriter,
                        const char *reason, bool legal) const {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << loop.getLoc() << ": "
                            << reason << "\n");
    // The analysis's own profitability limits name their option.
    if (remarks && (legal || StringRef(reason).contains("max-")))
      loop.emitRemark() << "loop_split: not applied: " << reason;
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

  SplitLimits limits;
  ProfitOptions profitOptions;
  Rounding rounding;
  bool scaleAfterMaxOption;
  bool guardedMaskOption;
  bool remarks;
};

class LoopSplitPass
    : public triton_ext::impl::TritonExtLoopSplitBase<LoopSplitPass> {
public:
  using TritonExtLoopSplitBase::TritonExtLoopSplitBase;

  void runOnOperation() override {
    if (maxParts < 2 || maxParts > 3) {
      getOperation().emitOpError()
          << "triton-ext-loop-split: max-parts must be 2 or 3, got "
          << static_cast<unsigned>(maxParts);
      return signalPassFailure();
    }
    // The walk driver visits each original loop once, inner loops first, and
    // not the parts it creates: a part that keeps the comparison is not split
    // again.
    RewritePatternSet patterns(&getContext());
    patterns.add<SplitLoopOnComparison>(
        &getContext(), SplitLimits{maxParts, maxTileElements, maxTailStep},
        ProfitOptions{profitability, minUnmaskedTrips, singleDrain},
        rounding, scaleAfterMax, guardedMask, remarks);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

TRITON_EXT_REGISTER_PASS(loop_split, LoopSplitPass);
