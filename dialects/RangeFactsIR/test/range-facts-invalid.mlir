// Verifier and parser errors of triton_ext_range.assume_range, one input file per case
// (the opt driver has no -split-input-file / --verify-diagnostics). Each must fail with the
// diagnostic at the op's location.
// RUN: not env TRITON_EXT_ENABLE=range_facts_lower %opt %S/Inputs/invalid-empty-range.mlir --pass cse 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: invalid-empty-range.mlir":2:8): error: 'triton_ext_range.assume_range' op empty range: lo (10) is greater than hi (2)

// RUN: not env TRITON_EXT_ENABLE=range_facts_lower %opt %S/Inputs/invalid-bound-too-wide.mlir --pass cse 2>&1 | FileCheck %s --check-prefix=WIDE
// WIDE: invalid-bound-too-wide.mlir":2:45): error: custom op 'triton_ext_range.assume_range' bound does not fit 'i8'

// RUN: not env TRITON_EXT_ENABLE=range_facts_lower %opt %S/Inputs/invalid-bound-type.mlir --pass cse 2>&1 | FileCheck %s --check-prefix=TYPE
// TYPE: invalid-bound-type.mlir":2:8): error: 'triton_ext_range.assume_range' op 'lo' has type 'i64', expected the element type 'i32'

// RUN: not env TRITON_EXT_ENABLE=range_facts_lower %opt %S/Inputs/invalid-float.mlir --pass cse 2>&1 | FileCheck %s --check-prefix=FLOAT
// FLOAT: invalid-float.mlir":2:{{[0-9]+}}): error: {{.*}}expected an integer or a tensor of integers, found 'f32'

// RUN: not env TRITON_EXT_ENABLE=range_facts_lower %opt %S/Inputs/invalid-result-type.mlir --pass cse 2>&1 | FileCheck %s --check-prefix=RESULT
// RESULT: invalid-result-type.mlir":2:8): error: 'triton_ext_range.assume_range' op failed to verify that all of {input, result} have same type
