// RUN: %opt %s -split-input-file --pass loop_split,canonicalize,cse --no-debug-info | FileCheck %s
// RUN: %opt %s -split-input-file --pass 'loop_split{max-parts=2},canonicalize,cse' --no-debug-info | FileCheck %s --check-prefix=PARTS2

// Issue 26: a run-time divisor (or shift amount) in a mask only adds a guard
// requirement (d >= 1), so with constant loop bounds the split points are
// constants while the guard is not. The middle part that keeps the comparison
// must stay whenever the guard can fail at run time, even where its constant
// bounds (the guard holding) are empty: on failure it runs [lb, ub).
// (triton-ext opt has no -split-input-file; the cases are separate functions.)

// The issue's signed kernel: offs_m = arange(0, 16) // nq + 100 against
// offs_n = start_n + arange(0, 16), start_n in range(0, 200, 64). With nq >= 1
// the rows lie in [100, 115]: true below 86, false from 116, so iterations 0
// and 64 fold true, 128 and 192 false, and the middle part [128, 116) is
// empty. The guard nq >= 1 is a run-time check: where it fails (nq = -1, -2,
// -7) the comparing loop must run [0, 200). It used to be dropped as empty
// (0 trips, acc[0, 0] = 0 instead of 44 on the H200).
// CHECK-LABEL: tt.func @signed_divisor
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : i64
// CHECK-DAG:     %[[C128:.*]] = arith.constant 128 : i64
// CHECK-DAG:     %[[C200:.*]] = arith.constant 200 : i64
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : i32
// CHECK:         %[[OK:.*]] = arith.cmpi sge, %arg0, %[[C1]] : i32
// CHECK:         %[[E1W:.*]] = arith.select %[[OK]], %[[C128]], %[[C0]] : i64
// CHECK:         %[[E1:.*]] = arith.trunci %[[E1W]] : i64 to i32
// CHECK:         %[[E2W:.*]] = arith.select %[[OK]], %[[C128]], %[[C200]] : i64
// CHECK:         %[[E2:.*]] = arith.trunci %[[E2W]] : i64 to i32
// CHECK:         %[[LOW:.*]] = scf.for %{{.*}} = %{{.*}} to %[[E1]] step
// CHECK-NOT:       arith.cmpi
// CHECK:         %[[MID:.*]] = scf.for %{{.*}} = %[[E1]] to %[[E2]] step %{{.*}} iter_args(%{{.*}} = %[[LOW]])
// CHECK:           arith.cmpi sge
// CHECK:         scf.for %{{.*}} = %[[E2]] to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[MID]])
// CHECK-NOT:       arith.cmpi
// CHECK:         tt.return
// PARTS2-LABEL: tt.func @signed_divisor
// PARTS2:         %[[OK:.*]] = arith.cmpi
// PARTS2:         %[[E1W:.*]] = arith.select %[[OK]]
// PARTS2:         %[[E1:.*]] = arith.trunci %[[E1W]]
// PARTS2:         %[[LOW:.*]] = scf.for %{{.*}} = %{{.*}} to %[[E1]] step
// PARTS2-NOT:       arith.cmpi
// PARTS2:         scf.for %{{.*}} = %[[E1]] to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[LOW]])
// PARTS2:           arith.cmpi sge
// PARTS2-NOT:     scf.for
// PARTS2:         tt.return
tt.func @signed_divisor(%d: i32) -> tensor<16x16xi32> {
  %c0_lb = arith.constant 0 : i32
  %c200_ub = arith.constant 200 : i32
  %c64_step = arith.constant 64 : i32
  %zero = arith.constant dense<0> : tensor<16x16xi32>
  %one = arith.constant dense<1> : tensor<16x16xi32>
  %two = arith.constant dense<2> : tensor<16x16xi32>
  %three = arith.constant dense<3> : tensor<16x16xi32>
  %off = arith.constant dense<100> : tensor<16xi32>
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %ds = tt.splat %d : i32 -> tensor<16xi32>
  %q = arith.divsi %r, %ds : tensor<16xi32>
  %offs_m = arith.addi %q, %off : tensor<16xi32>
  %acc = scf.for %start_n = %c0_lb to %c200_ub step %c64_step iter_args(%a = %zero) -> (tensor<16x16xi32>) : i32 {
    %ns = tt.splat %start_n : i32 -> tensor<16xi32>
    %offs_n = arith.addi %ns, %r : tensor<16xi32>
    %me = tt.expand_dims %offs_m {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
    %ne = tt.expand_dims %offs_n {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
    %mb = tt.broadcast %me : tensor<16x1xi32> -> tensor<16x16xi32>
    %nb = tt.broadcast %ne : tensor<1x16xi32> -> tensor<16x16xi32>
    %mask = arith.cmpi sge, %mb, %nb : tensor<16x16xi32>
    %m3 = arith.muli %a, %three : tensor<16x16xi32>
    %v = arith.select %mask, %one, %two : tensor<16x16xi1>, tensor<16x16xi32>
    %s = arith.addi %m3, %v : tensor<16x16xi32>
    scf.yield %s : tensor<16x16xi32>
  }
  tt.return %acc : tensor<16x16xi32>
}

// -----

// The issue's unsigned kernel: `tl.arange(0, 16).to(tl.uint32) // d + 100`
// with d: u32 is divui and an unsigned predicate. The guard d >= 1 is signed,
// so it fails for d >= 2^31 (2^31, 3e9, 2^32 - 1): the comparing loop
// between the folded ones must stay and run [0, 200) then.
// CHECK-LABEL: tt.func @unsigned_divisor
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : i64
// CHECK-DAG:     %[[C128:.*]] = arith.constant 128 : i64
// CHECK-DAG:     %[[C200:.*]] = arith.constant 200 : i64
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : i32
// CHECK:         %[[OK:.*]] = arith.cmpi sge, %arg0, %[[C1]] : i32
// CHECK:         %[[E1W:.*]] = arith.select %[[OK]], %[[C128]], %[[C0]] : i64
// CHECK:         %[[E1:.*]] = arith.trunci %[[E1W]] : i64 to i32
// CHECK:         %[[E2W:.*]] = arith.select %[[OK]], %[[C128]], %[[C200]] : i64
// CHECK:         %[[E2:.*]] = arith.trunci %[[E2W]] : i64 to i32
// CHECK:         %[[LOW:.*]] = scf.for %{{.*}} = %{{.*}} to %[[E1]] step
// CHECK-NOT:       arith.cmpi
// CHECK:         %[[MID:.*]] = scf.for %{{.*}} = %[[E1]] to %[[E2]] step %{{.*}} iter_args(%{{.*}} = %[[LOW]])
// CHECK:           arith.cmpi uge
// CHECK:         scf.for %{{.*}} = %[[E2]] to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[MID]])
// CHECK-NOT:       arith.cmpi
// CHECK:         tt.return
// PARTS2-LABEL: tt.func @unsigned_divisor
// PARTS2:         %[[OK:.*]] = arith.cmpi
// PARTS2:         %[[E1W:.*]] = arith.select %[[OK]]
// PARTS2:         %[[E1:.*]] = arith.trunci %[[E1W]]
// PARTS2:         %[[LOW:.*]] = scf.for %{{.*}} = %{{.*}} to %[[E1]] step
// PARTS2-NOT:       arith.cmpi
// PARTS2:         scf.for %{{.*}} = %[[E1]] to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[LOW]])
// PARTS2:           arith.cmpi uge
// PARTS2-NOT:     scf.for
// PARTS2:         tt.return
tt.func @unsigned_divisor(%d: i32) -> tensor<16x16xi32> {
  %c0_lb = arith.constant 0 : i32
  %c200_ub = arith.constant 200 : i32
  %c64_step = arith.constant 64 : i32
  %zero = arith.constant dense<0> : tensor<16x16xi32>
  %one = arith.constant dense<1> : tensor<16x16xi32>
  %two = arith.constant dense<2> : tensor<16x16xi32>
  %three = arith.constant dense<3> : tensor<16x16xi32>
  %off = arith.constant dense<100> : tensor<16xi32>
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %ds = tt.splat %d : i32 -> tensor<16xi32>
  %q = arith.divui %r, %ds : tensor<16xi32>
  %offs_m = arith.addi %q, %off : tensor<16xi32>
  %acc = scf.for %start_n = %c0_lb to %c200_ub step %c64_step iter_args(%a = %zero) -> (tensor<16x16xi32>) : i32 {
    %ns = tt.splat %start_n : i32 -> tensor<16xi32>
    %offs_n = arith.addi %ns, %r : tensor<16xi32>
    %me = tt.expand_dims %offs_m {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
    %ne = tt.expand_dims %offs_n {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
    %mb = tt.broadcast %me : tensor<16x1xi32> -> tensor<16x16xi32>
    %nb = tt.broadcast %ne : tensor<1x16xi32> -> tensor<16x16xi32>
    %mask = arith.cmpi uge, %mb, %nb : tensor<16x16xi32>
    %m3 = arith.muli %a, %three : tensor<16x16xi32>
    %v = arith.select %mask, %one, %two : tensor<16x16xi1>, tensor<16x16xi32>
    %s = arith.addi %m3, %v : tensor<16x16xi32>
    scf.yield %s : tensor<16x16xi32>
  }
  tt.return %acc : tensor<16x16xi32>
}

// -----

// Rows below every column from the start (arange // nq - 100 >= start_n +
// arange is false on every iteration when nq >= 1): no low part, a comparing
// part of constant bounds [0, 0) and a folded-false part [0, 200). Where
// nq < 1 the comparing part must run [0, 200); with max-parts=2 too (it has
// no low part, so the two parts are the same).
// CHECK-LABEL: tt.func @signed_divisor_high_only
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : i64
// CHECK-DAG:     %[[C200:.*]] = arith.constant 200 : i64
// CHECK:         %[[OK:.*]] = arith.cmpi sge, %arg0, %{{.*}} : i32
// CHECK:         %[[EW:.*]] = arith.select %[[OK]], %[[C0]], %[[C200]] : i64
// CHECK:         %[[E:.*]] = arith.trunci %[[EW]] : i64 to i32
// CHECK:         %[[MID:.*]] = scf.for %{{.*}} = %{{.*}} to %[[E]] step
// CHECK:           arith.cmpi sge
// CHECK:         scf.for %{{.*}} = %[[E]] to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[MID]])
// CHECK-NOT:       arith.cmpi
// CHECK:         tt.return
// PARTS2-LABEL: tt.func @signed_divisor_high_only
// PARTS2-DAG:     %[[C0:.*]] = arith.constant 0 : i64
// PARTS2-DAG:     %[[C200:.*]] = arith.constant 200 : i64
// PARTS2:         %[[OK:.*]] = arith.cmpi sge, %arg0, %{{.*}} : i32
// PARTS2:         %[[EW:.*]] = arith.select %[[OK]], %[[C0]], %[[C200]] : i64
// PARTS2:         %[[E:.*]] = arith.trunci %[[EW]] : i64 to i32
// PARTS2:         %[[MID:.*]] = scf.for %{{.*}} = %{{.*}} to %[[E]] step
// PARTS2:           arith.cmpi sge
// PARTS2:         scf.for %{{.*}} = %[[E]] to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[MID]])
// PARTS2-NOT:       arith.cmpi
// PARTS2:         tt.return
tt.func @signed_divisor_high_only(%d: i32) -> tensor<16x16xi32> {
  %c0_lb = arith.constant 0 : i32
  %c200_ub = arith.constant 200 : i32
  %c64_step = arith.constant 64 : i32
  %zero = arith.constant dense<0> : tensor<16x16xi32>
  %one = arith.constant dense<1> : tensor<16x16xi32>
  %two = arith.constant dense<2> : tensor<16x16xi32>
  %three = arith.constant dense<3> : tensor<16x16xi32>
  %off = arith.constant dense<-100> : tensor<16xi32>
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %ds = tt.splat %d : i32 -> tensor<16xi32>
  %q = arith.divsi %r, %ds : tensor<16xi32>
  %offs_m = arith.addi %q, %off : tensor<16xi32>
  %acc = scf.for %start_n = %c0_lb to %c200_ub step %c64_step iter_args(%a = %zero) -> (tensor<16x16xi32>) : i32 {
    %ns = tt.splat %start_n : i32 -> tensor<16xi32>
    %offs_n = arith.addi %ns, %r : tensor<16xi32>
    %me = tt.expand_dims %offs_m {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
    %ne = tt.expand_dims %offs_n {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
    %mb = tt.broadcast %me : tensor<16x1xi32> -> tensor<16x16xi32>
    %nb = tt.broadcast %ne : tensor<1x16xi32> -> tensor<16x16xi32>
    %mask = arith.cmpi sge, %mb, %nb : tensor<16x16xi32>
    %m3 = arith.muli %a, %three : tensor<16x16xi32>
    %v = arith.select %mask, %one, %two : tensor<16x16xi1>, tensor<16x16xi32>
    %s = arith.addi %m3, %v : tensor<16x16xi32>
    scf.yield %s : tensor<16x16xi32>
  }
  tt.return %acc : tensor<16x16xi32>
}

// -----

// A run-time shift amount (0 <= s <= 31 is the guard) with constant bounds:
// the same three parts.
// CHECK-LABEL: tt.func @signed_shift
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : i64
// CHECK-DAG:     %[[C128:.*]] = arith.constant 128 : i64
// CHECK-DAG:     %[[C200:.*]] = arith.constant 200 : i64
// CHECK-DAG:     %[[C31:.*]] = arith.constant 31 : i32
// CHECK:         %[[GE:.*]] = arith.cmpi sge, %arg0, %{{.*}} : i32
// CHECK:         %[[LE:.*]] = arith.cmpi sle, %arg0, %[[C31]] : i32
// CHECK:         %[[OK:.*]] = arith.andi %[[GE]], %[[LE]] : i1
// CHECK:         %[[E1W:.*]] = arith.select %[[OK]], %[[C128]], %[[C0]] : i64
// CHECK:         %[[E1:.*]] = arith.trunci %[[E1W]] : i64 to i32
// CHECK:         %[[E2W:.*]] = arith.select %[[OK]], %[[C128]], %[[C200]] : i64
// CHECK:         %[[E2:.*]] = arith.trunci %[[E2W]] : i64 to i32
// CHECK:         %[[LOW:.*]] = scf.for %{{.*}} = %{{.*}} to %[[E1]] step
// CHECK-NOT:       arith.cmpi
// CHECK:         %[[MID:.*]] = scf.for %{{.*}} = %[[E1]] to %[[E2]] step %{{.*}} iter_args(%{{.*}} = %[[LOW]])
// CHECK:           arith.cmpi sge
// CHECK:         scf.for %{{.*}} = %[[E2]] to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[MID]])
// CHECK-NOT:       arith.cmpi
// CHECK:         tt.return
// PARTS2-LABEL: tt.func @signed_shift
// PARTS2:         %[[OK:.*]] = arith.andi
// PARTS2:         %[[E1W:.*]] = arith.select %[[OK]]
// PARTS2:         %[[E1:.*]] = arith.trunci %[[E1W]]
// PARTS2:         %[[LOW:.*]] = scf.for %{{.*}} = %{{.*}} to %[[E1]] step
// PARTS2-NOT:       arith.cmpi
// PARTS2:         scf.for %{{.*}} = %[[E1]] to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[LOW]])
// PARTS2:           arith.cmpi sge
// PARTS2-NOT:     scf.for
// PARTS2:         tt.return
tt.func @signed_shift(%d: i32) -> tensor<16x16xi32> {
  %c0_lb = arith.constant 0 : i32
  %c200_ub = arith.constant 200 : i32
  %c64_step = arith.constant 64 : i32
  %zero = arith.constant dense<0> : tensor<16x16xi32>
  %one = arith.constant dense<1> : tensor<16x16xi32>
  %two = arith.constant dense<2> : tensor<16x16xi32>
  %three = arith.constant dense<3> : tensor<16x16xi32>
  %off = arith.constant dense<100> : tensor<16xi32>
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %ds = tt.splat %d : i32 -> tensor<16xi32>
  %q = arith.shrsi %r, %ds : tensor<16xi32>
  %offs_m = arith.addi %q, %off : tensor<16xi32>
  %acc = scf.for %start_n = %c0_lb to %c200_ub step %c64_step iter_args(%a = %zero) -> (tensor<16x16xi32>) : i32 {
    %ns = tt.splat %start_n : i32 -> tensor<16xi32>
    %offs_n = arith.addi %ns, %r : tensor<16xi32>
    %me = tt.expand_dims %offs_m {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
    %ne = tt.expand_dims %offs_n {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
    %mb = tt.broadcast %me : tensor<16x1xi32> -> tensor<16x16xi32>
    %nb = tt.broadcast %ne : tensor<1x16xi32> -> tensor<16x16xi32>
    %mask = arith.cmpi sge, %mb, %nb : tensor<16x16xi32>
    %m3 = arith.muli %a, %three : tensor<16x16xi32>
    %v = arith.select %mask, %one, %two : tensor<16x16xi1>, tensor<16x16xi32>
    %s = arith.addi %m3, %v : tensor<16x16xi32>
    scf.yield %s : tensor<16x16xi32>
  }
  tt.return %acc : tensor<16x16xi32>
}

// -----

// Contrast: a constant divisor leaves no run-time guard, and the constant
// middle part [128, 116) is empty: two folded loops of constant bounds, no
// comparing loop, no select.
// CHECK-LABEL: tt.func @constant_divisor_drops_empty_middle
// CHECK-NOT:     arith.select
// CHECK:         %[[LOW:.*]] = scf.for %{{.*}} = %{{.*}} to %c128_i32 step
// CHECK-NOT:       arith.cmpi
// CHECK:         scf.for %{{.*}} = %c128_i32 to %c200_i32 step %{{.*}} iter_args(%{{.*}} = %[[LOW]])
// CHECK-NOT:       arith.cmpi
// CHECK:         tt.return
tt.func @constant_divisor_drops_empty_middle(%d: i32) -> tensor<16x16xi32> {
  %c0_lb = arith.constant 0 : i32
  %c200_ub = arith.constant 200 : i32
  %c64_step = arith.constant 64 : i32
  %zero = arith.constant dense<0> : tensor<16x16xi32>
  %one = arith.constant dense<1> : tensor<16x16xi32>
  %two = arith.constant dense<2> : tensor<16x16xi32>
  %three = arith.constant dense<3> : tensor<16x16xi32>
  %off = arith.constant dense<100> : tensor<16xi32>
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %ds = arith.constant dense<3> : tensor<16xi32>
  %q = arith.divsi %r, %ds : tensor<16xi32>
  %offs_m = arith.addi %q, %off : tensor<16xi32>
  %acc = scf.for %start_n = %c0_lb to %c200_ub step %c64_step iter_args(%a = %zero) -> (tensor<16x16xi32>) : i32 {
    %ns = tt.splat %start_n : i32 -> tensor<16xi32>
    %offs_n = arith.addi %ns, %r : tensor<16xi32>
    %me = tt.expand_dims %offs_m {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
    %ne = tt.expand_dims %offs_n {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
    %mb = tt.broadcast %me : tensor<16x1xi32> -> tensor<16x16xi32>
    %nb = tt.broadcast %ne : tensor<1x16xi32> -> tensor<16x16xi32>
    %mask = arith.cmpi sge, %mb, %nb : tensor<16x16xi32>
    %m3 = arith.muli %a, %three : tensor<16x16xi32>
    %v = arith.select %mask, %one, %two : tensor<16x16xi1>, tensor<16x16xi32>
    %s = arith.addi %m3, %v : tensor<16x16xi32>
    scf.yield %s : tensor<16x16xi32>
  }
  tt.return %acc : tensor<16x16xi32>
}
