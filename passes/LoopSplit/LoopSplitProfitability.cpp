//===- LoopSplitProfitability.cpp - Whether a legal split pays -------------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// The model (issue 28). A split replaces one loop by two or three copies of
// its body and folds the comparisons in the parts where they are known.
//
// What it saves: per iteration of a known part, the work the folded
// comparisons fed. That is worth something when a comparison feeds computation
// on a tile (the causal `tl.where(mask, qk, -inf)` on a BLOCK_M x BLOCK_N tile
// of scores: a compare and a select per element, and the FMA contraction it
// blocked), and close to nothing when it only masks loads and stores: a
// masked load is the same load with a predicate, and the cp.async that
// Triton's pipeliner makes of it takes the mask as its source size.
//
// What it costs: a copy of the body per part (code, and registers where live
// ranges of the parts meet), and, in a loop Triton software-pipelines (a
// tt.dot fed by loads of the body, num_stages > 1), a prologue and a drain per
// pipelined part: loads of the next part are not issued while the previous
// part drains. Measured on the H200 (issue 28): vLLM's unified attention, whose
// only folded comparison is the tile mask of its K/V loads, split into three
// loops, two of them pipelined: registers 80 -> 139 with the wheel's ptxas (so
// 6 -> 3 resident CTAs of 128 threads), 0.904x (2-D launch) and 0.833x (3-D,
// 4-16 tiles per program). Triton's test_pipeline_matmul (K-tail masks on the
// A/B loads) found two pipeline drains where it expects one.
//
// The decision, in order:
//  1. The folded comparisons only mask loads/stores (through and/or/xor,
//     broadcast, expand_dims, reshape, splat) and the body has a tt.dot fed by
//     loads of the body: decline (nothing to save against the dot, a drain per
//     part to pay).
//  2. The loop's trip count is bounded (constant bounds, or the remainder loop
//     loop_unroll emits: lb = lb0 + (n - n % F) * step, at most F - 1 trips)
//     and its unmasked parts run fewer than min-unmasked-trips iterations:
//     decline (vLLM's prefix-prefill: the remainder of its unroll-by-4 context
//     loop, at most two unmasked iterations, spill stack 448 -> 728 bytes).
//  3. Otherwise split. Every part keeps the loop's stages, as in a hand-split
//     kernel (the causal split's diagonal loop is pipelined like the
//     tutorial's second loop; both drain). With single-drain, only the main
//     part (the low part when emitted, else the high one) keeps its stages and
//     the other parts (a diagonal band of one or two blocks, or a rarely-run
//     tail) get tt.num_stages = 1: one pipeline drain, as in the unsplit loop,
//     but the unpipelined part loads through registers and runs its loads in
//     series (one-loop attention with the wheel's ptxas: 173 -> 178 registers
//     at head_dim 128, 211 -> 224 at 64, against hand-split's 173 / 211).
//
//===----------------------------------------------------------------------===//

#include "LoopSplitProfitability.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "triton/Dialect/Triton/IR/Dialect.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::triton_ext::loop_split {
namespace {

/// The loop's own `tt.num_stages`, if set.
std::optional<int64_t> stagesAttr(scf::ForOp loop) {
  if (auto attr = loop->getAttrOfType<IntegerAttr>("tt.num_stages"))
    return attr.getInt();
  return std::nullopt;
}

/// Whether `value` is computed, inside `loop`'s body, from a load of the body
/// (the operands Triton's pipeliner turns into async copies).
bool fedByLoad(Value value, scf::ForOp loop) {
  SmallVector<Value, 16> work{value};
  llvm::SmallPtrSet<Operation *, 32> seen;
  while (!work.empty() && seen.size() < 256) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || !loop->isProperAncestor(def) || !seen.insert(def).second)
      continue;
    if (isa<triton::LoadOp, triton::DescriptorLoadOp>(def))
      return true;
    // A value yielded by an scf.if holding the loads (vLLM's paged decode
    // loads its last block masked and the others unmasked in one if/else).
    if (def->getNumRegions() &&
        def->walk([](Operation *op) {
             return isa<triton::LoadOp, triton::DescriptorLoadOp>(op)
                        ? WalkResult::interrupt()
                        : WalkResult::advance();
           })
            .wasInterrupted())
      return true;
    for (Value operand : def->getOperands())
      work.push_back(operand);
  }
  return false;
}

/// A tt.dot (or dot_scaled) of the loop itself (not of a nested loop) with an
/// operand loaded in the body: the loop Triton's pipeliner works on.
bool hasLoadFedDot(scf::ForOp loop) {
  bool found = false;
  loop.getBody()->walk([&](Operation *op) {
    if (found || op->getParentOfType<scf::ForOp>() != loop)
      return;
    if (!isa<triton::DotOp, triton::DotScaledOp>(op))
      return;
    for (Value operand : op->getOperands())
      if (fedByLoad(operand, loop)) {
        found = true;
        return;
      }
  });
  return found;
}

/// Whether every use of `value` (through mask plumbing) is the mask of a load
/// or a store: folding it saves only predicates.
bool onlyMasksMemory(Value value) {
  SmallVector<Value, 8> work{value};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (auto load = dyn_cast<triton::LoadOp>(user)) {
        if (load.getMask() != v)
          return false;
        continue;
      }
      if (auto store = dyn_cast<triton::StoreOp>(user)) {
        if (store.getMask() != v)
          return false;
        continue;
      }
      if (isa<arith::AndIOp, arith::OrIOp, arith::XOrIOp, triton::BroadcastOp,
              triton::ExpandDimsOp, triton::ReshapeOp, triton::SplatOp>(user)) {
        if (seen.insert(user).second)
          work.push_back(user->getResult(0));
        continue;
      }
      return false; // select, extension into arithmetic, scf.if, yield...
    }
  }
  return true;
}

} // namespace

std::optional<int64_t> maxTripCount(scf::ForOp loop) {
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (!step || *step <= 0)
    return std::nullopt;
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
  if (lb && ub) {
    // Bounds of at most 2^40 in magnitude (analyzeLoop's limit for the
    // parts it builds); wider ones give no bound here.
    constexpr int64_t kBig = int64_t(1) << 40;
    if (std::abs(*lb) > kBig || std::abs(*ub) > kBig)
      return std::nullopt;
    return *ub <= *lb ? 0 : (*ub - *lb + *step - 1) / *step;
  }
  // loop_unroll's remainder loop: lb = lb0 + (n - n % F) * step, where n is
  // the trip count of the original loop; it runs n % F < F iterations.
  auto add = loop.getLowerBound().getDefiningOp<arith::AddIOp>();
  if (!add)
    return std::nullopt;
  for (Value side : {add.getLhs(), add.getRhs()}) {
    auto mul = side.getDefiningOp<arith::MulIOp>();
    if (!mul)
      continue;
    for (Value factor : {mul.getLhs(), mul.getRhs()}) {
      auto sub = factor.getDefiningOp<arith::SubIOp>();
      if (!sub)
        continue;
      auto rem = sub.getRhs().getDefiningOp<arith::RemSIOp>();
      if (!rem || rem.getLhs() != sub.getLhs())
        continue;
      std::optional<int64_t> f = getConstantIntValue(rem.getRhs());
      if (f && *f > 0)
        return *f - 1;
    }
  }
  return std::nullopt;
}

ProfitDecision decideProfit(scf::ForOp loop, const SplitPlan &plan,
                            const ProfitOptions &options) {
  ProfitDecision decision;
  if (!options.enabled)
    return decision;
  std::optional<int64_t> stages = stagesAttr(loop);
  bool dotLoop = hasLoadFedDot(loop);
  decision.pipelined = dotLoop && (!stages || *stages > 1);

  // 1. Only load/store masks against a dot.
  if (dotLoop && llvm::all_of(plan.comparisons, [](const Comparison &c) {
        return onlyMasksMemory(c.cmp->getResult(0));
      })) {
    decision.declineReason =
        "the folded comparisons only mask loads and stores of a loop with "
        "tt.dot: the split would save their predicates and add a body copy "
        "and a software-pipeline prologue and drain per part";
    return decision;
  }

  // 2. A short unmasked part, known from the bounds.
  if (std::optional<int64_t> trips = maxTripCount(loop)) {
    int64_t unmasked = *trips - (plan.midPart ? 1 : 0);
    if (unmasked < 0 || uint64_t(unmasked) < options.minUnmaskedTrips) {
      decision.declineReason =
          "the unmasked parts run fewer than min-unmasked-trips iterations "
          "(constant bounds, or the remainder loop of loop_unroll)";
      return decision;
    }
  }

  // 3. Split; one pipeline drain.
  decision.mainPart = 0; // low when emitted, else the first part emitted
  if (!plan.lowPart && plan.highPart)
    decision.mainPart = plan.midPart ? 1 : 0;
  return decision;
}

} // namespace mlir::triton_ext::loop_split
