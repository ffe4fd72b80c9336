// RUN: %opt %s -split-input-file --pass loop_split,canonicalize,cse --no-debug-info | FileCheck %s

// The guard's facts come from MLIR's integer range analysis over the function
// (triton-ext/RangeAnalysis.h), so bounds the kernel computes count like
// stated ones: start_m = pid & (2^20 - 1) lies in [0, 2^20 - 1], so
// m0 = start_m * 128 + 127 and ub = (start_m + 1) * 128 fit i32 and both
// guard checks hold (loop-split-facts.mlir states the same bound with
// assume_range).
// CHECK-LABEL: tt.func @masked_pid_drops_guard
// CHECK-NOT:     arith.cmpi
// CHECK-NOT:     arith.select
// CHECK:         %[[S:.*]] = arith.trunci
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[S]] step
// CHECK-NOT:       arith.cmpi
// CHECK:         scf.for %{{.*}} = %[[S]] to
// CHECK:           arith.cmpi sge
tt.func @masked_pid_drops_guard(%pid: i32, %qk: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %low_bits = arith.constant 1048575 : i32
  %start_m = arith.andi %pid, %low_bits : i32
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

// Negative: pid & (2^24 - 1) allows ub = (start_m + 1) * 128 = 2^31, which
// wraps: the guard stays.
// CHECK-LABEL: tt.func @masked_pid_too_wide_keeps_guard
// CHECK:         arith.cmpi sle
// CHECK:         arith.select
// CHECK:         scf.for
// CHECK:         scf.for
tt.func @masked_pid_too_wide_keeps_guard(%pid: i32, %qk: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %low_bits = arith.constant 16777215 : i32
  %start_m = arith.andi %pid, %low_bits : i32
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
