//===- SanitizerUtils.h - Shared reporting for the sanitizer passes -------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// The sanitizer passes report the same way (issue 18): a per-program count of
// bad lanes; when it is non-zero, one atomic update per program of a per-site
// record in a device global of the kernel's module, which the host reads and
// prints (triton_ext.sanitizers). A device `tt.print` line (from the first
// program that reports the site, or from every program) is opt-in: the call,
// even never executed, costs registers in the whole kernel. In abort mode a
// scalar `tt.assert` that the count is zero follows.
// See README.md ("Reporting") for why this design.
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_SANITIZERS_UTILS_H
#define TRITON_EXT_SANITIZERS_UTILS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <string>

namespace mlir::triton_ext::sanitizers {

/// How a finding is reported.
enum class ReportMode { Record, Abort };

/// Which programs print a line for a site with findings.
enum class PrintMode {
  First, ///< one line per site, from the first program that reports it
  Every, ///< one line per program with findings (every thread prints it)
  None,  ///< no device line (default): the host prints from the records
};

/// How nan_inf_check decides, on the clean path, that a tile has nothing.
enum class FastPath {
  Peak,   ///< NaN-propagating max of |value|; count and first lane on a branch
  Count,  ///< (count, first lane) in one two-operand reduction, no branch
  Warp,   ///< (count, first lane) per warp, masked tensor atomics: no barrier
  Reload, ///< peak of |value|; the reporting branch reloads the stored tile
};

/// The reporting options shared by the checking passes.
struct ReportOptions {
  ReportMode mode = ReportMode::Record;
  PrintMode print = PrintMode::None;
  /// Update the per-site records (module globals, atomics). Off: only the
  /// per-program prints of `print=every` (what an IR interpreter can follow).
  bool records = true;
  /// nan_inf_check's fast path for stores of at most 64 elements per thread
  /// (record mode with records; grouped stores and abort mode: Peak).
  FastPath fastPath = FastPath::Count;
  /// With print=none, emitRecordsAtEnd updates the records before a return
  /// that follows a loop by atomics masked with `count > 0` instead of under
  /// an `scf.if` (nan_inf_check).
  bool maskedRecords = false;
  /// nan_inf_check: if set, each any-lane test of a tile (the peak, reload
  /// and group paths' maximum) is a per-thread flag and a reduction of it
  /// tagged for barrier_vote (kBarrierVoteTag), which numbers them from this
  /// counter.
  unsigned *votes = nullptr;
  /// With print=none, where emitReport's deferred records (a check in the
  /// kernel's entry block) go, if set: given the op at the builder's
  /// insertion point and the block's `tt.return`, the op of that block (at
  /// or before the return) in front of which they are updated, so that the
  /// count need not be carried across the loops up to the return
  /// (offset_overflow_check: in front of the next loop that holds no loaded
  /// tile). Unset: before the return.
  Operation *(*recordsAt)(Operation *at, Operation *ret) = nullptr;
};

/// The reporting options from the pass's `mode`, `print` and `records` (MLIR
/// parsed and checked each value against Passes.td's EnumOption values); emits
/// an error on `op` and returns nullopt for a combination the passes cannot
/// build (`passName` names the pass in the message).
std::optional<ReportOptions> makeReportOptions(Operation *op,
                                               StringRef passName,
                                               ReportMode mode, PrintMode print,
                                               bool records);

/// Prefix of the location name (`NameLoc`) nan_inf_check puts on the
/// reduction and the compare of an any-lane test, followed by the test's
/// number in the module. barrier_vote (llir stage) finds the lowered
/// reduction by it and replaces its cross-thread part with one barrier vote.
inline constexpr StringLiteral kBarrierVoteTag = "triton_ext.barrier_vote.";

/// Name of the module-level device global that holds the per-site records
/// (three i64 per site: lanes, programs, INT64_MAX - first index).
inline constexpr StringLiteral kCountersName = "triton_ext_sanitizer_counters";

/// Name of the module-level device global (constant bytes) that holds the
/// site table: the entries of `kSitesAttrName`, one per line, NUL-ended. The
/// host reads it from the loaded module, so the records describe themselves
/// whatever launcher loaded the cubin (Triton's, or Inductor's static one).
inline constexpr StringLiteral kSitesGlobalName = "triton_ext_sanitizer_sites";

/// Name of the module attribute that lists the sites, one string per site:
/// `pass|what|numel|kernel|file:line`, in the order of their records.
inline constexpr StringLiteral kSitesAttrName = "triton_ext.sanitizer_sites";

/// Name of the module attribute that says, per site (same order and length as
/// `kSitesAttrName`), why its check could not be proven away at compile time
/// and which test it costs: one short string per site, "" when unknown. A
/// separate array, not a sixth field of the entries, so that the site table
/// (and the device global built from it, which the host reads on every
/// report) keeps its format and size: the reason is a compile-time question,
/// answered from the IR (triton_ext.sanitizers.sites_of), not from the cubin.
/// Its name sorts after kSitesAttrName, so the printed module attributes
/// still start with the site table.
inline constexpr StringLiteral kSiteReasonsAttrName =
    "triton_ext.sanitizer_sites_reason";

/// `file:line` as siteOf, with the file's base name only (for reasons).
std::string shortSiteOf(Location loc);

/// The name Triton gave `value` (a `NameLoc` on its op or block argument:
/// the Python variable or kernel argument), or "".
std::string nameOf(Value value);

/// `items` joined by ", ", at most `keep` of them, then "+N more".
std::string joinShort(ArrayRef<std::string> items, size_t keep);

/// `file:line` of the innermost file location inside `loc` (callee first for
/// inlined code), or `unknown`.
std::string siteOf(Location loc);

/// Name of the `tt.func` enclosing `op`, or `unknown`.
std::string kernelNameOf(Operation *op);

/// The axis a full reduction of `type` reduces next: in TTGIR, an axis with
/// the fewest warps along it (the last such), so that the dimensions held
/// inside a warp are folded by registers and shuffles first and only the
/// partial results of the last step cross warps through shared memory
/// (reducing a 128x256 GEMM tile along its 8-warp axis first stored 256
/// partials per warp); axis 0 in TTIR, which has no layout.
unsigned nextReduceAxis(RankedTensorType type);

/// Number of true lanes of `bad` (i1 scalar or tensor of i1) as an i32
/// scalar, built with `arith.extui` and one `tt.reduce` (add) per dimension.
Value countTrue(OpBuilder &builder, Location loc, Value bad);

/// Sum of the lanes of `counts` (an i32 tensor) as an i32 scalar, one
/// `tt.reduce` (add) per dimension.
Value sumLanes(OpBuilder &builder, Location loc, Value counts);

/// Builds, at the builder's insertion point, the i1 value (scalar or tensor)
/// whose true lanes are the findings. Called only on the reporting path.
using LanesBuilder = function_ref<Value(OpBuilder &, Location)>;

/// Where and how a site reports.
struct ReportSite {
  StringRef pass; ///< e.g. `nan_inf_check`
  /// Enclosing tt.func; owned, since kernelNameOf returns a temporary that a
  /// StringRef would outlive (it did: a record naming garbage).
  std::string kernel;
  std::string site; ///< file:line
  StringRef what;   ///< e.g. `store non-finite`
  /// Why the check stays and what it costs (kSiteReasonsAttrName); "" when
  /// the pass does not say.
  std::string reason = {};
};

/// Emits the report for `count` (i32, the same in every thread of the
/// program) at the builder's insertion point:
///
///   scf.if count > 0 {                                   // uniform branch
///     record[site].lanes    += count        (atomic, one thread)
///     old = record[site].programs++         (atomic, one thread)
///     record[site].first    max= INT64_MAX - (pid * numel + first lane)
///     scf.if old == 0 && tid == 0 { tt.print "<prefix>" count }   // First
///   }
///   tt.assert count == 0, "<prefix>"                     // abort mode only
///
/// The records live in `kCountersName`, registered in `kSitesAttrName`;
/// `lanes` rebuilds the finding lanes for the first index (only on the
/// reporting path, so a clean program pays nothing for it).
void emitReport(OpBuilder &builder, Location loc, Value count,
                LanesBuilder lanes, const ReportSite &site,
                const ReportOptions &options);

/// Builds the finding count (i32 scalar) at the builder's insertion point;
/// called only on the reporting path.
using CountBuilder = function_ref<Value(OpBuilder &, Location)>;

/// Row-major index (i32 scalar) of the first true lane of `bad` (an i1 tensor
/// of rank 1 or 2), INT32_MAX when none is; null for other ranks. Built with
/// one `tt.reduce` (min) per dimension: call it on a reporting path.
Value firstTrueLane(OpBuilder &builder, Location loc, Value bad);

/// (count, first lane) of `bad` (an i1 tensor of rank 1 or 2) as two i32
/// scalars from one multi-operand reduction per dimension: the number of
/// true lanes and the row-major index of the first (INT32_MAX when none is);
/// {} for other ranks. Nothing of the tile is needed afterwards, so a caller
/// that reports from these two scalars keeps no tile live past them.
std::pair<Value, Value> countAndFirstLane(OpBuilder &builder, Location loc,
                                          Value bad);

/// The per-lane operands of a (count, first lane) reduction over `bad` (an
/// i1 tensor of rank 1 or 2): {bad as 0/1, the lane's row-major index where
/// bad else INT32_MAX}, two i32 tensors of `bad`'s shape; {} for other ranks.
/// Added and min-ed lane by lane, they accumulate several tiles of one type.
SmallVector<Value> countAndIndexLanes(OpBuilder &builder, Location loc,
                                      Value bad);

/// (sum of `counts`, min of `firsts`) over every lane (i32 tensors of one
/// type, as countAndIndexLanes gives) as two i32 scalars, from one
/// two-operand reduction per dimension.
std::pair<Value, Value> sumAndMinLanes(OpBuilder &builder, Location loc,
                                       Value counts, Value firsts);

/// One (add, minsi) reduction of the pair `values` (counts, firsts: i32
/// tensors of one type) along `axis`: (sum, min).
SmallVector<Value> reducePair(OpBuilder &builder, Location loc,
                              ArrayRef<Value> values, unsigned axis);

/// As emitReport, for a check whose fast path only decides whether anything
/// was found (`found`, i1, the same in every thread of the program): the
/// count is built by `counter` on the reporting path.
void emitReportWhen(OpBuilder &builder, Location loc, Value found,
                    CountBuilder counter, LanesBuilder lanes,
                    const ReportSite &site, const ReportOptions &options);

/// True if a loop containing a dot (`tt.dot`, `tt.dot_scaled`,
/// `ttng.warp_group_dot`) precedes `op` in its block: `op` is in the
/// epilogue of a GEMM or attention main loop.
bool followsDotLoop(Operation *op);

/// The `tt.return` ending the block of the builder's insertion point if that
/// block is a kernel's entry block, else null: where reports of checks at
/// the top level of the kernel update their records (see emitReportWhen).
Operation *entryReturnAt(OpBuilder &builder);

/// Before `ret` (the kernel's `tt.return`, where almost nothing is live, or
/// any op in a loop or branch for an update in place): when `count` (i32,
/// uniform over the program) is positive,
/// updates the site's record with it and `firstLane` (i32, row-major lane
/// of a tile of `numel`) and prints per `options` (record mode, records on).
/// Under `scf.if count > 0`, or, with `options.maskedRecords`, print=none
/// and a loop with a dot before `ret` (a `tt.return`), by atomics masked
/// with `count > 0` (no branch). With `inPlaceBeforeBranches` (print=none),
/// right at the builder's insertion point instead when a loop or branch
/// other than another site's records lies between it and `ret`: deferred,
/// (count, first) would stay live across that code (recordsInPlace).
void emitRecordsAtEnd(OpBuilder &builder, Location loc, Operation *ret,
                      Value count, Value firstLane, int64_t numel,
                      const ReportSite &site, const ReportOptions &options,
                      bool inPlaceBeforeBranches = false);

/// Where records deferred from the builder's insertion point to `ret` (the
/// kernel's `tt.return`, same block) go: `ret`, or the insertion point itself
/// when print=none and a loop or branch other than another site's records-only
/// `scf.if` lies in between (the rule emitRecordsAtEnd follows with
/// `inPlaceBeforeBranches`: deferred, the scalars would stay live across it).
Operation *deferredRecordsPoint(OpBuilder &builder, Operation *ret,
                                const ReportOptions &options);

/// Marks `op`, an `scf.if` that only updates records, so that the records of
/// later checks are still deferred past it (deferredRecordsPoint).
void markRecordsOnly(Operation *op);

/// Warp fast path: reduces `bad` (an i1 tensor with a distributed layout)
/// to one (count, first lane) pair per warp (per group of lanes held inside
/// one warp) without crossing warps, and updates the site's record with
/// masked tensor atomics, true only where a warp found something. A clean
/// warp executes only predicated-off atomics: no shared memory, no barrier,
/// no branch. The record's second slot then counts warp groups with findings
/// (`programs` is an upper bound of the programs). Returns false, having
/// built nothing, for layouts it does not handle (1-D blocked tiles with at
/// least one full warp row, and 2-D tiles whose warps all lie along one
/// axis are handled).
bool emitWarpRecords(OpBuilder &builder, Location loc, Value bad,
                     const ReportSite &site, const ReportOptions &options);

/// Marks `loop`, a loop the sanitizer built on a reporting path (a replay
/// of a checked loop's iterations, a walk over the blocks of a tile), as not
/// to be unrolled (`llvm.loop_annotation` with `unroll.disable`, which
/// Triton's lowering carries to the LLVM loop). A constant trip count would
/// otherwise be unrolled in full by LLVM, and ptxas sizes the kernel's
/// registers for its worst point, the never-taken reporting branch included
/// (FlagGems rotary embedding, two head loops of 32 and 8 iterations, six
/// replays: 22 -> 48 registers and an 8-byte stack frame, occupancy 16 -> 10
/// programs of 128 threads per SM).
void keepRolled(Operation *loop);

} // namespace mlir::triton_ext::sanitizers

#endif // TRITON_EXT_SANITIZERS_UTILS_H
