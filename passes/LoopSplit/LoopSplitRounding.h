//===- LoopSplitRounding.h - Splits that would change floating results -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
// A split must not change a result, bit for bit. Folding a mask removes the
// `arith.select` it fed; when that select stood between a multiply and an
// add, the backends may now contract the two into one fused multiply-add
// (Triton compiles with fp fusion on by default: LLVM's fp-contract=fast and
// ptxas's fmad), which rounds once where the masked loop rounded twice.
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_LOOPSPLIT_ROUNDING_H
#define TRITON_EXT_LOOPSPLIT_ROUNDING_H

#include "LoopSplitAnalysis.h"

namespace mlir::triton_ext::loop_split {

/// What the pass does where a split would let a multiply contract into an add
/// (the `rounding` option).
enum class Rounding {
  /// Leave the loop alone.
  Decline,
  /// Split; in the parts where the mask folds, the multiply's value reaches
  /// the add through an inline PTX `mul.rn` (which neither LLVM nor ptxas
  /// fuses, and which does not flush subnormals): the same roundings as the
  /// masked loop. CUDA only.
  MulRn,
  /// Split and let the backends contract (what a hand-split kernel gets).
  Contract,
};

/// The first op of `loop`'s body that a folded comparison of `plan` controls
/// (an `arith.select`, or the terminator of an `scf.if` region) and that
/// separates an `arith.mulf` from an `arith.addf` / `arith.subf` (or a
/// reduction or scan that adds), looking through ops that only move values
/// between registers and shapes; null when there is none.
Operation *findContractionHazard(scf::ForOp loop, const SplitPlan &plan);

/// Whether keepRounding can apply to every hazard of `loop`: its
/// multiplies are f32 or f64 tensors inside the loop.
bool canKeepRounding(scf::ForOp loop, const SplitPlan &plan);

/// For `Rounding::MulRn`, in a part (`body`, a clone of the loop) where
/// the comparisons fold: routes the multiply of every hazard (found on
/// `loop`, mapped into the part by `inPart`) through a PTX `mul.rn`, so
/// folding the boundary leaves the roundings as they were. Call only
/// where canKeepRounding holds.
void keepRounding(scf::ForOp loop, const SplitPlan &plan,
                           function_ref<Operation *(Operation *)> inPart,
                           RewriterBase &rewriter);

/// The scales `s` of the row maxima scaleAfterMax may rewrite: each a
/// `tt.reduce` whose combiner is one `maxnumf`/`maximumf`, of `x * splat(s)`
/// (reached through layout conversions and through the selects and `scf.if`
/// results a folded comparison of `plan` controls), `s` an f32/f64 scalar
/// defined outside `loop`. Empty when there is none.
SmallVector<Value> rowMaximumScales(scf::ForOp loop, const SplitPlan &plan);

/// In a part (a clone of the loop) whose comparisons are constants already:
/// each row maximum of `x * s` with `s` in `scales` becomes `mul.rn(max(x),
/// s)`. The same bits when `s` is positive and finite: `x -> round(x * s)` is
/// then monotone (and maps NaN to NaN only), so the maximum of the rounded
/// products is the rounded product of the maximum. The caller's run-time
/// guard must ensure that range.
void scaleAfterMax(scf::ForOp part, ArrayRef<Value> scales,
                   RewriterBase &rewriter);

} // namespace mlir::triton_ext::loop_split

#endif // TRITON_EXT_LOOPSPLIT_ROUNDING_H
