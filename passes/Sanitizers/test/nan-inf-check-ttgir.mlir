// RUN: %opt %s -split-input-file --pass 'nan_inf_check{cta-vote=false print=first fast-path=peak}' --no-debug-info | FileCheck %s

// The H200 false positive (issue 7): a clean GEMM reported "dot non-finite"
// for every accumulator lane outside the M x N bounds, which hold undefined
// values (NaN with masked_load_poison) and are never stored. The dot check
// must read the value of the wait after the loop (not the loop result) and
// count only lanes under the mask of the store that writes it, converted to
// the accumulator's layout, right after that store (record mode).
// CHECK-LABEL: tt.func @wgmma_accumulator
// CHECK:         %[[ACC:.*]] = scf.for
// CHECK-NOT:       tt.print
// CHECK:           scf.yield
// CHECK:         }
// CHECK-NOT:     math.absf %[[ACC]]
// CHECK:         %[[W:.*]] = ttng.warp_group_dot_wait %[[ACC]] {pendings = 0 : i32}
// CHECK-NOT:     tt.print
// CHECK:         tt.store %{{.*}}, %{{.*}}, %[[M:[^ ]*]] :
// CHECK:         %[[CM:.*]] = ttg.convert_layout %[[M]] : tensor<64x32xi1, #blocked> -> tensor<64x32xi1, #mma>
// CHECK:         %[[ABS:.*]] = math.absf %[[W]] : tensor<64x32xf32, #mma>
// CHECK:         %[[BAD:.*]] = arith.cmpf ueq, %[[ABS]]
// CHECK:         arith.andi %[[BAD]], %[[CM]] : tensor<64x32xi1, #mma>
// CHECK:         tt.print "[triton-ext nan_inf_check] kernel=wgmma_accumulator site={{.*}} dot non-finite; first report of this site, lanes in this program="
// CHECK:         tt.print "[triton-ext nan_inf_check] kernel=wgmma_accumulator site={{.*}} store non-finite; first report of this site, lanes in this program="

#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>
#mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 32, 16]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func @wgmma_accumulator(%init: tensor<64x32xf32, #mma>, %p: tensor<64x32x!tt.ptr<f16>, #blocked>, %m: tensor<64x32xi1, #blocked>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %acc = scf.for %i = %c0 to %n step %c1 iter_args(%c = %init) -> (tensor<64x32xf32, #mma>) : i32 {
      %w = ttng.warp_group_dot_wait %c {pendings = 1 : i32} : tensor<64x32xf32, #mma>
      scf.yield %w : tensor<64x32xf32, #mma>
    }
    %done = ttng.warp_group_dot_wait %acc {pendings = 0 : i32} : tensor<64x32xf32, #mma>
    // A ReLU epilogue: it can turn -Inf into 0, so the dot check stays.
    %zero = arith.constant dense<0.0> : tensor<64x32xf32, #mma>
    %relu = arith.maxnumf %done, %zero : tensor<64x32xf32, #mma>
    %h = arith.truncf %relu : tensor<64x32xf32, #mma> to tensor<64x32xf16, #mma>
    %v = ttg.convert_layout %h : tensor<64x32xf16, #mma> -> tensor<64x32xf16, #blocked>
    tt.store %p, %v, %m : tensor<64x32x!tt.ptr<f16>, #blocked>
    tt.return
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>
#mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 32, 16]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // The plain GEMM epilogue (wait, truncf, convert_layout, store) keeps NaN and
  // Inf in every lane it writes, so the store check covers the dot: no dot
  // check, no mask conversion, one reduction.
  // CHECK-LABEL: tt.func @wgmma_plain_epilogue
  // CHECK-NOT:     dot non-finite
  // CHECK-NOT:     tensor<64x32xi1, #mma>
  // The maximum of the 2-D tile is taken over a 1-D view with reordering
  // allowed (registers reinterpreted, nothing moves): one reduction, so one
  // cross-warp step, instead of one per dimension (issue 18).
  // CHECK:         tt.store
  // CHECK:         tt.reshape %{{.*}} allow_reorder : tensor<64x32xf16, #blocked> -> tensor<2048xf16
  // CHECK:         "tt.reduce"(%{{.*}}) <{axis = 0 : i32}>
  // CHECK:         }) : (tensor<2048xf16, #{{.*}}>) -> f16
  // CHECK:         arith.cmpf ueq, %{{.*}}, %{{.*}} : f16
  // CHECK-NEXT:    scf.if
  // CHECK:         tt.print "[triton-ext nan_inf_check] kernel=wgmma_plain_epilogue site={{.*}} store non-finite; first report of this site, lanes in this program="
  // CHECK-NOT:     tt.print
  tt.func @wgmma_plain_epilogue(%init: tensor<64x32xf32, #mma>, %p: tensor<64x32x!tt.ptr<f16>, #blocked>, %m: tensor<64x32xi1, #blocked>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %acc = scf.for %i = %c0 to %n step %c1 iter_args(%c = %init) -> (tensor<64x32xf32, #mma>) : i32 {
      %w = ttng.warp_group_dot_wait %c {pendings = 1 : i32} : tensor<64x32xf32, #mma>
      scf.yield %w : tensor<64x32xf32, #mma>
    }
    %done = ttng.warp_group_dot_wait %acc {pendings = 0 : i32} : tensor<64x32xf32, #mma>
    %h = arith.truncf %done : tensor<64x32xf32, #mma> to tensor<64x32xf16, #mma>
    %v = ttg.convert_layout %h : tensor<64x32xf16, #mma> -> tensor<64x32xf16, #blocked>
    tt.store %p, %v, %m : tensor<64x32x!tt.ptr<f16>, #blocked>
    tt.return
  }
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>
#mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 32, 16]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // Warps along columns (warpsPerCTA [1, 4]): the same 1-D view.
  // CHECK-LABEL: tt.func @columns_across_warps
  // CHECK:         tt.reshape %{{.*}} allow_reorder : tensor<64x32xf32, #blocked{{[0-9]*}}> -> tensor<2048xf32
  // CHECK:         "tt.reduce"(%{{.*}}) <{axis = 0 : i32}>
  tt.func @columns_across_warps(%p: tensor<64x32x!tt.ptr<f32>, #blocked1>, %x: tensor<64x32xf32, #blocked1>) {
    tt.store %p, %x : tensor<64x32x!tt.ptr<f32>, #blocked1>
    tt.return
  }
}
