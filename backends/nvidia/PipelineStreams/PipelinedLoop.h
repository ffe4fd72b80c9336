//===- PipelinedLoop.h - What both pipelining passes share ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
// nvidia_pipeline_streams (loops without a dot), nvidia_pipeline_dots (dot
// loops of kernels compiled with num_stages = 1) and nvidia_pipeline_deeper
// (dot loops of kernels compiled with num_stages >= 2) all ask Triton's
// software pipeliner to prefetch a loop's loads by writing `tt.num_stages` on
// it. They
// share the conditions under which that is legal and the bounds guard that
// keeps the original loop where the pipeliner's own arithmetic would wrap.
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_NVIDIA_PIPELINE_STREAMS_PIPELINED_LOOP_H
#define TRITON_EXT_NVIDIA_PIPELINE_STREAMS_PIPELINED_LOOP_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace mlir::triton_ext::pipelining {

/// The deepest pipeline pipelineLoops writes.
constexpr int64_t kMaxNumStages = 8;

/// Writes `tt.num_stages = numStages` on every loop of `module` that may be
/// pipelined, behind a guard. A loop may be pipelined when it is an innermost,
/// signed, read-only loop that loads a tensor, holds a dot exactly when
/// `withDot`, has no `tt.num_stages`, no `tt_latency` and no volatile load,
/// and whose prefetch buffers ((numStages - 1) copies of every tensor it
/// loads) fit in `maxPrefetchKb` KiB. Each such loop is replaced by
/// `if (guard) { loop with tt.num_stages = numStages } else { loop with
/// tt.num_stages = originalStages }` (the depth Triton compiles it at without
/// the pass), where the guard (`0 < step <= MAX / numStages`, both
/// bounds in `[0, MAX - numStages * step]`) admits only loops on which no
/// `lb + k * step`, `ub - k * step` or `ub + k * step` with `k <= numStages`
/// wraps. With `remarks`, each other loop that loads gets the remark
/// `<passName>: not applied: <reason>`. Fails, with an error on the module,
/// when `numStages` is not in [2, kMaxNumStages] (a depth of 1 pipelines
/// nothing) or not above `originalStages`.
LogicalResult pipelineLoops(ModuleOp module, llvm::StringRef passName,
                            bool withDot, int64_t numStages,
                            int64_t maxPrefetchKb, bool remarks,
                            int64_t originalStages = 1);

/// What each pipelining pass runs on its module: nothing when the module may
/// target something other than CUDA sm_90 or newer (the oldest the passes were
/// measured on), or when `kernelReason` (the pass's own reason to leave this
/// kernel alone) is not empty, with the remark `<passName>: not applied:
/// <reason>` on the module under `remarks`; pipelineLoops otherwise.
LogicalResult pipelineModule(ModuleOp module, llvm::StringRef passName,
                             llvm::StringRef kernelReason, bool withDot,
                             int64_t numStages, int64_t maxPrefetchKb,
                             bool remarks, int64_t originalStages = 1);

} // namespace mlir::triton_ext::pipelining

#endif // TRITON_EXT_NVIDIA_PIPELINE_STREAMS_PIPELINED_LOOP_H
