#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
tt.func @too_few(%desc: !tt.tensordesc<128x64xf16>, %a: !ttg.memdesc<128x64xf16, #shared, #smem, mutable>, %b: !ttg.memdesc<128x64xf16, #shared, #smem, mutable>, %bar: !ttg.memdesc<1xi64, #bar, #smem, mutable>, %p: i1, %c0: i32) {
  ttng.barrier_expect %bar, 16384, %p : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  triton_ext_onchip.tma_copy %desc[%c0, %c0] -> %a, %bar, %p : !tt.tensordesc<128x64xf16>, !ttg.memdesc<1xi64, #bar, #smem, mutable>, !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
  triton_ext_onchip.tma_copy %desc[%c0, %c0] -> %b, %bar, %p : !tt.tensordesc<128x64xf16>, !ttg.memdesc<1xi64, #bar, #smem, mutable>, !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
  ttng.wait_barrier %bar, %c0, %p : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  tt.return
}
tt.func @too_many(%desc: !tt.tensordesc<128x64xf16>, %a: !ttg.memdesc<128x64xf16, #shared, #smem, mutable>, %bar: !ttg.memdesc<1xi64, #bar, #smem, mutable>, %p: i1, %c0: i32) {
  ttng.barrier_expect %bar, 32768, %p : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  triton_ext_onchip.tma_copy %desc[%c0, %c0] -> %a, %bar, %p : !tt.tensordesc<128x64xf16>, !ttg.memdesc<1xi64, #bar, #smem, mutable>, !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
  tt.return
}
