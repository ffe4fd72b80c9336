// onchip_check_expect's hazard errors (issue 31), one case per chunk: a read of a buffer before
// the wait for its copy (copy_tma, copy_async), and an overwrite of a buffer that an mma still in
// flight (also from the previous iteration of a loop) or a store_tma not waited for reads.
// RUN: %opt %s -split-input-file -verify-diagnostics --pass onchip_check_expect

#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>

tt.func @read_before_tma_wait(%d: !tt.tensordesc<64x64xf16>, %bar: !ttg.memdesc<1xi64, #bar, #smem, mutable>, %p: i1, %c0: i32) -> tensor<64x64xf16> {
  %ring = ttg.local_alloc : () -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
  %buf = ttg.memdesc_index %ring[%c0] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  ttng.barrier_expect %bar, 8192, %p : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  // expected-note @below {{the copy into the buffer}}
  triton_ext_onchip.tma_copy %d[%c0, %c0] -> %buf, %bar, %p : !tt.tensordesc<64x64xf16>, !ttg.memdesc<1xi64, #bar, #smem, mutable>, !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  // expected-error @below {{triton_ext_onchip: this reads a buffer before the wait for the copy_tma into it at line 15: it may read stale data; wait on its barrier first (oc.wait(bar, phase))}}
  %x = ttg.local_load %buf : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16>
  ttng.wait_barrier %bar, %c0, %p : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  tt.return %x : tensor<64x64xf16>
}

// -----

#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>

tt.func @read_before_wait_copies(%ptrs: tensor<64x64x!tt.ptr<f16>>, %c0: i32) -> tensor<64x64xf16> {
  %ring = ttg.local_alloc : () -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
  %buf = ttg.memdesc_index %ring[%c0] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  %v = triton_ext_onchip.view %buf {purpose = "copy"} : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64x!tt.ptr<f16>>
  %l = tt.load %ptrs : tensor<64x64x!tt.ptr<f16>>
  // expected-note @below {{the copy into the buffer}}
  tt.store %v, %l : tensor<64x64x!tt.ptr<f16>>
  %g0 = ttg.async_commit_group
  %g1 = ttg.async_commit_group
  %w = ttg.async_wait {num = 2 : i32, triton_ext_onchip.pending = 2 : i32}
  // expected-error @below {{triton_ext_onchip: this reads a buffer before the wait for the copy_async into it at line 34: it may read stale data; wait for its group first (oc.wait_copies(1) or fewer)}}
  %x = ttg.local_load %buf : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16>
  tt.return %x : tensor<64x64xf16>
}

// -----

#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>

tt.func @overwrite_in_flight(%d: !tt.tensordesc<64x64xf16>, %bar: !ttg.memdesc<1xi64, #bar, #smem, mutable>, %p: i1, %c0: i32, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %a = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  %b = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  %va = triton_ext_onchip.mma_operand %a {pending = 1 : i32} : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16>
  %vb = triton_ext_onchip.mma_operand %b {pending = 1 : i32} : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16>
  // expected-note @below {{the mma that reads the buffer}}
  %r = tt.dot %va, %vb, %acc : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
  ttng.barrier_expect %bar, 8192, %p : !ttg.memdesc<1xi64, #bar, #smem, mutable>
  // expected-error @below {{triton_ext_onchip: this overwrites a buffer that the mma at line 55 may still be reading: it was issued with pending=1 and no wait since lets it finish; wait first (oc.mma_wait(acc, 0), or an mma with a smaller pending) or overwrite the buffer of an mma that has finished}}
  triton_ext_onchip.tma_copy %d[%c0, %c0] -> %b, %bar, %p : !tt.tensordesc<64x64xf16>, !ttg.memdesc<1xi64, #bar, #smem, mutable>, !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  tt.return %r : tensor<64x64xf32>
}

// -----

#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>

tt.func @overwrite_in_flight_next_iteration(%ptrs: tensor<64x64x!tt.ptr<f16>>, %n: i32, %c0: i32, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c1 = arith.constant 1 : i32
  %a = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  %b = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  %va = triton_ext_onchip.mma_operand %a {pending = 1 : i32} : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16>
  %vb = triton_ext_onchip.mma_operand %b {pending = 1 : i32} : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16>
  %view = triton_ext_onchip.view %a {purpose = "store"} : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64x!tt.ptr<f16>>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%c = %acc) -> (tensor<64x64xf32>) : i32 {
    %l = tt.load %ptrs : tensor<64x64x!tt.ptr<f16>>
    // expected-error @below {{triton_ext_onchip: this overwrites a buffer that the mma at line 80 (previous iteration) may still be reading}}
    tt.store %view, %l : tensor<64x64x!tt.ptr<f16>>
    // expected-note @below {{the mma that reads the buffer}}
    %d = tt.dot %va, %vb, %c : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  tt.return %r : tensor<64x64xf32>
}

// -----

#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>

tt.func @overwrite_before_store_wait(%d: !tt.tensordesc<64x64xf16>, %v: tensor<64x64xf16>, %c0: i32) {
  %a = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  %view = triton_ext_onchip.view %a {purpose = "store"} : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64x!tt.ptr<f16>>
  tt.store %view, %v : tensor<64x64x!tt.ptr<f16>>
  // expected-note @below {{the store_tma that reads the buffer}}
  triton_ext_onchip.tma_store %d[%c0, %c0] from %a : !tt.tensordesc<64x64xf16>, !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  // expected-error @below {{triton_ext_onchip: this overwrites a buffer that the store_tma at line 97 may still be reading; oc.store_wait(0) first}}
  tt.store %view, %v : tensor<64x64x!tt.ptr<f16>>
  ttng.async_tma_store_wait {pendings = 0 : i32}
  tt.return
}
