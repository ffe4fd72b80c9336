//===- RangeFactsLower.cpp - Remove triton_ext_range facts ----------------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// `range_facts_lower` replaces each `triton_ext_range.assume_range %x` by %x.
// Legal because the op returns its operand unchanged: the fact only restricts
// which programs are well defined, so dropping it keeps every defined
// execution's result. It runs at the end of the ttir stage, after the passes
// that read facts and before convert-triton-to-tritongpu, which would reject
// an op of an unknown dialect with a tensor result. It never declines.
//
//===----------------------------------------------------------------------===//

#include "RangeFactsIRDialect.h"

#include "triton-ext/PassInfra.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "triton-ext-range-facts-lower"

namespace mlir::triton_ext {
#define GEN_PASS_DECL_TRITONEXTRANGEFACTSLOWER
#define GEN_PASS_DEF_TRITONEXTRANGEFACTSLOWER
#include "Passes.h.inc"
} // namespace mlir::triton_ext

namespace {
using namespace mlir;
using mlir::triton_ext::range::AssumeRangeOp;

class RangeFactsLowerPass
    : public mlir::triton_ext::impl::TritonExtRangeFactsLowerBase<
          RangeFactsLowerPass> {
public:
  void runOnOperation() override {
    SmallVector<AssumeRangeOp> facts;
    getOperation()->walk([&](AssumeRangeOp op) { facts.push_back(op); });
    for (AssumeRangeOp op : facts) {
      LLVM_DEBUG(llvm::dbgs() << "lowering " << op << "\n");
      op.getResult().replaceAllUsesWith(op.getInput());
      op->erase();
    }
  }
};
} // namespace

TRITON_EXT_REGISTER_PASS(range_facts_lower, RangeFactsLowerPass);
