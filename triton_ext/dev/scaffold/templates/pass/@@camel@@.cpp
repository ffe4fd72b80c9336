//===- @@camel@@.cpp - Tag functions with their loop count -------------------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Scaffolded by `triton-ext new pass @@camel@@`. The pass counts the `scf.for`
// ops in each `tt.func` and records the count in the discardable attribute
// `triton_ext.@@snake@@.loops`. Replace `runOnOperation` with your
// transformation; keep the registration line at the end.
//
// Legal on any module: a discardable attribute in a dialect namespace that is
// not loaded changes no semantics, and later passes and the LLVM translation
// ignore it. Declines (leaves a function untouched) when it holds fewer than
// `min-loops` loops.
//
//===----------------------------------------------------------------------===//

#include "triton-ext/PassInfra.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/Pass.h"
#include "triton/Dialect/Triton/IR/Dialect.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "@@flag@@"

namespace mlir::triton_ext {
#define GEN_PASS_DECL_@@upper@@
#define GEN_PASS_DEF_@@upper@@
#include "Passes.h.inc"
} // namespace mlir::triton_ext

using namespace mlir;

namespace {

/// Number of scf.for ops nested anywhere in `func`.
unsigned countLoops(triton::FuncOp func) {
  unsigned count = 0;
  func.walk([&](scf::ForOp) { ++count; });
  return count;
}

class @@camel@@Pass
    : public triton_ext::impl::@@record@@Base<@@camel@@Pass> {
public:
  using @@record@@Base::@@record@@Base;

  void runOnOperation() override {
    Builder builder(&getContext());
    getOperation().walk([&](triton::FuncOp func) {
      unsigned loops = countLoops(func);
      if (loops < minLoops) {
        LLVM_DEBUG(llvm::dbgs() << "[@@flag@@] skip " << func.getName() << ": "
                                << loops << " loop(s) < min-loops\n");
        return;
      }
      func->setAttr("triton_ext.@@snake@@.loops",
                    builder.getI64IntegerAttr(loops));
    });
  }
};

} // namespace

TRITON_EXT_REGISTER_PASS(@@snake@@, @@camel@@Pass);
