//===- MaskedLoadPoison.cpp - Poison masked lanes of tt.load ---------------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// A `tt.load` with a mask and without `other` leaves its masked lanes
// undefined; in practice they often hold zeros, so code that reads them
// (a reduction over a padded tile, a strided view whose mask is off by one)
// silently computes plausible numbers. This pass gives such loads an `other`
// that cannot go unnoticed: a quiet NaN for floats and, with `poison-ints`,
// the most negative value of the type for integers (GitHub issue 7).
//
// Legality: without `other` the masked lanes may hold any value, so choosing
// one refines the program; lanes under the mask are untouched.
//
// Dot operands (unless `dot-operands`): a load whose value reaches an A or B
// operand of `tt.dot` / `tt.dot_scaled` (through elementwise ops, `tt.trans`,
// `tt.reshape`, `tt.fp_to_fp`) keeps no `other`. With a non-zero `other` the
// software pipeliner cannot let the async copy fill the shared buffer that
// wgmma reads: it loads the tile into registers, selects, writes it back to
// shared memory and waits for every wgmma (`pendings = 0`); the H200 GEMM
// with all sanitizers ran 80% slower. What is lost: masked lanes of a row or
// column mask only reach result lanes that the store's mask leaves unwritten
// in a correct kernel (nan_inf_check counts only stored lanes); a K-tail mask
// without `other` (reading zeros that Triton does not promise) is no longer
// shown. `dot-operands=true` restores the poison at that cost.
//
// Declines: loads without a mask, loads that already have `other`, pointer
// and i1 element types, float formats without a NaN (no value is more wrong
// than another), integer loads when `poison-ints` is false, dot operands
// (above).
//
//===----------------------------------------------------------------------===//

#include "triton-ext/PassInfra.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/Pass.h"
#include "triton/Dialect/Triton/IR/Dialect.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "triton-ext-masked-load-poison"

namespace mlir::triton_ext {
#define GEN_PASS_DECL_TRITONEXTMASKEDLOADPOISON
#define GEN_PASS_DEF_TRITONEXTMASKEDLOADPOISON
#include "Passes.h.inc"
} // namespace mlir::triton_ext

using namespace mlir;

namespace {

/// Values visited when looking for a dot behind a load.
constexpr size_t kMaxVisited = 64;

class MaskedLoadPoisonPass
    : public mlir::triton_ext::impl::TritonExtMaskedLoadPoisonBase<
          MaskedLoadPoisonPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    OpBuilder builder(&getContext());
    getOperation().walk([&](triton::LoadOp load) {
      if (!load.getMask() || load.getOther())
        return;
      if (!dotOperands && feedsDotOperand(load.getResult())) {
        LLVM_DEBUG(llvm::dbgs() << "dot operand, not poisoned: " << load
                                << "\n");
        return;
      }
      std::optional<TypedAttr> poison = poisonFor(builder, load.getType());
      if (!poison) {
        LLVM_DEBUG(llvm::dbgs() << "no poison for " << load.getType() << "\n");
        return;
      }
      builder.setInsertionPoint(load);
      Value other =
          arith::ConstantOp::create(builder, load.getLoc(), *poison);
      load.getOtherMutable().assign(other);
    });
  }

private:
  /// True if `value` reaches operand A or B of a dot through ops that move or
  /// convert its elements.
  static bool feedsDotOperand(Value value) {
    SmallVector<Value> work{value};
    DenseSet<Value> seen;
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (!seen.insert(v).second || seen.size() > kMaxVisited)
        continue;
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        if (isa<triton::DotOp, triton::DotScaledOp>(user) &&
            use.getOperandNumber() < 2)
          return true;
        bool moves = user->hasTrait<OpTrait::Elementwise>() ||
                     isa<triton::TransOp, triton::ReshapeOp,
                         triton::FpToFpOp>(user);
        if (moves && user->getNumResults() == 1)
          work.push_back(user->getResult(0));
      }
    }
    return false;
  }

  /// The poison constant (splat for tensors) for a load of `type`.
  std::optional<TypedAttr> poisonFor(OpBuilder &builder, Type type) const {
    Type elt = getElementTypeOrSelf(type);
    TypedAttr scalar;
    if (auto floatTy = dyn_cast<FloatType>(elt)) {
      // Some narrow formats (fp4/fp6, e8m0 variants) have no NaN.
      if (!APFloat::semanticsHasNaN(floatTy.getFloatSemantics()))
        return std::nullopt;
      scalar = builder.getFloatAttr(
          floatTy, APFloat::getQNaN(floatTy.getFloatSemantics()));
    } else if (auto intTy = dyn_cast<IntegerType>(elt)) {
      if (!poisonInts || intTy.getWidth() < 2)
        return std::nullopt;
      scalar = builder.getIntegerAttr(
          intTy, APInt::getSignedMinValue(intTy.getWidth()));
    } else {
      return std::nullopt;
    }
    if (auto shaped = dyn_cast<ShapedType>(type))
      return DenseElementsAttr::get(shaped, scalar);
    return scalar;
  }
};

} // namespace

TRITON_EXT_REGISTER_PASS(masked_load_poison, MaskedLoadPoisonPass);
