// RUN: %opt %s -split-input-file --pass offset_overflow_check --no-debug-info | FileCheck %s
// Where the reporting paths go (record mode, print=none): in front of the
// first loop after the scalars they read, or before the `tt.return` when no
// loop follows (issue 32: torchao's int8 GEMM with all three checks kept the
// A/B pointer offsets' bounds and its epilogue's row and column offsets live
// across the K loop, 133 registers; in front of the loop, 128).

// A GEMM's shape: the A pointer offset before the K loop, the output offset
// in the epilogue, computed after the loop from the program id and the
// arguments (`pid * 64`, the stride). Both reporting paths -- the bounds test
// of the epilogue's offset included, on a copy of its arithmetic -- and both
// sites' records sit in front of the loop; after it, only the kernel's own
// code.
// CHECK-LABEL: tt.func @gemm_epilogue
// CHECK:         %[[ROW:.*]] = arith.muli %{{.*}}, %c64_i32 : i32
// CHECK:         %[[AWRAPS:.*]] = arith.ori
// CHECK:         %[[AREP:.*]]:2 = scf.if %[[AWRAPS]] -> (i32, i32) {
// CHECK:           scf.for
// CHECK:         } {llvm.loop_annotation
// CHECK:         arith.cmpi sgt, %[[AREP]]#0
// CHECK:         tt.atomic_rmw add
// CHECK:         %[[CWRAPS:.*]] = arith.ori
// CHECK:         %[[CREP:.*]]:2 = scf.if %[[CWRAPS]] -> (i32, i32) {
// CHECK:           scf.for
// CHECK:         } {llvm.loop_annotation
// CHECK:         arith.cmpi sgt, %[[CREP]]#0
// CHECK:         tt.atomic_rmw add
// CHECK:         scf.for {{.*}} -> (tensor<64x64xf32>)
// CHECK-NOT:     scf.if
// CHECK-NOT:     arith.extsi
// CHECK-NOT:     tt.atomic_rmw
// CHECK:         arith.muli %{{.*}}, %c64_i32 : i32
// CHECK-NOT:     scf.if
// CHECK-NOT:     arith.extsi
// CHECK-NOT:     tt.atomic_rmw
// CHECK:         tt.store
// CHECK-NEXT:    tt.return
tt.func @gemm_epilogue(%a: !tt.ptr<f32>, %c: !tt.ptr<f32>, %sa: i32, %sc: i32, %k: i32) {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %pid = tt.get_program_id x : i32
  %row = arith.muli %pid, %c64 : i32
  %rows = tt.splat %row : i32 -> tensor<64xi32>
  %ar = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %rm = arith.addi %rows, %ar : tensor<64xi32>
  %rm2 = tt.expand_dims %rm {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %sas = tt.splat %sa : i32 -> tensor<64x1xi32>
  %am = arith.muli %rm2, %sas : tensor<64x1xi32>
  %ac = tt.expand_dims %ar {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %amb = tt.broadcast %am : tensor<64x1xi32> -> tensor<64x64xi32>
  %acb = tt.broadcast %ac : tensor<1x64xi32> -> tensor<64x64xi32>
  %aoff = arith.addi %amb, %acb : tensor<64x64xi32>
  %as = tt.splat %a : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>>
  %ap = tt.addptr %as, %aoff : tensor<64x64x!tt.ptr<f32>>, tensor<64x64xi32>
  %acc = scf.for %i = %c0 to %k step %c64 iter_args(%s = %zero) -> (tensor<64x64xf32>) : i32 {
    %x = tt.load %ap : tensor<64x64x!tt.ptr<f32>>
    %t = arith.addf %s, %x : tensor<64x64xf32>
    scf.yield %t : tensor<64x64xf32>
  }
  // The epilogue recomputes the rows, scalar included: the reporting path
  // computes them again in front of the loop.
  %row2 = arith.muli %pid, %c64 : i32
  %rows2 = tt.splat %row2 : i32 -> tensor<64xi32>
  %ar2 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %cm = arith.addi %rows2, %ar2 : tensor<64xi32>
  %cm2 = tt.expand_dims %cm {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %scs = tt.splat %sc : i32 -> tensor<64x1xi32>
  %cmm = arith.muli %cm2, %scs : tensor<64x1xi32>
  %cn = tt.expand_dims %ar2 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %cmb = tt.broadcast %cmm : tensor<64x1xi32> -> tensor<64x64xi32>
  %cnb = tt.broadcast %cn : tensor<1x64xi32> -> tensor<64x64xi32>
  %coff = arith.addi %cmb, %cnb : tensor<64x64xi32>
  %cs = tt.splat %c : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>>
  %cp = tt.addptr %cs, %coff : tensor<64x64x!tt.ptr<f32>>, tensor<64x64xi32>
  tt.store %cp, %acc : tensor<64x64x!tt.ptr<f32>>
  tt.return
}

// -----

// Two loops: the first loop's offset (`i + arange`) is replayed between the
// loops (its bounds and trip count are not carried across the second), the
// second loop's at the end.
// CHECK-LABEL: tt.func @two_loops
// CHECK:         %[[ANY1:.*]] = arith.andi
// CHECK:         %[[R1:.*]] = scf.for
// CHECK-NOT:       scf.if
// CHECK:         }
// CHECK:         tt.store
// CHECK:         %[[REP1:.*]]:2 = scf.if %[[ANY1]] -> (i32, i32) {
// CHECK:         arith.cmpi sgt, %[[REP1]]#0
// CHECK:         tt.atomic_rmw add
// CHECK:         %[[ANY2:.*]] = arith.andi
// CHECK:         scf.for
// CHECK-NOT:       scf.if
// CHECK:         }
// CHECK:         %[[REP2:.*]]:2 = scf.if %[[ANY2]] -> (i32, i32) {
// CHECK:         arith.cmpi sgt, %[[REP2]]#0
// CHECK:         tt.atomic_rmw add
// CHECK:         tt.return
tt.func @two_loops(%p: !tt.ptr<f32>, %q: !tt.ptr<f32>, %n: i32, %m: i32) -> tensor<128xf32> {
  %c0 = arith.constant 0 : i32
  %c128 = arith.constant 128 : i32
  %zero = arith.constant dense<0.0> : tensor<128xf32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %qs = tt.splat %q : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %r = scf.for %i = %c0 to %n step %c128 iter_args(%acc = %zero) -> (tensor<128xf32>) : i32 {
    %is = tt.splat %i : i32 -> tensor<128xi32>
    %ar = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %off = arith.addi %is, %ar : tensor<128xi32>
    %pp = tt.addptr %ps, %off : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    %x = tt.load %pp : tensor<128x!tt.ptr<f32>>
    %s = arith.addf %acc, %x : tensor<128xf32>
    scf.yield %s : tensor<128xf32>
  }
  tt.store %ps, %r : tensor<128x!tt.ptr<f32>>
  %r2 = scf.for %j = %c0 to %m step %c128 iter_args(%acc = %zero) -> (tensor<128xf32>) : i32 {
    %js = tt.splat %j : i32 -> tensor<128xi32>
    %ar = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %off = arith.addi %js, %ar : tensor<128xi32>
    %qq = tt.addptr %qs, %off : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    %x = tt.load %qq : tensor<128x!tt.ptr<f32>>
    %s = arith.addf %acc, %x : tensor<128xf32>
    scf.yield %s : tensor<128xf32>
  }
  tt.return %r2 : tensor<128xf32>
}

// -----

// The same, but the second loop carries the first one's sums (a tile of
// loaded data live across it, like attention's Q): in front of it, the
// replay's registers would add to that tile's, so both replays go to the end.
// CHECK-LABEL: tt.func @two_loops_carried
// CHECK:         %[[ANY1:.*]] = arith.andi
// CHECK:         %[[R1:.*]] = scf.for
// CHECK-NOT:     scf.if
// CHECK:         %[[ANY2:.*]] = arith.andi
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %[[R1]])
// CHECK-NOT:       scf.if
// CHECK:         }
// CHECK:         scf.if %[[ANY1]] -> (i32, i32) {
// CHECK:         scf.if %[[ANY2]] -> (i32, i32) {
// CHECK:         tt.return
tt.func @two_loops_carried(%p: !tt.ptr<f32>, %q: !tt.ptr<f32>, %n: i32, %m: i32) -> tensor<128xf32> {
  %c0 = arith.constant 0 : i32
  %c128 = arith.constant 128 : i32
  %zero = arith.constant dense<0.0> : tensor<128xf32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %qs = tt.splat %q : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %r = scf.for %i = %c0 to %n step %c128 iter_args(%acc = %zero) -> (tensor<128xf32>) : i32 {
    %is = tt.splat %i : i32 -> tensor<128xi32>
    %ar = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %off = arith.addi %is, %ar : tensor<128xi32>
    %pp = tt.addptr %ps, %off : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    %x = tt.load %pp : tensor<128x!tt.ptr<f32>>
    %s = arith.addf %acc, %x : tensor<128xf32>
    scf.yield %s : tensor<128xf32>
  }
  %r2 = scf.for %j = %c0 to %m step %c128 iter_args(%acc = %r) -> (tensor<128xf32>) : i32 {
    %js = tt.splat %j : i32 -> tensor<128xi32>
    %ar = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %off = arith.addi %js, %ar : tensor<128xi32>
    %qq = tt.addptr %qs, %off : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    %x = tt.load %qq : tensor<128x!tt.ptr<f32>>
    %s = arith.addf %acc, %x : tensor<128xf32>
    scf.yield %s : tensor<128xf32>
  }
  tt.return %r2 : tensor<128xf32>
}

// -----

// An offset after the loop that reads a scalar the loop computes: its
// reporting path cannot go in front of the loop and stays at the end.
// CHECK-LABEL: tt.func @after_loop_scalar
// CHECK:         %[[N:.*]] = scf.for {{.*}} -> (i32)
// CHECK:         %[[ROW:.*]] = arith.muli %[[N]], %arg1 : i32
// CHECK:         tt.load
// CHECK:         scf.if %{{.*}} -> (i32, i32) {
// CHECK:         tt.atomic_rmw add
// CHECK:         tt.return
tt.func @after_loop_scalar(%p: !tt.ptr<f32>, %s: i32, %k: i32) -> tensor<128xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %n = scf.for %i = %c0 to %k step %c1 iter_args(%t = %c0) -> (i32) : i32 {
    %u = arith.addi %t, %i : i32
    scf.yield %u : i32
  }
  %row = arith.muli %n, %s : i32
  %rows = tt.splat %row : i32 -> tensor<128xi32>
  %ar = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %off = arith.addi %rows, %ar : tensor<128xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %off : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %x = tt.load %pp : tensor<128x!tt.ptr<f32>>
  tt.return %x : tensor<128xf32>
}

// -----

// A scalar offset that depends on the loop (a per-iteration scale pointer,
// torchao's fp8 block-scaled GEMM): its wrap is carried through the loop and
// counted after it; after the kernel's last loop its records are updated
// right there, before the epilogue, not after the epilogue's store (where the
// branch kept LLVM from sinking the epilogue's index arithmetic).
// CHECK-LABEL: tt.func @scalar_after_last_loop
// CHECK:         %[[R:.*]]:2 = scf.for {{.*}} -> (f32, i1)
// CHECK:         arith.extui %[[R]]#1 : i1 to i32
// CHECK:         scf.if
// CHECK:           tt.atomic_rmw add
// CHECK:         } {triton_ext.sanitizer_records}
// CHECK:         tt.store
// CHECK-NEXT:    tt.return
tt.func @scalar_after_last_loop(%p: !tt.ptr<f32>, %o: !tt.ptr<f32>, %s: i32, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) : i32 {
    %off = arith.muli %i, %s : i32
    %q = tt.addptr %p, %off : !tt.ptr<f32>, i32
    %x = tt.load %q : !tt.ptr<f32>
    %t = arith.addf %acc, %x : f32
    scf.yield %t : f32
  }
  tt.store %o, %r : !tt.ptr<f32>
  tt.return
}
