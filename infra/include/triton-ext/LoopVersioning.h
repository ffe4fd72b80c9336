//===- LoopVersioning.h - A loop and its copy under a guard ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Passes that ask one of Triton's loop transformations for a loop by writing
// an attribute on it (`tt.num_stages` for the software pipeliner,
// `tt.loop_unroll_factor` for loop_unroll) share a hazard: the
// transformation evaluates `lb + k * step`, `ub - k * step` or
// `ub + k * step` for small k in the induction variable's type, which wraps
// near the type's limits. They version the loop instead: the copy with the
// attribute runs under a guard on the bounds, the original loop otherwise.
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_LOOPVERSIONING_H
#define TRITON_EXT_LOOPVERSIONING_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <cstdint>

namespace mlir::triton_ext {

/// `0 < step <= MAX / n` and both bounds of `loop` in `[0, MAX - n * step]`,
/// in the induction variable's (integer) type, built at `b`'s insertion
/// point: no `lb + k * step`, `ub - k * step` or `ub + k * step` with
/// `k <= n` wraps.
inline Value loopBoundsGuard(OpBuilder &b, Location loc, scf::ForOp loop,
                             int64_t n) {
  Type type = loop.getInductionVar().getType();
  unsigned width = type.getIntOrFloatBitWidth();
  APInt max = APInt::getSignedMaxValue(width);
  auto constant = [&](const APInt &v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, v));
  };
  Value zero = constant(APInt(width, 0));
  Value stepLimit = constant(max.sdiv(APInt(width, n)));
  Value steps =
      arith::MulIOp::create(b, loc, loop.getStep(), constant(APInt(width, n)));
  // It may wrap when the step is out of range, but the checks are and-ed,
  // and the step checks are then false.
  Value boundLimit = arith::SubIOp::create(b, loc, constant(max), steps);
  using P = arith::CmpIPredicate;
  Value checks[] = {
      arith::CmpIOp::create(b, loc, P::sgt, loop.getStep(), zero),
      arith::CmpIOp::create(b, loc, P::sle, loop.getStep(), stepLimit),
      arith::CmpIOp::create(b, loc, P::sge, loop.getLowerBound(), zero),
      arith::CmpIOp::create(b, loc, P::sge, loop.getUpperBound(), zero),
      arith::CmpIOp::create(b, loc, P::sle, loop.getLowerBound(), boundLimit),
      arith::CmpIOp::create(b, loc, P::sle, loop.getUpperBound(), boundLimit),
  };
  Value all = checks[0];
  for (Value check : ArrayRef<Value>(checks).drop_front())
    all = arith::AndIOp::create(b, loc, all, check);
  return all;
}

/// Replaces `loop` by `scf.if %guard { copy } else { loop }`: the copy gets
/// the i32 attribute `attr = copyValue`, the original loop `attr =
/// originalValue` (which also marks it decided, so a pass run again leaves it
/// alone). `guard` must dominate `loop`. Returns the copy.
inline scf::ForOp versionLoop(scf::ForOp loop, Value guard, StringRef attr,
                              int64_t copyValue, int64_t originalValue) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  auto branch = scf::IfOp::create(b, loc, loop.getResultTypes(), guard,
                                  /*addThenBlock=*/true,
                                  /*addElseBlock=*/true);
  OpBuilder thenBuilder = branch.getThenBodyBuilder();
  IRMapping mapping;
  auto copy = cast<scf::ForOp>(thenBuilder.clone(*loop, mapping));
  copy->setAttr(attr, b.getI32IntegerAttr(copyValue));
  scf::YieldOp::create(thenBuilder, loc, copy.getResults());

  loop->replaceAllUsesWith(branch.getResults());
  loop->setAttr(attr, b.getI32IntegerAttr(originalValue));
  Block *elseBlock = branch.elseBlock();
  loop->moveBefore(elseBlock, elseBlock->end());
  OpBuilder elseBuilder = OpBuilder::atBlockEnd(elseBlock);
  scf::YieldOp::create(elseBuilder, loc, loop.getResults());
  return copy;
}

} // namespace mlir::triton_ext

#endif // TRITON_EXT_LOOPVERSIONING_H
