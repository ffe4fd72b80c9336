//===- @@camel@@Lower.cpp - Lower @@dialect@@ to arith ===//
//
// SPDX-License-Identifier: Apache-2.0
//
// `@@lower_pass@@` replaces each `@@dialect@@.@@op@@ %x, K` by
// `arith.muli %x, K`. Legal because the op is defined as wrapping
// multiplication by K truncated to the element type, which is what
// `arith.muli` without overflow flags computes. It runs at the end of the
// ttir stage (registry.yaml), after the passes that may read the op and before
// convert-triton-to-tritongpu, which would reject an op of an unknown dialect.
// It never declines.
//
//===----------------------------------------------------------------------===//

#include "@@camel@@Dialect.h"

#include "triton-ext/PassInfra.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "@@lower_flag@@"

namespace mlir::triton_ext {
#define GEN_PASS_DECL_@@lower_macro@@
#define GEN_PASS_DEF_@@lower_macro@@
#include "Passes.h.inc"
} // namespace mlir::triton_ext

namespace {
using namespace mlir;
using mlir::triton_ext::@@snake@@::ScaleOp;

/// `factor` as an arith.constant of `type`: the element type truncated to its
/// width (the verifier checked that it fits), splat for a tensor.
Value materializeFactor(OpBuilder &builder, Location loc, Type type,
                        int64_t factor) {
  auto elementType = cast<IntegerType>(getElementTypeOrSelf(type));
  APInt value = APInt(64, static_cast<uint64_t>(factor), /*isSigned=*/true)
                    .sextOrTrunc(elementType.getWidth());
  TypedAttr attr = IntegerAttr::get(elementType, value);
  if (auto tensorType = dyn_cast<RankedTensorType>(type))
    attr = DenseElementsAttr::get(tensorType, attr);
  return arith::ConstantOp::create(builder, loc, attr);
}

class @@camel@@LowerPass
    : public mlir::triton_ext::impl::@@lower_record@@Base<@@camel@@LowerPass> {
public:
  void runOnOperation() override {
    SmallVector<ScaleOp> ops;
    getOperation()->walk([&](ScaleOp op) { ops.push_back(op); });
    for (ScaleOp op : ops) {
      LLVM_DEBUG(llvm::dbgs() << "lowering " << op << "\n");
      OpBuilder builder(op);
      Value factor =
          materializeFactor(builder, op.getLoc(), op.getType(),
                            static_cast<int64_t>(op.getFactor()));
      Value product =
          arith::MulIOp::create(builder, op.getLoc(), op.getInput(), factor);
      op.getResult().replaceAllUsesWith(product);
      op->erase();
    }
  }
};
} // namespace

TRITON_EXT_REGISTER_PASS(@@lower_pass@@, @@camel@@LowerPass);
