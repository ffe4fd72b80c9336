//===- @@camel@@Dialect.cpp - The @@dialect@@ dialect ===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Scaffolded by `triton-ext new dialect @@camel@@`: the dialect class, the
// verifier and folder of the op
// `@@dialect@@.@@op@@`,
// and the inliner interface that lets Triton's inliner inline @triton.jit
// helpers holding the dialect's ops.
// Registered with Triton by TRITON_EXT_REGISTER_DIALECT (last line), which
// `ir.extend_dialects_with` reads when triton_ext loads the library.
//
//===----------------------------------------------------------------------===//

#include "@@camel@@Dialect.h"

#include "triton-ext/PassInfra.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Transforms/InliningUtils.h"

using namespace mlir;
using namespace mlir::triton_ext::@@snake@@;

#include "@@camel@@Dialect.cpp.inc"

namespace {
/// The ops are pure and refer to nothing outside their operands, so inlining
/// a function that holds them is always legal.
struct @@camel@@InlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void @@camel@@Dialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "@@camel@@Ops.cpp.inc"
      >();
  addInterfaces<@@camel@@InlinerInterface>();
}

//===----------------------------------------------------------------------===//
// ScaleOp
//===----------------------------------------------------------------------===//

LogicalResult ScaleOp::verify() {
  auto elementType =
      cast<IntegerType>(getElementTypeOrSelf(getInput().getType()));
  unsigned width = elementType.getWidth();
  // I64Attr hands the value back as uint64_t; the factor is signed.
  int64_t factor = static_cast<int64_t>(getFactor());
  APInt value(64, static_cast<uint64_t>(factor), /*isSigned=*/true);
  // Any bit pattern of the element type is a valid factor, whether the user
  // reads it as signed (-2^(w-1)..2^(w-1)-1) or unsigned (0..2^w-1).
  bool fits = width >= 64 || value.isSignedIntN(width) ||
              (factor >= 0 && value.isIntN(width));
  if (!fits)
    return emitOpError() << "factor " << factor << " does not fit "
                         << elementType << " (expected -2^" << width - 1
                         << " <= factor <= 2^" << width << " - 1)";
  return success();
}

OpFoldResult ScaleOp::fold(FoldAdaptor) {
  // Multiplying by one is the identity.
  if (getFactor() == 1)
    return getInput();
  return {};
}

#define GET_OP_CLASSES
#include "@@camel@@Ops.cpp.inc"

TRITON_EXT_REGISTER_DIALECT(@@dialect@@, @@camel@@Dialect);
