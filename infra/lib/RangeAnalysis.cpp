//===- RangeAnalysis.cpp - Integer range facts shared by the passes -------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// See triton-ext/RangeAnalysis.h. IntegerRanges runs MLIR's own analysis
// classes from libtriton.so (it exports IntegerRangeAnalysis, DeadCodeAnalysis,
// SparseConstantPropagation, DataFlowSolver and their vtables); only the
// subclass below, which adds the facts, is compiled here.
//
//===----------------------------------------------------------------------===//

#include "triton-ext/RangeAnalysis.h"

#include "mlir/Analysis/DataFlow/ConstantPropagationAnalysis.h"
#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/Analysis/DataFlow/IntegerRangeAnalysis.h"
#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/TypeID.h"
#include "triton/Dialect/Triton/IR/Dialect.h"

#include <algorithm>
#include <limits>

namespace mlir::triton_ext::range {

using Wide = __int128;

namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

bool fitsInt64(Wide v) { return v >= Wide(kMin) && v <= Wide(kMax); }

int64_t saturate(Wide v) {
  return v > Wide(kMax) ? kMax : v < Wide(kMin) ? kMin : int64_t(v);
}

/// The exact bounds of a op b over the intervals, as 128-bit values: the
/// operands are int64, so sums, differences and products fit.
std::pair<Wide, Wide> exactBounds(char op, Interval a, Interval b) {
  if (op == '+')
    return {Wide(a.lo) + b.lo, Wide(a.hi) + b.hi};
  if (op == '-')
    return {Wide(a.lo) - b.hi, Wide(a.hi) - b.lo};
  Wide c[4] = {Wide(a.lo) * b.lo, Wide(a.lo) * b.hi, Wide(a.hi) * b.lo,
               Wide(a.hi) * b.hi};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

std::optional<Interval> exact(char op, Interval a, Interval b) {
  auto [lo, hi] = exactBounds(op, a, b);
  if (!fitsInt64(lo) || !fitsInt64(hi))
    return std::nullopt;
  return Interval{int64_t(lo), int64_t(hi)};
}

Interval saturated(char op, Interval a, Interval b) {
  auto [lo, hi] = exactBounds(op, a, b);
  return {saturate(lo), saturate(hi)};
}

arith::CmpIPredicate mirror(arith::CmpIPredicate pred) {
  switch (pred) {
  case arith::CmpIPredicate::slt:
    return arith::CmpIPredicate::sgt;
  case arith::CmpIPredicate::sle:
    return arith::CmpIPredicate::sge;
  case arith::CmpIPredicate::sgt:
    return arith::CmpIPredicate::slt;
  case arith::CmpIPredicate::sge:
    return arith::CmpIPredicate::sle;
  default:
    return pred;
  }
}

} // namespace

std::optional<int64_t> constantOf(Value value) {
  auto cst = value.getDefiningOp<arith::ConstantOp>();
  if (!cst)
    return std::nullopt;
  if (auto i = dyn_cast<IntegerAttr>(cst.getValue()))
    return i.getValue().getSExtValue();
  if (auto dense = dyn_cast<SplatElementsAttr>(cst.getValue()))
    if (dense.getElementType().isInteger())
      return dense.getSplatValue<APInt>().getSExtValue();
  return std::nullopt;
}

Interval Interval::full(unsigned bits) {
  if (bits >= 64)
    return {kMin, kMax};
  return {-(int64_t(1) << (bits - 1)), (int64_t(1) << (bits - 1)) - 1};
}

Interval Interval::meet(Interval o) const {
  return {std::max(lo, o.lo), std::min(hi, o.hi)};
}

Interval Interval::join(Interval o) const {
  return {std::min(lo, o.lo), std::max(hi, o.hi)};
}

std::optional<Interval> Interval::add(Interval a, Interval b) {
  return exact('+', a, b);
}
std::optional<Interval> Interval::sub(Interval a, Interval b) {
  return exact('-', a, b);
}
std::optional<Interval> Interval::mul(Interval a, Interval b) {
  return exact('*', a, b);
}
Interval Interval::addSat(Interval a, Interval b) {
  return saturated('+', a, b);
}
Interval Interval::subSat(Interval a, Interval b) {
  return saturated('-', a, b);
}
Interval Interval::mulSat(Interval a, Interval b) {
  return saturated('*', a, b);
}

std::optional<Interval> assumedRange(Operation *op) {
  if (!op || op->getName().getStringRef() != kAssumeRangeOpName)
    return std::nullopt;
  auto lo = op->getAttrOfType<IntegerAttr>("lo");
  auto hi = op->getAttrOfType<IntegerAttr>("hi");
  if (!lo || !hi)
    return std::nullopt;
  return Interval{lo.getValue().getSExtValue(), hi.getValue().getSExtValue()};
}

Value assumedValue(Operation *op) {
  if (!assumedRange(op) || op->getNumOperands() != 1)
    return Value();
  return op->getOperand(0);
}

Interval entryAssumedRange(Value value, Interval out) {
  for (Operation *user : value.getUsers()) {
    auto cmp = dyn_cast<arith::CmpIOp>(user);
    if (!cmp || !llvm::any_of(cmp->getUsers(), [](Operation *u) {
          return u->getName().getStringRef() == "llvm.intr.assume" &&
                 isa_and_nonnull<triton::FuncOp>(u->getParentOp());
        }))
      continue;
    bool lhs = cmp.getLhs() == value;
    std::optional<int64_t> c = constantOf(lhs ? cmp.getRhs() : cmp.getLhs());
    if (!c)
      continue;
    // `c < value` is `value > c`.
    arith::CmpIPredicate pred =
        lhs ? cmp.getPredicate() : mirror(cmp.getPredicate());
    switch (pred) {
    case arith::CmpIPredicate::slt:
      if (*c != kMin)
        out = out.meet({kMin, *c - 1});
      break;
    case arith::CmpIPredicate::sle:
      out = out.meet({kMin, *c});
      break;
    case arith::CmpIPredicate::sgt:
      if (*c != kMax)
        out = out.meet({*c + 1, kMax});
      break;
    case arith::CmpIPredicate::sge:
      out = out.meet({*c, kMax});
      break;
    case arith::CmpIPredicate::eq:
      out = out.meet({*c, *c});
      break;
    default:
      break;
    }
  }
  return out;
}

std::optional<Interval> gridRange(Operation *op, GridLimits limits) {
  constexpr int64_t kX = std::numeric_limits<int32_t>::max(); // 2^31 - 1
  auto maxPrograms = [&](int axis) -> int64_t {
    return limits == GridLimits::Any || axis == 0 ? kX : 65535;
  };
  if (auto pid = dyn_cast_or_null<triton::GetProgramIdOp>(op))
    return Interval{0, maxPrograms(pid.getAxisAsInt()) - 1};
  if (auto num = dyn_cast_or_null<triton::GetNumProgramsOp>(op))
    return Interval{1, maxPrograms(num.getAxisAsInt())};
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// IntegerRanges
//===----------------------------------------------------------------------===//

using dataflow::IntegerValueRangeLattice;

namespace {

/// Element bit width of an integer or tensor-of-integer type, or 0.
unsigned intWidth(Type type) {
  auto elt = dyn_cast<IntegerType>(getElementTypeOrSelf(type));
  return elt ? elt.getWidth() : 0;
}

} // namespace

namespace detail {

/// IntegerRangeAnalysis plus the facts: Triton's ops implement no
/// InferIntRangeInterface, so they would all be the full range. A tensor's
/// range is the union of its elements' (upstream's convention).
class FactsRangeAnalysis : public dataflow::IntegerRangeAnalysis {
public:
  using IntegerRangeAnalysis::IntegerRangeAnalysis;

  LogicalResult
  visitOperation(Operation *op,
                 ArrayRef<const IntegerValueRangeLattice *> operands,
                 ArrayRef<IntegerValueRangeLattice *> results) override {
    if (op->getNumResults() != 1 || intWidth(op->getResult(0).getType()) == 0)
      return IntegerRangeAnalysis::visitOperation(op, operands, results);
    unsigned width = intWidth(op->getResult(0).getType());
    auto set = [&](const ConstantIntRanges &r) {
      IntegerValueRangeLattice *lattice = results.front();
      propagateIfChanged(lattice, lattice->join(IntegerValueRange(r)));
      return success();
    };
    if (std::optional<Interval> fact = assumedRange(op)) {
      // The program is undefined outside the fact: the result holds the
      // operand's values that lie in it.
      if (operands.size() != 1 || operands[0]->getValue().isUninitialized())
        return success();
      Interval stated = fact->meet(Interval::full(width));
      if (stated.lo > stated.hi)
        return set(ConstantIntRanges::maxRange(width));
      const ConstantIntRanges &in = operands[0]->getValue().getValue();
      Interval known{in.smin().getSExtValue(), in.smax().getSExtValue()};
      Interval both = known.meet(stated);
      if (both.lo > both.hi) // contradicting facts: no execution reaches it
        both = stated;
      return set(signedRange(both, width));
    }
    if (std::optional<Interval> grid = gridRange(op, GridLimits::Any))
      return set(signedRange(grid->meet(Interval::full(width)), width));
    if (auto range = dyn_cast<triton::MakeRangeOp>(op)) {
      if (range.getEnd() <= range.getStart())
        return set(ConstantIntRanges::maxRange(width));
      Interval lanes{range.getStart(), int64_t(range.getEnd()) - 1};
      if (!lanes.fitsSigned(width))
        return set(ConstantIntRanges::maxRange(width));
      return set(signedRange(lanes, width));
    }
    // Shape ops copy elements: the range of the elements is the operand's.
    if (isa<triton::SplatOp, triton::BroadcastOp, triton::ExpandDimsOp,
            triton::ReshapeOp, triton::TransOp>(op) &&
        op->getNumOperands() == 1 &&
        intWidth(op->getOperand(0).getType()) == width) {
      if (operands[0]->getValue().isUninitialized())
        return success();
      return set(operands[0]->getValue().getValue());
    }
    return IntegerRangeAnalysis::visitOperation(op, operands, results);
  }

private:
  static ConstantIntRanges signedRange(Interval r, unsigned width) {
    return ConstantIntRanges::fromSigned(APInt(width, r.lo, /*isSigned=*/true),
                                         APInt(width, r.hi, /*isSigned=*/true));
  }
};

} // namespace detail
} // namespace mlir::triton_ext::range

// The solver keys analyses by TypeID; a class of one .cpp needs an explicit
// one (the implicit fallback is refused for classes in anonymous namespaces).
MLIR_DECLARE_EXPLICIT_TYPE_ID(
    mlir::triton_ext::range::detail::FactsRangeAnalysis)
MLIR_DEFINE_EXPLICIT_TYPE_ID(
    mlir::triton_ext::range::detail::FactsRangeAnalysis)

namespace mlir::triton_ext::range {

IntegerRanges::IntegerRanges(Operation *root)
    : solver(std::make_unique<DataFlowSolver>()) {
  // IntegerRangeAnalysis reads liveness from DeadCodeAnalysis, which needs
  // SparseConstantPropagation for branch conditions.
  solver->load<dataflow::DeadCodeAnalysis>();
  solver->load<dataflow::SparseConstantPropagation>();
  solver->load<detail::FactsRangeAnalysis>();
  ok = succeeded(solver->initializeAndRun(root));
}

IntegerRanges::~IntegerRanges() = default;

std::optional<Interval> IntegerRanges::signedRange(Value value) const {
  unsigned width = intWidth(value.getType());
  if (!ok || width == 0 || width > 64)
    return std::nullopt;
  auto *lattice = solver->lookupState<IntegerValueRangeLattice>(value);
  if (!lattice || lattice->getValue().isUninitialized())
    return std::nullopt;
  const ConstantIntRanges &r = lattice->getValue().getValue();
  if (r.smin().getBitWidth() != width)
    return std::nullopt;
  Interval out{r.smin().getSExtValue(), r.smax().getSExtValue()};
  if (out.lo > out.hi)
    return std::nullopt;
  return out;
}

} // namespace mlir::triton_ext::range
