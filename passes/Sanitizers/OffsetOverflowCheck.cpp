//===- OffsetOverflowCheck.cpp - Report wrapped 32-bit offset arithmetic ---===//
//
// SPDX-License-Identifier: Apache-2.0
//
// `pid * stride + offs` in i32 wraps silently once the product passes 2^31;
// the wrapped offset usually still points inside some allocation. This pass
// finds i32 arithmetic (`arith.addi`, `arith.subi`, `arith.muli`) whose result
// is a `tt.addptr` offset (seen through `tt.splat`, `tt.broadcast` and
// `tt.expand_dims`) or a `tt.descriptor_load`/`tt.descriptor_store`
// coordinate, directly or through `arith.extsi` to i64 (the cast came too
// late), recomputes the expression tree in i64 from sign-extended leaves, and
// reports the lanes where `extsi(result_i32) != result_i64` with the kernel
// name and the source line of the arithmetic (GitHub issue 7).
//
// Why the comparison is exact: each leaf is an i32 value, so an i64 tree of
// up to kMaxDepth levels of add/sub and at most one multiplication of two
// leaves cannot overflow i64; the i32 result equals the mathematical value
// iff no i32 operation in the tree wrapped at the end, which is what the
// comparison tests. Deeper trees (products of three i32 values) are cut: the
// inner product becomes a leaf, which can only miss a wrap, never invent one.
//
// Legality: the inserted ops only read values. Checks go right after the
// arithmetic's root, so offsets computed before a loop are checked outside
// it. Loop-invariant arithmetic inside a loop body (a pointer increment
// `BLOCK_K * stride`) is cloned and checked once in front of the loop (see
// runOnOperation). Arithmetic that depends on the loop directly in its body
// accumulates its wrapped lanes in a loop-carried value and is reported once
// after the loop (checkAcrossIterations), so no report lands in the loop.
// Arithmetic nested deeper (inside an `scf.if` in a loop) is checked in
// place, which (at ttir) can keep the pipeliner from turning that loop's
// loads into async copies; see the README.
//
// Declines: offsets not produced by i32 add/sub/mul, i64 arithmetic.
//
// This file is the emission half: the IR the checks insert. What is an
// offset, which offsets provably never wrap, which masks narrow the counted
// lanes and the reason text are the analysis half (OffsetOverflowAnalysis.*).
//
// Each site says why its check stays (`triton_ext.sanitizer_sites_reason`,
// issue 18): the leaves of the tree StaticRange cannot bound, and the test
// the check costs (offsetReason). Only read from the IR; nothing is emitted.
//
//===----------------------------------------------------------------------===//

#include "triton-ext/PassInfra.h"

#include "OffsetOverflowAnalysis.h"
#include "SanitizerUtils.h"

#include "triton-ext/RangeAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "triton/Dialect/Triton/IR/Dialect.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <functional>
#include <numeric>

#define DEBUG_TYPE "triton-ext-offset-overflow-check"

namespace mlir::triton_ext {
#define GEN_PASS_DECL_TRITONEXTOFFSETOVERFLOWCHECK
#define GEN_PASS_DEF_TRITONEXTOFFSETOVERFLOWCHECK
#include "Passes.h.inc"
} // namespace mlir::triton_ext

using namespace mlir;
using namespace mlir::triton_ext::sanitizers;
using namespace mlir::triton_ext::sanitizers::offset_overflow;

namespace {

/// Rebuilds the i32 tree of `value` in i64.
class WideRecompute {
public:
  WideRecompute(OpBuilder &builder, Location loc)
      : builder(builder), loc(loc) {}

  Value get(Value value, unsigned depth = 0, unsigned products = 0) {
    auto key = std::make_pair(value, products);
    if (Value known = cache.lookup(key))
      return known;
    Value wide;
    Operation *def = value.getDefiningOp();
    if (std::optional<unsigned> inner =
            expandedProducts(value, depth, products)) {
      Value lhs = get(def->getOperand(0), depth + 1, *inner);
      Value rhs = get(def->getOperand(1), depth + 1, *inner);
      if (isa<arith::AddIOp>(def))
        wide = arith::AddIOp::create(builder, loc, lhs, rhs);
      else if (isa<arith::SubIOp>(def))
        wide = arith::SubIOp::create(builder, loc, lhs, rhs);
      else
        wide = arith::MulIOp::create(builder, loc, lhs, rhs);
    } else if (def && isa<triton::SplatOp, triton::BroadcastOp,
                              triton::ExpandDimsOp>(def) &&
               getElementTypeOrSelf(value.getType()).isInteger(32) &&
               depth < kMaxDepth) {
      // Shape ops move values without changing them: see through them, so
      // `splat(pid * stride) + arange` checks the scalar product as well.
      Value src = get(def->getOperand(0), depth + 1, products);
      OperationState state(loc, def->getName(), ValueRange{src},
                           TypeRange{wideType(value.getType())},
                           def->getAttrs());
      wide = builder.create(state)->getResult(0);
    } else {
      wide = arith::ExtSIOp::create(builder, loc, wideType(value.getType()),
                                    value);
    }
    cache[key] = wide;
    return wide;
  }

  Type wideType(Type type) const {
    if (auto tensor = dyn_cast<RankedTensorType>(type))
      return tensor.clone(builder.getI64Type());
    return builder.getI64Type();
  }

private:
  OpBuilder &builder;
  Location loc;
  DenseMap<std::pair<Value, unsigned>, Value> cache;
};

/// Bounds of an i32 tree's i64 value over all lanes of the program, as two
/// i64 scalars computed at run time, cut like WideRecompute (depth, product
/// of products). The tree's scalars (one value per program) and splat
/// constants are points; its tensor leaves are `tt.make_range`s and the
/// integer ops `rem`/`div`/`and`/`min`/`max`/`select` below.
///
/// Exact (`exact`) when the lane-varying leaves are `tt.make_range`s along
/// distinct dimensions (`pid * B + arange`, `offs_m[:, None] * stride +
/// offs_n[None, :]`): a lane (i_0, i_1, ...) of the root sees range leaf d at
/// value start_d + i_d, and each i_d feeds at most one leaf (the dimension
/// sets of the operands of every add/sub/mul are disjoint), so the tree is a
/// polynomial in which every variable occurs once, over a box of independent
/// variables covering every lane. Interval arithmetic is exact for such
/// single-use expressions: each op's interval is the exact range of its
/// operands' combination, because the operands vary independently (sums: add
/// the bounds; products: the extremes of x * y over a box lie at its
/// corners).
///
/// Sound otherwise (a superset of the lanes' values): interval arithmetic
/// always contains every value it bounds, whether or not the operands vary
/// independently (`r - r`, `ram[:, None] * stride` with `ram = rm % M`), and
/// each other leaf gets a bound that contains every i32 value it can take:
///   - `x % y` (`remsi`): |result| <= |y| - 1 and the result has the sign of
///     x, so it lies in [xlo < 0 ? -(|y|max - 1) : 0, xhi > 0 ? |y|max - 1 :
///     0] (clipped to [xlo, xhi] on the side of x's sign: |x % y| <= |x|);
///     a y range that contains 0 gives the full i32 range (the hardware's
///     result of a division by zero is not specified);
///   - `x / y` (`divsi`): truncating division is monotone in x for a fixed
///     y of one sign and in y for a fixed x, so over a box whose y range
///     excludes 0 the extremes lie at its four corners; a y range that
///     contains 0, or corners that leave i32 (`INT32_MIN / -1`), give the
///     full range;
///   - `x & C` with a splat constant C >= 0: [0, C];
///   - `min`/`max`: the min/max of the bounds; `select`: their union;
///   - anything else (a loaded value, a cast): no bound, the tree is
///     declined (the caller checks it lane by lane).
/// The operands of these leaves are bounded by their i32 values: a scalar
/// by itself, a tensor by its bounds when they fit i32, else the full i32
/// range (an operand whose arithmetic wrapped can hold any i32 value).
///
/// Either way a lane wraps only if its i64 value leaves i32 (wrappedLanes),
/// so bounds inside i32 prove that no lane wraps. With exact bounds the
/// converse holds too (some lane wraps iff lo < INT32_MIN or hi >
/// INT32_MAX); with sound bounds it may not, so the callers count the lanes
/// under the bounds test and report only a positive count: the count is
/// exact in both cases, and a correct kernel pays a few scalar ops and no
/// reduction.
class LaneBounds {
public:
  struct Bounds {
    Value lo, hi;
    uint64_t dims;     // dimensions of the value along which it varies
    bool exact = true; // the minimum and maximum over the lanes
  };

  LaneBounds(OpBuilder &builder, Location loc)
      : builder(builder), loc(loc), wide(builder, loc) {}

  /// Bounds over every iteration of `loop`, built in front of it: the
  /// induction variable lies in [ivLo, ivHi] (i64), and the arithmetic of
  /// the body (`start_n + offs_n`, `iv * stride`) is bounded by interval
  /// arithmetic on it (sound, not exact). Other scalars of the body decline.
  LaneBounds(OpBuilder &builder, Location loc, scf::ForOp loop, Value ivLo,
             Value ivHi)
      : builder(builder), loc(loc), wide(builder, loc), loop(loop), ivLo(ivLo),
        ivHi(ivHi) {}

  std::optional<Bounds> get(Value value, unsigned depth = 0,
                            unsigned products = 0) {
    if (!isa<RankedTensorType>(value.getType())) {
      if (loop && !loop.isDefinedOutsideOfLoop(value))
        return bodyScalar(value, depth, products);
      Value v = wide.get(value, depth, products);
      return Bounds{v, v, 0};
    }
    Operation *def = value.getDefiningOp();
    if (!def || depth >= kMaxDepth)
      return std::nullopt;
    if (isI32Arith(value)) {
      std::optional<unsigned> inner = expandedProducts(value, depth, products);
      if (!inner)
        return std::nullopt; // a tensor leaf (the inner product)
      auto lhs = get(def->getOperand(0), depth + 1, *inner);
      if (!lhs)
        return std::nullopt;
      auto rhs = get(def->getOperand(1), depth + 1, *inner);
      if (!rhs)
        return std::nullopt;
      uint64_t dims = lhs->dims | rhs->dims;
      // Operands varying along a common dimension are not independent: the
      // bounds stay sound but may be wider than the lanes' values.
      bool exact = lhs->exact && rhs->exact && !(lhs->dims & rhs->dims);
      if (isa<arith::AddIOp>(def))
        return Bounds{add(lhs->lo, rhs->lo), add(lhs->hi, rhs->hi), dims,
                      exact};
      if (isa<arith::SubIOp>(def))
        return Bounds{sub(lhs->lo, rhs->hi), sub(lhs->hi, rhs->lo), dims,
                      exact};
      Value c[4] = {mul(lhs->lo, rhs->lo), mul(lhs->lo, rhs->hi),
                    mul(lhs->hi, rhs->lo), mul(lhs->hi, rhs->hi)};
      Value lo = c[0], hi = c[0];
      for (Value corner : ArrayRef<Value>(c).drop_front()) {
        lo = min(lo, corner);
        hi = max(hi, corner);
      }
      return Bounds{lo, hi, dims, exact};
    }
    if (!getElementTypeOrSelf(value.getType()).isInteger(32))
      return std::nullopt;
    if (auto range = dyn_cast<triton::MakeRangeOp>(def)) {
      if (range.getEnd() <= range.getStart())
        return std::nullopt;
      return Bounds{constant(range.getStart()), constant(range.getEnd() - 1),
                    1};
    }
    if (auto cst = dyn_cast<arith::ConstantOp>(def)) {
      auto dense = dyn_cast<SplatElementsAttr>(cst.getValue());
      if (!dense)
        return std::nullopt;
      Value v = constant(dense.getSplatValue<APInt>().getSExtValue());
      return Bounds{v, v, 0};
    }
    if (isa<triton::SplatOp>(def)) {
      auto scalar = get(def->getOperand(0), depth + 1, products);
      if (scalar)
        scalar->dims = 0;
      return scalar;
    }
    if (isa<triton::BroadcastOp>(def))
      return get(def->getOperand(0), depth + 1, products);
    if (auto expand = dyn_cast<triton::ExpandDimsOp>(def)) {
      auto src = get(expand.getSrc(), depth + 1, products);
      if (!src)
        return std::nullopt;
      unsigned axis = expand.getAxis();
      uint64_t below = src->dims & ((uint64_t(1) << axis) - 1);
      src->dims = below | ((src->dims >> axis) << (axis + 1));
      return src;
    }
    return leafBounds(def, depth);
  }

private:
  /// Sound bounds of a tensor leaf that is not a range (see the class
  /// comment), or none.
  std::optional<Bounds> leafBounds(Operation *def, unsigned depth) {
    auto operand = [&](unsigned i) {
      return valueBounds(def->getOperand(i), depth);
    };
    auto sound = [](Value lo, Value hi, uint64_t dims) {
      return Bounds{lo, hi, dims, /*exact=*/false};
    };
    if (isa<arith::RemSIOp, arith::DivSIOp>(def)) {
      auto x = operand(0), y = operand(1);
      if (!x || !y)
        return std::nullopt;
      uint64_t dims = x->dims | y->dims;
      Value zero = constant(0);
      // The divisor's range contains 0: the result is not specified.
      Value mayDivideByZero = andi(cmp(arith::CmpIPredicate::sle, y->lo, zero),
                                   cmp(arith::CmpIPredicate::sge, y->hi, zero));
      Value lo, hi;
      if (isa<arith::RemSIOp>(def)) {
        // |x % y| <= max|y| - 1, with the sign of x.
        Value m = sub(max(abs(y->lo), abs(y->hi)), constant(1));
        lo = select(cmp(arith::CmpIPredicate::sge, x->lo, zero), zero,
                    max(x->lo, sub(zero, m)));
        hi = select(cmp(arith::CmpIPredicate::sle, x->hi, zero), zero,
                    min(x->hi, m));
      } else {
        // Corners of the box (one per distinct pair of bounds: a scalar
        // divisor gives two). A divisor of 1 stands in for a range that
        // contains 0 (whose bounds are replaced below), so no division by
        // zero is executed.
        Value one = constant(1);
        SmallVector<Value, 2> xs{x->lo},
            ys{select(mayDivideByZero, one, y->lo)};
        if (x->hi != x->lo)
          xs.push_back(x->hi);
        if (y->hi != y->lo)
          ys.push_back(select(mayDivideByZero, one, y->hi));
        for (Value xv : xs)
          for (Value yv : ys) {
            // x / -1 is -x, computed in i64: `INT32_MIN / -1` is 2^31 (the
            // i32 division would be undefined), which leaves i32 below.
            Value minusOne = cmp(arith::CmpIPredicate::eq, yv, constant(-1));
            Value corner = select(minusOne, sub(constant(0), xv),
                                  div32(xv, select(minusOne, one, yv)));
            lo = lo ? min(lo, corner) : corner;
            hi = hi ? max(hi, corner) : corner;
          }
        // The i32 result of `INT32_MIN / -1` is not 2^31.
        mayDivideByZero = ori(mayDivideByZero, leavesI32(lo, hi));
      }
      lo = select(mayDivideByZero, constant(INT32_MIN), lo);
      hi = select(mayDivideByZero, constant(INT32_MAX), hi);
      return sound(lo, hi, dims);
    }
    if (auto andOp = dyn_cast<arith::AndIOp>(def)) {
      for (Value side : andOp->getOperands()) {
        auto cst = side.getDefiningOp<arith::ConstantOp>();
        auto dense =
            cst ? dyn_cast<SplatElementsAttr>(cst.getValue()) : nullptr;
        if (!dense || dense.getSplatValue<APInt>().isNegative())
          continue;
        // x & C keeps only bits of C >= 0: 0 <= result <= C.
        return sound(constant(0),
                     constant(dense.getSplatValue<APInt>().getSExtValue()), 0);
      }
      return std::nullopt;
    }
    if (isa<arith::MinSIOp, arith::MaxSIOp, arith::SelectOp>(def)) {
      unsigned first = isa<arith::SelectOp>(def) ? 1 : 0;
      auto a = operand(first), b = operand(first + 1);
      if (!a || !b)
        return std::nullopt;
      uint64_t dims = a->dims | b->dims;
      if (isa<arith::MinSIOp>(def))
        return sound(min(a->lo, b->lo), min(a->hi, b->hi), dims);
      if (isa<arith::MaxSIOp>(def))
        return sound(max(a->lo, b->lo), max(a->hi, b->hi), dims);
      // Either value, per lane: the union (the condition may vary too).
      if (auto cond = dyn_cast<RankedTensorType>(def->getOperand(0).getType()))
        dims |= ~uint64_t(0) >> (64 - cond.getRank());
      return sound(min(a->lo, b->lo), max(a->hi, b->hi), dims);
    }
    return std::nullopt;
  }

  /// Bounds of a scalar of the loop body over all iterations (pre-loop
  /// mode): the induction variable, constants, and i32 add/sub/mul of such
  /// values cut like WideRecompute; none for anything else.
  std::optional<Bounds> bodyScalar(Value value, unsigned depth,
                                   unsigned products) {
    if (value == loop.getInductionVar())
      return Bounds{ivLo, ivHi, 0, /*exact=*/false};
    Operation *def = value.getDefiningOp();
    if (auto cst = dyn_cast_or_null<arith::ConstantOp>(def))
      if (auto attr = dyn_cast<IntegerAttr>(cst.getValue())) {
        Value v = constant(attr.getValue().getSExtValue());
        return Bounds{v, v, 0};
      }
    std::optional<unsigned> inner = expandedProducts(value, depth, products);
    if (!inner)
      return std::nullopt;
    auto lhs = get(def->getOperand(0), depth + 1, *inner);
    auto rhs = lhs ? get(def->getOperand(1), depth + 1, *inner) : std::nullopt;
    if (!rhs)
      return std::nullopt;
    if (isa<arith::AddIOp>(def))
      return Bounds{add(lhs->lo, rhs->lo), add(lhs->hi, rhs->hi), 0, false};
    if (isa<arith::SubIOp>(def))
      return Bounds{sub(lhs->lo, rhs->hi), sub(lhs->hi, rhs->lo), 0, false};
    Value c[4] = {mul(lhs->lo, rhs->lo), mul(lhs->lo, rhs->hi),
                  mul(lhs->hi, rhs->lo), mul(lhs->hi, rhs->hi)};
    Value lo = c[0], hi = c[0];
    for (Value corner : ArrayRef<Value>(c).drop_front()) {
      lo = min(lo, corner);
      hi = max(hi, corner);
    }
    return Bounds{lo, hi, 0, false};
  }

  /// Bounds of the i32 values `value` holds (an operand of a leaf): a scalar
  /// is its own bound; a tensor has its bounds if they fit i32, else the full
  /// i32 range (wrapped arithmetic can hold any i32 value).
  std::optional<Bounds> valueBounds(Value value, unsigned depth) {
    if (!getElementTypeOrSelf(value.getType()).isInteger(32))
      return std::nullopt;
    if (!isa<RankedTensorType>(value.getType()) &&
        !(loop && !loop.isDefinedOutsideOfLoop(value))) {
      Value v =
          arith::ExtSIOp::create(builder, loc, builder.getI64Type(), value);
      return Bounds{v, v, 0};
    }
    auto b = get(value, depth + 1, /*products=*/0);
    if (!b)
      return std::nullopt;
    Value wraps = leavesI32(b->lo, b->hi);
    b->lo = select(wraps, constant(INT32_MIN), b->lo);
    b->hi = select(wraps, constant(INT32_MAX), b->hi);
    return b;
  }

  Value leavesI32(Value lo, Value hi) {
    return ori(cmp(arith::CmpIPredicate::slt, lo, constant(INT32_MIN)),
               cmp(arith::CmpIPredicate::sgt, hi, constant(INT32_MAX)));
  }

  Value constant(int64_t v) {
    return arith::ConstantIntOp::create(builder, loc, builder.getI64Type(), v);
  }
  Value add(Value a, Value b) { return arith::AddIOp::create(builder, loc, a, b); }
  Value sub(Value a, Value b) { return arith::SubIOp::create(builder, loc, a, b); }
  Value mul(Value a, Value b) { return arith::MulIOp::create(builder, loc, a, b); }
  /// a / b (truncating) for i64 values within the i32 range, b != 0, in
  /// i32 (an i64 division is a long subroutine on the GPU; in the group
  /// norm's loop it cost 56 registers more); b != -1 (the caller's case).
  Value div32(Value a, Value b) {
    Type i32 = builder.getI32Type();
    Value q = arith::DivSIOp::create(
        builder, loc, arith::TruncIOp::create(builder, loc, i32, a),
        arith::TruncIOp::create(builder, loc, i32, b));
    return arith::ExtSIOp::create(builder, loc, builder.getI64Type(), q);
  }
  Value min(Value a, Value b) {
    return arith::MinSIOp::create(builder, loc, a, b);
  }
  Value max(Value a, Value b) {
    return arith::MaxSIOp::create(builder, loc, a, b);
  }
  Value abs(Value a) { return max(a, sub(constant(0), a)); }
  Value andi(Value a, Value b) {
    return arith::AndIOp::create(builder, loc, a, b);
  }
  Value ori(Value a, Value b) {
    return arith::OrIOp::create(builder, loc, a, b);
  }
  Value select(Value c, Value a, Value b) {
    return arith::SelectOp::create(builder, loc, c, a, b);
  }
  Value cmp(arith::CmpIPredicate pred, Value a, Value b) {
    return arith::CmpIOp::create(builder, loc, pred, a, b);
  }

  OpBuilder &builder;
  Location loc;
  WideRecompute wide;
  scf::ForOp loop;  // pre-loop mode: bounds over its iterations
  Value ivLo, ivHi; // its induction variable's bounds (i64)
};

/// An offset's tensor tree restricted to one block of its tile: the lanes
/// [first_d, first_d + size_d) along each dimension d of the tile (rank 1 or
/// 2), as the same ops on smaller tensors (reportByBlocks). Each value keeps
/// track of which tile dimension each of its dimensions is (expand_dims
/// inserts one of size 1, a broadcast from size 1 has none). Leaves:
/// `tt.make_range(s, e)` along tile dimension d becomes `tt.make_range(0,
/// size_d) + splat(s + first_d)` (lane i of the block is lane first_d + i of
/// the tile), splats and splat constants get the block's shape, and
/// elementwise ops without memory effects (`arith` integer ops, `select`)
/// are cloned on the blocks of their operands, so every lane of the block
/// computes what the same lane of the tile computes. Every range of the tree
/// is rebuilt from the block's offsets (values of the loop over blocks), so
/// no copy can be merged (CSE) with the kernel's own tensors, which would
/// then stay alive until the end of the kernel. Value hints
/// (`tt.contiguity` and friends) describe the whole tile and are dropped.
class TileBlock {
public:
  /// `scalars` maps scalar operands to the values to use instead (copies
  /// of a loop iteration's scalars), if any.
  TileBlock(OpBuilder &builder, Location loc, ArrayRef<int64_t> tile,
            ArrayRef<int64_t> sizes, ArrayRef<Value> firsts,
            const IRMapping *scalars = nullptr)
      : builder(builder), loc(loc), tile(tile), sizes(sizes), firsts(firsts),
        scalars(scalars) {}

  /// True if get() can rebuild `root` (a tile of shape `tile`).
  static bool canRebuild(Value root, ArrayRef<int64_t> tile) {
    return rebuildable(root, rootDims(tile.size()), tile, 0);
  }

  /// `root` restricted to the block.
  Value get(Value root) { return get(root, rootDims(tile.size())); }

private:
  /// Tile dimension of each dimension of a value (-1: none, size 1).
  using Dims = SmallVector<int, 2>;

  static Dims rootDims(size_t rank) {
    Dims dims;
    for (size_t d = 0; d < rank; ++d)
      dims.push_back(int(d));
    return dims;
  }

  /// The dims of a broadcast's source or an expand_dims' source.
  static std::optional<Dims> sourceDims(Operation *def, const Dims &dims) {
    Dims src;
    if (auto expand = dyn_cast<triton::ExpandDimsOp>(def)) {
      unsigned axis = expand.getAxis();
      if (dims[axis] >= 0)
        return std::nullopt; // the inserted dimension has size 1
      for (size_t d = 0; d < dims.size(); ++d)
        if (d != axis)
          src.push_back(dims[d]);
      return src;
    }
    auto srcTy = cast<RankedTensorType>(def->getOperand(0).getType());
    for (size_t d = 0; d < dims.size(); ++d)
      src.push_back(srcTy.getShape()[d] == 1 ? -1 : dims[d]);
    return src;
  }

  static bool rebuildable(Value value, const Dims &dims, ArrayRef<int64_t> tile,
                          unsigned depth) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    Operation *def = value.getDefiningOp();
    if (!type || !def || depth > 2 * kMaxDepth ||
        type.getRank() != int64_t(dims.size()))
      return false;
    for (size_t d = 0; d < dims.size(); ++d)
      if (type.getShape()[d] != (dims[d] < 0 ? 1 : tile[dims[d]]))
        return false;
    if (isa<triton::MakeRangeOp>(def))
      return true;
    if (auto cst = dyn_cast<arith::ConstantOp>(def))
      return isa<SplatElementsAttr>(cst.getValue());
    if (isa<triton::SplatOp>(def))
      return true;
    if (isa<triton::ExpandDimsOp, triton::BroadcastOp>(def)) {
      auto src = sourceDims(def, dims);
      return src && rebuildable(def->getOperand(0), *src, tile, depth + 1);
    }
    // Elementwise ops: the block of the result is the op on the blocks of
    // the operands.
    if (!def->hasTrait<OpTrait::Elementwise>() || def->getNumResults() != 1 ||
        def->getNumRegions() != 0 || !isMemoryEffectFree(def))
      return false;
    return llvm::all_of(def->getOperands(), [&](Value operand) {
      return !isa<RankedTensorType>(operand.getType()) ||
             rebuildable(operand, dims, tile, depth + 1);
    });
  }

  Value get(Value value, const Dims &dims) {
    auto key = std::make_pair(value, dims.size() > 1 ? dims[1] * 4 + dims[0]
                                                     : dims[0] + 2);
    if (Value known = cache.lookup(key))
      return known;
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> shape;
    for (int d : dims)
      shape.push_back(d < 0 ? 1 : sizes[d]);
    auto blockTy = type.clone(shape);
    Operation *def = value.getDefiningOp();
    Value out;
    if (auto range = dyn_cast<triton::MakeRangeOp>(def)) {
      Type i32 = builder.getI32Type();
      int d = dims[0];
      Value local = triton::MakeRangeOp::create(builder, loc, blockTy, 0,
                                                d < 0 ? 1 : sizes[d]);
      Value start =
          arith::ConstantIntOp::create(builder, loc, i32, range.getStart());
      if (d >= 0)
        start = arith::AddIOp::create(builder, loc, firsts[d], start);
      out = arith::AddIOp::create(
          builder, loc, local,
          triton::SplatOp::create(builder, loc, blockTy, start));
    } else if (auto cst = dyn_cast<arith::ConstantOp>(def)) {
      out = arith::ConstantOp::create(
          builder, loc,
          cast<SplatElementsAttr>(cst.getValue()).resizeSplat(blockTy));
    } else if (isa<triton::SplatOp>(def)) {
      out = triton::SplatOp::create(builder, loc, blockTy,
                                    scalar(def->getOperand(0)));
    } else if (auto expand = dyn_cast<triton::ExpandDimsOp>(def)) {
      Value src = get(expand.getSrc(), *sourceDims(def, dims));
      out = triton::ExpandDimsOp::create(builder, loc, blockTy, src,
                                         expand.getAxis());
    } else if (isa<triton::BroadcastOp>(def)) {
      Value src = get(def->getOperand(0), *sourceDims(def, dims));
      out = triton::BroadcastOp::create(builder, loc, blockTy, src);
    } else {
      IRMapping mapping;
      for (Value operand : def->getOperands())
        mapping.map(operand, isa<RankedTensorType>(operand.getType())
                                 ? get(operand, dims)
                                 : scalar(operand));
      Operation *copy = builder.clone(*def, mapping);
      copy->setDiscardableAttrs(ArrayRef<NamedAttribute>{});
      copy->getResult(0).setType(blockTy);
      out = copy->getResult(0);
    }
    cache[key] = out;
    return out;
  }

  OpBuilder &builder;
  Location loc;
  ArrayRef<int64_t> tile, sizes;
  ArrayRef<Value> firsts;
  const IRMapping *scalars;
  DenseMap<std::pair<Value, int>, Value> cache;

  Value scalar(Value value) const {
    return scalars ? scalars->lookupOrDefault(value) : value;
  }
};

/// Lanes of `value` (i1, its shape) computed only from lanes that its masked
/// `tt.load`s read under their masks, built at the builder's insertion point;
/// null when the tree reads no masked load (every lane is defined). A
/// masked-off lane of a load holds no value of the program (undefined, or
/// `masked_load_poison`'s INT_MIN), and so does every lane computed from it.
/// Seen through integer elementwise ops (a lane is defined when all its
/// operands' lanes are) and shape ops (`tt.expand_dims`, `tt.broadcast`,
/// rebuilt on the i1 lanes); any other leaf counts as defined (over-
/// approximating the defined lanes only counts more lanes, as before). The
/// load's mask dominates the load, which dominates the tree: no dominance
/// question.
static Value definedLanes(OpBuilder &builder, Location loc, Value value,
                          unsigned depth = 0) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  Operation *def = value.getDefiningOp();
  if (!type || !def || depth > 2 * kMaxDepth)
    return Value();
  Type boolTy = type.clone(builder.getI1Type());
  if (auto load = dyn_cast<triton::LoadOp>(def))
    return load.getMask() && load.getMask().getType() == boolTy
               ? load.getMask()
               : Value();
  if (auto expand = dyn_cast<triton::ExpandDimsOp>(def)) {
    Value src = definedLanes(builder, loc, expand.getSrc(), depth + 1);
    return src ? Value(triton::ExpandDimsOp::create(builder, loc, src,
                                                    expand.getAxis()))
               : Value();
  }
  if (auto bcast = dyn_cast<triton::BroadcastOp>(def)) {
    Value src = definedLanes(builder, loc, bcast.getSrc(), depth + 1);
    return src ? Value(triton::BroadcastOp::create(builder, loc, boolTy, src))
               : Value();
  }
  if (!def->hasTrait<OpTrait::Elementwise>() || !isMemoryEffectFree(def) ||
      def->getNumRegions() != 0)
    return Value();
  Value all;
  for (Value operand : def->getOperands()) {
    auto opTy = dyn_cast<RankedTensorType>(operand.getType());
    if (!opTy || opTy.getShape() != type.getShape())
      continue;
    if (Value lanes = definedLanes(builder, loc, operand, depth + 1))
      all = all ? Value(arith::AndIOp::create(builder, loc, all, lanes))
                : lanes;
  }
  return all;
}

/// The lanes of `root` whose wrap the check counts (i1, root's shape), built
/// at the builder's insertion point, or null for every lane (issue 26). A
/// lane is left out only if it reads a masked-off lane of a masked load
/// (definedLanes: its offset is computed from no value of the program) and
/// no access `used` (the offset as the kernel uses it: `root`, or the value
/// `root` was cloned from) feeds touches it: a gathered index masked off
/// with its row (`idx = tl.load(ids + offs, mask=m)`, then `tl.load(W +
/// idx[:, None] * D + cols, mask=m[:, None])`) made `masked_load_poison`'s
/// INT_MIN wrap in every masked-off row. A lane an access touches is still
/// counted, and so is every lane of an offset that reads no masked load
/// (a wrapped `pid * BLOCK + arange` in a masked-off lane is reported, as
/// before). Masks computed in another block than the insertion point and
/// not dominating it are left out; one computed later in the same block
/// moves the insertion point (and the check) after it.
static Value countedLanes(OpBuilder &builder, Location loc, Value root,
                          Value used) {
  auto type = dyn_cast<RankedTensorType>(root.getType());
  if (!type)
    return Value();
  SmallVector<Operation *> path;
  SmallVector<SmallVector<Value>> accesses;
  if (!accessMasks(used, /*offset=*/true, path, accesses) || accesses.empty())
    return Value();
  Block *block = builder.getInsertionBlock();
  if (!block || builder.getInsertionPoint() == block->end())
    return Value();
  Operation *at = &*builder.getInsertionPoint();
  DominanceInfo dom(at->getParentOfType<triton::FuncOp>());
  Type boolTy = type.clone(builder.getI1Type());
  SmallVector<SmallVector<Value>> usable;
  Operation *latest = nullptr; // the last mask computed after `at`
  for (ArrayRef<Value> conjuncts : accesses) {
    SmallVector<Value> kept;
    for (Value mask : conjuncts) {
      if (mask.getType() != boolTy)
        continue;
      Operation *def = mask.getDefiningOp();
      if (dom.properlyDominates(mask, at)) {
        kept.push_back(mask);
      } else if (def && def->getBlock() == block) {
        kept.push_back(mask);
        if (!latest || latest->isBeforeInBlock(def))
          latest = def;
      }
    }
    if (kept.empty()) // an access that may touch every lane
      return Value();
    usable.push_back(kept);
  }
  // A mask computed after the offset (`m2 = offs < n2` below it): the check
  // goes after it, in the same block; it only reads values.
  if (latest)
    builder.setInsertionPointAfter(latest);
  Value defined = definedLanes(builder, loc, root);
  if (!defined)
    return Value();
  Value touched;
  for (ArrayRef<Value> kept : usable) {
    Value lanes = kept.front();
    for (Value mask : kept.drop_front())
      lanes = arith::AndIOp::create(builder, loc, lanes, mask);
    touched =
        touched ? Value(arith::OrIOp::create(builder, loc, touched, lanes))
                : lanes;
  }
  return arith::OrIOp::create(builder, loc, defined, touched);
}

/// True if LaneBounds knows `root`'s bounds, i.e. wrapCount tests them
/// with a few scalar ops rather than recomputing every lane in i64.
/// LaneBounds builds the bounds as IR: here in a detached block, dropped
/// after (clear() drops the uses of outer values first).
static bool hasExactBounds(Value root) {
  if (!isa<RankedTensorType>(root.getType()))
    return false;
  Block scratch;
  OpBuilder builder(root.getContext()); // the block has no region to ask
  builder.setInsertionPointToEnd(&scratch);
  bool known = LaneBounds(builder, root.getLoc()).get(root).has_value();
  scratch.clear();
  return known;
}

class OffsetOverflowCheckPass
    : public mlir::triton_ext::impl::TritonExtOffsetOverflowCheckBase<
          OffsetOverflowCheckPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    std::optional<ReportOptions> report = makeReportOptions(
        getOperation(), "offset_overflow_check", mode, print, records);
    if (!report)
      return signalPassFailure();
    // Scalar checks in place update their records where the deferred
    // reporting paths go (reportPoint), and right where they are between the
    // kernel's last loop and its return: there a records branch after the
    // epilogue keeps LLVM from sinking the epilogue's index arithmetic below
    // the loop (torchao's fp8 block-scaled GEMM, its scale pointer's count
    // carried through the K loop: 186 registers at the end, 178 in place).
    // Kernels without a loop keep them at the end (in place: FlagGems'
    // RMS norm 48 -> 52, SageAttention's K quantization 80 -> 94).
    report->recordsAt = [](Operation *at, Operation *ret) -> Operation * {
      Operation *point = reportPoint(at->getBlock(), at->getPrevNode());
      if (!point)
        return ret;
      if (point != ret)
        return point;
      for (Operation *next = at; next != ret; next = next->getNextNode())
        if (isa<LoopLikeOpInterface>(next))
          return ret;
      for (Operation *prev = at->getPrevNode(); prev;
           prev = prev->getPrevNode())
        if (isa<LoopLikeOpInterface>(prev))
          return at;
      return ret;
    };
    // Each root is checked once, however many pointers it feeds.
    llvm::SetVector<Value> roots;
    getOperation().walk([&](Operation *op) {
      if (auto addptr = dyn_cast<triton::AddPtrOp>(op)) {
        if (Value root = arithRoot(addptr.getOffset()))
          roots.insert(root);
      } else if (auto load = dyn_cast<triton::DescriptorLoadOp>(op)) {
        for (Value index : load.getIndices())
          if (Value root = arithRoot(index))
            roots.insert(root);
      } else if (auto store = dyn_cast<triton::DescriptorStoreOp>(op)) {
        for (Value index : store.getIndices())
          if (Value root = arithRoot(index))
            roots.insert(root);
      }
    });

    // Which roots provably never wrap, decided before any check changes the
    // IR: the range analysis describes the IR it ran on.
    SmallVector<Value> unproven;
    {
      triton_ext::range::IntegerRanges ranges(getOperation());
      for (Value root : roots) {
        if (fitsI32(root, &ranges)) {
          LLVM_DEBUG(llvm::dbgs()
                     << "offset proven not to wrap: " << root << "\n");
          continue;
        }
        unproven.push_back(root);
      }
    }

    OpBuilder builder(&getContext());
    for (Value root : unproven) {
      Operation *def = root.getDefiningOp();
      Location loc = def->getLoc();
      builder.setInsertionPointAfter(def);
      // A loop-invariant offset computed inside a loop body (`ptrs +=
      // BLOCK_K * stride`) is checked once, in front of the loop, on a clone
      // of its arithmetic: every iteration computes the same value, so one
      // check sees every wrap the loop can produce, and no report (`scf.if`
      // with a print) lands in the loop, where it would cost every iteration
      // and could keep the pipeliner from turning the loop's loads into async
      // copies. The count is zeroed when the loop runs no iteration, so the
      // hoisted check reports only values the kernel computes.
      Value tripGuard;
      Value used = root;
      if (auto loop = dyn_cast<scf::ForOp>(def->getParentOp())) {
        // In a flatten=True nest the check stays where the arithmetic is
        // and its lanes are carried out of the nest (flattenedNest).
        scf::ForOp flat = flattenedNest(def);
        auto slice = loopInvariantSlice(root, loop);
        if (!slice || flat) {
          checkAcrossIterations(builder, root, loop, *report, flat);
          continue;
        }
        hoistInvariant(builder, loc, loop, *slice, root, tripGuard);
      }
      // Lanes of a gathered index that no access touches are not counted;
      // the check then stays in place (the deferred copy has no masks).
      Value counted = countedLanes(builder, loc, root, used);
      if (!counted && deferColdPath(builder, loc, root, tripGuard, *report))
        continue;
      std::string why = offsetReason(
          root, (Twine(tripGuard ? "before its loop: " : "") +
                 (!isa<RankedTensorType>(root.getType()) ? "scalar i64 check"
                  : hasExactBounds(root)                 ? "scalar bounds test"
                                         : "lane-by-lane i64 check"))
                    .str());
      Value count = wrapCount(builder, loc, root, counted);
      if (tripGuard)
        count = arith::SelectOp::create(
            builder, loc, tripGuard, count,
            arith::ConstantIntOp::create(builder, loc, count.getType(), 0));
      std::string kernel = kernelNameOf(def);
      emitReport(
          builder, loc, count,
          [&](OpBuilder &b, Location l) {
            return wrappedLanes(b, l, root, counted);
          },
          ReportSite{"offset_overflow_check", kernel, siteOf(loc), kWhat, why},
          *report);
    }
  }

private:
  /// Clones `slice` (the ops computing `root` in the body of `loop`, all
  /// loop-invariant) in front of `loop`, and sets `root` to the copy and
  /// `tripGuard` to "the loop runs at least one iteration". Then, while the
  /// loop sits in the body of another `scf.for` in which the copy and the
  /// guard are invariant too (`BLOCK_K * stride_bk` in a K loop inside a
  /// loop over packed weights), moves both in front of that loop, the guard
  /// also requiring it to run. Legal for the same reason as one level: every
  /// execution of the arithmetic computes the same value, and it executes at
  /// all iff every loop around it runs (the inner bounds are invariant, so
  /// they are the same in every outer iteration). A check left in the outer
  /// body reported in place, once per outer iteration, and its record
  /// updates (address arithmetic, atomics) sat in the outer loop: Liger's
  /// int8 x int2 GEMM took 217 registers instead of 128.
  static void hoistInvariant(OpBuilder &builder, Location loc, scf::ForOp loop,
                             ArrayRef<Operation *> slice, Value &root,
                             Value &tripGuard) {
    SmallVector<Operation *> ops(slice);
    while (true) {
      builder.setInsertionPoint(loop);
      IRMapping mapping;
      for (Operation *op : ops)
        builder.clone(*op, mapping);
      root = mapping.lookupOrDefault(root);
      Value runs = arith::CmpIOp::create(
          builder, loc,
          loop.getUnsignedCmp() ? arith::CmpIPredicate::ult
                                : arith::CmpIPredicate::slt,
          loop.getLowerBound(), loop.getUpperBound());
      tripGuard =
          tripGuard
              ? arith::AndIOp::create(builder, loc,
                                      mapping.lookupOrDefault(tripGuard), runs)
              : runs;
      auto outer = dyn_cast<scf::ForOp>(loop->getParentOp());
      if (!outer)
        return;
      auto rootSlice = loopInvariantSlice(root, outer);
      auto guardSlice = loopInvariantSlice(tripGuard, outer);
      if (!rootSlice || !guardSlice)
        return;
      llvm::SetVector<Operation *> both(rootSlice->begin(), rootSlice->end());
      both.insert(guardSlice->begin(), guardSlice->end());
      ops.assign(both.begin(), both.end());
      llvm::sort(ops, [](Operation *a, Operation *b) {
        return a->isBeforeInBlock(b);
      });
      // The copies left in the outer body are pure and now unused:
      // canonicalization removes them.
      loop = outer;
    }
  }

  /// `bounds` leave the i32 range (i1 scalar).
  static Value boundsLeaveI32(OpBuilder &builder, Location loc,
                              const LaneBounds::Bounds &bounds) {
    Type i64 = builder.getI64Type();
    Value max = arith::ConstantIntOp::create(builder, loc, i64, INT32_MAX);
    Value min = arith::ConstantIntOp::create(builder, loc, i64, INT32_MIN);
    return arith::OrIOp::create(
        builder, loc,
        arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::sgt,
                              bounds.hi, max),
        arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::slt,
                              bounds.lo, min));
  }

  /// Where a deferred reporting path goes whose inputs are all ready after
  /// `after` (an op of the kernel's entry block; null: at the block's start),
  /// if `block` is the kernel's entry block (else null): right before the
  /// first loop that follows `after` in that block and across which the
  /// kernel holds no tile of data (holdsDataAcross), or before the
  /// `tt.return` ending the block when there is no such loop. The reporting
  /// path only reads scalars (the offset's leaves, its bounds test, a checked
  /// loop's bounds) and rebuilds its tensors from them. Anchored at the
  /// return, those scalars stayed live across every loop in between, where
  /// the kernel's own registers peak, and the reporting branches after a
  /// GEMM's epilogue kept LLVM from sinking the epilogue's index arithmetic
  /// below the main loop (InstCombine sinks into a successor with other
  /// predecessors only when it ends the kernel): torchao's int8 GEMM with all
  /// three checks held its row and column offsets across the K loop, 133
  /// registers, one 256-thread program per SM; in front of the K loop, 128.
  /// In front of a loop across which a loaded tile stays live (attention's Q,
  /// a softmax's probabilities), the reporting path's registers add to that
  /// tile's: the end is better there (sglang's prefill attention spilled 16
  /// bytes, FlagGems' top-k softmax 40 -> 44 registers).
  static Operation *reportPoint(Block *block, Operation *after) {
    if (!block || !isa<triton::FuncOp>(block->getParentOp()))
      return nullptr;
    Operation *last = block->getTerminator();
    if (!last || !isa<triton::ReturnOp>(last))
      return nullptr;
    for (Operation *next = after ? after->getNextNode() : &block->front();
         next && next != last; next = next->getNextNode())
      if (isa<LoopLikeOpInterface>(next) && !holdsDataAcross(next))
        return next;
    return last;
  }

  /// True if a tensor computed before `loop` (in its block) from data -- an
  /// op that cannot be computed again (a load, a loop, a reduction), or
  /// values computed from one -- is used by `loop` or after it: a tile the
  /// kernel keeps in registers across the loop.
  static bool holdsDataAcross(Operation *loop) {
    Block *block = loop->getBlock();
    DenseSet<Value> data;
    for (Operation &op : *block) {
      if (&op == loop)
        return false;
      bool fromData = !recomputable(&op) ||
                      llvm::any_of(op.getOperands(), [&](Value operand) {
                        return data.contains(operand);
                      });
      if (!fromData)
        continue;
      for (Value result : op.getResults()) {
        if (!isa<RankedTensorType>(result.getType()))
          continue;
        data.insert(result);
        for (Operation *user : result.getUsers()) {
          Operation *at = block->findAncestorOpInBlock(*user);
          if (at && (at == loop || loop->isBeforeInBlock(at)))
            return true;
        }
      }
    }
    return false;
  }

  /// True if `op` can be computed again anywhere its operands are ready,
  /// with the same result: no memory effects, no regions (integer
  /// arithmetic, shape ops, ranges, constants, program ids).
  static bool recomputable(Operation *op) {
    return op->getNumRegions() == 0 && isMemoryEffectFree(op);
  }

  /// The last op of `block` whose result the reporting path of `root` needs
  /// as it is: walking back from `root` (and `extra`) through recomputable
  /// ops of `block`, the last op that is not one (a load, a loop, a
  /// reduction), or null when there is none (kernel arguments and
  /// recomputable values only). What comes after it can be computed again
  /// in front of the first loop that follows it (cloneLate).
  static Operation *lastSourceDef(Block *block, Value root, Value extra) {
    Operation *latest = nullptr;
    SmallVector<Value> work{root};
    if (extra)
      work.push_back(extra);
    DenseSet<Value> seen;
    while (!work.empty()) {
      Value value = work.pop_back_val();
      if (!seen.insert(value).second)
        continue;
      Operation *def = value.getDefiningOp();
      if (!def)
        continue; // a kernel argument
      Operation *inBlock = block->findAncestorOpInBlock(*def);
      if (!inBlock)
        continue;
      if (inBlock == def && recomputable(def)) {
        llvm::append_range(work, def->getOperands());
        continue;
      }
      if (!latest || latest->isBeforeInBlock(inBlock))
        latest = inBlock;
    }
    return latest;
  }

  /// `value` at the builder's insertion point, right before `at` (an op of
  /// its block): itself if it is ready there, else a copy of the
  /// recomputable ops that compute it from values that are (lastSourceDef
  /// says there are such), appended to `copies`.
  static Value cloneLate(OpBuilder &builder, Value value, Operation *at,
                         IRMapping &mapping,
                         SmallVectorImpl<Operation *> &copies) {
    if (Value known = mapping.lookupOrNull(value))
      return known;
    Operation *def = value.getDefiningOp();
    if (!def || def->getBlock() != at->getBlock() || def->isBeforeInBlock(at))
      return value;
    for (Value operand : def->getOperands())
      cloneLate(builder, operand, at, mapping, copies);
    Operation *copy = builder.clone(*def, mapping);
    copies.push_back(copy);
    return copy->getResult(cast<OpResult>(value).getResultNumber());
  }

  /// True if every tensor value `value` is computed from is defined by a
  /// region-free op without memory effects (ranges, constants, shape ops,
  /// integer arithmetic, `%` and `//`): such a tree can be computed again
  /// anywhere its scalar leaves are available, with the same result. A
  /// division is not speculatable in general (a zero divisor), but computing
  /// it again on the same operands is no speculation: the kernel already
  /// computed it, in the entry block, before the copy runs.
  static bool clonableTree(Value value, unsigned depth = 0) {
    if (!isa<RankedTensorType>(value.getType()))
      return true;
    Operation *def = value.getDefiningOp();
    if (!def)
      return true; // a tensor argument of the kernel
    if (depth > 2 * kMaxDepth || !isMemoryEffectFree(def) ||
        def->getNumRegions() != 0)
      return false;
    return llvm::all_of(def->getOperands(), [&](Value operand) {
      return clonableTree(operand, depth + 1);
    });
  }

  /// Clones the tensor ops that compute `value` (clonableTree) at the
  /// builder's insertion point; scalars are used as they are.
  static Value cloneTree(OpBuilder &builder, Value value, IRMapping &mapping) {
    if (!isa<RankedTensorType>(value.getType()))
      return value;
    if (Value known = mapping.lookupOrNull(value))
      return known;
    Operation *def = value.getDefiningOp();
    if (!def)
      return value;
    for (Value operand : def->getOperands())
      cloneTree(builder, operand, mapping);
    Operation *copy = builder.clone(*def, mapping);
    return copy->getResult(cast<OpResult>(value).getResultNumber());
  }

  /// Record mode, a tensor offset at the top level of the kernel whose
  /// exact bounds (LaneBounds) are known: only the bounds test (a few
  /// scalar ops) stays where the offset is; the reporting path -- the i64
  /// recompute of every lane, the count, the first lane, the record updates
  /// -- goes in front of the first loop after the scalars it reads, or
  /// right before the kernel's `tt.return` (reportPoint), on a copy of the
  /// offset's tree computed again from its scalar leaves. When that loop
  /// comes before the offset (an epilogue's offset from scalars computed
  /// before the main loop), the bounds test goes there too: both only read
  /// scalars, and every program that reaches the loop computes the offset
  /// after it (straight-line code of the entry block). In place, that
  /// path kept its tensors' registers allocated next to the kernel's own:
  /// the torchao int8 GEMM's epilogue (`xindex = idx_n + N * idx_m`, 128x128
  /// lanes of i64 next to the 128x128 accumulator) went from 122 registers
  /// to 255 and a 744-byte spill stack (H200 0.77x). Legal: the tree is pure
  /// (clonableTree), so the copy computes the same lanes; the report only
  /// reads values and writes the records. What changes: the record is
  /// updated later (or earlier) than the offset is computed, so a wrap that
  /// makes the kernel fault (an address outside every allocation) before the
  /// report runs is not recorded -- abort mode (checks in place) or
  /// compute-sanitizer catch that one. Returns false (nothing built) when it
  /// does not apply.
  static bool deferColdPath(OpBuilder &builder, Location loc, Value root,
                            Value tripGuard, const ReportOptions &report) {
    if (report.mode != ReportMode::Record ||
        !isa<RankedTensorType>(root.getType()))
      return false;
    Operation *def = root.getDefiningOp();
    if (!clonableTree(root))
      return false;
    // The whole path goes in front of the first loop after the last value
    // it needs that cannot be computed again (reportPoint, lastSourceDef).
    // For an offset computed after that loop (a GEMM's epilogue `idx_m *
    // stride_cm + idx_n`, from the program id and arguments), the bounds
    // test goes there too, on a copy of the offset's arithmetic (cloneLate;
    // its unused ops are erased when done).
    Block *block = def->getBlock();
    Operation *ret = reportPoint(block, lastSourceDef(block, root, tripGuard));
    if (!ret)
      return false;
    OpBuilder::InsertionGuard atTest(builder);
    Value offset = root;
    SmallVector<Operation *> copies;
    auto eraseUnused = llvm::make_scope_exit([&] {
      for (Operation *copy : llvm::reverse(copies))
        if (copy->use_empty())
          copy->erase();
    });
    if (ret->isBeforeInBlock(def)) {
      builder.setInsertionPoint(ret);
      IRMapping late;
      offset = cloneLate(builder, root, ret, late, copies);
    }
    LaneBounds bounds(builder, loc);
    auto b = bounds.get(offset);
    // Without records and blocks the report is built in place under `wraps`
    // (a device line with the count): with bounds that are only sound, that
    // count can be 0. wrapCount and reportByBlocks report only a positive
    // count.
    bool blocks = byBlocks(offset);
    if (!b || (!b->exact && !report.records && !blocks))
      return false;
    Value wraps = boundsLeaveI32(builder, loc, *b);
    if (tripGuard)
      wraps = arith::AndIOp::create(builder, loc, wraps, tripGuard);
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(ret);
    std::string kernel = kernelNameOf(def);
    ReportSite site{"offset_overflow_check", kernel, siteOf(loc), kWhat,
                    offsetReason(root, tripGuard
                                           ? "before its loop: scalar bounds test"
                                           : "scalar bounds test")};
    if (blocks &&
        reportByBlocks(builder, loc, offset, wraps, ret, site, report))
      return true;
    Value lanes;
    auto lanesAtEnd = [&](OpBuilder &b, Location l) -> Value {
      if (!lanes) {
        IRMapping mapping;
        lanes = wrappedLanes(b, l, cloneTree(b, offset, mapping));
      }
      return lanes;
    };
    emitReportWhen(
        builder, loc, wraps,
        [&](OpBuilder &b, Location l) {
          return countTrue(b, l, lanesAtEnd(b, l));
        },
        lanesAtEnd, site, report);
    return true;
  }

  /// Most lanes of a block of the tile processed at a time on the reporting
  /// path at the end of the kernel (reportByBlocks).
  static constexpr int64_t kBlockLanes = 2048;

  /// deferColdPath's reporting path, one block of the tile at a time: under
  /// `wraps`, an `scf.for` over the blocks (at least two, of at most
  /// kBlockLanes lanes) rebuilds the offset's tree for the block's lanes
  /// (TileBlock), recomputes them in i64, adds up their count and keeps the
  /// smallest row-major index (in the tile) of a wrapped lane; then the
  /// records are updated as emitReportWhen does at the end. The same count
  /// and first lane: the blocks partition the tile's lanes, each lane's
  /// value is computed by the same ops from the same scalars, and the
  /// row-major order of a block's lanes is their order in the tile. Why: the
  /// whole tile's i64 recompute in one piece (and the kernel's own tensors
  /// it used, kept alive until then) is where the kernel needed the most
  /// registers, and ptxas sizes the kernel for it although a correct run
  /// never enters it: torchao's int8 GEMMs (8 warps, 128x128 tiles) went
  /// from 125 registers (2 programs per SM) to 160-255 (1 program per SM).
  /// Returns false (nothing built) for ranks other than 1 and 2, dimensions
  /// that are not powers of two, and trees TileBlock cannot rebuild.
  /// The wrapped lanes of one block (i1, the block's shape), given the
  /// block's shape and first lanes (reportByBlocks).
  using BlockLanes = function_ref<Value(OpBuilder &, Location,
                                        ArrayRef<int64_t>, ArrayRef<Value>)>;

  /// True if reportByBlocks can take `root`.
  static bool byBlocks(Value root) {
    auto rootTy = dyn_cast<RankedTensorType>(root.getType());
    return rootTy && rootTy.getRank() <= 2 && rootTy.getNumElements() >= 2 &&
           llvm::all_of(rootTy.getShape(),
                        [](int64_t n) { return llvm::isPowerOf2_64(n); }) &&
           TileBlock::canRebuild(root, rootTy.getShape());
  }

  static bool reportByBlocks(OpBuilder &builder, Location loc, Value root,
                             Value wraps, Operation *ret,
                             const ReportSite &site,
                             const ReportOptions &report,
                             BlockLanes blockLanes = nullptr) {
    auto rootTy = cast<RankedTensorType>(root.getType());
    SmallVector<int64_t, 2> tile(rootTy.getShape());
    int64_t numel = rootTy.getNumElements();
    if (tile.size() > 2 || numel < 2 ||
        !llvm::all_of(tile, [](int64_t n) { return llvm::isPowerOf2_64(n); }) ||
        !TileBlock::canRebuild(root, tile))
      return false;
    // At least two blocks along every dimension of at least 2 lanes, so that
    // every range of the copy depends on the block (a single block would be
    // folded to the tile's own ranges and the copy merged, CSE, with the
    // kernel's own tensors, which would then stay alive until the end of the
    // kernel); then the larger dimension of the block is halved until the
    // block is small enough.
    SmallVector<int64_t, 2> sizes(tile);
    for (int64_t &size : sizes)
      size = std::max<int64_t>(1, size / 2);
    auto lanesPerBlock = [&] {
      return std::accumulate(sizes.begin(), sizes.end(), int64_t(1),
                             std::multiplies<int64_t>());
    };
    while (lanesPerBlock() > kBlockLanes) {
      unsigned d = sizes.size() > 1 && sizes[1] > sizes[0] ? 1 : 0;
      sizes[d] /= 2;
    }
    int64_t cols = tile.size() > 1 ? tile[1] : 1;
    int64_t perRow = tile.size() > 1 ? tile[1] / sizes[1] : 1;
    Type i32 = builder.getI32Type();
    auto cst = [&](OpBuilder &b, int64_t v) -> Value {
      return arith::ConstantIntOp::create(b, loc, i32, v);
    };
    auto found = scf::IfOp::create(builder, loc, TypeRange{i32, i32}, wraps,
                                   /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(found.thenBlock());
      auto blocks = scf::ForOp::create(
          builder, loc, cst(builder, 0), cst(builder, numel / lanesPerBlock()),
          cst(builder, 1), ValueRange{cst(builder, 0), cst(builder, INT32_MAX)},
          [&](OpBuilder &b, Location l, Value block, ValueRange acc) {
            // Block (block / perRow, block % perRow) of the tile.
            SmallVector<Value, 2> firsts{arith::MulIOp::create(
                b, l, arith::DivSIOp::create(b, l, block, cst(b, perRow)),
                cst(b, sizes[0]))};
            if (tile.size() > 1)
              firsts.push_back(arith::MulIOp::create(
                  b, l, arith::RemSIOp::create(b, l, block, cst(b, perRow)),
                  cst(b, sizes[1])));
            Value bad;
            if (blockLanes) {
              bad = blockLanes(b, l, sizes, firsts);
            } else {
              TileBlock part(b, l, tile, sizes, firsts);
              bad = wrappedLanes(b, l, part.get(root));
            }
            auto [count, first] = countAndFirstLane(b, l, bad);
            // Lane (i, j) of the block is lane (first0 + i, first1 + j) of
            // the tile; `first` is i * sizes[1] + j, or INT32_MAX for none.
            Value none = cst(b, INT32_MAX);
            Value index = first;
            if (tile.size() > 1) {
              Value i = arith::DivSIOp::create(b, l, first, cst(b, sizes[1]));
              Value j = arith::RemSIOp::create(b, l, first, cst(b, sizes[1]));
              index = arith::AddIOp::create(
                  b, l,
                  arith::MulIOp::create(
                      b, l, arith::AddIOp::create(b, l, firsts[0], i),
                      cst(b, cols)),
                  arith::AddIOp::create(b, l, firsts[1], j));
            } else {
              index = arith::AddIOp::create(b, l, firsts[0], first);
            }
            Value shifted = arith::SelectOp::create(
                b, l,
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, first,
                                      none),
                none, index);
            scf::YieldOp::create(
                b, l,
                ValueRange{arith::AddIOp::create(b, l, acc[0], count),
                           arith::MinSIOp::create(b, l, acc[1], shifted)});
          });
      keepRolled(blocks);
      scf::YieldOp::create(builder, loc, blocks.getResults());
      builder.setInsertionPointToStart(found.elseBlock());
      scf::YieldOp::create(builder, loc,
                           ValueRange{cst(builder, 0), cst(builder, 0)});
    }
    if (report.records) {
      emitRecordsAtEnd(builder, loc, ret, found.getResult(0),
                       found.getResult(1), numel, site, report);
    } else if (report.print == PrintMode::Every) {
      // No records (what an IR interpreter follows): the per-program line
      // of emitReport's in-place path, for a positive count only.
      Value any = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::sgt,
                                        found.getResult(0), cst(builder, 0));
      auto line =
          scf::IfOp::create(builder, loc, any, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPoint(line.thenBlock()->getTerminator());
      triton::PrintOp::create(
          builder, loc,
          ("[triton-ext " + site.pass + "] kernel=" + site.kernel +
           " site=" + site.site + " " + site.what + "=")
              .str(),
          /*hex=*/false, ValueRange{found.getResult(0)}, ArrayRef<int32_t>{1});
    }
    return true;
  }

  /// Number of lanes where `root`'s i32 arithmetic wrapped (i32 scalar),
  /// built at the builder's insertion point. With exact bounds (LaneBounds)
  /// the lanes are counted only when the bounds leave the i32 range: the
  /// test is exact, so the count is the same in both cases, and a correct
  /// kernel pays a few scalar ops instead of an i64 recompute of every lane
  /// and a cross-warp reduction (a shared-memory round trip and a barrier in
  /// front of the kernel's first load). The condition is a scalar, the same
  /// in every thread of the program, so the reduction under it is legal.
  /// Only the lanes set in `counted` are counted, if given (countedLanes).
  static Value wrapCount(OpBuilder &builder, Location loc, Value root,
                         Value counted = Value()) {
    if (isa<RankedTensorType>(root.getType())) {
      LaneBounds bounds(builder, loc);
      if (auto b = bounds.get(root)) {
        Value wraps = boundsLeaveI32(builder, loc, *b);
        auto ifOp = scf::IfOp::create(
            builder, loc, wraps,
            [&](OpBuilder &then, Location l) {
              Value count =
                  countTrue(then, l, wrappedLanes(then, l, root, counted));
              scf::YieldOp::create(then, l, count);
            },
            [&](OpBuilder &otherwise, Location l) {
              scf::YieldOp::create(
                  otherwise, l,
                  Value(arith::ConstantIntOp::create(
                      otherwise, l, otherwise.getI32Type(), 0)));
            });
        return ifOp.getResult(0);
      }
    }
    return countTrue(builder, loc, wrappedLanes(builder, loc, root, counted));
  }

  /// Lanes where `root`'s i32 arithmetic wrapped (i1, root's shape), built at
  /// the builder's insertion point; only those set in `counted`, if given.
  static Value wrappedLanes(OpBuilder &builder, Location loc, Value root,
                            Value counted = Value()) {
    WideRecompute recompute(builder, loc);
    Value exact = recompute.get(root);
    Value wrapped = arith::ExtSIOp::create(
        builder, loc, recompute.wideType(root.getType()), root);
    Value lanes = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ne,
                                        wrapped, exact);
    return counted ? Value(arith::AndIOp::create(builder, loc, lanes, counted))
                   : lanes;
  }

  /// checkAcrossIterations for a tensor root with bounds (LaneBounds) whose
  /// arithmetic depends only on the induction variable and on values
  /// defined before the loop (`i + tl.arange(0, BLOCK)` over a vocabulary
  /// loop, `(start_n + offs_n[None, :]) * stride + offs_d[:, None]` over
  /// attention's K/V blocks). The bounds over all iterations are computed in
  /// front of the loop (the induction variable in [lb, ub - 1], step >= 1;
  /// only if the loop runs) and the loop is left as it is; where the body's
  /// scalars cannot be bounded that way, each iteration tests its own bounds
  /// and ORs the result into a loop-carried i1 scalar. After the loop, only
  /// if the bounds left i32, a replay loop over the same iterations
  /// recomputes the arithmetic (a copy of its ops, on the replay's
  /// induction variable), ORs the wrapped lanes of each iteration into an i1
  /// tile and counts them; the report (count > 0) then rebuilds them the same
  /// way for the first lane. The same lanes as the elementwise form (a lane
  /// wrapped in at least one iteration): the copy computes what each
  /// iteration computed (the same ops on the same induction variable values
  /// and outside values, none of them loop-carried), and bounds inside i32
  /// leave no wrapped lane. The elementwise form recomputed every lane in
  /// i64 every iteration (Liger's cross-entropy, 32768-lane blocks: H200
  /// 0.56x), and a carried i1 tile and a recompute in the loop under a
  /// branch cost the loop's registers (Liger's group norm 56 -> 96, sglang's
  /// extend attention a 416-byte stack). Returns false (nothing built) when
  /// the bounds are not known or the arithmetic reads a loop-carried value.
  static bool checkIterationsByBounds(OpBuilder &builder, Value root,
                                      scf::ForOp loop,
                                      const ReportOptions &report) {
    auto rootTy = dyn_cast<RankedTensorType>(root.getType());
    if (!rootTy || loop.getUnsignedCmp())
      return false;
    auto slice = loopInvariantSlice(root, loop, /*allowIV=*/true);
    if (!slice)
      return false;
    Operation *def = root.getDefiningOp();
    Location loc = def->getLoc();
    Value any;
    scf::ForOp newLoop = loop;
    std::string why = offsetReason(
        root, "before its loop: scalar bounds test over all iterations");
    if (loop.getInductionVar().getType().isInteger(32)) {
      // Bounds over all iterations, in front of the loop: the induction
      // variable lies in [lb, ub - 1] when the loop runs (step >= 1). The
      // loop is left as it is.
      builder.setInsertionPoint(loop);
      Type i64 = builder.getI64Type();
      Value lb =
          arith::ExtSIOp::create(builder, loc, i64, loop.getLowerBound());
      Value ub =
          arith::ExtSIOp::create(builder, loc, i64, loop.getUpperBound());
      Value last = arith::SubIOp::create(
          builder, loc, ub, arith::ConstantIntOp::create(builder, loc, i64, 1));
      LaneBounds overLoop(builder, loc, loop, lb, last);
      if (auto b = overLoop.get(root))
        any = arith::AndIOp::create(
            builder, loc, boundsLeaveI32(builder, loc, *b),
            arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::slt,
                                  loop.getLowerBound(), loop.getUpperBound()));
    }
    if (!any) {
      // Each iteration tests its own bounds.
      why = offsetReason(root, "in its loop: scalar bounds test per iteration");
      builder.setInsertionPointAfter(def);
      LaneBounds bounds(builder, loc);
      auto b = bounds.get(root);
      if (!b)
        return false;
      Value wraps = boundsLeaveI32(builder, loc, *b);
      builder.setInsertionPoint(loop);
      Value no =
          arith::ConstantIntOp::create(builder, loc, builder.getI1Type(), 0);
      IRRewriter rewriter(builder);
      FailureOr<LoopLikeOpInterface> widened = loop.replaceWithAdditionalYields(
          rewriter, ValueRange{no}, /*replaceInitOperandUsesInLoop=*/false,
          [&](OpBuilder &y, Location yieldLoc, ArrayRef<BlockArgument> args) {
            return SmallVector<Value>{
                arith::OrIOp::create(y, yieldLoc, args.front(), wraps)};
          });
      if (failed(widened))
        return false;
      newLoop = cast<scf::ForOp>(widened->getOperation());
      any = newLoop->getResults().back();
    }
    builder.setInsertionPointAfter(newLoop);
    // The lanes that wrapped in some iteration, replayed after the loop.
    Value iv = newLoop.getInductionVar();
    SmallVector<Operation *> ops(*slice);
    Value lb = newLoop.getLowerBound(), ub = newLoop.getUpperBound(),
          stepSize = newLoop.getStep();
    auto replay = [&](OpBuilder &b, Location l) -> Value {
      auto badTy = rootTy.clone(b.getI1Type());
      Value none = arith::ConstantOp::create(
          b, l, badTy, DenseElementsAttr::get(badTy, b.getBoolAttr(false)));
      auto again = scf::ForOp::create(
          b, l, lb, ub, stepSize, ValueRange{none},
          [&](OpBuilder &r, Location rl, Value step, ValueRange seen) {
            IRMapping mapping;
            mapping.map(iv, step);
            for (Operation *op : ops)
              r.clone(*op, mapping);
            Value bad = wrappedLanes(r, rl, mapping.lookup(root));
            scf::YieldOp::create(
                r, rl, ValueRange{arith::OrIOp::create(r, rl, seen[0], bad)});
          });
      keepRolled(again);
      return again.getResult(0);
    };
    std::string kernel = kernelNameOf(newLoop);
    ReportSite site{"offset_overflow_check", kernel, siteOf(loc), kWhat, why};
    // A loop at the top level of the kernel (record mode): the replay runs
    // after it, in front of the next loop or right before the `tt.return`
    // (reportPoint), where the loop's tiles (attention's accumulator) are
    // dead, one block of the tile at a time (blocks outer,
    // iterations inner: the lanes of a block that wrapped in some
    // iteration), so its registers stay below the kernel's.
    Operation *ret = reportPoint(newLoop->getBlock(), newLoop);
    if (ret && report.mode == ReportMode::Record) {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPoint(ret);
      auto blockReplay = [&](OpBuilder &b, Location l, ArrayRef<int64_t> sizes,
                             ArrayRef<Value> firsts) -> Value {
        auto badTy = rootTy.clone(sizes).clone(b.getI1Type());
        Value none = arith::ConstantOp::create(
            b, l, badTy, DenseElementsAttr::get(badTy, b.getBoolAttr(false)));
        auto again = scf::ForOp::create(
            b, l, lb, ub, stepSize, ValueRange{none},
            [&](OpBuilder &r, Location rl, Value step, ValueRange seen) {
              // The iteration's scalars are copied; its tensors are
              // rebuilt for the block from the copies (TileBlock).
              IRMapping mapping;
              mapping.map(iv, step);
              for (Operation *op : ops)
                if (!isa<RankedTensorType>(op->getResult(0).getType()))
                  r.clone(*op, mapping);
              TileBlock part(r, rl, rootTy.getShape(), sizes, firsts, &mapping);
              Value bad = wrappedLanes(r, rl, part.get(root));
              scf::YieldOp::create(
                  r, rl, ValueRange{arith::OrIOp::create(r, rl, seen[0], bad)});
            });
        keepRolled(again);
        return again.getResult(0);
      };
      if (reportByBlocks(builder, loc, root, any, ret, site, report,
                         blockReplay))
        return true;
    }
    Type i32 = builder.getI32Type();
    auto counted = scf::IfOp::create(
        builder, loc, any,
        [&](OpBuilder &then, Location l) {
          scf::YieldOp::create(then, l, countTrue(then, l, replay(then, l)));
        },
        [&](OpBuilder &otherwise, Location l) {
          scf::YieldOp::create(
              otherwise, l,
              Value(arith::ConstantIntOp::create(otherwise, l, i32, 0)));
        });
    emitReport(builder, loc, counted.getResult(0), replay, site, report);
    return true;
  }

  /// Checks `root`, which depends on `loop` (`k_ptrs + start_n * stride`),
  /// without a report inside the loop: each iteration ORs its wrapped lanes
  /// into a loop-carried i1 value of the root's shape (elementwise, no
  /// reduction, no branch), and the lanes set after the loop are counted
  /// and reported once. Complete: a wrap in any iteration sets its lane, and
  /// a set lane stays set. The count is of lanes that wrapped in at least one
  /// iteration; in abort mode the kernel aborts after the loop. A report
  /// inside the loop cost a reduction per iteration and stopped the
  /// pipeliner (attention's K/V loads: 6 async copies became 0).
  ///
  /// With `outermost` (a `tt.flatten` loop around `loop`, flattenedNest),
  /// the lanes are computed where the arithmetic is (not hoisted, no bounds
  /// test), carried through every loop from `loop` out to `outermost` (each
  /// ORs what its body's loop produced) and reported after it (issue 32,
  /// test_tl_range_fuse). Triton fuses the nest into one loop and, for the
  /// case that the inner loop runs no iteration, keeps a copy of the nest
  /// without it, which canonicalization deletes only if nothing in it is
  /// used: a check in front of the inner loop (hoisted, or a bounds test
  /// with its replay) kept that copy alive, a second `scf.for` (with its
  /// report's atomics, even with fusion done); carried from inside the inner
  /// loop, the copy yields the initial `false` and goes away.
  static void checkAcrossIterations(OpBuilder &builder, Value root,
                                    scf::ForOp loop,
                                    const ReportOptions &report,
                                    scf::ForOp outermost = {}) {
    Operation *def = root.getDefiningOp();
    Location loc = def->getLoc();
    builder.setInsertionPointAfter(def);
    // Lanes of a gathered index that no access touches are not counted
    // (countedLanes): the masks are the iteration's, so each iteration ORs
    // only its own counted lanes.
    Value counted = countedLanes(builder, loc, root, root);
    if (!counted && !outermost &&
        checkIterationsByBounds(builder, root, loop, report))
      return;
    std::string why = offsetReason(
        root, outermost ? "in its flatten=True loop nest: lane-by-lane i64 "
                          "check per iteration, reported after the nest"
                        : "in its loop: lane-by-lane i64 check per iteration");
    Value bad = wrappedLanes(builder, loc, root, counted);
    Type badTy = bad.getType();
    TypedAttr no = builder.getBoolAttr(false);
    if (auto shaped = dyn_cast<ShapedType>(badTy))
      no = DenseElementsAttr::get(shaped, no);
    IRRewriter rewriter(builder);
    FailureOr<LoopLikeOpInterface> widened = failure();
    while (true) {
      builder.setInsertionPoint(loop);
      Value init = arith::ConstantOp::create(builder, loc, badTy, no);
      bool last = !outermost || loop == outermost;
      widened = loop.replaceWithAdditionalYields(
          rewriter, ValueRange{init}, /*replaceInitOperandUsesInLoop=*/false,
          [&](OpBuilder &b, Location yieldLoc, ArrayRef<BlockArgument> args) {
            return SmallVector<Value>{
                arith::OrIOp::create(b, yieldLoc, args.front(), bad)};
          });
      if (failed(widened) || last)
        break;
      // The lanes set in this loop, ORed into its parent loop's.
      bad = widened->getOperation()->getResults().back();
      loop = cast<scf::ForOp>(widened->getOperation()->getParentOp());
    }
    if (failed(widened)) {
      // Fall back to a check in place (inside the loop).
      builder.setInsertionPointAfter(bad.getDefiningOp());
      std::string kernel = kernelNameOf(def);
      emitReport(
          builder, loc, countTrue(builder, loc, bad),
          [&](OpBuilder &, Location) { return bad; },
          ReportSite{"offset_overflow_check", kernel, siteOf(loc), kWhat,
                     why + ", reported in it"},
          report);
      return;
    }
    Operation *newLoop = widened->getOperation();
    builder.setInsertionPointAfter(newLoop);
    Value carried = newLoop->getResults().back();
    Value count = countTrue(builder, loc, carried);
    std::string kernel = kernelNameOf(newLoop);
    emitReport(
        builder, loc, count, [&](OpBuilder &, Location) { return carried; },
        ReportSite{"offset_overflow_check", kernel, siteOf(loc), kWhat, why},
        report);
  }
};

} // namespace

TRITON_EXT_REGISTER_PASS(offset_overflow_check, OffsetOverflowCheckPass);
