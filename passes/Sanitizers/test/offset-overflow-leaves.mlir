// RUN: %opt %s -split-input-file --pass offset_overflow_check --no-debug-info | FileCheck %s
// RUN: %opt %s -split-input-file --pass 'offset_overflow_check{mode=abort}' --no-debug-info | FileCheck %s --check-prefix=ABORT

// Offsets whose tensor leaves are not ranges (issue 18): torchao's and
// Triton's GEMMs index A with `ram = rm % M`. The remainder is bounded at run
// time (|rm % M| <= |M| - 1, with the sign of rm: here rm >= 0 when its own
// bounds fit i32) and the offset's bounds come from it; the correct kernel
// pays scalar ops only: no lane-by-lane i64 recompute, no reduction before
// the load. The lanes are recomputed and counted at the end of the kernel,
// block by block, only when the bounds leave i32.
// CHECK-LABEL: tt.func @rem_leaf
// CHECK:         %[[RAM:.*]] = arith.remsi %{{.*}}, %{{.*}} : tensor<128xi32>
// CHECK:         %[[OFF:.*]] = arith.addi %{{.*}}, %{{.*}} : tensor<128x64xi32>
// CHECK-NOT:     "tt.reduce"
// CHECK-NOT:     tensor<128x64xi64>
// CHECK:         %[[WM:.*]] = arith.extsi %arg2 : i32 to i64
// CHECK:         arith.maxsi
// CHECK:         arith.ori %{{.*}}, %{{.*}} : i1
// CHECK-NOT:     "tt.reduce"
// CHECK-NOT:     tensor<128x64xi64>
// CHECK:         tt.addptr %{{.*}}, %[[OFF]]
// CHECK:         tt.load
// CHECK:         scf.if %{{.*}} -> (i32, i32) {
// CHECK:           scf.for
// CHECK:             arith.remsi %{{.*}}, %{{.*}} : tensor<{{[0-9]+}}xi32>
// CHECK:             arith.cmpi ne, %{{.*}}, %{{.*}} : tensor<{{[0-9]+}}x{{[0-9]+}}xi64>
// CHECK:             "tt.reduce"
// CHECK:         tt.atomic_rmw add
// CHECK:         tt.return
// Abort mode checks in place, still under the bounds test.
// ABORT-LABEL: tt.func @rem_leaf
// ABORT:         arith.remsi
// ABORT-NOT:     "tt.reduce"
// ABORT:         scf.if %{{.*}} -> (i32) {
// ABORT:           arith.cmpi ne, %{{.*}}, %{{.*}} : tensor<128x64xi64>
// ABORT:           "tt.reduce"
// ABORT:         tt.assert
// ABORT:         tt.addptr
tt.func @rem_leaf(%p: !tt.ptr<i8>, %pid: i32, %m: i32, %stride: i32) -> tensor<128x64xi8> {
  %c128 = arith.constant 128 : i32
  %base = arith.muli %pid, %c128 : i32
  %bs = tt.splat %base : i32 -> tensor<128xi32>
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %rm = arith.addi %bs, %r : tensor<128xi32>
  %ms = tt.splat %m : i32 -> tensor<128xi32>
  %ram = arith.remsi %rm, %ms : tensor<128xi32>
  %re = tt.expand_dims %ram {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %ss = tt.splat %stride : i32 -> tensor<128x1xi32>
  %rows = arith.muli %re, %ss : tensor<128x1xi32>
  %rb = tt.broadcast %rows : tensor<128x1xi32> -> tensor<128x64xi32>
  %k = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %ke = tt.expand_dims %k {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %kb = tt.broadcast %ke : tensor<1x64xi32> -> tensor<128x64xi32>
  %off = arith.addi %rb, %kb : tensor<128x64xi32>
  %ps = tt.splat %p : !tt.ptr<i8> -> tensor<128x64x!tt.ptr<i8>>
  %pp = tt.addptr %ps, %off : tensor<128x64x!tt.ptr<i8>>, tensor<128x64xi32>
  %x = tt.load %pp : tensor<128x64x!tt.ptr<i8>>
  tt.return %x : tensor<128x64xi8>
}

// -----

// A quotient by a run-time divisor (Liger's group norm: `offsets //
// per_channel`) and `x & C`: bounds from the division's corners, computed in
// i32 (an i64 division is a subroutine on the GPU), and [0, C].
// CHECK-LABEL: tt.func @div_and_leaves
// CHECK:         arith.divsi %{{.*}}, %{{.*}} : tensor<128xi32>
// CHECK:         arith.trunci %{{.*}} : i64 to i32
// CHECK:         arith.divsi %{{.*}}, %{{.*}} : i32
// CHECK-NOT:     arith.divsi %{{.*}}, %{{.*}} : i64
// CHECK-NOT:     "tt.reduce"
// CHECK:         tt.addptr
// CHECK-NOT:     "tt.reduce"
// CHECK:         %[[AND:.*]] = arith.andi %{{.*}}, %{{.*}} : tensor<128xi32>
// CHECK-NOT:     "tt.reduce"
// CHECK:         tt.addptr
// CHECK-NOT:     "tt.reduce"
// CHECK:         tt.load
// CHECK:         scf.if %{{.*}} -> (i32, i32)
// CHECK:           arith.divsi %{{.*}}, %{{.*}} : tensor<{{[0-9]+}}xi32>
// CHECK:         scf.if %{{.*}} -> (i32, i32)
// CHECK:           arith.andi %{{.*}}, %{{.*}} : tensor<{{[0-9]+}}xi32>
tt.func @div_and_leaves(%p: !tt.ptr<f32>, %i: i32, %d: i32, %g: i32) -> tensor<128xf32> {
  %is = tt.splat %i : i32 -> tensor<128xi32>
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %h = arith.addi %is, %r : tensor<128xi32>
  %ds = tt.splat %d : i32 -> tensor<128xi32>
  %q = arith.divsi %h, %ds : tensor<128xi32>
  %gs = tt.splat %g : i32 -> tensor<128xi32>
  %off = arith.addi %gs, %q : tensor<128xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %off : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %c255 = arith.constant dense<255> : tensor<128xi32>
  %low = arith.andi %h, %c255 : tensor<128xi32>
  %off2 = arith.muli %low, %gs : tensor<128xi32>
  %pq = tt.addptr %pp, %off2 : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %x = tt.load %pq : tensor<128x!tt.ptr<f32>>
  tt.return %x : tensor<128xf32>
}

// -----

// Leaves with no bound (a loaded index, a shift) keep the lane-by-lane check
// in place: the reduction runs before the access, under no bounds test.
// CHECK-LABEL: tt.func @unbounded_leaves
// CHECK:         %[[IDX:.*]] = tt.load
// CHECK-NOT:     scf.if {{.*}} -> (i32)
// CHECK:         arith.cmpi ne, %{{.*}}, %{{.*}} : tensor<128xi64>
// CHECK:         "tt.reduce"
// CHECK:         tt.addptr
tt.func @unbounded_leaves(%p: !tt.ptr<f32>, %ip: !tt.ptr<i32>, %s: i32) -> tensor<128xf32> {
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %ips = tt.splat %ip : !tt.ptr<i32> -> tensor<128x!tt.ptr<i32>>
  %ipp = tt.addptr %ips, %r : tensor<128x!tt.ptr<i32>>, tensor<128xi32>
  %idx = tt.load %ipp : tensor<128x!tt.ptr<i32>>
  %ss = tt.splat %s : i32 -> tensor<128xi32>
  %off = arith.muli %idx, %ss : tensor<128xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %off : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %x = tt.load %pp : tensor<128x!tt.ptr<f32>>
  tt.return %x : tensor<128xf32>
}

// -----

// A loop-invariant increment in a K loop nested in another loop (Liger's
// int8 x int2 GEMM re-walks K once per packed weight): checked once, in
// front of the outer loop, counted only if both loops run; nothing of the
// check is left in either loop body, and its records are updated in front
// of the outer loop too (the count is not carried across it).
// CHECK-LABEL: tt.func @nested_invariant
// CHECK:         %[[MUL:.*]] = arith.muli %arg1, %c32_i32 : i32
// CHECK:         %[[INNER:.*]] = arith.cmpi slt, %c0_i32, %arg2 : i32
// CHECK:         %[[OUTER:.*]] = arith.cmpi slt, %c0_i32, %c4_i32 : i32
// CHECK:         %[[BOTH:.*]] = arith.andi %[[INNER]], %[[OUTER]] : i1
// CHECK:         arith.select %[[BOTH]]
// CHECK:         tt.atomic_rmw add
// CHECK:         scf.for
// CHECK-NOT:       arith.extsi
// CHECK-NOT:       scf.if
// CHECK:           scf.for
// CHECK-NOT:         arith.extsi
// CHECK-NOT:         scf.if
// CHECK:             tt.addptr
// CHECK-NOT:     tt.atomic_rmw
// CHECK:         tt.return
tt.func @nested_invariant(%p: tensor<32x!tt.ptr<f16>>, %stride: i32, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c4 = arith.constant 4 : i32
  %c32 = arith.constant 32 : i32
  scf.for %o = %c0 to %c4 step %c1 : i32 {
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%q = %p) -> (tensor<32x!tt.ptr<f16>>) : i32 {
      %x = tt.load %q : tensor<32x!tt.ptr<f16>>
      tt.store %q, %x : tensor<32x!tt.ptr<f16>>
      %inc = arith.muli %stride, %c32 : i32
      %incs = tt.splat %inc : i32 -> tensor<32xi32>
      %next = tt.addptr %q, %incs : tensor<32x!tt.ptr<f16>>, tensor<32xi32>
      scf.yield %next : tensor<32x!tt.ptr<f16>>
    }
  }
  tt.return
}
