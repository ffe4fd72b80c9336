// RUN: %opt %s -split-input-file --pass loop_split,canonicalize,cse --no-debug-info | FileCheck %s

// Issue 17: monotone maps of the constant part of a mask side. vLLM's unified
// attention packs num_queries_per_kv query heads along M, so its causal bound
// is `query_pos = q_block_start + offs_m // num_queries_per_kv`; with the
// constant divisor, offs_m // 4 over [0, 127] is [0, 31] (trunc division by a
// positive constant is nondecreasing). Likewise >> by a constant and min/max
// with constants. Each positive case splits into a loop without the compare
// and a loop that keeps it; negative cases are left unchanged.

// CHECK-LABEL: tt.func @gqa_divsi_const
// CHECK:         scf.for
// CHECK-NOT:       arith.cmpi
// CHECK:         scf.for
// CHECK:           arith.cmpi sge
tt.func @gqa_divsi_const(%q0: i32, %hi: i32, %x: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %c4 = arith.constant dense<4> : tensor<128xi32>
  %packed = arith.divsi %r, %c4 : tensor<128xi32>
  %qs = tt.splat %q0 : i32 -> tensor<128xi32>
  %qpos = arith.addi %qs, %packed : tensor<128xi32>
  %em = tt.expand_dims %qpos {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x64xi32>
  %offs_n = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %res = scf.for %start_n = %c0 to %hi step %c64 iter_args(%acc = %x) -> (tensor<128x64xf32>) : i32 {
    %sn = tt.splat %start_n : i32 -> tensor<64xi32>
    %cols = arith.addi %sn, %offs_n : tensor<64xi32>
    %en = tt.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %bn = tt.broadcast %en : tensor<1x64xi32> -> tensor<128x64xi32>
    %mask = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
    %s = arith.select %mask, %acc, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
    %n = arith.addf %acc, %s : tensor<128x64xf32>
    scf.yield %n : tensor<128x64xf32>
  }
  tt.return %res : tensor<128x64xf32>
}

// -----

// CHECK-LABEL: tt.func @gqa_divui_const
// CHECK:         scf.for
// CHECK-NOT:       arith.cmpi
// CHECK:         scf.for
// CHECK:           arith.cmpi sge
tt.func @gqa_divui_const(%q0: i32, %hi: i32, %x: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %c4 = arith.constant dense<4> : tensor<128xi32>
  %packed = arith.divui %r, %c4 : tensor<128xi32>
  %qs = tt.splat %q0 : i32 -> tensor<128xi32>
  %qpos = arith.addi %qs, %packed : tensor<128xi32>
  %em = tt.expand_dims %qpos {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x64xi32>
  %offs_n = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %res = scf.for %start_n = %c0 to %hi step %c64 iter_args(%acc = %x) -> (tensor<128x64xf32>) : i32 {
    %sn = tt.splat %start_n : i32 -> tensor<64xi32>
    %cols = arith.addi %sn, %offs_n : tensor<64xi32>
    %en = tt.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %bn = tt.broadcast %en : tensor<1x64xi32> -> tensor<128x64xi32>
    %mask = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
    %s = arith.select %mask, %acc, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
    %n = arith.addf %acc, %s : tensor<128x64xf32>
    scf.yield %n : tensor<128x64xf32>
  }
  tt.return %res : tensor<128x64xf32>
}

// -----

// CHECK-LABEL: tt.func @gqa_shrsi_const
// CHECK:         scf.for
// CHECK-NOT:       arith.cmpi
// CHECK:         scf.for
// CHECK:           arith.cmpi sge
tt.func @gqa_shrsi_const(%q0: i32, %hi: i32, %x: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %c2 = arith.constant dense<2> : tensor<128xi32>
  %packed = arith.shrsi %r, %c2 : tensor<128xi32>
  %qs = tt.splat %q0 : i32 -> tensor<128xi32>
  %qpos = arith.addi %qs, %packed : tensor<128xi32>
  %em = tt.expand_dims %qpos {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x64xi32>
  %offs_n = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %res = scf.for %start_n = %c0 to %hi step %c64 iter_args(%acc = %x) -> (tensor<128x64xf32>) : i32 {
    %sn = tt.splat %start_n : i32 -> tensor<64xi32>
    %cols = arith.addi %sn, %offs_n : tensor<64xi32>
    %en = tt.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %bn = tt.broadcast %en : tensor<1x64xi32> -> tensor<128x64xi32>
    %mask = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
    %s = arith.select %mask, %acc, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
    %n = arith.addf %acc, %s : tensor<128x64xf32>
    scf.yield %n : tensor<128x64xf32>
  }
  tt.return %res : tensor<128x64xf32>
}

// -----

// A clamp of the rows, min(max(r - 8, 0), 100): the interval [0, 100].
// CHECK-LABEL: tt.func @clamped_rows
// CHECK:         scf.for
// CHECK-NOT:       arith.cmpi
// CHECK:         scf.for
// CHECK:           arith.cmpi sge
tt.func @clamped_rows(%q0: i32, %hi: i32, %x: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %c8 = arith.constant dense<8> : tensor<128xi32>
  %z = arith.constant dense<0> : tensor<128xi32>
  %c100 = arith.constant dense<100> : tensor<128xi32>
  %d = arith.subi %r, %c8 : tensor<128xi32>
  %lo = arith.maxsi %d, %z : tensor<128xi32>
  %packed = arith.minsi %lo, %c100 : tensor<128xi32>
  %qs = tt.splat %q0 : i32 -> tensor<128xi32>
  %qpos = arith.addi %qs, %packed : tensor<128xi32>
  %em = tt.expand_dims %qpos {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x64xi32>
  %offs_n = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %res = scf.for %start_n = %c0 to %hi step %c64 iter_args(%acc = %x) -> (tensor<128x64xf32>) : i32 {
    %sn = tt.splat %start_n : i32 -> tensor<64xi32>
    %cols = arith.addi %sn, %offs_n : tensor<64xi32>
    %en = tt.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %bn = tt.broadcast %en : tensor<1x64xi32> -> tensor<128x64xi32>
    %mask = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
    %s = arith.select %mask, %acc, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
    %n = arith.addf %acc, %s : tensor<128x64xf32>
    scf.yield %n : tensor<128x64xf32>
  }
  tt.return %res : tensor<128x64xf32>
}

// -----

// A divisor known only at run time (num_queries_per_kv as an argument): for
// every k >= 1, r // k over r in [0, 127] lies in [0, 127]. The guard checks
// k >= 1 at run time (with k <= 0 only the comparing loop runs; the
// differential tests run that path).
// CHECK-LABEL: tt.func @divisor_at_run_time(
// CHECK-SAME:      %[[Q0:[a-z0-9]+]]: i32, %[[K:[a-z0-9]+]]: i32
// CHECK:         %[[KOK:.*]] = arith.cmpi sge, %[[K]], %c1_i32 : i32
// CHECK:         arith.andi %[[KOK]]
// CHECK:         scf.for
// CHECK-NOT:       arith.cmpi
// CHECK:           scf.yield
// CHECK:         scf.for
// CHECK:           arith.cmpi sge
tt.func @divisor_at_run_time(%q0: i32, %k: i32, %hi: i32, %x: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %ks = tt.splat %k : i32 -> tensor<128xi32>
  %packed = arith.divsi %r, %ks : tensor<128xi32>
  %qs = tt.splat %q0 : i32 -> tensor<128xi32>
  %qpos = arith.addi %qs, %packed : tensor<128xi32>
  %em = tt.expand_dims %qpos {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x64xi32>
  %offs_n = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %res = scf.for %start_n = %c0 to %hi step %c64 iter_args(%acc = %x) -> (tensor<128x64xf32>) : i32 {
    %sn = tt.splat %start_n : i32 -> tensor<64xi32>
    %cols = arith.addi %sn, %offs_n : tensor<64xi32>
    %en = tt.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %bn = tt.broadcast %en : tensor<1x64xi32> -> tensor<128x64xi32>
    %mask = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
    %s = arith.select %mask, %acc, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
    %n = arith.addf %acc, %s : tensor<128x64xf32>
    scf.yield %n : tensor<128x64xf32>
  }
  tt.return %res : tensor<128x64xf32>
}

// -----

// Negative: a divisor that changes with the iteration (k + start_n) is not
// loop-invariant: the rows are not a fixed interval.
// CHECK-LABEL: tt.func @divisor_inside_loop
// CHECK:         scf.for
// CHECK:           arith.cmpi sge
// CHECK-NOT:     scf.for
tt.func @divisor_inside_loop(%q0: i32, %k: i32, %hi: i32, %x: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %offs_n = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %res = scf.for %start_n = %c0 to %hi step %c64 iter_args(%acc = %x) -> (tensor<128x64xf32>) : i32 {
    %kk = arith.addi %k, %start_n : i32
    %ks = tt.splat %kk : i32 -> tensor<128xi32>
    %packed = arith.divsi %r, %ks : tensor<128xi32>
    %qs = tt.splat %q0 : i32 -> tensor<128xi32>
    %qpos = arith.addi %qs, %packed : tensor<128xi32>
    %em = tt.expand_dims %qpos {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
    %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x64xi32>
    %sn = tt.splat %start_n : i32 -> tensor<64xi32>
    %cols = arith.addi %sn, %offs_n : tensor<64xi32>
    %en = tt.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %bn = tt.broadcast %en : tensor<1x64xi32> -> tensor<128x64xi32>
    %mask = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
    %s = arith.select %mask, %acc, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
    %n = arith.addf %acc, %s : tensor<128x64xf32>
    scf.yield %n : tensor<128x64xf32>
  }
  tt.return %res : tensor<128x64xf32>
}

// -----

// A shift amount known only at run time: the guard checks 0 <= s <= 31 (a
// larger amount is poison); r >> s over [0, 127] lies in [0, 127].
// CHECK-LABEL: tt.func @shift_at_run_time(
// CHECK-SAME:      %[[Q0:[a-z0-9]+]]: i32, %[[S:[a-z0-9]+]]: i32
// CHECK-DAG:     arith.cmpi sge, %[[S]], %c0_i32 : i32
// CHECK-DAG:     arith.cmpi sle, %[[S]], %c31_i32 : i32
// CHECK:         scf.for
// CHECK-NOT:       arith.cmpi
// CHECK:           scf.yield
// CHECK:         scf.for
// CHECK:           arith.cmpi sge
tt.func @shift_at_run_time(%q0: i32, %k: i32, %hi: i32, %x: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %ks = tt.splat %k : i32 -> tensor<128xi32>
  %packed = arith.shrsi %r, %ks : tensor<128xi32>
  %qs = tt.splat %q0 : i32 -> tensor<128xi32>
  %qpos = arith.addi %qs, %packed : tensor<128xi32>
  %em = tt.expand_dims %qpos {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x64xi32>
  %offs_n = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %res = scf.for %start_n = %c0 to %hi step %c64 iter_args(%acc = %x) -> (tensor<128x64xf32>) : i32 {
    %sn = tt.splat %start_n : i32 -> tensor<64xi32>
    %cols = arith.addi %sn, %offs_n : tensor<64xi32>
    %en = tt.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %bn = tt.broadcast %en : tensor<1x64xi32> -> tensor<128x64xi32>
    %mask = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
    %s = arith.select %mask, %acc, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
    %n = arith.addf %acc, %s : tensor<128x64xf32>
    scf.yield %n : tensor<128x64xf32>
  }
  tt.return %res : tensor<128x64xf32>
}

// -----

// Negative: a negative divisor reverses the order (x / -4 is nonincreasing).
// CHECK-LABEL: tt.func @negative_divisor
// CHECK:         scf.for
// CHECK:           arith.cmpi sge
// CHECK-NOT:     scf.for
tt.func @negative_divisor(%q0: i32, %hi: i32, %x: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %cm4 = arith.constant dense<-4> : tensor<128xi32>
  %packed = arith.divsi %r, %cm4 : tensor<128xi32>
  %qs = tt.splat %q0 : i32 -> tensor<128xi32>
  %qpos = arith.addi %qs, %packed : tensor<128xi32>
  %em = tt.expand_dims %qpos {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x64xi32>
  %offs_n = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %res = scf.for %start_n = %c0 to %hi step %c64 iter_args(%acc = %x) -> (tensor<128x64xf32>) : i32 {
    %sn = tt.splat %start_n : i32 -> tensor<64xi32>
    %cols = arith.addi %sn, %offs_n : tensor<64xi32>
    %en = tt.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %bn = tt.broadcast %en : tensor<1x64xi32> -> tensor<128x64xi32>
    %mask = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
    %s = arith.select %mask, %acc, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
    %n = arith.addf %acc, %s : tensor<128x64xf32>
    scf.yield %n : tensor<128x64xf32>
  }
  tt.return %res : tensor<128x64xf32>
}

// -----

// Negative: remainders are not monotone.
// CHECK-LABEL: tt.func @remainder
// CHECK:         scf.for
// CHECK:           arith.cmpi sge
// CHECK-NOT:     scf.for
tt.func @remainder(%q0: i32, %hi: i32, %x: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %c4 = arith.constant dense<4> : tensor<128xi32>
  %packed = arith.remsi %r, %c4 : tensor<128xi32>
  %qs = tt.splat %q0 : i32 -> tensor<128xi32>
  %qpos = arith.addi %qs, %packed : tensor<128xi32>
  %em = tt.expand_dims %qpos {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x64xi32>
  %offs_n = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %res = scf.for %start_n = %c0 to %hi step %c64 iter_args(%acc = %x) -> (tensor<128x64xf32>) : i32 {
    %sn = tt.splat %start_n : i32 -> tensor<64xi32>
    %cols = arith.addi %sn, %offs_n : tensor<64xi32>
    %en = tt.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %bn = tt.broadcast %en : tensor<1x64xi32> -> tensor<128x64xi32>
    %mask = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
    %s = arith.select %mask, %acc, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
    %n = arith.addf %acc, %s : tensor<128x64xf32>
    scf.yield %n : tensor<128x64xf32>
  }
  tt.return %res : tensor<128x64xf32>
}

// -----

// Negative: arange + (2^31 - 100) wraps in i32 before the division, so the
// quotients are not monotone in the row: refused (the interval must fit i32).
// CHECK-LABEL: tt.func @wraps_before_division
// CHECK:         scf.for
// CHECK:           arith.cmpi sge
// CHECK-NOT:     scf.for
tt.func @wraps_before_division(%q0: i32, %hi: i32, %x: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %big = arith.constant dense<2147483548> : tensor<128xi32>
  %w = arith.addi %r, %big : tensor<128xi32>
  %c2 = arith.constant dense<2> : tensor<128xi32>
  %packed = arith.divsi %w, %c2 : tensor<128xi32>
  %qs = tt.splat %q0 : i32 -> tensor<128xi32>
  %qpos = arith.addi %qs, %packed : tensor<128xi32>
  %em = tt.expand_dims %qpos {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x64xi32>
  %offs_n = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %res = scf.for %start_n = %c0 to %hi step %c64 iter_args(%acc = %x) -> (tensor<128x64xf32>) : i32 {
    %sn = tt.splat %start_n : i32 -> tensor<64xi32>
    %cols = arith.addi %sn, %offs_n : tensor<64xi32>
    %en = tt.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %bn = tt.broadcast %en : tensor<1x64xi32> -> tensor<128x64xi32>
    %mask = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
    %s = arith.select %mask, %acc, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
    %n = arith.addf %acc, %s : tensor<128x64xf32>
    scf.yield %n : tensor<128x64xf32>
  }
  tt.return %res : tensor<128x64xf32>
}

// -----

// Negative: unsigned division of a range with negative values reads them as
// huge unsigned numbers.
// CHECK-LABEL: tt.func @divui_negative_range
// CHECK:         scf.for
// CHECK:           arith.cmpi sge
// CHECK-NOT:     scf.for
tt.func @divui_negative_range(%q0: i32, %hi: i32, %x: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %c8 = arith.constant dense<8> : tensor<128xi32>
  %d = arith.subi %r, %c8 : tensor<128xi32>
  %c4 = arith.constant dense<4> : tensor<128xi32>
  %packed = arith.divui %d, %c4 : tensor<128xi32>
  %qs = tt.splat %q0 : i32 -> tensor<128xi32>
  %qpos = arith.addi %qs, %packed : tensor<128xi32>
  %em = tt.expand_dims %qpos {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x64xi32>
  %offs_n = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %res = scf.for %start_n = %c0 to %hi step %c64 iter_args(%acc = %x) -> (tensor<128x64xf32>) : i32 {
    %sn = tt.splat %start_n : i32 -> tensor<64xi32>
    %cols = arith.addi %sn, %offs_n : tensor<64xi32>
    %en = tt.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %bn = tt.broadcast %en : tensor<1x64xi32> -> tensor<128x64xi32>
    %mask = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
    %s = arith.select %mask, %acc, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
    %n = arith.addf %acc, %s : tensor<128x64xf32>
    scf.yield %n : tensor<128x64xf32>
  }
  tt.return %res : tensor<128x64xf32>
}
