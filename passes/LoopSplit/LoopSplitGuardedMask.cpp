//===- LoopSplitGuardedMask.cpp - A mask under a branch, without the branch ===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Why the rewrite is legal: let `e` be the extreme value for which
// `cmpi p` gives, on every element, the value K that makes the select return
// `%x`, whatever the other operand holds (INT_MAX >= anything, anything >=
// INT_MIN, and the same for the other orders). The new code computes
// `%m' = cmpi p, select(%c, %a, e), %b`.
// - Where %c is true, `%m'` is `%m` and the select is the then branch's.
// - Where %c is false, every element of `%m'` is K, so the select returns
//   `%x`, which is what the else branch yields.
// The then branch's ops are pure (no memory effects, speculatable), so running
// them when %c is false changes nothing else. The select's values are not
// touched: a multiply that reached an add through the branch reaches it
// through the select now, so no new FMA contraction can change a rounding.
//
//===----------------------------------------------------------------------===//

#include "LoopSplitGuardedMask.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "triton/Dialect/Triton/IR/Dialect.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <optional>

using namespace mlir;

namespace mlir::triton_ext::loop_split {
namespace {

using P = arith::CmpIPredicate;

/// The value `e` of `width` bits with `p(e, other) == keep` for every
/// `other`; none for eq/ne and for a strict (non-strict) order asked for true
/// (false).
std::optional<APInt> lhsExtreme(P p, bool keep, unsigned width) {
  switch (p) {
  case P::sge: // e >= b for every b: e = INT_MAX.
    return keep ? std::optional(APInt::getSignedMaxValue(width)) : std::nullopt;
  case P::sle:
    return keep ? std::optional(APInt::getSignedMinValue(width)) : std::nullopt;
  case P::uge:
    return keep ? std::optional(APInt::getMaxValue(width)) : std::nullopt;
  case P::ule:
    return keep ? std::optional(APInt::getZero(width)) : std::nullopt;
  case P::sgt: // e > b for no b: e = INT_MIN.
    return keep ? std::nullopt : std::optional(APInt::getSignedMinValue(width));
  case P::slt:
    return keep ? std::nullopt : std::optional(APInt::getSignedMaxValue(width));
  case P::ugt:
    return keep ? std::nullopt : std::optional(APInt::getZero(width));
  case P::ult:
    return keep ? std::nullopt : std::optional(APInt::getMaxValue(width));
  case P::eq:
  case P::ne:
    return std::nullopt;
  }
  return std::nullopt;
}

/// `p(a, b) == swapped(p)(b, a)`.
P swapped(P p) {
  switch (p) {
  case P::sge: return P::sle;
  case P::sle: return P::sge;
  case P::sgt: return P::slt;
  case P::slt: return P::sgt;
  case P::uge: return P::ule;
  case P::ule: return P::uge;
  case P::ugt: return P::ult;
  case P::ult: return P::ugt;
  default: return p;
  }
}

/// An operand of the mask, its narrowest form (before the broadcasts and
/// expand_dims that shape it), and those shape ops, outermost first.
struct Operand {
  unsigned index;
  Value root;
  SmallVector<Operation *, 2> shaping;
  APInt extreme;
  int64_t elements() const {
    auto shaped = dyn_cast<ShapedType>(root.getType());
    return shaped ? shaped.getNumElements() : 1;
  }
};

std::optional<Operand> saturable(arith::CmpIOp cmp, unsigned index,
                                 bool keep) {
  Value v = cmp->getOperand(index);
  Operand out{index, v, {}, APInt()};
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<triton::BroadcastOp, triton::ExpandDimsOp>(def))
      break;
    out.shaping.push_back(def);
    v = def->getOperand(0);
  }
  out.root = v;
  auto intType = dyn_cast<IntegerType>(getElementTypeOrSelf(v.getType()));
  if (!intType)
    return std::nullopt;
  P p = index == 0 ? cmp.getPredicate() : swapped(cmp.getPredicate());
  std::optional<APInt> e = lhsExtreme(p, keep, intType.getWidth());
  if (!e)
    return std::nullopt;
  out.extreme = *e;
  return out;
}

/// The guarded mask of `ifOp` when it has the documented form.
struct GuardedMask {
  arith::CmpIOp mask;
  Operand operand;
};

std::optional<GuardedMask> match(scf::IfOp ifOp) {
  if (ifOp.getNumResults() != 1 || ifOp.getElseRegion().empty())
    return std::nullopt;
  Block &thenBlock = ifOp.getThenRegion().front();
  Block &elseBlock = ifOp.getElseRegion().front();
  auto elseYield = cast<scf::YieldOp>(elseBlock.getTerminator());
  if (elseBlock.getOperations().size() != 1)
    return std::nullopt;
  Value x = elseYield.getOperand(0);
  auto thenYield = cast<scf::YieldOp>(thenBlock.getTerminator());
  auto select = thenYield.getOperand(0).getDefiningOp<arith::SelectOp>();
  if (!select || select->getBlock() != &thenBlock)
    return std::nullopt;
  bool keep;
  if (select.getTrueValue() == x)
    keep = true;
  else if (select.getFalseValue() == x)
    keep = false;
  else
    return std::nullopt;
  auto mask = select.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!mask || mask->getBlock() != &thenBlock)
    return std::nullopt;
  // Pure ops only, and cheap ones: where the condition is false the branch
  // now runs too, so a dot or a reduction there would be new work.
  for (Operation &op : thenBlock.without_terminator())
    if (!isPure(&op) || op.getNumRegions() ||
        isa<triton::DotOp, triton::DotScaledOp>(op))
      return std::nullopt;
  std::optional<Operand> lhs = saturable(mask, 0, keep);
  std::optional<Operand> rhs = saturable(mask, 1, keep);
  if (!lhs && !rhs)
    return std::nullopt;
  if (!lhs || !rhs)
    return GuardedMask{mask, lhs ? *lhs : *rhs};
  // Prefer the loop-invariant side, then the smaller one. In attention that
  // is the query rows (a few per thread, against every key column a thread
  // holds): on the H200 the scalar form then ran as fast as the hand-split
  // kernel, and 0.974-0.989x of it with the select on the columns
  // (passes/LoopSplit/README.md).
  auto cost = [&](const Operand &o) {
    Value root = o.root;
    bool invariant = !ifOp->getParentOp()->isAncestor(
        root.getParentRegion()->getParentOp());
    return std::make_pair(invariant ? 0 : 1, o.elements());
  };
  return GuardedMask{mask, cost(*lhs) <= cost(*rhs) ? *lhs : *rhs};
}

void absorb(scf::IfOp ifOp, GuardedMask guarded, RewriterBase &rewriter) {
  Location loc = ifOp.getLoc();
  Block &thenBlock = ifOp.getThenRegion().front();
  rewriter.setInsertionPoint(ifOp);
  IRMapping mapping;
  for (Operation &op : thenBlock.without_terminator())
    rewriter.clone(op, mapping);

  auto mask = cast<arith::CmpIOp>(mapping.lookup(guarded.mask.getOperation()));
  rewriter.setInsertionPoint(mask);
  const Operand &operand = guarded.operand;
  Value root = mapping.lookupOrDefault(operand.root);
  Value condition = ifOp.getCondition();
  Type rootType = root.getType();
  TypedAttr extreme =
      rewriter.getIntegerAttr(getElementTypeOrSelf(rootType), operand.extreme);
  if (auto tensor = dyn_cast<RankedTensorType>(rootType)) {
    extreme = DenseElementsAttr::get(tensor, extreme);
    condition = triton::SplatOp::create(
        rewriter, loc,
        RankedTensorType::get(tensor.getShape(), rewriter.getI1Type(),
                              tensor.getEncoding()),
        condition);
  }
  Value saturated = arith::SelectOp::create(
      rewriter, loc, condition, root,
      arith::ConstantOp::create(rewriter, loc, extreme));
  // The shape ops again, innermost first, on the saturated value.
  for (Operation *shape : llvm::reverse(operand.shaping)) {
    IRMapping onSaturated;
    onSaturated.map(shape->getOperand(0), saturated);
    saturated = rewriter.clone(*shape, onSaturated)->getResult(0);
  }
  Value unsaturated = mask->getOperand(operand.index);
  rewriter.modifyOpInPlace(
      mask, [&] { mask->setOperand(operand.index, saturated); });
  // The clones of the old shape ops, now unused.
  for (Operation *dead = unsaturated.getDefiningOp();
       dead && dead->use_empty() && isPure(dead);) {
    Operation *next = dead->getNumOperands() == 1
                          ? dead->getOperand(0).getDefiningOp()
                          : nullptr;
    rewriter.eraseOp(dead);
    dead = next && next->getBlock() == ifOp->getBlock() ? next : nullptr;
  }
  auto thenYield = cast<scf::YieldOp>(thenBlock.getTerminator());
  rewriter.replaceOp(ifOp, mapping.lookup(thenYield.getOperand(0)));
}

} // namespace

unsigned absorbGuardedMasks(scf::ForOp part, ArrayRef<Value> conditions,
                            RewriterBase &rewriter) {
  llvm::SmallPtrSet<Value, 4> guards(conditions.begin(), conditions.end());
  SmallVector<std::pair<scf::IfOp, GuardedMask>> found;
  for (auto ifOp : part.getBody()->getOps<scf::IfOp>())
    if (guards.contains(ifOp.getCondition()))
      if (std::optional<GuardedMask> guarded = match(ifOp))
        found.push_back({ifOp, *guarded});
  for (auto &[ifOp, guarded] : found)
    absorb(ifOp, guarded, rewriter);
  return found.size();
}

} // namespace mlir::triton_ext::loop_split
