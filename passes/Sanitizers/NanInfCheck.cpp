//===- NanInfCheck.cpp - Report NaN/Inf values at stores and dots
//----------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Kernel bugs that write NaN or Inf finish without an error. This pass counts,
// per program, the non-finite lanes of every float value written by
// `tt.store` / `tt.descriptor_store` (lanes under the store's mask only:
// masked-off lanes are never written) and reports a non-zero count with the
// kernel name and the store's source line (GitHub issue 7).
//
// Non-finite test: `cmpf ueq |v|, +inf` is true exactly for NaN (unordered)
// and +-Inf. With `check-dots`, results of dots are checked too: a `tt.dot`
// outside any loop, and a dot accumulator carried by an `scf.for` once,
// after the loop (never inside it). Accumulation keeps NaN and Inf non-finite
// (Inf + finite = Inf, Inf - Inf = NaN), so the final accumulator shows any
// non-finite dot result of any iteration without a check inside the loop.
// An async `ttng.warp_group_dot` result is only valid after its
// `ttng.warp_group_dot_wait`, so the value checked is the wait's result.
//
// Which lanes of a dot result are checked: only those some store writes.
// Lanes of a dot result that come from masked-off load lanes (rows >= M of
// A, columns >= N of B) hold undefined values in a correct kernel -- NaN when
// masked_load_poison gave those loads a NaN `other` -- and are never stored.
// Counting them reported a clean GEMM on the H200 (every lane outside the
// M x N bounds, 15448 of 16384 in the corner tile). So the dot result is
// followed through lane-preserving users (elementwise ops of the same shape,
// layout conversions) to the `tt.store`s that write it, and the count is
// taken under the union of their masks, converted to the dot's layout, right
// before the last of those stores. A dot result that reaches no store this
// way is not checked: what it contributes to memory goes through other
// stores, which are checked themselves.
//
// Legality: the inserted ops only read values; the kernel's stores and
// results are unchanged. The pass runs at the end of make_ttgir, after
// software pipelining, so it cannot stop loads from being pipelined.
//
// Declines: element types other than f16/bf16/f32/f64 (fp8 compares are not
// lowered everywhere), stores inside `ttg.warp_specialize` partitions (their
// warps cannot run the cross-warp reduction), dots inside loops whose result
// is not the loop-carried accumulator (e.g. attention's QK^T), and dot
// results that reach no `tt.store` through lane-preserving ops (or whose
// stores sit in different blocks).
//
// Each site says why its check stays (`triton_ext.sanitizer_sites_reason`,
// issue 18): where the checked value may become non-finite
// (collectNonFiniteSources; for a dot check, the op that may hide it before
// its store) and the fast path with its elements per thread.
//
//===----------------------------------------------------------------------===//

#include "triton-ext/PassInfra.h"

#include "SanitizerUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "triton/Dialect/Triton/IR/Dialect.h"
#include "triton/Dialect/TritonGPU/IR/Dialect.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#include <cmath>
#include <functional>
#include <optional>

#define DEBUG_TYPE "triton-ext-nan-inf-check"

namespace mlir::triton_ext {
#define GEN_PASS_DECL_TRITONEXTNANINFCHECK
#define GEN_PASS_DEF_TRITONEXTNANINFCHECK
#include "Passes.h.inc"
} // namespace mlir::triton_ext

using namespace mlir;
using namespace mlir::triton_ext::sanitizers;

namespace {

/// Name of the op whose result makes an async warp-group dot valid.
constexpr StringLiteral kDotWait = "ttng.warp_group_dot_wait";

/// Largest tile slice per thread (elements) that the count fast path takes.
/// Above it (GEMM epilogues: 128 per thread) its per-lane index and second
/// reduction operand cost more registers than keeping |value| live for the
/// peak path's branch (in-house fp16 GEMM: 204 registers against 199, 198
/// without the check); row kernels hold 4-32 (Liger RMS-norm forward: 39
/// registers with count, as without the check, 47 with peak), attention
/// outputs 64 (fla parallel attention forward: 224 with count, as without
/// the check, 230 with peak).
constexpr int64_t kCountMaxElemsPerThread = 64;

/// Most elements per thread of a tile whose store in a loop carries a per-lane
/// count (one i32 register per element across the loop; checkAcrossLoop);
/// 1-D blocked tiles carry two values per thread whatever their size.
constexpr int64_t kLoopCarriedMaxPerThread = 8;

/// Elements of `type` each thread holds; 1 without a layout (TTIR, where
/// nothing is known about threads: the count fast path is taken).
static int64_t elemsPerThread(Type type) {
  auto tensorTy = cast<RankedTensorType>(type);
  if (!tensorTy.getEncoding())
    return 1;
  return triton::gpu::getTotalElemsPerThread(type);
}

/// True if `value` has a user other than `site` that may run after it (a
/// later op of its block, or any op elsewhere). The count fast path pays off
/// where the stored tile dies at its store (nothing of it is live after the
/// reduction); where the kernel still uses the tile (Liger's fused add +
/// RMS-norm stores the sum, then reduces it: 48 registers with peak, 59 with
/// count, 40 without the check) the peak path keeps fewer values live.
/// Below this many elements per thread the count path's per-lane work is a
/// few instructions and the reload's branch and pointers cost more (Liger's
/// MoE gather, one element per thread: 40 registers with count, 48 with
/// reload; H200 0.872x -> 0.856x).
constexpr int64_t kReloadMinElemsPerThread = 4;

static bool usedAfter(Value value, Operation *site) {
  return llvm::any_of(value.getUsers(), [&](Operation *user) {
    return user != site && !(user->getBlock() == site->getBlock() &&
                             user->isBeforeInBlock(site));
  });
}

/// Lane-preserving ops followed from a dot result to its stores.
constexpr unsigned kMaxChain = 16;

/// True for float types whose compares every backend lowers.
static bool isCheckedFloat(Type type) {
  Type elt = getElementTypeOrSelf(type);
  return elt.isF16() || elt.isBF16() || elt.isF32() || elt.isF64();
}

/// True for dot ops of any dialect (tt.dot, tt.dot_scaled,
/// ttng.warp_group_dot).
static bool isDotLike(Operation *op) {
  if (!op)
    return false;
  StringRef name = op->getName().getStringRef();
  return name == "tt.dot" || name == "tt.dot_scaled" ||
         name == "ttng.warp_group_dot" || name == kDotWait;
}

/// True if `op` sits in a warp-specialized partition region.
static bool inWarpSpecializePartition(Operation *op) {
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
    if (p->getName().getStringRef().starts_with("ttg.warp_specialize"))
      return true;
  return false;
}

/// Which non-finite values a float value may hold (per lane).
struct NonFinite {
  bool nan = true, posInf = true, negInf = true;
  bool any() const { return nan || posInf || negInf; }
  static NonFinite none() { return {false, false, false}; }
};

/// What a float value can hold, proven from how it is computed (issue 18:
/// "no checks on values that cannot be non-finite"). Over-approximates:
/// anything not listed may be NaN or +-Inf.
///   constants: exactly; int-to-float conversions: finite when the integer
///   type's range fits the float's (i32 to f32, i16 to f16 signed, ...);
///   select (tl.where): either operand; maxnumf/minnumf (tl.maximum/minimum):
///   NaN only if both are NaN, so min(max(x, lo), hi) with finite lo/hi is
///   finite; tt.clampf without NaN propagation likewise; maximumf/minimumf
///   propagate NaN; extf, negf, absf keep what they get.
static NonFinite canHold(Value value, unsigned depth = 0) {
  NonFinite all;
  auto floatTy = dyn_cast<FloatType>(getElementTypeOrSelf(value.getType()));
  if (!floatTy || depth > kMaxChain)
    return all;
  Operation *def = value.getDefiningOp();
  if (!def)
    return all;
  if (auto cst = dyn_cast<arith::ConstantOp>(def)) {
    NonFinite out = NonFinite::none();
    auto visit = [&](const APFloat &v) {
      out.nan |= v.isNaN();
      out.posInf |= v.isInfinity() && !v.isNegative();
      out.negInf |= v.isInfinity() && v.isNegative();
    };
    if (auto f = dyn_cast<FloatAttr>(cst.getValue()))
      visit(f.getValue());
    else if (auto dense = dyn_cast<DenseFPElementsAttr>(cst.getValue()))
      for (APFloat v : dense.getValues<APFloat>())
        visit(v);
    else
      return all;
    return out;
  }
  if (isa<arith::SIToFPOp, arith::UIToFPOp>(def)) {
    unsigned bits = getElementTypeOrSelf(def->getOperand(0).getType())
                        .getIntOrFloatBitWidth();
    bool isSigned = isa<arith::SIToFPOp>(def);
    // Every integer of the type is below 2^(bits - signed) in magnitude; if
    // that bound is at most the float's largest finite value, rounding to
    // nearest cannot pass it, so the result is finite.
    APFloat largest = APFloat::getLargest(floatTy.getFloatSemantics());
    bool losesInfo = false;
    largest.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                    &losesInfo);
    double magnitude = std::ldexp(1.0, bits - (isSigned ? 1 : 0));
    if (magnitude <= largest.convertToDouble())
      return NonFinite::none();
    return {false, true, isSigned};
  }
  if (auto select = dyn_cast<arith::SelectOp>(def)) {
    NonFinite a = canHold(select.getTrueValue(), depth + 1);
    NonFinite b = canHold(select.getFalseValue(), depth + 1);
    return {a.nan || b.nan, a.posInf || b.posInf, a.negInf || b.negInf};
  }
  auto maxnum = [](NonFinite a, NonFinite b) -> NonFinite {
    return {a.nan && b.nan, a.posInf || b.posInf,
            (a.negInf && (b.negInf || b.nan)) ||
                (b.negInf && (a.negInf || a.nan))};
  };
  auto minnum = [](NonFinite a, NonFinite b) -> NonFinite {
    return {a.nan && b.nan,
            (a.posInf && (b.posInf || b.nan)) ||
                (b.posInf && (a.posInf || a.nan)),
            a.negInf || b.negInf};
  };
  if (isa<arith::MaxNumFOp, arith::MinNumFOp>(def)) {
    NonFinite a = canHold(def->getOperand(0), depth + 1);
    NonFinite b = canHold(def->getOperand(1), depth + 1);
    return isa<arith::MaxNumFOp>(def) ? maxnum(a, b) : minnum(a, b);
  }
  if (isa<arith::MaximumFOp, arith::MinimumFOp>(def)) {
    NonFinite a = canHold(def->getOperand(0), depth + 1);
    NonFinite b = canHold(def->getOperand(1), depth + 1);
    if (isa<arith::MaximumFOp>(def))
      return {a.nan || b.nan, a.posInf || b.posInf, a.negInf && b.negInf};
    return {a.nan || b.nan, a.posInf && b.posInf, a.negInf || b.negInf};
  }
  if (auto clamp = dyn_cast<triton::ClampFOp>(def)) {
    NonFinite x = canHold(clamp.getX(), depth + 1);
    NonFinite lo = canHold(clamp.getMin(), depth + 1);
    NonFinite hi = canHold(clamp.getMax(), depth + 1);
    NonFinite out = minnum(maxnum(x, lo), hi);
    if (clamp.getPropagateNan() != triton::PropagateNan::NONE)
      out.nan |= x.nan;
    return out;
  }
  if (isa<arith::ExtFOp>(def) ||
      (isa<triton::FpToFpOp>(def) &&
       getElementTypeOrSelf(def->getOperand(0).getType())
               .getIntOrFloatBitWidth() < floatTy.getWidth()))
    return canHold(def->getOperand(0), depth + 1);
  if (isa<arith::NegFOp>(def)) {
    NonFinite a = canHold(def->getOperand(0), depth + 1);
    return {a.nan, a.negInf, a.posInf};
  }
  if (isa<math::AbsFOp>(def)) {
    NonFinite a = canHold(def->getOperand(0), depth + 1);
    return {a.nan, a.posInf || a.negInf, false};
  }
  if (isa<triton::SplatOp, triton::BroadcastOp, triton::ExpandDimsOp>(def) ||
      def->getName().getStringRef() == "ttg.convert_layout")
    return canHold(def->getOperand(0), depth + 1);
  return all;
}

/// What kind of op `def` is, for a site's reason, when it can make a
/// non-finite value out of finite operands (a division by zero, exp of a
/// large value, log or sqrt of a negative one, a libdevice call); "" for
/// anything else.
static std::string producerLabel(Operation *def) {
  StringRef name = def->getName().getStringRef();
  if (name.ends_with("divf")) // arith.divf, tt.precise_divf, approximate ones
    return "a division";
  if (name == "arith.remf")
    return "a remainder";
  if (name == "math.exp" || name == "math.exp2")
    return "exp";
  if (name == "math.log" || name == "math.log2" || name == "math.log1p")
    return "log";
  if (name == "math.sqrt" || name == "tt.precise_sqrt")
    return "sqrt";
  if (name == "math.rsqrt")
    return "rsqrt";
  if (name == "math.powf")
    return "pow";
  if (name == "tt.extern_elementwise")
    if (auto symbol = def->getAttrOfType<StringAttr>("symbol"))
      return "`" + symbol.getValue().str() + "`";
  return "";
}

/// One place a non-finite value may come from (collectNonFiniteSources).
struct Source {
  /// Listed first: loaded data (0), dots (1), loop-carried values (2),
  /// arguments (3), reductions (4), divisions, exp, log, ... (5), others.
  int rank;
  std::string label; ///< e.g. "loaded `x`", "a division"
  std::string where; ///< file:line, or ""
};

/// Collects, for a site's reason (issue 18: say per kernel what is
/// unproven), where the non-finite values `value` may hold (canHold) come
/// from: loaded data, reductions, dots, loop-carried values and kernel
/// arguments (where the walk stops), and divisions, exp, log, sqrt and
/// libdevice calls (listed, and their operands walked); lane-preserving and
/// shape ops are walked through, and an add/mul/truncation none of whose
/// operands may be non-finite is listed itself (it can overflow). Returns
/// true if it listed something for `value` or below it.
static bool collectNonFiniteSources(Value value, SmallVectorImpl<Source> &out,
                                    DenseMap<Value, bool> &seen,
                                    unsigned depth = 0) {
  if (auto known = seen.find(value); known != seen.end())
    return known->second;
  if (!canHold(value).any())
    return false;
  seen[value] = true; // cycles through loops: listed once
  if (depth > kMaxChain) {
    out.push_back({6, "values further up (walk cut)", ""});
    return true;
  }
  std::string name = nameOf(value);
  auto named = [&](StringRef what) {
    return name.empty() ? what.str() : (what + " `" + name + "`").str();
  };
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    Operation *owner = arg.getOwner()->getParentOp();
    if (isa_and_nonnull<triton::FuncOp>(owner))
      out.push_back({3,
                     name.empty() ? "arg #" + std::to_string(arg.getArgNumber())
                                  : "arg `" + name + "`",
                     ""});
    else if (isa_and_nonnull<LoopLikeOpInterface>(owner))
      out.push_back(
          {2, named("loop-carried value"), shortSiteOf(owner->getLoc())});
    else
      out.push_back({6, named("block argument"), ""});
    return true;
  }
  Operation *def = value.getDefiningOp();
  std::string at = shortSiteOf(def->getLoc());
  StringRef opName = def->getName().getStringRef();
  if (isa<triton::LoadOp, triton::DescriptorLoadOp>(def) ||
      opName == "ttg.local_load") {
    out.push_back({0, named("loaded"), at});
    return true;
  }
  if (isa<triton::ReduceOp>(def) || opName == "tt.scan") {
    out.push_back(
        {4, isa<triton::ReduceOp>(def) ? "a reduction" : "a scan", at});
    return true;
  }
  if (isDotLike(def)) {
    out.push_back({1, "a dot", at});
    return true;
  }
  if (auto loop = dyn_cast<scf::ForOp>(def)) {
    Value yielded = loop.getBody()->getTerminator()->getOperand(
        cast<OpResult>(value).getResultNumber());
    if (isDotLike(yielded.getDefiningOp()))
      out.push_back(
          {1, "a dot accumulated in a loop", shortSiteOf(yielded.getLoc())});
    else
      out.push_back({2, named("loop result"), at});
    return true;
  }
  if (isa<arith::ConstantOp>(def)) { // canHold: it holds NaN or +-Inf
    out.push_back({6, "a non-finite constant", ""});
    return true;
  }
  if (isa<scf::IfOp>(def)) {
    out.push_back({6, named("branch result"), at});
    return true;
  }
  std::string produced = producerLabel(def);
  bool lanewise = def->hasTrait<OpTrait::Elementwise>() ||
                  isa<arith::SelectOp, triton::SplatOp, triton::BroadcastOp,
                      triton::ExpandDimsOp, triton::ReshapeOp, triton::TransOp,
                      triton::FpToFpOp>(def) ||
                  opName == "ttg.convert_layout";
  if (produced.empty() && !lanewise) {
    out.push_back({6, named(opName), at});
    return true;
  }
  if (!produced.empty())
    out.push_back({5, produced, at});
  bool below = false;
  for (Value operand : def->getOperands())
    if (isa<FloatType>(getElementTypeOrSelf(operand.getType())))
      below |= collectNonFiniteSources(operand, out, seen, depth + 1);
  if (!below && produced.empty())
    out.push_back({6, (opName + " of finite values (overflow)").str(), at});
  return true;
}

/// The sources of collectNonFiniteSources for a reason, in rank order, one
/// entry per label with its lines: "a division (ce.py:228, 221)".
static std::string nonFiniteOrigin(Value value) {
  SmallVector<Source> sources;
  DenseMap<Value, bool> seen;
  collectNonFiniteSources(value, sources, seen);
  if (sources.empty())
    return "not proven finite";
  std::stable_sort(
      sources.begin(), sources.end(),
      [](const Source &a, const Source &b) { return a.rank < b.rank; });
  SmallVector<std::string> labels;
  SmallVector<SmallVector<std::string>> wheres;
  for (const Source &source : sources) {
    auto *it = llvm::find(labels, source.label);
    if (it == labels.end()) {
      labels.push_back(source.label);
      wheres.emplace_back();
      it = labels.end() - 1;
    }
    auto &lines = wheres[it - labels.begin()];
    if (!source.where.empty() && !llvm::is_contained(lines, source.where))
      lines.push_back(source.where);
  }
  SmallVector<std::string> items;
  for (auto [label, lines] : llvm::zip(labels, wheres)) {
    std::string item = label;
    StringRef file;
    for (auto [i, where] : llvm::enumerate(lines)) {
      StringRef whereRef(where);
      auto [thisFile, line] = whereRef.rsplit(':');
      item += i ? ", " : " (";
      // Lines of one file after the first: the line alone.
      item += (i && thisFile == file) ? line.str() : where;
      file = thisFile;
    }
    if (!lines.empty())
      item += ")";
    items.push_back(item);
  }
  return joinShort(items, 3);
}

class NanInfCheckPass
    : public mlir::triton_ext::impl::TritonExtNanInfCheckBase<NanInfCheckPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    std::optional<ReportOptions> report = makeReportOptions(
        getOperation(), "nan_inf_check", mode, print, records);
    if (!report)
      return signalPassFailure();
    report->fastPath = fastPath;
    // Records by masked atomics, no branch (print=none): see
    // emitRecordsAtEnd.
    report->maskedRecords = true;
    ModuleOp module = getOperation();
    // A vote is a barrier of every thread of the program: not in kernels
    // whose warps are split into partitions.
    unsigned votes = 0;
    if (ctaVote && !module
                        .walk([](Operation *op) {
                          return op->getName().getStringRef() ==
                                         "ttg.warp_specialize"
                                     ? WalkResult::interrupt()
                                     : WalkResult::advance();
                        })
                        .wasInterrupted())
      report->votes = &votes;

    // Collect first: checking inserts ops that the walk must not visit.
    SmallVector<std::tuple<Operation *, Value, Value>> stores;
    module.walk([&](Operation *op) {
      if (auto store = dyn_cast<triton::StoreOp>(op))
        stores.emplace_back(op, store.getValue(), store.getMask());
      else if (auto store = dyn_cast<triton::DescriptorStoreOp>(op))
        stores.emplace_back(op, store.getSrc(), Value());
    });
    SmallVector<std::pair<Value, Operation *>> dots; // value, insert after
    if (checkDots) {
      module.walk([&](Operation *op) {
        if (op->getName().getStringRef() == "tt.dot" &&
            !op->getParentOfType<scf::ForOp>())
          dots.emplace_back(op->getResult(0), op);
        if (auto loop = dyn_cast<scf::ForOp>(op))
          collectLoopAccumulators(loop, dots);
      });
    }

    OpBuilder builder(module.getContext());
    // Dots first, so that a dot's report precedes the report of the store it
    // feeds (both are inserted right before that store).
    for (auto [value, after] : dots) {
      if (!isCheckedFloat(value.getType()) || inWarpSpecializePartition(after))
        continue;
      Location loc = value.getDefiningOp() ? value.getDefiningOp()->getLoc()
                                           : after->getLoc();
      checkDotAtStores(builder, loc, value, after, *report);
    }
    SmallVector<StoreCheck> todo;
    for (auto [op, value, mask] : stores) {
      if (!isCheckedFloat(value.getType()) || inWarpSpecializePartition(op)) {
        LLVM_DEBUG(llvm::dbgs() << "skip store: " << *op << "\n");
        continue;
      }
      if (!canHold(value).any()) {
        LLVM_DEBUG(llvm::dbgs() << "store of finite values: " << *op << "\n");
        continue;
      }
      todo.push_back({op, value, mask});
    }
    // Stores already checked as part of a later store's site run.
    DenseSet<Operation *> done;
    for (size_t i = 0; i < todo.size();) {
      if (done.contains(todo[i].op)) {
        ++i;
        continue;
      }
      // A loop widened by an earlier check (checkAcrossLoop) replaced its
      // results: read the stored values and masks from the stores again.
      for (StoreCheck &pending : llvm::drop_begin(todo, i))
        refresh(pending);
      size_t j = i + 1;
      while (j < todo.size() && !done.contains(todo[j].op) &&
             groupable(todo[j - 1], todo[j], *report))
        ++j;
      SmallVector<StoreCheck> run, flagged;
      if (j - i < 2)
        run = siteRun(ArrayRef<StoreCheck>(todo).drop_front(i), done, *report);
      if (j - i < 2 && run.size() < 2)
        flagged =
            flagGroup(ArrayRef<StoreCheck>(todo).drop_front(i), done, *report);
      if (j - i >= 2) {
        checkGroup(builder, ArrayRef<StoreCheck>(todo).slice(i, j - i),
                   *report);
      } else if (run.size() >= 2) {
        checkSiteRun(builder, run, *report);
        for (const StoreCheck &c : run)
          done.insert(c.op);
      } else if (flagged.size() >= 2) {
        if (failed(checkFlagGroup(builder, flagged, *report)))
          return signalPassFailure();
        for (const StoreCheck &c : flagged)
          done.insert(c.op);
      } else {
        auto [op, value, mask] = todo[i];
        placeAt(builder, op, *report);
        check(builder, op->getLoc(), value, mask, op, "store", *report);
      }
      i = j;
    }
  }

private:
  struct StoreCheck {
    Operation *op;
    Value value, mask;
  };

  /// True if `c` would take the count path on its own (check): record mode
  /// with records, the count or reload fast path, a `tt.store` of a tile of
  /// rank 1 or 2 with fewer than kReloadMinElemsPerThread elements per thread
  /// (the reload path's threshold) that dies at the store, in the kernel's
  /// entry block.
  static bool countPathStore(const StoreCheck &c, const ReportOptions &report) {
    auto type = dyn_cast<RankedTensorType>(c.value.getType());
    return report.mode == ReportMode::Record && report.records &&
           (report.fastPath == FastPath::Count ||
            report.fastPath == FastPath::Reload) &&
           isa<triton::StoreOp>(c.op) && type && type.getRank() <= 2 &&
           elemsPerThread(type) < kReloadMinElemsPerThread &&
           isa<triton::FuncOp>(c.op->getParentOp()) &&
           isa<triton::ReturnOp>(c.op->getBlock()->getTerminator()) &&
           !usedAfter(c.value, c.op);
  }

  /// The stores of `todo` (from its first, not in `done`) that write the
  /// first one's source line in its kernel, with its tile type, each on the
  /// count path (countPathStore); the first one alone, or nothing, when there
  /// is no second. An unrolled loop (Liger's MoE gather: `tl.static_range`,
  /// 8 stores of line 596) repeats one site.
  static SmallVector<StoreCheck> siteRun(ArrayRef<StoreCheck> todo,
                                         const DenseSet<Operation *> &done,
                                         const ReportOptions &report) {
    const StoreCheck &head = todo.front();
    if (!countPathStore(head, report))
      return {};
    std::string site = siteOf(head.op->getLoc());
    std::string kernel = kernelNameOf(head.op);
    SmallVector<StoreCheck> run{head};
    for (const StoreCheck &c : todo.drop_front())
      if (!done.contains(c.op) && c.op->getBlock() == head.op->getBlock() &&
          c.value.getType() == head.value.getType() &&
          siteOf(c.op->getLoc()) == site && kernelNameOf(c.op) == kernel &&
          countPathStore(c, report))
        run.push_back(c);
    return run;
  }

  /// One count path for several stores of one source line in the kernel's
  /// entry block (siteRun), which share one record: each store adds its
  /// (bad as 0/1, lane where bad else INT32_MAX) to two tensors of its tile
  /// type, lane by lane (no cross-thread step; two registers per element
  /// live from the first store on), and after the last one a single
  /// two-operand reduction gives the count and the first lane. Each store on
  /// its own paid that reduction with its cross-warp step (Liger's MoE
  /// gather: 8 stores of 128 lanes, one per thread: 8 reductions, 24 more
  /// barriers, 26 -> 40 registers; H200 0.876x). The same lanes and first
  /// index as the stores' separate records (the same program, the same lane
  /// numbering); a program with findings in several of them is counted once.
  static void checkSiteRun(OpBuilder &builder, ArrayRef<StoreCheck> run,
                           const ReportOptions &report) {
    auto type = cast<RankedTensorType>(run.front().value.getType());
    auto floatTy = cast<FloatType>(type.getElementType());
    TypedAttr infAttr = builder.getFloatAttr(
        floatTy, APFloat::getInf(floatTy.getFloatSemantics()));
    Value counts, firsts;
    for (const StoreCheck &c : run) {
      builder.setInsertionPointAfter(c.op);
      Location loc = c.op->getLoc();
      Value inf = arith::ConstantOp::create(builder, loc, type,
                                            splatOrScalar(type, infAttr));
      Value absolute = math::AbsFOp::create(builder, loc, c.value);
      Value bad = arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::UEQ,
                                        absolute, inf);
      if (c.mask)
        bad = arith::AndIOp::create(builder, loc, bad, c.mask);
      SmallVector<Value> lanes = countAndIndexLanes(builder, loc, bad);
      assert(lanes.size() == 2 && "siteRun takes tiles of rank 1 or 2");
      counts = counts ? arith::AddIOp::create(builder, loc, counts, lanes[0])
                            .getResult()
                      : lanes[0];
      firsts = firsts ? arith::MinSIOp::create(builder, loc, firsts, lanes[1])
                            .getResult()
                      : lanes[1];
    }
    const StoreCheck &last = run.back();
    Location loc = last.op->getLoc();
    auto [count, first] = sumAndMinLanes(builder, loc, counts, firsts);
    std::string reason = nonFiniteOrigin(run.front().value) +
                         "; count path, one reduction for " +
                         std::to_string(run.size()) + " stores of this line, " +
                         std::to_string(elemsPerThread(type)) + "/thread";
    ReportSite site{"nan_inf_check", kernelNameOf(last.op), siteOf(loc),
                    "store non-finite", reason};
    emitRecordsAtEnd(builder, loc, entryReturnAt(builder), count, first,
                     type.getNumElements(), site, report);
  }

  /// True if `c`'s stored value is a scalar, or a tile of rank 1 or 2 with
  /// fewer than kReloadMinElemsPerThread elements per thread: what a flag
  /// group (flagGroup) keeps live from its store to the group's branch.
  static bool smallStore(const StoreCheck &c) {
    auto type = dyn_cast<RankedTensorType>(c.value.getType());
    return !type || (type.getRank() <= 2 &&
                     elemsPerThread(type) < kReloadMinElemsPerThread);
  }

  /// True if `c` would take the reload path on its own (checkByReload) and
  /// its tile has rank 1 or 2: a flag group's last store, reloaded on the
  /// group's branch right after it.
  static bool reloadStore(const StoreCheck &c) {
    auto store = dyn_cast<triton::StoreOp>(c.op);
    auto type = dyn_cast<RankedTensorType>(c.value.getType());
    return store && type && type.getRank() <= 2 &&
           store.getValue() == c.value &&
           isa<RankedTensorType>(store.getPtr().getType()) &&
           elemsPerThread(type) >= kReloadMinElemsPerThread &&
           elemsPerThread(type) <= kCountMaxElemsPerThread;
  }

  /// The stores of `todo` (from its first) that share one flag
  /// (checkFlagGroup): consecutive checked `tt.store`s of the kernel's entry
  /// block, with no loop in front of the first (a GEMM epilogue keeps its
  /// masked records) and no loop or branch between two of them (what the group
  /// keeps live must not cross one), each small (smallStore) except the last,
  /// which may be a reload store; record mode with records, or print=every, and
  /// the reload fast path (the default). Stops at a store that a peak group
  /// (groupable) or a site run (siteRun) takes. Fewer than two: empty.
  /// Liger's and fla's layer norms store the row's mean and rstd (scalars,
  /// or 16 lanes) before the normalized row (4096 or 8192 lanes).
  static SmallVector<StoreCheck> flagGroup(ArrayRef<StoreCheck> todo,
                                           const DenseSet<Operation *> &done,
                                           const ReportOptions &report) {
    if (report.mode != ReportMode::Record ||
        report.fastPath != FastPath::Reload ||
        !(report.records || report.print == PrintMode::Every))
      return {};
    const StoreCheck &head = todo.front();
    Block *block = head.op->getBlock();
    if (!isa<triton::FuncOp>(head.op->getParentOp()) ||
        !isa<triton::ReturnOp>(block->getTerminator()) ||
        followsLoopInBlock(head.op))
      return {};
    // Between two members: no loop or branch (kept-live values would cross
    // it), and nothing that is not an op of the kernel's own straight-line
    // code.
    auto straightLine = [](Operation *from, Operation *to) {
      for (Operation *op = from->getNextNode(); op && op != to;
           op = op->getNextNode())
        if (isa<LoopLikeOpInterface, RegionBranchOpInterface>(op))
          return false;
      return true;
    };
    auto takenElsewhere = [&](size_t k) {
      if (k + 1 < todo.size() && groupable(todo[k], todo[k + 1], report))
        return true;
      if (k > 0 && groupable(todo[k - 1], todo[k], report))
        return true;
      return siteRun(todo.drop_front(k), done, report).size() >= 2;
    };
    SmallVector<StoreCheck> group;
    for (size_t k = 0; k < todo.size(); ++k) {
      const StoreCheck &c = todo[k];
      if (done.contains(c.op) || !isa<triton::StoreOp>(c.op) ||
          c.op->getBlock() != block || takenElsewhere(k) ||
          (!group.empty() && (!group.back().op->isBeforeInBlock(c.op) ||
                              !straightLine(group.back().op, c.op))))
        break;
      if (smallStore(c)) {
        group.push_back(c);
        continue;
      }
      if (reloadStore(c))
        group.push_back(c);
      break;
    }
    if (group.size() < 2)
      return {};
    return group;
  }

  /// One flag for a group of stores (flagGroup), so that a clean program
  /// takes one branch for all of them instead of one count path or reload
  /// branch per store, and updates no record: after the last store, per
  /// store a test whether it wrote a non-finite lane (a scalar compare; for
  /// tiles, the NaN-propagating maximum of |value| under the mask, one
  /// single-operand reduction per tile type, shared by the stores of that
  /// type, instead of a two-operand count reduction per store), the or of
  /// these tests, and under it each store's
  /// exact (count, first lane): from its value, kept live (the small stores:
  /// scalars or tiles of a few elements per thread), or, for a last store on
  /// the reload path, from the lanes it has just written, reloaded right
  /// after it (no store in between, as checkByReload). The records of the
  /// group's sites are updated under one `scf.if` before the kernel's return
  /// (each under its own count > 0, so a site without findings keeps its
  /// record as it was). Exact: the or is true iff some store wrote a
  /// non-finite lane under its mask, and then each store's count and first
  /// lane are those of its own check; a store without findings counts zero.
  /// Liger's layer-norm forward paid two scalar branches and their record
  /// branches besides the row's reload branch; fla's, two (count, first)
  /// shuffle reductions of 16 lanes besides the row's maximum.
  static LogicalResult checkFlagGroup(OpBuilder &builder,
                                      ArrayRef<StoreCheck> group,
                                      const ReportOptions &report) {
    Type i32 = builder.getI32Type();
    SmallVector<Value> absolutes, infs;
    SmallVector<std::string> origins;
    for (const StoreCheck &c : group)
      origins.push_back(nonFiniteOrigin(c.value));
    // All tests after the last store: the small stores' values are live
    // until the group's branch anyway, and stores of one tile type then share
    // one maximum (one reduction) as in checkGroup.
    builder.setInsertionPointAfter(group.back().op);
    Value any;
    auto addFound = [&](Value found) {
      any = any ? arith::OrIOp::create(builder, group.back().op->getLoc(), any,
                                       found)
                      .getResult()
                : found;
    };
    SmallVector<Type> tileTypes;
    SmallVector<Value> peaks;
    for (const StoreCheck &c : group) {
      Location loc = c.op->getLoc();
      Type type = c.value.getType();
      // A scalar's test right after its store; tiles after the last store.
      OpBuilder::InsertionGuard guard(builder);
      if (!isa<RankedTensorType>(type))
        builder.setInsertionPointAfter(c.op);
      auto floatTy = cast<FloatType>(getElementTypeOrSelf(type));
      Value inf = arith::ConstantOp::create(
          builder, loc, type,
          splatOrScalar(type, builder.getFloatAttr(
                                  floatTy, APFloat::getInf(
                                               floatTy.getFloatSemantics()))));
      Value absolute = math::AbsFOp::create(builder, loc, c.value);
      absolutes.push_back(absolute);
      infs.push_back(inf);
      if (!isa<RankedTensorType>(type)) {
        Value found = arith::CmpFOp::create(
            builder, loc, arith::CmpFPredicate::UEQ, absolute, inf);
        if (c.mask)
          found = arith::AndIOp::create(builder, loc, found, c.mask);
        addFound(found);
        continue;
      }
      // Masked-off lanes read 0; a NaN-propagating maximum of the rest.
      Value peak = maskedMagnitude(builder, loc, absolute, c.mask);
      auto *slot = llvm::find(tileTypes, type);
      if (slot == tileTypes.end()) {
        tileTypes.push_back(type);
        peaks.push_back(peak);
      } else {
        Value &acc = peaks[slot - tileTypes.begin()];
        acc = arith::MaximumFOp::create(builder, loc, acc, peak);
      }
    }
    for (Value peak : peaks)
      addFound(anyNonFinite(builder, peak.getLoc(), peak, report));
    Location loc = group.back().op->getLoc();
    SmallVector<Type> resultTypes(2 * group.size(), i32);
    auto ifOp = scf::IfOp::create(builder, loc, resultTypes, any,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(ifOp.thenBlock());
      SmallVector<Value> results;
      for (auto [k, c] : llvm::enumerate(group)) {
        Location at = c.op->getLoc();
        Value magnitude = absolutes[k];
        if (!smallStore(c)) {
          // The last store, on the reload path: the lanes it has just
          // written (nothing was stored since).
          auto store = cast<triton::StoreOp>(c.op);
          Value stored =
              c.mask ? triton::LoadOp::create(builder, at, store.getPtr(),
                                              c.mask, /*isVolatile=*/true)
                           .getResult()
                     : triton::LoadOp::create(builder, at, store.getPtr(),
                                              /*isVolatile=*/true)
                           .getResult();
          magnitude = math::AbsFOp::create(builder, at, stored);
        }
        Value bad = arith::CmpFOp::create(
            builder, at, arith::CmpFPredicate::UEQ, magnitude, infs[k]);
        if (c.mask)
          bad = arith::AndIOp::create(builder, at, bad, c.mask);
        if (!isa<RankedTensorType>(bad.getType())) {
          results.push_back(arith::ExtUIOp::create(builder, at, i32, bad));
          results.push_back(arith::ConstantIntOp::create(builder, at, i32, 0));
          continue;
        }
        Value count, first;
        if (smallStore(c)) {
          std::tie(count, first) = countAndFirstLane(builder, at, bad);
        } else {
          // As the reload path's branch: two one-operand reductions (a
          // two-operand one over the large tile doubles its scratch memory).
          count = countTrue(builder, at, bad);
          first = firstTrueLane(builder, at, bad);
        }
        if (!count)
          return c.op->emitOpError(
              "nan_inf_check: no (count, first lane) reduction for this tile");
        results.push_back(count);
        results.push_back(first);
      }
      scf::YieldOp::create(builder, loc, results);
      builder.setInsertionPointToStart(ifOp.elseBlock());
      Value zero = arith::ConstantIntOp::create(builder, loc, i32, 0);
      scf::YieldOp::create(builder, loc,
                           SmallVector<Value>(resultTypes.size(), zero));
    }
    builder.setInsertionPointAfter(ifOp);
    Operation *ret = entryReturnAt(builder);
    if (!ret)
      return group.back().op->emitOpError(
          "nan_inf_check: a flag group outside the kernel's entry block");
    builder.setInsertionPoint(deferredRecordsPoint(builder, ret, report));
    auto records = scf::IfOp::create(builder, loc, any,
                                     /*withElseRegion=*/false);
    markRecordsOnly(records);
    Operation *inner = records.thenBlock()->getTerminator();
    std::string path = "; flag path: one branch for " +
                       std::to_string(group.size()) + " stores of this block";
    for (auto [k, c] : llvm::enumerate(group)) {
      Type type = c.value.getType();
      int64_t numel = 1, perThread = 1;
      if (auto tensorTy = dyn_cast<RankedTensorType>(type)) {
        numel = tensorTy.getNumElements();
        perThread = elemsPerThread(tensorTy);
      }
      ReportSite site{"nan_inf_check", kernelNameOf(c.op),
                      siteOf(c.op->getLoc()), "store non-finite",
                      origins[k] + path + (smallStore(c) ? "" : ", reload") +
                          ", " + std::to_string(perThread) + "/thread"};
      Value count = ifOp.getResult(2 * k), first = ifOp.getResult(2 * k + 1);
      if (report.records) {
        emitRecordsAtEnd(builder, c.op->getLoc(), inner, count, first, numel,
                         site, report);
        continue;
      }
      // print=every without records: one line per program with findings.
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPoint(inner);
      Location at = c.op->getLoc();
      Value positive = arith::CmpIOp::create(
          builder, at, arith::CmpIPredicate::sgt, count,
          arith::ConstantIntOp::create(builder, at, i32, 0));
      auto printIf =
          scf::IfOp::create(builder, at, positive, /*withElseRegion=*/false);
      builder.setInsertionPoint(printIf.thenBlock()->getTerminator());
      std::string prefix = "[triton-ext nan_inf_check] kernel=" + site.kernel +
                           " site=" + site.site + " " + site.what.str();
      triton::PrintOp::create(builder, at, prefix + "=", /*hex=*/false,
                              ValueRange{count}, ArrayRef<int32_t>{1});
    }
    return success();
  }

  /// `check`'s value and mask, read from its store again.
  static void refresh(StoreCheck &check) {
    if (auto store = dyn_cast<triton::StoreOp>(check.op)) {
      check.value = store.getValue();
      check.mask = store.getMask();
    } else if (auto store = dyn_cast<triton::DescriptorStoreOp>(check.op)) {
      check.value = store.getSrc();
    }
  }

  /// True if `value`, computed in the body of `loop`, depends on the
  /// iteration: its pure ops in the body reach the induction variable or a
  /// loop-carried value (or anything else defined in the body that is not a
  /// pure op, such as a load). False for values of the same lanes in every
  /// iteration (`out + cols` recomputed in the body, or defined outside).
  static bool changesPerIteration(Value value, scf::ForOp loop) {
    SmallVector<Value> work{value};
    DenseSet<Value> seen;
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (loop.isDefinedOutsideOfLoop(v) || !seen.insert(v).second)
        continue;
      Operation *def = v.getDefiningOp();
      if (!def || !isPure(def) || def->getNumRegions() || seen.size() > 256)
        return true;
      llvm::append_range(work, def->getOperands());
    }
    return false;
  }

  /// Record mode, a `tt.store` of a tile (rank 1 or 2) directly in the body
  /// of an `scf.for`, to addresses that change with the iteration (issue
  /// 32): the loop carries what the check found, and after the loop one
  /// reduction gives the count and the first lane; only a program with
  /// findings updates its record, once. Per iteration the check cost a
  /// cross-warp reduction (shared memory and a barrier) and a branch
  /// (Liger's cross entropy 0.89x, RMS-norm backward 0.88x on the H200).
  /// What is carried:
  ///   - a 1-D blocked tile (more than one element per thread): per
  ///     thread, (count, smallest lane) of the lanes it holds, reduced
  ///     inside the thread, added and min-ed into two carried tensors of one
  ///     value per thread; no shuffle, shared memory or barrier in the loop
  ///     (Liger's RMS-norm backward: 115 registers, as without the check,
  ///     against 128 with a check per iteration; 12 barriers against 15).
  ///     The pair is counted only by a thread whose peak of |value| is
  ///     non-finite, on a per-thread branch (threadBranchCountsAndFirsts);
  ///     sizes it declines count every element (runCountsAndFirsts);
  ///   - otherwise (other layouts, rank 2, TTIR) a per-lane i32 count (one
  ///     register per element: only up to kLoopCarriedMaxPerThread), the
  ///     first lane found after the loop from the lanes with a count.
  /// The same record as a check per iteration: lanes are summed over the
  /// iterations either way, and the first index is the smallest pid * numel
  /// + lane over them. Not taken (false, nothing built) where a later
  /// iteration overwrites what an earlier one stored (addresses the same in
  /// every iteration: the count per iteration follows what memory held), in
  /// abort mode (the assert belongs before the store), with the warp fast
  /// path, for stores in a branch of the body, and for larger tiles.
  static bool checkAcrossLoop(OpBuilder &builder, Location loc, Value value,
                              Value mask, Value absolute, Value inf,
                              Operation *site, ReportSite reportSite,
                              const ReportOptions &report) {
    auto store = dyn_cast<triton::StoreOp>(site);
    auto type = dyn_cast<RankedTensorType>(value.getType());
    auto loop = dyn_cast_or_null<scf::ForOp>(site->getParentOp());
    if (!store || !type || report.mode != ReportMode::Record ||
        report.fastPath == FastPath::Warp || !loop ||
        site->getBlock() != loop.getBody() || type.getRank() > 2 ||
        elemsPerThread(type) > kCountMaxElemsPerThread ||
        !changesPerIteration(store.getPtr(), loop))
      return false;
    Type i32 = builder.getI32Type();
    // Per thread: (count, smallest own lane) from a branch each thread takes
    // only when its peak is non-finite (threadBranchCountsAndFirsts).
    std::function<Value(OpBuilder &, Location, Value)> toLanes;
    SmallVector<Value> perRun =
        threadBranchCountsAndFirsts(builder, loc, loop, value, mask, &toLanes);
    Value bad;
    if (perRun.empty()) {
      bad = arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::UEQ,
                                  absolute, inf);
      if (mask)
        bad = arith::AndIOp::create(builder, loc, bad, mask);
      // Per run of lanes a thread holds: (count, smallest lane), or none.
      perRun = runCountsAndFirsts(builder, loc, loop, bad, &toLanes);
    }
    bool perLane = perRun.empty();
    if (perLane && elemsPerThread(type) > kLoopCarriedMaxPerThread) {
      Operation *last = bad.getDefiningOp();
      Operation *compare = mask ? last->getOperand(0).getDefiningOp() : nullptr;
      last->erase();
      if (compare)
        compare->erase();
      return false;
    }
    if (perLane)
      perRun = {arith::ExtUIOp::create(builder, loc, type.clone(i32), bad)};
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(loop);
    auto splat = [&](Value like, int64_t v) -> Value {
      return arith::ConstantOp::create(
          builder, loc,
          DenseElementsAttr::get(cast<ShapedType>(like.getType()),
                                 builder.getI32IntegerAttr(v)));
    };
    SmallVector<Value> inits{splat(perRun[0], 0)};
    if (!perLane)
      inits.push_back(splat(perRun[1], INT32_MAX));
    IRRewriter rewriter(builder);
    FailureOr<LoopLikeOpInterface> widened = loop.replaceWithAdditionalYields(
        rewriter, inits, /*replaceInitOperandUsesInLoop=*/false,
        [&](OpBuilder &b, Location yieldLoc, ArrayRef<BlockArgument> args) {
          SmallVector<Value> next{
              arith::AddIOp::create(b, yieldLoc, args[0], perRun[0])};
          if (!perLane)
            next.push_back(
                arith::MinSIOp::create(b, yieldLoc, args[1], perRun[1]));
          return next;
        });
    if (failed(widened))
      return false; // the ops built in the body are unused: canonicalize
    Operation *newLoop = widened->getOperation();
    builder.setInsertionPointAfter(newLoop);
    ValueRange carried = newLoop->getResults().take_back(inits.size());
    int64_t numel = type.getNumElements();
    if (!perLane && report.records) {
      // One two-operand reduction after the loop; the records before the
      // kernel's return (in place when the loop is nested).
      Value firsts = carried[1];
      if (toLanes)
        firsts = toLanes(builder, loc, firsts);
      auto [count, first] = sumAndMin(builder, loc, carried[0], firsts);
      Operation *ret = entryReturnAt(builder);
      emitRecordsAtEnd(builder, loc, ret ? ret : &*builder.getInsertionPoint(),
                       count, first, numel, reportSite, report);
      return true;
    }
    Value counts = carried[0];
    Value total = sumLanes(builder, loc, counts);
    emitReport(
        builder, loc, total,
        [&](OpBuilder &b, Location l) -> Value {
          // The lanes with a count (only asked for with records, per lane).
          Value zero = arith::ConstantOp::create(
              b, l,
              DenseElementsAttr::get(cast<ShapedType>(counts.getType()),
                                     b.getI32IntegerAttr(0)));
          return arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, counts,
                                       zero);
        },
        reportSite, report);
    return true;
  }

  /// How a thread of a 1-D blocked layout holds an `n`-element tile: lane
  /// r * S * T + t * S + k for each repetition r < R and k < S (S =
  /// sizePerThread, T threads), viewed as [R, T, S] with unit dimensions
  /// dropped (`shape`, the thread axis at `threadAxis`).
  struct ThreadView {
    int64_t run, threads, reps;
    SmallVector<int64_t> shape;
    unsigned threadAxis;
  };

  /// `blocked`'s thread view of an `n`-element tile, or nullopt when the
  /// layout does not tile `n` exactly.
  static std::optional<ThreadView>
  threadViewOf(triton::gpu::BlockedEncodingAttr blocked, int64_t n) {
    ThreadView view;
    view.run = blocked.getSizePerThread()[0];
    view.threads =
        int64_t(blocked.getThreadsPerWarp()[0]) * blocked.getWarpsPerCTA()[0];
    if (n % (view.run * view.threads) != 0)
      return std::nullopt;
    view.reps = n / (view.run * view.threads);
    if (view.reps > 1)
      view.shape.push_back(view.reps);
    view.shape.push_back(view.threads);
    if (view.run > 1)
      view.shape.push_back(view.run);
    view.threadAxis = view.reps > 1 ? 1 : 0;
    return view;
  }

  /// For the 1-D blocked tile `value` stored (under `mask`) in the body of
  /// `loop`: {count, smallest own index (INT32_MAX if none)} per thread, as
  /// two i32 tensors of one value per thread, the own index of lane
  /// r * S * T + t * S + k (S = sizePerThread, T threads, R repetitions)
  /// being r * S + k; `*toLanes` turns it into the tile's lane after the
  /// loop (ownIndexToLanes). Built with one `tt.map_elementwise` whose pack
  /// is the thread's R * S elements, so its scalar region runs once per
  /// thread over all of them (issue 32):
  ///
  ///   peak = NaN-propagating max over k of |x_k|
  ///   scf.if peak ueq +Inf {  // per thread (divergent): no shuffle, barrier
  ///     over k with mask_k and isnan(x_k * 0): count, min of r * S + k
  ///   }
  ///
  /// A clean thread pays an abs and a max per element (packed: one of each
  /// per bf16 pair), against a compare, an and, a count add, a select and a
  /// min before (Liger's cross entropy, 32 bf16 per thread in its vocabulary
  /// loop: 0.79x on the H200; 271 more SASS instructions per iteration than
  /// without the check, 40 now). Exact: the peak is non-finite iff some
  /// element is, so every thread with a non-finite lane under the mask takes
  /// the branch, and the branch counts and indexes exactly those lanes. The
  /// peak ignores the mask: a thread whose masked-off elements are non-finite
  /// takes the branch and finds nothing there (the mask's select on each
  /// element cost more than the max: bf16 halves taken apart and re-packed).
  /// The region puts the pair in the pack's first result element and 0 /
  /// INT32_MAX in the others, so the in-thread reduction that follows (the
  /// tile viewed as [R, T, S], as runCountsAndFirsts) gives the same pair
  /// whatever order the pack holds the elements in; once lowered it folds
  /// to the pair. The own indices, one constant per register, are an operand
  /// built in front of the loop. Empty (nothing built) for other tiles, one
  /// element per thread, sizes that are not powers of two, or a view whose
  /// layout does not keep R and S inside a thread.
  static SmallVector<Value> threadBranchCountsAndFirsts(
      OpBuilder &builder, Location loc, scf::ForOp loop, Value value,
      Value mask, std::function<Value(OpBuilder &, Location, Value)> *toLanes) {
    auto type = cast<RankedTensorType>(value.getType());
    auto blocked =
        dyn_cast_or_null<triton::gpu::BlockedEncodingAttr>(type.getEncoding());
    // The map's operands share the value's layout (the pack is a thread's
    // elements of each).
    if (type.getRank() != 1 || !blocked ||
        (mask && cast<RankedTensorType>(mask.getType()).getEncoding() !=
                     type.getEncoding()))
      return {};
    std::optional<ThreadView> tv = threadViewOf(blocked, type.getNumElements());
    if (!tv)
      return {};
    int64_t n = type.getNumElements();
    int64_t run = tv->run, threads = tv->threads, reps = tv->reps;
    SmallVector<int64_t> shape = tv->shape;
    unsigned threadAxis = tv->threadAxis;
    int64_t perThread = reps * run;
    if (perThread < 2 || elemsPerThread(type) != perThread ||
        !llvm::isPowerOf2_64(run) || !llvm::isPowerOf2_64(run * threads) ||
        !llvm::isPowerOf2_64(perThread))
      return {};
    Type i32 = builder.getI32Type();
    auto i32Ty = type.clone(i32);
    auto cst = [&](RankedTensorType like, int64_t v) -> Value {
      return arith::ConstantOp::create(
          builder, loc,
          DenseElementsAttr::get(cast<ShapedType>(like),
                                 builder.getI32IntegerAttr(v)));
    };
    Value local;
    {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPoint(loop);
      Value range = triton::MakeRangeOp::create(builder, loc, i32Ty, 0, n);
      // The view must keep the repetitions and the run inside a thread.
      auto probe = triton::ReshapeOp::create(builder, loc, shape, range, false);
      auto viewLayout = dyn_cast_or_null<triton::gpu::BlockedEncodingAttr>(
          probe.getType().getEncoding());
      bool inThread = viewLayout != nullptr;
      for (unsigned axis = 0; inThread && axis < shape.size(); ++axis)
        if (axis != threadAxis)
          inThread = viewLayout.getThreadsPerWarp()[axis] == 1 &&
                     viewLayout.getWarpsPerCTA()[axis] == 1;
      probe->erase();
      if (!inThread) {
        range.getDefiningOp()->erase();
        return {};
      }
      // r * S + k = ((lane >> log2(S T)) << log2(S)) | (lane & (S - 1)).
      Value rep = arith::ShLIOp::create(
          builder, loc,
          arith::ShRUIOp::create(builder, loc, range,
                                 cst(i32Ty, llvm::Log2_64(run * threads))),
          cst(i32Ty, llvm::Log2_64(run)));
      Value k = arith::AndIOp::create(builder, loc, range, cst(i32Ty, run - 1));
      local = arith::OrIOp::create(builder, loc, rep, k);
    }
    auto floatTy = cast<FloatType>(type.getElementType());
    SmallVector<Value> srcs{value};
    if (mask)
      srcs.push_back(mask);
    srcs.push_back(local);
    SmallVector<Type> argTypes;
    for (Value src : srcs)
      argTypes.append(perThread, getElementTypeOrSelf(src.getType()));
    auto map = triton::MapElementwiseOp::create(
        builder, loc, TypeRange{i32Ty, i32Ty}, srcs, uint32_t(perThread));
    {
      OpBuilder::InsertionGuard guard(builder);
      Block *body =
          builder.createBlock(&map.getScalarOp(), {}, argTypes,
                              SmallVector<Location>(argTypes.size(), loc));
      auto arg = [&](unsigned operand, int64_t k) -> Value {
        return body->getArgument(operand * perThread + k);
      };
      Value zero = arith::ConstantOp::create(builder, loc, floatTy,
                                             builder.getFloatAttr(floatTy, 0));
      Value inf = arith::ConstantOp::create(
          builder, loc, floatTy,
          builder.getFloatAttr(floatTy,
                               APFloat::getInf(floatTy.getFloatSemantics())));
      unsigned localArg = mask ? 2 : 1;
      Value peak;
      for (int64_t k = 0; k < perThread; ++k) {
        Value absolute = math::AbsFOp::create(builder, loc, arg(0, k));
        peak = peak ? arith::MaximumFOp::create(builder, loc, peak, absolute)
                          .getResult()
                    : absolute;
      }
      Value found = arith::CmpFOp::create(builder, loc,
                                          arith::CmpFPredicate::UEQ, peak, inf);
      Value c0 = arith::ConstantIntOp::create(builder, loc, i32, 0);
      Value none = arith::ConstantIntOp::create(builder, loc, i32, INT32_MAX);
      auto ifOp = scf::IfOp::create(builder, loc, TypeRange{i32, i32}, found,
                                    /*withElseRegion=*/true);
      builder.setInsertionPointToStart(ifOp.thenBlock());
      Value count, first;
      for (int64_t k = 0; k < perThread; ++k) {
        // x * 0 is NaN exactly for a non-finite x. A test on |x| (as the
        // peak) became integer compares on each 16-bit half, and ptxas then
        // kept the halves of the stored bf16 pairs apart on the clean path
        // too, re-pairing them for the packed max (Liger's cross entropy:
        // 33 more PRMT per iteration than this).
        Value product = arith::MulFOp::create(builder, loc, arg(0, k), zero);
        Value bad = arith::CmpFOp::create(
            builder, loc, arith::CmpFPredicate::UNO, product, product);
        if (mask)
          bad = arith::AndIOp::create(builder, loc, bad, arg(1, k));
        Value one = arith::ExtUIOp::create(builder, loc, i32, bad);
        Value index =
            arith::SelectOp::create(builder, loc, bad, arg(localArg, k), none);
        count =
            count ? arith::AddIOp::create(builder, loc, count, one).getResult()
                  : one;
        first =
            first
                ? arith::MinSIOp::create(builder, loc, first, index).getResult()
                : index;
      }
      scf::YieldOp::create(builder, loc, ValueRange{count, first});
      builder.setInsertionPointToStart(ifOp.elseBlock());
      scf::YieldOp::create(builder, loc, ValueRange{c0, none});
      builder.setInsertionPointAfter(ifOp);
      SmallVector<Value> results{ifOp.getResult(0)};
      results.append(perThread - 1, c0);
      results.push_back(ifOp.getResult(1));
      results.append(perThread - 1, none);
      triton::MapElementwiseReturnOp::create(builder, loc, results);
    }
    *toLanes = ownIndexToLanes(shape, type, run, threads, threadAxis);
    SmallVector<Value> pair;
    for (Value result : map.getResults())
      pair.push_back(
          triton::ReshapeOp::create(builder, loc, shape, result, false));
    // The run axis (last) first, then the repetitions (axis 0).
    if (run > 1)
      pair = sumAndMinAlong(builder, loc, pair, shape.size() - 1);
    if (reps > 1)
      pair = sumAndMinAlong(builder, loc, pair, 0);
    return pair;
  }

  /// Turns a thread's carried own index r * S + k (INT32_MAX: none; a
  /// tensor of one value per thread, the 1-D blocked tile `type` viewed as
  /// `shape` and reduced along every axis but `threadAxis`) into the tile's
  /// lane r * S * T + t * S + k, t * S being the smallest lane the thread
  /// holds (an in-thread min reduction of the lane numbers).
  static std::function<Value(OpBuilder &, Location, Value)>
  ownIndexToLanes(SmallVector<int64_t> shape, RankedTensorType type,
                  int64_t run, int64_t threads, unsigned threadAxis) {
    return [shape, type, run, threads, threadAxis](
               OpBuilder &b, Location l, Value local) mutable -> Value {
      // The thread's first lane t * S: the minimum of the lanes it
      // holds, reduced inside the thread as the pair was.
      Type i32 = b.getI32Type();
      Value all = triton::MakeRangeOp::create(b, l, type.clone(i32), 0,
                                              type.getNumElements());
      Value base = triton::ReshapeOp::create(b, l, shape, all, false);
      for (int axis = int(shape.size()) - 1; axis >= 0; --axis) {
        if (unsigned(axis) == threadAxis)
          continue;
        auto reduce = triton::ReduceOp::create(b, l, ValueRange{base}, axis);
        OpBuilder::InsertionGuard guard(b);
        Block *body =
            b.createBlock(&reduce.getCombineOp(), {}, {i32, i32}, {l, l});
        Value min = arith::MinSIOp::create(b, l, body->getArgument(0),
                                           body->getArgument(1));
        triton::ReduceReturnOp::create(b, l, ValueRange{min});
        b.setInsertionPointAfter(reduce);
        base = reduce.getResult()[0];
      }
      auto localTy = cast<RankedTensorType>(local.getType());
      auto cst = [&](int64_t v) -> Value {
        return arith::ConstantOp::create(
            b, l,
            DenseElementsAttr::get(cast<ShapedType>(localTy),
                                   b.getI32IntegerAttr(v)));
      };
      if (base.getType() != localTy)
        base = triton::gpu::ConvertLayoutOp::create(b, l, localTy, base);
      Value r = arith::DivSIOp::create(b, l, local, cst(run));
      Value k = arith::RemSIOp::create(b, l, local, cst(run));
      Value lane = arith::AddIOp::create(
          b, l,
          arith::AddIOp::create(
              b, l, arith::MulIOp::create(b, l, r, cst(run * threads)), base),
          k);
      Value none = cst(INT32_MAX);
      Value isNone =
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, local, none);
      return arith::SelectOp::create(b, l, isNone, none, lane).getResult();
    };
  }

  /// For a 1-D tile `bad` (i1) with a blocked layout: {count, smallest bad
  /// lane (INT32_MAX if none)} per thread, as two i32 tensors of one value
  /// per thread, reduced without leaving the thread. A thread of the layout
  /// (S = sizePerThread, T threads) holds lane r * S * T + t * S + k for
  /// each repetition r < R and k < S: viewed as [R, T, S] (`tt.reshape`, the
  /// same registers; unit dimensions dropped), axes R and S lie inside each
  /// thread, and reducing them (S first) leaves [T]. The lane numbers
  /// (`tt.make_range`) are built in front of `loop`. Empty (nothing built)
  /// for other tiles, one element per thread, or a view whose layout does
  /// not keep those axes inside a thread.
  ///
  /// With `toLanes` (and S and S * T powers of two) the smallest lane is
  /// carried as an index among the thread's own elements, r * S + k, which
  /// the lowering folds to one constant per register (no register), and
  /// `*toLanes` is set to turn it into the tile's lane after the loop
  /// (r * S * T + t * S + k). The lane numbers themselves, hoisted out of
  /// the loop by LLVM, kept one register per element alive across it (Liger
  /// cross entropy, 32 bf16 per thread under its 64-register cap at 32
  /// warps: a 48-byte stack frame against none without the check).
  static SmallVector<Value> runCountsAndFirsts(
      OpBuilder &builder, Location loc, scf::ForOp loop, Value bad,
      std::function<Value(OpBuilder &, Location, Value)> *toLanes = nullptr) {
    auto type = cast<RankedTensorType>(bad.getType());
    auto blocked =
        dyn_cast_or_null<triton::gpu::BlockedEncodingAttr>(type.getEncoding());
    if (type.getRank() != 1 || !blocked)
      return {};
    std::optional<ThreadView> tv = threadViewOf(blocked, type.getNumElements());
    if (!tv || tv->shape.size() == 1)
      return {};
    int64_t n = type.getNumElements();
    int64_t run = tv->run, threads = tv->threads, reps = tv->reps;
    SmallVector<int64_t> shape = tv->shape;
    unsigned threadAxis = tv->threadAxis;
    Value view = triton::ReshapeOp::create(builder, loc, shape, bad, false);
    auto viewLayout = dyn_cast_or_null<triton::gpu::BlockedEncodingAttr>(
        cast<RankedTensorType>(view.getType()).getEncoding());
    bool inThread = viewLayout != nullptr;
    for (unsigned axis = 0; inThread && axis < shape.size(); ++axis)
      if (axis != threadAxis)
        inThread = viewLayout.getThreadsPerWarp()[axis] == 1 &&
                   viewLayout.getWarpsPerCTA()[axis] == 1;
    if (!inThread) {
      view.getDefiningOp()->erase();
      return {};
    }
    Type i32 = builder.getI32Type();
    Value lanes;
    {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPoint(loop);
      Value range =
          triton::MakeRangeOp::create(builder, loc, type.clone(i32), 0, n);
      lanes = triton::ReshapeOp::create(builder, loc, shape, range, false);
      if (toLanes && llvm::isPowerOf2_64(run) &&
          llvm::isPowerOf2_64(run * threads)) {
        // r * S + k = ((lane >> log2(S T)) << log2(S)) | (lane & (S - 1)):
        // the thread's part t * S of the lane drops out by known bits.
        auto lanesTy = cast<RankedTensorType>(lanes.getType());
        auto cst = [&](int64_t v) -> Value {
          return arith::ConstantOp::create(
              builder, loc,
              DenseElementsAttr::get(cast<ShapedType>(lanesTy),
                                     builder.getI32IntegerAttr(v)));
        };
        int64_t logRun = llvm::Log2_64(run);
        int64_t logRow = llvm::Log2_64(run * threads);
        Value rep = arith::ShLIOp::create(
            builder, loc,
            arith::ShRUIOp::create(builder, loc, lanes, cst(logRow)),
            cst(logRun));
        Value k = arith::AndIOp::create(builder, loc, lanes, cst(run - 1));
        lanes = arith::OrIOp::create(builder, loc, rep, k);
        *toLanes = ownIndexToLanes(shape, type, run, threads, threadAxis);
      }
    }
    auto viewI32 = cast<RankedTensorType>(lanes.getType());
    Value none = arith::ConstantOp::create(
        builder, loc,
        DenseElementsAttr::get(cast<ShapedType>(viewI32),
                               builder.getI32IntegerAttr(INT32_MAX)));
    SmallVector<Value> pair{
        arith::ExtUIOp::create(builder, loc, viewI32, view),
        arith::SelectOp::create(builder, loc, view, lanes, none)};
    // The run axis (last) first, then the repetitions (axis 0).
    if (run > 1)
      pair = sumAndMinAlong(builder, loc, pair, shape.size() - 1);
    if (reps > 1)
      pair = sumAndMinAlong(builder, loc, pair, 0);
    return pair;
  }

  /// One two-operand reduction of (counts, firsts) along `axis`: (sum, min).
  static SmallVector<Value> sumAndMinAlong(OpBuilder &builder, Location loc,
                                           ArrayRef<Value> pair,
                                           unsigned axis) {
    return reducePair(builder, loc, pair, axis);
  }

  /// (sum of `counts`, min of `firsts`) over every lane (i32 1-D tensors of
  /// one type) as two i32 scalars, from one two-operand reduction.
  static std::pair<Value, Value> sumAndMin(OpBuilder &builder, Location loc,
                                           Value counts, Value firsts) {
    SmallVector<Value> pair = sumAndMinAlong(builder, loc, {counts, firsts}, 0);
    return {pair[0], pair[1]};
  }

  /// True if the checks of stores `a` and then `b` can share one fast path
  /// (checkGroup): record mode with records, both `tt.store`s of one tensor
  /// type in the kernel's entry block, and only pure, region-free ops
  /// between them (computing `b`'s operands), so holding `a`'s value and
  /// mask until after `b` costs no more than the ops in between need.
  static bool groupable(const StoreCheck &a, const StoreCheck &b,
                        const ReportOptions &report) {
    if (report.mode != ReportMode::Record || !report.records)
      return false;
    if (!isa<triton::StoreOp>(a.op) || !isa<triton::StoreOp>(b.op) ||
        a.op->getBlock() != b.op->getBlock() ||
        !isa<triton::FuncOp>(a.op->getParentOp()) ||
        !isa<RankedTensorType>(a.value.getType()) ||
        a.value.getType() != b.value.getType() || !a.op->isBeforeInBlock(b.op))
      return false;
    if (!isa<triton::ReturnOp>(a.op->getBlock()->getTerminator()))
      return false;
    for (Operation *op = a.op->getNextNode(); op != b.op;
         op = op->getNextNode())
      if (op->getNumRegions() != 0 || !isPure(op))
        return false;
    return true;
  }

  /// One fast path for several stores of one tile type (issue 18, "merge
  /// per tile"): the masked |value|s are combined with a NaN-propagating
  /// elementwise maximum and reduced once, so a correct program pays one
  /// cross-warp reduction for the group instead of one per store (Liger's
  /// RoPE stores four tiles, fla's rotary two). Exact: the combined maximum
  /// is non-finite iff some store has a non-finite lane under its mask.
  /// Only then does each store count its own lanes and find its first; each
  /// site keeps its own record, updated before the `tt.return`.
  static void checkGroup(OpBuilder &builder, ArrayRef<StoreCheck> group,
                         const ReportOptions &report) {
    SmallVector<std::string> origins;
    for (const StoreCheck &c : group)
      origins.push_back(nonFiniteOrigin(c.value));
    std::string groupPath =
        "; peak path shared by " + std::to_string(group.size()) + " stores, " +
        std::to_string(elemsPerThread(group.front().value.getType())) +
        "/thread";
    Operation *lastStore = group.back().op;
    builder.setInsertionPointAfter(lastStore);
    Operation *ret = entryReturnAt(builder);
    Location loc = lastStore->getLoc();
    auto type = cast<RankedTensorType>(group.front().value.getType());
    auto floatTy = cast<FloatType>(type.getElementType());
    TypedAttr infAttr = builder.getFloatAttr(
        floatTy, APFloat::getInf(floatTy.getFloatSemantics()));
    Value inf = arith::ConstantOp::create(builder, loc, type,
                                          splatOrScalar(type, infAttr));
    SmallVector<Value> absolutes;
    Value combined;
    for (const StoreCheck &c : group) {
      Value absolute = math::AbsFOp::create(builder, loc, c.value);
      absolutes.push_back(absolute);
      Value peak = maskedMagnitude(builder, loc, absolute, c.mask);
      combined = combined
                     ? arith::MaximumFOp::create(builder, loc, combined, peak)
                           .getResult()
                     : peak;
    }
    Value found = anyNonFinite(builder, loc, combined, report);
    Type i32 = builder.getI32Type();
    SmallVector<Type> resultTypes(2 * group.size(), i32);
    auto ifOp = scf::IfOp::create(builder, loc, resultTypes, found,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(ifOp.thenBlock());
      SmallVector<Value> results;
      for (auto [c, absolute] : llvm::zip(group, absolutes)) {
        Value bad = arith::CmpFOp::create(
            builder, loc, arith::CmpFPredicate::UEQ, absolute, inf);
        if (c.mask)
          bad = arith::AndIOp::create(builder, loc, bad, c.mask);
        results.push_back(countTrue(builder, loc, bad));
        Value first = firstTrueLane(builder, loc, bad);
        results.push_back(
            first ? first
                  : arith::ConstantIntOp::create(builder, loc, i32, 0)
                        .getResult());
      }
      scf::YieldOp::create(builder, loc, results);
      builder.setInsertionPointToStart(ifOp.elseBlock());
      Value none = arith::ConstantIntOp::create(builder, loc, i32, 0);
      scf::YieldOp::create(builder, loc,
                           SmallVector<Value>(2 * group.size(), none));
    }
    for (auto [k, c] : llvm::enumerate(group)) {
      std::string kernel = kernelNameOf(c.op);
      emitRecordsAtEnd(builder, c.op->getLoc(), ret, ifOp.getResult(2 * k),
                       ifOp.getResult(2 * k + 1), type.getNumElements(),
                       ReportSite{"nan_inf_check", kernel,
                                  siteOf(c.op->getLoc()), "store non-finite",
                                  origins[k] + groupPath},
                       report);
    }
  }

  /// Adds (value, site op) for each float result of `loop` whose yielded
  /// value is a dot: the loop result, or the result of the
  /// `ttng.warp_group_dot_wait` after the loop that makes an async dot's
  /// result valid (its users read the waited value, not the loop result).
  static void
  collectLoopAccumulators(scf::ForOp loop,
                          SmallVectorImpl<std::pair<Value, Operation *>> &out) {
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    for (auto [idx, yielded] : llvm::enumerate(yield.getOperands())) {
      if (!isDotLike(yielded.getDefiningOp()))
        continue;
      Value result = loop.getResult(idx);
      Value checked = result;
      Operation *after = loop;
      for (OpOperand &use : result.getUses()) {
        if (use.getOwner()->getName().getStringRef() == kDotWait) {
          checked = use.getOwner()->getResult(use.getOperandNumber());
          after = use.getOwner();
          break;
        }
      }
      out.emplace_back(checked, after);
    }
  }

  /// Checks the dot result `value` under the masks of the stores that write
  /// its lanes, right before the last of them (see the file comment).
  static void checkDotAtStores(OpBuilder &builder, Location loc, Value value,
                               Operation *site, const ReportOptions &report) {
    auto valueTy = dyn_cast<RankedTensorType>(value.getType());
    if (!valueTy)
      return;
    llvm::SetVector<Operation *> stores;
    bool mayHide = false;
    collectStores(value, stores, /*depth=*/0, mayHide);
    if (stores.empty()) {
      LLVM_DEBUG(llvm::dbgs()
                 << "dot reaches no store, not checked: " << value << "\n");
      return;
    }
    // Redundant dot check: the dot check counts lane i when the dot result is
    // non-finite there and some store S of `stores` writes lane i. If every
    // op between the dot and its stores keeps a non-finite operand
    // non-finite (keepsNonFinite) and every store is checked itself, then
    // S's stored value is non-finite at lane i too (lane-preserving ops map
    // lane i to lane i), and S's own check, under S's mask, counts it. So
    // the store checks report whenever the dot check would (naming the
    // store's line instead of the dot's) and the dot check only costs a
    // second reduction over the accumulator (GEMM: plus a layout conversion
    // of the mask through shared memory). It stays where a path can hide a
    // non-finite value (max/min/select/compares, integer casts, a divisor)
    // or a store is not checked (fp8, warp-specialized partitions).
    if (!mayHide) {
      LLVM_DEBUG(llvm::dbgs()
                 << "dot covered by its store checks: " << value << "\n");
      return;
    }
    // Covered by one store: a store S reached from the dot through ops that
    // all keep a non-finite operand non-finite, checked itself, whose mask is
    // none or the very mask of every store of the dot. The dot check counts
    // lane i only under the union of the stores' masks, which is S's mask;
    // there S stores a non-finite value whenever the dot result is
    // non-finite, and S's check counts it. Other paths may hide the value
    // (Liger's MoE up-projection: `silu(gate) * up` goes through sigmoid's
    // divisor), S's check still sees it. This removed the second reduction
    // over both MoE accumulators.
    llvm::SetVector<Operation *> covering;
    collectCovering(value, covering, /*depth=*/0);
    for (Operation *store : covering) {
      Value mask = cast<triton::StoreOp>(store).getMask();
      if (!mask || llvm::all_of(stores, [&](Operation *other) {
            return cast<triton::StoreOp>(other).getMask() == mask;
          })) {
        LLVM_DEBUG(llvm::dbgs() << "dot covered by " << *store << "\n");
        return;
      }
    }
    Operation *last = stores.front();
    for (Operation *store : stores) {
      if (store->getBlock() != last->getBlock()) {
        LLVM_DEBUG(llvm::dbgs() << "dot stores in different blocks\n");
        return;
      }
      if (last->isBeforeInBlock(store))
        last = store;
    }
    // `value` dominates every store (each is reached from it through
    // operands), and the masks of the stores before `last` in its block
    // dominate `last`, so every value used below is available there.
    placeAt(builder, last, report);
    Value lanes;
    for (Operation *store : stores) {
      Value mask = cast<triton::StoreOp>(store).getMask();
      if (!mask) { // an unmasked store writes every lane
        lanes = Value();
        break;
      }
      Value converted = toLayoutOf(builder, loc, mask, valueTy);
      lanes =
          lanes
              ? arith::OrIOp::create(builder, loc, lanes, converted).getResult()
              : converted;
    }
    check(builder, loc, value, lanes, site, "dot", report);
  }

  /// Puts the check of what `store` writes right after it in record mode,
  /// right before it in abort mode. The check only reads SSA values the
  /// store also reads, so either place counts the same lanes. After the
  /// store, its pointers (two registers per lane) are dead, so the check and
  /// its reporting branch run with fewer live registers (ptxas sizes the
  /// kernel for the worst point, the cold branch included); in abort mode
  /// the assert must come first so that no non-finite value is written.
  static void placeAt(OpBuilder &builder, Operation *store,
                      const ReportOptions &report) {
    if (report.mode == ReportMode::Record)
      builder.setInsertionPointAfter(store);
    else
      builder.setInsertionPoint(store);
  }

  /// True if `user` maps lane i of its tensor operand `operand` to lane i of
  /// its one result: elementwise ops and layout conversions of one shape.
  static bool preservesLanes(Operation *user, Value operand) {
    if (user->getNumResults() != 1)
      return false;
    auto in = dyn_cast<RankedTensorType>(operand.getType());
    auto out = dyn_cast<RankedTensorType>(user->getResult(0).getType());
    if (!in || !out || in.getShape() != out.getShape())
      return false;
    return user->hasTrait<OpTrait::Elementwise>() ||
           isa<triton::FpToFpOp>(user) ||
           user->getName().getStringRef() == "ttg.convert_layout";
  }

  /// True if a non-finite value (NaN or +-Inf) in operand `operandIdx` of
  /// the lane-preserving op `user` makes its result non-finite in that lane,
  /// whatever the other operands hold: NaN propagates through every one of
  /// these; Inf + x, Inf * x, Inf / x and fma with an Inf factor or addend
  /// give +-Inf or NaN (Inf - Inf, Inf * 0, Inf / Inf); extf, truncf and
  /// fp_to_fp to f16/bf16/f32/f64 keep NaN and Inf (truncf can only add
  /// Inf); abs/neg keep them. Not listed, so treated as hiding: min/max
  /// (maxnumf(NaN, 1) = 1), select, compares, integer casts, the divisor of
  /// divf (1 / Inf = 0), and anything else.
  static bool keepsNonFinite(Operation *user, unsigned operandIdx) {
    if (isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::NegFOp,
            arith::ExtFOp, arith::TruncFOp, math::AbsFOp, math::FmaOp>(user))
      return isCheckedFloat(user->getResult(0).getType());
    if (isa<triton::FpToFpOp>(user))
      return isCheckedFloat(user->getResult(0).getType());
    if (isa<arith::DivFOp>(user))
      return operandIdx == 0;
    return user->getName().getStringRef() == "ttg.convert_layout";
  }

  /// The `tt.store`s whose stored value is `value` or reached from it
  /// through lane-preserving users. Sets `mayHide` if some path to a store
  /// goes through an op that can turn a non-finite value finite, or reaches
  /// a store that is not checked itself.
  static void collectStores(Value value, llvm::SetVector<Operation *> &stores,
                            unsigned depth, bool &mayHide) {
    if (depth > kMaxChain)
      return;
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto store = dyn_cast<triton::StoreOp>(user)) {
        if (use.get() == store.getValue()) {
          stores.insert(user);
          if (!isCheckedFloat(use.get().getType()) ||
              inWarpSpecializePartition(user))
            mayHide = true;
        }
        continue;
      }
      if (!preservesLanes(user, value))
        continue;
      bool pathMayHide = !keepsNonFinite(user, use.getOperandNumber());
      bool below = false;
      collectStores(user->getResult(0), stores, depth + 1, below);
      // Only paths that end in a store matter.
      if (below || (pathMayHide && reachesStore(user->getResult(0), depth + 1)))
        mayHide = true;
    }
  }

  /// The checked `tt.store`s (float, outside warp-specialized partitions)
  /// reached from `value` through lane-preserving ops that all keep a
  /// non-finite operand non-finite (keepsNonFinite).
  static void collectCovering(Value value,
                              llvm::SetVector<Operation *> &covering,
                              unsigned depth) {
    if (depth > kMaxChain)
      return;
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto store = dyn_cast<triton::StoreOp>(user)) {
        if (use.get() == store.getValue() &&
            isCheckedFloat(use.get().getType()) &&
            !inWarpSpecializePartition(user))
          covering.insert(user);
        continue;
      }
      if (preservesLanes(user, value) &&
          keepsNonFinite(user, use.getOperandNumber()))
        collectCovering(user->getResult(0), covering, depth + 1);
    }
  }

  /// The first op on a lane-preserving path from `value` to a store that
  /// can hide a non-finite value (keepsNonFinite), or a store that is not
  /// checked itself: why a dot check stays (see checkDotAtStores).
  static Operation *firstHiding(Value value, unsigned depth = 0) {
    if (depth > kMaxChain)
      return nullptr;
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto store = dyn_cast<triton::StoreOp>(user)) {
        if (use.get() == store.getValue() &&
            (!isCheckedFloat(use.get().getType()) ||
             inWarpSpecializePartition(user)))
          return user;
        continue;
      }
      if (!preservesLanes(user, value))
        continue;
      if (!keepsNonFinite(user, use.getOperandNumber()) &&
          reachesStore(user->getResult(0), depth + 1))
        return user;
      if (Operation *below = firstHiding(user->getResult(0), depth + 1))
        return below;
    }
    return nullptr;
  }

  /// A dot check's reason: the dot, and what may hide its NaN/Inf from the
  /// store checks.
  static std::string dotOrigin(Value value) {
    std::string dot = value.getDefiningOp()
                          ? "dot (" + shortSiteOf(value.getLoc()) + ")"
                          : "dot";
    Operation *hiding = firstHiding(value);
    if (!hiding)
      return dot + " reaches a store that may hide NaN/Inf";
    if (isa<triton::StoreOp>(hiding))
      return dot + " stored unchecked (" + shortSiteOf(hiding->getLoc()) + ")";
    return dot + " may be hidden by `" +
           hiding->getName().getStringRef().str() + "` (" +
           shortSiteOf(hiding->getLoc()) + ") before its store";
  }

  /// True if some `tt.store` writes `value` or a lane-preserving user of it.
  static bool reachesStore(Value value, unsigned depth) {
    llvm::SetVector<Operation *> found;
    bool ignored = false;
    collectStores(value, found, depth, ignored);
    return !found.empty();
  }

  /// `mask` (i1 tensor of `like`'s shape) in `like`'s layout.
  static Value toLayoutOf(OpBuilder &builder, Location loc, Value mask,
                          RankedTensorType like) {
    auto maskTy = cast<RankedTensorType>(mask.getType());
    auto want = RankedTensorType::get(like.getShape(), maskTy.getElementType(),
                                      like.getEncoding());
    if (want == maskTy)
      return mask;
    OperationState state(loc, "ttg.convert_layout", ValueRange{mask},
                         TypeRange{want});
    return builder.create(state)->getResult(0);
  }

  /// Reports non-finite lanes of `value` (under `mask`). The fast path is
  /// one NaN-propagating max reduction of |value| (masked-off lanes read
  /// 0): the maximum is NaN if any lane is NaN and +Inf if any lane is
  /// +-Inf, so `peak ueq +Inf` says whether anything is non-finite. That is
  /// three ops per lane (abs, select, max; two without a mask;
  /// maskedMagnitude) against five for a count (abs, compare, and,
  /// extend, add); the count and first lane are computed only when it fires.
  static void check(OpBuilder &builder, Location loc, Value value, Value mask,
                    Operation *site, StringRef what,
                    const ReportOptions &report) {
    Type type = value.getType();
    // Before the check adds users of its own.
    bool liveAfter = usedAfter(value, site);
    std::string why = what == "dot" ? dotOrigin(value) : nonFiniteOrigin(value);
    int64_t perThread =
        isa<RankedTensorType>(type) ? elemsPerThread(type) : int64_t(1);
    auto reasonFor = [&](StringRef path) {
      return (why + "; " + path + ", " + Twine(perThread) + "/thread" +
              (site->getParentOfType<LoopLikeOpInterface>() ? ", in loop" : ""))
          .str();
    };
    auto floatTy = cast<FloatType>(getElementTypeOrSelf(type));
    TypedAttr infAttr = builder.getFloatAttr(
        floatTy, APFloat::getInf(floatTy.getFloatSemantics()));
    Value inf = arith::ConstantOp::create(builder, loc, type,
                                          splatOrScalar(type, infAttr));
    Value absolute = math::AbsFOp::create(builder, loc, value);
    std::string kernel = kernelNameOf(site);
    std::string kind = (what + " non-finite").str();
    ReportSite reportSite{"nan_inf_check", kernel, siteOf(loc), kind};
    if (what == "store") {
      ReportSite acrossLoop = reportSite;
      acrossLoop.reason =
          reasonFor("loop path: counts carried, reported after it");
      if (checkAcrossLoop(builder, loc, value, mask, absolute, inf, site,
                          acrossLoop, report)) {
        // The per-thread branch form takes |value| inside its own region.
        if (absolute.use_empty())
          absolute.getDefiningOp()->erase();
        if (inf.use_empty())
          inf.getDefiningOp()->erase();
        return;
      }
    }
    if (report.fastPath == FastPath::Warp && report.records &&
        report.mode == ReportMode::Record && report.print == PrintMode::None &&
        isa<RankedTensorType>(type) &&
        elemsPerThread(type) <= kCountMaxElemsPerThread && !liveAfter) {
      // Warp fast path: (count, first lane) per warp, records updated by
      // masked tensor atomics right here. No cross-warp step, so no shared
      // memory and no barrier on the clean path; the tile dies here as on
      // the count path.
      auto compare = arith::CmpFOp::create(
          builder, loc, arith::CmpFPredicate::UEQ, absolute, inf);
      Value bad = compare;
      if (mask)
        bad = arith::AndIOp::create(builder, loc, bad, mask);
      reportSite.reason = reasonFor("warp path");
      if (emitWarpRecords(builder, loc, bad, reportSite, report))
        return;
      // Layout not handled (emitWarpRecords built nothing): the count path.
      if (mask)
        bad.getDefiningOp()->erase();
      compare->erase();
    }
    if (report.fastPath == FastPath::Reload)
      reportSite.reason = reasonFor("reload path");
    if (report.fastPath == FastPath::Reload &&
        checkByReload(builder, loc, value, mask, absolute, inf, site,
                      reportSite, report))
      return;
    if ((report.fastPath == FastPath::Count ||
         report.fastPath == FastPath::Warp ||
         report.fastPath == FastPath::Reload) &&
        report.records && report.mode == ReportMode::Record &&
        isa<RankedTensorType>(type) &&
        elemsPerThread(type) <= kCountMaxElemsPerThread && !liveAfter) {
      // Count fast path: the exact (count, first lane) in one reduction
      // right here; the tile is dead after it (the peak fast path keeps
      // |value| live across its reduction for the reporting branch: RMS-norm
      // forward 39 -> 47 registers).
      Value bad = arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::UEQ,
                                        absolute, inf);
      if (mask)
        bad = arith::AndIOp::create(builder, loc, bad, mask);
      auto [count, first] = countAndFirstLane(builder, loc, bad);
      if (count) {
        // In the kernel's entry block the records are updated before the
        // return; in a loop or branch right here (the branch only holds
        // scalar atomics: nothing of the tile is live in it).
        Operation *ret = entryReturnAt(builder);
        Operation *at = ret ? ret : &*builder.getInsertionPoint();
        reportSite.reason = reasonFor("count path");
        emitRecordsAtEnd(builder, loc, at, count, first,
                         cast<RankedTensorType>(type).getNumElements(),
                         reportSite, report);
        return;
      }
    }
    Value found = peakIsNonFinite(builder, loc, absolute, mask, report);
    // Why the count and warp paths were not taken, when asked for.
    StringRef because = "";
    if (report.fastPath != FastPath::Peak && isa<RankedTensorType>(type)) {
      if (report.mode != ReportMode::Record || !report.records)
        because = " (abort mode or no records)";
      else if (liveAfter)
        because = " (value used after its store)";
      else if (perThread > kCountMaxElemsPerThread)
        because = " (> 64/thread)";
    }
    reportSite.reason = reasonFor(("peak path" + because).str());
    reportWhenPeakFires(
        builder, loc, found, [&](OpBuilder &, Location) { return absolute; },
        inf, mask, reportSite, report);
  }

  /// The reporting branch of the peak and reload paths: under `found`, the
  /// bad lanes are `|magnitude| ueq +Inf` under `mask`, built once at the
  /// start of the branch (the count needs them first; the first-lane search
  /// reuses them). `magnitude` gives |value| there: the peak path's live
  /// |value|, or the absolute value of the reloaded lanes.
  static void
  reportWhenPeakFires(OpBuilder &builder, Location loc, Value found,
                      function_ref<Value(OpBuilder &, Location)> magnitude,
                      Value inf, Value mask, const ReportSite &reportSite,
                      const ReportOptions &report) {
    Value badLanes;
    auto lanes = [&](OpBuilder &b, Location l) -> Value {
      if (badLanes)
        return badLanes;
      Value bad = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UEQ,
                                        magnitude(b, l), inf);
      badLanes =
          mask ? arith::AndIOp::create(b, l, bad, mask).getResult() : bad;
      return badLanes;
    };
    emitReportWhen(
        builder, loc, found,
        [&](OpBuilder &b, Location l) { return countTrue(b, l, lanes(b, l)); },
        lanes, reportSite, report);
  }

  /// True if an `scf.for` precedes `op` in its block: a GEMM or attention
  /// epilogue after its K loop. There the reload needs the store's 2-D
  /// pointer tile live across the reduction, which costs more than the count
  /// path's per-lane work (torchao's scaled int8 GEMM: 128 registers with
  /// count, 142 with reload; H200 0.996x -> 0.784x).
  static bool followsLoopInBlock(Operation *op) {
    for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode())
      if (isa<scf::ForOp>(prev))
        return true;
    return false;
  }

  /// The reload fast path: the clean path is the peak path's (|value|
  /// under the mask, one NaN-propagating max reduction; with 16-bit floats
  /// `abs` and `max` take two lanes per instruction), and only a program
  /// whose peak is non-finite counts lanes and finds the first one, from the
  /// lanes it reloads from the addresses it has just stored to. Nothing of
  /// the tile is live after the reduction (the peak path keeps |value| live
  /// across it for its recount: Liger RMS-norm forward 39 -> 47 registers),
  /// and the clean path has no per-lane count and index work (the count
  /// path's five to ten instructions per lane). Legal: the check runs right
  /// after the store, and a thread reading an address it has just written
  /// reads that write (or a later one: only a kernel whose programs store to
  /// the same address races with itself, and there the count is of what the
  /// memory holds); the reload is volatile so that it stays on the reporting
  /// branch. Returns false (builds nothing) where it does not apply: not a
  /// `tt.store` of `value` to a tensor of pointers, more than 64 elements per
  /// thread, not record mode.
  static bool checkByReload(OpBuilder &builder, Location loc, Value value,
                            Value mask, Value absolute, Value inf,
                            Operation *site, const ReportSite &reportSite,
                            const ReportOptions &report) {
    auto store = dyn_cast<triton::StoreOp>(site);
    auto type = dyn_cast<RankedTensorType>(value.getType());
    // Tiles of more than 64 elements per thread (GEMM epilogues) keep the
    // peak path: their reporting branch would need the store's pointers live
    // across the reduction (in-house fp16 GEMM 199 -> 202 registers).
    if (!store || !type || store.getValue() != value ||
        elemsPerThread(type) > kCountMaxElemsPerThread ||
        elemsPerThread(type) < kReloadMinElemsPerThread ||
        followsLoopInBlock(store) ||
        !isa<RankedTensorType>(store.getPtr().getType()) ||
        report.mode != ReportMode::Record ||
        builder.getInsertionPoint() == builder.getInsertionBlock()->end() ||
        !store->isBeforeInBlock(&*builder.getInsertionPoint()))
      return false;
    Value found = peakIsNonFinite(builder, loc, absolute, mask, report);
    Value storeMask = store.getMask();
    Value ptr = store.getPtr();
    auto reloaded = [&](OpBuilder &b, Location l) -> Value {
      Value stored =
          storeMask ? triton::LoadOp::create(b, l, ptr, storeMask,
                                             /*isVolatile=*/true)
                          .getResult()
                    : triton::LoadOp::create(b, l, ptr, /*isVolatile=*/true)
                          .getResult();
      return math::AbsFOp::create(b, l, stored);
    };
    reportWhenPeakFires(builder, loc, found, reloaded, inf, mask, reportSite,
                        report);
    return true;
  }

  /// `absolute` (|value|) with the masked-off lanes 0, for a NaN-propagating
  /// maximum that is non-finite iff a masked-in lane is: a select of |value|.
  /// Tried and not kept: minnum(|value|, mask ? +Inf : 0) for 16-bit floats,
  /// which keeps packed pairs together on the clean path (Liger's softmax
  /// 0.887 -> 0.912x, Liger's layer norm 0.906 -> 0.936x on the H200) but
  /// made kernels it was not shaped on slower (fla's l2norm forward 0.946 ->
  /// 0.874x, FlagGems' decode RMS norm with all three checks 0.965 -> 0.893x;
  /// results/lastmile-analysis.md, Round 4 on the H200).
  static Value maskedMagnitude(OpBuilder &builder, Location loc, Value absolute,
                               Value mask) {
    if (!mask)
      return absolute;
    Type type = absolute.getType();
    auto floatTy = cast<FloatType>(getElementTypeOrSelf(type));
    Value zero = arith::ConstantOp::create(
        builder, loc, type,
        splatOrScalar(type, builder.getFloatAttr(floatTy, 0.0)));
    return arith::SelectOp::create(builder, loc, mask, absolute, zero);
  }

  /// The peak fast path's test (i1 scalar): the NaN-propagating maximum of
  /// `absolute` (|value|; masked-off lanes read 0, maskedMagnitude) is
  /// unordered (a NaN lane) or +Inf (a +-Inf lane).
  static Value peakIsNonFinite(OpBuilder &builder, Location loc, Value absolute,
                               Value mask, const ReportOptions &report) {
    return anyNonFinite(builder, loc,
                        maskedMagnitude(builder, loc, absolute, mask), report);
  }

  /// True (i1 scalar) iff some lane of `peak` (|value|, masked-off lanes 0)
  /// is NaN or +Inf: its NaN-propagating maximum is unordered or +Inf.
  ///
  /// With `report.votes`, a tile's test is built so that barrier_vote (llir
  /// stage) can make it one barrier vote (`barrier.red.or.pred`) instead of a
  /// reduction with shuffles, a shared-memory round trip and two barriers
  /// (the whole clean-path cost of a row kernel's check: Liger's softmax
  /// 0.888x on the H200). Each thread's flag (its elements' maximum tested,
  /// in a `tt.map_elementwise` whose pack is all of the thread's elements, so
  /// it runs once per thread) fills its elements; their maximum over the
  /// tile, a reduction whose ops carry the tag kBarrierVoteTag + number, is
  /// the same test as before. Without barrier_vote the tagged reduction runs
  /// as it is and gives the same answer.
  static Value anyNonFinite(OpBuilder &builder, Location loc, Value peak,
                            const ReportOptions &report) {
    auto floatTy = cast<FloatType>(getElementTypeOrSelf(peak.getType()));
    auto infOf = [&](Location at) -> Value {
      return arith::ConstantOp::create(
          builder, at, floatTy,
          builder.getFloatAttr(floatTy,
                               APFloat::getInf(floatTy.getFloatSemantics())));
    };
    auto type = dyn_cast<RankedTensorType>(peak.getType());
    // Not for tiles of more than 64 elements per thread (GEMM epilogues,
    // whose own work dwarfs one reduction): the flag's map made ptxas hold
    // more of the tile (in-house fp16 GEMM, 128 per thread: 198 -> 214
    // registers).
    // Nor for tiles one warp holds whole (a row's 16 means): their reduction
    // never leaves the warp, so there is no cross-warp step for a vote to
    // replace.
    if (!report.votes || !type || !type.getEncoding() ||
        elemsPerThread(type) > kCountMaxElemsPerThread ||
        type.getNumElements() <=
            elemsPerThread(type) * triton::gpu::lookupThreadsPerWarp(builder)) {
      Value top = maxAll(builder, loc, peak);
      return arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::UEQ, top,
                                   infOf(loc));
    }
    int64_t perThread = elemsPerThread(type);
    Type i32 = builder.getI32Type();
    auto flags = triton::MapElementwiseOp::create(
        builder, loc, TypeRange{type.clone(i32)}, ValueRange{peak},
        uint32_t(perThread));
    {
      OpBuilder::InsertionGuard guard(builder);
      SmallVector<Type> argTypes(perThread, floatTy);
      Block *body =
          builder.createBlock(&flags.getScalarOp(), {}, argTypes,
                              SmallVector<Location>(argTypes.size(), loc));
      Value top = body->getArgument(0);
      for (Value arg : llvm::drop_begin(body->getArguments()))
        top = arith::MaximumFOp::create(builder, loc, top, arg);
      Value found = arith::CmpFOp::create(
          builder, loc, arith::CmpFPredicate::UEQ, top, infOf(loc));
      Value flag = arith::ExtUIOp::create(builder, loc, i32, found);
      triton::MapElementwiseReturnOp::create(
          builder, loc, SmallVector<Value>(perThread, flag));
    }
    Location tagged =
        NameLoc::get(builder.getStringAttr(Twine(kBarrierVoteTag) +
                                           Twine((*report.votes)++)),
                     loc);
    Value any = reduceAll(builder, tagged, flags.getResults()[0],
                          [](OpBuilder &b, Location l, Value x, Value y) {
                            return arith::MaxUIOp::create(b, l, x, y);
                          });
    Value zero = arith::ConstantIntOp::create(builder, loc, i32, 0);
    return arith::CmpIOp::create(builder, tagged, arith::CmpIPredicate::ne, any,
                                 zero);
  }

  /// NaN-propagating maximum over every lane of `value` (a float scalar).
  static Value maxAll(OpBuilder &builder, Location loc, Value value) {
    return reduceAll(builder, loc, value,
                     [](OpBuilder &b, Location l, Value x, Value y) {
                       return arith::MaximumFOp::create(b, l, x, y);
                     });
  }

  /// `combine` (commutative and associative) over every lane of `value`.
  static Value
  reduceAll(OpBuilder &builder, Location loc, Value value,
            function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
    auto tensorTy = dyn_cast<RankedTensorType>(value.getType());
    if (!tensorTy)
      return value;
    Type elt = tensorTy.getElementType();
    if (tensorTy.getRank() > 1 && tensorTy.getEncoding()) {
      // The result does not depend on the order of the operands: view the
      // tile as 1-D with reordering allowed (a register reinterpretation, no
      // data movement), so that one reduction, with one cross-warp step,
      // covers it instead of one per dimension.
      value = triton::ReshapeOp::create(builder, loc,
                                        {tensorTy.getNumElements()}, value,
                                        /*allowReorder=*/true);
      tensorTy = cast<RankedTensorType>(value.getType());
    }
    for (int64_t rank = tensorTy.getRank(); rank > 0; --rank) {
      auto reduce = triton::ReduceOp::create(
          builder, loc, ValueRange{value},
          nextReduceAxis(cast<RankedTensorType>(value.getType())));
      OpBuilder::InsertionGuard guard(builder);
      Block *body = builder.createBlock(&reduce.getCombineOp(), {}, {elt, elt},
                                        {loc, loc});
      Value combined =
          combine(builder, loc, body->getArgument(0), body->getArgument(1));
      triton::ReduceReturnOp::create(builder, loc, ValueRange{combined});
      value = reduce.getResult()[0];
    }
    return value;
  }

  static TypedAttr splatOrScalar(Type type, TypedAttr scalar) {
    if (auto shaped = dyn_cast<ShapedType>(type))
      return DenseElementsAttr::get(shaped, scalar);
    return scalar;
  }
};

} // namespace

TRITON_EXT_REGISTER_PASS(nan_inf_check, NanInfCheckPass);
