//===- UnrollDotLoops.cpp - Unroll innermost dot loops -------------------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Third-party GEMMs and attentions rarely ask for unrolling, yet on Hopper a
// dot loop with two bodies per iteration lets the scheduler overlap one
// k-block's loads and address math with the other's wgmma (the loop-unroll
// probe, benchmarks/loop_unroll_probe_gpu.py: 1.03-1.16x on 7 of 27 real dot
// loops, slower on 8: a transparent-mode candidate, timed per kernel). Triton
// already has the transformation: its loop_unroll pass, last in make_ttir,
// unrolls every loop carrying `tt.loop_unroll_factor`. This pass only writes
// that attribute, on a guarded copy of the loop.
//
// Why the unrolled loop computes what the original computes, when the guard
// holds. Triton's unroller (MLIR's loopUnrollByFactor) builds, in the
// induction variable's type,
//   T   = (ub - lb + step - 1) /u step          trip count
//   ubU = lb + (T - T mod F) * step             main loop bound
//   for i = lb to ubU step F * step { body(i); body(i + step); ... }
//   for i = ubU to ub step step { body(i) }     remainder (tt.num_stages = 1)
// The main loop runs body(lb + m * step) for m < T - T mod F in order, the
// remainder runs the rest: the original iterations, in the original order,
// with the same operations, so every value and every memory access is the
// original's. That holds only if nothing above wraps. With the guard
//   0 < step <= MAX / F  and  0 <= lb <= ub <= MAX - F * step
// (MAX the type's signed maximum): ub - lb + step - 1 is in [0, MAX], so the
// unsigned division is the signed ceiling division and T is the true trip
// count; T' * step <= ub - lb + step - 1, so ubU <= ub + step - 1 <= MAX;
// F * step <= MAX; every induction value of either loop, and every
// i + k * step of the copies, lies in [lb, ub + step - 1]. Without it the
// unroller goes wrong on ordinary inputs, not only at the limits: on a
// reversed range (ub < lb) `ub - lb + step - 1` is negative, the unsigned
// division makes T about 2^32 / step, ubU wraps below ub, and the remainder
// loop runs iterations the original never ran (for lb = 0, ub = -100,
// step = 64: one iteration at i = -128). So the loop is versioned: the
// unrolled copy under the guard, the original loop otherwise.
//
// Only innermost loops that hold a dot and a load are unrolled: the probe
// found dotless loops (reductions, decode attention by tl.sum) rarely faster
// and factor 4 on one of them changed a result in the last bit. Loops the
// author gave an unroll factor, unsigned loops (the guard reasons about
// signed bounds) and warp-specialized loops (the partitioner expects the
// loop as written) are left alone. The original copy is marked
// `tt.loop_unroll_factor = 1` (Triton's unroller skips factors <= 1), so a
// second run of the pass changes nothing.
//
//===----------------------------------------------------------------------===//

#include "triton-ext/LoopVersioning.h"
#include "triton-ext/PassInfra.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"
#include "triton/Dialect/Triton/IR/Dialect.h"
#include "triton/Dialect/Triton/IR/OpInterfaces.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "triton-ext-unroll-dot-loops"

namespace mlir::triton_ext {
#define GEN_PASS_DECL_TRITONEXTUNROLLDOTLOOPS
#define GEN_PASS_DEF_TRITONEXTUNROLLDOTLOOPS
#include "Passes.h.inc"
} // namespace mlir::triton_ext

using namespace mlir;
namespace tt = mlir::triton;

namespace {

/// The loop attribute Triton's loop_unroll reads (tl.range's
/// loop_unroll_factor).
constexpr StringLiteral kUnrollFactor = "tt.loop_unroll_factor";
/// The loop attribute tl.range(..., warp_specialize=True) writes.
constexpr StringLiteral kWarpSpecialize = "tt.warp_specialize";

/// Why `loop` is left alone, or an empty string when it is unrolled.
StringRef declineReason(scf::ForOp loop) {
  if (loop->hasAttr(kUnrollFactor))
    return "the loop has tt.loop_unroll_factor already (the author's choice "
           "wins)";
  if (loop->hasAttr(kWarpSpecialize))
    return "the loop is warp-specialized";
  if (loop.getUnsignedCmp())
    return "the loop compares its bounds unsigned";
  if (!isa<IntegerType>(loop.getInductionVar().getType()))
    return "the loop's induction variable is not an integer (the guard needs "
           "its width)";
  bool nested = false, dot = false, load = false;
  loop.getBody()->walk([&](Operation *op) {
    nested |= isa<LoopLikeOpInterface>(op);
    dot |= isa<tt::DotOpInterface>(op);
    load |= isa<tt::LoadOp, tt::DescriptorLoadOp>(op);
  });
  if (nested)
    return "the loop is not innermost";
  if (!dot)
    return "the loop has no dot";
  if (!load)
    return "the loop loads nothing";
  return "";
}

/// Replaces `loop` by `if (guard) { loop, unrolled } else { loop }`. The guard
/// is the shared bounds guard (`0 < step <= MAX / factor`, both bounds in
/// `[0, MAX - factor * step]`) and `lb <= ub`: together, `0 <= lb <= ub <=
/// MAX - factor * step` (see the file comment).
void unrollGuarded(scf::ForOp loop, int64_t factor) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Value forward = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                                        loop.getLowerBound(),
                                        loop.getUpperBound());
  Value guard = arith::AndIOp::create(
      b, loc, mlir::triton_ext::loopBoundsGuard(b, loc, loop, factor),
      forward);
  mlir::triton_ext::versionLoop(loop, guard, kUnrollFactor, factor,
                                /*originalValue=*/1);
}

/// True when the body of `loop` holds a dot (the loops the remarks are about).
bool hasDot(scf::ForOp loop) {
  bool dot = false;
  loop.getBody()->walk([&](tt::DotOpInterface) { dot = true; });
  return dot;
}

class UnrollDotLoopsPass
    : public mlir::triton_ext::impl::TritonExtUnrollDotLoopsBase<
          UnrollDotLoopsPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t copies = factor.getValue();
    if (copies < 2 || copies > 8) {
      module.emitError() << "unroll_dot_loops: factor must be in [2, 8], got "
                         << copies;
      return signalPassFailure();
    }
    SmallVector<scf::ForOp> loops;
    module.walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) {
      StringRef reason = declineReason(loop);
      if (reason.empty()) {
        unrollGuarded(loop, copies);
        continue;
      }
      LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": not unrolled (" << reason
                              << "): " << loop.getLoc() << "\n");
      // Every loop without a dot would get one; only the dot loops' say
      // something.
      if (remarks && hasDot(loop))
        loop.emitRemark() << "unroll_dot_loops: not applied: " << reason;
    }
  }
};

} // namespace

TRITON_EXT_REGISTER_PASS(unroll_dot_loops, UnrollDotLoopsPass);
