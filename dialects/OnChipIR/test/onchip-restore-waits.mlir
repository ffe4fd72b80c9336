// onchip_restore_waits, after Triton's pipeliner: the author's wait counts come back, and a
// wait-for-all the pipeliner put behind an OnChip wgmma goes; nothing else is touched.
// RUN: %opt %s -split-input-file --pass onchip_restore_waits --no-debug-info | FileCheck %s

#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 128, 16]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {

// CHECK-LABEL: tt.func @waits
// CHECK: ttg.async_wait {num = 1 : i32, triton_ext_onchip.pending = 1 : i32}
// A wait of Triton's own (no attribute) keeps its count.
// CHECK: ttg.async_wait {num = 0 : i32}
tt.func @waits() {
  %0 = ttg.async_wait {num = 0 : i32, triton_ext_onchip.pending = 1 : i32}
  %1 = ttg.async_wait {num = 0 : i32}
  tt.return
}
}

// -----

#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 128, 16]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {

// CHECK-LABEL: tt.func @mma_waits
// CHECK: %[[D:.*]] = ttng.warp_group_dot %arg0, %arg1, %arg2 {isAsync = true, triton_ext_onchip.mma}
// CHECK-NOT: pendings = 0
// CHECK: %[[W:.*]] = ttng.warp_group_dot_wait %[[D]] {pendings = 1 : i32, triton_ext_onchip.mma}
// CHECK-NEXT: %[[T:.*]] = ttng.warp_group_dot %arg0, %arg1, %[[W]] {isAsync = true}
// CHECK-NEXT: %{{.*}}:3 = ttng.warp_group_dot_wait %[[T]], %arg0, %arg1 {pendings = 0 : i32}
tt.func @mma_waits(%a: !ttg.memdesc<128x64xf16, #shared, #smem, mutable>, %b: !ttg.memdesc<64x128xf16, #shared, #smem, mutable>, %c: tensor<128x128xf32, #mma>) {
  %d = ttng.warp_group_dot %a, %b, %c {isAsync = true, triton_ext_onchip.mma} : !ttg.memdesc<128x64xf16, #shared, #smem, mutable> * !ttg.memdesc<64x128xf16, #shared, #smem, mutable> -> tensor<128x128xf32, #mma>
  %p:3 = ttng.warp_group_dot_wait %d, %a, %b {pendings = 0 : i32} : tensor<128x128xf32, #mma>, !ttg.memdesc<128x64xf16, #shared, #smem, mutable>, !ttg.memdesc<64x128xf16, #shared, #smem, mutable>
  %w = ttng.warp_group_dot_wait %p#0 {pendings = 1 : i32, triton_ext_onchip.mma} : tensor<128x128xf32, #mma>
  // A wgmma Triton made itself keeps the wait the pipeliner gave it.
  %t = ttng.warp_group_dot %a, %b, %w {isAsync = true} : !ttg.memdesc<128x64xf16, #shared, #smem, mutable> * !ttg.memdesc<64x128xf16, #shared, #smem, mutable> -> tensor<128x128xf32, #mma>
  %q:3 = ttng.warp_group_dot_wait %t, %a, %b {pendings = 0 : i32} : tensor<128x128xf32, #mma>, !ttg.memdesc<128x64xf16, #shared, #smem, mutable>, !ttg.memdesc<64x128xf16, #shared, #smem, mutable>
  tt.return
}
}
