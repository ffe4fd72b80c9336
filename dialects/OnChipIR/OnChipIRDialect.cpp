//===- OnChipIRDialect.cpp - The triton_ext_onchip dialect ----------------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Dialect `triton_ext_onchip` (GitHub issue 20): tensor views of shared-memory
// buffers that language/OnChip writes at ttir and onchip_lower
// (OnChipIRLower.cpp) removes right after convert-triton-to-tritongpu. This
// file holds the dialect class, the verifiers and the inliner interface that
// lets Triton's inliner move the ops out of called @triton.jit functions.
//
//===----------------------------------------------------------------------===//

#include "OnChipIRDialect.h"

#include "triton-ext/PassInfra.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Transforms/InliningUtils.h"
#include "triton/Dialect/Triton/IR/Types.h"
#include "mlir/IR/Matchers.h"
#include "triton/Dialect/TritonGPU/IR/Dialect.h"
#include "triton/Dialect/TritonNvidiaGPU/IR/Dialect.h"

#include <optional>

using namespace mlir;
using namespace mlir::triton_ext::onchip;

#include "OnChipIRDialect.cpp.inc"

namespace {
/// The views are pure functions of their buffer operand, so inlining a
/// function that contains them is always legal.
struct OnChipInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
};

/// Both views must see a shared-memory buffer whose shape is the tensor's.
LogicalResult verifyView(Operation *op, Type bufferType, RankedTensorType result,
                         Type expectedElement) {
  auto memdesc = dyn_cast<triton::gpu::MemDescType>(bufferType);
  if (!memdesc)
    return op->emitOpError() << "expects a !ttg.memdesc buffer, got "
                             << bufferType;
  if (memdesc.getShape() != result.getShape())
    return op->emitOpError()
           << "result shape must equal the buffer shape; buffer " << memdesc
           << ", result " << result;
  if (result.getElementType() != expectedElement)
    return op->emitOpError() << "result element type " << result.getElementType()
                             << " does not match the buffer (expected "
                             << expectedElement << ")";
  return success();
}
} // namespace

void OnChipDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "OnChipIROps.cpp.inc"
      >();
  addInterfaces<OnChipInlinerInterface>();
}

LogicalResult ViewOp::verify() {
  StringRef purpose = getPurpose();
  if (purpose != "store" && purpose != "copy")
    return emitOpError() << "purpose must be \"store\" or \"copy\", got \""
                         << purpose << "\"";
  auto memdesc = dyn_cast<triton::gpu::MemDescType>(getBuffer().getType());
  if (!memdesc)
    return emitOpError() << "expects a !ttg.memdesc buffer, got "
                         << getBuffer().getType();
  // Pointers in the global address space: tt.store and tt.load verify their
  // pointee type against the stored value, and the pointers are never used.
  Type ptr = triton::PointerType::get(memdesc.getElementType());
  return verifyView(getOperation(), memdesc, getResult().getType(), ptr);
}

LogicalResult MmaOperandOp::verify() {
  auto memdesc = dyn_cast<triton::gpu::MemDescType>(getBuffer().getType());
  if (!memdesc)
    return emitOpError() << "expects a !ttg.memdesc buffer, got "
                         << getBuffer().getType();
  if (memdesc.getRank() != 2)
    return emitOpError() << "expects a 2-D buffer, got " << memdesc;
  if (getPending() < 0)
    return emitOpError() << "pending must be >= 0, got " << getPending();
  return verifyView(getOperation(), memdesc, getResult().getType(),
                    memdesc.getElementType());
}

LogicalResult TmaCopyOp::verify() {
  auto desc = dyn_cast<triton::TensorDescType>(getDesc().getType());
  if (!desc)
    return emitOpError() << "expects a !tt.tensordesc, got " << getDesc().getType();
  auto buffer = dyn_cast<triton::gpu::MemDescType>(getBuffer().getType());
  if (!buffer)
    return emitOpError() << "expects a !ttg.memdesc buffer, got "
                         << getBuffer().getType();
  auto barrier = dyn_cast<triton::gpu::MemDescType>(getBarrier().getType());
  if (!barrier || !barrier.getElementType().isInteger(64) ||
      barrier.getNumElements() != 1)
    return emitOpError() << "expects one mbarrier (!ttg.memdesc<1xi64>), got "
                         << getBarrier().getType();
  if (desc.getShape() != buffer.getShape() ||
      desc.getElementType() != buffer.getElementType())
    return emitOpError() << "the descriptor's block " << desc
                         << " does not match the buffer " << buffer;
  if (getCoords().size() != desc.getShape().size())
    return emitOpError() << "expects " << desc.getShape().size()
                         << " coordinates, got " << getCoords().size();
  return success();
}

LogicalResult TmaStoreOp::verify() {
  auto desc = dyn_cast<triton::TensorDescType>(getDesc().getType());
  if (!desc)
    return emitOpError() << "expects a !tt.tensordesc, got "
                         << getDesc().getType();
  auto buffer = dyn_cast<triton::gpu::MemDescType>(getBuffer().getType());
  if (!buffer)
    return emitOpError() << "expects a !ttg.memdesc buffer, got "
                         << getBuffer().getType();
  if (desc.getShape() != buffer.getShape() ||
      desc.getElementType() != buffer.getElementType())
    return emitOpError() << "the descriptor's block " << desc
                         << " does not match the buffer " << buffer;
  if (getCoords().size() != desc.getShape().size())
    return emitOpError() << "expects " << desc.getShape().size()
                         << " coordinates, got " << getCoords().size();
  return success();
}

LogicalResult DeclareBarriersOp::verify() {
  namespace ttg = triton::gpu;
  namespace ttng = triton::nvidia_gpu;
  // Follow the ring through memdesc_index to the barrier ops. A slot is the
  // constant index, or nullopt for a dynamic one.
  SmallVector<std::pair<Value, std::optional<int64_t>>> worklist = {
      {getRing(), std::nullopt}};
  llvm::SmallDenseSet<int64_t> armedSlots;
  bool armedDynamic = false, escapes = false;
  SmallVector<std::pair<Operation *, std::optional<int64_t>>> waits;
  while (!worklist.empty()) {
    auto [value, slot] = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (user == getOperation() || isa<ttng::InitBarrierOp>(user))
        continue;
      if (auto index = dyn_cast<ttg::MemDescIndexOp>(user)) {
        APInt constant;
        std::optional<int64_t> next;
        if (matchPattern(index.getIndex(), m_ConstantInt(&constant)))
          next = constant.getSExtValue();
        worklist.push_back({index.getResult(), next});
        continue;
      }
      // A TMA copy only completes bytes (complete_tx): no arrival.
      if (isa<TmaCopyOp>(user) && use.getOperandNumber() == 1)
        continue;
      if (isa<ttng::ArriveBarrierOp, ttng::BarrierExpectOp>(user)) {
        if (slot)
          armedSlots.insert(*slot);
        else
          armedDynamic = true;
        continue;
      }
      if (isa<ttng::WaitBarrierOp>(user)) {
        waits.push_back({user, slot});
        continue;
      }
      escapes = true; // passed on: it may be armed where we cannot see
    }
  }
  if (escapes || armedDynamic)
    return success();
  for (auto [wait, slot] : waits) {
    if (slot ? armedSlots.contains(*slot) : !armedSlots.empty())
      continue;
    InFlightDiagnostic diag = wait->emitError()
                              << "triton_ext_onchip: this wait never returns: "
                                 "nothing arrives on "
                              << (slot ? "barrier " + std::to_string(*slot)
                                       : std::string("these barriers"))
                              << " (no arrive or expect uses it; a "
                                 "copy_tma only brings bytes, it is no "
                                 "arrival)";
    diag.attachNote(getLoc()) << "the barriers are allocated here";
    return failure();
  }
  return success();
}

#define GET_OP_CLASSES
#include "OnChipIROps.cpp.inc"

TRITON_EXT_REGISTER_DIALECT(triton_ext_onchip, OnChipDialect);
