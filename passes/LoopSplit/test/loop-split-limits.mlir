// RUN: %opt %s -split-input-file --pass loop_split,canonicalize,cse --no-debug-info | FileCheck %s
// RUN: %opt %s -split-input-file --pass loop_split --no-debug-info | FileCheck %s --check-prefix=UNCHANGED
// RUN: %opt %s -split-input-file --pass 'loop_split{max-parts=2},canonicalize,cse' --no-debug-info | FileCheck %s --check-prefix=PARTS2

// Issue 14: LoopSplit must never drop iterations. These cases sit at the
// limits of the integer types: a guard that can fail at run time, a guard
// known to fail, bounds within one step of INT64_MAX, unsigned predicates and
// unsigned loops.

// `iv < n + 1` (i32, the sum in the loop as Triton emits it): n + 1 wraps for n = INT32_MAX, so the guard checks
// n <= INT32_MAX - 1 at run time. A loop that keeps the comparison sits
// between the two folded ones; when the guard fails the first and last are
// empty and the middle one runs [lb, ub) (it used to run nothing: 0 instead
// of 6560 on the H200 for ub = 8, n = 2^31 - 1).
// CHECK-LABEL: tt.func @guard_failure_keeps_comparing_loop
// CHECK-DAG:     %[[NMAX:.*]] = arith.constant 2147483646 : i32
// CHECK:         %[[OK:.*]] = arith.cmpi sle, %arg1, %[[NMAX]] : i32
// CHECK:         %[[M1:.*]] = arith.select %[[OK]], %[[M:.*]], %[[LB:.*]] : i64
// CHECK:         %[[M1T:.*]] = arith.trunci %[[M1]] : i64 to i32
// CHECK:         %[[M2:.*]] = arith.select %[[OK]], %[[M]], %[[UBE:.*]] : i64
// CHECK:         %[[M2T:.*]] = arith.trunci %[[M2]] : i64 to i32
// CHECK:         %[[L1:.*]] = scf.for %{{.*}} = %arg2 to %[[M1T]] step
// CHECK-NEXT:      arith.addf %{{.*}}, %arg3
// CHECK:         %[[L2:.*]] = scf.for %[[IV:.*]] = %[[M1T]] to %[[M2T]] step %{{.*}} iter_args(%{{.*}} = %[[L1]])
// CHECK:           arith.cmpi slt, %[[IV]], %{{.*}} : i32
// CHECK:           arith.select
// CHECK:         scf.for %{{.*}} = %[[M2T]] to %arg0 step %{{.*}} iter_args(%{{.*}} = %[[L2]])
// CHECK-NEXT:      arith.addf %{{.*}}, %arg4
// With two parts: the folded low part, then one comparing part to the end.
// PARTS2-LABEL: tt.func @guard_failure_keeps_comparing_loop
// PARTS2:         arith.cmpi sle, %arg1
// PARTS2:         scf.for
// PARTS2-NEXT:      arith.addf %{{.*}}, %arg3
// PARTS2:         scf.for %{{.*}} to %arg0
// PARTS2:           arith.cmpi slt
// PARTS2-NOT:     scf.for
// PARTS2:         tt.return
tt.func @guard_failure_keeps_comparing_loop(%ub: i32, %n: i32, %lb: i32, %x: f32, %y: f32) -> f32 {
  %c1 = arith.constant 1 : i32
  %init = arith.constant 0.0 : f32
  %r = scf.for %iv = %lb to %ub step %c1 iter_args(%a = %init) -> (f32) : i32 {
    %n1 = arith.addi %n, %c1 : i32
    %c = arith.cmpi slt, %iv, %n1 : i32
    %v = arith.select %c, %x, %y : f32
    %s = arith.addf %a, %v : f32
    scf.yield %s : f32
  }
  tt.return %r : f32
}

// -----

// i64 `iv < n` with neither side doing arithmetic: nothing can wrap, so no
// guard (no 2^60 bound on the values), two loops split exactly at n: the
// kernel of issue 14 launched with lb = 2^61 gives the same result split.
// CHECK-LABEL: tt.func @i64_scalar_needs_no_guard
// CHECK-NOT:     1152921504606846976
// CHECK-NOT:     arith.select
// CHECK:         %[[M:.*]] = arith.minsi
// CHECK-NOT:     arith.select
// CHECK:         %[[L1:.*]] = scf.for %{{.*}} = %arg0 to %[[M]] step
// CHECK-NEXT:      arith.addf %{{.*}}, %arg3
// CHECK:         scf.for %{{.*}} = %[[M]] to %arg1 step %{{.*}} iter_args(%{{.*}} = %[[L1]])
// CHECK-NEXT:      arith.addf %{{.*}}, %arg4
// CHECK-NOT:     scf.for
// CHECK:         tt.return
tt.func @i64_scalar_needs_no_guard(%lb: i64, %ub: i64, %n: i64, %x: f32, %y: f32) -> f32 {
  %c1 = arith.constant 1 : i64
  %init = arith.constant 0.0 : f32
  %r = scf.for %iv = %lb to %ub step %c1 iter_args(%a = %init) -> (f32) : i64 {
    %c = arith.cmpi slt, %iv, %n : i64
    %v = arith.select %c, %x, %y : f32
    %s = arith.addf %a, %v : f32
    scf.yield %s : f32
  }
  tt.return %r : f32
}

// -----

// lb = INT32_MIN and the iv side subtracts 64: the iv side wraps on the first
// iteration whatever the other values, so the guard is known to fail and the
// loop is left alone (it used to be split into one folded loop that ran
// nothing).
// CHECK-LABEL: tt.func @decline_guard_known_false
// UNCHANGED-LABEL: tt.func @decline_guard_known_false
// UNCHANGED-NOT:   arith.extsi
// UNCHANGED-NOT:   arith.select
// UNCHANGED:       scf.for
// UNCHANGED:         arith.cmpi slt
// UNCHANGED-NOT:   scf.for
// UNCHANGED:       tt.return
tt.func @decline_guard_known_false(%ub: i32, %n: i32, %x: f32, %y: f32) -> f32 {
  %cmin = arith.constant -2147483648 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %init = arith.constant 0.0 : f32
  %r = scf.for %iv = %cmin to %ub step %c1 iter_args(%a = %init) -> (f32) : i32 {
    %o = arith.subi %iv, %c64 : i32
    %c = arith.cmpi slt, %o, %n : i32
    %v = arith.select %c, %x, %y : f32
    %s = arith.addf %a, %v : f32
    scf.yield %s : f32
  }
  tt.return %r : f32
}

// -----

// i64 loop from INT64_MAX - 20 to INT64_MAX - 1, step 3: 7 iterations. The
// first iteration at or after m is found without computing
// lb + ceil((m - lb) / 3) * 3, which wraps for m = ub (it used to make the
// second loop start near INT64_MIN: about 6e18 iterations). Both loops start
// inside [lb, ub]; no bound is negative.
// CHECK-LABEL: tt.func @i64_near_int64_max
// CHECK-DAG:     %[[LB:.*]] = arith.constant 9223372036854775787 : i64
// CHECK-DAG:     %[[UB:.*]] = arith.constant 9223372036854775806 : i64
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : i64
// CHECK-NOT:     arith.constant -{{[0-9]+}} : i64
// CHECK:         %[[LO:.*]] = arith.maxsi %arg0, %[[LB]] : i64
// CHECK:         %[[M:.*]] = arith.minsi %[[LO]], %[[UB]] : i64
// CHECK:         %[[D:.*]] = arith.subi %[[M]], %[[LB]] : i64
// CHECK:         %[[Q:.*]] = arith.divui %[[D]], %[[C3]] : i64
// CHECK:         %[[QS:.*]] = arith.muli %[[Q]], %[[C3]] : i64
// CHECK:         %[[R0:.*]] = arith.addi %[[QS]], %[[LB]] : i64
// CHECK:         %[[FITS:.*]] = arith.cmpi ugt, %{{.*}}, %[[C3]] : i64
// CHECK:         %[[UP:.*]] = arith.select %[[FITS]], %{{.*}}, %[[UB]] : i64
// CHECK:         %[[EXACT:.*]] = arith.cmpi eq, %[[R0]], %[[M]] : i64
// CHECK:         %[[R:.*]] = arith.select %[[EXACT]], %[[M]], %[[UP]] : i64
// CHECK:         %[[L1:.*]] = scf.for %{{.*}} = %[[LB]] to %[[M]] step %[[C3]]
// CHECK-NEXT:      arith.addf %{{.*}}, %arg1
// CHECK:         scf.for %{{.*}} = %[[R]] to %[[UB]] step %[[C3]] iter_args(%{{.*}} = %[[L1]])
// CHECK-NEXT:      arith.addf %{{.*}}, %arg2
// CHECK-NOT:     scf.for
// CHECK:         tt.return
tt.func @i64_near_int64_max(%n: i64, %x: f32, %y: f32) -> f32 {
  %lb = arith.constant 9223372036854775787 : i64
  %ub = arith.constant 9223372036854775806 : i64
  %c3 = arith.constant 3 : i64
  %init = arith.constant 0.0 : f32
  %r = scf.for %iv = %lb to %ub step %c3 iter_args(%a = %init) -> (f32) : i64 {
    %c = arith.cmpi slt, %iv, %n : i64
    %v = arith.select %c, %x, %y : f32
    %s = arith.addf %a, %v : f32
    scf.yield %s : f32
  }
  tt.return %r : f32
}

// -----

// i32 loop at the top of the type, all constant: `iv < 2^31 - 6` over
// [2^31 - 21, 2^31 - 2) step 3 (iterations ..., 2^31 - 9 | 2^31 - 6, 2^31 - 3).
// CHECK-LABEL: tt.func @i32_near_int32_max_static
// CHECK-DAG:     %[[LB:.*]] = arith.constant 2147483627 : i32
// CHECK-DAG:     %[[M:.*]] = arith.constant 2147483642 : i32
// CHECK-DAG:     %[[UB:.*]] = arith.constant 2147483646 : i32
// CHECK:         %[[L1:.*]] = scf.for %{{.*}} = %[[LB]] to %[[M]] step
// CHECK-NEXT:      arith.addf %{{.*}}, %arg0
// CHECK:         scf.for %{{.*}} = %[[M]] to %[[UB]] step %{{.*}} iter_args(%{{.*}} = %[[L1]])
// CHECK-NEXT:      arith.addf %{{.*}}, %arg1
tt.func @i32_near_int32_max_static(%x: f32, %y: f32) -> f32 {
  %lb = arith.constant 2147483627 : i32
  %ub = arith.constant 2147483646 : i32
  %n = arith.constant 2147483642 : i32
  %c3 = arith.constant 3 : i32
  %init = arith.constant 0.0 : f32
  %r = scf.for %iv = %lb to %ub step %c3 iter_args(%a = %init) -> (f32) : i32 {
    %c = arith.cmpi slt, %iv, %n : i32
    %v = arith.select %c, %x, %y : f32
    %s = arith.addf %a, %v : f32
    scf.yield %s : f32
  }
  tt.return %r : f32
}

// -----

// Unsigned predicate on an i32 loop with a run-time lb: for lb < 0 (u32
// values >= 2^31) unsigned and signed order differ, so the guard requires
// lb >= 0 and n >= 0 and a comparing loop takes every iteration otherwise.
// CHECK-LABEL: tt.func @i32_unsigned_runtime_lb
// CHECK-DAG:     %[[Z:.*]] = arith.constant 0 : i32
// CHECK-DAG:     %[[OK1:.*]] = arith.cmpi sge, %arg0, %[[Z]] : i32
// CHECK-DAG:     %[[OK2:.*]] = arith.cmpi sge, %arg2, %[[Z]] : i32
// CHECK:         arith.andi
// CHECK:         scf.for
// CHECK-NEXT:      arith.addf %{{.*}}, %arg3
// CHECK:         scf.for
// CHECK-NEXT:      arith.cmpi ult
// CHECK:         scf.for
// CHECK-NEXT:      arith.addf %{{.*}}, %arg4
tt.func @i32_unsigned_runtime_lb(%lb: i32, %ub: i32, %n: i32, %x: f32, %y: f32) -> f32 {
  %c1 = arith.constant 1 : i32
  %init = arith.constant 0.0 : f32
  %r = scf.for %iv = %lb to %ub step %c1 iter_args(%a = %init) -> (f32) : i32 {
    %c = arith.cmpi ult, %iv, %n : i32
    %v = arith.select %c, %x, %y : f32
    %s = arith.addf %a, %v : f32
    scf.yield %s : f32
  }
  tt.return %r : f32
}

// -----

// i64 loop with an invariant on the iv side (`iv + a < b`): the sums have
// two unknown terms, so the guard bounds lb, ub, a and b by 2^60 and the
// comparing loop runs everything when it fails.
// CHECK-LABEL: tt.func @i64_invariant_on_iv_side
// CHECK-DAG:     %[[MAX:.*]] = arith.constant 1152921504606846976 : i64
// CHECK-DAG:     %[[MIN:.*]] = arith.constant -1152921504606846976 : i64
// CHECK:         arith.subi %arg3, %arg2 : i64
// CHECK-DAG:     arith.cmpi sge, %arg2, %[[MIN]] : i64
// CHECK-DAG:     arith.cmpi sle, %arg2, %[[MAX]] : i64
// CHECK-DAG:     arith.cmpi sge, %arg3, %[[MIN]] : i64
// CHECK-DAG:     arith.cmpi sle, %arg3, %[[MAX]] : i64
// CHECK:         scf.for
// CHECK-NEXT:      arith.addf %{{.*}}, %arg4
// CHECK:         scf.for
// CHECK-NEXT:      arith.addi
// CHECK-NEXT:      arith.cmpi slt
// CHECK:         scf.for
// CHECK-NEXT:      arith.addf %{{.*}}, %arg5
tt.func @i64_invariant_on_iv_side(%lb: i64, %ub: i64, %a: i64, %b: i64, %x: f32, %y: f32) -> f32 {
  %c1 = arith.constant 1 : i64
  %init = arith.constant 0.0 : f32
  %r = scf.for %iv = %lb to %ub step %c1 iter_args(%acc = %init) -> (f32) : i64 {
    %s0 = arith.addi %iv, %a : i64
    %c = arith.cmpi slt, %s0, %b : i64
    %v = arith.select %c, %x, %y : f32
    %s = arith.addf %acc, %v : f32
    scf.yield %s : f32
  }
  tt.return %r : f32
}

// -----

// `scf.for unsigned` orders its iterations by unsigned comparison; the split
// arithmetic is signed, so the loop is left alone.
// CHECK-LABEL: tt.func @decline_unsigned_loop
// UNCHANGED-LABEL: tt.func @decline_unsigned_loop
// UNCHANGED-NOT:   arith.extsi
// UNCHANGED:       scf.for unsigned
// UNCHANGED:         arith.cmpi slt
// UNCHANGED-NOT:   scf.for
// UNCHANGED:       tt.return
tt.func @decline_unsigned_loop(%ub: i32, %n: i32, %x: f32, %y: f32) -> f32 {
  %lb = arith.constant 2147483645 : i32
  %c1 = arith.constant 1 : i32
  %init = arith.constant 0.0 : f32
  %r = scf.for unsigned %iv = %lb to %ub step %c1 iter_args(%a = %init) -> (f32) : i32 {
    %c = arith.cmpi slt, %iv, %n : i32
    %v = arith.select %c, %x, %y : f32
    %s = arith.addf %a, %v : f32
    scf.yield %s : f32
  }
  tt.return %r : f32
}

// -----

// Issue 17: `tl.range(..., flatten=True)` asks Triton to fuse the nest under
// the marked loop into one loop; splitting the inner loop (or the marked one)
// would defeat it. Both are left alone.
// CHECK-LABEL: tt.func @flatten_nest_left_alone
// UNCHANGED-LABEL: tt.func @flatten_nest_left_alone
// UNCHANGED-NOT:   arith.extsi
// UNCHANGED:       scf.for
// UNCHANGED:         arith.cmpi slt
// UNCHANGED:         scf.for
// UNCHANGED:           arith.cmpi slt
// UNCHANGED:         }
// UNCHANGED-NOT:     scf.for
// UNCHANGED:       } {tt.flatten}
// UNCHANGED-NOT:   scf.for
// UNCHANGED:       tt.return
tt.func @flatten_nest_left_alone(%n: i32, %m: i32, %x: f32, %y: f32) -> f32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %init = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %init) -> (f32) : i32 {
    %ci = arith.cmpi slt, %i, %m : i32
    %w = arith.select %ci, %x, %y : f32
    %q = scf.for %j = %c0 to %n step %c1 iter_args(%b = %a) -> (f32) : i32 {
      %c = arith.cmpi slt, %j, %m : i32
      %v = arith.select %c, %x, %y : f32
      %s = arith.addf %b, %v : f32
      scf.yield %s : f32
    }
    %t = arith.addf %q, %w : f32
    scf.yield %t : f32
  } {tt.flatten}
  tt.return %r : f32
}

// -----

// Without the mark the same nest splits: the inner loop on the outer iv's
// invariant m, and the outer loop too: two outer loops of two inner ones.
// CHECK-LABEL: tt.func @unmarked_nest_splits
// CHECK-COUNT-6: scf.for
// CHECK-NOT:     scf.for
// CHECK:         tt.return
tt.func @unmarked_nest_splits(%n: i32, %m: i32, %x: f32, %y: f32) -> f32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %init = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %init) -> (f32) : i32 {
    %ci = arith.cmpi slt, %i, %m : i32
    %w = arith.select %ci, %x, %y : f32
    %q = scf.for %j = %c0 to %n step %c1 iter_args(%b = %a) -> (f32) : i32 {
      %c = arith.cmpi slt, %j, %m : i32
      %v = arith.select %c, %x, %y : f32
      %s = arith.addf %b, %v : f32
      scf.yield %s : f32
    }
    %t = arith.addf %q, %w : f32
    scf.yield %t : f32
  }
  tt.return %r : f32
}

// -----

// A causal mask over keys from the diagonal block on (lb = m0): nothing is
// known below m0 - 62 <= lb, so the low part is empty. With three parts: a
// comparing loop, then the all-false rest. With max-parts=2 the same two
// (it used to decline: two parts meant low + comparing rest only).
// CHECK-LABEL: tt.func @mask_from_diagonal
// CHECK:         scf.for %{{.*}} = %[[M0:[^ ]+]] to
// CHECK:           arith.cmpi sge
// CHECK:         scf.for
// CHECK-NOT:       arith.cmpi
// CHECK:         tt.return
// PARTS2-LABEL: tt.func @mask_from_diagonal
// PARTS2:         scf.for
// PARTS2:           arith.cmpi sge
// PARTS2:         scf.for %{{.*}} to %arg1
// PARTS2-NOT:       arith.cmpi
// PARTS2:         tt.return
tt.func @mask_from_diagonal(%start_m: i32, %n_ctx: i32, %qk: tensor<128x64xf32>) -> tensor<128x64xf32> {
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
  %r = scf.for %start_n = %m0 to %n_ctx step %c64 iter_args(%acc = %qk) -> (tensor<128x64xf32>) : i32 {
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
