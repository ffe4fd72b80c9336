//===- PipelineStreams.cpp - Software-pipeline loops without a dot --------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Triton's software pipeliner (AssignLatencies, ScheduleLoops, Pipeline in
// make_ttgir) turns the loads of a loop into cp.async copies to shared memory
// issued `num_stages - 1` iterations ahead, so the memory latency of one
// iteration hides behind the work of the previous ones. It only looks at
// loads that feed a `tt.dot`, unless the loop carries `tt.num_stages` (what
// `tl.range(..., num_stages=N)` writes): then every pipelinable load of the
// loop is prefetched. Loops that stream memory without a dot (reductions
// over long rows, decode attention written with `tl.sum`, a cross entropy
// over the vocabulary) are latency-bound at low occupancy, and their authors
// rarely write the attribute. This pass writes it (GitHub issue 27: a pass
// for the GPU-bound kernels the transparent mode sees).
//
// A loop qualifies when it is an innermost `scf.for` with a signed compare,
// contains a tensor `tt.load` that is not volatile, contains no dot (the
// pipeliner already handles those, with the kernel's own num_stages), has no
// `tt.num_stages` (the author's choice wins) and no `tt_latency` on its ops,
// and no operation in it writes memory or has unknown memory effects.
//
// Why this is legal:
//  * The attribute only moves loads earlier. A load moved ahead of the
//    operations of earlier iterations could observe a different value only
//    if one of those operations wrote memory; the loop writes nothing (and
//    calls, inline asm, atomics, barriers and prints count as writes). Other
//    programs' writes are unordered with this program's loads with or without
//    the move: only an atomic or a barrier in the loop could order them, and
//    those count as writes. Everything before the loop still happens before
//    the first prefetch, which the pipeliner puts right before the loop.
//  * The arithmetic and the reduction order of the loop body are unchanged:
//    the same values are combined in the same order.
//  * The pipeliner predicates the prefetch of iteration i + k on
//    `i + k * step < ub`, which it evaluates as `i < ub - k * step`, and it
//    evaluates `lb + k * step` in its prologue, for k < N. Near the limits of
//    the induction variable's type those wrap and would prefetch (or skip)
//    the wrong iterations. The pass versions the loop on a guard under which
//    none of them can wrap: `0 < step <= MAX / N` and both bounds in
//    `[0, MAX - N * step]`. Under any other bounds the original loop runs.
//
// Declines (leaves the loop alone): everything the qualification above
// excludes, loops whose prefetch buffers ((N - 1) copies of every tensor the
// body loads) would take more than max-prefetch-kb of shared memory (on the
// H200, 66-131 KiB made decode attention and cross entropy 18-26% slower),
// and modules whose `ttg.target` is not cuda >= 90. With the
// `remarks` option each declined loop that holds a load gets a remark
// `nvidia_pipeline_streams: not applied: <reason>`.
//
//===----------------------------------------------------------------------===//

#include "triton-ext/PassInfra.h"
#include "triton-ext/TargetFilter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "triton/Dialect/Triton/IR/Dialect.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "triton-ext-nvidia-pipeline-streams"

namespace mlir::triton_ext {
#define GEN_PASS_DECL_TRITONEXTPIPELINESTREAMS
#define GEN_PASS_DEF_TRITONEXTPIPELINESTREAMS
#include "Passes.h.inc"
} // namespace mlir::triton_ext

using namespace mlir;
namespace tt = mlir::triton;

namespace {

/// Oldest CUDA compute capability the pass was measured on.
constexpr unsigned kMinArch = 90;
/// The loop attribute Triton's pipeliner reads (tl.range's num_stages).
constexpr StringLiteral kNumStages = "tt.num_stages";
/// The per-op latency attribute Triton's pipeliner takes as given.
constexpr StringLiteral kLatency = "tt_latency";

/// True when `op` (with everything nested in it) may only read memory.
static bool onlyReads(Operation *op) {
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
static int64_t prefetchBytes(scf::ForOp loop, int64_t numStages) {
  int64_t bytes = 0;
  for (auto load : loop.getBody()->getOps<tt::LoadOp>())
    if (auto type = dyn_cast<RankedTensorType>(load.getType()))
      bytes += type.getNumElements() *
               llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  return bytes * (numStages - 1);
}

/// Why `loop` is not pipelined, or an empty string when it is.
static std::string notPipelinedReason(scf::ForOp loop, int64_t numStages,
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
  if (dot)
    return "the loop has a dot (Triton pipelines it with the kernel's "
           "num_stages)";
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

/// `0 < step <= MAX / n` and `lb, ub` in `[0, MAX - n * step]`, in the
/// induction variable's type: no `lb + k * step`, `ub - k * step` or
/// `ub + k * step` with `k <= n` wraps.
static Value boundsGuard(OpBuilder &b, Location loc, scf::ForOp loop,
                         int64_t n) {
  Type type = loop.getInductionVar().getType();
  unsigned width = type.getIntOrFloatBitWidth();
  APInt max = APInt::getSignedMaxValue(width);
  auto constant = [&](const APInt &v) {
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, v));
  };
  Value zero = constant(APInt(width, 0));
  Value stepLimit = constant(max.sdiv(APInt(width, n)));
  Value steps =
      arith::MulIOp::create(b, loc, loop.getStep(), constant(APInt(width, n)));
  // It may wrap when the step is out of range, but the checks are and-ed,
  // and the step checks are then false.
  Value boundLimit = arith::SubIOp::create(b, loc, constant(max), steps);
  using P = arith::CmpIPredicate;
  Value checks[] = {
      arith::CmpIOp::create(b, loc, P::sgt, loop.getStep(), zero),
      arith::CmpIOp::create(b, loc, P::sle, loop.getStep(), stepLimit),
      arith::CmpIOp::create(b, loc, P::sge, loop.getLowerBound(), zero),
      arith::CmpIOp::create(b, loc, P::sge, loop.getUpperBound(), zero),
      arith::CmpIOp::create(b, loc, P::sle, loop.getLowerBound(), boundLimit),
      arith::CmpIOp::create(b, loc, P::sle, loop.getUpperBound(), boundLimit),
  };
  Value all = checks[0];
  for (Value check : ArrayRef<Value>(checks).drop_front())
    all = arith::AndIOp::create(b, loc, all, check);
  return all;
}

/// Replaces `loop` by `if (guard) { loop with tt.num_stages } else { loop }`.
static void versionLoop(scf::ForOp loop, int64_t numStages) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Value guard = boundsGuard(b, loc, loop, numStages);
  auto branch = scf::IfOp::create(b, loc, loop.getResultTypes(), guard,
                                    /*addThenBlock=*/true,
                                    /*addElseBlock=*/true);
  // The pipelined copy.
  OpBuilder thenBuilder = branch.getThenBodyBuilder();
  IRMapping mapping;
  auto pipelined = cast<scf::ForOp>(thenBuilder.clone(*loop, mapping));
  pipelined->setAttr(kNumStages, b.getI32IntegerAttr(numStages));
  scf::YieldOp::create(thenBuilder, loc, pipelined.getResults());
  // The original loop, moved into the other branch. `tt.num_stages = 1`
  // keeps it as Triton compiles it without the pass (loops without a dot are
  // not pipelined) and marks it decided, so a second run changes nothing.
  loop->replaceAllUsesWith(branch.getResults());
  loop->setAttr(kNumStages, b.getI32IntegerAttr(1));
  Block *elseBlock = branch.elseBlock();
  loop->moveBefore(elseBlock, elseBlock->end());
  OpBuilder elseBuilder = OpBuilder::atBlockEnd(elseBlock);
  scf::YieldOp::create(elseBuilder, loc, loop.getResults());
}

class PipelineStreamsPass
    : public mlir::triton_ext::impl::TritonExtPipelineStreamsBase<
          PipelineStreamsPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (numStages < 2 || numStages > 8) {
      module.emitError() << "nvidia_pipeline_streams: num-stages must be in "
                            "[2, 8], got "
                         << numStages;
      return signalPassFailure();
    }
    if (!mlir::triton_ext::mayTargetCudaAtLeast(module, kMinArch)) {
      if (remarks)
        module.emitRemark() << "nvidia_pipeline_streams: not applied: the "
                               "target is not cuda >= 90";
      return;
    }
    SmallVector<scf::ForOp> loops;
    module.walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) {
      std::string reason = notPipelinedReason(loop, numStages, maxPrefetchKb);
      if (reason.empty()) {
        versionLoop(loop, numStages);
        continue;
      }
      LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": not pipelined (" << reason
                              << "): " << loop.getLoc() << "\n");
      bool loads = false;
      loop.getBody()->walk([&](tt::LoadOp) { loads = true; });
      if (remarks && loads)
        loop.emitRemark() << "nvidia_pipeline_streams: not applied: "
                          << reason;
    }
  }
};

} // namespace

TRITON_EXT_REGISTER_PASS(nvidia_pipeline_streams, PipelineStreamsPass);
