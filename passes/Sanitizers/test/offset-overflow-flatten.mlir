// RUN: %opt %s -split-input-file --pass offset_overflow_check --no-debug-info | FileCheck %s

// A loop nest the user asked to flatten (`tl.range(..., flatten=True)`, issue
// 32; Triton's test_tl_range_fuse): `out + i * ub + j`. Elsewhere the
// loop-invariant `i * ub` is checked once in front of the inner loop; in the
// nest that check (a reporting `scf.if` with atomics, or a bounds test and its
// replay) stays between the loops, and after Triton fuses the nest it keeps
// alive the copy of the nest it makes for an empty inner loop: two `scf.for`
// in the TTGIR. Here the wrapped lanes are computed in the inner loop, ORed
// into an i1 carried by the inner loop, then by the outer one, and reported
// once after the nest. Nothing with regions is added inside the nest.
// CHECK-LABEL: tt.func @flatten_nest
// CHECK:         %[[F:.*]] = arith.constant false
// CHECK:         %[[OUTER:.*]] = scf.for %[[I:.*]] = {{.*}} iter_args(%[[OA:.*]] = %[[F]]) -> (i1)
// CHECK-NOT:       scf.if
// CHECK:           %[[INNER:.*]] = scf.for {{.*}} iter_args(%[[IA:.*]] = %{{.*}}) -> (i1)
// CHECK:             %[[PROD:.*]] = arith.muli %[[I]], %{{.*}} : i32
// CHECK:             %[[BAD:.*]] = arith.cmpi ne
// CHECK-NOT:         scf.if
// CHECK:             %[[OR:.*]] = arith.ori %[[IA]], %[[BAD]] : i1
// CHECK:             scf.yield %[[OR]] : i1
// CHECK-NOT:       scf.if
// CHECK:           %[[OR2:.*]] = arith.ori %[[OA]], %[[INNER]] : i1
// CHECK:           scf.yield %[[OR2]] : i1
// CHECK-NEXT:    } {tt.flatten}
// CHECK:         %[[N:.*]] = arith.extui %[[OUTER]] : i1 to i32
// CHECK:         scf.if
// CHECK:           tt.atomic_rmw add
tt.func @flatten_nest(%ub: i32, %out: !tt.ptr<f32>) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %one = arith.constant 1.000000e+00 : f32
  scf.for %i = %c0 to %ub step %c1 : i32 {
    scf.for %j = %c0 to %ub step %c1 : i32 {
      %prod = arith.muli %i, %ub : i32
      %p = tt.addptr %out, %prod : !tt.ptr<f32>, i32
      %q = tt.addptr %p, %j : !tt.ptr<f32>, i32
      tt.store %q, %one : !tt.ptr<f32>
    }
  } {tt.flatten}
  tt.return
}

// -----

// Without `flatten`, the same nest keeps its check in front of the inner
// loop (hoisted: `i * ub` does not depend on j).
// CHECK-LABEL: tt.func @plain_nest
// CHECK:         scf.for %[[I:.*]] = {{.*}} : i32 {
// CHECK:           arith.muli %[[I]], %{{.*}} : i32
// CHECK:           scf.if
// CHECK:             tt.atomic_rmw add
// CHECK:           scf.for
tt.func @plain_nest(%ub: i32, %out: !tt.ptr<f32>) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %one = arith.constant 1.000000e+00 : f32
  scf.for %i = %c0 to %ub step %c1 : i32 {
    scf.for %j = %c0 to %ub step %c1 : i32 {
      %prod = arith.muli %i, %ub : i32
      %p = tt.addptr %out, %prod : !tt.ptr<f32>, i32
      %q = tt.addptr %p, %j : !tt.ptr<f32>, i32
      tt.store %q, %one : !tt.ptr<f32>
    }
  }
  tt.return
}

// -----

// The user's other loop attributes stay on a loop the check widens with a
// carried value (a loaded index: no bounds, the lanes are carried).
// CHECK-LABEL: tt.func @loop_attributes
// CHECK:         scf.for {{.*}} -> (tensor<16xf32>, i1)
// CHECK:         } {tt.disallow_acc_multi_buffer, tt.loop_unroll_factor = 1 : i32, tt.num_stages = 2 : i32, tt.warp_specialize}
tt.func @loop_attributes(%x: !tt.ptr<f32>, %idx: !tt.ptr<i32>, %n: i32, %stride: i32) -> tensor<16xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.000000e+00> : tensor<16xf32>
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %zero) -> (tensor<16xf32>) : i32 {
    %jp = tt.addptr %idx, %i : !tt.ptr<i32>, i32
    %j = tt.load %jp : !tt.ptr<i32>
    %row = arith.muli %j, %stride : i32
    %xs = tt.addptr %x, %row : !tt.ptr<f32>, i32
    %xp = tt.splat %xs : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
    %xq = tt.addptr %xp, %r : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
    %v = tt.load %xq : tensor<16x!tt.ptr<f32>>
    %s = arith.addf %a, %v : tensor<16xf32>
    scf.yield %s : tensor<16xf32>
  } {tt.disallow_acc_multi_buffer, tt.loop_unroll_factor = 1 : i32, tt.num_stages = 2 : i32, tt.warp_specialize}
  tt.return %acc : tensor<16xf32>
}
