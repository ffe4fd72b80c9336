// RUN: %opt %s -split-input-file --pass 'loop_split{rounding=mul-rn},canonicalize,cse' --no-debug-info | FileCheck %s
// RUN: %opt %s -split-input-file --pass 'loop_split{rounding=mul-rn scale-after-max=false},canonicalize,cse' --no-debug-info | FileCheck %s --check-prefix=OFF
// RUN: %opt %s -split-input-file --pass 'loop_split{rounding=contract},canonicalize,cse' --no-debug-info | FileCheck %s --check-prefix=CONTRACT

// The one-loop causal attention's scores: `qk = dot * s`, masked, their row
// maximum, then `exp2(qk - m)`. With rounding=mul-rn the unmasked part
// multiplies with mul.rn; taking the row maximum of those products kept all
// of them live until the subtraction (224 registers against the hand-split
// kernel's 211 at head dim 64 on the H200, 0.95x of its speed). For a
// positive finite s, x -> round(x * s) is monotone, so the maximum of the
// rounded products is the rounded product of the maximum: the unmasked part
// takes the maximum of the unscaled scores and scales it once, bit for bit
// the same. The guard that s is positive and finite joins the split's own
// guard: when it fails, the middle loop, which keeps the loop's code, runs
// every iteration.

// CHECK-LABEL: tt.func @causal_scores
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK:         %[[POS:.*]] = arith.cmpf ogt, %arg2, %[[ZERO]] : f32
// CHECK:         %[[FIN:.*]] = arith.cmpf olt, %arg2, %[[INF]] : f32
// CHECK:         %[[SOK:.*]] = arith.andi %[[POS]], %[[FIN]] : i1
// CHECK:         %[[OK:.*]] = arith.andi %{{.*}}, %[[SOK]] : i1
// CHECK:         arith.select %[[OK]]
// CHECK:         scf.for
// CHECK-NOT:       arith.select
// CHECK-NOT:       arith.mulf
// CHECK:           %[[X:.*]] = tt.dot
// CHECK:           %[[Q:.*]] = tt.elementwise_inline_asm "mul.rn.f32 $0, $1, $2;" {{.*}} %[[X]], %{{.*}} : tensor<128x64xf32>
// CHECK:           %[[RAW:.*]] = "tt.reduce"(%[[X]]) <{axis = 1 : i32}>
// CHECK:             arith.maxnumf
// CHECK:           %[[SR:.*]] = tt.splat %arg2 : f32 -> tensor<128xf32>
// CHECK:           %[[M:.*]] = tt.elementwise_inline_asm "mul.rn.f32 $0, $1, $2;" {{.*}} %[[RAW]], %[[SR]] : tensor<128xf32>
// CHECK:           %[[MB:.*]] = tt.expand_dims %[[M]]
// CHECK:           %[[MBB:.*]] = tt.broadcast %[[MB]]
// CHECK:           arith.subf %[[Q]], %[[MBB]]
// CHECK:         scf.for
// CHECK:           arith.mulf
// CHECK:           arith.select
// CHECK:           "tt.reduce"
// CHECK-NOT:       tt.elementwise_inline_asm
// CHECK:         tt.return

// OFF-LABEL: tt.func @causal_scores
// OFF-NOT:     arith.cmpf
// OFF:         scf.for
// OFF:           %[[Q:.*]] = tt.elementwise_inline_asm "mul.rn.f32
// OFF:           "tt.reduce"(%[[Q]])
// OFF:         scf.for
// OFF:         tt.return

// rounding=contract leaves the maximum alone: nothing there to recover.
// CONTRACT-LABEL: tt.func @causal_scores
// CONTRACT-NOT:     arith.cmpf
// CONTRACT-NOT:     tt.elementwise_inline_asm
// CONTRACT:         tt.return
tt.func @causal_scores(%start_m: i32, %n_ctx: i32, %s: f32, %q: tensor<128x16xf16>, %k: tensor<16x64xf16>) -> tensor<128x64xf32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %zero = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
  %m0 = arith.muli %start_m, %c128 : i32
  %rm = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %sm = tt.splat %m0 : i32 -> tensor<128xi32>
  %offs_m = arith.addi %sm, %rm : tensor<128xi32>
  %offs_n = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %em = tt.expand_dims %offs_m {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %en = tt.expand_dims %offs_n {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %r = scf.for %start_n = %c0 to %n_ctx step %c64 iter_args(%acc = %zero) -> (tensor<128x64xf32>) : i32 {
    %sn = tt.splat %start_n : i32 -> tensor<1x64xi32>
    %cols = arith.addi %sn, %en : tensor<1x64xi32>
    %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x64xi32>
    %bn = tt.broadcast %cols : tensor<1x64xi32> -> tensor<128x64xi32>
    %mask = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
    %x = tt.dot %q, %k, %zero : tensor<128x16xf16> * tensor<16x64xf16> -> tensor<128x64xf32>
    %ss = tt.splat %s : f32 -> tensor<128x64xf32>
    %qk = arith.mulf %x, %ss : tensor<128x64xf32>
    %masked = arith.select %mask, %qk, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
    %m = "tt.reduce"(%masked) <{axis = 1 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %mx = arith.maxnumf %a, %b : f32
      tt.reduce.return %mx : f32
    }) : (tensor<128x64xf32>) -> tensor<128xf32>
    %me = tt.expand_dims %m {axis = 1 : i32} : tensor<128xf32> -> tensor<128x1xf32>
    %mb = tt.broadcast %me : tensor<128x1xf32> -> tensor<128x64xf32>
    %sub = arith.subf %masked, %mb : tensor<128x64xf32>
    %p = math.exp2 %sub : tensor<128x64xf32>
    %acc2 = arith.addf %acc, %p : tensor<128x64xf32>
    scf.yield %acc2 : tensor<128x64xf32>
  }
  tt.return %r : tensor<128x64xf32>
}

// -----

// A sum of the scores is not a maximum, and a scale computed in the loop is
// not one the guard could check before it: both keep their products.
// CHECK-LABEL: tt.func @not_a_scaled_maximum
// CHECK-NOT:     arith.cmpf
// CHECK:         scf.for
// CHECK:           %[[Q:.*]] = tt.elementwise_inline_asm "mul.rn.f32
// CHECK:           "tt.reduce"(%[[Q]])
// CHECK:             arith.addf
// CHECK:           %[[Q2:.*]] = tt.elementwise_inline_asm "mul.rn.f32
// CHECK:           "tt.reduce"(%[[Q2]])
// CHECK:             arith.maxnumf
// CHECK:         scf.for
// CHECK:         tt.return
tt.func @not_a_scaled_maximum(%start_m: i32, %n_ctx: i32, %s: f32, %x: tensor<128x64xf32>) -> tensor<128xf32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %zero = arith.constant dense<0.000000e+00> : tensor<128xf32>
  %m0 = arith.muli %start_m, %c128 : i32
  %rm = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %sm = tt.splat %m0 : i32 -> tensor<128xi32>
  %offs_m = arith.addi %sm, %rm : tensor<128xi32>
  %offs_n = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %em = tt.expand_dims %offs_m {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %en = tt.expand_dims %offs_n {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %r = scf.for %start_n = %c0 to %n_ctx step %c64 iter_args(%acc = %zero) -> (tensor<128xf32>) : i32 {
    %sn = tt.splat %start_n : i32 -> tensor<1x64xi32>
    %cols = arith.addi %sn, %en : tensor<1x64xi32>
    %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x64xi32>
    %bn = tt.broadcast %cols : tensor<1x64xi32> -> tensor<128x64xi32>
    %mask = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
    %ss = tt.splat %s : f32 -> tensor<128x64xf32>
    %qk = arith.mulf %x, %ss : tensor<128x64xf32>
    %masked = arith.select %mask, %qk, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
    %sum = "tt.reduce"(%masked) <{axis = 1 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      tt.reduce.return %t : f32
    }) : (tensor<128x64xf32>) -> tensor<128xf32>
    %fi = arith.sitofp %start_n : i32 to f32
    %s2 = arith.addf %s, %fi : f32
    %ss2 = tt.splat %s2 : f32 -> tensor<128x64xf32>
    %qk2 = arith.mulf %x, %ss2 : tensor<128x64xf32>
    %masked2 = arith.select %mask, %qk2, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
    %m = "tt.reduce"(%masked2) <{axis = 1 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %mx = arith.maxnumf %a, %b : f32
      tt.reduce.return %mx : f32
    }) : (tensor<128x64xf32>) -> tensor<128xf32>
    %me = tt.expand_dims %m {axis = 1 : i32} : tensor<128xf32> -> tensor<128x1xf32>
    %mb = tt.broadcast %me : tensor<128x1xf32> -> tensor<128x64xf32>
    %sub = arith.subf %masked2, %mb : tensor<128x64xf32>
    %r2 = "tt.reduce"(%sub) <{axis = 1 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %mx = arith.maxnumf %a, %b : f32
      tt.reduce.return %mx : f32
    }) : (tensor<128x64xf32>) -> tensor<128xf32>
    %t1 = arith.addf %acc, %sum : tensor<128xf32>
    %t2 = arith.addf %t1, %r2 : tensor<128xf32>
    scf.yield %t2 : tensor<128xf32>
  }
  tt.return %r : tensor<128xf32>
}

// -----

// The scalar form: the mask applied only `if start_n >= diag`. Both parts
// fold the `if`, so the plan has no middle part for the scale's guard to fall
// back to. The high part (the diagonal, the short one) then keeps the loop's
// own code and starts at lb when the guard fails; the low part, the main
// one, takes the maximum before the scale. Without the guard the high part
// folds as before.
// CHECK-LABEL: tt.func @causal_scores_if
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK:         %[[POS:.*]] = arith.cmpf ogt, %arg2, %[[ZERO]] : f32
// CHECK:         %[[FIN:.*]] = arith.cmpf olt, %arg2, %[[INF]] : f32
// CHECK:         %[[OK:.*]] = arith.andi %[[POS]], %[[FIN]] : i1
// CHECK:         %[[ENDW:.*]] = arith.select %[[OK]], %{{.*}}, %c0_i64 : i64
// CHECK:         %[[END:.*]] = arith.trunci %[[ENDW]] : i64 to i32
// CHECK:         scf.for %{{.*}} = %c0_i32 to %[[END]]
// CHECK-NOT:       scf.if
// CHECK:           %[[X:.*]] = tt.dot
// CHECK:           "tt.reduce"(%[[X]])
// CHECK:             arith.maxnumf
// CHECK:           tt.elementwise_inline_asm "mul.rn.f32
// CHECK:         scf.for %[[IV:.*]] = %[[END]] to %arg1
// CHECK:           %[[C:.*]] = arith.cmpi sge, %[[IV]]
// CHECK-NOT:       tt.elementwise_inline_asm
// The `if` that part keeps is straight-line code (loop-split-guarded-mask.mlir).
// CHECK:           arith.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<128x64xi1>, tensor<128x64xf32>
// CHECK-NOT:       tt.elementwise_inline_asm
// CHECK:         tt.return

// OFF-LABEL: tt.func @causal_scores_if
// OFF-NOT:     arith.cmpf
// OFF:         scf.for
// OFF:           %[[Q:.*]] = tt.elementwise_inline_asm "mul.rn.f32
// OFF:           "tt.reduce"(%[[Q]])
// OFF:         scf.for
// OFF-NOT:       scf.if
// OFF:         tt.return
tt.func @causal_scores_if(%start_m: i32, %n_ctx: i32, %s: f32, %q: tensor<128x16xf16>, %k: tensor<16x64xf16>) -> tensor<128x64xf32> {
  %c0 = arith.constant 0 : i32
  %c63 = arith.constant 63 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %zero = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
  %m0 = arith.muli %start_m, %c128 : i32
  %diag = arith.subi %m0, %c63 : i32
  %rm = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %sm = tt.splat %m0 : i32 -> tensor<128xi32>
  %offs_m = arith.addi %sm, %rm : tensor<128xi32>
  %offs_n = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %em = tt.expand_dims %offs_m {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %en = tt.expand_dims %offs_n {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %r = scf.for %start_n = %c0 to %n_ctx step %c64 iter_args(%acc = %zero) -> (tensor<128x64xf32>) : i32 {
    %x = tt.dot %q, %k, %zero : tensor<128x16xf16> * tensor<16x64xf16> -> tensor<128x64xf32>
    %ss = tt.splat %s : f32 -> tensor<128x64xf32>
    %qk = arith.mulf %x, %ss : tensor<128x64xf32>
    %on_diag = arith.cmpi sge, %start_n, %diag : i32
    %scores = scf.if %on_diag -> (tensor<128x64xf32>) {
      %sn = tt.splat %start_n : i32 -> tensor<1x64xi32>
      %cols = arith.addi %sn, %en : tensor<1x64xi32>
      %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x64xi32>
      %bn = tt.broadcast %cols : tensor<1x64xi32> -> tensor<128x64xi32>
      %mask = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
      %masked = arith.select %mask, %qk, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
      scf.yield %masked : tensor<128x64xf32>
    } else {
      scf.yield %qk : tensor<128x64xf32>
    }
    %m = "tt.reduce"(%scores) <{axis = 1 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %mx = arith.maxnumf %a, %b : f32
      tt.reduce.return %mx : f32
    }) : (tensor<128x64xf32>) -> tensor<128xf32>
    %me = tt.expand_dims %m {axis = 1 : i32} : tensor<128xf32> -> tensor<128x1xf32>
    %mb = tt.broadcast %me : tensor<128x1xf32> -> tensor<128x64xf32>
    %sub = arith.subf %scores, %mb : tensor<128x64xf32>
    %p = math.exp2 %sub : tensor<128x64xf32>
    %acc2 = arith.addf %acc, %p : tensor<128x64xf32>
    scf.yield %acc2 : tensor<128x64xf32>
  }
  tt.return %r : tensor<128x64xf32>
}
