//===- OnChipIRDialect.h - The triton_ext_onchip dialect -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Declarations generated from OnChipIR.td. Private to this plugin: another
// plugin must create these ops by name (see language/OnChip), because a
// class compiled into two plugins has two TypeIDs.
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_ONCHIP_DIALECT_H
#define TRITON_EXT_ONCHIP_DIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "OnChipIRDialect.h.inc"

#define GET_OP_CLASSES
#include "OnChipIROps.h.inc"

#endif // TRITON_EXT_ONCHIP_DIALECT_H
