// onchip_check_expect also reports, where one block shows them (issue 31): a read of a buffer
// before the wait for its copy (copy_tma: a wait on its barrier; copy_async: a wait_copies that
// covers its commit group), and an overwrite of a buffer that an mma still in flight or a
// store_tma not waited for reads (in a loop, also from the previous iteration for buffers
// defined outside it). Correct pipelines pass unchanged.
// RUN: %opt %s -split-input-file --pass onchip_check_expect --no-debug-info | FileCheck %s
// The hazards themselves are reported in onchip-check-hazards-invalid.mlir.

#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>

// The TMA pipeline of kernels.matmul_tma_kernel: stage kt % 2 is waited for and multiplied
// (pending=1) while stage (kt + 1) % 2 is refilled; a dynamic index that differs names another
// buffer. Then a read after its wait.
// CHECK-LABEL: tt.func @tma_pipeline
tt.func @tma_pipeline(%d: !tt.tensordesc<64x64xf16>, %n: i32, %p: i1, %acc: tensor<64x64xf32>) -> tensor<64x64xf16> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %ring = ttg.local_alloc : () -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
  %bars = ttg.local_alloc : () -> !ttg.memdesc<2x1xi64, #bar, #smem, mutable>
  %r = scf.for %kt = %c0 to %n step %c1 iter_args(%c = %acc) -> (tensor<64x64xf32>) : i32 {
    %s = arith.remsi %kt, %c2 : i32
    %kt1 = arith.addi %kt, %c1 : i32
    %ns = arith.remsi %kt1, %c2 : i32
    %bar = ttg.memdesc_index %bars[%s] : !ttg.memdesc<2x1xi64, #bar, #smem, mutable> -> !ttg.memdesc<1xi64, #bar, #smem, mutable>
    %buf = ttg.memdesc_index %ring[%s] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    ttng.wait_barrier %bar, %c0, %p : !ttg.memdesc<1xi64, #bar, #smem, mutable>
    %va = triton_ext_onchip.mma_operand %buf {pending = 1 : i32} : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16>
    %dd = tt.dot %va, %va, %c : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
    %nbar = ttg.memdesc_index %bars[%ns] : !ttg.memdesc<2x1xi64, #bar, #smem, mutable> -> !ttg.memdesc<1xi64, #bar, #smem, mutable>
    %nbuf = ttg.memdesc_index %ring[%ns] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    ttng.barrier_expect %nbar, 8192, %p : !ttg.memdesc<1xi64, #bar, #smem, mutable>
    triton_ext_onchip.tma_copy %d[%c0, %c0] -> %nbuf, %nbar, %p : !tt.tensordesc<64x64xf16>, !ttg.memdesc<1xi64, #bar, #smem, mutable>, !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    scf.yield %dd : tensor<64x64xf32>
  }
  %b0 = ttg.memdesc_index %bars[%c0] : !ttg.memdesc<2x1xi64, #bar, #smem, mutable> -> !ttg.memdesc<1xi64, #bar, #smem, mutable>
  %buf0 = ttg.memdesc_index %ring[%c0] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  ttng.barrier_expect %b0, 8192, %p : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  triton_ext_onchip.tma_copy %d[%c0, %c0] -> %buf0, %b0, %p : !tt.tensordesc<64x64xf16>, !ttg.memdesc<1xi64, #bar, #smem, mutable>, !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  ttng.wait_barrier %b0, %c0, %p : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  %x = ttg.local_load %buf0 : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16>
  tt.return %x : tensor<64x64xf16>
}

// -----

#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>

// cp.async: the copy's group is covered by wait_copies(0), and by wait_copies(1) once a newer
// group was committed; an mma that was waited for (pending=0) frees its buffers; a store_tma's
// buffer is rewritten after store_wait.
// CHECK-LABEL: tt.func @waited
tt.func @waited(%ptrs: tensor<64x64x!tt.ptr<f16>>, %d: !tt.tensordesc<64x64xf16>, %v: tensor<64x64xf16>, %acc: tensor<64x64xf32>) -> tensor<64x64xf16> {
  %c0 = arith.constant 0 : i32
  %a = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  %cp = triton_ext_onchip.view %a {purpose = "copy"} : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64x!tt.ptr<f16>>
  %st = triton_ext_onchip.view %a {purpose = "store"} : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64x!tt.ptr<f16>>
  %l = tt.load %ptrs : tensor<64x64x!tt.ptr<f16>>
  tt.store %cp, %l : tensor<64x64x!tt.ptr<f16>>
  %g0 = ttg.async_commit_group
  %g1 = ttg.async_commit_group
  %w = ttg.async_wait {num = 1 : i32, triton_ext_onchip.pending = 1 : i32}
  %x = ttg.local_load %a : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16>
  %va = triton_ext_onchip.mma_operand %a {pending = 0 : i32} : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16>
  %dd = tt.dot %va, %va, %acc : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
  tt.store %st, %v : tensor<64x64x!tt.ptr<f16>>
  triton_ext_onchip.tma_store %d[%c0, %c0] from %a : !tt.tensordesc<64x64xf16>, !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  ttng.async_tma_store_wait {pendings = 0 : i32}
  tt.store %st, %v : tensor<64x64x!tt.ptr<f16>>
  tt.return %x : tensor<64x64xf16>
}
