// Verifier errors of @@dialect@@.@@op@@, one input file per case (the opt driver has no
// -split-input-file / --verify-diagnostics). Each fails with the diagnostic at the op.
// RUN: not env TRITON_EXT_ENABLE=@@lower_pass@@ %opt %S/Inputs/invalid-factor-too-wide.mlir --pass cse 2>&1 | FileCheck %s --check-prefix=WIDE
// WIDE: invalid-factor-too-wide.mlir":2:8): error: '@@dialect@@.@@op@@' op factor 256 does not fit 'i8' (expected -2^7 <= factor <= 2^8 - 1)

// RUN: not env TRITON_EXT_ENABLE=@@lower_pass@@ %opt %S/Inputs/invalid-negative-too-wide.mlir --pass cse 2>&1 | FileCheck %s --check-prefix=NEG
// NEG: invalid-negative-too-wide.mlir":2:8): error: '@@dialect@@.@@op@@' op factor -129 does not fit 'i8'

// RUN: not env TRITON_EXT_ENABLE=@@lower_pass@@ %opt %S/Inputs/invalid-float.mlir --pass cse 2>&1 | FileCheck %s --check-prefix=FLOAT
// FLOAT: invalid-float.mlir":2:8): error: '@@dialect@@.@@op@@' op operand #0 must be {{.*}}, but got 'f32'

// RUN: not env TRITON_EXT_ENABLE=@@lower_pass@@ %opt %S/Inputs/invalid-result-type.mlir --pass cse 2>&1 | FileCheck %s --check-prefix=RESULT
// RESULT: invalid-result-type.mlir":2:8): error: '@@dialect@@.@@op@@' op failed to verify that all of {input, result} have same type
