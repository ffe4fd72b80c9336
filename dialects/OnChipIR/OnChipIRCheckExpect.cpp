//===- OnChipIRCheckExpect.cpp - expect bytes vs the TMA copies -----------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// `onchip_check_expect` (see Passes.td) runs at the end of the ttir stage,
// after Triton's inliner and CSE, so helper functions are inlined and equal
// barrier and predicate values are one SSA value. It checks, where the kernel
// shows it, that the bytes a phase of an mbarrier is told to wait for equal the
// bytes of the TMA copies that complete on it:
//
//   oc.expect(bar, 32768)                       # this phase waits for 32 KiB
//   oc.copy_tma(a_buf, a_desc, [m, k], bar)     # 128x64 fp16 = 16 KiB
//   oc.copy_tma(b_buf, b_desc, [k, n], bar)     # 64x128 fp16 = 16 KiB
//
// Fewer bytes announced than copied lets the phase complete while a copy is
// still landing (the reader races it); more never completes it (a hang). Both
// are silent on the GPU, so a mismatch is an error at the first expect, with a
// note at each copy.
//
// What counts as visible: inside one block, the expects on one barrier value
// and the copies on it that follow the first of them, up to a wait on that
// barrier or the end of the block; all under one predicate value; and
// nothing in between that could add to the same phase unseen (a nested
// region or a call using a barrier of the same ring). A copy before any
// expect in its block completes a phase announced elsewhere and is not
// counted. Anything else is left alone. The pass changes no IR.
//
//===----------------------------------------------------------------------===//

#include "OnChipIRChecks.h"
#include "OnChipIRDialect.h"

#include "triton-ext/PassInfra.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "triton/Dialect/TritonGPU/IR/Dialect.h"
#include "triton/Dialect/TritonNvidiaGPU/IR/Dialect.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::triton_ext {
#define GEN_PASS_DECL_TRITONEXTONCHIPCHECKEXPECT
#define GEN_PASS_DEF_TRITONEXTONCHIPCHECKEXPECT
#include "Passes.h.inc"
} // namespace mlir::triton_ext

namespace {
using namespace mlir;
namespace ttg = mlir::triton::gpu;
namespace ttng = mlir::triton::nvidia_gpu;
using mlir::triton_ext::onchip::TmaCopyOp;

/// The expects and copies of one phase of one barrier, as far as one block
/// shows them.
struct Phase {
  SmallVector<Operation *> expects, copies;
  int64_t expected = 0, copied = 0;
  SmallVector<Value, 1> preds;
  bool opaque = false; // something unseen may add to this phase

  void addPred(Value pred) {
    if (!llvm::is_contained(preds, pred))
      preds.push_back(pred);
  }
};

/// The ring a barrier value was indexed from (or the value itself).
Value ringOf(Value bar) {
  if (auto index = bar.getDefiningOp<ttg::MemDescIndexOp>())
    return index.getSrc();
  return bar;
}

int64_t bytesOf(Value buffer) {
  auto type = cast<ttg::MemDescType>(buffer.getType());
  return type.getNumElements() * type.getElementTypeBitWidth() / 8;
}

/// For a TMA copy: its barrier, buffer and predicate.
struct Copy {
  Value barrier, buffer, pred;
};
std::optional<Copy> asCopy(Operation *op) {
  if (auto copy = dyn_cast<TmaCopyOp>(op))
    return Copy{copy.getBarrier(), copy.getBuffer(), copy.getPred()};
  if (auto copy = dyn_cast<ttng::AsyncTMACopyGlobalToLocalOp>(op))
    return Copy{copy.getBarrier(), copy.getResult(), copy.getPred()};
  return std::nullopt;
}

class OnChipCheckExpectPass
    : public mlir::triton_ext::impl::TritonExtOnChipCheckExpectBase<
          OnChipCheckExpectPass> {
public:
  void runOnOperation() override {
    bool ok = true;
    getOperation().walk([&](Block *block) { ok &= succeeded(check(*block)); });
    // Issue 31: reads before their wait, overwrites of buffers in flight.
    ok &= succeeded(mlir::triton_ext::onchip::checkHazards(getOperation()));
    if (!ok)
      signalPassFailure();
  }

private:
  /// Reports a phase whose announced and copied bytes differ.
  LogicalResult close(const Phase &phase) {
    if (phase.opaque || phase.expects.empty() || phase.copies.empty() ||
        phase.preds.size() != 1 || phase.expected == phase.copied)
      return success();
    InFlightDiagnostic diag =
        phase.expects.front()->emitError()
        << "triton_ext_onchip: expect announces " << phase.expected
        << " bytes on this barrier, but the copy_tma calls that complete on "
           "it before its wait bring "
        << phase.copied << " bytes; the phase would "
        << (phase.expected > phase.copied
                ? "never complete (the wait hangs)"
                : "complete while a copy is still landing (the reader races "
                  "it)")
        << ". Announce the sum of the buffers' sizes (elements x element "
           "bytes)";
    for (Operation *copy : phase.copies)
      diag.attachNote(copy->getLoc())
          << "this copy brings " << bytesOf(asCopy(copy)->buffer) << " bytes";
    return failure();
  }

  LogicalResult check(Block &block) {
    llvm::MapVector<Value, Phase> open;
    LogicalResult result = success();
    auto closeAll = [&](function_ref<bool(Value)> which) {
      for (auto it = open.begin(); it != open.end();) {
        if (!which(it->first)) {
          ++it;
          continue;
        }
        if (failed(close(it->second)))
          result = failure();
        it = open.erase(it);
      }
    };
    auto makeOpaque = [&](Value ring) {
      for (auto &[bar, phase] : open)
        if (ringOf(bar) == ring || bar == ring)
          phase.opaque = true;
    };
    for (Operation &op : block) {
      if (auto expect = dyn_cast<ttng::BarrierExpectOp>(op)) {
        Phase &phase = open[expect.getAlloc()];
        phase.expects.push_back(&op);
        phase.expected += expect.getSize();
        phase.addPred(expect.getPred());
        continue;
      }
      if (std::optional<Copy> copy = asCopy(&op)) {
        // A copy before any expect on its barrier in this block completes a
        // phase announced elsewhere (a previous iteration): not ours to count.
        auto it = open.find(copy->barrier);
        if (it == open.end())
          continue;
        it->second.copies.push_back(&op);
        it->second.copied += bytesOf(copy->buffer);
        it->second.addPred(copy->pred);
        continue;
      }
      if (auto wait = dyn_cast<ttng::WaitBarrierOp>(op)) {
        // The waiter sees this phase complete: what came before is all of it.
        Value bar = wait.getAlloc();
        closeAll([&](Value open) { return open == bar; });
        continue;
      }
      if (op.getNumRegions() == 0 && !isa<CallOpInterface>(op))
        continue; // views, reads, arrivals: nothing that adds bytes unseen
      // A nested region or a call may issue copies or expects on a barrier
      // of an open phase where this block does not show them.
      op.walk([&](Operation *inner) {
        if (auto expect = dyn_cast<ttng::BarrierExpectOp>(inner))
          makeOpaque(ringOf(expect.getAlloc()));
        else if (std::optional<Copy> copy = asCopy(inner))
          makeOpaque(ringOf(copy->barrier));
        else if (isa<CallOpInterface>(inner))
          for (Value operand : inner->getOperands())
            if (isa<ttg::MemDescType>(operand.getType()))
              makeOpaque(ringOf(operand));
      });
    }
    closeAll([](Value) { return true; });
    return result;
  }
};
} // namespace

TRITON_EXT_REGISTER_PASS(onchip_check_expect, OnChipCheckExpectPass);
