// RUN: %opt %s -split-input-file --pass "loop_split{min-unmasked-trips=0},canonicalize,cse" --no-debug-info | FileCheck %s
// RUN: %opt %s -split-input-file --pass loop_split --no-debug-info | FileCheck %s --check-prefix=UNCHANGED

// Loops of one iteration (constant bounds, ub - lb <= step) are left alone:
// at most one part would run, and canonicalize turns the unsplit loop into
// straight-line code. The hypothesis differential test found the split of
// `n < iv` over [0, 1) (scalar-i32-sloop-slt-iv-rhs-step1-...-bounds0..1):
// the same result, but one loop iteration left where the unsplit kernel had
// none. Neighbours: the iv on either side, a step larger than the span,
// empty loops (unchanged), and two-iteration / run-time bounds (still split;
// min-unmasked-trips=0 turns off the profitability rule that declines the
// two-trip loop, test/loop-split-pipeline.mlir).

// The exact case: `n < iv`, i32, [0, 1) step 1.
// CHECK-LABEL: tt.func @one_trip_iv_rhs
// CHECK-NOT:     scf.for
// CHECK:         %[[C:.*]] = arith.cmpi slt, %arg0, %{{.*}} : i32
// CHECK-NEXT:    arith.select %[[C]]
// CHECK-NOT:     scf.for
// CHECK:         tt.return
// UNCHANGED-LABEL: tt.func @one_trip_iv_rhs
// UNCHANGED-NOT:   arith.extsi
// UNCHANGED:       scf.for
// UNCHANGED:         arith.cmpi slt, %arg0, %
// UNCHANGED-NOT:   scf.for
// UNCHANGED:       tt.return
tt.func @one_trip_iv_rhs(%n: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %r = scf.for %iv = %c0 to %c1 step %c1 iter_args(%a = %c0) -> (i32) : i32 {
    %c = arith.cmpi slt, %n, %iv : i32
    %m = arith.muli %a, %c3 : i32
    %v = arith.select %c, %c1, %c2 : i32
    %s = arith.addi %m, %v : i32
    %y = arith.addi %s, %iv : i32
    scf.yield %y : i32
  }
  tt.return %r : i32
}

// -----

// The iv on the left, `iv < n`, [0, 1) step 1.
// CHECK-LABEL: tt.func @one_trip_iv_lhs
// CHECK-NOT:     scf.for
// CHECK:         arith.cmpi sgt, %arg0, %{{.*}} : i32
// CHECK-NOT:     scf.for
// CHECK:         tt.return
// UNCHANGED-LABEL: tt.func @one_trip_iv_lhs
// UNCHANGED-NOT:   arith.extsi
// UNCHANGED:       scf.for
// UNCHANGED:         arith.cmpi slt, %{{.*}}, %arg0
// UNCHANGED-NOT:   scf.for
// UNCHANGED:       tt.return
tt.func @one_trip_iv_lhs(%n: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %r = scf.for %iv = %c0 to %c1 step %c1 iter_args(%a = %c0) -> (i32) : i32 {
    %c = arith.cmpi slt, %iv, %n : i32
    %m = arith.muli %a, %c3 : i32
    %v = arith.select %c, %c1, %c2 : i32
    %s = arith.addi %m, %v : i32
    %y = arith.addi %s, %iv : i32
    scf.yield %y : i32
  }
  tt.return %r : i32
}

// -----

// One iteration of a larger step (i64, [-5, 59) step 64, `n + 1 < iv`).
// UNCHANGED-LABEL: tt.func @one_trip_large_step_i64
// UNCHANGED-NOT:   arith.extsi
// UNCHANGED:       scf.for
// UNCHANGED:         arith.cmpi slt
// UNCHANGED-NOT:   scf.for
// UNCHANGED:       tt.return
tt.func @one_trip_large_step_i64(%n: i64, %x: f32, %y: f32) -> f32 {
  %lb = arith.constant -5 : i64
  %ub = arith.constant 59 : i64
  %c1 = arith.constant 1 : i64
  %c64 = arith.constant 64 : i64
  %init = arith.constant 0.0 : f32
  %r = scf.for %iv = %lb to %ub step %c64 iter_args(%a = %init) -> (f32) : i64 {
    %n1 = arith.addi %n, %c1 : i64
    %c = arith.cmpi slt, %n1, %iv : i64
    %v = arith.select %c, %x, %y : f32
    %s = arith.addf %a, %v : f32
    scf.yield %s : f32
  }
  tt.return %r : f32
}

// -----

// An empty loop ([1, 1)) with the iv on the right: unchanged.
// UNCHANGED-LABEL: tt.func @zero_trip_iv_rhs
// UNCHANGED-NOT:   arith.extsi
// UNCHANGED:       scf.for
// UNCHANGED-NOT:   scf.for
// UNCHANGED:       tt.return
tt.func @zero_trip_iv_rhs(%n: i32, %x: f32, %y: f32) -> f32 {
  %c1 = arith.constant 1 : i32
  %init = arith.constant 0.0 : f32
  %r = scf.for %iv = %c1 to %c1 step %c1 iter_args(%a = %init) -> (f32) : i32 {
    %c = arith.cmpi slt, %n, %iv : i32
    %v = arith.select %c, %x, %y : f32
    %s = arith.addf %a, %v : f32
    scf.yield %s : f32
  }
  tt.return %r : f32
}

// -----

// Two iterations ([0, 2) step 1, `n < iv`): still split at n + 1, clamped to
// [0, 2]; the comparison is gone from both loops.
// CHECK-LABEL: tt.func @two_trips_iv_rhs
// CHECK:         %[[E:.*]] = arith.extsi %arg0 : i32 to i64
// CHECK:         %[[P:.*]] = arith.addi %[[E]], %{{.*}} : i64
// CHECK:         %[[M:.*]] = arith.trunci %{{.*}} : i64 to i32
// CHECK:         %[[L1:.*]] = scf.for %{{.*}} = %{{.*}} to %[[M]] step
// CHECK-NEXT:      arith.addf %{{.*}}, %arg2
// CHECK:         scf.for %{{.*}} = %[[M]] to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[L1]])
// CHECK-NEXT:      arith.addf %{{.*}}, %arg1
// CHECK-NOT:     arith.cmpi
// CHECK:         tt.return
tt.func @two_trips_iv_rhs(%n: i32, %x: f32, %y: f32) -> f32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %init = arith.constant 0.0 : f32
  %r = scf.for %iv = %c0 to %c2 step %c1 iter_args(%a = %init) -> (f32) : i32 {
    %c = arith.cmpi slt, %n, %iv : i32
    %v = arith.select %c, %x, %y : f32
    %s = arith.addf %a, %v : f32
    scf.yield %s : f32
  }
  tt.return %r : f32
}

// -----

// Run-time bounds (which may give one iteration or none): split, the parts
// partition [lb, ub) whatever the bounds.
// CHECK-LABEL: tt.func @runtime_bounds_iv_rhs
// CHECK:         %[[L1:.*]] = scf.for %{{.*}} = %arg1 to %[[M:.*]] step
// CHECK-NEXT:      arith.addf %{{.*}}, %arg4
// CHECK:         scf.for %{{.*}} = %[[M]] to %arg2 step %{{.*}} iter_args(%{{.*}} = %[[L1]])
// CHECK-NEXT:      arith.addf %{{.*}}, %arg3
// CHECK-NOT:     arith.cmpi
// CHECK:         tt.return
tt.func @runtime_bounds_iv_rhs(%n: i32, %lb: i32, %ub: i32, %x: f32, %y: f32) -> f32 {
  %c1 = arith.constant 1 : i32
  %init = arith.constant 0.0 : f32
  %r = scf.for %iv = %lb to %ub step %c1 iter_args(%a = %init) -> (f32) : i32 {
    %c = arith.cmpi slt, %n, %iv : i32
    %v = arith.select %c, %x, %y : f32
    %s = arith.addf %a, %v : f32
    scf.yield %s : f32
  }
  tt.return %r : f32
}
