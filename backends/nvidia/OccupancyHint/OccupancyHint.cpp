//===- OccupancyHint.cpp - Minimum CTAs-per-SM hint for ptxas --------------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Memory-bound kernels hide latency with resident warps. ptxas picks the
// register count per thread on its own, and for kernels with large tiles it
// often leaves the SM at one or two CTAs. PTX `.minnctapersm N` (LLVM function
// attribute "nvvm.minctasm", from the LLVM-dialect attribute `nvvm.minctasm`)
// asks ptxas to cap registers so that N CTAs fit (GitHub issue 8, item 2).
//
// How: at the end of make_llir the module is in the LLVM dialect; every
// kernel `llvm.func` with `nvvm.reqntid = array<i32: x[, y, z]>` gets
// `nvvm.minctasm = N : i32`. MLIR's NVVM translation turns it into the LLVM
// attribute and NVPTX prints `.minnctapersm N`; ptxas honours it only with
// `.maxntid`/`.reqntid`, which Triton always emits (hence the requirement).
//
// Why it is legal: the hint changes register allocation only (ptxas may spill
// to local memory to meet it); the program's semantics are unchanged.
//
// Declines (per kernel, LLVM_DEBUG): no `nvvm.reqntid`; `nvvm.minctasm`
// already set; N * threads > 2048 (sm_90 threads per SM); N * (shared + 1 KiB
// reserved) > 228 KiB (sm_90 shared memory per SM, from the module's
// `ttg.shared`); 65536 / (N * threads) < min-registers. Ops are matched by
// name ("llvm.func") so the plugin does not depend on LLVM-dialect TypeIDs.
//
//===----------------------------------------------------------------------===//

#include "triton-ext/PassInfra.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "triton-ext-nvidia-occupancy-hint"

namespace mlir::triton_ext {
#define GEN_PASS_DECL_TRITONEXTOCCUPANCYHINT
#define GEN_PASS_DEF_TRITONEXTOCCUPANCYHINT
#include "Passes.h.inc"
} // namespace mlir::triton_ext

using namespace mlir;

namespace {

/// sm_90 per-SM limits (H100/H200).
constexpr int64_t kMaxThreadsPerSm = 2048;
constexpr int64_t kRegistersPerSm = 65536;
constexpr int64_t kSharedPerSm = 228 * 1024;
constexpr int64_t kSharedReservedPerCta = 1024;

class OccupancyHintPass
    : public mlir::triton_ext::impl::TritonExtOccupancyHintBase<
          OccupancyHintPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (minCtasPerSm < 1 || minCtasPerSm > 32) {
      module.emitOpError() << "triton-ext-nvidia-occupancy-hint: "
                              "min-ctas-per-sm must be in [1, 32], got "
                           << minCtasPerSm;
      return signalPassFailure();
    }
    int64_t shared = 0;
    if (auto attr = module->getAttrOfType<IntegerAttr>("ttg.shared"))
      shared = attr.getInt();
    MLIRContext *ctx = &getContext();
    for (Operation &op : module.getBody()->getOperations()) {
      if (op.getName().getStringRef() != "llvm.func")
        continue;
      if (failed(hintKernel(op, shared)))
        continue;
      op.setAttr("nvvm.minctasm",
                 IntegerAttr::get(IntegerType::get(ctx, 32), minCtasPerSm));
    }
  }

private:
  /// Succeeds when `func` is a kernel that can take the hint.
  LogicalResult hintKernel(Operation &func, int64_t shared) {
    StringRef name = SymbolTable::getSymbolName(&func).getValue();
    auto reqntid = func.getAttrOfType<DenseI32ArrayAttr>("nvvm.reqntid");
    if (!reqntid || reqntid.empty())
      return decline(name, "no nvvm.reqntid (not a kernel, or ptxas would "
                           "ignore .minnctapersm)");
    if (func.hasAttr("nvvm.minctasm"))
      return decline(name, "nvvm.minctasm already set");
    int64_t threads = 1;
    for (int32_t dim : reqntid.asArrayRef())
      threads *= dim;
    int64_t ctas = minCtasPerSm;
    if (ctas * threads > kMaxThreadsPerSm)
      return decline(name, "threads per SM would exceed 2048");
    if (ctas * (shared + kSharedReservedPerCta) > kSharedPerSm)
      return decline(name, "shared memory does not allow that many CTAs");
    if (kRegistersPerSm / (ctas * threads) < int64_t(minRegisters))
      return decline(name, "register budget below min-registers");
    return success();
  }

  LogicalResult decline(StringRef kernel, StringRef why) {
    LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": " << kernel << ": " << why
                            << "\n");
    return failure();
  }
};

} // namespace

TRITON_EXT_REGISTER_PASS(nvidia_occupancy_hint, OccupancyHintPass);
