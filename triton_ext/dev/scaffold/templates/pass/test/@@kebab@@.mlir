// RUN: %opt %s -split-input-file --pass @@snake@@ --no-debug-info | FileCheck %s
// RUN: %opt %s -split-input-file --pass '@@snake@@{min-loops=2}' --no-debug-info | FileCheck %s --check-prefix=MIN2

// One loop: tagged with 1 by default; min-loops=2 leaves it untagged.
// CHECK-LABEL: tt.func @one_loop
// CHECK-SAME:    triton_ext.@@snake@@.loops = 1 : i64
// MIN2-LABEL:  tt.func @one_loop
// MIN2-NOT:      triton_ext.@@snake@@.loops
tt.func @one_loop(%n: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.for %iv = %c0 to %n step %c1 iter_args(%acc = %c0) -> (i32) : i32 {
    %next = arith.addi %acc, %iv : i32
    scf.yield %next : i32
  }
  tt.return %r : i32
}

// -----

// Two nested loops: tagged with 2 under both option values.
// CHECK-LABEL: tt.func @nested_loops
// CHECK-SAME:    triton_ext.@@snake@@.loops = 2 : i64
// MIN2-LABEL:  tt.func @nested_loops
// MIN2-SAME:     triton_ext.@@snake@@.loops = 2 : i64
tt.func @nested_loops(%n: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c0) -> (i32) : i32 {
    %inner = scf.for %j = %c0 to %n step %c1 iter_args(%a = %acc) -> (i32) : i32 {
      %next = arith.addi %a, %j : i32
      scf.yield %next : i32
    }
    scf.yield %inner : i32
  }
  tt.return %r : i32
}
