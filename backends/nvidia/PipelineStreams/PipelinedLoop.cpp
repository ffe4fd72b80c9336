//===- PipelinedLoop.cpp - What both pipelining passes share ---------------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Why writing `tt.num_stages` on a loop that passes notPipelinableReason and
// versioning it with versionLoop is legal:
//  * The attribute only moves loads earlier. A load moved ahead of the
//    operations of earlier iterations could observe a different value only
//    if one of those operations wrote memory; the loop writes nothing (and
//    calls, inline asm, atomics, barriers and prints count as writes). Other
//    programs' writes are unordered with this program's loads with or without
//    the move: only an atomic or a barrier in the loop could order them, and
//    those count as writes. Everything before the loop still happens before
//    the first prefetch, which the pipeliner puts right before the loop.
//  * The arithmetic and the reduction order of the loop body are unchanged:
//    the same values are combined in the same order (a dot accumulates its
//    k-blocks in the same order, from shared memory either way on sm90).
//  * The pipeliner predicates the prefetch of iteration i + k on
//    `i + k * step < ub`, which it evaluates as `i < ub - k * step`, and it
//    evaluates `lb + k * step` in its prologue, for k < N. Near the limits of
//    the induction variable's type those wrap and would prefetch (or skip)
//    the wrong iterations. The loop is versioned (LoopVersioning.h) so that
//    none of them can wrap: `0 < step <= MAX / N` and both bounds in
//    `[0, MAX - N * step]`. Under any other bounds the original loop runs.
//
//===----------------------------------------------------------------------===//

#include "PipelinedLoop.h"
#include "triton-ext/LoopVersioning.h"
#include "triton-ext/TargetFilter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "triton/Dialect/Triton/IR/Dialect.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "triton-ext-nvidia-pipelined-loop"

using namespace mlir;
namespace tt = mlir::triton;

namespace mlir::triton_ext::pipelining {

namespace {

/// The loop attribute Triton's pipeliner reads (tl.range's num_stages).
constexpr StringLiteral kNumStages = "tt.num_stages";
/// The per-op latency attribute Triton's pipeliner takes as given.
constexpr StringLiteral kLatency = "tt_latency";

/// True when `op` (with everything nested in it) may only read memory.
bool onlyReads(Operation *op) {
  if (auto effects = dyn_cast<MemoryEffectOpInterface>(op)) {
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    if (llvm::any_of(list, [](const MemoryEffects::EffectInstance &e) {
          return !isa<MemoryEffects::Read>(e.getEffect());
        }))
      return false;
  } else if (!op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()) {
    return false; // Unknown effects.
  }
  for (Region &region : op->getRegions())
    for (Operation &nested : region.getOps())
      if (!onlyReads(&nested))
        return false;
  return true;
}

/// Shared memory the pipelined loop's prefetch buffers take: `numStages - 1`
/// copies of every tensor the loop body loads (what Triton's pipeliner
/// allocates for them).
int64_t prefetchBytes(scf::ForOp loop, int64_t numStages) {
  int64_t bytes = 0;
  for (auto load : loop.getBody()->getOps<tt::LoadOp>())
    if (auto type = dyn_cast<RankedTensorType>(load.getType()))
      bytes += type.getNumElements() *
               llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  return bytes * (numStages - 1);
}

/// True when the body of `loop` (nested regions included) holds a load.
bool hasLoad(scf::ForOp loop) {
  bool loads = false;
  loop.getBody()->walk([&](tt::LoadOp) { loads = true; });
  return loads;
}

} // namespace

/// Why `loop` may not be pipelined at depth `numStages` (see pipelineLoops),
/// or an empty string when it may.
static std::string notPipelinableReason(scf::ForOp loop, bool withDot,
                                        int64_t numStages,
                                        int64_t maxPrefetchKb) {
  if (loop->hasAttr(kNumStages))
    return "the loop has tt.num_stages already (the author's choice wins)";
  if (loop.getUnsignedCmp())
    return "the loop compares its bounds unsigned";
  bool nested = false, dot = false, latency = false, tensorLoad = false,
       isVolatile = false;
  loop.getBody()->walk([&](Operation *op) {
    nested |= isa<LoopLikeOpInterface>(op);
    dot |= isa<tt::DotOpInterface>(op);
    latency |= op->hasAttr(kLatency);
    if (auto load = dyn_cast<tt::LoadOp>(op)) {
      isVolatile |= load.getIsVolatile();
      tensorLoad |= load->getBlock() == loop.getBody() &&
                    isa<RankedTensorType>(load.getType());
    }
  });
  if (nested)
    return "the loop is not innermost (the pipeliner skips outer loops)";
  if (dot && !withDot)
    return "the loop has a dot (Triton pipelines it with the kernel's "
           "num_stages)";
  if (!dot && withDot)
    return "the loop has no dot (nvidia_pipeline_streams is the pass for "
           "those)";
  if (latency)
    return "an op of the loop has tt_latency (the author's schedule wins)";
  if (isVolatile)
    return "the loop has a volatile load";
  if (!tensorLoad)
    return "the loop body loads no tensor (nothing to prefetch)";
  for (Operation &op : loop.getBody()->without_terminator())
    if (!onlyReads(&op))
      return "the loop may write memory (a prefetched load could miss the "
             "write)";
  int64_t bytes = prefetchBytes(loop, numStages);
  if (bytes > maxPrefetchKb * 1024)
    return llvm::formatv("the prefetch buffers would take {0} KiB of shared "
                         "memory (more than max-prefetch-kb={1})",
                         llvm::divideCeil(bytes, 1024), maxPrefetchKb)
        .str();
  return "";
}

/// Replaces `loop` by its guarded, pipelined copy and itself (see
/// pipelineLoops). `tt.num_stages = originalStages` keeps the original as
/// Triton compiles it without the pass (1 for the loops Triton would not
/// pipeline, the kernel's num_stages for the dot loops nvidia_pipeline_deeper
/// deepens) and marks it decided, so a second run changes nothing.
static void pipelineGuarded(scf::ForOp loop, int64_t numStages,
                            int64_t originalStages) {
  OpBuilder b(loop);
  Value guard = loopBoundsGuard(b, loop.getLoc(), loop, numStages);
  versionLoop(loop, guard, kNumStages, numStages, originalStages);
}

LogicalResult pipelineLoops(ModuleOp module, StringRef passName, bool withDot,
                            int64_t numStages, int64_t maxPrefetchKb,
                            bool remarks, int64_t originalStages) {
  if (numStages < 2 || numStages > kMaxNumStages)
    return module.emitError() << passName << ": num-stages must be in [2, "
                              << kMaxNumStages << "], got " << numStages;
  if (numStages <= originalStages)
    return module.emitError()
           << passName << ": the pipeline depth " << numStages
           << " must be above the loop's own depth " << originalStages;
  SmallVector<scf::ForOp> loops;
  module.walk([&](scf::ForOp loop) { loops.push_back(loop); });
  for (scf::ForOp loop : loops) {
    std::string reason =
        notPipelinableReason(loop, withDot, numStages, maxPrefetchKb);
    if (reason.empty()) {
      pipelineGuarded(loop, numStages, originalStages);
      continue;
    }
    LLVM_DEBUG(llvm::dbgs() << passName << ": not pipelined (" << reason
                            << "): " << loop.getLoc() << "\n");
    if (remarks && hasLoad(loop))
      loop.emitRemark() << passName << ": not applied: " << reason;
  }
  return success();
}

LogicalResult pipelineModule(ModuleOp module, StringRef passName,
                             StringRef kernelReason, bool withDot,
                             int64_t numStages, int64_t maxPrefetchKb,
                             bool remarks, int64_t originalStages) {
  constexpr unsigned kMinArch = 90;
  StringRef why = mlir::triton_ext::mayTargetCudaAtLeast(module, kMinArch)
                      ? kernelReason
                      : "the target is not cuda >= 90";
  if (!why.empty()) {
    if (remarks)
      module.emitRemark() << passName << ": not applied: " << why;
    return success();
  }
  return pipelineLoops(module, passName, withDot, numStages, maxPrefetchKb,
                       remarks, originalStages);
}

} // namespace mlir::triton_ext::pipelining
