//===- Passes.td - Lower @@dialect@@ -*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
//===----------------------------------------------------------------------===//

#ifndef @@guard@@_PASSES
#define @@guard@@_PASSES

include "mlir/Pass/PassBase.td"

def @@lower_record@@ : Pass<"@@lower_flag@@", "mlir::ModuleOp"> {
  let summary = "Lower @@dialect@@ ops to arith";
  let description = [{
    Replaces every `@@dialect@@.@@op@@ %x, K` by `%x * K` (`arith.muli` with
    an `arith.constant` of the element type, splat for a tensor). Must run
    before `convert-triton-to-tritongpu`, which does not know the dialect.

    Before:

    ```mlir
    %y = @@dialect@@.@@op@@ %x, 3 : i32
    ```

    After:

    ```mlir
    %c3_i32 = arith.constant 3 : i32
    %y = arith.muli %x, %c3_i32 : i32
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

#endif // @@guard@@_PASSES
