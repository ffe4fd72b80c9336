// RUN: %opt %s -split-input-file --pass 'nan_inf_check{cta-vote=false fast-path=reload}' --no-debug-info | FileCheck %s

// fast-path=reload (issue 18, row kernels): the clean path is one
// NaN-propagating max of the masked |value| (as fast-path=peak), and only a
// program whose maximum is non-finite reloads the lanes it has just stored, to
// count them and find the first one. The stored tile is not used after the
// reduction, so it is not live across it (fast-path=peak recounts from
// |value|: Liger RMS-norm forward 39 -> 47 registers; reload 39).

// CHECK-LABEL: tt.func @row_store
// CHECK:         tt.store %[[P:.*]], %[[X:[^,]*]], %[[M:[^ ]*]] :
// CHECK:         %[[ABS:.*]] = math.absf %[[X]]
// CHECK:         %[[SEL:.*]] = arith.select %[[M]], %[[ABS]], %{{.*}}
// CHECK:         %[[PEAK:.*]] = "tt.reduce"(%[[SEL]]) <{axis = 0 : i32}>
// CHECK:           arith.maximumf
// CHECK:         %[[FOUND:.*]] = arith.cmpf ueq, %[[PEAK]], %{{.*}} : bf16
// CHECK:         %{{.*}}:2 = scf.if %[[FOUND]] -> (i32, i32) {
// CHECK:           %[[AGAIN:.*]] = tt.load %[[P]], %[[M]] {isVolatile = true}
// CHECK:           %[[AABS:.*]] = math.absf %[[AGAIN]]
// CHECK:           %[[BAD:.*]] = arith.cmpf ueq, %[[AABS]], %{{.*}}
// CHECK:           arith.andi %[[BAD]], %[[M]]
// CHECK-NOT:       %[[ABS]]
// CHECK:         } else {
// CHECK:         scf.if
// CHECK:           tt.atomic_rmw add
// CHECK:         tt.return

#blocked = #ttg.blocked<{sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func @row_store(%p: tensor<4096x!tt.ptr<bf16>, #blocked>, %x: tensor<4096xbf16, #blocked>, %m: tensor<4096xi1, #blocked>) {
    tt.store %p, %x, %m : tensor<4096x!tt.ptr<bf16>, #blocked>
    tt.return
  }
}

// -----

// One element per thread (a reduced row): the count path, whose per-lane work
// is a few instructions (Liger's MoE gather: 40 registers with count, 48 with
// reload).
// CHECK-LABEL: tt.func @one_per_thread
// CHECK-NOT:     tt.load
// CHECK:         "tt.reduce"(%{{.*}}, %{{.*}}) <{axis = 0 : i32}>
// CHECK:         tt.return

#blocked = #ttg.blocked<{sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func @one_per_thread(%p: tensor<128x!tt.ptr<f32>, #blocked1>, %x: tensor<128xf32, #blocked1>) {
    tt.store %p, %x : tensor<128x!tt.ptr<f32>, #blocked1>
    tt.return
  }
}

// -----

// A store after a loop in its block (a GEMM epilogue): the count path; a
// reload would keep the store's pointer tile live across the reduction
// (torchao's scaled int8 GEMM: 128 registers with count, 142 with reload).
// CHECK-LABEL: tt.func @after_loop
// CHECK:         scf.for
// CHECK:         tt.store
// CHECK-NOT:     tt.load
// CHECK:         "tt.reduce"(%{{.*}}, %{{.*}}) <{axis = 0 : i32}>
// CHECK:         tt.return

#blocked = #ttg.blocked<{sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func @after_loop(%p: tensor<4096x!tt.ptr<f32>, #blocked>, %init: tensor<4096xf32, #blocked>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %init) -> (tensor<4096xf32, #blocked>) : i32 {
      %d = arith.addf %a, %a : tensor<4096xf32, #blocked>
      scf.yield %d : tensor<4096xf32, #blocked>
    }
    tt.store %p, %acc : tensor<4096x!tt.ptr<f32>, #blocked>
    tt.return
  }
}

// -----

// Not a tensor-of-pointers store (a scalar store): the count path as before.
// CHECK-LABEL: tt.func @scalar_store
// CHECK-NOT:     tt.load
// CHECK:         tt.return

#blocked = #ttg.blocked<{sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func @scalar_store(%p: !tt.ptr<f32>, %x: f32) {
    tt.store %p, %x : !tt.ptr<f32>
    tt.return
  }
}

// -----

// A store after a loop in the entry block (a GEMM's or attention's epilogue)
// takes the count path (main: reload's 2-D pointer tile costs more there).
// Its loop has no dot, so the records stay under `count > 0` (masked atomics
// without a branch are only for loops with a dot: nan-inf-check.mlir).
// CHECK-LABEL: tt.func @store_after_loop
// CHECK:         scf.for
// CHECK:         tt.store
// CHECK-NOT:     tt.load
// CHECK:         %[[R:.*]]:2 = "tt.reduce"(%{{.*}}, %{{.*}}) <{axis = 0 : i32}>
// CHECK:         %[[ANY:.*]] = arith.cmpi sgt, %[[R]]#0, %{{.*}} : i32
// CHECK-NEXT:    scf.if %[[ANY]] {
// CHECK:           tt.atomic_rmw max, relaxed, gpu, %{{.*}}, %{{.*}}, %true
// CHECK:         tt.return

#blocked = #ttg.blocked<{sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func @store_after_loop(%p: tensor<4096x!tt.ptr<bf16>, #blocked>, %x: tensor<4096xbf16, #blocked>, %m: tensor<4096xi1, #blocked>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (tensor<4096xbf16, #blocked>) : i32 {
      %s = arith.addf %a, %x : tensor<4096xbf16, #blocked>
      scf.yield %s : tensor<4096xbf16, #blocked>
    }
    tt.store %p, %acc, %m : tensor<4096x!tt.ptr<bf16>, #blocked>
    tt.return
  }
}
