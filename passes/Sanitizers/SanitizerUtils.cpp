//===- SanitizerUtils.cpp - Shared reporting for the sanitizer passes -----===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Counting and reporting shared by nan_inf_check and offset_overflow_check.
// The count is a plain sum reduction (`tt.reduce` with `arith.addi`), whose
// result type Triton infers (slice layouts in TTGIR, plain tensors in TTIR),
// so the same code serves both stages. The report only reads values: it adds
// no store to user memory and changes no value the kernel computes.
//
//===----------------------------------------------------------------------===//

#include "SanitizerUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "triton/Dialect/Triton/IR/Dialect.h"

namespace mlir::triton_ext::sanitizers {

std::optional<ReportMode> parseMode(StringRef text) {
  if (text == "record")
    return ReportMode::Record;
  if (text == "abort")
    return ReportMode::Abort;
  return std::nullopt;
}

std::string siteOf(Location loc) {
  if (auto fileLoc = loc->findInstanceOf<FileLineColLoc>())
    return (fileLoc.getFilename().getValue() + ":" +
            std::to_string(fileLoc.getLine()))
        .str();
  return "unknown";
}

std::string kernelNameOf(Operation *op) {
  if (auto func = op->getParentOfType<triton::FuncOp>())
    return func.getSymName().str();
  return "unknown";
}

Value countTrue(OpBuilder &builder, Location loc, Value bad) {
  Type i32 = builder.getI32Type();
  auto tensorTy = dyn_cast<RankedTensorType>(bad.getType());
  if (!tensorTy)
    return arith::ExtUIOp::create(builder, loc, i32, bad);
  Value count = arith::ExtUIOp::create(builder, loc,
                                       tensorTy.clone(i32), bad);
  // Reduce the leading dimension until a scalar is left; Triton infers each
  // result type (a slice of the previous layout in TTGIR).
  for (int64_t rank = tensorTy.getRank(); rank > 0; --rank) {
    auto reduce =
        triton::ReduceOp::create(builder, loc, ValueRange{count}, /*axis=*/0);
    OpBuilder::InsertionGuard guard(builder);
    Block *body = builder.createBlock(&reduce.getCombineOp(), {}, {i32, i32},
                                      {loc, loc});
    Value sum = arith::AddIOp::create(builder, loc, body->getArgument(0),
                                      body->getArgument(1));
    triton::ReduceReturnOp::create(builder, loc, ValueRange{sum});
    count = reduce.getResult()[0];
  }
  return count;
}

void emitReport(OpBuilder &builder, Location loc, Value count,
                StringRef passName, StringRef kernel, StringRef site,
                StringRef what, ReportMode mode) {
  std::string prefix = ("[triton-ext " + passName + "] kernel=" + kernel +
                        " site=" + site + " " + what + "=")
                           .str();
  Value zero = arith::ConstantIntOp::create(builder, loc, count.getType(), 0);
  Value found = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::sgt,
                                      count, zero);
  // Print only when something was found, so correct kernels print nothing.
  auto ifOp = scf::IfOp::create(builder, loc, found, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(ifOp.thenBlock());
    triton::PrintOp::create(builder, loc, prefix, /*hex=*/false,
                            ValueRange{count}, ArrayRef<int32_t>{1});
  }
  if (mode == ReportMode::Abort) {
    Value clean = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq,
                                        count, zero);
    triton::AssertOp::create(builder, loc, clean, prefix + "nonzero");
  }
}

} // namespace mlir::triton_ext::sanitizers
