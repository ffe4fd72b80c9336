// RUN: %opt %s -split-input-file --pass loop_split,canonicalize,cse --no-debug-info | FileCheck %s
// RUN: %opt %s -split-input-file --pass loop_split --no-debug-info | FileCheck %s --check-prefix=UNCHANGED
// RUN: %opt %s -split-input-file --pass 'loop_split{max-parts=2},canonicalize,cse' --no-debug-info | FileCheck %s --check-prefix=PARTS2

// Scalar `iv < diag`: two loops, split at diag rounded up to the step; the
// select folds to %x in the first loop and to %y in the second. Neither side
// does arithmetic, so no guard is needed and no comparing loop is kept.
// CHECK-LABEL: tt.func @split_at_slt
// CHECK-DAG:     %[[C63:.*]] = arith.constant 63 : i64
// CHECK-DAG:     %[[C64:.*]] = arith.constant 64 : i64
// CHECK:         %[[DIAG:.*]] = arith.extsi %arg1 : i32 to i64
// CHECK:         %[[LO:.*]] = arith.maxsi %[[DIAG]], %{{.*}} : i64
// CHECK:         %[[N:.*]] = arith.extsi %arg0 : i32 to i64
// CHECK:         %[[UBE:.*]] = arith.maxsi %[[N]], %{{.*}} : i64
// CHECK:         %[[M:.*]] = arith.minsi %[[LO]], %[[UBE]] : i64
// CHECK:         %[[M32:.*]] = arith.trunci %[[M]] : i64 to i32
// CHECK:         %[[UP:.*]] = arith.addi %[[M]], %[[C63]] : i64
// CHECK:         %[[Q:.*]] = arith.divui %[[UP]], %[[C64]] : i64
// CHECK:         %[[R0:.*]] = arith.muli %[[Q]], %[[C64]] : i64
// CHECK:         %[[R:.*]] = arith.minsi %[[R0]], %[[UBE]] : i64
// CHECK:         %[[R32:.*]] = arith.trunci %[[R]] : i64 to i32
// CHECK-NOT:     arith.select
// CHECK:         %[[FIRST:.*]] = scf.for %{{.*}} = %{{.*}} to %[[M32]] step %{{.*}} iter_args(%[[A:.*]] = %{{.*}})
// CHECK-NOT:       arith.cmpi
// CHECK-NOT:       arith.select
// CHECK:           arith.addf %[[A]], %arg2 : f32
// CHECK:         scf.for %{{.*}} = %[[R32]] to %arg0 step %{{.*}} iter_args(%[[B:.*]] = %[[FIRST]])
// CHECK-NOT:       arith.cmpi
// CHECK-NOT:       arith.select
// CHECK:           arith.addf %[[B]], %arg3 : f32
// CHECK-NOT:     scf.for
// CHECK:         tt.return
tt.func @split_at_slt(%n: i32, %diag: i32, %x: f32, %y: f32) -> f32 {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %init = arith.constant 0.0 : f32
  %r = scf.for %iv = %c0 to %n step %c64 iter_args(%a = %init) -> (f32) : i32 {
    %c = arith.cmpi slt, %iv, %diag : i32
    %v = arith.select %c, %x, %y : f32
    %s = arith.addf %a, %v : f32
    scf.yield %s : f32
  }
  tt.return %r : f32
}

// -----

// Invariant on the left (`diag <= iv`), step 1: the split point needs no
// rounding; the first loop takes %y (false), the second %x.
// CHECK-LABEL: tt.func @split_invariant_on_left
// CHECK:         %[[M:.*]] = arith.minsi
// CHECK:         %[[M32:.*]] = arith.trunci %[[M]] : i64 to i32
// CHECK:         %[[FIRST:.*]] = scf.for %{{.*}} = %{{.*}} to %[[M32]] step
// CHECK-NEXT:      arith.addf %{{.*}}, %arg3
// CHECK:         scf.for %{{.*}} = %[[M32]] to %arg0 step %{{.*}} iter_args(%{{.*}} = %[[FIRST]])
// CHECK-NEXT:      arith.addf %{{.*}}, %arg2
tt.func @split_invariant_on_left(%n: i32, %diag: i32, %x: f32, %y: f32) -> f32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %init = arith.constant 0.0 : f32
  %r = scf.for %iv = %c0 to %n step %c1 iter_args(%a = %init) -> (f32) : i32 {
    %c = arith.cmpi sle, %diag, %iv : i32
    %v = arith.select %c, %x, %y : f32
    %s = arith.addf %a, %v : f32
    scf.yield %s : f32
  }
  tt.return %r : f32
}

// -----

// Constant bounds: `iv > 100` over 0..256 step 64 flips at 101 (iterations
// 0, 64 false); the first iteration from there is 128, which ends the first
// loop and starts the second (issue 17: one split point on the lattice).
// CHECK-LABEL: tt.func @split_static_bounds
// CHECK-DAG:     %[[C128:.*]] = arith.constant 128 : i32
// CHECK-NOT:     arith.extsi
// CHECK:         %[[FIRST:.*]] = scf.for %{{.*}} = %{{.*}} to %[[C128]] step
// CHECK-NEXT:      arith.addf %{{.*}}, %arg1
// CHECK:         scf.for %{{.*}} = %[[C128]] to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[FIRST]])
// CHECK-NEXT:      arith.addf %{{.*}}, %arg0
tt.func @split_static_bounds(%x: f32, %y: f32) -> f32 {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %c100 = arith.constant 100 : i32
  %c256 = arith.constant 256 : i32
  %init = arith.constant 0.0 : f32
  %r = scf.for %iv = %c0 to %c256 step %c64 iter_args(%a = %init) -> (f32) : i32 {
    %c = arith.cmpi sgt, %iv, %c100 : i32
    %v = arith.select %c, %x, %y : f32
    %s = arith.addf %a, %v : f32
    scf.yield %s : f32
  }
  tt.return %r : f32
}

// -----

// Every iteration is below the flip point: one loop, comparison folded.
// CHECK-LABEL: tt.func @fold_whole_loop
// CHECK:         scf.for
// CHECK-NEXT:      arith.addf %{{.*}}, %arg0
// CHECK-NOT:     scf.for
tt.func @fold_whole_loop(%x: f32, %y: f32) -> f32 {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %c1000 = arith.constant 1000 : i32
  %c256 = arith.constant 256 : i32
  %init = arith.constant 0.0 : f32
  %r = scf.for %iv = %c0 to %c256 step %c64 iter_args(%a = %init) -> (f32) : i32 {
    %c = arith.cmpi slt, %iv, %c1000 : i32
    %v = arith.select %c, %x, %y : f32
    %s = arith.addf %a, %v : f32
    scf.yield %s : f32
  }
  tt.return %r : f32
}

// -----

// i64 loop, unsigned predicate: unsigned and signed order agree only on
// non-negative values, so the guard requires diag >= 0 (lb = 0 is known to
// be). The guard can fail at run time, so three loops: below diag (%x),
// a middle loop that keeps the comparison, from diag on (%y). When the guard
// holds the middle loop is empty; when it fails (diag < 0: the unsigned
// comparison is false on every iteration) the first and last loops are empty
// and every iteration runs in the middle one (issue 14: it used to be folded
// away, n=64, diag=-1 gave 0.0 instead of 4.0).
// CHECK-LABEL: tt.func @split_i64_unsigned
// CHECK-NOT:     1152921504606846976
// CHECK:         %[[M:.*]] = arith.minsi
// CHECK:         %[[OK:.*]] = arith.cmpi sge, %arg1, %{{.*}} : i64
// CHECK:         %[[M1:.*]] = arith.select %[[OK]], %[[M]], %{{.*}} : i64
// CHECK:         %[[R1:.*]] = arith.select %[[OK]], %{{.*}}, %{{.*}} : i64
// CHECK:         %[[M2:.*]] = arith.select %[[OK]], %[[M]], %[[UBE:.*]] : i64
// CHECK:         %[[R2:.*]] = arith.select %[[OK]], %{{.*}}, %[[UBE]] : i64
// CHECK:         %[[FIRST:.*]] = scf.for %{{.*}} = %{{.*}} to %[[M1]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f32) : i64
// CHECK-NEXT:      arith.addf %{{.*}}, %arg2
// CHECK:         %[[MID:.*]] = scf.for %[[IV:.*]] = %[[R1]] to %[[M2]] step {{.*}} iter_args(%{{.*}} = %[[FIRST]]) -> (f32) : i64
// CHECK-NEXT:      arith.cmpi ult, %[[IV]], %arg1 : i64
// CHECK-NEXT:      arith.select
// CHECK:         scf.for %{{.*}} = %[[R2]] to %arg0 step {{.*}} iter_args(%{{.*}} = %[[MID]]) -> (f32) : i64
// CHECK-NEXT:      arith.addf %{{.*}}, %arg3
// PARTS2-LABEL: tt.func @split_i64_unsigned
// PARTS2:         scf.for
// PARTS2-NEXT:      arith.addf %{{.*}}, %arg2
// PARTS2:         scf.for %{{.*}} to %arg0
// PARTS2-NEXT:      arith.cmpi ult
// PARTS2-NOT:     scf.for
// PARTS2:         tt.return
tt.func @split_i64_unsigned(%n: i64, %diag: i64, %x: f32, %y: f32) -> f32 {
  %c0 = arith.constant 0 : i64
  %c16 = arith.constant 16 : i64
  %init = arith.constant 0.0 : f32
  %r = scf.for %iv = %c0 to %n step %c16 iter_args(%a = %init) -> (f32) : i64 {
    %c = arith.cmpi ult, %iv, %diag : i64
    %v = arith.select %c, %x, %y : f32
    %s = arith.addf %a, %v : f32
    scf.yield %s : f32
  }
  tt.return %r : f32
}

// -----

// Scalar form as Triton emits `if start_n >= diag:`: the first part runs
// the else branch (identity), so canonicalize removes it; the second part
// runs the then branch unconditionally.
// CHECK-LABEL: tt.func @split_scf_if
// CHECK:         scf.for
// CHECK-NOT:       scf.if
// CHECK:           arith.mulf
// CHECK-NOT:     scf.for
tt.func @split_scf_if(%n: i32, %diag: i32, %x: tensor<16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %r = scf.for %iv = %c0 to %n step %c16 iter_args(%a = %x) -> (tensor<16xf32>) : i32 {
    %c = arith.cmpi sge, %iv, %diag : i32
    %v = scf.if %c -> (tensor<16xf32>) {
      %m = arith.mulf %a, %a : tensor<16xf32>
      scf.yield %m : tensor<16xf32>
    } else {
      scf.yield %a : tensor<16xf32>
    }
    scf.yield %v : tensor<16xf32>
  }
  tt.return %r : tensor<16xf32>
}

// -----

// Causal mask `offs_m[:, None] >= start_n + offs_n[None, :]`: all true for
// start_n < m0 - 62, all false from m0 + 128 on (m0 = start_m * 128). As m0
// is a multiple of the step 64 (and lb = 0), the first iteration at or after
// m0 - 62 is m0 itself: the split points are clamps of m0 and m0 + 128, with
// no division, and each loop ends where the next starts (issue 17). The
// loop runs to an unrelated %n_ctx, so three loops; only the middle one
// keeps the compare and the select. The guard checks that neither side can
// wrap: (n_ctx - 1) + 63 <= INT32_MAX and m0 + 127 <= INT32_MAX, each one
// comparison with a constant. Every loop attribute tl.range sets (num_stages,
// unroll factor, disallow_acc_multi_buffer, warp_specialize, disable_licm) is
// copied to every part (tt.flatten nests are left alone: loop-split-limits.mlir).
// CHECK-LABEL: tt.func @causal_mask
// CHECK-DAG:     %[[UBMAX:.*]] = arith.constant 2147483585 : i32
// CHECK-DAG:     %[[M0MAX:.*]] = arith.constant 2147483520 : i32
// CHECK-DAG:     %[[K2:.*]] = arith.constant 128 : i64
// CHECK-DAG:     %[[NINF:.*]] = arith.constant dense<0xFF800000> : tensor<128x64xf32>
// CHECK:         %[[M0:.*]] = arith.muli %arg0,
// CHECK:         %[[M0W:.*]] = arith.extsi %[[M0]] : i32 to i64
// CHECK:         arith.maxsi %[[M0W]],
// CHECK:         %[[OK1:.*]] = arith.cmpi sle, %arg1, %[[UBMAX]] : i32
// CHECK:         %[[OK2:.*]] = arith.cmpi sle, %[[M0]], %[[M0MAX]] : i32
// CHECK:         arith.andi %[[OK1]], %[[OK2]] : i1
// CHECK:         %[[S1:.*]] = arith.trunci
// CHECK:         arith.addi %[[M0W]], %[[K2]] : i64
// CHECK-NOT:     arith.divui
// CHECK:         %[[S2:.*]] = arith.trunci
// CHECK:         %[[L1:.*]] = scf.for %{{.*}} = %{{.*}} to %[[S1]] step
// CHECK-NOT:       arith.cmpi
// CHECK-NOT:       arith.select
// CHECK:           arith.addf %{{.*}}, %arg2 : tensor<128x64xf32>
// CHECK:         } {llvm.loop_annotation = #[[LICM:[^,]+]], tt.disallow_acc_multi_buffer, tt.loop_unroll_factor = 1 : i32, tt.num_stages = 3 : i32, tt.warp_specialize}
// CHECK:         %[[L2:.*]] = scf.for %{{.*}} = %[[S1]] to %[[S2]] step {{.*}} iter_args(%{{.*}} = %[[L1]])
// CHECK:           arith.cmpi sge, %{{.*}}, %{{.*}} : tensor<128x64xi32>
// CHECK:           arith.select
// CHECK:         } {llvm.loop_annotation = #[[LICM]], tt.disallow_acc_multi_buffer, tt.loop_unroll_factor = 1 : i32, tt.num_stages = 3 : i32, tt.warp_specialize}
// CHECK:         scf.for %{{.*}} = %[[S2]] to %arg1 step {{.*}} iter_args(%{{.*}} = %[[L2]])
// CHECK-NOT:       arith.cmpi
// CHECK:           arith.addf %{{.*}}, %[[NINF]] : tensor<128x64xf32>
// CHECK:         } {llvm.loop_annotation = #[[LICM]], tt.disallow_acc_multi_buffer, tt.loop_unroll_factor = 1 : i32, tt.num_stages = 3 : i32, tt.warp_specialize}
tt.func @causal_mask(%start_m: i32, %n_ctx: i32, %qk: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %m0 = arith.muli %start_m, %c128 : i32
  %rm = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %sm = tt.splat %m0 : i32 -> tensor<128xi32>
  %offs_m = arith.addi %sm, %rm : tensor<128xi32>
  %offs_n = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %em = tt.expand_dims %offs_m {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %en = tt.expand_dims %offs_n {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %hi0 = arith.addi %start_m, %c1 : i32
  %hi = arith.muli %hi0, %c128 : i32
  %r = scf.for %start_n = %c0 to %n_ctx step %c64 iter_args(%acc = %qk) -> (tensor<128x64xf32>) : i32 {
    %sn = tt.splat %start_n : i32 -> tensor<1x64xi32>
    %cols = arith.addi %sn, %en : tensor<1x64xi32>
    %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x64xi32>
    %bn = tt.broadcast %cols : tensor<1x64xi32> -> tensor<128x64xi32>
    %mask = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
    %s = arith.select %mask, %qk, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
    %n = arith.addf %acc, %s : tensor<128x64xf32>
    scf.yield %n : tensor<128x64xf32>
  } {tt.num_stages = 3 : i32, tt.loop_unroll_factor = 1 : i32, tt.disallow_acc_multi_buffer, tt.warp_specialize, llvm.loop_annotation = #llvm.loop_annotation<licm = <disable = true>>}
  tt.return %r : tensor<128x64xf32>
}

// -----

// 1-D boundary mask `iv + arange(0, 64) < N` in a loop to N: true below
// N - 63, false from N on, which is past the loop (ub and comparand are the
// same value), so two loops: unmasked, then the tail block masked.
// CHECK-LABEL: tt.func @boundary_mask_1d
// CHECK:         arith.constant -63 : i64
// CHECK:         scf.for
// CHECK-NOT:       arith.cmpi
// CHECK:         scf.for %{{.*}} = %{{.*}} to %arg0
// CHECK:           arith.cmpi slt
// CHECK-NOT:     scf.for
// CHECK:         tt.return
// PARTS2-LABEL: tt.func @boundary_mask_1d
// PARTS2:         scf.for
// PARTS2-NOT:       arith.cmpi
// PARTS2:         scf.for %{{.*}} = %{{.*}} to %arg0
// PARTS2:           arith.cmpi slt
// PARTS2-NOT:     scf.for
// PARTS2:         tt.return
tt.func @boundary_mask_1d(%N: i32, %x: tensor<64xf32>) -> tensor<64xf32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64xf32>
  %offs = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %nn = tt.splat %N : i32 -> tensor<64xi32>
  %r = scf.for %iv = %c0 to %N step %c64 iter_args(%acc = %zero) -> (tensor<64xf32>) : i32 {
    %s = tt.splat %iv : i32 -> tensor<64xi32>
    %o = arith.addi %s, %offs : tensor<64xi32>
    %mask = arith.cmpi slt, %o, %nn : tensor<64xi32>
    %v = arith.select %mask, %x, %zero : tensor<64xi1>, tensor<64xf32>
    %n = arith.addf %acc, %v : tensor<64xf32>
    scf.yield %n : tensor<64xf32>
  }
  tt.return %r : tensor<64xf32>
}

// -----

// A mask against a loaded tensor has no known bounds: unchanged.
// CHECK-LABEL: tt.func @negative_data_dependent_mask
// UNCHANGED-LABEL: tt.func @negative_data_dependent_mask
// UNCHANGED-NOT:   arith.extsi
// UNCHANGED:       scf.for
// UNCHANGED:         arith.cmpi
// UNCHANGED-NOT:   scf.for
// UNCHANGED:       tt.return
tt.func @negative_data_dependent_mask(%p: tensor<64x!tt.ptr<i32>>, %n: i32, %x: tensor<64xf32>) -> tensor<64xf32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64xf32>
  %bound = tt.load %p : tensor<64x!tt.ptr<i32>>
  %offs = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %r = scf.for %iv = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<64xf32>) : i32 {
    %s = tt.splat %iv : i32 -> tensor<64xi32>
    %o = arith.addi %s, %offs : tensor<64xi32>
    %mask = arith.cmpi slt, %o, %bound : tensor<64xi32>
    %v = arith.select %mask, %x, %zero : tensor<64xi1>, tensor<64xf32>
    %a = arith.addf %acc, %v : tensor<64xf32>
    scf.yield %a : tensor<64xf32>
  }
  tt.return %r : tensor<64xf32>
}

// -----

// The comparand is computed inside the loop: unchanged.
// CHECK-LABEL: tt.func @negative_comparand_in_loop
// UNCHANGED-LABEL: tt.func @negative_comparand_in_loop
// UNCHANGED-NOT:   arith.extsi
// UNCHANGED:       scf.for
// UNCHANGED:         arith.cmpi
// UNCHANGED-NOT:   scf.for
// UNCHANGED:       tt.return
tt.func @negative_comparand_in_loop(%n: i32, %d: i32, %x: f32, %y: f32) -> f32 {
  %c0 = arith.constant 0 : i32
  %c2 = arith.constant 2 : i32
  %c64 = arith.constant 64 : i32
  %init = arith.constant 0.0 : f32
  %r = scf.for %iv = %c0 to %n step %c64 iter_args(%a = %init) -> (f32) : i32 {
    %diag = arith.muli %d, %c2 : i32
    %c = arith.cmpi slt, %iv, %diag : i32
    %v = arith.select %c, %x, %y : f32
    %s = arith.addf %a, %v : f32
    scf.yield %s : f32
  }
  tt.return %r : f32
}

// -----

// A non-constant step (its sign is unknown): unchanged.
// CHECK-LABEL: tt.func @negative_dynamic_step
// UNCHANGED-LABEL: tt.func @negative_dynamic_step
// UNCHANGED-NOT:   arith.extsi
// UNCHANGED:       scf.for
// UNCHANGED:         arith.cmpi
// UNCHANGED-NOT:   scf.for
// UNCHANGED:       tt.return
tt.func @negative_dynamic_step(%n: i32, %step: i32, %diag: i32, %x: f32, %y: f32) -> f32 {
  %c0 = arith.constant 0 : i32
  %init = arith.constant 0.0 : f32
  %r = scf.for %iv = %c0 to %n step %step iter_args(%a = %init) -> (f32) : i32 {
    %c = arith.cmpi slt, %iv, %diag : i32
    %v = arith.select %c, %x, %y : f32
    %s = arith.addf %a, %v : f32
    scf.yield %s : f32
  }
  tt.return %r : f32
}

// -----

// An i64 offset of 2^62 is beyond the 2^40 bound that rules out wrapping: unchanged.
// CHECK-LABEL: tt.func @negative_possible_wrap
// UNCHANGED-LABEL: tt.func @negative_possible_wrap
// UNCHANGED-NOT:   arith.extsi
// UNCHANGED:       scf.for
// UNCHANGED:         arith.cmpi
// UNCHANGED-NOT:   scf.for
// UNCHANGED:       tt.return
tt.func @negative_possible_wrap(%n: i64, %x: tensor<64xf32>) -> tensor<64xf32> {
  %c0 = arith.constant 0 : i64
  %c64 = arith.constant 64 : i64
  %big = arith.constant dense<4611686018427387904> : tensor<64xi64>
  %zero = arith.constant dense<0.0> : tensor<64xf32>
  %nn = tt.splat %n : i64 -> tensor<64xi64>
  %r = scf.for %iv = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<64xf32>) : i64 {
    %s = tt.splat %iv : i64 -> tensor<64xi64>
    %o = arith.addi %s, %big : tensor<64xi64>
    %mask = arith.cmpi slt, %o, %nn : tensor<64xi64>
    %v = arith.select %mask, %x, %zero : tensor<64xi1>, tensor<64xf32>
    %a = arith.addf %acc, %v : tensor<64xf32>
    scf.yield %a : tensor<64xf32>
  }
  tt.return %r : tensor<64xf32>
}

// -----

// eq/ne are not constant on either side of one point: unchanged.
// CHECK-LABEL: tt.func @negative_equality
// UNCHANGED-LABEL: tt.func @negative_equality
// UNCHANGED-NOT:   arith.extsi
// UNCHANGED:       scf.for
// UNCHANGED:         arith.cmpi
// UNCHANGED-NOT:   scf.for
// UNCHANGED:       tt.return
tt.func @negative_equality(%n: i32, %diag: i32, %x: f32, %y: f32) -> f32 {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %init = arith.constant 0.0 : f32
  %r = scf.for %iv = %c0 to %n step %c64 iter_args(%a = %init) -> (f32) : i32 {
    %c = arith.cmpi eq, %iv, %diag : i32
    %v = arith.select %c, %x, %y : f32
    %s = arith.addf %a, %v : f32
    scf.yield %s : f32
  }
  tt.return %r : f32
}

// -----

// The only iteration (iv = 64) straddles the mask boundary: nothing would fold, unchanged.
// CHECK-LABEL: tt.func @negative_nothing_folds
// UNCHANGED-LABEL: tt.func @negative_nothing_folds
// UNCHANGED-NOT:   arith.extsi
// UNCHANGED:       scf.for
// UNCHANGED:         arith.cmpi
// UNCHANGED-NOT:   scf.for
// UNCHANGED:       tt.return
tt.func @negative_nothing_folds(%x: tensor<64xf32>) -> tensor<64xf32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %zero = arith.constant dense<0.0> : tensor<64xf32>
  %offs = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %nn = arith.constant dense<100> : tensor<64xi32>
  %r = scf.for %iv = %c64 to %c128 step %c64 iter_args(%acc = %zero) -> (tensor<64xf32>) : i32 {
    %s = tt.splat %iv : i32 -> tensor<64xi32>
    %o = arith.addi %s, %offs : tensor<64xi32>
    %mask = arith.cmpi slt, %o, %nn : tensor<64xi32>
    %v = arith.select %mask, %x, %zero : tensor<64xi1>, tensor<64xf32>
    %a = arith.addf %acc, %v : tensor<64xf32>
    scf.yield %a : tensor<64xf32>
  }
  tt.return %r : tensor<64xf32>
}

// -----

// A statically empty loop has no known part: unchanged.
// CHECK-LABEL: tt.func @negative_zero_trip
// UNCHANGED-LABEL: tt.func @negative_zero_trip
// UNCHANGED-NOT:   arith.extsi
// UNCHANGED:       scf.for
// UNCHANGED:         arith.cmpi
// UNCHANGED-NOT:   scf.for
// UNCHANGED:       tt.return
tt.func @negative_zero_trip(%x: f32, %y: f32) -> f32 {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %cm = arith.constant -64 : i32
  %c10 = arith.constant 10 : i32
  %init = arith.constant 0.0 : f32
  %r = scf.for %iv = %c0 to %cm step %c64 iter_args(%a = %init) -> (f32) : i32 {
    %c = arith.cmpi slt, %iv, %c10 : i32
    %v = arith.select %c, %x, %y : f32
    %s = arith.addf %a, %v : f32
    scf.yield %s : f32
  }
  tt.return %r : f32
}

// -----

// `j <= i` in a nest: the inner loop splits (i is invariant there); the outer
// loop does not, since for it the comparand j is defined inside.
// CHECK-LABEL: tt.func @nested_outer_iv_comparand
// CHECK:         scf.for %[[I:[^ ]*]] =
// CHECK:           arith.extsi %[[I]]
// CHECK:           scf.for
// CHECK-NEXT:        arith.addf %{{.*}}, %arg1
// CHECK:           scf.for
// CHECK-NEXT:        arith.addf %{{.*}}, %arg2
// CHECK-NOT:       arith.cmpi
// CHECK:           scf.yield
// UNCHANGED-LABEL: tt.func @nested_outer_iv_comparand
// UNCHANGED:       scf.for
// UNCHANGED-COUNT-2: scf.for
// UNCHANGED-NOT:   scf.for
// UNCHANGED:       tt.return
tt.func @nested_outer_iv_comparand(%n: i32, %x: f32, %y: f32) -> f32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %init = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %init) -> (f32) : i32 {
    %q = scf.for %j = %c0 to %n step %c1 iter_args(%b = %a) -> (f32) : i32 {
      %c = arith.cmpi sle, %j, %i : i32
      %v = arith.select %c, %x, %y : f32
      %s = arith.addf %b, %v : f32
      scf.yield %s : f32
    }
    scf.yield %q : f32
  }
  tt.return %r : f32
}

// -----

// As written in Triton, the loop ends at (start_m + 1) * 128 = m0 + 128: the
// all-false part is provably empty (same base, see linearDifference), so two
// loops.
// CHECK-LABEL: tt.func @causal_mask_ends_at_diagonal
// CHECK-NOT:     arith.divui
// CHECK:         %[[S:.*]] = arith.trunci
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[S]] step
// CHECK-NOT:       arith.cmpi
// CHECK:         scf.for %{{.*}} = %[[S]] to
// CHECK:           arith.cmpi sge
// CHECK-NOT:     scf.for
// CHECK:         tt.return
tt.func @causal_mask_ends_at_diagonal(%start_m: i32, %qk: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %m0 = arith.muli %start_m, %c128 : i32
  %rm = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %sm = tt.splat %m0 : i32 -> tensor<128xi32>
  %offs_m = arith.addi %sm, %rm : tensor<128xi32>
  %offs_n = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %em = tt.expand_dims %offs_m {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %en = tt.expand_dims %offs_n {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %hi0 = arith.addi %start_m, %c1 : i32
  %hi = arith.muli %hi0, %c128 : i32
  %r = scf.for %start_n = %c0 to %hi step %c64 iter_args(%acc = %qk) -> (tensor<128x64xf32>) : i32 {
    %sn = tt.splat %start_n : i32 -> tensor<1x64xi32>
    %cols = arith.addi %sn, %en : tensor<1x64xi32>
    %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x64xi32>
    %bn = tt.broadcast %cols : tensor<1x64xi32> -> tensor<128x64xi32>
    %mask = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
    %s = arith.select %mask, %qk, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
    %n = arith.addf %acc, %s : tensor<128x64xf32>
    scf.yield %n : tensor<128x64xf32>
  }
  tt.return %r : tensor<128x64xf32>
}

// -----

// The hand-split diagonal loop, m0 to m0 + 128: every iteration straddles
// the diagonal, nothing would fold: unchanged.
// CHECK-LABEL: tt.func @negative_diagonal_block_only
// UNCHANGED-LABEL: tt.func @negative_diagonal_block_only
// UNCHANGED-NOT:   arith.extsi
// UNCHANGED:       scf.for
// UNCHANGED:         arith.cmpi
// UNCHANGED-NOT:   scf.for
// UNCHANGED:       tt.return
tt.func @negative_diagonal_block_only(%start_m: i32, %qk: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %m0 = arith.muli %start_m, %c128 : i32
  %rm = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %sm = tt.splat %m0 : i32 -> tensor<128xi32>
  %offs_m = arith.addi %sm, %rm : tensor<128xi32>
  %offs_n = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %em = tt.expand_dims %offs_m {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %en = tt.expand_dims %offs_n {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %hi0 = arith.addi %start_m, %c1 : i32
  %hi = arith.muli %hi0, %c128 : i32
  %r = scf.for %start_n = %m0 to %hi step %c64 iter_args(%acc = %qk) -> (tensor<128x64xf32>) : i32 {
    %sn = tt.splat %start_n : i32 -> tensor<1x64xi32>
    %cols = arith.addi %sn, %en : tensor<1x64xi32>
    %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x64xi32>
    %bn = tt.broadcast %cols : tensor<1x64xi32> -> tensor<128x64xi32>
    %mask = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
    %s = arith.select %mask, %qk, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
    %n = arith.addf %acc, %s : tensor<128x64xf32>
    scf.yield %n : tensor<128x64xf32>
  }
  tt.return %r : tensor<128x64xf32>
}

// -----

// Lattice unknown (issue 17 negative cases): m0 = start_m * 96 is not a
// multiple of the step 64, and a step of 48 is not a power of two (residues
// mod 48 do not survive i32 wrapping), so the first iteration after the split
// point is found by rounding (divui) and the low part ends at the unrounded
// point.
// CHECK-LABEL: tt.func @lattice_unknown_scale
// CHECK:         arith.divui
// CHECK:         scf.for
// CHECK:         scf.for
// CHECK-LABEL: tt.func @lattice_unknown_step
// CHECK:         arith.divui
// CHECK:         scf.for
// CHECK:         scf.for
tt.func @lattice_unknown_scale(%start_m: i32, %x: f32, %y: f32) -> f32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c96 = arith.constant 96 : i32
  %init = arith.constant 0.0 : f32
  %m0 = arith.muli %start_m, %c96 : i32
  %hi0 = arith.addi %start_m, %c1 : i32
  %hi = arith.muli %hi0, %c96 : i32
  %r = scf.for %iv = %c0 to %hi step %c64 iter_args(%a = %init) -> (f32) : i32 {
    %c = arith.cmpi slt, %iv, %m0 : i32
    %v = arith.select %c, %x, %y : f32
    %s = arith.addf %a, %v : f32
    scf.yield %s : f32
  }
  tt.return %r : f32
}

// -----

tt.func @lattice_unknown_step(%start_m: i32, %x: f32, %y: f32) -> f32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c48 = arith.constant 48 : i32
  %c96 = arith.constant 96 : i32
  %init = arith.constant 0.0 : f32
  %m0 = arith.muli %start_m, %c96 : i32
  %hi0 = arith.addi %start_m, %c1 : i32
  %hi = arith.muli %hi0, %c96 : i32
  %r = scf.for %iv = %c0 to %hi step %c48 iter_args(%a = %init) -> (f32) : i32 {
    %c = arith.cmpi slt, %iv, %m0 : i32
    %v = arith.select %c, %x, %y : f32
    %s = arith.addf %a, %v : f32
    scf.yield %s : f32
  }
  tt.return %r : f32
}
