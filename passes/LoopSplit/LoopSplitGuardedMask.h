//===- LoopSplitGuardedMask.h - A mask under a branch, without the branch -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
// The scalar-form causal attention applies its mask only on the diagonal:
//
//   if start_n >= diag:
//       qk = tl.where(offs_m[:, None] >= start_n + offs_n[None, :], qk, -inf)
//
// loop_split folds the `if` in its low part; the part that keeps the loop's
// own code (where the diagonal runs, and every iteration when the run-time
// guard fails) keeps the branch. On the H200 that branch cost the kernel 16
// registers and 4-5% against the hand-split kernel at head dim 64 (issue 28).
// absorbGuardedMasks turns such a branch into straight-line code.
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_LOOPSPLIT_GUARDEDMASK_H
#define TRITON_EXT_LOOPSPLIT_GUARDEDMASK_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::triton_ext::loop_split {

/// In `part` (a loop the pass emits that keeps the loop's comparisons), each
/// `scf.if %c` directly in the body, `%c` one of `conditions`, of the form
///
///   %r = scf.if %c { <pure ops>; %m = arith.cmpi p, %a, %b
///                    %w = arith.select %m, %x, %y; scf.yield %w }
///        else      { scf.yield %x }
///
/// (or `select %m, %y, %x`; the pure ops neither dots nor ops with regions,
/// such as reductions) becomes its then branch, run unconditionally, with
/// one operand of `%m` replaced by `select(%c, operand, e)`: `e` the extreme
/// value for which `p` gives the select's `%x` side on every element whatever
/// the other operand holds (`sge`: a = INT_MAX or b = INT_MIN, and so on for
/// the signed and unsigned orders; `eq` and `ne` have none and are left
/// alone). The select goes on the loop-invariant operand where one is (else
/// the smaller), in its narrowest form, before the `tt.broadcast` and
/// `tt.expand_dims` that shape it. Returns how many branches it removed.
unsigned absorbGuardedMasks(scf::ForOp part, ArrayRef<Value> conditions,
                            RewriterBase &rewriter);

} // namespace mlir::triton_ext::loop_split

#endif // TRITON_EXT_LOOPSPLIT_GUARDEDMASK_H
