// RUN: env TRITON_EXT_ENABLE=range_facts_lower %opt %s -split-input-file --pass loop_split,canonicalize,cse --no-debug-info | FileCheck %s

// Issue 17.3: facts the kernel states drop the no-wrap guard. With
// start_m = assume_range(pid, 0, 2^20), m0 = start_m * 128 <= 2^27 and
// ub = (start_m + 1) * 128 fit i32, so both guard checks (m0 + 127 <= INT32_MAX,
// (ub - 1) + 63 <= INT32_MAX) hold for every value the fact allows: no
// cmpi/select of a guard, the split point is the clamp of m0.
// CHECK-LABEL: tt.func @causal_fact_drops_guard
// CHECK-NOT:     arith.cmpi
// CHECK-NOT:     arith.select
// CHECK:         %[[S:.*]] = arith.trunci
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[S]] step
// CHECK-NOT:       arith.cmpi
// CHECK:         scf.for %{{.*}} = %[[S]] to
// CHECK:           arith.cmpi sge
tt.func @causal_fact_drops_guard(%pid: i32, %qk: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %start_m = triton_ext_range.assume_range %pid, 0, 1048576 : i32
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

// Negative: a fact up to 2^24 allows m0 = 2^31, which wraps: the guard stays.
// CHECK-LABEL: tt.func @causal_fact_too_wide_keeps_guard
// CHECK:         arith.cmpi sle
// CHECK:         arith.select
// CHECK:         scf.for
// CHECK:         scf.for
tt.func @causal_fact_too_wide_keeps_guard(%pid: i32, %qk: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %start_m = triton_ext_range.assume_range %pid, 0, 16777216 : i32
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

// A run-time divisor (issue 17: `offs_m // num_queries_per_kv`) needs k >= 1;
// k = assume_range(kq, 1, 16) proves it, so that check is not in the guard
// (the start_m fact removes the others): no guard at all.
// CHECK-LABEL: tt.func @divisor_fact_drops_guard
// CHECK-NOT:     arith.cmpi
// CHECK-NOT:     arith.select
// CHECK:         scf.for
// CHECK-NOT:       arith.cmpi
// CHECK:           scf.yield
// CHECK:         scf.for
// CHECK:           arith.cmpi sge
tt.func @divisor_fact_drops_guard(%pid: i32, %kq: i32, %qk: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %start_m = triton_ext_range.assume_range %pid, 0, 1048576 : i32
  %k = triton_ext_range.assume_range %kq, 1, 16 : i32
  %m0 = arith.muli %start_m, %c128 : i32
  %rm = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %ks = tt.splat %k : i32 -> tensor<128xi32>
  %packed = arith.divsi %rm, %ks : tensor<128xi32>
  %sm = tt.splat %m0 : i32 -> tensor<128xi32>
  %offs_m = arith.addi %sm, %packed : tensor<128xi32>
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
