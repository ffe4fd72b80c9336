// RUN: %opt %s -split-input-file --pass loop_split,canonicalize,cse --no-debug-info | FileCheck %s

// Issue 17: loops that count blocks (paged KV caches, vLLM's unified attention)
// compare `j * TILE_SIZE + offs_t` with the query positions. With the iv times a
// positive constant s and no invariant on its side, the split points are
// ceil((B + k) / s) (divsi and a remainder test, in i64), and the guard bounds
// lb and ub so that s * iv + offs stays in i32. Declined: an invariant on the
// scaled side (`j * TILE + base`), i64 loops, non-positive factors.

// CHECK-LABEL: tt.func @tile_scaled(
// CHECK-SAME:      %[[Q0:[a-z0-9]+]]: i32, %[[NB:[a-z0-9]+]]: i32
// The guard: 16 * (nb - 1) + 15 <= INT32_MAX.
// CHECK-DAG:     arith.cmpi sle, %[[NB]], %c134217728_i32 : i32
// CHECK-DAG:     arith.divsi %{{.*}}, %c16_i64 : i64
// CHECK-DAG:     arith.cmpi sgt, %{{.*}}, %c0_i64 : i64
// CHECK:         scf.for
// CHECK-NOT:       arith.cmpi
// CHECK:           scf.yield
// CHECK:         scf.for
// CHECK:           arith.cmpi sge
// CHECK:         scf.for
// CHECK-NOT:       arith.cmpi
// CHECK:           scf.yield
tt.func @tile_scaled(%q0: i32, %nb: i32, %x: tensor<128x16xf32>) -> tensor<128x16xf32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<128x16xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %qs = tt.splat %q0 : i32 -> tensor<128xi32>
  %qpos = arith.addi %qs, %r : tensor<128xi32>
  %em = tt.expand_dims %qpos {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x16xi32>
  %offs_t = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %res = scf.for %j = %c0 to %nb step %c1 iter_args(%acc = %x) -> (tensor<128x16xf32>) : i32 {
    %tile = arith.constant 16 : i32
    %kv = arith.muli %j, %tile : i32
    %sn = tt.splat %kv : i32 -> tensor<16xi32>
    %cols = arith.addi %sn, %offs_t : tensor<16xi32>
    %en = tt.expand_dims %cols {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
    %bn = tt.broadcast %en : tensor<1x16xi32> -> tensor<128x16xi32>
    %mask = arith.cmpi sge, %bm, %bn : tensor<128x16xi32>
    %s = arith.select %mask, %acc, %ninf : tensor<128x16xi1>, tensor<128x16xf32>
    %n = arith.addf %acc, %s : tensor<128x16xf32>
    scf.yield %n : tensor<128x16xf32>
  }
  tt.return %res : tensor<128x16xf32>
}

// -----

// Negative: `j * 16 + base` (an invariant on the scaled side).
// CHECK-LABEL: tt.func @tile_scaled_with_base
// CHECK:         scf.for
// CHECK:           arith.cmpi sge
// CHECK-NOT:     scf.for
tt.func @tile_scaled_with_base(%q0: i32, %nb: i32, %base: i32, %x: tensor<128x16xf32>) -> tensor<128x16xf32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<128x16xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %qs = tt.splat %q0 : i32 -> tensor<128xi32>
  %qpos = arith.addi %qs, %r : tensor<128xi32>
  %em = tt.expand_dims %qpos {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x16xi32>
  %offs_t = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %res = scf.for %j = %c0 to %nb step %c1 iter_args(%acc = %x) -> (tensor<128x16xf32>) : i32 {
    %tile = arith.constant 16 : i32
    %kv0 = arith.muli %j, %tile : i32
    %kv = arith.addi %kv0, %base : i32
    %sn = tt.splat %kv : i32 -> tensor<16xi32>
    %cols = arith.addi %sn, %offs_t : tensor<16xi32>
    %en = tt.expand_dims %cols {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
    %bn = tt.broadcast %en : tensor<1x16xi32> -> tensor<128x16xi32>
    %mask = arith.cmpi sge, %bm, %bn : tensor<128x16xi32>
    %s = arith.select %mask, %acc, %ninf : tensor<128x16xi1>, tensor<128x16xf32>
    %n = arith.addf %acc, %s : tensor<128x16xf32>
    scf.yield %n : tensor<128x16xf32>
  }
  tt.return %res : tensor<128x16xf32>
}

// -----

// Negative: a negative factor reverses the order.
// CHECK-LABEL: tt.func @tile_negative_factor
// CHECK:         scf.for
// CHECK:           arith.cmpi sge
// CHECK-NOT:     scf.for
tt.func @tile_negative_factor(%q0: i32, %nb: i32, %x: tensor<128x16xf32>) -> tensor<128x16xf32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<128x16xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %qs = tt.splat %q0 : i32 -> tensor<128xi32>
  %qpos = arith.addi %qs, %r : tensor<128xi32>
  %em = tt.expand_dims %qpos {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x16xi32>
  %offs_t = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %res = scf.for %j = %c0 to %nb step %c1 iter_args(%acc = %x) -> (tensor<128x16xf32>) : i32 {
    %tile = arith.constant -16 : i32
    %kv = arith.muli %j, %tile : i32
    %sn = tt.splat %kv : i32 -> tensor<16xi32>
    %cols = arith.addi %sn, %offs_t : tensor<16xi32>
    %en = tt.expand_dims %cols {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
    %bn = tt.broadcast %en : tensor<1x16xi32> -> tensor<128x16xi32>
    %mask = arith.cmpi sge, %bm, %bn : tensor<128x16xi32>
    %s = arith.select %mask, %acc, %ninf : tensor<128x16xi1>, tensor<128x16xf32>
    %n = arith.addf %acc, %s : tensor<128x16xf32>
    scf.yield %n : tensor<128x16xf32>
  }
  tt.return %res : tensor<128x16xf32>
}

// -----

// Negative: an i64 loop whose scaled iv is truncated (not read: trunci).
// CHECK-LABEL: tt.func @tile_scaled_i64_loop
// CHECK:         scf.for
// CHECK:           arith.cmpi sge
// CHECK-NOT:     scf.for
tt.func @tile_scaled_i64_loop(%q0: i32, %nb: i64, %x: tensor<128x16xf32>) -> tensor<128x16xf32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<128x16xf32>
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %qs = tt.splat %q0 : i32 -> tensor<128xi32>
  %qpos = arith.addi %qs, %r : tensor<128xi32>
  %em = tt.expand_dims %qpos {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %bm = tt.broadcast %em : tensor<128x1xi32> -> tensor<128x16xi32>
  %offs_t = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %res = scf.for %j = %c0 to %nb step %c1 iter_args(%acc = %x) -> (tensor<128x16xf32>) : i64 {
    %tile = arith.constant 16 : i64
    %kv64 = arith.muli %j, %tile : i64
    %kv = arith.trunci %kv64 : i64 to i32
    %sn = tt.splat %kv : i32 -> tensor<16xi32>
    %cols = arith.addi %sn, %offs_t : tensor<16xi32>
    %en = tt.expand_dims %cols {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
    %bn = tt.broadcast %en : tensor<1x16xi32> -> tensor<128x16xi32>
    %mask = arith.cmpi sge, %bm, %bn : tensor<128x16xi32>
    %s = arith.select %mask, %acc, %ninf : tensor<128x16xi1>, tensor<128x16xf32>
    %n = arith.addf %acc, %s : tensor<128x16xf32>
    scf.yield %n : tensor<128x16xf32>
  }
  tt.return %res : tensor<128x16xf32>
}

// -----

// A paged loop: the KV block comes through a block table (a load indexed by
// the counter), the mask is on the counter (`j * 16 + offs_t < seq_len`). The
// data-dependent address does not matter; the mask splits, and the first loop
// loads K unmasked.
// CHECK-LABEL: tt.func @paged_block_table
// CHECK:         scf.for
// CHECK-NOT:       arith.cmpi
// CHECK:           tt.load %{{[0-9]+}} : tensor<16x!tt.ptr<f16>>
// CHECK:           scf.yield
// CHECK:         scf.for
// CHECK:           arith.cmpi slt
tt.func @paged_block_table(%bt: !tt.ptr<i32>, %kc: !tt.ptr<f16>, %seq: i32, %nb: i32, %x: tensor<16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c16 = arith.constant 16 : i32
  %zero = arith.constant dense<0.000000e+00> : tensor<16xf16>
  %offs_t = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %seqs = tt.splat %seq : i32 -> tensor<16xi32>
  %res = scf.for %j = %c0 to %nb step %c1 iter_args(%acc = %x) -> (tensor<16xf32>) : i32 {
    %btp = tt.addptr %bt, %j : !tt.ptr<i32>, i32
    %blk = tt.load %btp : !tt.ptr<i32>
    %base = arith.muli %blk, %c16 : i32
    %bs = tt.splat %base : i32 -> tensor<16xi32>
    %slot = arith.addi %bs, %offs_t : tensor<16xi32>
    %kcs = tt.splat %kc : !tt.ptr<f16> -> tensor<16x!tt.ptr<f16>>
    %ptrs = tt.addptr %kcs, %slot : tensor<16x!tt.ptr<f16>>, tensor<16xi32>
    %kv0 = arith.muli %j, %c16 : i32
    %kvs = tt.splat %kv0 : i32 -> tensor<16xi32>
    %pos = arith.addi %kvs, %offs_t : tensor<16xi32>
    %mask = arith.cmpi slt, %pos, %seqs : tensor<16xi32>
    %k = tt.load %ptrs, %mask, %zero : tensor<16x!tt.ptr<f16>>
    %kf = arith.extf %k : tensor<16xf16> to tensor<16xf32>
    %n = arith.addf %acc, %kf : tensor<16xf32>
    scf.yield %n : tensor<16xf32>
  }
  tt.return %res : tensor<16xf32>
}
