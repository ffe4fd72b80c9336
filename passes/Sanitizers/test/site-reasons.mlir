// RUN: %opt %s --pass offset_overflow_check --no-debug-info | FileCheck %s --check-prefix=OFFSET
// RUN: %opt %s --pass nan_inf_check --no-debug-info | FileCheck %s --check-prefix=NAN

// Issue 18: each site says why its check could not be proven away and what
// it costs, in `triton_ext.sanitizer_sites_reason` (one string per site, in
// the order of `triton_ext.sanitizer_sites`, which keeps its format). Kernel
// arguments are named by their `loc("name")`, as Triton's TTIR names them;
// lines in the site's own file are cited as `line N`.
// One case: the module's two site tables (sites and reasons) over all six kernels.

// OFFSET:      triton_ext.sanitizer_sites = [
// OFFSET-SAME:   "offset_overflow_check|i32 offset overflow lanes|128|stride_row|{{[^"]*}}site-reasons.mlir:[[#STRIDE:]]"
// OFFSET-SAME:   "offset_overflow_check|i32 offset overflow lanes|1|mod_leaf|{{[^"]*}}site-reasons.mlir:[[#MOD:]]"
// OFFSET-SAME:   "offset_overflow_check|i32 offset overflow lanes|128|loaded_index|{{[^"]*}}site-reasons.mlir:[[#GATHER:]]"
// OFFSET-SAME:   "offset_overflow_check|i32 offset overflow lanes|128|vocab_loop|{{[^"]*}}site-reasons.mlir:[[#VOCAB:]]"
// OFFSET-SAME: ], triton_ext.sanitizer_sites_reason = [
// A stride argument with no range fact times a program id (bounded by the
// grid only): the exact bounds of `pid * stride + arange` are two scalars.
// OFFSET-SAME:   "unbounded: arg `stride`; loose: program_id(0) <= 2^31-2; scalar bounds test"
// `pid % M` with a run-time M has no bound (a constant M would give one).
// OFFSET-SAME:   "unbounded: x % arg `M` (line [[#MOD - 1]]), arg `n`; scalar i64 check"
// A gathered index: loaded data, recomputed lane by lane.
// OFFSET-SAME:   "unbounded: loaded `idx` (gather.py:7), arg `n`; lane-by-lane i64 check"
// The loop index is bounded by the loop's run-time bound, an argument.
// OFFSET-SAME:   "loose: loop index up to arg `n_cols` (line [[#VOCAB - 2]]) <= 2^31-2; before its loop: scalar bounds test over all iterations"
// OFFSET-SAME: ]
// OFFSET-LABEL: tt.func @stride_row
// OFFSET-LABEL: tt.func @mod_leaf
// OFFSET-LABEL: tt.func @loaded_index
// OFFSET-LABEL: tt.func @vocab_loop

// NAN:      triton_ext.sanitizer_sites = [
// NAN-SAME:   "nan_inf_check|store non-finite|128|store_loaded|{{[^"]*}}site-reasons.mlir:[[#LOADED:]]"
// NAN-SAME:   "nan_inf_check|store non-finite|128|store_ratio|{{[^"]*}}site-reasons.mlir:[[#RATIO:]]"
// NAN-SAME: ], triton_ext.sanitizer_sites_reason = [
// Loaded data, stored as it is: the count path (1/thread: below the reload path's 4) (TTIR: no layout, 1/thread).
// NAN-SAME:   "loaded `x` (rows.py:12); count path, 1/thread"
// Integers converted to f32 are finite; their quotient is not (x / 0).
// NAN-SAME:   "a division (line [[#RATIO - 1]]); count path, 1/thread"
// NAN-SAME: ]
// NAN-LABEL: tt.func @store_loaded
// NAN-LABEL: tt.func @store_ratio

tt.func @stride_row(%p: !tt.ptr<f32> loc("p"), %stride: i32 loc("stride")) -> tensor<128xf32> {
  %pid = tt.get_program_id x : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %row = arith.muli %pid, %stride : i32
  %rows = tt.splat %row : i32 -> tensor<128xi32>
  %off = arith.addi %rows, %r : tensor<128xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %off : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %x = tt.load %pp : tensor<128x!tt.ptr<f32>>
  tt.return %x : tensor<128xf32>
}

tt.func @mod_leaf(%p: !tt.ptr<f32> loc("p"), %M: i32 loc("M"), %n: i32 loc("n")) -> f32 {
  %pid = tt.get_program_id x : i32
  %row = arith.remsi %pid, %M : i32
  %off = arith.muli %row, %n : i32
  %pp = tt.addptr %p, %off : !tt.ptr<f32>, i32
  %x = tt.load %pp : !tt.ptr<f32>
  tt.return %x : f32
}

tt.func @loaded_index(%p: !tt.ptr<f32> loc("p"), %ip: !tt.ptr<i32> loc("ip"), %n: i32 loc("n")) -> tensor<128xf32> {
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %ips = tt.splat %ip : !tt.ptr<i32> -> tensor<128x!tt.ptr<i32>>
  %ipp = tt.addptr %ips, %r : tensor<128x!tt.ptr<i32>>, tensor<128xi32>
  %idx = tt.load %ipp : tensor<128x!tt.ptr<i32>> loc("idx"("gather.py":7:11))
  %ns = tt.splat %n : i32 -> tensor<128xi32>
  %off = arith.muli %idx, %ns : tensor<128xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %off : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %x = tt.load %pp : tensor<128x!tt.ptr<f32>>
  tt.return %x : tensor<128xf32>
}

tt.func @vocab_loop(%p: !tt.ptr<f32> loc("p"), %n_cols: i32 loc("n_cols")) -> tensor<128xf32> {
  %c0 = arith.constant 0 : i32
  %c128 = arith.constant 128 : i32
  %zero = arith.constant dense<0.0> : tensor<128xf32>
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %acc = scf.for %i = %c0 to %n_cols step %c128 iter_args(%a = %zero) -> (tensor<128xf32>) : i32 {
    %is = tt.splat %i : i32 -> tensor<128xi32>
    %off = arith.addi %is, %r : tensor<128xi32>
    %pp = tt.addptr %ps, %off : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    %x = tt.load %pp : tensor<128x!tt.ptr<f32>>
    %s = arith.addf %a, %x : tensor<128xf32>
    scf.yield %s : tensor<128xf32>
  }
  tt.return %acc : tensor<128xf32>
}

tt.func @store_loaded(%p: !tt.ptr<f32> loc("p"), %q: !tt.ptr<f32> loc("q")) {
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %r : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %x = tt.load %pp : tensor<128x!tt.ptr<f32>> loc("x"("rows.py":12:9))
  %qs = tt.splat %q : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %qp = tt.addptr %qs, %r : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  tt.store %qp, %x : tensor<128x!tt.ptr<f32>>
  tt.return
}

tt.func @store_ratio(%q: !tt.ptr<f32> loc("q"), %a: i32 loc("a")) {
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %as = tt.splat %a : i32 -> tensor<128xi32>
  %num = arith.sitofp %r : tensor<128xi32> to tensor<128xf32>
  %den = arith.sitofp %as : tensor<128xi32> to tensor<128xf32>
  %qs = tt.splat %q : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %qp = tt.addptr %qs, %r : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %ratio = arith.divf %num, %den : tensor<128xf32>
  tt.store %qp, %ratio : tensor<128x!tt.ptr<f32>>
  tt.return
}
