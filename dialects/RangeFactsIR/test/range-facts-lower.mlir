// range_facts_lower replaces every fact by its operand and leaves nothing of the dialect.
// RUN: %opt %s -split-input-file --pass range_facts_lower --no-debug-info | FileCheck %s
// CHECK-NOT: triton_ext_range

// Scalar: the users read the original value.
// CHECK-LABEL: tt.func @scalar
// CHECK: %[[S:.*]] = arith.addi %arg0, %c1_i32 : i32
// CHECK: tt.return %[[S]] : i32
tt.func @scalar(%n: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %0 = triton_ext_range.assume_range %n, 0, 4096 : i32
  %1 = arith.addi %0, %c1 : i32
  tt.return %1 : i32
}

// -----

// Tensor facts inside a loop body, chained: all go, the loop stays.
// CHECK-LABEL: tt.func @in_loop
// CHECK: scf.for
// CHECK: %[[R:.*]] = tt.make_range {end = 128 : i32, start = 0 : i32}
// CHECK: arith.addi %[[R]], %{{.*}} : tensor<128xi32>
tt.func @in_loop(%ub: i32) -> tensor<128xi32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %z = arith.constant dense<0> : tensor<128xi32>
  %r = scf.for %i = %c0 to %ub step %c1 iter_args(%acc = %z) -> (tensor<128xi32>) : i32 {
    %m = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %f0 = triton_ext_range.assume_range %m, 0, 127 : tensor<128xi32>
    %f1 = triton_ext_range.assume_range %f0, 0, 100 : tensor<128xi32>
    %a = arith.addi %f1, %acc : tensor<128xi32>
    scf.yield %a : tensor<128xi32>
  }
  tt.return %r : tensor<128xi32>
}
