//===- @@lcamel@@Builder.cpp - Builder op for @@dialect@@.@@op@@ ===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Scaffolded by `triton-ext new language @@lcamel@@`. Triton binds this as
// `builder.create_@@opfn@@(values)`, which `@@package@@.@@op@@`
// (@@package@@/__init__.py) calls from @triton.jit code. Triton 3.9.0's
// binding puts a result slot in front of the arguments and returns it to
// Python: values = [result slot, x, factor]. Only mlir::Values cross the
// binding, so the Python side passes the compile-time factor as an i64
// `arith.constant`; the callback reads it, erases it when nothing else uses
// it, creates the op and stores its result in the slot.
//
// The op is created by name, not through the ScaleOp class: that class lives
// in the dialect plugin (libTritonExt@@dcamel@@) with hidden visibility, and a
// copy compiled here would have another TypeID. Creating it by name needs the
// dialect loaded in the context, which the Python side guarantees by loading
// the dialect plugin first; the check below turns a missing dialect into a
// Python exception instead of an unregistered op.
//
// Errors throw std::invalid_argument, which Triton's binding turns into a
// Python ValueError (a compile error at the caller's line); the Python side
// validates first, so these are defensive.
//
//===----------------------------------------------------------------------===//

#include "triton-ext/PassInfra.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OperationSupport.h"

#include <stdexcept>
#include <string>

namespace {
using namespace mlir;

constexpr const char *kOpName = "@@dialect@@.@@op@@";

void createScale(TritonOpBuilder &self, std::vector<Value> &values) {
  if (values.size() != 3 || values[0])
    throw std::invalid_argument(
        "create_@@opfn@@ expects [result slot, x, factor], got " +
        std::to_string(values.size()) + " values" +
        (values.empty() || !values[0] ? "" : " with a filled result slot"));
  Value input = values[1];
  if (!input || !isa<IntegerType>(getElementTypeOrSelf(input.getType())))
    throw std::invalid_argument(
        "create_@@opfn@@: x must be an integer or a tensor of integers");
  APInt factor;
  if (!values[2] || !matchPattern(values[2], m_ConstantInt(&factor)))
    throw std::invalid_argument(
        "create_@@opfn@@: factor must be an integer constant");

  OpBuilder &builder = self.getBuilder();
  OperationName name(kOpName, builder.getContext());
  if (!name.isRegistered())
    throw std::invalid_argument(
        "create_@@opfn@@: dialect @@dialect@@ is not loaded in this "
        "context; load libTritonExt@@dcamel@@ "
        "(triton_ext.enable('@@lower_pass@@')) before compiling");

  OperationState state(self.getLastLoc(), name);
  state.addOperands(input);
  state.addTypes(input.getType());
  Operation *op = builder.create(state);
  // setAttr stores an inherent attribute in the op's properties.
  op->setAttr("factor", builder.getI64IntegerAttr(factor.getSExtValue()));

  // The constant only carried the factor; drop it if that was its only use so
  // the IR is what a hand-written op would give.
  if (Operation *def = values[2].getDefiningOp())
    if (def->use_empty())
      def->erase();
  values[0] = op->getResult(0);
}
} // namespace

TRITON_EXT_REGISTER_OP(@@opfn@@, createScale);
