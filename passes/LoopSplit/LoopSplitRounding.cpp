//===- LoopSplitRounding.cpp - Splits that would change floating results ---===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Why: vLLM's prefix-prefill computes `qk *= sm_scale`, then
// `qk = tl.where(mask, qk, -inf)`, then `tl.exp(qk - m_ij)`. In the masked
// loop the select separates the multiply from the subtraction; in a part where
// the mask is known true the select folds away, `qk * sm_scale - m_ij` becomes
// one FMA, and the H200 showed 1262 fp16 outputs 1 ulp away from the unsplit
// kernel's (issue 28). With Triton's enable_fp_fusion=False both kernels agree
// bit for bit. So where this can happen the `rounding` option decides:
// `decline` leaves the loop alone, `mul-rn` (CUDA) keeps the roundings with a
// multiply no backend fuses, `contract` accepts the FMA.
//
// Conservative by construction: any select a folded comparison controls (its
// condition derived from the comparison through i1 ops) is assumed to fold,
// in the part where it does and in the others.
//
//===----------------------------------------------------------------------===//

#include "LoopSplitRounding.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "triton/Dialect/Triton/IR/Dialect.h"
#include "triton/Dialect/TritonGPU/IR/Dialect.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::triton_ext::loop_split {
namespace {

bool isI1Like(Type type) { return getElementTypeOrSelf(type).isInteger(1); }

/// Ops that move a value between registers or shapes without rounding it: a
/// multiply and an add they separate can still be contracted.
bool isTransparent(Operation *op) {
  return isa<triton::BroadcastOp, triton::ExpandDimsOp, triton::ReshapeOp,
             triton::SplatOp, triton::TransOp, triton::gpu::ConvertLayoutOp>(
      op);
}

/// The multiply `value` comes from, looking back through transparent ops.
arith::MulFOp multiplyOf(Value value) {
  for (Operation *op = value.getDefiningOp(); op;) {
    if (auto mul = dyn_cast<arith::MulFOp>(op))
      return mul;
    if (!isTransparent(op) || op->getNumOperands() != 1)
      return {};
    op = op->getOperand(0).getDefiningOp();
  }
  return {};
}

/// Whether a region adds (the combiner of a tt.reduce or tt.scan that sums).
bool regionAdds(Region &region) {
  bool adds = false;
  region.walk([&](Operation *op) {
    if (isa<arith::AddFOp, arith::SubFOp>(op))
      adds = true;
  });
  return adds;
}

/// Whether `value`, looking forward through transparent ops, reaches an add.
bool reachesAdd(Value value) {
  SmallVector<Value> work{value};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (!seen.insert(user).second)
        continue;
      if (isa<arith::AddFOp, arith::SubFOp>(user))
        return true;
      if (isa<triton::ReduceOp, triton::ScanOp>(user) &&
          regionAdds(user->getRegion(0)))
        return true;
      if (isTransparent(user))
        llvm::append_range(work, user->getResults());
    }
  }
  return false;
}

/// An operand that carries a multiply's value across a boundary the split
/// may fold away: a select's true/false value, or what a region of an
/// `scf.if` yields.
struct Hazard {
  Operation *user;
  unsigned operand;
};

/// Every hazard of `loop`: a select or `scf.if` whose condition a folded
/// comparison of `plan` controls, whose result reaches an add, and whose
/// operand (or yielded value) comes from a multiply.
SmallVector<Hazard> hazards(scf::ForOp loop, const SplitPlan &plan) {
  // Every i1 value derived from a folded comparison (and/or/xor, shape ops,
  // layout conversions): the values canonicalize may fold in a known part.
  llvm::SetVector<Value> folded;
  for (Comparison c : plan.comparisons)
    folded.insert(c.cmp.getResult());
  for (size_t i = 0; i < folded.size(); ++i)
    for (Operation *user : folded[i].getUsers())
      if (loop->isProperAncestor(user))
        for (Value result : user->getResults())
          if (isI1Like(result.getType()) && !isa<arith::SelectOp>(user))
            folded.insert(result);
  SmallVector<Hazard> found;
  auto note = [&](Operation *user, unsigned operand) {
    if (multiplyOf(user->getOperand(operand)))
      found.push_back({user, operand});
  };
  for (Value condition : folded)
    for (Operation *user : condition.getUsers()) {
      if (auto select = dyn_cast<arith::SelectOp>(user)) {
        if (select.getCondition() == condition &&
            isa<FloatType>(getElementTypeOrSelf(select.getType())) &&
            reachesAdd(select.getResult())) {
          note(select, 1);
          note(select, 2);
        }
        continue;
      }
      // The scalar form (`if start_n >= diag: qk = tl.where(...)`): folding
      // the condition inlines one region, and the yielded multiply meets the
      // add that the branch kept apart.
      auto branch = dyn_cast<scf::IfOp>(user);
      if (!branch || branch.getCondition() != condition)
        continue;
      for (auto [index, result] : llvm::enumerate(branch.getResults()))
        if (isa<FloatType>(getElementTypeOrSelf(result.getType())) &&
            reachesAdd(result))
          for (Region &region : branch->getRegions())
            if (!region.empty())
              note(region.front().getTerminator(), index);
    }
  return found;
}

constexpr StringLiteral kMulRnF32 = "mul.rn.f32 $0, $1, $2;";
constexpr StringLiteral kMulRnF64 = "mul.rn.f64 $0, $1, $2;";

/// `a * b`, correctly rounded, as an op no backend contracts into an add.
Value roundedMultiply(RewriterBase &rewriter, Location loc, Value a, Value b) {
  // Inline PTX, not libdevice's __nv_fmul_rn: Triton links libdevice with
  // __CUDA_FTZ set, which makes that mul.rn.ftz, flushing the subnormal
  // products the plain multiply keeps.
  bool f32 = getElementTypeOrSelf(a.getType()).isF32();
  return triton::ElementwiseInlineAsmOp::create(
             rewriter, loc, TypeRange{a.getType()}, f32 ? kMulRnF32 : kMulRnF64,
             f32 ? "=f,f,f" : "=d,d,d", /*pure=*/true, /*packed_element=*/1,
             ValueRange{a, b})
      ->getResult(0);
}

/// Whether `reduce` takes the maximum of one tensor (a combiner that is one
/// maxnumf or maximumf of its two arguments).
bool isMaximum(triton::ReduceOp reduce) {
  if (reduce->getNumOperands() != 1 || reduce->getNumResults() != 1)
    return false;
  Block &body = reduce.getCombineOp().front();
  if (body.getNumArguments() != 2 || !llvm::hasSingleElement(
                                         body.without_terminator()))
    return false;
  Operation &op = body.front();
  if (!isa<arith::MaxNumFOp, arith::MaximumFOp>(op) ||
      op.getOperand(0) != body.getArgument(0) ||
      op.getOperand(1) != body.getArgument(1))
    return false;
  return body.getTerminator()->getOperand(0) == op.getResult(0);
}

/// A multiply `x * splat(s)`, `s` a scalar defined outside `loop`: (x, s).
std::pair<Value, Value> scaledBy(Operation *op, scf::ForOp loop) {
  bool multiply = isa<arith::MulFOp>(op);
  if (auto asmOp = dyn_cast<triton::ElementwiseInlineAsmOp>(op))
    multiply = asmOp.getAsmString() == kMulRnF32 ||
               asmOp.getAsmString() == kMulRnF64;
  if (!multiply || op->getNumOperands() != 2 ||
      !isa<RankedTensorType>(op->getResult(0).getType()))
    return {};
  for (unsigned i : {0u, 1u}) {
    auto splat = op->getOperand(i).getDefiningOp<triton::SplatOp>();
    if (splat && isa<FloatType>(splat.getSrc().getType()) &&
        loop.isDefinedOutsideOfLoop(splat.getSrc()))
      return {op->getOperand(1 - i), splat.getSrc()};
  }
  return {};
}

/// The i1 constant `condition` is, if it is one (scalar or splat).
std::optional<bool> constantCondition(Value condition) {
  Attribute attr;
  if (!matchPattern(condition, m_Constant(&attr)))
    return std::nullopt;
  if (auto dense = dyn_cast<SplatElementsAttr>(attr))
    return dense.getSplatValue<bool>();
  if (auto integer = dyn_cast<IntegerAttr>(attr))
    return integer.getValue().getBoolValue();
  return std::nullopt;
}

/// The multiplies `value` may be, looking back through layout conversions and
/// through selects and `scf.if` results: every side of those whose condition
/// is in `either`, only the side taken of those whose condition is a
/// constant, none of the others.
void multipliesBehind(Value value, const llvm::SetVector<Value> &either,
                      SmallVectorImpl<Operation *> &found) {
  Operation *op = value.getDefiningOp();
  if (!op)
    return;
  if (isa<triton::gpu::ConvertLayoutOp>(op))
    return multipliesBehind(op->getOperand(0), either, found);
  auto sides = [&](Value condition) -> SmallVector<unsigned, 2> {
    if (either.contains(condition))
      return {0, 1};
    if (std::optional<bool> known = constantCondition(condition))
      return {*known ? 0u : 1u};
    return {};
  };
  if (auto select = dyn_cast<arith::SelectOp>(op)) {
    for (unsigned side : sides(select.getCondition()))
      multipliesBehind(side == 0 ? select.getTrueValue()
                                 : select.getFalseValue(),
                       either, found);
    return;
  }
  if (auto branch = dyn_cast<scf::IfOp>(op)) {
    unsigned index = cast<OpResult>(value).getResultNumber();
    for (unsigned side : sides(branch.getCondition())) {
      Region &region = side == 0 ? branch.getThenRegion()
                                 : branch.getElseRegion();
      if (!region.empty())
        multipliesBehind(region.front().getTerminator()->getOperand(index),
                         either, found);
    }
    return;
  }
  found.push_back(op);
}

} // namespace

Operation *findContractionHazard(scf::ForOp loop, const SplitPlan &plan) {
  SmallVector<Hazard> found = hazards(loop, plan);
  return found.empty() ? nullptr : found.front().user;
}

bool canKeepRounding(scf::ForOp loop, const SplitPlan &plan) {
  for (Hazard hazard : hazards(loop, plan)) {
    arith::MulFOp mul = multiplyOf(hazard.user->getOperand(hazard.operand));
    Type element = getElementTypeOrSelf(mul.getType());
    if (!(element.isF32() || element.isF64()) ||
        !isa<RankedTensorType>(mul.getType()) || !loop->isProperAncestor(mul))
      return false;
  }
  return true;
}

void keepRounding(scf::ForOp loop, const SplitPlan &plan,
                  function_ref<Operation *(Operation *)> inPart,
                  RewriterBase &rewriter) {
  for (Hazard hazard : hazards(loop, plan)) {
    // The multiply as the part has it; a correctly rounded copy of it feeds
    // the boundary in place of the fusible one. Other users of the multiply
    // keep it: they met no boundary, so their roundings (fused or not) are
    // the masked loop's already.
    Operation *partUser = inPart(hazard.user);
    unsigned operand = hazard.operand;
    Value chain = partUser->getOperand(operand);
    SmallVector<Operation *> path; // Transparent ops, select side first.
    Operation *op = chain.getDefiningOp();
    while (!isa<arith::MulFOp>(op)) {
      path.push_back(op);
      op = op->getOperand(0).getDefiningOp();
    }
    auto mul = cast<arith::MulFOp>(op);
    // Right before the boundary: the multiply's operands dominate it.
    rewriter.setInsertionPoint(partUser);
    Value rounded = roundedMultiply(rewriter, mul.getLoc(), mul.getLhs(),
                                    mul.getRhs());
    // Rebuild the shape chain on the rounded value.
    for (Operation *step : llvm::reverse(path)) {
      Operation *copy = rewriter.clone(*step);
      copy->setOperand(0, rounded);
      rounded = copy->getResult(0);
    }
    rewriter.modifyOpInPlace(partUser,
                             [&] { partUser->setOperand(operand, rounded); });
  }
}

SmallVector<Value> rowMaximumScales(scf::ForOp loop, const SplitPlan &plan) {
  llvm::SetVector<Value> folded;
  for (Comparison c : plan.comparisons)
    folded.insert(c.cmp.getResult());
  llvm::SetVector<Value> scales;
  loop.getBody()->walk([&](triton::ReduceOp reduce) {
    if (!isMaximum(reduce))
      return;
    SmallVector<Operation *> found;
    multipliesBehind(reduce->getOperand(0), folded, found);
    for (Operation *op : found)
      if (Value scale = scaledBy(op, loop).second)
        scales.insert(scale);
  });
  return scales.takeVector();
}

void scaleAfterMax(scf::ForOp part, ArrayRef<Value> scales,
                   RewriterBase &rewriter) {
  SmallVector<triton::ReduceOp> maxima;
  part.getBody()->walk([&](triton::ReduceOp reduce) {
    if (isMaximum(reduce))
      maxima.push_back(reduce);
  });
  DominanceInfo dominance(part);
  for (triton::ReduceOp reduce : maxima) {
    // With every condition a constant, one multiply or none.
    SmallVector<Operation *> found;
    multipliesBehind(reduce->getOperand(0), {}, found);
    if (found.size() != 1)
      continue;
    auto [unscaled, scale] = scaledBy(found.front(), part);
    auto rows = dyn_cast<RankedTensorType>(reduce->getResult(0).getType());
    // A maximum over a whole tensor is a scalar, which elementwise asm does
    // not take; it is not the per-row work this saves either.
    if (!unscaled || !llvm::is_contained(scales, scale) || !rows ||
        !dominance.properlyDominates(unscaled, reduce))
      continue;
    rewriter.setInsertionPoint(reduce);
    IRMapping mapping;
    mapping.map(reduce->getOperand(0), unscaled);
    Operation *maximum = rewriter.clone(*reduce, mapping);
    Value splat = triton::SplatOp::create(rewriter, reduce.getLoc(), rows, scale);
    rewriter.replaceOp(reduce, roundedMultiply(rewriter, reduce.getLoc(),
                                               maximum->getResult(0), splat));
  }
}

} // namespace mlir::triton_ext::loop_split
