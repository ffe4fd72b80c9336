// onchip_check_expect: the bytes an expect announces for a barrier's phase must equal the
// bytes of the TMA copies that complete on it (checked where one block shows the whole phase).
// RUN: %opt %s -split-input-file --pass onchip_check_expect --no-debug-info | FileCheck %s

// The mismatches (errors at the expect) are in onchip-check-expect-invalid.mlir.

#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>

// A: 128x64 f16 (16 KiB) and B: 64x128 f16 (16 KiB) on one barrier, 32 KiB announced. The pass
// changes nothing.
// CHECK-LABEL: tt.func @matching
// CHECK-NEXT: ttng.barrier_expect %arg4, 32768
// CHECK-NEXT: triton_ext_onchip.tma_copy
// CHECK-NEXT: triton_ext_onchip.tma_copy
tt.func @matching(%da: !tt.tensordesc<128x64xf16>, %db: !tt.tensordesc<64x128xf16>, %a: !ttg.memdesc<128x64xf16, #shared, #smem, mutable>, %b: !ttg.memdesc<64x128xf16, #shared, #smem, mutable>, %bar: !ttg.memdesc<1xi64, #bar, #smem, mutable>, %p: i1, %c0: i32) {
  ttng.barrier_expect %bar, 32768, %p : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  triton_ext_onchip.tma_copy %da[%c0, %c0] -> %a, %bar, %p : !tt.tensordesc<128x64xf16>, !ttg.memdesc<1xi64, #bar, #smem, mutable>, !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
  triton_ext_onchip.tma_copy %db[%c0, %c0] -> %b, %bar, %p : !tt.tensordesc<64x128xf16>, !ttg.memdesc<1xi64, #bar, #smem, mutable>, !ttg.memdesc<64x128xf16, #shared, #smem, mutable>
  ttng.wait_barrier %bar, %c0, %p : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  tt.return
}

// -----

#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>

// Two expects add up (16 KiB + 16 KiB), and a copy before any expect in the block belongs to a
// phase announced elsewhere (it is not counted).
// CHECK-LABEL: tt.func @summed
tt.func @summed(%da: !tt.tensordesc<128x64xf16>, %a: !ttg.memdesc<128x64xf16, #shared, #smem, mutable>, %bar: !ttg.memdesc<1xi64, #bar, #smem, mutable>, %p: i1, %c0: i32) {
  triton_ext_onchip.tma_copy %da[%c0, %c0] -> %a, %bar, %p : !tt.tensordesc<128x64xf16>, !ttg.memdesc<1xi64, #bar, #smem, mutable>, !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
  ttng.barrier_expect %bar, 16384, %p : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  ttng.barrier_expect %bar, 16384, %p : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  triton_ext_onchip.tma_copy %da[%c0, %c0] -> %a, %bar, %p : !tt.tensordesc<128x64xf16>, !ttg.memdesc<1xi64, #bar, #smem, mutable>, !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
  triton_ext_onchip.tma_copy %da[%c0, %c0] -> %a, %bar, %p : !tt.tensordesc<128x64xf16>, !ttg.memdesc<1xi64, #bar, #smem, mutable>, !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
  tt.return
}

// -----

#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>

// Not visible, so not checked: a copy under another predicate, and a phase a nested region
// may add to.
// CHECK-LABEL: tt.func @not_visible
tt.func @not_visible(%da: !tt.tensordesc<128x64xf16>, %a: !ttg.memdesc<128x64xf16, #shared, #smem, mutable>, %bar: !ttg.memdesc<1xi64, #bar, #smem, mutable>, %bar2: !ttg.memdesc<1xi64, #bar, #smem, mutable>, %p: i1, %q: i1, %c0: i32) {
  ttng.barrier_expect %bar, 32768, %p : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  triton_ext_onchip.tma_copy %da[%c0, %c0] -> %a, %bar, %q : !tt.tensordesc<128x64xf16>, !ttg.memdesc<1xi64, #bar, #smem, mutable>, !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
  ttng.wait_barrier %bar, %c0, %p : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  ttng.barrier_expect %bar2, 32768, %p : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  triton_ext_onchip.tma_copy %da[%c0, %c0] -> %a, %bar2, %p : !tt.tensordesc<128x64xf16>, !ttg.memdesc<1xi64, #bar, #smem, mutable>, !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
  scf.if %q {
    triton_ext_onchip.tma_copy %da[%c0, %c0] -> %a, %bar2, %p : !tt.tensordesc<128x64xf16>, !ttg.memdesc<1xi64, #bar, #smem, mutable>, !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
  }
  tt.return
}
