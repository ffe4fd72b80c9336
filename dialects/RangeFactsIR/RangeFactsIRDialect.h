//===- RangeFactsDialect.h - The triton_ext_range dialect -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Declarations generated from RangeFacts.td. Private to this plugin: another
// plugin must create these ops by name (see language/RangeFacts), because a
// class compiled into two plugins has two TypeIDs.
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_RANGE_FACTS_DIALECT_H
#define TRITON_EXT_RANGE_FACTS_DIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "RangeFactsIRDialect.h.inc"

#define GET_OP_CLASSES
#include "RangeFactsIROps.h.inc"

#endif // TRITON_EXT_RANGE_FACTS_DIALECT_H
