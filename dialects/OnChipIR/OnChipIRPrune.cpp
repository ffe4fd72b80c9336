//===- OnChipIRPrune.cpp - Remove on-chip memory nobody reads -------------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// `onchip_prune` (see Passes.td) runs in the ttgir stage right after
// onchip_lower. It removes an allocation made by triton_ext_onchip `alloc` or
// `barriers` (marked `triton_ext_onchip.ring`) when nothing can observe its
// contents: every use, seen through memdesc views, only writes the buffers
// (local_store, a cp.async copy whose token nobody uses) or arms the barriers
// (init, arrive, expect, inval). It erases those writes, the views and the
// allocation, and takes the mark off the allocations that stay.
//
// Why that is legal: shared memory belongs to one block, and a buffer's
// contents are observable only through an op that reads it (local_load, a
// wgmma operand, a TMA store) and an mbarrier's state only through a wait or
// the TMA engine that completes its byte count. With none of those, no value
// the program computes depends on the writes. A TMA copy *into* an unread
// buffer is kept: it signals a barrier that something may wait on. Removing a
// cp.async from its commit group leaves the group (an empty group still
// counts), so the program's wait_copies counts keep their meaning.
//
//===----------------------------------------------------------------------===//

#include "OnChipIRDialect.h"

#include "triton-ext/PassInfra.h"

#include "mlir/IR/BuiltinOps.h"
#include "triton/Dialect/TritonGPU/IR/Dialect.h"
#include "triton/Dialect/TritonNvidiaGPU/IR/Dialect.h"

#include <optional>

namespace mlir::triton_ext {
#define GEN_PASS_DECL_TRITONEXTONCHIPPRUNE
#define GEN_PASS_DEF_TRITONEXTONCHIPPRUNE
#include "Passes.h.inc"
} // namespace mlir::triton_ext

namespace {
using namespace mlir;
namespace ttg = mlir::triton::gpu;
namespace ttng = mlir::triton::nvidia_gpu;

/// Set by language/OnChip on the allocations it makes.
constexpr const char *kRingAttr = "triton_ext_onchip.ring";

/// What an unobserved allocation consists of.
struct Unread {
  SmallVector<Operation *> writes; // local_store, cp.async, barrier arming
  SmallVector<Operation *> views;  // in discovery order (parents first)
  bool barriers = false;
};

bool isView(Operation *op) {
  return isa<ttg::MemDescIndexOp, ttg::MemDescTransOp, ttg::MemDescSubsliceOp,
             ttg::MemDescReshapeOp, ttg::MemDescReinterpretOp>(op);
}

/// The writes and views of `alloc` if nothing reads it; nullopt otherwise.
std::optional<Unread> unread(ttg::LocalAllocOp alloc) {
  Unread out;
  SmallVector<Value> worklist = {alloc.getResult()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (isView(user)) {
        out.views.push_back(user);
        worklist.push_back(user->getResult(0));
        continue;
      }
      if (auto store = dyn_cast<ttg::LocalStoreOp>(user)) {
        if (store.getDst() != value)
          return std::nullopt;
        out.writes.push_back(user);
        continue;
      }
      if (isa<ttg::AsyncCopyGlobalToLocalOp>(user) && user->use_empty()) {
        out.writes.push_back(user);
        continue;
      }
      if (isa<ttng::InitBarrierOp, ttng::ArriveBarrierOp, ttng::BarrierExpectOp,
              ttng::InvalBarrierOp>(user)) {
        out.barriers = true;
        out.writes.push_back(user);
        continue;
      }
      // A read, a wait, a TMA copy (it signals a barrier), or the buffer
      // passed on (a loop, a call, warp_specialize): it may be observed.
      return std::nullopt;
    }
  }
  return out;
}

class OnChipPrunePass
    : public mlir::triton_ext::impl::TritonExtOnChipPruneBase<OnChipPrunePass> {
public:
  using TritonExtOnChipPruneBase::TritonExtOnChipPruneBase;

  void runOnOperation() override {
    SmallVector<std::pair<ttg::LocalAllocOp, Unread>> dead;
    getOperation().walk([&](ttg::LocalAllocOp alloc) {
      if (!alloc->hasAttr(kRingAttr))
        return;
      // The mark has done its job (this pass is its only reader): the
      // allocations that stay leave without it.
      alloc->removeAttr(kRingAttr);
      if (alloc.getSrc())
        return;
      if (std::optional<Unread> found = unread(alloc))
        dead.push_back({alloc, std::move(*found)});
    });
    for (auto &[alloc, parts] : dead) {
      if (warnUnused)
        alloc.emitWarning()
            << "triton_ext_onchip: "
            << (parts.barriers ? "nothing waits on these barriers"
                               : "nothing reads these buffers")
            << "; removed with the " << parts.writes.size() << " op(s) that "
            << (parts.barriers ? "arm" : "write") << " them";
      for (Operation *write : parts.writes)
        write->erase();
      for (Operation *view : llvm::reverse(parts.views))
        view->erase();
      alloc->erase();
    }
  }
};
} // namespace

TRITON_EXT_REGISTER_PASS(onchip_prune, OnChipPrunePass);
