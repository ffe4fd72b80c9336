//===- PipelineDeeper.cpp - One more pipeline stage for dot loops ---------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Kernels pick their `num_stages` for the GPU their authors tuned on, often
// one with less shared memory or less memory bandwidth than an H200: the
// loads of a dot loop then run `num_stages - 1` iterations ahead, which may
// be too few to cover the H200's memory latency at its bandwidth. This pass
// writes `tt.num_stages = num_stages + extra-stages` on the dot loops of a
// kernel compiled with `num_stages >= 2` (what `tl.range(...,
// num_stages=N)` writes), so Triton's pipeliner keeps more copies in
// flight. It is a candidate for the transparent mode, which keeps it only
// where it wins on the GPU, launched as the user launches the kernel
// (GitHub issue 27: passes for the GPU-bound kernels the mode sees).
//
// Kernels compiled with `num_stages = 1` are nvidia_pipeline_dots' (which
// starts their pipelining); this pass leaves them alone, as it does when the
// kernel's num_stages is unknown (0: the loader hands it over as the option
// `kernel-num-stages`, registry.yaml `compile_options`).
//
// A loop qualifies under the conditions of nvidia_pipeline_dots: an
// innermost `scf.for` with a signed compare that holds a dot and a tensor
// load that is not volatile, has no `tt.num_stages` (the author's choice
// wins) and no `tt_latency`, writes no memory, and whose prefetch buffers at
// the new depth fit in max-prefetch-kb.
//
// Why this is legal: PipelinedLoop.cpp. A deeper pipeline moves the same
// loads one iteration further ahead; the dots combine the same values in the
// same order. The loop is versioned: bounds on which the pipeliner's
// `lb + k * step` or `ub - k * step` could wrap for the new depth run the
// original loop at the kernel's own depth, exactly as without the pass.
//
//===----------------------------------------------------------------------===//

#include "PipelinedLoop.h"
#include "triton-ext/PassInfra.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

#include <algorithm>

namespace mlir::triton_ext {
#define GEN_PASS_DECL_TRITONEXTPIPELINEDEEPER
#define GEN_PASS_DEF_TRITONEXTPIPELINEDEEPER
#include "Passes.h.inc"
} // namespace mlir::triton_ext

using namespace mlir;
using namespace mlir::triton_ext::pipelining;

namespace {

class PipelineDeeperPass
    : public mlir::triton_ext::impl::TritonExtPipelineDeeperBase<
          PipelineDeeperPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    int64_t depth =
        std::min<int64_t>(kernelNumStages + extraStages, kMaxNumStages);
    if (failed(pipelineModule(getOperation(), "nvidia_pipeline_deeper",
                              kernelReason(), /*withDot=*/true, depth,
                              maxPrefetchKb, remarks,
                              /*originalStages=*/kernelNumStages)))
      signalPassFailure();
  }

private:
  /// Why no loop of this kernel is deepened, or an empty string.
  std::string kernelReason() const {
    if (kernelNumStages == 0)
      return "the kernel's num_stages is unknown (kernel-num-stages=0; the "
             "loader sets it from the compile options)";
    if (kernelNumStages == 1)
      return "the kernel is compiled with num_stages=1, so its dot loops are "
             "not pipelined at all (nvidia_pipeline_dots is the pass for "
             "those)";
    if (kernelNumStages >= kMaxNumStages)
      return "the kernel is compiled with num_stages=" +
             std::to_string(kernelNumStages) + ", the deepest pipeline (" +
             std::to_string(kMaxNumStages) + ") the pass writes";
    return "";
  }
};

} // namespace

TRITON_EXT_REGISTER_PASS(nvidia_pipeline_deeper, PipelineDeeperPass);
