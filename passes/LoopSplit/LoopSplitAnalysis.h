//===- LoopSplitAnalysis.h - Where and whether to split a loop -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
// The analysis half of loop_split: reads an `scf.for` and decides, without
// creating or changing any IR, whether it can be split on a comparison of its
// induction variable and into which parts. LoopSplit.cpp only builds what the
// returned plan describes. See LoopSplitAnalysis.cpp for the model and the
// reasons each decision is legal.
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_LOOPSPLIT_ANALYSIS_H
#define TRITON_EXT_LOOPSPLIT_ANALYSIS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace mlir::triton_ext::loop_split {

/// Constants and make_range bounds beyond this magnitude are refused.
constexpr int64_t kMaxOffset = int64_t(1) << 40;
/// Bound on lb, ub and invariants of an i64 loop whose iv side also holds an
/// invariant, checked at run time (sums of such values cannot wrap in i64).
constexpr int64_t kMaxI64Runtime = int64_t(1) << 60;

/// A condition on a loop-invariant scalar under which an AffineRange holds:
/// value >= bound (atMost false) or value <= bound; checked by the guard.
struct Requirement {
  Value value;
  int64_t bound = 0;
  bool atMost = false;
};

/// One side of a comparison: [iv] + [inv] + [lo, hi], elementwise, valid
/// when every requirement holds (issue 17: `offs_m // num_queries_per_kv`
/// with a run-time divisor needs it to be positive).
struct AffineRange {
  bool hasIv = false;
  Value inv; // Loop-invariant scalar, or null for zero.
  int64_t lo = 0, hi = 0;
  SmallVector<Requirement, 1> requirements;
  /// The iv's coefficient (issue 17: `j * TILE_SIZE + offs_t` in paged and
  /// vLLM-style loops); 1 unless hasIv and multiplied by a constant.
  int64_t ivScale = 1;
};

/// The comparison a loop is split on, normalized so that the iv is on the
/// left. With C = inv(other) - inv(iv) and s = ivSide.ivScale, the comparison
/// is `lowValue` on every element for iv < ceil((C + k1) / s) and `!lowValue`
/// for iv >= ceil((C + k2) / s) (k1 <= k2).
struct Comparison {
  arith::CmpIOp cmp;
  AffineRange ivSide, otherSide;
  int64_t k1 = 0, k2 = 0;
  bool lowValue = false;
  bool isUnsigned = false;
  /// When the split points' position on the iteration lattice is known
  /// (power-of-two step, lb, A and B multiples of it plus constants), the
  /// offsets k1 <= k1Lattice < k1 + step (and k2Lattice) such that
  /// B - A + kLattice is the first iteration at or after B - A + k. The part
  /// bounds are then clamps of B - A + kLattice, with no division, and the end
  /// of one part is the start of the next (issue 17: the rounded start of the
  /// diagonal loop cost registers, and hid its trip count from LLVM).
  std::optional<int64_t> k1Lattice, k2Lattice;
  /// For i32 loops: B = pointBase + pointShift (B computed by the kernel as
  /// `X - c`, e.g. `diag = start_m * BLOCK_M - BLOCK_N + 1`), where every X
  /// for which the kernel's X - c wraps leaves the loop empty; the split
  /// points are then computed from X (see analyzeLoop).
  Value pointBase;
  int64_t pointShift = 0;
};

/// One conjunct of the run-time guard, on mathematical (unbounded) values:
///   sum(terms) + offset <= bound   (atMost)
///   sum(terms) + offset >= bound   (!atMost)
/// Terms have the iv type. A check with one term compares that term with the
/// constant bound - offset, which the analysis has checked fits the iv type.
/// A check with several terms is evaluated in i64: exact for i32 loops
/// (terms sign-extended), and for i64 loops it only appears together with
/// checks that bound every term by kMaxI64Runtime, so its sum cannot wrap
/// whenever the other checks hold.
struct GuardCheck {
  SmallVector<Value, 3> terms;
  int64_t offset = 0;
  int64_t bound = 0;
  bool atMost = false;
};

/// The decision for one loop. Parts, in order, all with the original step:
///   low  [lb, lowEnd)          every comparison folded to its `lowValue`
///   mid  [midStart, midEnd)    original comparisons kept
///   high [highStart, ub)       every comparison folded to `!lowValue`
/// With several comparisons (issue 17: the causal mask AND-ed with
/// `start_n + offs_n < seq_len`), low ends at the smallest P1 and high starts
/// at the largest P2, where all of them are known. A part whose flag is false
/// is not emitted; LoopSplitAnalysis.cpp explains why the emitted parts run
/// exactly the original iterations, in order.
struct SplitPlan {
  /// The comparisons folded in the known parts; the first is the one the
  /// single-comparison plan of issue 4 would use.
  SmallVector<Comparison, 2> comparisons;
  int64_t step = 1;
  /// Conjuncts of the guard that are not known at compile time; empty when
  /// the guard is known to hold.
  SmallVector<GuardCheck, 4> guard;
  /// The comparison has a band of unknown iterations (k1 != k2).
  bool hasBand = false;
  /// A part keeps the comparison: there is a band, or the guard may fail and
  /// then every iteration must run there.
  bool needMid = false;
  /// The low (high) part is known to hold no iteration whatever the guard
  /// gives; the neighbouring part then starts at lb (ends at ub).
  bool lowEmpty = false, highEmpty = false;
  bool lowPart = false, midPart = false, highPart = false;
  /// Every comparison's k1Lattice (k2Lattice) is known: the minimum (maximum)
  /// of lattice points is a lattice point, so no rounding is needed.
  bool lowOnLattice = false, highOnLattice = false;

  unsigned numParts() const {
    return unsigned(lowPart) + unsigned(midPart) + unsigned(highPart);
  }

  /// For a plan of a low and a high part: the high part keeps the
  /// comparisons instead (it becomes the middle part, running to ub), so a
  /// run-time guard has a part to send every iteration to when it fails.
  void keepComparisonsInHighPart() {
    needMid = midPart = true;
    highPart = false;
    highEmpty = true;
  }
};

/// The pass options that bound what a split may cost.
struct SplitLimits {
  /// Most loops one loop is split into (2 or 3).
  unsigned maxParts = 3;
  /// Loops whose body holds a tensor with more elements are left alone
  /// (0: no limit); see analyzeLoop.
  uint64_t maxTileElements = 32768;
  /// Loops whose every folded comparison is a tail mask (`iv + [lo, hi] <
  /// ub`, the loop's own bound) and whose step exceeds this are left alone
  /// (0: no limit); see analyzeLoop.
  uint64_t maxTailStep = 16384;
};

/// Decides whether and how to split `loop` into at most `maxParts` (2 or 3)
/// parts. On failure `reason` says why the loop is left alone. Creates and
/// changes no IR.
FailureOr<SplitPlan> analyzeLoop(scf::ForOp loop, const SplitLimits &limits,
                                 const char *&reason);

} // namespace mlir::triton_ext::loop_split

#endif // TRITON_EXT_LOOPSPLIT_ANALYSIS_H
