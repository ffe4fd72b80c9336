// RUN: %opt %s -split-input-file --pass loop_split,canonicalize,cse --no-debug-info | FileCheck %s

// Issue 17: masks that AND the causal comparison with sequence-length masks, as
// sglang's prefill/extend and lightllm's context attention write them:
//   mask = (start_n + offs_n < seq_len) & (offs_m >= start_n + offs_n)
// with loop bounds `min((start_m + 1) * BLOCK_M, seq_len)`, `block_mask *
// min(...)` and `block_mask * (start_m + 1) * BLOCK_M` (block_mask in {0, 1}).
// Every iv comparison is folded in the known parts: the low part ends at the
// smallest split point, so it has no comparison left. The bound forms prove
// that no iteration reaches the part past the diagonal, which is not emitted.
// Negative cases: a comparison whose own low part is empty is not folded (it
// would empty the low part), one whose guard always fails is left in place,
// and a bound multiplied by a value that is not 0/1 or with a lower bound that
// is not a constant >= 0 keeps the third part.

// The low part ends at the smaller of the two split points.
// CHECK-LABEL: tt.func @min_bound
// CHECK:         arith.minsi
// CHECK:         scf.for
// CHECK-NOT:       arith.cmpi
// CHECK:           scf.yield
// CHECK:         scf.for
// CHECK-DAG:       arith.cmpi slt
// CHECK-DAG:       arith.cmpi sge
// CHECK:           scf.yield
// CHECK-NOT:     scf.for
// CHECK:         tt.return
tt.func @min_bound(%start_m: i32, %seq: i32, %x: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %m0 = arith.muli %start_m, %c128 : i32
  %ms = tt.splat %m0 : i32 -> tensor<128xi32>
  %offs_m = arith.addi %ms, %r : tensor<128xi32>
  %em = tt.expand_dims %offs_m {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x64xi32>
  %offs_n = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %seqs = tt.splat %seq : i32 -> tensor<1x64xi32>
  %sm1 = arith.addi %start_m, %c1 : i32
  %diag = arith.muli %sm1, %c128 : i32
  %end = arith.minsi %diag, %seq : i32
  %ub = arith.minsi %diag, %seq : i32
  %res = scf.for %start_n = %c0 to %ub step %c64 iter_args(%acc = %x) -> (tensor<128x64xf32>) : i32 {
    %sn = tt.splat %start_n : i32 -> tensor<64xi32>
    %cols = arith.addi %sn, %offs_n : tensor<64xi32>
    %en = tt.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %inseq = arith.cmpi slt, %en, %seqs : tensor<1x64xi32>
    %inseqb = tt.broadcast %inseq : tensor<1x64xi1> -> tensor<128x64xi1>
    %bn = tt.broadcast %en : tensor<1x64xi32> -> tensor<128x64xi32>
    %causal = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
    %mask = arith.andi %inseqb, %causal : tensor<128x64xi1>
    %s = arith.select %mask, %acc, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
    %n = arith.addf %acc, %s : tensor<128x64xf32>
    scf.yield %n : tensor<128x64xf32>
  }
  tt.return %res : tensor<128x64xf32>
}

// -----

// sglang: `block_mask * min((start_m + 1) * BLOCK_M, seq_len)`.
// CHECK-LABEL: tt.func @sglang_block_mask
// CHECK:         scf.for
// CHECK-NOT:       arith.cmpi
// CHECK:           scf.yield
// CHECK:         scf.for
// CHECK-DAG:       arith.cmpi slt
// CHECK-DAG:       arith.cmpi sge
// CHECK:           scf.yield
// CHECK-NOT:     scf.for
// CHECK:         tt.return
tt.func @sglang_block_mask(%start_m: i32, %seq: i32, %x: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %m0 = arith.muli %start_m, %c128 : i32
  %ms = tt.splat %m0 : i32 -> tensor<128xi32>
  %offs_m = arith.addi %ms, %r : tensor<128xi32>
  %em = tt.expand_dims %offs_m {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x64xi32>
  %offs_n = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %seqs = tt.splat %seq : i32 -> tensor<1x64xi32>
  %sm1 = arith.addi %start_m, %c1 : i32
  %diag = arith.muli %sm1, %c128 : i32
  %end = arith.minsi %diag, %seq : i32
  %inblock = arith.cmpi slt, %m0, %seq : i32
  %bmask = arith.extui %inblock : i1 to i32
  %ub = arith.muli %bmask, %end : i32
  %res = scf.for %start_n = %c0 to %ub step %c64 iter_args(%acc = %x) -> (tensor<128x64xf32>) : i32 {
    %sn = tt.splat %start_n : i32 -> tensor<64xi32>
    %cols = arith.addi %sn, %offs_n : tensor<64xi32>
    %en = tt.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %inseq = arith.cmpi slt, %en, %seqs : tensor<1x64xi32>
    %inseqb = tt.broadcast %inseq : tensor<1x64xi1> -> tensor<128x64xi1>
    %bn = tt.broadcast %en : tensor<1x64xi32> -> tensor<128x64xi32>
    %causal = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
    %mask = arith.andi %inseqb, %causal : tensor<128x64xi1>
    %s = arith.select %mask, %acc, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
    %n = arith.addf %acc, %s : tensor<128x64xf32>
    scf.yield %n : tensor<128x64xf32>
  }
  tt.return %res : tensor<128x64xf32>
}

// -----

// lightllm: `block_mask * (start_m + 1) * BLOCK_M`.
// CHECK-LABEL: tt.func @lightllm_block_mask
// CHECK:         scf.for
// CHECK-NOT:       arith.cmpi
// CHECK:           scf.yield
// CHECK:         scf.for
// CHECK-DAG:       arith.cmpi slt
// CHECK-DAG:       arith.cmpi sge
// CHECK:           scf.yield
// CHECK-NOT:     scf.for
// CHECK:         tt.return
tt.func @lightllm_block_mask(%start_m: i32, %seq: i32, %x: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %m0 = arith.muli %start_m, %c128 : i32
  %ms = tt.splat %m0 : i32 -> tensor<128xi32>
  %offs_m = arith.addi %ms, %r : tensor<128xi32>
  %em = tt.expand_dims %offs_m {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x64xi32>
  %offs_n = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %seqs = tt.splat %seq : i32 -> tensor<1x64xi32>
  %sm1 = arith.addi %start_m, %c1 : i32
  %inblock = arith.cmpi slt, %m0, %seq : i32
  %bmask = arith.extui %inblock : i1 to i32
  %bm1 = arith.muli %bmask, %sm1 : i32
  %ub = arith.muli %bm1, %c128 : i32
  %res = scf.for %start_n = %c0 to %ub step %c64 iter_args(%acc = %x) -> (tensor<128x64xf32>) : i32 {
    %sn = tt.splat %start_n : i32 -> tensor<64xi32>
    %cols = arith.addi %sn, %offs_n : tensor<64xi32>
    %en = tt.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %inseq = arith.cmpi slt, %en, %seqs : tensor<1x64xi32>
    %inseqb = tt.broadcast %inseq : tensor<1x64xi1> -> tensor<128x64xi1>
    %bn = tt.broadcast %en : tensor<1x64xi32> -> tensor<128x64xi32>
    %causal = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
    %mask = arith.andi %inseqb, %causal : tensor<128x64xi1>
    %s = arith.select %mask, %acc, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
    %n = arith.addf %acc, %s : tensor<128x64xf32>
    scf.yield %n : tensor<128x64xf32>
  }
  tt.return %res : tensor<128x64xf32>
}

// -----

// `tl.where(c, 1, 0)` kept as a select of 0/1, either operand order.
// CHECK-LABEL: tt.func @select_block_mask
// CHECK:         scf.for
// CHECK-NOT:       arith.cmpi
// CHECK:           scf.yield
// CHECK:         scf.for
// CHECK-DAG:       arith.cmpi slt
// CHECK-DAG:       arith.cmpi sge
// CHECK:           scf.yield
// CHECK-NOT:     scf.for
// CHECK:         tt.return
tt.func @select_block_mask(%start_m: i32, %seq: i32, %x: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %m0 = arith.muli %start_m, %c128 : i32
  %ms = tt.splat %m0 : i32 -> tensor<128xi32>
  %offs_m = arith.addi %ms, %r : tensor<128xi32>
  %em = tt.expand_dims %offs_m {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x64xi32>
  %offs_n = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %seqs = tt.splat %seq : i32 -> tensor<1x64xi32>
  %sm1 = arith.addi %start_m, %c1 : i32
  %diag = arith.muli %sm1, %c128 : i32
  %end = arith.minsi %diag, %seq : i32
  %inblock = arith.cmpi slt, %m0, %seq : i32
  %bmask = arith.select %inblock, %c1, %c0 : i32
  %ub = arith.muli %end, %bmask : i32
  %res = scf.for %start_n = %c0 to %ub step %c64 iter_args(%acc = %x) -> (tensor<128x64xf32>) : i32 {
    %sn = tt.splat %start_n : i32 -> tensor<64xi32>
    %cols = arith.addi %sn, %offs_n : tensor<64xi32>
    %en = tt.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %inseq = arith.cmpi slt, %en, %seqs : tensor<1x64xi32>
    %inseqb = tt.broadcast %inseq : tensor<1x64xi1> -> tensor<128x64xi1>
    %bn = tt.broadcast %en : tensor<1x64xi32> -> tensor<128x64xi32>
    %causal = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
    %mask = arith.andi %inseqb, %causal : tensor<128x64xi1>
    %s = arith.select %mask, %acc, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
    %n = arith.addf %acc, %s : tensor<128x64xf32>
    scf.yield %n : tensor<128x64xf32>
  }
  tt.return %res : tensor<128x64xf32>
}

// -----

// Negative: with a lower bound that may be negative, block_mask = 0 leaves
// [lb, 0) to run, which may reach past the diagonal: the third part stays.
// CHECK-LABEL: tt.func @block_mask_lb_not_constant
// CHECK:         scf.for
// CHECK-NOT:       arith.cmpi
// CHECK:           scf.yield
// CHECK:         scf.for
// CHECK:           scf.yield
// CHECK:         scf.for
// CHECK:           scf.yield
// CHECK:         tt.return
tt.func @block_mask_lb_not_constant(%start_m: i32, %seq: i32, %lb: i32, %x: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %m0 = arith.muli %start_m, %c128 : i32
  %ms = tt.splat %m0 : i32 -> tensor<128xi32>
  %offs_m = arith.addi %ms, %r : tensor<128xi32>
  %em = tt.expand_dims %offs_m {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x64xi32>
  %offs_n = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %seqs = tt.splat %seq : i32 -> tensor<1x64xi32>
  %sm1 = arith.addi %start_m, %c1 : i32
  %diag = arith.muli %sm1, %c128 : i32
  %end = arith.minsi %diag, %seq : i32
  %inblock = arith.cmpi slt, %m0, %seq : i32
  %bmask = arith.extui %inblock : i1 to i32
  %ub = arith.muli %bmask, %end : i32
  %res = scf.for %start_n = %lb to %ub step %c64 iter_args(%acc = %x) -> (tensor<128x64xf32>) : i32 {
    %sn = tt.splat %start_n : i32 -> tensor<64xi32>
    %cols = arith.addi %sn, %offs_n : tensor<64xi32>
    %en = tt.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %inseq = arith.cmpi slt, %en, %seqs : tensor<1x64xi32>
    %inseqb = tt.broadcast %inseq : tensor<1x64xi1> -> tensor<128x64xi1>
    %bn = tt.broadcast %en : tensor<1x64xi32> -> tensor<128x64xi32>
    %causal = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
    %mask = arith.andi %inseqb, %causal : tensor<128x64xi1>
    %s = arith.select %mask, %acc, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
    %n = arith.addf %acc, %s : tensor<128x64xf32>
    scf.yield %n : tensor<128x64xf32>
  }
  tt.return %res : tensor<128x64xf32>
}

// -----

// Negative: a factor in {0, 2} may double the bound: the third part stays.
// CHECK-LABEL: tt.func @block_mask_not_01
// CHECK:         scf.for
// CHECK-NOT:       arith.cmpi
// CHECK:           scf.yield
// CHECK:         scf.for
// CHECK:           scf.yield
// CHECK:         scf.for
// CHECK:           scf.yield
// CHECK:         tt.return
tt.func @block_mask_not_01(%start_m: i32, %seq: i32, %x: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %m0 = arith.muli %start_m, %c128 : i32
  %ms = tt.splat %m0 : i32 -> tensor<128xi32>
  %offs_m = arith.addi %ms, %r : tensor<128xi32>
  %em = tt.expand_dims %offs_m {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x64xi32>
  %offs_n = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %seqs = tt.splat %seq : i32 -> tensor<1x64xi32>
  %sm1 = arith.addi %start_m, %c1 : i32
  %diag = arith.muli %sm1, %c128 : i32
  %end = arith.minsi %diag, %seq : i32
  %inblock = arith.cmpi slt, %m0, %seq : i32
  %c2 = arith.constant 2 : i32
  %bmask = arith.select %inblock, %c2, %c0 : i32
  %ub = arith.muli %bmask, %end : i32
  %res = scf.for %start_n = %c0 to %ub step %c64 iter_args(%acc = %x) -> (tensor<128x64xf32>) : i32 {
    %sn = tt.splat %start_n : i32 -> tensor<64xi32>
    %cols = arith.addi %sn, %offs_n : tensor<64xi32>
    %en = tt.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %inseq = arith.cmpi slt, %en, %seqs : tensor<1x64xi32>
    %inseqb = tt.broadcast %inseq : tensor<1x64xi1> -> tensor<128x64xi1>
    %bn = tt.broadcast %en : tensor<1x64xi32> -> tensor<128x64xi32>
    %causal = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
    %mask = arith.andi %inseqb, %causal : tensor<128x64xi1>
    %s = arith.select %mask, %acc, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
    %n = arith.addf %acc, %s : tensor<128x64xf32>
    scf.yield %n : tensor<128x64xf32>
  }
  tt.return %res : tensor<128x64xf32>
}

// -----

// Negative: `start_n + offs_n >= lo` in a loop from lo is never known below
// lo - 63 <= lb: folding it would empty the low part, so only the causal
// comparison is folded and the first loop keeps this one.
// CHECK-LABEL: tt.func @second_low_empty
// CHECK:         scf.for
// CHECK:           arith.cmpi sge, %{{.*}} : tensor<1x64xi32>
// CHECK-NOT:       arith.cmpi
// CHECK:           scf.yield
// CHECK:         scf.for
tt.func @second_low_empty(%start_m: i32, %seq: i32, %lo: i32, %x: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %m0 = arith.muli %start_m, %c128 : i32
  %ms = tt.splat %m0 : i32 -> tensor<128xi32>
  %offs_m = arith.addi %ms, %r : tensor<128xi32>
  %em = tt.expand_dims %offs_m {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x64xi32>
  %offs_n = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %seqs = tt.splat %seq : i32 -> tensor<1x64xi32>
  %ub = arith.muli %start_m, %c128 : i32
  %res = scf.for %start_n = %lo to %ub step %c64 iter_args(%acc = %x) -> (tensor<128x64xf32>) : i32 {
    %sn = tt.splat %start_n : i32 -> tensor<64xi32>
    %cols = arith.addi %sn, %offs_n : tensor<64xi32>
    %en = tt.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %los = tt.splat %lo : i32 -> tensor<1x64xi32>
    %inseq = arith.cmpi sge, %en, %los : tensor<1x64xi32>
    %inseqb = tt.broadcast %inseq : tensor<1x64xi1> -> tensor<128x64xi1>
    %bn = tt.broadcast %en : tensor<1x64xi32> -> tensor<128x64xi32>
    %causal = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
    %mask = arith.andi %inseqb, %causal : tensor<128x64xi1>
    %s = arith.select %mask, %acc, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
    %n = arith.addf %acc, %s : tensor<128x64xf32>
    scf.yield %n : tensor<128x64xf32>
  }
  tt.return %res : tensor<128x64xf32>
}

// -----

// Negative: `start_n + offs_n - (2^31 - 1)` wraps from lb = -10 on (guard known
// to fail): that comparison stays in every part; the causal one still splits.
// CHECK-LABEL: tt.func @second_guard_fails
// CHECK:         scf.for
// CHECK:           arith.cmpi slt
// CHECK-NOT:       arith.cmpi sge
// CHECK:           scf.yield
// CHECK:         scf.for
// CHECK-DAG:       arith.cmpi slt
// CHECK-DAG:       arith.cmpi sge
tt.func @second_guard_fails(%start_m: i32, %seq: i32, %x: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %cm10 = arith.constant -10 : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %m0 = arith.muli %start_m, %c128 : i32
  %ms = tt.splat %m0 : i32 -> tensor<128xi32>
  %offs_m = arith.addi %ms, %r : tensor<128xi32>
  %em = tt.expand_dims %offs_m {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x64xi32>
  %offs_n = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %seqs = tt.splat %seq : i32 -> tensor<1x64xi32>
  %ub = arith.muli %start_m, %c128 : i32
  %res = scf.for %start_n = %cm10 to %ub step %c64 iter_args(%acc = %x) -> (tensor<128x64xf32>) : i32 {
    %sn = tt.splat %start_n : i32 -> tensor<64xi32>
    %cols = arith.addi %sn, %offs_n : tensor<64xi32>
    %en = tt.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %big = arith.constant dense<-2147483647> : tensor<1x64xi32>
    %shifted = arith.addi %en, %big : tensor<1x64xi32>
    %inseq = arith.cmpi slt, %shifted, %seqs : tensor<1x64xi32>
    %inseqb = tt.broadcast %inseq : tensor<1x64xi1> -> tensor<128x64xi1>
    %bn = tt.broadcast %en : tensor<1x64xi32> -> tensor<128x64xi32>
    %causal = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
    %mask = arith.andi %inseqb, %causal : tensor<128x64xi1>
    %s = arith.select %mask, %acc, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
    %n = arith.addf %acc, %s : tensor<128x64xf32>
    scf.yield %n : tensor<128x64xf32>
  }
  tt.return %res : tensor<128x64xf32>
}

// -----

// The scalar form `if start_n >= diag: qk = where(offs_m >= start_n + offs_n,
// ...)`: the tensor comparison inside the scf.if of another candidate is not
// folded (dead where the condition is false, kept where it is true, as in the
// hand-split kernel); the scalar one needs no guard, so the loop becomes two
// loops with no guard, the second without the scf.if.
// The split point comes from m0 = start_m * 128, not from the kernel's
// diag = m0 - 63 (+ 63): m0 - 63 wraps only for m0 < INT32_MIN + 63, and then
// ub = m0 + 128 < 0 = lb, an empty loop (setPointBase).
// CHECK-LABEL: tt.func @nested_if
// CHECK:         %[[M0:.*]] = arith.muli %arg0, %c128_i32 : i32
// CHECK-NOT:     arith.cmpi
// CHECK-NOT:     arith.subi
// CHECK:         arith.extsi %[[M0]] : i32 to i64
// CHECK-NOT:     arith.cmpi
// CHECK:         scf.for
// CHECK-NOT:       arith.cmpi
// CHECK-NOT:       scf.if
// CHECK:           scf.yield
// CHECK:         scf.for
// CHECK-NOT:       scf.if
// CHECK:           arith.cmpi sge, %{{.*}} : tensor<128x64xi32>
// CHECK-NOT:       scf.if
// CHECK:           scf.yield
// CHECK-NOT:     scf.for
tt.func @nested_if(%start_m: i32, %x: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c63 = arith.constant 63 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %m0 = arith.muli %start_m, %c128 : i32
  %diag = arith.subi %m0, %c63 : i32
  %ms = tt.splat %m0 : i32 -> tensor<128xi32>
  %offs_m = arith.addi %ms, %r : tensor<128xi32>
  %em = tt.expand_dims %offs_m {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x64xi32>
  %offs_n = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %sm1 = arith.addi %start_m, %c1 : i32
  %ub = arith.muli %sm1, %c128 : i32
  %res = scf.for %start_n = %c0 to %ub step %c64 iter_args(%acc = %x) -> (tensor<128x64xf32>) : i32 {
    %on = arith.cmpi sge, %start_n, %diag : i32
    %qk = scf.if %on -> (tensor<128x64xf32>) {
      %sn = tt.splat %start_n : i32 -> tensor<64xi32>
      %cols = arith.addi %sn, %offs_n : tensor<64xi32>
      %en = tt.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
      %bn = tt.broadcast %en : tensor<1x64xi32> -> tensor<128x64xi32>
      %causal = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
      %s = arith.select %causal, %acc, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
      scf.yield %s : tensor<128x64xf32>
    } else {
      scf.yield %acc : tensor<128x64xf32>
    }
    %n = arith.addf %acc, %qk : tensor<128x64xf32>
    scf.yield %n : tensor<128x64xf32>
  }
  tt.return %res : tensor<128x64xf32>
}

// -----

// Negative: from lb = INT32_MIN + 48 the loop need not be empty when m0 - 63
// wraps (ub = m0 + 128 may exceed lb), so the split point is computed from
// the kernel's diag (extsi(diag) + 63).
// CHECK-LABEL: tt.func @nested_if_negative_lb
// CHECK:         %[[D:.*]] = arith.subi %{{.*}}, %c63_i32 : i32
// CHECK:         arith.extsi %[[D]] : i32 to i64
// CHECK:         scf.for
tt.func @nested_if_negative_lb(%start_m: i32, %x: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %c0 = arith.constant -2147483600 : i32
  %c1 = arith.constant 1 : i32
  %c63 = arith.constant 63 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %m0 = arith.muli %start_m, %c128 : i32
  %diag = arith.subi %m0, %c63 : i32
  %ms = tt.splat %m0 : i32 -> tensor<128xi32>
  %offs_m = arith.addi %ms, %r : tensor<128xi32>
  %em = tt.expand_dims %offs_m {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x64xi32>
  %offs_n = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %sm1 = arith.addi %start_m, %c1 : i32
  %ub = arith.muli %sm1, %c128 : i32
  %res = scf.for %start_n = %c0 to %ub step %c64 iter_args(%acc = %x) -> (tensor<128x64xf32>) : i32 {
    %on = arith.cmpi sge, %start_n, %diag : i32
    %qk = scf.if %on -> (tensor<128x64xf32>) {
      %sn = tt.splat %start_n : i32 -> tensor<64xi32>
      %cols = arith.addi %sn, %offs_n : tensor<64xi32>
      %en = tt.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
      %bn = tt.broadcast %en : tensor<1x64xi32> -> tensor<128x64xi32>
      %causal = arith.cmpi sge, %bm, %bn : tensor<128x64xi32>
      %s = arith.select %causal, %acc, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
      scf.yield %s : tensor<128x64xf32>
    } else {
      scf.yield %acc : tensor<128x64xf32>
    }
    %n = arith.addf %acc, %qk : tensor<128x64xf32>
    scf.yield %n : tensor<128x64xf32>
  }
  tt.return %res : tensor<128x64xf32>
}
