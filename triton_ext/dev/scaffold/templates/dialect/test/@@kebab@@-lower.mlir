// @@lower_pass@@ turns every @@dialect@@.@@op@@ into arith.muli by a constant.
// RUN: %opt %s -split-input-file --pass @@lower_pass@@ --no-debug-info | FileCheck %s
// RUN: %opt %s -split-input-file --pass @@lower_pass@@ --no-debug-info | FileCheck %s --check-prefix=GONE
// GONE-NOT: @@dialect@@

// CHECK-LABEL: tt.func @scalar
// CHECK: %[[K:.*]] = arith.constant -3 : i32
// CHECK: %[[R:.*]] = arith.muli %arg0, %[[K]] : i32
// CHECK: tt.return %[[R]] : i32
tt.func @scalar(%x: i32) -> i32 {
  %0 = @@dialect@@.@@op@@ %x, -3 : i32
  tt.return %0 : i32
}

// -----

// A tensor gets a splat constant; 255 is the i8 bit pattern of -1.
// CHECK-LABEL: tt.func @tensor_i8
// CHECK: %[[K:.*]] = arith.constant dense<-1> : tensor<128xi8>
// CHECK: arith.muli %arg0, %[[K]] : tensor<128xi8>
tt.func @tensor_i8(%t: tensor<128xi8>) -> tensor<128xi8> {
  %0 = @@dialect@@.@@op@@ %t, 255 : tensor<128xi8>
  tt.return %0 : tensor<128xi8>
}

// -----

// Ops inside a loop body, chained: each becomes one multiply, the loop stays.
// CHECK-LABEL: tt.func @in_loop
// CHECK: scf.for
// CHECK: %[[R:.*]] = tt.make_range {end = 128 : i32, start = 0 : i32}
// CHECK: %[[A:.*]] = arith.muli %[[R]], %{{.*}} : tensor<128xi32>
// CHECK: arith.muli %[[A]], %{{.*}} : tensor<128xi32>
tt.func @in_loop(%ub: i32) -> tensor<128xi32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %z = arith.constant dense<0> : tensor<128xi32>
  %r = scf.for %i = %c0 to %ub step %c1 iter_args(%acc = %z) -> (tensor<128xi32>) : i32 {
    %m = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %s0 = @@dialect@@.@@op@@ %m, 2 : tensor<128xi32>
    %s1 = @@dialect@@.@@op@@ %s0, 5 : tensor<128xi32>
    %a = arith.addi %s1, %acc : tensor<128xi32>
    scf.yield %a : tensor<128xi32>
  }
  tt.return %r : tensor<128xi32>
}
