// Verifier errors of the triton_ext_onchip views, the builder's never-armed wait, and
// onchip_lower's error for a carrier used in a way it cannot lower: one case per chunk, each
// reported at the op (TRITON_EXT_ENABLE loads the dialect).
// RUN: env TRITON_EXT_ENABLE=onchip_lower %opt %s -split-input-file -verify-diagnostics --pass onchip_lower

tt.func @view_shape(%buf: !ttg.memdesc<64x64xf16, #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>, #ttg.shared_memory, mutable>) {
  // expected-error @below {{'triton_ext_onchip.view' op result shape must equal the buffer shape}}
  %0 = triton_ext_onchip.view %buf {purpose = "store"} : !ttg.memdesc<64x64xf16, #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>, #ttg.shared_memory, mutable> -> tensor<64x32x!tt.ptr<f16>>
  tt.return
}

// -----

tt.func @view_purpose(%buf: !ttg.memdesc<64x64xf16, #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>, #ttg.shared_memory, mutable>) {
  // expected-error @below {{'triton_ext_onchip.view' op purpose must be "store" or "copy", got "load"}}
  %0 = triton_ext_onchip.view %buf {purpose = "load"} : !ttg.memdesc<64x64xf16, #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>, #ttg.shared_memory, mutable> -> tensor<64x64x!tt.ptr<f16>>
  tt.return
}

// -----

tt.func @mma_operand_type(%buf: !ttg.memdesc<64x64xf16, #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>, #ttg.shared_memory, mutable>) {
  // expected-error @below {{'triton_ext_onchip.mma_operand' op result element type 'bf16' does not match the buffer (expected 'f16')}}
  %0 = triton_ext_onchip.mma_operand %buf {pending = 0 : i32} : !ttg.memdesc<64x64xf16, #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>, #ttg.shared_memory, mutable> -> tensor<64x64xbf16>
  tt.return
}

// -----

// A view is only a spelling of a store target; loading through it is reported at the load.
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
tt.func @view_dereferenced(%buf: !ttg.memdesc<64x64xf16, #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>, #ttg.shared_memory, mutable>) -> tensor<64x64xf16, #blocked> {
  %0 = triton_ext_onchip.view %buf {purpose = "store"} : !ttg.memdesc<64x64xf16, #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>, #ttg.shared_memory, mutable> -> tensor<64x64x!tt.ptr<f16>>
  %1 = ttg.convert_layout %0 : tensor<64x64x!tt.ptr<f16>> -> tensor<64x64x!tt.ptr<f16>, #blocked>
  // expected-error @below {{triton_ext_onchip: 'triton_ext_onchip.view' reaches 'tt.load', which onchip_lower cannot lower}}
  %2 = tt.load %1 : tensor<64x64x!tt.ptr<f16>, #blocked>
  tt.return %2 : tensor<64x64xf16, #blocked>
}
}

// -----

// A wait on a barrier that no arrive or expect uses can never return.
#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
tt.func @never_armed(%bars: !ttg.memdesc<2x1xi64, #bar, #ttg.shared_memory, mutable>, %phase: i32, %p: i1) {
  triton_ext_onchip.declare_barriers %bars : !ttg.memdesc<2x1xi64, #bar, #ttg.shared_memory, mutable>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %b0 = ttg.memdesc_index %bars[%c0] : !ttg.memdesc<2x1xi64, #bar, #ttg.shared_memory, mutable> -> !ttg.memdesc<1xi64, #bar, #ttg.shared_memory, mutable>
  %b1 = ttg.memdesc_index %bars[%c1] : !ttg.memdesc<2x1xi64, #bar, #ttg.shared_memory, mutable> -> !ttg.memdesc<1xi64, #bar, #ttg.shared_memory, mutable>
  ttng.arrive_barrier %b0, 1, %p : !ttg.memdesc<1xi64, #bar, #ttg.shared_memory, mutable>
  // expected-error @below {{triton_ext_onchip: this wait never returns: nothing arrives on barrier 1 (no arrive or expect uses it; a copy_tma only brings bytes, it is no arrival)}}
  ttng.wait_barrier %b1, %phase, %p : !ttg.memdesc<1xi64, #bar, #ttg.shared_memory, mutable>
  tt.return
}

// -----

// Issue 26: a TMA copy is no arrival. A copy on a barrier with no expect, then a wait on it:
// the phase never completes (the wait hangs), reported at the wait.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
tt.func @copy_without_expect(%da: !tt.tensordesc<128x64xf16>, %a: !ttg.memdesc<128x64xf16, #shared, #ttg.shared_memory, mutable>, %bars: !ttg.memdesc<1x1xi64, #bar, #ttg.shared_memory, mutable>, %p: i1) {
  triton_ext_onchip.declare_barriers %bars : !ttg.memdesc<1x1xi64, #bar, #ttg.shared_memory, mutable>
  %c0 = arith.constant 0 : i32
  %b0 = ttg.memdesc_index %bars[%c0] : !ttg.memdesc<1x1xi64, #bar, #ttg.shared_memory, mutable> -> !ttg.memdesc<1xi64, #bar, #ttg.shared_memory, mutable>
  triton_ext_onchip.tma_copy %da[%c0, %c0] -> %a, %b0, %p : !tt.tensordesc<128x64xf16>, !ttg.memdesc<1xi64, #bar, #ttg.shared_memory, mutable>, !ttg.memdesc<128x64xf16, #shared, #ttg.shared_memory, mutable>
  // expected-error @below {{triton_ext_onchip: this wait never returns: nothing arrives on barrier 0 (no arrive or expect uses it; a copy_tma only brings bytes, it is no arrival)}}
  ttng.wait_barrier %b0, %c0, %p : !ttg.memdesc<1xi64, #bar, #ttg.shared_memory, mutable>
  tt.return
}
