// onchip_lower on the IR convert-triton-to-tritongpu and coalesce leave for kernels written with
// triton_ext_onchip: every carrier becomes the TritonGPU / TritonNvidiaGPU op it stands for, and
// nothing of the dialect is left.
// RUN: %opt %s -split-input-file --pass onchip_lower --no-debug-info | FileCheck %s
// CHECK-NOT: triton_ext_onchip.view
// CHECK-NOT: triton_ext_onchip.mma_operand

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#shared_t = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = true, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {

// A read with no layout yet is loaded straight into the layout its user asked for, at the
// read's place (before the store that follows it in program order).
// CHECK-LABEL: tt.func @read
// CHECK: %[[V:.*]] = ttg.local_load %{{.*}} : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #blocked{{[0-9]*}}>
// CHECK-NEXT: ttg.local_store %{{.*}}, %{{.*}}
// CHECK-NEXT: tt.store %{{.*}}, %[[V]] : tensor<64x64x!tt.ptr<f16>, #blocked{{[0-9]*}}>
// CHECK-NOT: ttg.convert_layout
tt.func @read(%buf: !ttg.memdesc<64x64xf16, #shared, #smem, mutable>, %p: tensor<64x64x!tt.ptr<f16>, #blocked>, %z: tensor<64x64xf16, #blocked>) {
  %0 = ttg.local_load %buf : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16>
  ttg.local_store %z, %buf : tensor<64x64xf16, #blocked> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  %1 = ttg.convert_layout %0 : tensor<64x64xf16> -> tensor<64x64xf16, #blocked>
  tt.store %p, %1 : tensor<64x64x!tt.ptr<f16>, #blocked>
  tt.return
}
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#shared_t = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = true, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {

// write(buf, v): the store through the view is a local_store of the value as it is.
// CHECK-LABEL: tt.func @write
// CHECK-NEXT: ttg.local_store %arg1, %arg0 : tensor<64x64xf16, #blocked{{[0-9]*}}> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
// CHECK-NEXT: tt.return
tt.func @write(%buf: !ttg.memdesc<64x64xf16, #shared, #smem, mutable>, %v: tensor<64x64xf16, #blocked1>) {
  %0 = triton_ext_onchip.view %buf {purpose = "store"} : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64x!tt.ptr<f16>>
  %1 = ttg.convert_layout %0 : tensor<64x64x!tt.ptr<f16>> -> tensor<64x64x!tt.ptr<f16>, #blocked1>
  tt.store %1, %v : tensor<64x64x!tt.ptr<f16>, #blocked1>
  tt.return
}
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#shared_t = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = true, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {

// copy_async(buf, p, mask): the carrier load and store become one cp.async with the load's
// (coalesced) pointer layout, mask and zero fill; the carriers are gone.
// CHECK-LABEL: tt.func @copy
// CHECK-NEXT: %{{.*}} = ttg.async_copy_global_to_local %arg1, %arg0 mask %arg2 other %arg3 : tensor<64x64x!tt.ptr<f16>, #blocked{{[0-9]*}}> -> <64x64xf16, #shared, #smem, mutable>
// CHECK-NEXT: tt.return
tt.func @copy(%buf: !ttg.memdesc<64x64xf16, #shared, #smem, mutable>, %p: tensor<64x64x!tt.ptr<f16>, #blocked>, %m: tensor<64x64xi1, #blocked>, %o: tensor<64x64xf16, #blocked>) {
  %x = tt.load %p, %m, %o : tensor<64x64x!tt.ptr<f16>, #blocked>
  %0 = triton_ext_onchip.view %buf {purpose = "copy"} : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64x!tt.ptr<f16>>
  %1 = ttg.convert_layout %0 : tensor<64x64x!tt.ptr<f16>> -> tensor<64x64x!tt.ptr<f16>, #blocked>
  tt.store %1, %x : tensor<64x64x!tt.ptr<f16>, #blocked>
  tt.return
}
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#shared_t = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = true, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {

// mma(a, b, acc, pending=1) in a loop, then mma_wait(acc, 0): a fenced async wgmma on the
// buffers, a wait leaving one group running, the loop carrying the accumulator in the MMA
// layout (converted only at the loop's edges), and the final wait on the MMA-layout value.
// CHECK-LABEL: tt.func @mma_loop
// CHECK: %[[INIT:.*]] = ttg.convert_layout %arg2 : tensor<128x128xf32, #blocked{{[0-9]*}}> -> tensor<128x128xf32, #mma>
// CHECK: %[[LOOP:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (tensor<128x128xf32, #mma>)
// CHECK-NEXT: ttng.fence_async_shared {bCluster = false}
// CHECK-NEXT: %[[D:.*]] = ttng.warp_group_dot %arg0, %arg1, %[[ACC]] {isAsync = true, triton_ext_onchip.mma} : !ttg.memdesc<128x64xf16, #shared, #smem, mutable> * !ttg.memdesc<64x128xf16, #shared, #smem, mutable> -> tensor<128x128xf32, #mma>
// CHECK-NEXT: %[[W:.*]] = ttng.warp_group_dot_wait %[[D]] {pendings = 1 : i32, triton_ext_onchip.mma} : tensor<128x128xf32, #mma>
// CHECK-NEXT: scf.yield %[[W]] : tensor<128x128xf32, #mma>
// CHECK: %[[F:.*]] = ttng.warp_group_dot_wait %[[LOOP]] {pendings = 0 : i32, triton_ext_onchip.mma} : tensor<128x128xf32, #mma>
// CHECK-NEXT: %[[OUT:.*]] = ttg.convert_layout %[[F]] : tensor<128x128xf32, #mma> -> tensor<128x128xf32, #blocked{{[0-9]*}}>
// CHECK-NEXT: tt.return %[[OUT]]
tt.func @mma_loop(%a: !ttg.memdesc<128x64xf16, #shared, #smem, mutable>, %b: !ttg.memdesc<64x128xf16, #shared, #smem, mutable>, %init: tensor<128x128xf32, #blocked1>, %n: i32) -> tensor<128x128xf32, #blocked1> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<128x128xf32, #blocked1>) : i32 {
    %va = triton_ext_onchip.mma_operand %a {pending = 1 : i32} : !ttg.memdesc<128x64xf16, #shared, #smem, mutable> -> tensor<128x64xf16>
    %vb = triton_ext_onchip.mma_operand %b {pending = 1 : i32} : !ttg.memdesc<64x128xf16, #shared, #smem, mutable> -> tensor<64x128xf16>
    %ca = ttg.convert_layout %va : tensor<128x64xf16> -> tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #blocked1}>>
    %cb = ttg.convert_layout %vb : tensor<64x128xf16> -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #blocked1}>>
    %d = tt.dot %ca, %cb, %acc : tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #blocked1}>> * tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #blocked1}>> -> tensor<128x128xf32, #blocked1>
    scf.yield %d : tensor<128x128xf32, #blocked1>
  }
  %w = tt.elementwise_inline_asm "// triton_ext_onchip.mma_wait 0" {constraints = "=r,r", packed_element = 1 : i32, pure = false} %r : tensor<128x128xf32, #blocked1> -> tensor<128x128xf32, #blocked1>
  tt.return %w : tensor<128x128xf32, #blocked1>
}
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#shared_t = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = true, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {

// copy_tma: the kernel's descriptor argument takes the buffer's layout (the function type too),
// and the placeholder becomes Triton's TMA copy.
// CHECK-LABEL: tt.func @tma(%arg0: !tt.tensordesc<128x64xf16, #shared>
// CHECK-NEXT: ttng.async_tma_copy_global_to_local %arg0[%arg3, %arg3] %arg2, %arg1, %arg4 : !tt.tensordesc<128x64xf16, #shared>, !ttg.memdesc<1xi64, #{{.*}}, #smem, mutable> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
tt.func @tma(%desc: !tt.tensordesc<128x64xf16>, %bar: !ttg.memdesc<1xi64, #bar, #ttg.shared_memory, mutable>, %buf: !ttg.memdesc<128x64xf16, #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>, #ttg.shared_memory, mutable>, %i: i32, %p: i1) {
  triton_ext_onchip.tma_copy %desc[%i, %i] -> %buf, %bar, %p : !tt.tensordesc<128x64xf16>, !ttg.memdesc<1xi64, #bar, #ttg.shared_memory, mutable>, !ttg.memdesc<128x64xf16, #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>, #ttg.shared_memory, mutable>
  tt.return
}
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#shared_t = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = true, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {

// Ping-pong (issue 31): a split worker with as many warps as the kernel (4 here) is a second
// consumer warp group; its mma is lowered like the default partition's (MMA layout for 4 warps).
// CHECK-LABEL: tt.func @mma_in_a_consumer_partition
// CHECK: partition0(%{{.*}}) num_warps(4)
// CHECK: ttng.warp_group_dot %{{.*}}, %{{.*}}, %{{.*}} {isAsync = true, triton_ext_onchip.mma} : !ttg.memdesc<128x64xf16, #shared, #smem, mutable> * !ttg.memdesc<64x128xf16, #shared, #smem, mutable> -> tensor<128x128xf32, #mma>
// CHECK: ttng.warp_group_dot_wait %{{.*}} {pendings = 0 : i32, triton_ext_onchip.mma}
tt.func @mma_in_a_consumer_partition(%a: !ttg.memdesc<128x64xf16, #shared, #smem, mutable>, %b: !ttg.memdesc<64x128xf16, #shared, #smem, mutable>, %p: tensor<128x128x!tt.ptr<f32>, #blocked1>) {
  ttg.warp_specialize(%a, %b, %p)
  default {
    ttg.warp_yield
  }
  partition0(%pa: !ttg.memdesc<128x64xf16, #shared, #smem, mutable>, %pb: !ttg.memdesc<64x128xf16, #shared, #smem, mutable>, %pp: tensor<128x128x!tt.ptr<f32>, #blocked1>) num_warps(4) {
    %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #blocked1>
    %va = triton_ext_onchip.mma_operand %pa {pending = 0 : i32} : !ttg.memdesc<128x64xf16, #shared, #smem, mutable> -> tensor<128x64xf16>
    %vb = triton_ext_onchip.mma_operand %pb {pending = 0 : i32} : !ttg.memdesc<64x128xf16, #shared, #smem, mutable> -> tensor<64x128xf16>
    %ca = ttg.convert_layout %va : tensor<128x64xf16> -> tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #blocked1}>>
    %cb = ttg.convert_layout %vb : tensor<64x128xf16> -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #blocked1}>>
    %d = tt.dot %ca, %cb, %zero : tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #blocked1}>> * tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #blocked1}>> -> tensor<128x128xf32, #blocked1>
    tt.store %pp, %d : tensor<128x128x!tt.ptr<f32>, #blocked1>
    ttg.warp_return
  } : (!ttg.memdesc<128x64xf16, #shared, #smem, mutable>, !ttg.memdesc<64x128xf16, #shared, #smem, mutable>, tensor<128x128x!tt.ptr<f32>, #blocked1>) -> ()
  tt.return
}

// Persistent tile scheduling (issue 31): an outer loop over tiles around the k loop; the k loop
// carries the accumulator in the MMA layout, each tile's result goes out through the C buffer
// and a TMA store after waiting for the previous tile's store to read it.
// CHECK-LABEL: tt.func @persistent_tiles
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}}  : i32 {
// CHECK: scf.for {{.*}} -> (tensor<128x128xf32, #mma>)
// CHECK: ttng.warp_group_dot_wait %{{.*}} {pendings = 1 : i32, triton_ext_onchip.mma}
// CHECK: ttng.warp_group_dot_wait %{{.*}} {pendings = 0 : i32, triton_ext_onchip.mma}
// CHECK: ttng.async_tma_store_wait {pendings = 0 : i32, read_only}
// CHECK-NEXT: ttg.local_store
// CHECK-NEXT: ttng.fence_async_shared {bCluster = false}
// CHECK-NEXT: ttng.async_tma_copy_local_to_global %arg2[%{{.*}}, %{{.*}}] %arg3
tt.func @persistent_tiles(%a: !ttg.memdesc<128x64xf16, #shared, #smem, mutable>, %b: !ttg.memdesc<64x128xf16, #shared, #smem, mutable>, %desc: !tt.tensordesc<128x128xf16>, %c: !ttg.memdesc<128x128xf16, #shared, #smem, mutable>, %first: i32, %tiles: i32, %step: i32, %k: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #blocked1>
  scf.for %t = %first to %tiles step %step : i32 {
    %r = scf.for %i = %c0 to %k step %c1 iter_args(%acc = %zero) -> (tensor<128x128xf32, #blocked1>) : i32 {
      %va = triton_ext_onchip.mma_operand %a {pending = 1 : i32} : !ttg.memdesc<128x64xf16, #shared, #smem, mutable> -> tensor<128x64xf16>
      %vb = triton_ext_onchip.mma_operand %b {pending = 1 : i32} : !ttg.memdesc<64x128xf16, #shared, #smem, mutable> -> tensor<64x128xf16>
      %ca = ttg.convert_layout %va : tensor<128x64xf16> -> tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #blocked1}>>
      %cb = ttg.convert_layout %vb : tensor<64x128xf16> -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #blocked1}>>
      %d = tt.dot %ca, %cb, %acc : tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #blocked1}>> * tensor<64x128xf16, #ttg.dot_op<{opIdx = 1, parent = #blocked1}>> -> tensor<128x128xf32, #blocked1>
      scf.yield %d : tensor<128x128xf32, #blocked1>
    }
    %w = tt.elementwise_inline_asm "// triton_ext_onchip.mma_wait 0" {constraints = "=r,r", packed_element = 1 : i32, pure = false} %r : tensor<128x128xf32, #blocked1> -> tensor<128x128xf32, #blocked1>
    %h = arith.truncf %w : tensor<128x128xf32, #blocked1> to tensor<128x128xf16, #blocked1>
    ttng.async_tma_store_wait {pendings = 0 : i32, read_only}
    %v = triton_ext_onchip.view %c {purpose = "store"} : !ttg.memdesc<128x128xf16, #shared, #smem, mutable> -> tensor<128x128x!tt.ptr<f16>>
    %cv = ttg.convert_layout %v : tensor<128x128x!tt.ptr<f16>> -> tensor<128x128x!tt.ptr<f16>, #blocked1>
    tt.store %cv, %h : tensor<128x128x!tt.ptr<f16>, #blocked1>
    triton_ext_onchip.tma_store %desc[%t, %t] from %c : !tt.tensordesc<128x128xf16>, !ttg.memdesc<128x128xf16, #shared, #smem, mutable>
  }
  tt.return
}

// store_tma: the descriptor takes the buffer's layout too, and the store is preceded by the
// proxy fence (the buffer may have been written from registers); store_wait is Triton's own op.
// CHECK-LABEL: tt.func @tma_store(%arg0: !tt.tensordesc<128x64xf16, #shared>
// CHECK-NEXT: ttng.fence_async_shared {bCluster = false}
// CHECK-NEXT: ttng.async_tma_copy_local_to_global %arg0[%arg2, %arg2] %arg1 : !tt.tensordesc<128x64xf16, #shared>, !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
// CHECK-NEXT: ttng.async_tma_store_wait {pendings = 0 : i32, read_only}
tt.func @tma_store(%desc: !tt.tensordesc<128x64xf16>, %buf: !ttg.memdesc<128x64xf16, #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>, #ttg.shared_memory, mutable>, %i: i32) {
  triton_ext_onchip.tma_store %desc[%i, %i] from %buf : !tt.tensordesc<128x64xf16>, !ttg.memdesc<128x64xf16, #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>, #ttg.shared_memory, mutable>
  ttng.async_tma_store_wait {pendings = 0 : i32, read_only}
  tt.return
}

// mma(q, trans(k), acc) on buffers only TMA writes (attention's S = Q K^T): the transposed view
// shares its ring's allocation, so it is still TMA-only and needs no proxy fence.
// CHECK-LABEL: tt.func @mma_trans_tma_only
// CHECK-NOT: ttng.fence_async_shared
// CHECK: ttng.warp_group_dot %{{.*}}, %{{.*}}, %{{.*}} {isAsync = true, triton_ext_onchip.mma} : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> * !ttg.memdesc<64x64xf16, #{{.*}}, #smem, mutable>
// CHECK: tt.return
tt.func @mma_trans_tma_only(%desc: !tt.tensordesc<64x64xf16>, %bar: !ttg.memdesc<1xi64, #bar, #smem, mutable>, %i: i32, %p: i1, %acc: tensor<64x64xf32, #blocked1>) -> tensor<64x64xf32, #blocked1> {
  %qa = ttg.local_alloc : () -> !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable>
  %q = ttg.memdesc_index %qa[%i] : !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  %ring = ttg.local_alloc : () -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
  %k = ttg.memdesc_index %ring[%i] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  triton_ext_onchip.tma_copy %desc[%i, %i] -> %q, %bar, %p : !tt.tensordesc<64x64xf16>, !ttg.memdesc<1xi64, #bar, #smem, mutable>, !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  triton_ext_onchip.tma_copy %desc[%i, %i] -> %k, %bar, %p : !tt.tensordesc<64x64xf16>, !ttg.memdesc<1xi64, #bar, #smem, mutable>, !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  %kt = ttg.memdesc_trans %k {order = array<i32: 1, 0>} : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared_t, #smem, mutable>
  %va = triton_ext_onchip.mma_operand %q {pending = 0 : i32} : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16>
  %vb = triton_ext_onchip.mma_operand %kt {pending = 0 : i32} : !ttg.memdesc<64x64xf16, #shared_t, #smem, mutable> -> tensor<64x64xf16>
  %ca = ttg.convert_layout %va : tensor<64x64xf16> -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #blocked1}>>
  %cb = ttg.convert_layout %vb : tensor<64x64xf16> -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 1, parent = #blocked1}>>
  %d = tt.dot %ca, %cb, %acc : tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #blocked1}>> * tensor<64x64xf16, #ttg.dot_op<{opIdx = 1, parent = #blocked1}>> -> tensor<64x64xf32, #blocked1>
  tt.return %d : tensor<64x64xf32, #blocked1>
}
}
