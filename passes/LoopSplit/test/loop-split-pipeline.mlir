// RUN: %opt %s -split-input-file --pass loop_split,canonicalize,cse --no-debug-info | FileCheck %s
// RUN: env MLIR_ENABLE_DIAGNOSTICS=remarks %opt %s -split-input-file --pass 'loop_split{remarks=true}' --no-debug-info 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: %opt %s -split-input-file --pass 'loop_split{profitability=false},canonicalize,cse' --no-debug-info | FileCheck %s --check-prefix=ALWAYS
// RUN: %opt %s -split-input-file --pass 'loop_split{single-drain=true},canonicalize,cse' --no-debug-info | FileCheck %s --check-prefix=SINGLE
// RUN: %opt %s -split-input-file --pass 'loop_split{min-unmasked-trips=0},canonicalize,cse' --no-debug-info | FileCheck %s --check-prefix=SHORT

// Profitability (issue 28, LoopSplitProfitability.cpp): a split must save more
// than its copies of the body and, in a loop Triton software-pipelines, its
// extra pipeline prologues and drains cost.

// 1. The folded comparison only masks the loads of a dot loop (a GEMM's K tail,
// as in Triton's test_pipeline_matmul; vLLM's unified attention's tile mask):
// left alone. Split (two loops, two pipeline drains) with profitability=false.
// CHECK-LABEL: tt.func @dot_load_mask_only
// CHECK-COUNT-1: scf.for
// CHECK-NOT:     scf.for
// REMARK: remark: loop_split: not applied: the folded comparisons only mask loads and stores of a loop with tt.dot
// ALWAYS-LABEL: tt.func @dot_load_mask_only
// ALWAYS-COUNT-2: scf.for
tt.func @dot_load_mask_only(%a: !tt.ptr<f16>, %b: !tt.ptr<f16>, %k: i32) -> tensor<16x16xf32> {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %zero = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
  %other = arith.constant dense<0.000000e+00> : tensor<16x16xf16>
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %col = tt.expand_dims %r {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %ks = tt.splat %k : i32 -> tensor<1x16xi32>
  %pa = tt.splat %a : !tt.ptr<f16> -> tensor<16x16x!tt.ptr<f16>>
  %pb = tt.splat %b : !tt.ptr<f16> -> tensor<16x16x!tt.ptr<f16>>
  %res = scf.for %i = %c0 to %k step %c16 iter_args(%acc = %zero) -> (tensor<16x16xf32>) : i32 {
    %is = tt.splat %i : i32 -> tensor<1x16xi32>
    %offs = arith.addi %is, %col : tensor<1x16xi32>
    %m = arith.cmpi slt, %offs, %ks : tensor<1x16xi32>
    %mask = tt.broadcast %m : tensor<1x16xi1> -> tensor<16x16xi1>
    %offs2 = tt.broadcast %offs : tensor<1x16xi32> -> tensor<16x16xi32>
    %qa = tt.addptr %pa, %offs2 : tensor<16x16x!tt.ptr<f16>>, tensor<16x16xi32>
    %qb = tt.addptr %pb, %offs2 : tensor<16x16x!tt.ptr<f16>>, tensor<16x16xi32>
    %x = tt.load %qa, %mask, %other : tensor<16x16x!tt.ptr<f16>>
    %y = tt.load %qb, %mask, %other : tensor<16x16x!tt.ptr<f16>>
    %d = tt.dot %x, %y, %acc : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %d : tensor<16x16xf32>
  }
  tt.return %res : tensor<16x16xf32>
}

// -----

// 2. A dot loop whose comparison feeds computation (the causal `tl.where` on
// the scores): split, both parts keeping the loop's stages (as a hand-split
// kernel's two loops). With single-drain=true only the main (first) part keeps
// them; the diagonal part gets tt.num_stages = 1, so the split loop drains once.
// CHECK-LABEL: tt.func @dot_causal_select
// CHECK:         scf.for
// CHECK-NOT:       arith.select
// CHECK:           tt.dot
// CHECK:         } {tt.num_stages = 3 : i32}
// CHECK:         scf.for
// CHECK:           arith.select
// CHECK:         } {tt.num_stages = 3 : i32}
// CHECK-NOT:     scf.for
// SINGLE-LABEL: tt.func @dot_causal_select
// SINGLE:         } {tt.num_stages = 3 : i32}
// SINGLE:         } {tt.num_stages = 1 : i32}
tt.func @dot_causal_select(%a: !tt.ptr<f16>, %start_m: i32) -> tensor<16x16xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c16 = arith.constant 16 : i32
  %zero = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<16x16xf32>
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %m0 = arith.muli %start_m, %c16 : i32
  %m0s = tt.splat %m0 : i32 -> tensor<16xi32>
  %rows = arith.addi %m0s, %r : tensor<16xi32>
  %rows2 = tt.expand_dims %rows {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %rowsb = tt.broadcast %rows2 : tensor<16x1xi32> -> tensor<16x16xi32>
  %col = tt.expand_dims %r {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %sm1 = arith.addi %start_m, %c1 : i32
  %hi = arith.muli %sm1, %c16 : i32
  %pa = tt.splat %a : !tt.ptr<f16> -> tensor<16x16x!tt.ptr<f16>>
  %res = scf.for %n = %c0 to %hi step %c16 iter_args(%acc = %zero) -> (tensor<16x16xf32>) : i32 {
    %ns = tt.splat %n : i32 -> tensor<1x16xi32>
    %cols = arith.addi %ns, %col : tensor<1x16xi32>
    %colsb = tt.broadcast %cols : tensor<1x16xi32> -> tensor<16x16xi32>
    %qa = tt.addptr %pa, %colsb : tensor<16x16x!tt.ptr<f16>>, tensor<16x16xi32>
    %x = tt.load %qa : tensor<16x16x!tt.ptr<f16>>
    %s = tt.dot %x, %x, %zero : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
    %mask = arith.cmpi sge, %rowsb, %colsb : tensor<16x16xi32>
    %sm = arith.select %mask, %s, %ninf : tensor<16x16xi1>, tensor<16x16xf32>
    %sum = arith.addf %acc, %sm : tensor<16x16xf32>
    scf.yield %sum : tensor<16x16xf32>
  } {tt.num_stages = 3 : i32}
  tt.return %res : tensor<16x16xf32>
}

// -----

// 3. The remainder loop of Triton's loop_unroll (factor 4: lb = (n - n % 4) *
// step, at most 3 iterations) with a tail mask: at most 2 unmasked iterations,
// fewer than min-unmasked-trips (3): left alone (vLLM's prefix-prefill context
// loop). Split with min-unmasked-trips=0.
// CHECK-LABEL: tt.func @unroll_remainder_tail
// CHECK-COUNT-1: scf.for
// CHECK-NOT:     scf.for
// REMARK: remark: loop_split: not applied: the unmasked parts run fewer than min-unmasked-trips iterations
// SHORT-LABEL: tt.func @unroll_remainder_tail
// SHORT-COUNT-2: scf.for
tt.func @unroll_remainder_tail(%p: !tt.ptr<f32>, %len: i32) -> tensor<32xf32> {
  %c0 = arith.constant 0 : i32
  %c4 = arith.constant 4 : i32
  %c31 = arith.constant 31 : i32
  %c32 = arith.constant 32 : i32
  %zero = arith.constant dense<0.000000e+00> : tensor<32xf32>
  %r = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
  %lens = tt.splat %len : i32 -> tensor<32xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<32x!tt.ptr<f32>>
  %up = arith.addi %len, %c31 : i32
  %n = arith.divui %up, %c32 : i32
  %rem = arith.remsi %n, %c4 : i32
  %whole = arith.subi %n, %rem : i32
  %done = arith.muli %whole, %c32 : i32
  %lb = arith.addi %c0, %done : i32
  %res = scf.for %i = %lb to %len step %c32 iter_args(%acc = %zero) -> (tensor<32xf32>) : i32 {
    %is = tt.splat %i : i32 -> tensor<32xi32>
    %offs = arith.addi %is, %r : tensor<32xi32>
    %mask = arith.cmpi slt, %offs, %lens : tensor<32xi32>
    %q = tt.addptr %ps, %offs : tensor<32x!tt.ptr<f32>>, tensor<32xi32>
    %x = tt.load %q, %mask, %zero : tensor<32x!tt.ptr<f32>>
    %sum = arith.addf %acc, %x : tensor<32xf32>
    scf.yield %sum : tensor<32xf32>
  } {tt.num_stages = 1 : i32}
  tt.return %res : tensor<32xf32>
}

// -----

// 4. Constant bounds: 2 iterations, the comparison `iv < d` known in both at
// best; fewer than 3 unmasked iterations: left alone. 8 iterations: split.
// CHECK-LABEL: tt.func @constant_two_trips
// CHECK-COUNT-1: scf.for
// CHECK-NOT:     scf.for
// REMARK: remark: loop_split: not applied: the unmasked parts run fewer than min-unmasked-trips iterations
// SHORT-LABEL: tt.func @constant_two_trips
// SHORT-COUNT-2: scf.for
tt.func @constant_two_trips(%d: i32, %x: f32, %y: f32) -> f32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %init = arith.constant 0.0 : f32
  %r = scf.for %iv = %c0 to %c2 step %c1 iter_args(%a = %init) -> (f32) : i32 {
    %c = arith.cmpi slt, %iv, %d : i32
    %v = arith.select %c, %x, %y : f32
    %s = arith.addf %a, %v : f32
    scf.yield %s : f32
  }
  tt.return %r : f32
}

// -----

// CHECK-LABEL: tt.func @constant_eight_trips
// CHECK-COUNT-2: scf.for
tt.func @constant_eight_trips(%d: i32, %x: f32, %y: f32) -> f32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c8 = arith.constant 8 : i32
  %init = arith.constant 0.0 : f32
  %r = scf.for %iv = %c0 to %c8 step %c1 iter_args(%a = %init) -> (f32) : i32 {
    %c = arith.cmpi slt, %iv, %d : i32
    %v = arith.select %c, %x, %y : f32
    %s = arith.addf %a, %v : f32
    scf.yield %s : f32
  }
  tt.return %r : f32
}
