//===- RangeFactsDialect.cpp - The triton_ext_range dialect ---------------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Dialect `triton_ext_range` (GitHub issue 9): value range facts that a kernel
// states with `triton_ext_range.assume_range(x, lo, hi)` from Python
// (language/RangeFacts) and that passes may read. This file holds the dialect
// class, the op's syntax, verifier and folder, and the inliner interface that
// lets Triton's inliner move the op out of called @triton.jit functions.
//
// Syntax: `triton_ext_range.assume_range %x, LO, HI : TYPE`, where LO and HI
// are signed decimals that fit the element type of TYPE.
//
//===----------------------------------------------------------------------===//

#include "RangeFactsIRDialect.h"

#include "triton-ext/PassInfra.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Transforms/InliningUtils.h"

using namespace mlir;
using namespace mlir::triton_ext::range;

#include "RangeFactsIRDialect.cpp.inc"

namespace {
/// The facts compute nothing and refer to nothing outside their operands, so
/// inlining a function that contains them is always legal.
struct RangeFactsInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void RangeFactsDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "RangeFactsIROps.cpp.inc"
      >();
  addInterfaces<RangeFactsInlinerInterface>();
}

//===----------------------------------------------------------------------===//
// AssumeRangeOp
//===----------------------------------------------------------------------===//

IntegerType AssumeRangeOp::getElementType() {
  return cast<IntegerType>(getElementTypeOrSelf(getInput().getType()));
}

ParseResult AssumeRangeOp::parse(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::UnresolvedOperand input;
  APInt lo, hi;
  Type type;
  llvm::SMLoc loLoc, hiLoc;
  if (parser.parseOperand(input) || parser.parseComma() ||
      parser.getCurrentLocation(&loLoc) || parser.parseInteger(lo) ||
      parser.parseComma() || parser.getCurrentLocation(&hiLoc) ||
      parser.parseInteger(hi) ||
      parser.parseOptionalAttrDict(result.attributes) ||
      parser.parseColonType(type) ||
      parser.resolveOperand(input, type, result.operands))
    return failure();
  auto elementType = dyn_cast<IntegerType>(getElementTypeOrSelf(type));
  if (!elementType)
    return parser.emitError(parser.getNameLoc(),
                            "expected an integer or a tensor of integers, "
                            "found ")
           << type;
  unsigned width = elementType.getWidth();
  // parseInteger gives the narrowest width that holds the literal as signed
  // (with a sign bit); a bound fits the element type iff it still round-trips
  // after truncation to `width` bits.
  for (auto [value, loc] : {std::pair{&lo, loLoc}, std::pair{&hi, hiLoc}}) {
    if (value->getSignificantBits() > width)
      return parser.emitError(loc, "bound does not fit ") << elementType;
    *value = value->sextOrTrunc(width);
  }
  Properties &props = result.getOrAddProperties<Properties>();
  props.lo = IntegerAttr::get(elementType, lo);
  props.hi = IntegerAttr::get(elementType, hi);
  result.addTypes(type);
  return success();
}

void AssumeRangeOp::print(OpAsmPrinter &printer) {
  printer << ' ' << getInput() << ", " << getLo().getSExtValue() << ", "
          << getHi().getSExtValue();
  printer.printOptionalAttrDict((*this)->getAttrs(), {"lo", "hi"});
  printer << " : " << getInput().getType();
}

LogicalResult AssumeRangeOp::verify() {
  IntegerType elementType = getElementType();
  for (auto [name, attr] : {std::pair{"lo", getLoAttr()}, std::pair{"hi", getHiAttr()}}) {
    if (attr.getType() != elementType)
      return emitOpError() << "'" << name << "' has type " << attr.getType()
                           << ", expected the element type " << elementType;
  }
  if (getLo().sgt(getHi()))
    return emitOpError() << "empty range: lo (" << getLo().getSExtValue()
                         << ") is greater than hi (" << getHi().getSExtValue()
                         << ")";
  return success();
}

OpFoldResult AssumeRangeOp::fold(FoldAdaptor) {
  // A range covering every value of the type states nothing: the op is its
  // operand. Narrower facts are kept for the passes that read them.
  unsigned width = getElementType().getWidth();
  if (getLo().isMinSignedValue() && getHi().isMaxSignedValue() &&
      getLo().getBitWidth() == width)
    return getInput();
  // Two facts about one value: the outer op only narrows or repeats the inner
  // one when its range contains the inner range; then it adds nothing.
  if (auto inner = getInput().getDefiningOp<AssumeRangeOp>())
    if (getLo().sle(inner.getLo()) && inner.getHi().sle(getHi()))
      return getInput();
  return {};
}

#define GET_OP_CLASSES
#include "RangeFactsIROps.cpp.inc"

TRITON_EXT_REGISTER_DIALECT(triton_ext_range, RangeFactsDialect);
