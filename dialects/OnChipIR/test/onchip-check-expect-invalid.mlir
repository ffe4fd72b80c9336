// onchip_check_expect's errors: too few bytes announced (the phase completes while the second
// copy lands) and too many (the wait hangs), at the expect, with a note at each copy.
// RUN: env TRITON_EXT_ENABLE=onchip_lower %opt %s -split-input-file -verify-diagnostics --pass onchip_check_expect

#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
tt.func @too_few(%desc: !tt.tensordesc<128x64xf16>, %a: !ttg.memdesc<128x64xf16, #shared, #smem, mutable>, %b: !ttg.memdesc<128x64xf16, #shared, #smem, mutable>, %bar: !ttg.memdesc<1xi64, #bar, #smem, mutable>, %p: i1, %c0: i32) {
  // expected-error @below {{triton_ext_onchip: expect announces 16384 bytes on this barrier, but the copy_tma calls that complete on it before its wait bring 32768 bytes; the phase would complete while a copy is still landing (the reader races it). Announce the sum of the buffers' sizes (elements x element bytes)}}
  ttng.barrier_expect %bar, 16384, %p : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  // expected-note @below {{this copy brings 16384 bytes}}
  triton_ext_onchip.tma_copy %desc[%c0, %c0] -> %a, %bar, %p : !tt.tensordesc<128x64xf16>, !ttg.memdesc<1xi64, #bar, #smem, mutable>, !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
  // expected-note @below {{this copy brings 16384 bytes}}
  triton_ext_onchip.tma_copy %desc[%c0, %c0] -> %b, %bar, %p : !tt.tensordesc<128x64xf16>, !ttg.memdesc<1xi64, #bar, #smem, mutable>, !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
  ttng.wait_barrier %bar, %c0, %p : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  tt.return
}

// -----

#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
tt.func @too_many(%desc: !tt.tensordesc<128x64xf16>, %a: !ttg.memdesc<128x64xf16, #shared, #smem, mutable>, %bar: !ttg.memdesc<1xi64, #bar, #smem, mutable>, %p: i1, %c0: i32) {
  // expected-error @below {{triton_ext_onchip: expect announces 32768 bytes on this barrier, but the copy_tma calls that complete on it before its wait bring 16384 bytes; the phase would never complete (the wait hangs)}}
  ttng.barrier_expect %bar, 32768, %p : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  // expected-note @below {{this copy brings 16384 bytes}}
  triton_ext_onchip.tma_copy %desc[%c0, %c0] -> %a, %bar, %p : !tt.tensordesc<128x64xf16>, !ttg.memdesc<1xi64, #bar, #smem, mutable>, !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
  tt.return
}
