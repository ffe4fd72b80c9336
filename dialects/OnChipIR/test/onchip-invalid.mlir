// Verifier errors of the triton_ext_onchip views and onchip_lower's error for a carrier used in
// a way it cannot lower, one input file per case (the opt driver has no -split-input-file).
// RUN: not env TRITON_EXT_ENABLE=onchip_lower %opt %S/Inputs/view-shape.mlir --pass cse 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: view-shape.mlir":2:8): error: 'triton_ext_onchip.view' op result shape must equal the buffer shape

// RUN: not env TRITON_EXT_ENABLE=onchip_lower %opt %S/Inputs/view-purpose.mlir --pass cse 2>&1 | FileCheck %s --check-prefix=PURPOSE
// PURPOSE: view-purpose.mlir":2:8): error: 'triton_ext_onchip.view' op purpose must be "store" or "copy", got "load"

// RUN: not env TRITON_EXT_ENABLE=onchip_lower %opt %S/Inputs/mma-operand-type.mlir --pass cse 2>&1 | FileCheck %s --check-prefix=ELEM
// ELEM: mma-operand-type.mlir":2:8): error: 'triton_ext_onchip.mma_operand' op result element type 'bf16' does not match the buffer (expected 'f16')

// A view is only a spelling of a store target; loading through it is reported at the load.
// RUN: not %opt %S/Inputs/view-dereferenced.mlir --pass onchip_lower 2>&1 | FileCheck %s --check-prefix=DEREF
// DEREF: view-dereferenced.mlir:6:8: error: triton_ext_onchip: 'triton_ext_onchip.view' reaches 'tt.load', which onchip_lower cannot lower

// A wait on a barrier that no arrive or expect uses can never return.
// RUN: not env TRITON_EXT_ENABLE=onchip_lower %opt %S/Inputs/never-armed.mlir --pass cse 2>&1 | FileCheck %s --check-prefix=ARMED
// ARMED: never-armed.mlir":9:3): error: triton_ext_onchip: this wait never returns: nothing arrives on barrier 1 (no arrive or expect uses it; a copy_tma only brings bytes, it is no arrival)

// Issue 26: a TMA copy is no arrival. A copy on a barrier with no expect, then a wait on it:
// the phase never completes (the wait hangs), reported at the wait.
// RUN: not env TRITON_EXT_ENABLE=onchip_lower %opt %S/Inputs/copy-no-arrival.mlir --pass cse 2>&1 | FileCheck %s --check-prefix=COPY
// COPY: copy-no-arrival.mlir":8:3): error: triton_ext_onchip: this wait never returns: nothing arrives on barrier 0 (no arrive or expect uses it; a copy_tma only brings bytes, it is no arrival)
