//===- RangeAnalysis.h - Integer ranges shared by the passes -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
// What the passes know about the values of integer SSA values, in one place
// (issue 30): loop_split's no-wrap guard and offset_overflow_check's proofs
// read the same facts.
//
//   - Interval: a closed interval of mathematical integers with int64 bounds
//     and overflow-aware arithmetic (exact, or nothing when a bound leaves
//     int64; or saturating, for questions about narrower types).
//   - The facts a kernel states or Triton guarantees: the one reader of
//     `triton_ext_range.assume_range` (dialects/RangeFactsIR: the op lives in
//     another plugin, so it is matched by name here and nowhere else),
//     `llvm.intr.assume` comparisons in a kernel's entry block, and the grid
//     limits of `tt.get_program_id` / `tt.get_num_programs`.
//   - IntegerRanges: MLIR's IntegerRangeAnalysis (mlir/Analysis/DataFlow) over
//     a whole module, with those facts as its input: `assume_range` narrows
//     its operand's range, and Triton's range-producing ops (program ids,
//     `tt.make_range`, shape ops) get transfer functions. It bounds the
//     values a program actually holds (iN, wrapping), so it answers "what can
//     this scalar be"; it cannot say whether a wrap happened (a sum that may
//     wrap is the full range), which is why offset_overflow_check keeps its
//     exact-tree intervals (OffsetOverflowAnalysis.cpp) on top of these facts.
//
// Built as a static library (libTritonExtRangeAnalysis.a, infra/CMakeLists.txt)
// linked into every plugin: each plugin gets a private copy of what it uses.
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_RANGEANALYSIS_H
#define TRITON_EXT_RANGEANALYSIS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <memory>
#include <optional>

namespace mlir {
class DataFlowSolver;
} // namespace mlir

namespace mlir::triton_ext::range {

/// Name of the op of dialects/RangeFactsIR that states a value's range.
inline constexpr StringLiteral kAssumeRangeOpName =
    "triton_ext_range.assume_range";

/// A closed interval [lo, hi] of mathematical integers, lo <= hi.
struct Interval {
  int64_t lo = 0, hi = 0;

  static Interval point(int64_t v) { return {v, v}; }
  /// The signed range of iN (1 <= bits <= 64; wider widths give int64's).
  static Interval full(unsigned bits);

  bool within(Interval o) const { return lo >= o.lo && hi <= o.hi; }
  /// Every value fits the signed range of iN.
  bool fitsSigned(unsigned bits) const { return within(full(bits)); }
  /// The intersection (may be empty, lo > hi, when the facts contradict).
  Interval meet(Interval o) const;
  /// The smallest interval holding both.
  Interval join(Interval o) const;

  /// Exact interval arithmetic: the bounds of {x op y | x in a, y in b}, or
  /// nullopt when a bound leaves int64.
  static std::optional<Interval> add(Interval a, Interval b);
  static std::optional<Interval> sub(Interval a, Interval b);
  static std::optional<Interval> mul(Interval a, Interval b);

  /// The same bounds, each clamped to int64. A clamped bound lies at an
  /// int64 extreme, outside the signed range of every narrower type, so
  /// `fitsSigned(bits < 64)` of the result is still a proof.
  static Interval addSat(Interval a, Interval b);
  static Interval subSat(Interval a, Interval b);
  static Interval mulSat(Interval a, Interval b);
};

/// The interval a `triton_ext_range.assume_range` op states about every
/// element of its result (its `lo` and `hi` attributes, signed), or nullopt
/// if `op` is not one.
std::optional<Interval> assumedRange(Operation *op);

/// The operand an `assume_range` op states its fact about, or null if `op`
/// is not one.
Value assumedValue(Operation *op);

/// `full` narrowed by every `llvm.intr.assume(arith.cmpi pred, value, C)` (or
/// `C pred value`; C an integer constant or splat) in the entry block of a
/// `tt.func`: such an assume runs on every execution, so its promise holds
/// wherever `value` is used (`tl.assume(x < c)` and friends).
Interval entryAssumedRange(Value value, Interval full);

/// An integer constant or integer splat constant, sign-extended; nullopt for
/// anything else.
std::optional<int64_t> constantOf(Value value);

/// Which grid limits bound program ids and counts.
enum class GridLimits {
  /// CUDA's: x < 2^31 - 1, y and z < 65535.
  Cuda,
  /// Any backend's: every axis below 2^31 - 1.
  Any,
};

/// The range of `tt.get_program_id` ([0, max - 1]) or `tt.get_num_programs`
/// ([1, max]) under `limits`, or nullopt for any other op.
std::optional<Interval> gridRange(Operation *op, GridLimits limits);

/// Sound signed bounds of the values integer SSA values hold at run time,
/// from MLIR's IntegerRangeAnalysis over `root` (a module, or a function)
/// with the facts above as input (GridLimits::Any). Computed once, when
/// constructed: query it only while the IR it analyzed is unchanged (a value
/// created later has no bounds; an erased one must not be asked about).
class IntegerRanges {
public:
  explicit IntegerRanges(Operation *root);
  ~IntegerRanges();
  IntegerRanges(const IntegerRanges &) = delete;
  IntegerRanges &operator=(const IntegerRanges &) = delete;

  /// Signed bounds of every element `value` (an integer or a tensor of
  /// integers, at most 64 bits) can hold, or nullopt when the analysis has
  /// nothing (not analyzed, unreachable, or the solver failed).
  std::optional<Interval> signedRange(Value value) const;

private:
  std::unique_ptr<DataFlowSolver> solver;
  bool ok = false;
};

} // namespace mlir::triton_ext::range

#endif // TRITON_EXT_RANGEANALYSIS_H
