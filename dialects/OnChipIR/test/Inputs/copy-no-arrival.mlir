#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
tt.func @f(%da: !tt.tensordesc<128x64xf16>, %a: !ttg.memdesc<128x64xf16, #shared, #ttg.shared_memory, mutable>, %bars: !ttg.memdesc<1x1xi64, #bar, #ttg.shared_memory, mutable>, %p: i1) {
  triton_ext_onchip.declare_barriers %bars : !ttg.memdesc<1x1xi64, #bar, #ttg.shared_memory, mutable>
  %c0 = arith.constant 0 : i32
  %b0 = ttg.memdesc_index %bars[%c0] : !ttg.memdesc<1x1xi64, #bar, #ttg.shared_memory, mutable> -> !ttg.memdesc<1xi64, #bar, #ttg.shared_memory, mutable>
  triton_ext_onchip.tma_copy %da[%c0, %c0] -> %a, %b0, %p : !tt.tensordesc<128x64xf16>, !ttg.memdesc<1xi64, #bar, #ttg.shared_memory, mutable>, !ttg.memdesc<128x64xf16, #shared, #ttg.shared_memory, mutable>
  ttng.wait_barrier %b0, %c0, %p : !ttg.memdesc<1xi64, #bar, #ttg.shared_memory, mutable>
  tt.return
}
