//===- LoopSplitProfitability.h - Whether a legal split pays -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
// The profitability half of loop_split (issue 28). analyzeLoop says where a
// loop can be split; decideProfit says whether the split is worth it and, for
// a loop Triton will software-pipeline, which parts keep the pipeline. See
// LoopSplitProfitability.cpp for the model and the measurements behind it.
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_LOOPSPLIT_PROFITABILITY_H
#define TRITON_EXT_LOOPSPLIT_PROFITABILITY_H

#include "LoopSplitAnalysis.h"

#include <cstdint>
#include <optional>

namespace mlir::triton_ext::loop_split {

/// The pass options of the model.
struct ProfitOptions {
  /// Off: split wherever analyzeLoop allows (the behaviour before issue 28).
  bool enabled = true;
  /// Decline when the loop's bounds show that its unmasked parts run fewer
  /// than this many iterations.
  uint64_t minUnmaskedTrips = 3;
  /// Split a software-pipelined loop so that only its main part keeps the
  /// pipeline (the other parts get tt.num_stages = 1): one drain.
  bool singleDrain = false;
};

/// What a part of a profitable split keeps.
struct ProfitDecision {
  /// Null when the split pays; else why the loop is left alone.
  const char *declineReason = nullptr;
  /// The loop is one Triton software-pipelines (a tt.dot fed by loads of the
  /// body, not marked tt.num_stages <= 1): only `mainPart` keeps its stages.
  bool pipelined = false;
  /// Index among the emitted parts (low, mid, high order) of the part that
  /// keeps the pipeline when singleDrain is set.
  unsigned mainPart = 0;
};

/// Decides whether the split `plan` of `loop` pays (see the .cpp's model).
ProfitDecision decideProfit(scf::ForOp loop, const SplitPlan &plan,
                            const ProfitOptions &options);

/// The most iterations `loop` can run, when its bounds say (constant bounds,
/// or the remainder loop of Triton's loop_unroll); exposed for tests.
std::optional<int64_t> maxTripCount(scf::ForOp loop);

} // namespace mlir::triton_ext::loop_split

#endif // TRITON_EXT_LOOPSPLIT_PROFITABILITY_H
