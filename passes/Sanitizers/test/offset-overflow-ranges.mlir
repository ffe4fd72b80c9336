// RUN: %opt %s -split-input-file --pass 'offset_overflow_check{print=first}' --no-debug-info | FileCheck %s

// Leaves the check's own rules do not bound get the bounds of MLIR's integer
// range analysis (triton-ext/RangeAnalysis.h): `n >> 20` of an i32 lies in
// [0, 4095], so `(n >> 20) * 1024 + arange(0, 1024)` stays below 2^22 and
// needs no check.
// CHECK-LABEL: tt.func @shifted_leaf
// CHECK-NOT:     tt.print
// CHECK-NOT:     arith.extsi
// CHECK:         tt.return
tt.func @shifted_leaf(%p: !tt.ptr<f32>, %n: i32) -> tensor<1024xf32> {
  %c20 = arith.constant 20 : i32
  %c1024 = arith.constant 1024 : i32
  %h = arith.shrui %n, %c20 : i32
  %base = arith.muli %h, %c1024 : i32
  %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %bs = tt.splat %base : i32 -> tensor<1024xi32>
  %off = arith.addi %bs, %r : tensor<1024xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %off : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
  %x = tt.load %pp : tensor<1024x!tt.ptr<f32>>
  tt.return %x : tensor<1024xf32>
}

// -----

// `n >> 8` lies in [0, 2^24 - 1]: times 1024 it can pass 2^31, the check
// stays.
// CHECK-LABEL: tt.func @shifted_leaf_wide
// CHECK:         tt.print "[triton-ext offset_overflow_check] kernel=shifted_leaf_wide
tt.func @shifted_leaf_wide(%p: !tt.ptr<f32>, %n: i32) -> tensor<1024xf32> {
  %c8 = arith.constant 8 : i32
  %c1024 = arith.constant 1024 : i32
  %h = arith.shrui %n, %c8 : i32
  %base = arith.muli %h, %c1024 : i32
  %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %bs = tt.splat %base : i32 -> tensor<1024xi32>
  %off = arith.addi %bs, %r : tensor<1024xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %off : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
  %x = tt.load %pp : tensor<1024x!tt.ptr<f32>>
  tt.return %x : tensor<1024xf32>
}
