// RUN: %opt %s -split-input-file --pass 'loop_split{rounding=mul-rn},canonicalize,cse' --no-debug-info | FileCheck %s
// RUN: %opt %s -split-input-file --pass 'loop_split{rounding=mul-rn guarded-mask=false},canonicalize,cse' --no-debug-info | FileCheck %s --check-prefix=OFF

// The scalar-form causal attention masks only on the diagonal:
// `if start_n >= diag: qk = tl.where(rows >= cols, qk, -inf)`. loop_split folds
// the `if` in the low part; the high part keeps the loop's own code (it runs
// every iteration when the scale-after-max guard fails), and with it the
// branch, which cost the kernel 16 registers and 4-5% of its speed at head
// dim 64 on the H200. There the branch becomes straight-line code: where the
// condition is false, one operand of the mask is replaced by the value that
// makes the mask keep qk on every element (rows := INT_MAX for `rows >=
// cols`), so the select returns qk, as the else branch did.
// `rows >= cols` keeps qk on every element when rows = INT_MAX: the select
// goes on the rows, the loop-invariant operand, before their expand_dims and
// broadcast.
// CHECK-LABEL: tt.func @rows_ge_cols
// CHECK-DAG:     %[[MAX:.*]] = arith.constant dense<2147483647> : tensor<128xi32>
// CHECK:         scf.for
// CHECK:         scf.for %[[IV:.*]] = %{{.*}} to %arg1
// CHECK-NOT:       scf.if
// CHECK:           %[[C:.*]] = arith.cmpi sge, %[[IV]]
// CHECK:           %[[CS:.*]] = tt.splat %[[C]] : i1 -> tensor<128xi1>
// CHECK:           %[[SAT:.*]] = arith.select %[[CS]], %{{.*}}, %[[MAX]] : tensor<128xi1>, tensor<128xi32>
// CHECK:           %[[E:.*]] = tt.expand_dims %[[SAT]] {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
// CHECK:           %[[B:.*]] = tt.broadcast %[[E]] : tensor<128x1xi32> -> tensor<128x64xi32>
// CHECK:           %[[MASK:.*]] = arith.cmpi sge, %[[B]], %{{.*}} : tensor<128x64xi32>
// CHECK:           arith.select %[[MASK]], %{{.*}}, %{{.*}} : tensor<128x64xi1>, tensor<128x64xf32>
// CHECK-NOT:       scf.if
// CHECK:         tt.return

// OFF-LABEL: tt.func @rows_ge_cols
// OFF:         scf.for
// OFF:         scf.for
// OFF:           scf.if
tt.func @rows_ge_cols(%start_m: i32, %n_ctx: i32, %s: f32, %q: tensor<128x16xf16>, %k: tensor<16x64xf16>) -> tensor<128x64xf32> {
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

// -----

// The mask selects -inf where true: it must be false everywhere, and `rows <u
// cols` is when rows = UINT_MAX.
// CHECK-LABEL: tt.func @unsigned_masked_when_true
// CHECK-DAG:     %[[UMAX:.*]] = arith.constant dense<-1> : tensor<128xi32>
// CHECK:         scf.for
// CHECK:         scf.for
// CHECK-NOT:       scf.if
// CHECK:           %[[SAT:.*]] = arith.select %{{.*}}, %{{.*}}, %[[UMAX]] : tensor<128xi1>, tensor<128xi32>
// CHECK:           %[[E:.*]] = tt.expand_dims %[[SAT]]
// CHECK:           %[[B:.*]] = tt.broadcast %[[E]]
// CHECK:           %[[MASK:.*]] = arith.cmpi ult, %[[B]], %{{.*}} : tensor<128x64xi32>
// CHECK:           arith.select %[[MASK]], %{{.*}}, %{{.*}} : tensor<128x64xi1>, tensor<128x64xf32>
// CHECK:         tt.return
tt.func @unsigned_masked_when_true(%start_m: i32, %n_ctx: i32, %s: f32, %q: tensor<128x16xf16>, %k: tensor<16x64xf16>) -> tensor<128x64xf32> {
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
      %mask = arith.cmpi ult, %bm, %bn : tensor<128x64xi32>
      %masked = arith.select %mask, %ninf, %qk : tensor<128x64xi1>, tensor<128x64xf32>
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

// -----

// No value makes `==` false against every other one: the branch stays.
// CHECK-LABEL: tt.func @equality_mask
// CHECK:         scf.for
// CHECK:         scf.for
// CHECK:           scf.if
// CHECK:             arith.cmpi eq
tt.func @equality_mask(%start_m: i32, %n_ctx: i32, %s: f32, %q: tensor<128x16xf16>, %k: tensor<16x64xf16>) -> tensor<128x64xf32> {
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
      %mask = arith.cmpi eq, %bm, %bn : tensor<128x64xi32>
      %masked = arith.select %mask, %ninf, %qk : tensor<128x64xi1>, tensor<128x64xf32>
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

// -----

// Nor `>` true against every value (nothing exceeds INT_MAX): the branch stays.
// CHECK-LABEL: tt.func @strict_mask_keeping_on_true
// CHECK:         scf.for
// CHECK:         scf.for
// CHECK:           scf.if
// CHECK:             arith.cmpi sgt
tt.func @strict_mask_keeping_on_true(%start_m: i32, %n_ctx: i32, %s: f32, %q: tensor<128x16xf16>, %k: tensor<16x64xf16>) -> tensor<128x64xf32> {
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
      %mask = arith.cmpi sgt, %bm, %bn : tensor<128x64xi32>
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

// -----

// A branch that loads is not run unconditionally: it stays.
// CHECK-LABEL: tt.func @then_branch_loads
// CHECK:         scf.for
// CHECK:         scf.for
// CHECK:           scf.if
// CHECK:             tt.load
tt.func @then_branch_loads(%start_m: i32, %n_ctx: i32, %s: f32, %q: tensor<128x16xf16>, %k: tensor<16x64xf16>, %bp: tensor<128x64x!tt.ptr<f32>>) -> tensor<128x64xf32> {
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
      %bias = tt.load %bp : tensor<128x64x!tt.ptr<f32>>
      %mask = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
      %masked = arith.select %mask, %qk, %bias : tensor<128x64xi1>, tensor<128x64xf32>
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

// -----

// Nor one that multiplies on the tensor cores: where the condition is false
// that would be new work. It stays.
// CHECK-LABEL: tt.func @then_branch_dots
// CHECK:         scf.for
// CHECK:         scf.for
// CHECK:           scf.if
// CHECK:             tt.dot
tt.func @then_branch_dots(%start_m: i32, %n_ctx: i32, %s: f32, %q: tensor<128x16xf16>, %k: tensor<16x64xf16>, %q2: tensor<128x16xf16>) -> tensor<128x64xf32> {
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
      %bias = tt.dot %q2, %k, %zero : tensor<128x16xf16> * tensor<16x64xf16> -> tensor<128x64xf32>
      %mask = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
      %masked = arith.select %mask, %qk, %bias : tensor<128x64xi1>, tensor<128x64xf32>
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
