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
    // Inline PTX, not libdevice's __nv_fmul_rn: Triton links libdevice with
    // __CUDA_FTZ set, which makes that mul.rn.ftz, flushing the subnormal
    // products the plain multiply keeps.
    bool f32 = getElementTypeOrSelf(mul.getType()).isF32();
    Value rounded =
        triton::ElementwiseInlineAsmOp::create(
            rewriter, mul.getLoc(), TypeRange{mul.getType()},
            f32 ? "mul.rn.f32 $0, $1, $2;" : "mul.rn.f64 $0, $1, $2;",
            f32 ? "=f,f,f" : "=d,d,d", /*pure=*/true, /*packed_element=*/1,
            mul->getOperands())
            ->getResult(0);
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

} // namespace mlir::triton_ext::loop_split
