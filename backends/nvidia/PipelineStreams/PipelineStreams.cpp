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
// Why this is legal: PipelinedLoop.cpp (shared with nvidia_pipeline_dots).
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

#include "PipelinedLoop.h"
#include "triton-ext/PassInfra.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

namespace mlir::triton_ext {
#define GEN_PASS_DECL_TRITONEXTPIPELINESTREAMS
#define GEN_PASS_DEF_TRITONEXTPIPELINESTREAMS
#include "Passes.h.inc"
} // namespace mlir::triton_ext

using namespace mlir;
using namespace mlir::triton_ext::pipelining;

namespace {

class PipelineStreamsPass
    : public mlir::triton_ext::impl::TritonExtPipelineStreamsBase<
          PipelineStreamsPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    if (failed(pipelineModule(getOperation(), "nvidia_pipeline_streams",
                              /*kernelReason=*/"", /*withDot=*/false,
                              numStages, maxPrefetchKb, remarks)))
      signalPassFailure();
  }
};

} // namespace

TRITON_EXT_REGISTER_PASS(nvidia_pipeline_streams, PipelineStreamsPass);
