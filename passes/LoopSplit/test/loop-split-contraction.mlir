// RUN: %opt %s -split-input-file --pass loop_split,canonicalize,cse --no-debug-info | FileCheck %s
// RUN: %opt %s -split-input-file --pass 'loop_split{rounding=contract},canonicalize,cse' --no-debug-info | FileCheck %s --check-prefix=ALLOW
// RUN: %opt %s -split-input-file --pass 'loop_split{rounding=mul-rn},canonicalize,cse' --no-debug-info | FileCheck %s --check-prefix=RN
// RUN: %opt %s -split-input-file --pass 'loop_split{profitability=false},canonicalize,cse' --no-debug-info | FileCheck %s --check-prefix=NOMODEL
// RUN: env MLIR_ENABLE_DIAGNOSTICS=remarks %opt %s -split-input-file --pass 'loop_split{remarks=true}' --no-debug-info 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// Results, not cost (issue 28): vLLM's prefix-prefill scales the scores, then
// masks them, then subtracts the row maximum. Where the split folds the mask
// the select goes, `x * s - m` contracts into an FMA (Triton's default fp
// fusion), and outputs moved by one ulp on the H200. Declined by default,
// with or without the profitability model; rounding=mul-rn (the registry's
// choice for CUDA) splits and gives the folded part's multiply an inline
// PTX `mul.rn` (never fused, no flush to zero) where it meets
// the add; rounding=contract splits and lets it fuse.

// CHECK-LABEL: tt.func @scale_mask_subtract
// CHECK-COUNT-1: scf.for
// CHECK-NOT:     scf.for
// NOMODEL-LABEL: tt.func @scale_mask_subtract
// NOMODEL-COUNT-1: scf.for
// NOMODEL-NOT:     scf.for
// ALLOW-LABEL: tt.func @scale_mask_subtract
// ALLOW:         scf.for
// ALLOW-NOT:       arith.select
// ALLOW:         scf.for
// ALLOW:           arith.select
// RN-LABEL: tt.func @scale_mask_subtract
// RN:         scf.for
// RN-NOT:       arith.select
// RN:           %[[R:.*]] = tt.elementwise_inline_asm "mul.rn.f32 $0, $1, $2;" {constraints = "=f,f,f", packed_element = 1 : i32, pure = true} %{{.*}}, %{{.*}}
// RN:           arith.subf %[[R]]
// RN:         scf.for
// RN-NOT:       tt.elementwise_inline_asm
// RN:           arith.select
// RN:         tt.return
// REMARK: remark: loop_split: not applied: a folded mask separates a multiply from an add
tt.func @scale_mask_subtract(%diag: i32, %n: i32, %s: f32, %m: f32) -> tensor<64xf32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %ninf = arith.constant dense<0xFF800000> : tensor<64xf32>
  %zero = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %ds = tt.splat %diag : i32 -> tensor<64xi32>
  %ss = tt.splat %s : f32 -> tensor<64xf32>
  %ms = tt.splat %m : f32 -> tensor<64xf32>
  %res = scf.for %i = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<64xf32>) : i32 {
    %is = tt.splat %i : i32 -> tensor<64xi32>
    %offs = arith.addi %is, %r : tensor<64xi32>
    %mask = arith.cmpi slt, %offs, %ds : tensor<64xi32>
    %x = arith.sitofp %offs : tensor<64xi32> to tensor<64xf32>
    %scaled = arith.mulf %x, %ss : tensor<64xf32>
    %masked = arith.select %mask, %scaled, %ninf : tensor<64xi1>, tensor<64xf32>
    %shifted = arith.subf %masked, %ms : tensor<64xf32>
    %e = math.exp %shifted : tensor<64xf32>
    %acc2 = arith.addf %acc, %e : tensor<64xf32>
    scf.yield %acc2 : tensor<64xf32>
  }
  tt.return %res : tensor<64xf32>
}

// -----

// The mask added to the scores (Triton's tutorial and SGLang's prefill:
// `qk * s + tl.where(mask, 0, -inf)`): the multiply already meets the add in
// the masked loop, so folding changes no rounding. Split.
// CHECK-LABEL: tt.func @scale_add_mask
// CHECK-COUNT-2: scf.for
// ALLOW-LABEL: tt.func @scale_add_mask
// RN-LABEL: tt.func @scale_add_mask
// RN-NOT: tt.elementwise_inline_asm
// RN: tt.return
// NOMODEL-LABEL: tt.func @scale_add_mask
// REMARK-NOT: remark: loop_split: not applied: a folded mask separates
tt.func @scale_add_mask(%diag: i32, %n: i32, %s: f32, %m: f32) -> tensor<64xf32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %ninf = arith.constant dense<0xFF800000> : tensor<64xf32>
  %zero = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %ds = tt.splat %diag : i32 -> tensor<64xi32>
  %ss = tt.splat %s : f32 -> tensor<64xf32>
  %res = scf.for %i = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<64xf32>) : i32 {
    %is = tt.splat %i : i32 -> tensor<64xi32>
    %offs = arith.addi %is, %r : tensor<64xi32>
    %mask = arith.cmpi slt, %offs, %ds : tensor<64xi32>
    %x = arith.sitofp %offs : tensor<64xi32> to tensor<64xf32>
    %scaled = arith.mulf %x, %ss : tensor<64xf32>
    %bias = arith.select %mask, %zero, %ninf : tensor<64xi1>, tensor<64xf32>
    %masked = arith.addf %scaled, %bias : tensor<64xf32>
    %e = math.exp %masked : tensor<64xf32>
    %acc2 = arith.addf %acc, %e : tensor<64xf32>
    scf.yield %acc2 : tensor<64xf32>
  }
  tt.return %res : tensor<64xf32>
}

// -----

// A masked product summed by a reduction: the reduction's adds would take the
// multiply directly once the select folds. Declined; with rounding=mul-rn
// the reduction sums correctly rounded products.
// CHECK-LABEL: tt.func @masked_product_sum
// CHECK-COUNT-1: scf.for
// CHECK-NOT:     scf.for
// ALLOW-LABEL: tt.func @masked_product_sum
// ALLOW-COUNT-2: scf.for
// RN-LABEL: tt.func @masked_product_sum
// RN:         scf.for
// RN:           %[[R:.*]] = tt.elementwise_inline_asm "mul.rn.f32
// RN:           "tt.reduce"(%[[R]])
// RN:         scf.for
// REMARK: remark: loop_split: not applied: a folded mask separates a multiply from an add
tt.func @masked_product_sum(%diag: i32, %n: i32, %s: f32) -> f32 {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant 0.000000e+00 : f32
  %zeros = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %ds = tt.splat %diag : i32 -> tensor<64xi32>
  %ss = tt.splat %s : f32 -> tensor<64xf32>
  %res = scf.for %i = %c0 to %n step %c64 iter_args(%acc = %zero) -> (f32) : i32 {
    %is = tt.splat %i : i32 -> tensor<64xi32>
    %offs = arith.addi %is, %r : tensor<64xi32>
    %mask = arith.cmpi slt, %offs, %ds : tensor<64xi32>
    %x = arith.sitofp %offs : tensor<64xi32> to tensor<64xf32>
    %p = arith.mulf %x, %ss : tensor<64xf32>
    %masked = arith.select %mask, %p, %zeros : tensor<64xi1>, tensor<64xf32>
    %sum = "tt.reduce"(%masked) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      tt.reduce.return %t : f32
    }) : (tensor<64xf32>) -> f32
    %acc2 = arith.addf %acc, %sum : f32
    scf.yield %acc2 : f32
  }
  tt.return %res : f32
}

// -----

// The scalar form (`if start_n >= diag: qk = tl.where(...)`): where the
// scalar condition folds, canonicalize inlines the else region and the scaled
// scores it yields meet the subtraction the branch kept apart (the H200 showed
// outputs 1 ulp off for the one-loop causal attention's scalar form). Declined
// by default; with mul-rn the yielded value is the rounded product.
// CHECK-LABEL: tt.func @scalar_branch_mask
// CHECK-COUNT-1: scf.for
// CHECK-NOT:     scf.for
// ALLOW-LABEL: tt.func @scalar_branch_mask
// ALLOW-COUNT-2: scf.for
// RN-LABEL: tt.func @scalar_branch_mask
// RN:         scf.for
// RN-NOT:       scf.if
// RN:           %[[R:.*]] = tt.elementwise_inline_asm "mul.rn.f32
// RN:           arith.subf %[[R]]
// RN:         scf.for
// RN-NOT:       tt.elementwise_inline_asm
// RN:           arith.select
// RN:         tt.return
// REMARK: remark: loop_split: not applied: a folded mask separates a multiply from an add
tt.func @scalar_branch_mask(%diag: i32, %n: i32, %s: f32, %m: f32) -> tensor<64xf32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %ninf = arith.constant dense<0xFF800000> : tensor<64xf32>
  %zero = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %ds = tt.splat %diag : i32 -> tensor<64xi32>
  %ss = tt.splat %s : f32 -> tensor<64xf32>
  %ms = tt.splat %m : f32 -> tensor<64xf32>
  %res = scf.for %i = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<64xf32>) : i32 {
    %is = tt.splat %i : i32 -> tensor<64xi32>
    %offs = arith.addi %is, %r : tensor<64xi32>
    %x = arith.sitofp %offs : tensor<64xi32> to tensor<64xf32>
    %scaled = arith.mulf %x, %ss : tensor<64xf32>
    %near = arith.cmpi sge, %i, %diag : i32
    %masked = scf.if %near -> (tensor<64xf32>) {
      %mask = arith.cmpi slt, %offs, %ds : tensor<64xi32>
      %sel = arith.select %mask, %scaled, %ninf : tensor<64xi1>, tensor<64xf32>
      scf.yield %sel : tensor<64xf32>
    } else {
      scf.yield %scaled : tensor<64xf32>
    }
    %shifted = arith.subf %masked, %ms : tensor<64xf32>
    %e = math.exp %shifted : tensor<64xf32>
    %acc2 = arith.addf %acc, %e : tensor<64xf32>
    scf.yield %acc2 : tensor<64xf32>
  }
  tt.return %res : tensor<64xf32>
}
