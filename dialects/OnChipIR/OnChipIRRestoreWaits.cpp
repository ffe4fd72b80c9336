//===- OnChipIRRestoreWaits.cpp - The author's waits, after pipelining ----===//
//
// SPDX-License-Identifier: Apache-2.0
//
// `onchip_restore_waits` (see Passes.td) runs right after Triton's pipeline
// pass. Triton's pipeliner assumes it owns every asynchronous op in a loop;
// for kernels written with triton_ext_onchip the author owns them, and the
// waits the author wrote are the synchronisation. The pass undoes the two
// places where the pipeliner overrides them. It touches only ops that carry
// the attributes language/OnChip and onchip_lower put on them, so kernels
// that do not use triton_ext_onchip are left as they are.
//
//===----------------------------------------------------------------------===//

#include "OnChipIRDialect.h"

#include "triton-ext/PassInfra.h"

#include "mlir/IR/BuiltinOps.h"
#include "triton/Dialect/TritonGPU/IR/Dialect.h"
#include "triton/Dialect/TritonNvidiaGPU/IR/Dialect.h"

namespace mlir::triton_ext {
#define GEN_PASS_DECL_TRITONEXTONCHIPRESTOREWAITS
#define GEN_PASS_DEF_TRITONEXTONCHIPRESTOREWAITS
#include "Passes.h.inc"
} // namespace mlir::triton_ext

namespace {
using namespace mlir;
namespace ttg = mlir::triton::gpu;
namespace ttng = mlir::triton::nvidia_gpu;

constexpr const char *kPendingAttr = "triton_ext_onchip.pending";
constexpr const char *kMmaAttr = "triton_ext_onchip.mma";

/// Whether `value` is (a wait-forwarded copy of) a wgmma onchip_lower made.
bool fromOurMma(Value value) {
  Operation *def = value.getDefiningOp();
  while (auto wait = dyn_cast_or_null<ttng::WarpGroupDotWaitOp>(def)) {
    unsigned idx = cast<OpResult>(value).getResultNumber();
    value = wait.getInputs()[idx];
    def = value.getDefiningOp();
  }
  return def && isa<ttng::WarpGroupDotOp>(def) && def->hasAttr(kMmaAttr);
}

class OnChipRestoreWaitsPass
    : public mlir::triton_ext::impl::TritonExtOnChipRestoreWaitsBase<
          OnChipRestoreWaitsPass> {
public:
  void runOnOperation() override {
    ModuleOp module = getOperation();
    module.walk([&](ttg::AsyncWaitOp wait) {
      if (auto pending = wait->getAttrOfType<IntegerAttr>(kPendingAttr))
        wait.setNum(pending.getInt());
    });
    SmallVector<ttng::WarpGroupDotWaitOp> foreign;
    module.walk([&](ttng::WarpGroupDotWaitOp wait) {
      if (wait->hasAttr(kMmaAttr))
        return;
      bool anyTensor = false, allOurs = true;
      for (Value input : wait.getInputs()) {
        if (!isa<RankedTensorType>(input.getType()))
          continue; // memdesc operands only order the buffers' reuse
        anyTensor = true;
        allOurs &= fromOurMma(input);
      }
      if (anyTensor && allOurs)
        foreign.push_back(wait);
    });
    for (ttng::WarpGroupDotWaitOp wait : foreign) {
      for (auto [result, input] :
           llvm::zip(wait->getResults(), wait.getInputs()))
        result.replaceAllUsesWith(input);
      wait->erase();
    }
  }
};
} // namespace

TRITON_EXT_REGISTER_PASS(onchip_restore_waits, OnChipRestoreWaitsPass);
