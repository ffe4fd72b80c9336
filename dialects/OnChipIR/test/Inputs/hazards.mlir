#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
tt.func @read_before_tma_wait(%d: !tt.tensordesc<64x64xf16>, %bar: !ttg.memdesc<1xi64, #bar, #smem, mutable>, %p: i1, %c0: i32) -> tensor<64x64xf16> {
  %ring = ttg.local_alloc : () -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
  %buf = ttg.memdesc_index %ring[%c0] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  ttng.barrier_expect %bar, 8192, %p : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  triton_ext_onchip.tma_copy %d[%c0, %c0] -> %buf, %bar, %p : !tt.tensordesc<64x64xf16>, !ttg.memdesc<1xi64, #bar, #smem, mutable>, !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  %x = ttg.local_load %buf : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16>
  ttng.wait_barrier %bar, %c0, %p : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  tt.return %x : tensor<64x64xf16>
}
tt.func @read_before_wait_copies(%ptrs: tensor<64x64x!tt.ptr<f16>>, %c0: i32) -> tensor<64x64xf16> {
  %ring = ttg.local_alloc : () -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
  %buf = ttg.memdesc_index %ring[%c0] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  %v = triton_ext_onchip.view %buf {purpose = "copy"} : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64x!tt.ptr<f16>>
  %l = tt.load %ptrs : tensor<64x64x!tt.ptr<f16>>
  tt.store %v, %l : tensor<64x64x!tt.ptr<f16>>
  %g0 = ttg.async_commit_group
  %g1 = ttg.async_commit_group
  %w = ttg.async_wait {num = 2 : i32, triton_ext_onchip.pending = 2 : i32}
  %x = ttg.local_load %buf : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16>
  tt.return %x : tensor<64x64xf16>
}
tt.func @overwrite_in_flight(%d: !tt.tensordesc<64x64xf16>, %bar: !ttg.memdesc<1xi64, #bar, #smem, mutable>, %p: i1, %c0: i32, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %a = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  %b = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  %va = triton_ext_onchip.mma_operand %a {pending = 1 : i32} : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16>
  %vb = triton_ext_onchip.mma_operand %b {pending = 1 : i32} : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16>
  %r = tt.dot %va, %vb, %acc : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
  ttng.barrier_expect %bar, 8192, %p : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  triton_ext_onchip.tma_copy %d[%c0, %c0] -> %b, %bar, %p : !tt.tensordesc<64x64xf16>, !ttg.memdesc<1xi64, #bar, #smem, mutable>, !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  tt.return %r : tensor<64x64xf32>
}
tt.func @overwrite_in_flight_next_iteration(%ptrs: tensor<64x64x!tt.ptr<f16>>, %n: i32, %c0: i32, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c1 = arith.constant 1 : i32
  %a = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  %b = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  %va = triton_ext_onchip.mma_operand %a {pending = 1 : i32} : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16>
  %vb = triton_ext_onchip.mma_operand %b {pending = 1 : i32} : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16>
  %view = triton_ext_onchip.view %a {purpose = "store"} : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64x!tt.ptr<f16>>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%c = %acc) -> (tensor<64x64xf32>) : i32 {
    %l = tt.load %ptrs : tensor<64x64x!tt.ptr<f16>>
    tt.store %view, %l : tensor<64x64x!tt.ptr<f16>>
    %d = tt.dot %va, %vb, %c : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  tt.return %r : tensor<64x64xf32>
}
tt.func @overwrite_before_store_wait(%d: !tt.tensordesc<64x64xf16>, %v: tensor<64x64xf16>, %c0: i32) {
  %a = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  %view = triton_ext_onchip.view %a {purpose = "store"} : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64x!tt.ptr<f16>>
  tt.store %view, %v : tensor<64x64x!tt.ptr<f16>>
  triton_ext_onchip.tma_store %d[%c0, %c0] from %a : !tt.tensordesc<64x64xf16>, !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  tt.store %view, %v : tensor<64x64x!tt.ptr<f16>>
  ttng.async_tma_store_wait {pendings = 0 : i32}
  tt.return
}
