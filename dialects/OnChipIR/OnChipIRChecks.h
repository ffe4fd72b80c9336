//===- OnChipIRChecks.h - Checks run by onchip_check_expect ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_ONCHIP_CHECKS_H
#define TRITON_EXT_ONCHIP_CHECKS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

namespace mlir::triton_ext::onchip {
/// Reports (at the user's line) a read of a buffer before the wait for its
/// copy, and an overwrite of a buffer an mma in flight or a TMA store not
/// waited for still reads, where one block shows them
/// (OnChipIRCheckHazards.cpp). Fails if it reported anything.
LogicalResult checkHazards(ModuleOp module);
} // namespace mlir::triton_ext::onchip

#endif // TRITON_EXT_ONCHIP_CHECKS_H
