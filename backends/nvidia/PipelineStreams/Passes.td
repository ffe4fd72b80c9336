//===- Passes.td - Software-pipeline streaming loops -------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_NVIDIA_PIPELINE_STREAMS_PASSES
#define TRITON_EXT_NVIDIA_PIPELINE_STREAMS_PASSES

include "triton-ext/PassOptions.td"

def TritonExtPipelineStreams
    : Pass<"triton-ext-nvidia-pipeline-streams", "mlir::ModuleOp"> {
  let summary = "Ask Triton's software pipeliner to prefetch the loads of "
                "read-only loops without a dot, behind a bounds guard";
  let description = [{
    Triton's pipeliner prefetches the loads that feed a `tt.dot` with
    `cp.async`, `num_stages - 1` iterations ahead. The loads of a loop without
    a dot (a row reduction over a long row, a decode attention written with
    `tl.sum`, a cross entropy over the vocabulary) are only pipelined when the
    author writes `tl.range(..., num_stages=N)`. This pass writes it for them:
    an innermost `scf.for` that contains a tensor load, no dot, no nested loop,
    no operation that writes memory (or may), and no `tt.num_stages` of its
    own gets `tt.num_stages = N`.

    The pipelined loop evaluates `lb + k * step` and `ub - k * step` for
    `k < N`, which wrap in the induction variable's integer type near its
    limits. The pass therefore versions the loop: the pipelined copy runs when
    `0 < step <= MAX / N` and both bounds lie in `[0, MAX - N * step]`; any
    other loop (negative or huge bounds, a reversed range near the limits, a
    zero step) runs the original loop, unchanged.

    Before:

    ```mlir
    %r = scf.for %i = %lb to %ub step %c1024 iter_args(%acc = %zero) -> (tensor<1024xf32>) : i32 {
      %x = tt.load %p, %m : tensor<1024x!tt.ptr<f32>>
      ...
    }
    ```

    After:

    ```mlir
    %ok = ... 0 <= %lb, %ub <= MAX - 3 * 1024 ...
    %r = scf.if %ok -> (tensor<1024xf32>) {
      %p = scf.for ... { ... } {tt.num_stages = 3 : i32}
      scf.yield %p : tensor<1024xf32>
    } else {
      %o = scf.for ... { ... }   // the original loop
      scf.yield %o : tensor<1024xf32>
    }
    ```

    Modules whose `ttg.target` names another backend or a CUDA arch below 90
    are left alone (at the ttir stage there is no such attribute; registry.yaml
    restricts the pass to cuda >= 90).
  }];
  let options = [
    RangeOption<"numStages", "num-stages", "int", /*default=*/"3",
                "The pipeline depth written on each loop: the loads run "
                "num-stages - 1 iterations ahead.", /*min=*/2, /*max=*/8>,
    RangeOption<"maxPrefetchKb", "max-prefetch-kb", "int", /*default=*/"48",
                "Leave a loop alone when its prefetch buffers ((num-stages - 1) "
                "copies of every tensor it loads) would take more shared "
                "memory than this many KiB: measured on the H200, 66-131 KiB "
                "of buffers made decode attention and cross entropy 18-26% "
                "slower, and 256 KiB does not fit.", /*min=*/1, /*max=*/228>,
    RemarksOption<"loop the pass leaves alone, on the loop (or on the "
                  "module)">,
  ];
  let dependentDialects = ["mlir::triton::TritonDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect"];
}

def TritonExtPipelineDots
    : Pass<"triton-ext-nvidia-pipeline-dots", "mlir::ModuleOp"> {
  let summary = "Software-pipeline the dot loops of kernels compiled with "
                "num_stages = 1, behind a bounds guard";
  let description = [{
    A kernel launched with `num_stages=1` gets no software pipelining: each
    iteration of its dot loops waits for its own loads. Attention kernels
    written for GPUs with less shared memory than Hopper's often do that
    (SGLang's extend and prefill attention, vLLM's prefix prefill launch with
    `num_stages=1` on every CUDA GPU). This pass asks Triton's pipeliner to
    prefetch their loads: an innermost read-only `scf.for` that holds a dot,
    in a kernel compiled with `num_stages < 2`, gets `tt.num_stages = N`, as
    `tl.range(..., num_stages=N)` would write. Kernels compiled with
    `num_stages >= 2` are left alone: Triton pipelines their dot loops already.

    The pass cannot see the kernel's `num_stages` in the IR: the loader passes
    it as `kernel-num-stages` (registry `compile_options`). The loop is
    versioned on the same bounds guard as nvidia_pipeline_streams, so bounds
    near the integer limits run the original loop.
  }];
  let options = [
    MinOption<"kernelNumStages", "kernel-num-stages", "int", /*default=*/"0",
              "The num_stages the kernel is compiled with, set by the "
              "loader from Triton's compile options; 0 (unknown) leaves "
              "every loop alone.", /*min=*/0>,
    RangeOption<"numStages", "num-stages", "int", /*default=*/"2",
                "The pipeline depth written on each loop: the loads run "
                "num-stages - 1 iterations ahead.", /*min=*/2, /*max=*/8>,
    RangeOption<"maxPrefetchKb", "max-prefetch-kb", "int", /*default=*/"128",
                "Leave a loop alone when its prefetch buffers ((num-stages - 1) "
                "copies of every tensor it loads) would take more shared "
                "memory than this many KiB (the H200 has 227 KiB per block, "
                "which the dot operands share).", /*min=*/1, /*max=*/228>,
    RemarksOption<"loop the pass leaves alone, on the loop (or on the "
                  "module)">,
  ];
  let dependentDialects = ["mlir::triton::TritonDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect"];
}

def TritonExtPipelineDeeper
    : Pass<"triton-ext-nvidia-pipeline-deeper", "mlir::ModuleOp"> {
  let summary = "Give the dot loops of kernels compiled with num_stages >= 2 "
                "a deeper software pipeline, behind a bounds guard";
  let description = [{
    Kernels choose `num_stages` for the GPU their authors tuned on. On a GPU
    with more memory bandwidth, `num_stages - 1` loads in flight may not cover
    the memory latency. This pass writes `tt.num_stages = num_stages +
    extra-stages` on each innermost read-only dot loop of a kernel compiled
    with `num_stages >= 2`, as `tl.range(..., num_stages=N)` would, so that
    Triton's pipeliner issues each loop's loads further ahead. The dots
    combine the same values in the same order: outputs are bit-identical.

    The pass cannot see the kernel's `num_stages` in the IR: the loader passes
    it as `kernel-num-stages` (registry `compile_options`); 0 (unknown) and 1
    (nvidia_pipeline_dots' kernels) leave the module alone. The loop is
    versioned on the bounds guard of nvidia_pipeline_streams; the other
    branch keeps the original loop at the kernel's own depth.

    Before (a kernel compiled with num_stages=3):

    ```mlir
    %r = scf.for %k = %c0 to %K step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
      %a = tt.load %pa : tensor<128x64x!tt.ptr<f16>>
      %b = tt.load %pb : tensor<64x128x!tt.ptr<f16>>
      %d = tt.dot %a, %b, %acc : ...
      scf.yield %d : tensor<128x128xf32>
    }
    ```

    After (`canonicalize` has folded the checks of the constant bounds):

    ```mlir
    %ok = ... %K <= MAX - 4 * 64 ...
    %r = scf.if %ok -> (tensor<128x128xf32>) {
      %p = scf.for ... { ... } {tt.num_stages = 4 : i32}
      scf.yield %p : tensor<128x128xf32>
    } else {
      %o = scf.for ... { ... } {tt.num_stages = 3 : i32}
      scf.yield %o : tensor<128x128xf32>
    }
    ```
  }];
  let options = [
    MinOption<"kernelNumStages", "kernel-num-stages", "int", /*default=*/"0",
              "The num_stages the kernel is compiled with, set by the "
              "loader from Triton's compile options; 0 (unknown) and 1 "
              "leave every loop alone.", /*min=*/0>,
    RangeOption<"extraStages", "extra-stages", "int", /*default=*/"1",
                "How many stages to add to the kernel's num_stages (the "
                "result is capped at 8).", /*min=*/1, /*max=*/6>,
    RangeOption<"maxPrefetchKb", "max-prefetch-kb", "int", /*default=*/"160",
                "Leave a loop alone when its prefetch buffers at the new "
                "depth ((depth - 1) copies of every tensor it loads) would "
                "take more shared memory than this many KiB (the H200 has "
                "227 KiB per block; a variant that still does not fit fails "
                "at its first launch, and the transparent mode drops it).",
                /*min=*/1, /*max=*/228>,
    RemarksOption<"loop the pass leaves alone, on the loop (or on the "
                  "module)">,
  ];
  let dependentDialects = ["mlir::triton::TritonDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect"];
}

#endif // TRITON_EXT_NVIDIA_PIPELINE_STREAMS_PASSES
