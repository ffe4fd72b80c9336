//===- Passes.td - ABI probe pass ------------------------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_ABI_PROBE_PASSES
#define TRITON_EXT_ABI_PROBE_PASSES

include "mlir/Pass/PassBase.td"

def TritonExtAbiProbe : Pass<"triton-ext-test-abi-probe", "mlir::ModuleOp"> {
  let summary = "Check that MLIR built from Debian's headers agrees with libtriton";
  let description = [{
    Runs trait, interface, isa/cast, attribute/type, OpBuilder and greedy
    rewriting checks on the module and writes a JSON report. Leaves the module
    unchanged. Test-only: see tools/abi-probe/AbiProbe.cpp.
  }];
  let options = [
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "File to write the JSON report to (nothing is written if empty)">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

#endif // TRITON_EXT_ABI_PROBE_PASSES
