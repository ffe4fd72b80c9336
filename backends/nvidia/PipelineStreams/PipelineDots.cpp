//===- PipelineDots.cpp - Pipeline the dot loops of unpipelined kernels ----===//
//
// SPDX-License-Identifier: Apache-2.0
//
// A kernel compiled with `num_stages = 1` gets no software pipelining: every
// iteration of its dot loops issues its loads and waits for them before the
// dot. Attention kernels written for GPUs with less shared memory than
// Hopper's are often launched that way on every GPU (SGLang's extend and
// prefill attention, vLLM's prefix prefill). On an H200 the shared memory
// for a second stage is there, and the loads of iteration i + 1 can overlap
// the dots of iteration i. This pass writes `tt.num_stages = N` (what
// `tl.range(..., num_stages=N)` writes) on their dot loops, and Triton's
// pipeliner does the rest (GitHub issue 27: a pass for the GPU-bound
// kernels the transparent mode sees).
//
// The IR does not say with which num_stages the kernel is compiled; the
// loader hands it over as the option `kernel-num-stages` (registry.yaml
// `compile_options`), and the pass does nothing when it is unknown (0) or at
// least 2 (Triton pipelines those dot loops already, at the author's depth).
//
// A loop qualifies when it is an innermost `scf.for` with a signed compare
// that holds a dot and a tensor load that is not volatile, has no
// `tt.num_stages` (the author's choice wins) and no `tt_latency` on its ops,
// no operation in it writes memory or has unknown memory effects, and its
// prefetch buffers fit in max-prefetch-kb.
//
// Why this is legal: PipelinedLoop.cpp (shared with nvidia_pipeline_streams).
// Triton's pipeliner reorders nothing but the loads, and the loop is
// versioned so that bounds near the integer limits run it unpipelined.
//
//===----------------------------------------------------------------------===//

#include "PipelinedLoop.h"
#include "triton-ext/PassInfra.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

namespace mlir::triton_ext {
#define GEN_PASS_DECL_TRITONEXTPIPELINEDOTS
#define GEN_PASS_DEF_TRITONEXTPIPELINEDOTS
#include "Passes.h.inc"
} // namespace mlir::triton_ext

using namespace mlir;
using namespace mlir::triton_ext::pipelining;

namespace {

class PipelineDotsPass
    : public mlir::triton_ext::impl::TritonExtPipelineDotsBase<
          PipelineDotsPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    if (failed(pipelineModule(getOperation(), "nvidia_pipeline_dots",
                              kernelReason(), /*withDot=*/true, numStages,
                              maxPrefetchKb, remarks)))
      signalPassFailure();
  }

private:
  /// Why no loop of this kernel is pipelined, or an empty string.
  std::string kernelReason() const {
    if (kernelNumStages == 0)
      return "the kernel's num_stages is unknown (kernel-num-stages=0; the "
             "loader sets it from the compile options)";
    if (kernelNumStages >= 2)
      return "the kernel is compiled with num_stages=" +
             std::to_string(kernelNumStages) +
             ", so Triton pipelines its dot loops already";
    return "";
  }
};

} // namespace

TRITON_EXT_REGISTER_PASS(nvidia_pipeline_dots, PipelineDotsPass);
