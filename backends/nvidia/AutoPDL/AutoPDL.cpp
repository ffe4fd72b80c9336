//===- AutoPDL.cpp - Automatic programmatic dependent launch --------------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Programmatic dependent launch (PDL, sm_90+) lets a kernel start while the
// previous kernel of the stream is still running: the launch attribute
// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION lets the secondary
// grid be scheduled once every CTA of the primary has executed
// `griddepcontrol.launch_dependents` (or exited), and the secondary's
// `griddepcontrol.wait` blocks until the primary has completed and its memory
// is visible. A kernel launched this way that touches global memory before the
// wait races with its producer. This pass makes the placement mechanical
// (GitHub issue 8).
//
// What it does, per kernel (public `tt.func` with a body):
//  * `tt.grid_dependency_wait` goes into the entry block right before the
//    first operation that is not free of memory effects (or before the
//    terminator if there is none). Operations with unknown effects (calls,
//    ops without the interface) count as effects.
//  * `tt.grid_dependency_launch_dependents` goes after the last entry-block
//    operation that may read memory (`after-loads`), right after the wait
//    (`after-wait`), or nowhere (`none`).
//  * The module gets `triton_ext.launch_pdl = 1 : i32`; the loader copies it
//    into the compile metadata field `launch_pdl`, which Triton's CUDA
//    launcher turns into the PDL launch attribute.
//
// Why this is legal:
//  * Every operation before the wait is memory-effect free (pure index
//    computation: program ids, ranges, arithmetic, pointer offsets), so none
//    of them observes the producer's memory. The wait is in the entry block,
//    so it properly dominates every later operation of the block and
//    everything nested in them: every global access, in branches and loops
//    included, executes after it. The pass checks this with DominanceInfo.
//  * Every CTA executes the wait unconditionally (entry block). That keeps
//    PDL transitive: our grid cannot complete before its own producer has, so
//    a consumer that waits on us also sees our producer's writes.
//  * `griddepcontrol.launch_dependents` is only a scheduling hint: the
//    dependent's wait still waits for our full completion and memory flush.
//    Its position only trades overlap against SM slots held by waiting CTAs.
//    A CTA reaching it has been scheduled, so early triggering cannot starve
//    our own unscheduled CTAs into a deadlock.
//  * Both instructions are no-ops when the kernel is launched without PDL.
//
// Declines (leaves the module unchanged): a module that already contains
// either op anywhere (the author manages PDL; this also makes the pass
// idempotent), a `ttg.target` that is not `cuda:N` with N >= 90, and
// declarations. Gluon kernels have no ttir stage, so they are never seen.
// With the `remarks` option both declines are remarks,
// `nvidia_auto_pdl: not applied: <reason>`: on the module (target) or on the
// first grid-dependency op found (managed).
//
//===----------------------------------------------------------------------===//

#include "triton-ext/PassInfra.h"
#include "triton-ext/TargetFilter.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "triton/Dialect/Triton/IR/Dialect.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "triton-ext-nvidia-auto-pdl"

namespace mlir::triton_ext {
/// Where the trigger goes: the values of the `launch-dependents` option
/// (Passes.td's EnumOption; MLIR parses the spelling).
enum class TriggerPlacement { AfterLoads, AfterWait, None };

#define GEN_PASS_DECL_TRITONEXTAUTOPDL
#define GEN_PASS_DEF_TRITONEXTAUTOPDL
#include "Passes.h.inc"
} // namespace mlir::triton_ext

using namespace mlir;
using mlir::triton_ext::TriggerPlacement;

namespace {

/// Module attribute that asks for a PDL launch (the loader copies it into the
/// launch metadata).
constexpr llvm::StringLiteral kLaunchPdlAttr = "triton_ext.launch_pdl";
/// Oldest CUDA compute capability with griddepcontrol.
constexpr unsigned kMinArch = 90;

/// True if `op` or an op nested in it may read memory. Ops without the
/// effect interface (calls, unknown ops) are assumed to read.
static bool mayReadMemory(Operation *op) {
  bool reads = false;
  op->walk([&](Operation *nested) {
    if (nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance(); // Its nested ops are visited in turn.
    auto iface = dyn_cast<MemoryEffectOpInterface>(nested);
    if (!iface) {
      reads = true;
      return WalkResult::interrupt();
    }
    SmallVector<MemoryEffects::EffectInstance> effects;
    iface.getEffects(effects);
    if (llvm::any_of(effects, [](const MemoryEffects::EffectInstance &e) {
          return isa<MemoryEffects::Read>(e.getEffect());
        })) {
      reads = true;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return reads;
}

class AutoPDLPass
    : public mlir::triton_ext::impl::TritonExtAutoPDLBase<AutoPDLPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TriggerPlacement placement = launchDependents;
    if (!mlir::triton_ext::mayTargetCudaAtLeast(module, kMinArch)) {
      LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": target is not cuda >= 90\n");
      if (remarks)
        module.emitRemark()
            << "nvidia_auto_pdl: not applied: the target is not cuda >= 90";
      return;
    }
    // A kernel written with gdc_wait / gdc_launch_dependents (or a module
    // this pass already rewrote) manages PDL itself: leave all of it alone.
    Operation *managed = nullptr;
    module.walk([&](Operation *op) {
      if (isa<triton::GridDependencyWaitOp,
              triton::GridDependencyLaunchDependentsOp>(op)) {
        managed = op;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (managed) {
      LLVM_DEBUG(llvm::dbgs()
                 << DEBUG_TYPE ": module already manages grid dependencies\n");
      if (remarks)
        managed->emitRemark()
            << "nvidia_auto_pdl: not applied: the module already manages "
               "grid dependencies (this "
            << managed->getName() << "; every kernel of it is left alone)";
      return;
    }

    bool changed = false;
    for (auto func : module.getOps<triton::FuncOp>()) {
      // Only kernels are launched; a noinline helper runs inside a kernel,
      // after the kernel's wait (the call is not effect free).
      if (!func.isPublic() || func.isDeclaration())
        continue;
      if (failed(rewriteKernel(func, placement)))
        return signalPassFailure();
      changed = true;
    }
    if (changed)
      module->setAttr(kLaunchPdlAttr,
                      IntegerAttr::get(IntegerType::get(&getContext(), 32), 1));
  }

private:
  /// Inserts the wait (and the trigger) into one kernel and checks that the
  /// wait dominates every operation with memory effects.
  LogicalResult rewriteKernel(triton::FuncOp func, TriggerPlacement placement) {
    Block &entry = func.getBody().front();
    Operation *firstEffect = entry.getTerminator();
    for (Operation &op : entry.without_terminator()) {
      if (!isMemoryEffectFree(&op)) {
        firstEffect = &op;
        break;
      }
    }
    OpBuilder builder(firstEffect);
    auto wait = triton::GridDependencyWaitOp::create(builder, func.getLoc());

    if (placement == TriggerPlacement::AfterWait) {
      builder.setInsertionPointAfter(wait);
      triton::GridDependencyLaunchDependentsOp::create(builder, func.getLoc());
    } else if (placement == TriggerPlacement::AfterLoads) {
      // After the last read, this grid no longer depends on input bandwidth:
      // its remaining work (compute, stores) overlaps the dependent's launch
      // and prologue. With no read at all, trigger right after the wait.
      // Ops before the wait are effect free, so the scan starts after it.
      Operation *lastRead = wait;
      for (Operation *op = wait->getNextNode(); op != entry.getTerminator();
           op = op->getNextNode())
        if (mayReadMemory(op))
          lastRead = op;
      builder.setInsertionPointAfter(lastRead);
      triton::GridDependencyLaunchDependentsOp::create(builder, func.getLoc());
    }

    // Post-condition: every op with memory effects runs after the wait.
    DominanceInfo dominance(func);
    WalkResult result = func.walk([&](Operation *op) {
      if (op == wait.getOperation() || op == func.getOperation() ||
          isa<triton::GridDependencyLaunchDependentsOp>(op) ||
          op->getNumRegions() != 0 || isMemoryEffectFree(op))
        return WalkResult::advance();
      if (!dominance.properlyDominates(wait.getOperation(), op)) {
        op->emitOpError() << "triton-ext-nvidia-auto-pdl: memory access not "
                             "dominated by tt.grid_dependency_wait";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return failure(result.wasInterrupted());
  }
};

} // namespace

TRITON_EXT_REGISTER_PASS(nvidia_auto_pdl, AutoPDLPass);
