// RUN: %opt %s -split-input-file --pass loop_split,canonicalize,cse --no-debug-info | FileCheck %s
// RUN: %opt %s -split-input-file --pass 'loop_split{max-tile-elements=0 max-tail-step=0},canonicalize,cse' --no-debug-info | FileCheck %s --check-prefix=NOLIMIT
// RUN: %opt %s -split-input-file --pass 'loop_split{max-tile-elements=1024 max-tail-step=0},canonicalize,cse' --no-debug-info | FileCheck %s --check-prefix=SMALL
// RUN: %opt %s -split-input-file --pass 'loop_split{max-tail-step=0},canonicalize,cse' --no-debug-info | FileCheck %s --check-prefix=TAIL0

// Profitability (issue 17): each part copies the loop body. Liger's group norm
// streams 65536-element fp32 tiles (BLOCK_SIZE = next_pow2(hidden) up to
// 65536, 4 warps: 512 values per thread); the unsplit kernel already spills
// (8616 bytes of stack with ptxas), the split one spilled more (11088 bytes),
// doubled the cubin and ran 0.803x on the H200. Loops whose body holds a tensor
// of more than max-tile-elements (default 32768) elements are left alone.

// CHECK-LABEL: tt.func @stream_65536
// CHECK-COUNT-1: scf.for
// CHECK-NOT:     scf.for
// NOLIMIT-LABEL: tt.func @stream_65536
// NOLIMIT-COUNT-2: scf.for
tt.func @stream_65536(%p: !tt.ptr<f32>, %n: i32) -> f32 {
  %c0 = arith.constant 0 : i32
  %step = arith.constant 65536 : i32
  %zero = arith.constant 0.000000e+00 : f32
  %zeros = arith.constant dense<0.000000e+00> : tensor<65536xf32>
  %r = tt.make_range {end = 65536 : i32, start = 0 : i32} : tensor<65536xi32>
  %ns = tt.splat %n : i32 -> tensor<65536xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<65536x!tt.ptr<f32>>
  %res = scf.for %i = %c0 to %n step %step iter_args(%acc = %zero) -> (f32) : i32 {
    %is = tt.splat %i : i32 -> tensor<65536xi32>
    %offs = arith.addi %is, %r : tensor<65536xi32>
    %mask = arith.cmpi slt, %offs, %ns : tensor<65536xi32>
    %ptrs = tt.addptr %ps, %offs : tensor<65536x!tt.ptr<f32>>, tensor<65536xi32>
    %x = tt.load %ptrs, %mask, %zeros : tensor<65536x!tt.ptr<f32>>
    %s = "tt.reduce"(%x) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      tt.reduce.return %t : f32
    }) : (tensor<65536xf32>) -> f32
    %acc2 = arith.addf %acc, %s : f32
    scf.yield %acc2 : f32
  }
  tt.return %res : f32
}

// -----

// The same loop with 32768-element tiles (Liger's cross entropy with 32 warps,
// 32 values per thread; no spills) is below max-tile-elements, but its only
// comparison is a tail mask (`i + arange(0, 32768) < n`, n the loop's bound)
// and its step exceeds max-tail-step (16384): launchers size such tiles to
// the row, so it runs once, the masked iteration, at common row lengths
// (Liger's cross entropy at vocab 32000: 0.950x on the H200 when split). Left
// alone; with max-tail-step=0 it splits and the load's mask goes away in the
// first part.
// CHECK-LABEL: tt.func @stream_32768
// CHECK-COUNT-1: scf.for
// CHECK-NOT:     scf.for
// TAIL0-LABEL: tt.func @stream_32768
// TAIL0:         scf.for
// TAIL0:           tt.load %{{[0-9]+}} : tensor<32768x!tt.ptr<f32>>
// TAIL0:         scf.for
// TAIL0:           tt.load %{{[0-9]+}}, %{{[0-9]+}}, %{{[a-z0-9_]+}} : tensor<32768x!tt.ptr<f32>>
// SMALL-LABEL: tt.func @stream_32768
// SMALL-COUNT-1: scf.for
// SMALL-NOT:     scf.for
tt.func @stream_32768(%p: !tt.ptr<f32>, %n: i32) -> f32 {
  %c0 = arith.constant 0 : i32
  %step = arith.constant 32768 : i32
  %zero = arith.constant 0.000000e+00 : f32
  %zeros = arith.constant dense<0.000000e+00> : tensor<32768xf32>
  %r = tt.make_range {end = 32768 : i32, start = 0 : i32} : tensor<32768xi32>
  %ns = tt.splat %n : i32 -> tensor<32768xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<32768x!tt.ptr<f32>>
  %res = scf.for %i = %c0 to %n step %step iter_args(%acc = %zero) -> (f32) : i32 {
    %is = tt.splat %i : i32 -> tensor<32768xi32>
    %offs = arith.addi %is, %r : tensor<32768xi32>
    %mask = arith.cmpi slt, %offs, %ns : tensor<32768xi32>
    %ptrs = tt.addptr %ps, %offs : tensor<32768x!tt.ptr<f32>>, tensor<32768xi32>
    %x = tt.load %ptrs, %mask, %zeros : tensor<32768x!tt.ptr<f32>>
    %s = "tt.reduce"(%x) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      tt.reduce.return %t : f32
    }) : (tensor<32768xf32>) -> f32
    %acc2 = arith.addf %acc, %s : f32
    scf.yield %acc2 : f32
  }
  tt.return %res : f32
}

// -----

// A tail mask at step 16384 (Liger's KL divergence: two iterations at vocab
// 32000, 1.117x on the H200 when split) is split.
// SMALL-LABEL: tt.func @tail_16384
// CHECK-LABEL: tt.func @tail_16384
// CHECK:         scf.for
// CHECK:           tt.load %{{[0-9]+}} : tensor<16384x!tt.ptr<f32>>
// CHECK:         scf.for
// CHECK:           tt.load %{{[0-9]+}}, %{{[0-9]+}}, %{{[a-z0-9_]+}} : tensor<16384x!tt.ptr<f32>>
tt.func @tail_16384(%p: !tt.ptr<f32>, %n: i32) -> f32 {
  %c0 = arith.constant 0 : i32
  %step = arith.constant 16384 : i32
  %zero = arith.constant 0.000000e+00 : f32
  %zeros = arith.constant dense<0.000000e+00> : tensor<16384xf32>
  %r = tt.make_range {end = 16384 : i32, start = 0 : i32} : tensor<16384xi32>
  %ns = tt.splat %n : i32 -> tensor<16384xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<16384x!tt.ptr<f32>>
  %res = scf.for %i = %c0 to %n step %step iter_args(%acc = %zero) -> (f32) : i32 {
    %is = tt.splat %i : i32 -> tensor<16384xi32>
    %offs = arith.addi %is, %r : tensor<16384xi32>
    %mask = arith.cmpi slt, %offs, %ns : tensor<16384xi32>
    %ptrs = tt.addptr %ps, %offs : tensor<16384x!tt.ptr<f32>>, tensor<16384xi32>
    %x = tt.load %ptrs, %mask, %zeros : tensor<16384x!tt.ptr<f32>>
    %s = "tt.reduce"(%x) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      tt.reduce.return %t : f32
    }) : (tensor<16384xf32>) -> f32
    %acc2 = arith.addf %acc, %s : f32
    scf.yield %acc2 : f32
  }
  tt.return %res : f32
}

// -----

// Step 32768 but the mask is not the loop's own bound (`i + arange < limit`,
// the loop runs to %n): not a tail mask, so the step does not matter; split.
// CHECK-LABEL: tt.func @big_step_other_bound
// CHECK:         scf.for
// CHECK:           tt.load %{{[0-9]+}} : tensor<32768x!tt.ptr<f32>>
// CHECK:         scf.for
// CHECK:           tt.load %{{[0-9]+}}, %{{[0-9]+}}, %{{[a-z0-9_]+}} : tensor<32768x!tt.ptr<f32>>
tt.func @big_step_other_bound(%p: !tt.ptr<f32>, %n: i32, %limit: i32) -> f32 {
  %c0 = arith.constant 0 : i32
  %step = arith.constant 32768 : i32
  %zero = arith.constant 0.000000e+00 : f32
  %zeros = arith.constant dense<0.000000e+00> : tensor<32768xf32>
  %r = tt.make_range {end = 32768 : i32, start = 0 : i32} : tensor<32768xi32>
  %ls = tt.splat %limit : i32 -> tensor<32768xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<32768x!tt.ptr<f32>>
  %res = scf.for %i = %c0 to %n step %step iter_args(%acc = %zero) -> (f32) : i32 {
    %is = tt.splat %i : i32 -> tensor<32768xi32>
    %offs = arith.addi %is, %r : tensor<32768xi32>
    %mask = arith.cmpi slt, %offs, %ls : tensor<32768xi32>
    %ptrs = tt.addptr %ps, %offs : tensor<32768x!tt.ptr<f32>>, tensor<32768xi32>
    %x = tt.load %ptrs, %mask, %zeros : tensor<32768x!tt.ptr<f32>>
    %s = "tt.reduce"(%x) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      tt.reduce.return %t : f32
    }) : (tensor<32768xf32>) -> f32
    %acc2 = arith.addf %acc, %s : f32
    scf.yield %acc2 : f32
  }
  tt.return %res : f32
}
