// RUN: %opt %s -split-input-file --pass nvidia_auto_pdl --no-debug-info | FileCheck %s
// RUN: %opt %s -split-input-file --pass 'nvidia_auto_pdl{launch-dependents=after-wait}' --no-debug-info | FileCheck %s --check-prefix=EARLY
// RUN: %opt %s -split-input-file --pass 'nvidia_auto_pdl{launch-dependents=none}' --no-debug-info | FileCheck %s --check-prefix=NONE
// RUN: %opt %s -split-input-file --pass nvidia_auto_pdl,nvidia_auto_pdl --no-debug-info | FileCheck %s --check-prefix=TWICE

// Straight-line copy: the wait follows the pure index computation and comes
// before the load; the trigger follows the load (last read), before the store.
// CHECK: module attributes {triton_ext.launch_pdl = 1 : i32}
// CHECK-LABEL: tt.func public @copy
// CHECK:         tt.get_program_id x
// CHECK:         tt.addptr
// CHECK-NEXT:    tt.grid_dependency_wait
// CHECK-NEXT:    tt.load
// CHECK-NEXT:    tt.grid_dependency_launch_dependents
// CHECK:         tt.store
// CHECK-NOT:     tt.grid_dependency
// CHECK:         tt.return
// EARLY-LABEL: tt.func public @copy
// EARLY:         tt.grid_dependency_wait
// EARLY-NEXT:    tt.grid_dependency_launch_dependents
// EARLY-NEXT:    tt.load
// NONE-LABEL: tt.func public @copy
// NONE:          tt.grid_dependency_wait
// NONE-NOT:      tt.grid_dependency_launch_dependents
// NONE:          tt.return
// TWICE-LABEL: tt.func public @copy
// TWICE-COUNT-1: tt.grid_dependency_wait
// TWICE-COUNT-1: tt.grid_dependency_launch_dependents
// TWICE-NOT:     tt.grid_dependency
// TWICE:         tt.return
tt.func public @copy(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>) {
  %pid = tt.get_program_id x : i32
  %p = tt.addptr %x, %pid : !tt.ptr<f32>, i32
  %v = tt.load %p : !tt.ptr<f32>
  %q = tt.addptr %y, %pid : !tt.ptr<f32>, i32
  tt.store %q, %v : !tt.ptr<f32>
  tt.return
}

// -----

// Loads only inside a branch and a loop: the wait goes before the scf.if (the
// first op with effects), so it dominates the accesses in both; the trigger
// follows the loop, the last op that reads.
// CHECK-LABEL: tt.func public @branch_and_loop
// CHECK:         arith.cmpi
// CHECK-NEXT:    tt.grid_dependency_wait
// CHECK-NEXT:    scf.if
// CHECK:           tt.load
// CHECK:         } else {
// CHECK:           tt.atomic_rmw
// CHECK:         scf.for
// CHECK:           tt.load
// CHECK:         }
// CHECK-NEXT:    tt.grid_dependency_launch_dependents
// CHECK-NEXT:    tt.store
tt.func public @branch_and_loop(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %f0 = arith.constant 0.0 : f32
  %pid = tt.get_program_id x : i32
  %odd = arith.cmpi sgt, %pid, %c1 : i32
  %first = scf.if %odd -> (f32) {
    %v = tt.load %x : !tt.ptr<f32>
    scf.yield %v : f32
  } else {
    %old = tt.atomic_rmw fadd, acq_rel, gpu, %y, %f0 : (!tt.ptr<f32>, f32) -> f32
    scf.yield %old : f32
  }
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %first) -> (f32) : i32 {
    %p = tt.addptr %x, %i : !tt.ptr<f32>, i32
    %v = tt.load %p : !tt.ptr<f32>
    %a = arith.addf %acc, %v : f32
    scf.yield %a : f32
  }
  tt.store %y, %sum : !tt.ptr<f32>
  tt.return
}

// -----

// A store-only kernel still waits (before the store): it must not overwrite
// what the producer may still read or write. Nothing reads, so the trigger
// follows the wait.
// CHECK-LABEL: tt.func public @store_only
// CHECK:         tt.addptr %{{.*}} : tensor<4x!tt.ptr<f32>>
// CHECK-NEXT:    tt.grid_dependency_wait
// CHECK-NEXT:    tt.grid_dependency_launch_dependents
// CHECK-NEXT:    tt.store
tt.func public @store_only(%y: !tt.ptr<f32>) {
  %f1 = arith.constant 1.0 : f32
  %v = tt.splat %f1 : f32 -> tensor<4xf32>
  %r = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
  %ys = tt.splat %y : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>>
  %q = tt.addptr %ys, %r : tensor<4x!tt.ptr<f32>>, tensor<4xi32>
  tt.store %q, %v : tensor<4x!tt.ptr<f32>>
  tt.return
}

// -----

// Tensor descriptor loads count as global accesses; the noinline helper is not
// a kernel and gets nothing, and the call to it comes after the wait.
// CHECK-LABEL: tt.func private @helper
// CHECK-NOT:     tt.grid_dependency
// CHECK:         tt.return
// CHECK-LABEL: tt.func public @descriptor
// CHECK:         tt.grid_dependency_wait
// CHECK:         tt.descriptor_load
// CHECK:         tt.call @helper
// CHECK-NEXT:    tt.grid_dependency_launch_dependents
tt.func private @helper(%x: !tt.ptr<f32>) -> f32 attributes {noinline = true} {
  %v = tt.load %x : !tt.ptr<f32>
  tt.return %v : f32
}
tt.func public @descriptor(%d: !tt.tensordesc<16x16xf16>, %x: !tt.ptr<f32>, %y: !tt.ptr<f32>) {
  %c0 = arith.constant 0 : i32
  %t = tt.descriptor_load %d[%c0, %c0] : !tt.tensordesc<16x16xf16> -> tensor<16x16xf16>
  %v = tt.call @helper(%x) : (!tt.ptr<f32>) -> f32
  tt.store %y, %v : !tt.ptr<f32>
  tt.return
}
