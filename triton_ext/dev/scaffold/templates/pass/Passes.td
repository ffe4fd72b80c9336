//===- Passes.td - @@camel@@ -*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
//===----------------------------------------------------------------------===//

#ifndef @@upper@@_PASSES
#define @@upper@@_PASSES

include "mlir/Pass/PassBase.td"

def @@record@@ : Pass<"@@flag@@", "mlir::ModuleOp"> {
  let summary = "Tag each tt.func with the number of scf.for loops it holds";
  let description = [{
    Scaffolded by `triton-ext new pass @@camel@@`: replace this with what your
    pass does, with the IR before and after.

    Sets the discardable attribute `triton_ext.@@snake@@.loops` (i64) on every
    `tt.func` that holds at least `min-loops` `scf.for` ops.
  }];
  let options = [
    Option<"minLoops", "min-loops", "unsigned", /*default=*/"0",
           "Fewest scf.for ops (count) a function needs to be tagged.">,
  ];
  let dependentDialects = ["mlir::scf::SCFDialect",
                           "mlir::triton::TritonDialect"];
}

#endif // @@upper@@_PASSES
