//===- Passes.td - Lower range facts ------------------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_RANGE_FACTS_PASSES
#define TRITON_EXT_RANGE_FACTS_PASSES

include "mlir/Pass/PassBase.td"

def TritonExtRangeFactsLower
    : Pass<"triton-ext-range-facts-lower", "mlir::ModuleOp"> {
  let summary = "Remove triton_ext_range facts, replacing each by its operand";
  let description = [{
    Replaces every `triton_ext_range.assume_range %x, lo, hi` by `%x`. The op
    computes nothing, so this keeps the program's meaning; it must run before
    `convert-triton-to-tritongpu`, which does not know the dialect. Passes
    that consume the facts run before it.

    Before:

    ```mlir
    %n1 = triton_ext_range.assume_range %n, 0, 4096 : i32
    %s = arith.addi %n1, %c1 : i32
    ```

    After:

    ```mlir
    %s = arith.addi %n, %c1 : i32
    ```
  }];
}

#endif // TRITON_EXT_RANGE_FACTS_PASSES
