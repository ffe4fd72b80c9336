//===- @@camel@@Dialect.h - The @@dialect@@ dialect -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Declarations generated from @@camel@@.td. Private to this plugin: another
// plugin (such as a language extension) must create these ops by name,
// because a class compiled into two plugins has two TypeIDs.
//
//===----------------------------------------------------------------------===//

#ifndef @@guard@@_DIALECT_H
#define @@guard@@_DIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "@@camel@@Dialect.h.inc"

#define GET_OP_CLASSES
#include "@@camel@@Ops.h.inc"

#endif // @@guard@@_DIALECT_H
