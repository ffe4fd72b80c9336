// RUN: %opt %s -split-input-file --pass unroll_dot_loops --no-debug-info | FileCheck %s --check-prefixes=CHECK,F2
// Idempotence: a second run changes nothing.
// RUN: %opt %s -split-input-file --pass unroll_dot_loops,unroll_dot_loops --no-debug-info | FileCheck %s --check-prefixes=CHECK,F2
// RUN: %opt %s -split-input-file --pass 'unroll_dot_loops{factor=4}' --no-debug-info | FileCheck %s --check-prefixes=CHECK,F4
// Why a dot loop is left alone: with remarks=true, one remark per declined dot loop.
// With the registry's follow-up canonicalize, constant bounds fold the guard.
// RUN: %opt %s -split-input-file --pass unroll_dot_loops,canonicalize --no-debug-info | FileCheck %s --check-prefix=FOLD
// And with Triton's own loop_unroll after it, as make_ttir runs them.
// RUN: %opt %s -split-input-file --pass unroll_dot_loops,canonicalize,loop_unroll --no-debug-info | FileCheck %s --check-prefix=UNROLL
// RUN: env MLIR_ENABLE_DIAGNOSTICS=remarks %opt %s -split-input-file --pass 'unroll_dot_loops{remarks=true}' --no-debug-info 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// A factor outside [2, 8] is refused before the pass runs (Passes.td declares the range; the pass
// itself refuses it too, test_unroll_dot_loops.py).
// RUN: not %opt %s -split-input-file --pass 'unroll_dot_loops{factor=9}' 2>&1 | FileCheck %s --check-prefix=BAD9
// BAD9: option factor: expected an int in [2, 8], found 9 (declared in UnrollDotLoops/Passes.td)
// RUN: not %opt %s -split-input-file --pass 'unroll_dot_loops{factor=1}' 2>&1 | FileCheck %s --check-prefix=BAD1
// BAD1: option factor: expected an int in [2, 8], found 1 (declared in UnrollDotLoops/Passes.td)

// A dot loop over run-time bounds: versioned on the bounds guard, the copy
// under the guard marked for Triton's loop_unroll, the original marked 1.
// CHECK-LABEL: tt.func public @dot_loop
// CHECK-DAG:     %[[FWD:.*]] = arith.cmpi sle, %[[LB:.*]], %[[UB:.*]] : i32
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i32
// F2-DAG:        %[[STEPMAX:.*]] = arith.constant 1073741823 : i32
// F4-DAG:        %[[STEPMAX:.*]] = arith.constant 536870911 : i32
// F2-DAG:        %[[F:.*]] = arith.constant 2 : i32
// F4-DAG:        %[[F:.*]] = arith.constant 4 : i32
// CHECK:         %[[FS:.*]] = arith.muli %[[STEP:.*]], %[[F]] : i32
// CHECK-NEXT:    %[[MAX:.*]] = arith.constant 2147483647 : i32
// CHECK-NEXT:    %[[UBMAX:.*]] = arith.subi %[[MAX]], %[[FS]] : i32
// CHECK-DAG:     arith.cmpi sgt, %[[STEP]], %[[ZERO]] : i32
// CHECK-DAG:     arith.cmpi sle, %[[STEP]], %[[STEPMAX]] : i32
// CHECK-DAG:     arith.cmpi sge, %[[LB]], %[[ZERO]] : i32
// CHECK-DAG:     arith.cmpi sge, %[[UB]], %[[ZERO]] : i32
// CHECK-DAG:     arith.cmpi sle, %[[LB]], %[[UBMAX]] : i32
// CHECK-DAG:     arith.cmpi sle, %[[UB]], %[[UBMAX]] : i32
// CHECK:         %[[OK:.*]] = arith.andi %{{.*}}, %[[FWD]] : i1
// CHECK-NEXT:    %[[R:.*]] = scf.if %[[OK]] -> (tensor<16x16xf32>) {
// CHECK:           %[[U:.*]] = scf.for %{{.*}} = %[[LB]] to %[[UB]] step %[[STEP]]
// CHECK:             tt.dot
// F2:            } {tt.loop_unroll_factor = 2 : i32}
// F4:            } {tt.loop_unroll_factor = 4 : i32}
// CHECK-NEXT:      scf.yield %[[U]] : tensor<16x16xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[O:.*]] = scf.for %{{.*}} = %[[LB]] to %[[UB]] step %[[STEP]]
// CHECK:             tt.dot
// CHECK:           } {tt.loop_unroll_factor = 1 : i32}
// CHECK-NEXT:      scf.yield %[[O]] : tensor<16x16xf32>
// CHECK-NEXT:    }
// CHECK:         tt.store %{{.*}}, %[[R]]
// REMARK-NOT:    remark:
// UNROLL-LABEL: tt.func public @dot_loop
// UNROLL:         scf.if
// UNROLL:           scf.for
// UNROLL-COUNT-2:     tt.dot
// UNROLL-NOT:         tt.dot
// UNROLL:           scf.for
// UNROLL:             tt.dot
// UNROLL:           } {tt.num_stages = 1 : i32}
// UNROLL:         } else {
// UNROLL-NEXT:      scf.for
// UNROLL-NEXT:        tt.load
// UNROLL-NEXT:        tt.dot
// UNROLL-NEXT:        scf.yield
// UNROLL-NEXT:      } {tt.loop_unroll_factor = 1 : i32}
tt.func public @dot_loop(%a: !tt.ptr<f16>, %c: !tt.ptr<f32>, %lb: i32, %ub: i32, %step: i32) {
  %zero = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
  %pa = tt.splat %a : !tt.ptr<f16> -> tensor<16x16x!tt.ptr<f16>>
  %r = scf.for %k = %lb to %ub step %step iter_args(%acc = %zero) -> (tensor<16x16xf32>) : i32 {
    %x = tt.load %pa : tensor<16x16x!tt.ptr<f16>>
    %d = tt.dot %x, %x, %acc : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %d : tensor<16x16xf32>
  }
  %pc = tt.splat %c : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
  tt.store %pc, %r : tensor<16x16x!tt.ptr<f32>>
  tt.return
}

// -----

// Constant bounds: the guard folds, only the unrolled copy is left. An i64
// loop is guarded in i64.
// FOLD-LABEL: tt.func public @constant_bounds
// FOLD-NOT:     scf.if
// FOLD:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// FOLD-SAME:      : i64
// FOLD:         } {tt.loop_unroll_factor = 2 : i32}
// FOLD-NOT:     scf.for
// FOLD:         tt.return
tt.func public @constant_bounds(%a: !tt.ptr<f16>, %c: !tt.ptr<f32>) {
  %zero = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
  %lb = arith.constant 0 : i64
  %ub = arith.constant 4096 : i64
  %step = arith.constant 64 : i64
  %pa = tt.splat %a : !tt.ptr<f16> -> tensor<16x16x!tt.ptr<f16>>
  %r = scf.for %k = %lb to %ub step %step iter_args(%acc = %zero) -> (tensor<16x16xf32>) : i64 {
    %x = tt.load %pa : tensor<16x16x!tt.ptr<f16>>
    %d = tt.dot %x, %x, %acc : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %d : tensor<16x16xf32>
  }
  %pc = tt.splat %c : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
  tt.store %pc, %r : tensor<16x16x!tt.ptr<f32>>
  tt.return
}

// -----

// Left alone, each with its reason: the author's unroll factor, an unsigned
// loop, an outer loop (its inner dot loop is unrolled), a loop without a dot
// (no remark: it is not a dot loop) and a dot loop that loads nothing.
// CHECK-LABEL: tt.func public @declined
// CHECK:         scf.for
// CHECK:         } {tt.loop_unroll_factor = 3 : i32}
// CHECK:         scf.for unsigned
// CHECK-NOT:     tt.loop_unroll_factor
// CHECK:         tt.dot
// CHECK:         scf.yield
// CHECK-NEXT:    }
// REMARK: remark: unroll_dot_loops: not applied: the loop has tt.loop_unroll_factor already (the author's choice wins)
// REMARK: remark: unroll_dot_loops: not applied: the loop compares its bounds unsigned
// REMARK: remark: unroll_dot_loops: not applied: the loop loads nothing
// REMARK: remark: unroll_dot_loops: not applied: the loop is not innermost
// REMARK-NOT: remark:
tt.func public @declined(%a: !tt.ptr<f16>, %c: !tt.ptr<f32>, %n: i32) {
  %zero = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %pa = tt.splat %a : !tt.ptr<f16> -> tensor<16x16x!tt.ptr<f16>>
  %r0 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<16x16xf32>) : i32 {
    %x = tt.load %pa : tensor<16x16x!tt.ptr<f16>>
    %d = tt.dot %x, %x, %acc : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %d : tensor<16x16xf32>
  } {tt.loop_unroll_factor = 3 : i32}
  %r1 = scf.for unsigned %k = %c0 to %n step %c1 iter_args(%acc = %r0) -> (tensor<16x16xf32>) : i32 {
    %x = tt.load %pa : tensor<16x16x!tt.ptr<f16>>
    %d = tt.dot %x, %x, %acc : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %d : tensor<16x16xf32>
  }
  %x0 = tt.load %pa : tensor<16x16x!tt.ptr<f16>>
  %r2 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %r1) -> (tensor<16x16xf32>) : i32 {
    %d = tt.dot %x0, %x0, %acc : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %d : tensor<16x16xf32>
  }
  %r3 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %r2) -> (tensor<16x16xf32>) : i32 {
    %inner = scf.for %k = %c0 to %n step %c1 iter_args(%acc2 = %acc) -> (tensor<16x16xf32>) : i32 {
      %x = tt.load %pa : tensor<16x16x!tt.ptr<f16>>
      %d = tt.dot %x, %x, %acc2 : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
      scf.yield %d : tensor<16x16xf32>
    }
    scf.yield %inner : tensor<16x16xf32>
  }
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<16x16xf32>) : i32 {
    %x = tt.load %pa : tensor<16x16x!tt.ptr<f16>>
    %xf = arith.extf %x : tensor<16x16xf16> to tensor<16x16xf32>
    %y = arith.addf %acc, %xf : tensor<16x16xf32>
    scf.yield %y : tensor<16x16xf32>
  }
  %pc = tt.splat %c : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
  tt.store %pc, %r3 : tensor<16x16x!tt.ptr<f32>>
  tt.store %pc, %s : tensor<16x16x!tt.ptr<f32>>
  tt.return
}

// -----

// An index-typed loop (Triton's are i32 or i64): the guard needs the width, so it is left alone.
// CHECK-LABEL: tt.func public @index_loop
// CHECK-NOT:     scf.if
// CHECK-NOT:     tt.loop_unroll_factor
// REMARK: remark: unroll_dot_loops: not applied: the loop's induction variable is not an integer (the guard needs its width)
tt.func public @index_loop(%a: !tt.ptr<f16>, %c: !tt.ptr<f32>, %n: index) {
  %zero = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %pa = tt.splat %a : !tt.ptr<f16> -> tensor<16x16x!tt.ptr<f16>>
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<16x16xf32>) {
    %x = tt.load %pa : tensor<16x16x!tt.ptr<f16>>
    %d = tt.dot %x, %x, %acc : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %d : tensor<16x16xf32>
  }
  %pc = tt.splat %c : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
  tt.store %pc, %r : tensor<16x16x!tt.ptr<f32>>
  tt.return
}
