//===- RangeFactsBuilder.cpp - Builder op for triton_ext_range ------------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Triton binds this as `builder.create_assume_range(values)`, which
// `triton_ext_range.assume_range` (triton_ext_range/__init__.py) calls from
// @triton.jit code. `values` is [result slot, x, lo, hi] (the
// binding prepends the slot and returns it to Python): x is the integer value (scalar or
// tensor), lo and hi are integer constants (Triton's builder only passes
// mlir::Value, so the Python side materializes the constexpr bounds as
// `arith.constant`). The callback reads the constants, erases them when nothing
// else uses them, creates the op and stores its result in the slot.
//
// The op is created by name, not through the AssumeRangeOp class: that class
// lives in the dialect plugin (libTritonExtRangeFactsIR) with hidden visibility,
// and a copy compiled here would have a different TypeID. Creation by name
// needs the dialect loaded in the context, which the Python side guarantees by
// loading the dialect plugin first; the check below turns a missing dialect
// into a Python exception instead of an unregistered op.
//
// Errors throw std::invalid_argument, which Triton's binding turns into a
// Python ValueError; the Python side validates first, so these are defensive.
//
//===----------------------------------------------------------------------===//

#include "triton-ext/PassInfra.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OperationSupport.h"

#include <stdexcept>
#include <string>

namespace {
using namespace mlir;

constexpr const char *kOpName = "triton_ext_range.assume_range";

/// The value of an integer constant, or failure.
FailureOr<APInt> constantBound(Value value) {
  APInt bound;
  if (!value || !matchPattern(value, m_ConstantInt(&bound)))
    return failure();
  return bound;
}

void createAssumeRange(TritonOpBuilder &self, std::vector<Value> &values) {
  // Triton 3.9.0's binding puts a slot for the result in front of the
  // arguments: values = [result slot, x, lo, hi]; the slot comes back to
  // Python as the return value of create_assume_range.
  if (values.size() != 4 || values[0])
    throw std::invalid_argument(
        "create_assume_range expects [result slot, x, lo, hi], got " +
        std::to_string(values.size()) + " values" +
        (values.empty() || values[0] ? "" : " with an empty first slot"));
  Value input = values[1];
  auto elementType =
      dyn_cast<IntegerType>(getElementTypeOrSelf(input.getType()));
  if (!elementType)
    throw std::invalid_argument(
        "create_assume_range: x must be an integer or a tensor of integers");
  FailureOr<APInt> lo = constantBound(values[2]);
  FailureOr<APInt> hi = constantBound(values[3]);
  if (failed(lo) || failed(hi))
    throw std::invalid_argument(
        "create_assume_range: lo and hi must be integer constants");

  OpBuilder &builder = self.getBuilder();
  MLIRContext *context = builder.getContext();
  OperationName name(kOpName, context);
  if (!name.isRegistered())
    throw std::invalid_argument(
        "create_assume_range: dialect triton_ext_range is not loaded in this "
        "context; load libTritonExtRangeFactsIR (triton_ext.enable('range_facts_lower')) "
        "before compiling");

  // The bounds are stored in the element type; sign extension or truncation
  // from the constants' i64 keeps the value because the Python side checked
  // that both fit the element type.
  unsigned width = elementType.getWidth();
  OperationState state(self.getLastLoc(), name);
  state.addOperands(input);
  state.addTypes(input.getType());
  Operation *op = builder.create(state);
  // setAttr stores inherent attributes in the op's properties.
  op->setAttr("lo", IntegerAttr::get(elementType, lo->sextOrTrunc(width)));
  op->setAttr("hi", IntegerAttr::get(elementType, hi->sextOrTrunc(width)));

  // The constants only carried the bounds; drop them if that was their only
  // use so the IR is what a hand-written op would give.
  for (Value bound : {values[2], values[3]})
    if (Operation *def = bound.getDefiningOp())
      if (def->use_empty())
        def->erase();
  values[0] = op->getResult(0);
}
} // namespace

TRITON_EXT_REGISTER_OP(assume_range, createAssumeRange);
