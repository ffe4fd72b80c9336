// onchip_prune after onchip_lower: an OnChip allocation (triton_ext_onchip.ring) that is only
// written, or whose barriers are only armed, goes with its writes and views; anything that may
// be observed stays (without the mark), and allocations OnChip did not make are never touched.
// RUN: %opt %s -split-input-file --pass onchip_prune --no-debug-info | FileCheck %s
// RUN: env MLIR_ENABLE_DIAGNOSTICS=warnings %opt %s -split-input-file --pass 'onchip_prune{warn-unused=true}' --no-debug-info 2>&1 >/dev/null | FileCheck %s --check-prefix=WARN

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {

// Written by a store and a cp.async, never read: all of it goes.
// CHECK-LABEL: tt.func @unread_buffer
// CHECK-NOT: ttg.local_alloc
// CHECK-NOT: ttg.memdesc_index
// CHECK-NOT: ttg.local_store
// CHECK-NOT: ttg.async_copy_global_to_local
// CHECK: ttg.async_commit_group
// CHECK-NEXT: ttg.async_wait
// CHECK-NEXT: tt.return
// WARN: warning: triton_ext_onchip: nothing reads these buffers; removed with the 2 op(s) that write them
tt.func @unread_buffer(%v: tensor<64x64xf16, #blocked>, %p: tensor<64x64x!tt.ptr<f16>, #blocked>) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %ring = ttg.local_alloc {triton_ext_onchip.ring} : () -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
  %b0 = ttg.memdesc_index %ring[%c0] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  %b1 = ttg.memdesc_index %ring[%c1] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  ttg.local_store %v, %b0 : tensor<64x64xf16, #blocked> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  %t = ttg.async_copy_global_to_local %p, %b1 : tensor<64x64x!tt.ptr<f16>, #blocked> -> <64x64xf16, #shared, #smem, mutable>
  // The commit group stays (empty now), so wait counts keep their meaning.
  %g = ttg.async_commit_group
  %w = ttg.async_wait {num = 0 : i32}
  tt.return
}
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {

// Barriers initialised and arrived on, never waited on: removed.
// CHECK-LABEL: tt.func @unwaited_barriers
// CHECK-NOT: ttg.local_alloc
// CHECK-NOT: ttng.init_barrier
// CHECK-NOT: ttng.arrive_barrier
// CHECK-NOT: ttng.barrier_expect
// CHECK: tt.return
// WARN: warning: triton_ext_onchip: nothing waits on these barriers; removed with the 4 op(s) that arm them
tt.func @unwaited_barriers(%pred: i1) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %bars = ttg.local_alloc {triton_ext_onchip.ring} : () -> !ttg.memdesc<2x1xi64, #bar, #smem, mutable>
  %b0 = ttg.memdesc_index %bars[%c0] : !ttg.memdesc<2x1xi64, #bar, #smem, mutable> -> !ttg.memdesc<1xi64, #bar, #smem, mutable>
  ttng.init_barrier %b0, 1 : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  %b1 = ttg.memdesc_index %bars[%c1] : !ttg.memdesc<2x1xi64, #bar, #smem, mutable> -> !ttg.memdesc<1xi64, #bar, #smem, mutable>
  ttng.init_barrier %b1, 1 : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  ttng.arrive_barrier %b0, 1, %pred : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  ttng.barrier_expect %b1, 128, %pred : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  tt.return
}
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {

// Read back (local_load), waited on, or written by TMA: all stay.
// CHECK-LABEL: tt.func @observed
// CHECK: ttg.local_alloc : () -> !ttg.memdesc<1x
// CHECK: ttg.local_store
// CHECK: ttg.local_load
// CHECK: ttg.local_alloc : () -> !ttg.memdesc<1x
// CHECK: ttng.wait_barrier
// CHECK: ttg.local_alloc : () -> !ttg.memdesc<1x
// CHECK: ttng.async_tma_copy_global_to_local
// WARN-NOT: warning
tt.func @observed(%v: tensor<64x64xf16, #blocked>, %desc: !tt.tensordesc<64x64xf16, #shared>, %pred: i1) -> tensor<64x64xf16, #blocked> {
  %c0 = arith.constant 0 : i32
  %ring = ttg.local_alloc {triton_ext_onchip.ring} : () -> !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable>
  %b = ttg.memdesc_index %ring[%c0] : !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  ttg.local_store %v, %b : tensor<64x64xf16, #blocked> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  %r = ttg.local_load %b : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #blocked>
  %bars = ttg.local_alloc {triton_ext_onchip.ring} : () -> !ttg.memdesc<1x1xi64, #bar, #smem, mutable>
  %bar = ttg.memdesc_index %bars[%c0] : !ttg.memdesc<1x1xi64, #bar, #smem, mutable> -> !ttg.memdesc<1xi64, #bar, #smem, mutable>
  ttng.init_barrier %bar, 1 : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  ttng.barrier_expect %bar, 8192, %pred : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  ttng.wait_barrier %bar, %c0, %pred : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  // Never read, but TMA completes on a barrier with it: kept.
  %tring = ttg.local_alloc {triton_ext_onchip.ring} : () -> !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable>
  %tb = ttg.memdesc_index %tring[%c0] : !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  ttng.async_tma_copy_global_to_local %desc[%c0, %c0] %tb, %bar, %pred : !tt.tensordesc<64x64xf16, #shared>, !ttg.memdesc<1xi64, #bar, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  tt.return %r : tensor<64x64xf16, #blocked>
}
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {

// Passed on (here: carried by a loop) may be read there: kept. An allocation without the
// OnChip mark is never touched, even if only written.
// CHECK-LABEL: tt.func @escapes_or_foreign
// CHECK: ttg.local_alloc : () -> !ttg.memdesc<1x
// CHECK: scf.for
// CHECK: ttg.local_alloc : () -> !ttg.memdesc<64x64xf16
// CHECK: ttg.local_store
tt.func @escapes_or_foreign(%v: tensor<64x64xf16, #blocked>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %ring = ttg.local_alloc {triton_ext_onchip.ring} : () -> !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable>
  %b = ttg.memdesc_index %ring[%c0] : !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %b) -> (!ttg.memdesc<64x64xf16, #shared, #smem, mutable>) : i32 {
    ttg.local_store %v, %x : tensor<64x64xf16, #blocked> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    scf.yield %x : !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  }
  %other = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  ttg.local_store %v, %other : tensor<64x64xf16, #blocked> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  tt.return
}
}
