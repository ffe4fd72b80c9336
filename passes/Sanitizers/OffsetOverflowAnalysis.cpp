//===- OffsetOverflowAnalysis.cpp - Which offsets may wrap, and why -------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// The analysis half of offset_overflow_check (see OffsetOverflowAnalysis.h):
// which i32 trees are offsets, which of them provably never wrap (StaticRange),
// which accesses read an offset's lanes and under which masks, and the reason
// text of a site. Reads the IR only; OffsetOverflowCheck.cpp builds the checks.
//
//===----------------------------------------------------------------------===//

#include "OffsetOverflowAnalysis.h"

#include "SanitizerUtils.h"

#include "triton-ext/RangeAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "triton/Dialect/Triton/IR/Dialect.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

namespace mlir::triton_ext::sanitizers::offset_overflow {
namespace {

using range::Interval;

/// Compile-time bounds of what wrappedLanes compares: the exact (unbounded)
/// value of an i32 add/sub/mul tree, cut like WideRecompute (depth, product of
/// products), over all lanes, programs and launches. A root whose interval
/// fits in i32 never wraps (its i32 result is the exact value mod 2^32 and the
/// exact value is representable), so its check is left out: no IR at all.
///
/// Leaves: constants; `tt.make_range` [start, end - 1]; program ids and
/// counts within the CUDA grid limits (x < 2^31 - 1, y and z < 65535);
/// `scf.for` induction variables within their bounds; `remsi`, `remui`,
/// `divsi` and `andi` by constants; min/max; sign/zero extension; values
/// stated by `llvm.intr.assume` (`tl.assume(x < c)` and friends) or
/// `triton_ext_range.assume_range`; anything else gets its type's full range.
/// Every rule over-approximates, so "fits" is a proof. The facts and the
/// grid limits are the shared ones (triton-ext/RangeAnalysis.h); the exact
/// sums and products over the tree are this class's own: MLIR's integer range
/// analysis bounds wrapped values, so it cannot tell whether a sum wrapped.
class StaticRange {
public:
  /// `ranges`, if given, narrows every leaf by MLIR's integer range analysis
  /// (the values a leaf holds at run time: what the i64 recompute reads).
  explicit StaticRange(const range::IntegerRanges *ranges = nullptr)
      : ranges(ranges) {}

  Interval of(Value value, unsigned depth = 0, unsigned products = 0) {
    Operation *def = value.getDefiningOp();
    if (std::optional<unsigned> inner =
            expandedProducts(value, depth, products)) {
      Interval a = of(def->getOperand(0), depth + 1, *inner);
      Interval b = of(def->getOperand(1), depth + 1, *inner);
      // Saturated bounds leave i32 as the exact ones do (Interval).
      if (isa<arith::AddIOp>(def))
        return Interval::addSat(a, b);
      if (isa<arith::SubIOp>(def))
        return Interval::subSat(a, b);
      return Interval::mulSat(a, b);
    }
    if (def && isa<triton::SplatOp, triton::BroadcastOp, triton::ExpandDimsOp>(
                   def) &&
        depth < kMaxDepth)
      return of(def->getOperand(0), depth + 1, products).meet(facts(value));
    return leaf(value, depth);
  }

  /// True if `root`'s exact value provably fits in i32 on every lane.
  bool fitsI32(Value root) { return of(root).within(Interval::full(32)); }

private:
  const range::IntegerRanges *ranges;

  static std::optional<int64_t> constantOf(Value value) {
    return range::constantOf(value);
  }

  static unsigned bitsOf(Value value) {
    Type elt = getElementTypeOrSelf(value.getType());
    return elt.isInteger() ? elt.getIntOrFloatBitWidth() : 64;
  }

  /// Bounds stated about `value` itself: an `assume_range` defining it,
  /// and `llvm.intr.assume`s on it in the kernel's entry block (the shared
  /// readers of RangeAnalysis.h).
  Interval facts(Value value) {
    Interval out = Interval::full(bitsOf(value));
    if (std::optional<Interval> stated =
            range::assumedRange(value.getDefiningOp()))
      out = out.meet(*stated);
    return range::entryAssumedRange(value, out);
  }

  Interval leaf(Value value, unsigned depth) {
    Interval out = facts(value);
    if (ranges)
      if (std::optional<Interval> held = ranges->signedRange(value))
        out = out.meet(*held);
    if (std::optional<int64_t> c = constantOf(value))
      return {*c, *c};
    if (depth >= kMaxDepth)
      return out;
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      // An scf.for induction variable with a positive step lies in
      // [lb, ub - 1] whenever the body runs.
      if (auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()))
        if (arg == loop.getInductionVar() && !loop.getUnsignedCmp()) {
          std::optional<int64_t> step = constantOf(loop.getStep());
          if (step && *step > 0) {
            Interval lb = leaf(loop.getLowerBound(), depth + 1);
            Interval ub = leaf(loop.getUpperBound(), depth + 1);
            if (ub.hi > INT64_MIN)
              return out.meet({lb.lo, ub.hi - 1});
          }
        }
      return out;
    }
    Operation *def = value.getDefiningOp();
    if (!def)
      return out;
    if (auto range = dyn_cast<triton::MakeRangeOp>(def))
      return out.meet({range.getStart(), int64_t(range.getEnd()) - 1});
    if (std::optional<Interval> grid =
            range::gridRange(def, range::GridLimits::Cuda))
      return out.meet(*grid);
    if (isI32Arith(value)) // a cut leaf: the wrapped value, exact if it fits
      return of(value, depth).within(Interval::full(32)) ? of(value, depth)
                                                         : out;
    if (isa<triton::SplatOp, triton::BroadcastOp, triton::ExpandDimsOp,
            arith::ExtSIOp>(def))
      return out.meet(leaf(def->getOperand(0), depth + 1));
    if (isa<arith::ExtUIOp>(def)) {
      Interval src = leaf(def->getOperand(0), depth + 1);
      unsigned bits = bitsOf(def->getOperand(0));
      return src.lo >= 0 ? out.meet(src)
                         : out.meet({0, (int64_t(1) << bits) - 1});
    }
    std::optional<int64_t> rhs =
        def->getNumOperands() == 2 ? constantOf(def->getOperand(1))
                                   : std::nullopt;
    if (isa<arith::RemSIOp>(def) && rhs && *rhs != 0 && *rhs != INT64_MIN) {
      int64_t m = std::abs(*rhs) - 1;
      Interval src = leaf(def->getOperand(0), depth + 1);
      return out.meet({src.lo >= 0 ? 0 : -m, src.hi <= 0 ? 0 : m});
    }
    if (isa<arith::RemUIOp>(def) && rhs && *rhs > 0)
      return out.meet({0, *rhs - 1});
    if (isa<arith::DivSIOp>(def) && rhs && *rhs > 0) {
      Interval src = leaf(def->getOperand(0), depth + 1);
      return out.meet({src.lo / *rhs, src.hi / *rhs});
    }
    if (isa<arith::AndIOp>(def) && rhs && *rhs >= 0)
      return out.meet({0, *rhs});
    if (isa<arith::MinSIOp, arith::MaxSIOp>(def)) {
      Interval a = leaf(def->getOperand(0), depth + 1);
      Interval b = leaf(def->getOperand(1), depth + 1);
      if (isa<arith::MinSIOp>(def))
        return out.meet({std::min(a.lo, b.lo), std::min(a.hi, b.hi)});
      return out.meet({std::max(a.lo, b.lo), std::max(a.hi, b.hi)});
    }
    return out;
  }
};

/// The conjuncts of `mask` (an access's mask, of the shape the pointer has
/// after the shape ops `path` applied to an offset) that map back to the
/// offset's lanes, appended to `out`: `arith.andi` is split, and each step
/// of `path`, taken back from the last, must be matched by the same shape op
/// on the mask (`tt.broadcast` from the same shape, `tt.expand_dims` on the
/// same axis), whose source then holds the mask of the offset's lanes.
/// Conjuncts that do not map are left out: the lanes they would turn off are
/// then counted (a superset of the accessed lanes).
void maskConjuncts(Value mask, ArrayRef<Operation *> path,
                          SmallVectorImpl<Value> &out, unsigned depth = 0) {
  if (depth > kMaxDepth)
    return;
  Operation *def = mask.getDefiningOp();
  if (auto both = dyn_cast_or_null<arith::AndIOp>(def)) {
    maskConjuncts(both.getLhs(), path, out, depth + 1);
    maskConjuncts(both.getRhs(), path, out, depth + 1);
    return;
  }
  if (path.empty()) {
    out.push_back(mask);
    return;
  }
  Operation *step = path.back();
  if (!def || def->getName() != step->getName() ||
      cast<ShapedType>(def->getOperand(0).getType()).getShape() !=
          cast<ShapedType>(step->getOperand(0).getType()).getShape())
    return;
  if (auto expand = dyn_cast<triton::ExpandDimsOp>(def))
    if (expand.getAxis() != cast<triton::ExpandDimsOp>(step).getAxis())
      return;
  maskConjuncts(def->getOperand(0), path.drop_back(), out, depth + 1);
}

/// A value a leaf is computed from, in a few words: a kernel argument or a
/// named value by its name, a constant by its value, else its op.
std::string operandText(Value value) {
  // Shape ops and extensions copy the value they are given.
  for (unsigned depth = 0; depth < 4; ++depth) {
    Operation *def = value.getDefiningOp();
    if (!def || !isa<triton::SplatOp, triton::BroadcastOp, triton::ExpandDimsOp,
                     arith::ExtSIOp, arith::ExtUIOp>(def))
      break;
    value = def->getOperand(0);
  }
  if (auto cst = value.getDefiningOp<arith::ConstantOp>())
    if (auto i = dyn_cast<IntegerAttr>(cst.getValue()))
      return std::to_string(i.getValue().getSExtValue());
  std::string name = nameOf(value);
  if (auto arg = dyn_cast<BlockArgument>(value))
    if (isa_and_nonnull<triton::FuncOp>(arg.getOwner()->getParentOp()))
      return name.empty() ? "arg #" + std::to_string(arg.getArgNumber())
                          : "arg `" + name + "`";
  if (!name.empty())
    return "`" + name + "`";
  if (Operation *def = value.getDefiningOp())
    return def->getName().getStringRef().str();
  return "a block argument";
}

/// What a leaf of an offset tree is, for a site's reason (issue 18: say per
/// kernel what is unproven): a kernel argument by name, a loaded value with
/// its line, a loop index or loop-carried value, `x % M` with a run-time M,
/// a cut product of products, a program id.
std::string describeLeaf(Value value, unsigned depth = 0) {
  std::string name = nameOf(value);
  auto named = [&](StringRef what) {
    return name.empty() ? what.str() : (what + " `" + name + "`").str();
  };
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    Operation *owner = arg.getOwner()->getParentOp();
    if (isa_and_nonnull<triton::FuncOp>(owner))
      return operandText(value);
    if (auto loop = dyn_cast_or_null<scf::ForOp>(owner)) {
      // Triton names a loop's block arguments after its iter_args, so the
      // induction variable is named by its loop.
      std::string at = shortSiteOf(loop.getLoc());
      if (arg == loop.getInductionVar())
        return "loop index up to " + operandText(loop.getUpperBound()) + " (" +
               at + ")";
      return named("loop-carried value") + " (" + at + ")";
    }
    return named("block argument");
  }
  Operation *def = value.getDefiningOp();
  std::string at = " (" + shortSiteOf(def->getLoc()) + ")";
  if (isa<triton::LoadOp>(def))
    return named("loaded") + at;
  if (isa<arith::ExtSIOp, arith::ExtUIOp, arith::TruncIOp, triton::SplatOp,
          triton::BroadcastOp, triton::ExpandDimsOp>(def) &&
      depth < 4)
    return describeLeaf(def->getOperand(0), depth + 1);
  if (isa<arith::RemSIOp, arith::RemUIOp, arith::DivSIOp, arith::DivUIOp>(
          def)) {
    StringRef op = isa<arith::RemSIOp, arith::RemUIOp>(def) ? "%" : "/";
    return ("x " + op + " " + operandText(def->getOperand(1)) + at).str();
  }
  if (isI32Arith(value))
    return named(isa<arith::MulIOp>(def) ? "product of products"
                                         : "deep sum (tree cut)") +
           at;
  if (auto pid = dyn_cast<triton::GetProgramIdOp>(def))
    return "program_id(" + std::to_string(pid.getAxisAsInt()) + ")";
  if (auto num = dyn_cast<triton::GetNumProgramsOp>(def))
    return "num_programs(" + std::to_string(num.getAxisAsInt()) + ")";
  return named(def->getName().getStringRef()) + at;
}

/// `v` for a reason: small values as they are, large ones next to a power
/// of two as 2^k-c (c <= 2), others as ~2^k.
std::string boundText(int64_t v) {
  if (v < 0)
    return "-" + boundText(v == INT64_MIN ? INT64_MAX : -v);
  if (v < (int64_t(1) << 20))
    return std::to_string(v);
  for (int64_t c = -2; c <= 2; ++c) {
    uint64_t p = uint64_t(v) + c;
    if (llvm::isPowerOf2_64(p)) {
      std::string k = "2^" + std::to_string(llvm::Log2_64(p));
      return c == 0  ? k
             : c > 0 ? k + "-" + std::to_string(c)
                     : k + "+" + std::to_string(-c);
    }
  }
  return "~2^" + std::to_string(llvm::Log2_64(uint64_t(v)));
}

/// The leaves of `value`'s tree (cut as StaticRange cuts it) that keep it
/// from fitting i32: those with no bound at all (`unbounded`), and those
/// bounded only loosely, beyond +-2^16 (`loose`, with their bound: a program
/// id along x, up to 2^31-2); ranges, constants and small values are left
/// out.
void collectUnprovenLeaves(Value value, StaticRange &ranges,
                                  SmallVectorImpl<std::string> &unbounded,
                                  SmallVectorImpl<std::string> &loose,
                                  unsigned depth = 0, unsigned products = 0) {
  Operation *def = value.getDefiningOp();
  if (std::optional<unsigned> inner =
          expandedProducts(value, depth, products)) {
    for (Value operand : def->getOperands())
      collectUnprovenLeaves(operand, ranges, unbounded, loose, depth + 1,
                            *inner);
    return;
  }
  if (def &&
      isa<triton::SplatOp, triton::BroadcastOp, triton::ExpandDimsOp>(def) &&
      depth < kMaxDepth) {
    collectUnprovenLeaves(def->getOperand(0), ranges, unbounded, loose,
                          depth + 1, products);
    return;
  }
  Interval range = ranges.of(value, depth, products);
  constexpr int64_t kSmall = int64_t(1) << 16;
  if (range.within({-kSmall, kSmall}))
    return;
  std::string text = describeLeaf(value);
  unsigned bits = getElementTypeOrSelf(value.getType()).getIntOrFloatBitWidth();
  Interval full = Interval::full(bits);
  bool bounded = range.lo != full.lo || range.hi != full.hi;
  if (bounded)
    text += range.lo >= 0 ? " <= " + boundText(range.hi)
                          : " in [" + boundText(range.lo) + ", " +
                                boundText(range.hi) + "]";
  SmallVectorImpl<std::string> &out = bounded ? loose : unbounded;
  if (!llvm::is_contained(out, text))
    out.push_back(text);
}

} // namespace

bool isI32Arith(Value value) {
  Operation *def = value.getDefiningOp();
  return def && isa<arith::AddIOp, arith::SubIOp, arith::MulIOp>(def) &&
         getElementTypeOrSelf(value.getType()).isInteger(32);
}

std::optional<unsigned> expandedProducts(Value value, unsigned depth,
                                         unsigned products) {
  if (!isI32Arith(value) || depth >= kMaxDepth)
    return std::nullopt;
  if (!isa<arith::MulIOp>(value.getDefiningOp()))
    return products;
  if (products > 0)
    return std::nullopt;
  return products + 1;
}

Value arithRoot(Value offset) {
  for (unsigned depth = 0; depth < kMaxDepth; ++depth) {
    if (auto ext = offset.getDefiningOp<arith::ExtSIOp>())
      offset = ext.getIn();
    Operation *def = offset.getDefiningOp();
    if (!def || !isa<triton::SplatOp, triton::BroadcastOp,
                     triton::ExpandDimsOp>(def))
      break;
    offset = def->getOperand(0);
  }
  return isI32Arith(offset) ? offset : Value();
}

std::optional<SmallVector<Operation *>>
loopInvariantSlice(Value root, scf::ForOp loop, bool allowIV) {
  llvm::SetVector<Operation *> ops;
  SmallVector<Value> work{root};
  while (!work.empty()) {
    Value value = work.pop_back_val();
    if (loop.isDefinedOutsideOfLoop(value) ||
        (allowIV && value == loop.getInductionVar()))
      continue;
    Operation *def = value.getDefiningOp();
    if (!def || def->getBlock() != loop.getBody() || def->getNumRegions() ||
        !isMemoryEffectFree(def))
      return std::nullopt;
    if (!ops.insert(def))
      continue;
    if (ops.size() > kMaxHoisted)
      return std::nullopt;
    llvm::append_range(work, def->getOperands());
  }
  SmallVector<Operation *> sorted(ops.begin(), ops.end());
  llvm::sort(sorted,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return sorted;
}

bool accessMasks(Value value, bool offset,
                        SmallVectorImpl<Operation *> &path,
                        SmallVectorImpl<SmallVector<Value>> &accesses,
                        unsigned depth) {
  if (depth > kMaxDepth || accesses.size() > 16)
    return false;
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    unsigned index = use.getOperandNumber();
    bool ok = false;
    auto userTy = dyn_cast_or_null<RankedTensorType>(
        user->getNumResults() == 1 ? user->getResult(0).getType() : Type());
    if (offset && userTy && userTy.getShape() == cast<RankedTensorType>(
                                                     value.getType())
                                                     .getShape() &&
        isa<arith::ExtSIOp, arith::AddIOp, arith::SubIOp, arith::MulIOp>(
            user)) {
      // Lane i of the result is computed from lane i of `value` (a larger
      // offset tree, whose own check recomputes this one): its accesses
      // touch the lanes of `value` they touch of the result.
      ok = accessMasks(user->getResult(0), offset, path, accesses, depth + 1);
    } else if (isa<triton::BroadcastOp, triton::ExpandDimsOp>(user)) {
      path.push_back(user);
      ok = accessMasks(user->getResult(0), offset, path, accesses, depth + 1);
      path.pop_back();
    } else if (isa<triton::AddPtrOp>(user) && index == (offset ? 1 : 0)) {
      ok = accessMasks(user->getResult(0), /*offset=*/false, path, accesses,
                       depth + 1);
    } else if (!offset && index == 0 &&
               isa<triton::LoadOp, triton::StoreOp>(user)) {
      Value mask = isa<triton::LoadOp>(user)
                       ? cast<triton::LoadOp>(user).getMask()
                       : cast<triton::StoreOp>(user).getMask();
      SmallVector<Value> conjuncts;
      if (mask)
        maskConjuncts(mask, path, conjuncts);
      accesses.push_back(conjuncts);
      ok = true;
    }
    if (!ok)
      return false;
  }
  return true;
}

scf::ForOp flattenedNest(Operation *op) {
  scf::ForOp outermost;
  for (Operation *parent = op->getParentOp(); auto loop =
           dyn_cast_or_null<scf::ForOp>(parent);
       parent = parent->getParentOp())
    if (loop->hasAttr("tt.flatten"))
      outermost = loop;
  return outermost;
}

std::string offsetReason(Value root, StringRef how) {
  StaticRange ranges;
  SmallVector<std::string> unbounded, loose;
  collectUnprovenLeaves(root, ranges, unbounded, loose);
  std::string why;
  if (!unbounded.empty())
    why = "unbounded: " + joinShort(unbounded, 3) + "; ";
  if (!loose.empty())
    why += "loose: " + joinShort(loose, 2) + "; ";
  if (why.empty())
    why = "small leaves, but their combination can pass 2^31; ";
  return why + how.str();
}

bool fitsI32(Value root, const range::IntegerRanges *ranges) {
  return StaticRange(ranges).fitsI32(root);
}

} // namespace mlir::triton_ext::sanitizers::offset_overflow
