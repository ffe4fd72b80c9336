// RUN: %opt %s -split-input-file --pass 'offset_overflow_check{print=first}' --no-debug-info | FileCheck %s
// The default (print=none) puts no device printf anywhere; the records are still updated.
// RUN: %opt %s -split-input-file --pass offset_overflow_check --no-debug-info | FileCheck %s --check-prefix=DEFAULT
// DEFAULT-NOT: tt.print
// DEFAULT:     tt.atomic_rmw add
// DEFAULT-NOT: tt.print
// RUN: %opt %s -split-input-file --pass 'offset_overflow_check{mode=abort}' --no-debug-info | FileCheck %s --check-prefix=ABORT

// `pid * stride + arange` in i32 feeding tt.addptr: the exact bounds of the
// i64 value over all lanes are two scalars (pid * stride + 0, + 127); only
// when they leave the i32 range is the tree recomputed in i64 lane by lane
// from sign-extended leaves, compared with the sign-extended i32 result, and
// the lanes that differ counted (the reduction runs under that scalar test).
// CHECK-LABEL: tt.func @row_offset
// CHECK:         %[[MUL:.*]] = arith.muli %arg1, %arg2 : i32
// CHECK:         %[[SPL:.*]] = tt.splat %[[MUL]]
// CHECK:         %[[OFF:.*]] = arith.addi %[[SPL]], %[[R:.*]] : tensor<128xi32>
// CHECK-DAG:     %[[WA:.*]] = arith.extsi %arg1 : i32 to i64
// CHECK-DAG:     %[[WB:.*]] = arith.extsi %arg2 : i32 to i64
// CHECK:         %[[WM:.*]] = arith.muli %[[WA]], %[[WB]] : i64
// CHECK-DAG:     %[[LO:.*]] = arith.addi %[[WM]], %c0_i64 : i64
// CHECK-DAG:     %[[HI:.*]] = arith.addi %[[WM]], %c127_i64 : i64
// CHECK-DAG:     %[[ABOVE:.*]] = arith.cmpi sgt, %[[HI]], %c2147483647_i64 : i64
// CHECK-DAG:     %[[BELOW:.*]] = arith.cmpi slt, %[[LO]], %c-2147483648_i64 : i64
// CHECK:         %[[WRAPS:.*]] = arith.ori %[[ABOVE]], %[[BELOW]] : i1
// CHECK-NOT:     tt.reduce
// CHECK-NOT:     scf.if
// CHECK:         tt.addptr %{{.*}}, %[[OFF]]
// CHECK:         tt.load
// The reporting path (issue 18) runs at the end of the kernel, one block of
// the tile at a time (here two blocks of 64 lanes): the offset's tree is
// rebuilt for the block from its scalar leaves (`tt.make_range(0, 64)` plus
// the block's first lane), so no tensor of the kernel stays live until then;
// the block's lanes are recomputed in i64, compared with the sign-extended
// i32 result, counted and the first found in one reduction; the counts are
// summed and the first lanes (block start + lane) minimized over the blocks.
// CHECK:         %[[REP:.*]]:2 = scf.if %[[WRAPS]] -> (i32, i32) {
// CHECK:           %[[BLOCKS:.*]]:2 = scf.for %[[B:.*]] = %{{.*}} to %c2_i32 step %{{.*}} iter_args(%[[CNT:.*]] = %{{.*}}, %[[FST:.*]] = %{{.*}}) -> (i32, i32)
// CHECK:             %[[FIRSTROW:.*]] = arith.muli %{{.*}}, %c64_i32 : i32
// CHECK:             %[[CS:.*]] = tt.splat %[[MUL]] : i32 -> tensor<64xi32>
// CHECK:             %[[CR:.*]] = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
// CHECK:             %[[START:.*]] = arith.addi %[[FIRSTROW]], %{{.*}} : i32
// CHECK:             %[[SS:.*]] = tt.splat %[[START]] : i32 -> tensor<64xi32>
// CHECK:             %[[LANE:.*]] = arith.addi %[[CR]], %[[SS]] : tensor<64xi32>
// CHECK:             %[[COFF:.*]] = arith.addi %[[CS]], %[[LANE]] : tensor<64xi32>
// CHECK:             %[[WS:.*]] = tt.splat %{{.*}} : i64 -> tensor<64xi64>
// CHECK:             %[[EXACT:.*]] = arith.addi %[[WS]], %{{.*}} : tensor<64xi64>
// CHECK:             %[[WRAP:.*]] = arith.extsi %[[COFF]] : tensor<64xi32> to tensor<64xi64>
// CHECK:             %[[BAD:.*]] = arith.cmpi ne, %[[WRAP]], %[[EXACT]] : tensor<64xi64>
// CHECK:             arith.extui %[[BAD]]
// CHECK:             %[[PAIR:.*]]:2 = "tt.reduce"
// CHECK:               arith.minsi
// CHECK:             %[[AT:.*]] = arith.addi %[[FIRSTROW]], %[[PAIR]]#1 : i32
// CHECK:             %[[SUM:.*]] = arith.addi %[[CNT]], %[[PAIR]]#0 : i32
// CHECK:             arith.minsi %[[FST]]
// CHECK-NOT:         tt.atomic_rmw
// CHECK:           scf.yield %[[BLOCKS]]#0, %[[BLOCKS]]#1 : i32, i32
// CHECK:         } else {
// CHECK-NOT:     tt.assert
// CHECK:         scf.if %{{.*}} {
// CHECK:           tt.atomic_rmw add
// CHECK:           scf.if %{{.*}} {
// CHECK-NEXT:        tt.print "[triton-ext offset_overflow_check] kernel=row_offset site={{.*}}offset-overflow-check.mlir:[[@LINE+18]] i32 offset overflow lanes; first report of this site, lanes in this program=" {{.*}} : %[[REP]]#0 : i32
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    tt.return
// Abort mode checks in place (its assert must come before the access): the
// lanes are counted right after the arithmetic, under the bounds test.
// ABORT-LABEL: tt.func @row_offset
// ABORT:         %[[WRAPS:.*]] = arith.ori
// ABORT:         scf.if %[[WRAPS]] -> (i32) {
// ABORT:           "tt.reduce"
// ABORT:         } else {
// ABORT:         tt.assert %{{.*}}, "[triton-ext offset_overflow_check] kernel=row_offset
// ABORT:         tt.addptr
tt.func @row_offset(%p: !tt.ptr<f32>, %pid: i32, %stride: i32) -> tensor<128xf32> {
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  // The scalar product is checked where the tensor sum is (one tree).
  %row = arith.muli %pid, %stride : i32
  %rows = tt.splat %row : i32 -> tensor<128xi32>
  %off = arith.addi %rows, %r : tensor<128xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %off : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %x = tt.load %pp : tensor<128x!tt.ptr<f32>>
  tt.return %x : tensor<128xf32>
}

// -----

// 2-D `rows[:, None] * stride + cols[None, :]`: the two ranges vary along
// different dimensions, so the bounds are exact: the product's bounds are the
// min/max of its corners, the sum's the sums of the bounds. No reduction
// outside the scalar test.
// CHECK-LABEL: tt.func @tile_offset
// CHECK-COUNT-3: arith.minsi
// CHECK-COUNT-1: arith.maxsi
// CHECK:         %[[WRAPS:.*]] = arith.ori
// CHECK-NOT:     tt.reduce
// CHECK:         tt.load
// CHECK:         scf.if %[[WRAPS]] -> (i32, i32) {
// CHECK-COUNT-2:   "tt.reduce"
// CHECK:         tt.print "[triton-ext offset_overflow_check] kernel=tile_offset
tt.func @tile_offset(%p: !tt.ptr<f32>, %stride: i32) -> tensor<16x32xf32> {
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %c = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
  %re = tt.expand_dims %r {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %s = tt.splat %stride : i32 -> tensor<16x1xi32>
  %rs = arith.muli %re, %s : tensor<16x1xi32>
  %rb = tt.broadcast %rs : tensor<16x1xi32> -> tensor<16x32xi32>
  %ce = tt.expand_dims %c {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  %cb = tt.broadcast %ce : tensor<1x32xi32> -> tensor<16x32xi32>
  %off = arith.addi %rb, %cb : tensor<16x32xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<16x32x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %off : tensor<16x32x!tt.ptr<f32>>, tensor<16x32xi32>
  %x = tt.load %pp : tensor<16x32x!tt.ptr<f32>>
  tt.return %x : tensor<16x32xf32>
}

// -----

// Declined bounds: two ranges along the same dimension (`r - r` is 0 in
// every lane, its interval is not) and a tensor leaf that is not a range
// (an argument): checked lane by lane, the reduction not under a test.
// CHECK-LABEL: tt.func @lane_by_lane
// CHECK-NOT:     scf.if {{.*}} -> (i32)
// CHECK:         "tt.reduce"
// CHECK-NOT:     scf.if {{.*}} -> (i32)
// CHECK:         "tt.reduce"
// CHECK:         tt.print
// CHECK:         tt.print
tt.func @lane_by_lane(%p: !tt.ptr<f32>, %t: tensor<128xi32>, %k: i32) -> tensor<128xf32> {
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %ks = tt.splat %k : i32 -> tensor<128xi32>
  %a = arith.addi %r, %ks : tensor<128xi32>
  %d = arith.subi %a, %r : tensor<128xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %d : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %e = arith.addi %t, %ks : tensor<128xi32>
  %pq = tt.addptr %pp, %e : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %x = tt.load %pq : tensor<128x!tt.ptr<f32>>
  tt.return %x : tensor<128xf32>
}

// -----

// A scalar product cast to i64 too late: the i32 multiply is still checked,
// and the multiply's operands are the leaves.
// CHECK-LABEL: tt.func @late_extsi
// CHECK:         %[[M:.*]] = arith.muli %arg1, %arg2 : i32
// CHECK-DAG:     %[[A:.*]] = arith.extsi %arg1 : i32 to i64
// CHECK-DAG:     %[[B:.*]] = arith.extsi %arg2 : i32 to i64
// CHECK:         %[[E:.*]] = arith.muli %[[A]], %[[B]] : i64
// CHECK:         %[[W:.*]] = arith.extsi %[[M]] : i32 to i64
// CHECK:         %[[BAD:.*]] = arith.cmpi ne, %[[W]], %[[E]] : i64
// CHECK:         %[[CNT:.*]] = arith.extui %[[BAD]] : i1 to i32
// CHECK:         tt.addptr %arg0, %{{.*}} : !tt.ptr<f32>, i64
// CHECK:         tt.print "[triton-ext offset_overflow_check] kernel=late_extsi
tt.func @late_extsi(%p: !tt.ptr<f32>, %pid: i32, %stride: i32) -> f32 {
  %m = arith.muli %pid, %stride : i32
  %w = arith.extsi %m : i32 to i64
  %q = tt.addptr %p, %w : !tt.ptr<f32>, i64
  %x = tt.load %q : !tt.ptr<f32>
  tt.return %x : f32
}

// -----

// Offsets not computed by i32 arithmetic (a plain range, i64 math) are not checked.
// CHECK-LABEL: tt.func @unchecked
// CHECK-NOT:     tt.print
// CHECK:         tt.return
tt.func @unchecked(%p: !tt.ptr<f32>, %a: i64, %b: i64) -> (tensor<128xf32>, f32) {
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %r : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %x = tt.load %pp : tensor<128x!tt.ptr<f32>>
  %o = arith.muli %a, %b : i64
  %q = tt.addptr %p, %o : !tt.ptr<f32>, i64
  %y = tt.load %q : !tt.ptr<f32>
  tt.return %x, %y : tensor<128xf32>, f32
}

// -----

// A loop-invariant pointer increment computed inside the loop body
// (`ptrs += BLOCK_K * stride`, behind a tt.splat) is checked once, in front
// of the loop, on a clone of its arithmetic; the count is zeroed when the
// loop runs no iteration. Nothing is inserted into the loop.
// CHECK-LABEL: tt.func @invariant_increment
// CHECK:         %[[MUL:.*]] = arith.muli %[[S:.*]], %[[C64:.*]] : i32
// CHECK:         %[[RUNS:.*]] = arith.cmpi slt, %[[LB:.*]], %[[UB:.*]] : i32
// CHECK:         arith.extsi %[[S]] : i32 to i64
// CHECK:         %[[W:.*]] = arith.extsi %[[MUL]] : i32 to i64
// CHECK:         %[[CNT:.*]] = arith.extui
// CHECK:         arith.select %[[RUNS]], %[[CNT]], %{{.*}} : i32
// CHECK-NOT:     tt.print
// CHECK:         scf.for
// CHECK-NOT:       tt.print
// CHECK:           scf.yield
// CHECK:         tt.print "[triton-ext offset_overflow_check] kernel=invariant_increment site={{.*}}offset-overflow-check.mlir:[[@LINE+11]] i32 offset overflow lanes; first report of this site, lanes in this program={{.*}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    tt.return
tt.func @invariant_increment(%p: tensor<64x!tt.ptr<f16>>, %stride: i32, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%q = %p) -> (tensor<64x!tt.ptr<f16>>) : i32 {
    %x = tt.load %q : tensor<64x!tt.ptr<f16>>
    tt.store %q, %x : tensor<64x!tt.ptr<f16>>
    %inc = arith.muli %stride, %c64 : i32
    %incs = tt.splat %inc : i32 -> tensor<64xi32>
    %next = tt.addptr %q, %incs : tensor<64x!tt.ptr<f16>>, tensor<64xi32>
    scf.yield %next : tensor<64x!tt.ptr<f16>>
  }
  tt.return
}

// -----

// Offset arithmetic that depends on the loop (`ptrs + i * stride`): each
// iteration ORs its wrapped lanes into a loop-carried i1 value, and the lanes
// are counted and reported once after the loop. No report inside the loop.
// CHECK-LABEL: tt.func @loop_dependent_offset
// CHECK:         %[[NO:.*]] = arith.constant false
// CHECK:         %[[R:.*]]:2 = scf.for %[[I:.*]] = {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[ANY:.*]] = %[[NO]])
// CHECK-NOT:       tt.print
// CHECK:           %[[MUL:.*]] = arith.muli %[[I]], %{{.*}} : i32
// CHECK:           %[[BAD:.*]] = arith.cmpi ne
// CHECK-NOT:       tt.print
// CHECK:           %[[OR:.*]] = arith.ori %[[ANY]], %[[BAD]] : i1
// CHECK:           scf.yield %{{.*}}, %[[OR]]
// CHECK:         %[[CNT:.*]] = arith.extui %[[R]]#1 : i1 to i32
// CHECK:         %[[REP:.*]]:2 = scf.if
// CHECK:           scf.yield %[[CNT]], %{{.*}} : i32, i32
// CHECK:         tt.store
// CHECK:         tt.print "[triton-ext offset_overflow_check] kernel=loop_dependent_offset site={{.*}} i32 offset overflow lanes; first report of this site, lanes in this program=" {{.*}} : %[[REP]]#0 : i32
tt.func @loop_dependent_offset(%p: !tt.ptr<f16>, %stride: i32, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant 0.0 : f16
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %zero) -> (f16) : i32 {
    %off = arith.muli %i, %stride : i32
    %q = tt.addptr %p, %off : !tt.ptr<f16>, i32
    %x = tt.load %q : !tt.ptr<f16>
    %t = arith.addf %s, %x : f16
    scf.yield %t : f16
  }
  tt.store %p, %r : !tt.ptr<f16>
  tt.return
}

// -----

// A loop-dependent tensor offset with bounds (`i + tl.arange` over a
// vocabulary loop, Liger's cross-entropy) computed from the induction
// variable and values from before the loop: the bounds over all iterations
// are computed in front of the loop (the induction variable in [lb, ub - 1],
// and only if the loop runs); the loop itself is left as it is (issue 18:
// an i64 recompute of every lane in every iteration cost the cross-entropy
// 44% on the H200, a carried i1 tile cost the group norm its registers).
// Only if the bounds leave i32, a replay at the end of the kernel goes over
// the tile block by block (blocks outer, the loop's iterations inner), ORs
// each block's wrapped lanes over the iterations, counts them and finds the
// first: the lanes that wrapped in some iteration, as before. Both replay
// loops are kept rolled (`llvm.loop_annotation` unroll disable): a constant
// trip count unrolled in full sizes the kernel's registers by this never-
// taken branch (FlagGems rotary: 22 -> 48 registers, 32 with the loops rolled).
// CHECK:       #[[UNROLL:.*]] = #llvm.loop_unroll<disable = true>
// CHECK:       #[[ROLLED:.*]] = #llvm.loop_annotation<unroll = #[[UNROLL]]>
// CHECK-LABEL: tt.func @vocab_loop
// CHECK:         %[[LB:.*]] = arith.extsi %[[LB32:.*]] : i32 to i64
// CHECK:         %[[UB:.*]] = arith.extsi %[[UB32:.*]] : i32 to i64
// CHECK:         %[[LAST:.*]] = arith.subi %[[UB]], %c1_i64 : i64
// CHECK:         %[[HI:.*]] = arith.addi %[[LAST]], %c127_i64 : i64
// CHECK:         %[[LEAVES:.*]] = arith.ori %{{.*}}, %{{.*}} : i1
// CHECK:         %[[RUNS:.*]] = arith.cmpi slt, %[[LB32]], %[[UB32]] : i32
// CHECK:         %[[ANY:.*]] = arith.andi %[[LEAVES]], %[[RUNS]] : i1
// CHECK:         scf.for %[[IV:.*]] = %[[LB32]] to %[[UB32]] step %[[ST:.*]] iter_args(%{{.*}} = %{{.*}}) -> (tensor<128xf32>)
// CHECK-NOT:       arith.extsi
// CHECK-NOT:       scf.if
// CHECK:           scf.yield %{{.*}} : tensor<128xf32>
// CHECK:         }
// CHECK:         %[[REP:.*]]:2 = scf.if %[[ANY]] -> (i32, i32) {
// CHECK:           scf.for %{{.*}} = %{{.*}} to %c2_i32 step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (i32, i32)
// CHECK:             %[[BLK:.*]] = scf.for %[[STEP:.*]] = %[[LB32]] to %[[UB32]] step %[[ST]] iter_args(%[[OR:.*]] = %{{.*}}) -> (tensor<64xi1>)
// CHECK:               tt.splat %[[STEP]] : i32 -> tensor<64xi32>
// CHECK:               %[[BAD:.*]] = arith.cmpi ne, %{{.*}}, %{{.*}} : tensor<64xi64>
// CHECK:               %[[MORE:.*]] = arith.ori %[[OR]], %[[BAD]] : tensor<64xi1>
// CHECK-NEXT:          scf.yield %[[MORE]] : tensor<64xi1>
// CHECK-NEXT:        } {llvm.loop_annotation = #[[ROLLED]]}
// CHECK:             arith.extui %[[BLK]] : tensor<64xi1> to tensor<64xi32>
// CHECK:             "tt.reduce"
// CHECK:           } {llvm.loop_annotation = #[[ROLLED]]}
// CHECK:         } else {
// CHECK:         arith.cmpi sgt, %[[REP]]#0, %{{.*}} : i32
// CHECK:         tt.atomic_rmw add
// CHECK:         tt.print "[triton-ext offset_overflow_check] kernel=vocab_loop
tt.func @vocab_loop(%p: !tt.ptr<f32>, %n: i32) -> tensor<128xf32> {
  %c0 = arith.constant 0 : i32
  %c128 = arith.constant 128 : i32
  %zero = arith.constant dense<0.0> : tensor<128xf32>
  %r = scf.for %i = %c0 to %n step %c128 iter_args(%acc = %zero) -> (tensor<128xf32>) : i32 {
    %is = tt.splat %i : i32 -> tensor<128xi32>
    %ar = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %off = arith.addi %is, %ar : tensor<128xi32>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
    %pp = tt.addptr %ps, %off : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    %x = tt.load %pp : tensor<128x!tt.ptr<f32>>
    %s = arith.addf %acc, %x : tensor<128xf32>
    scf.yield %s : tensor<128xf32>
  }
  tt.return %r : tensor<128xf32>
}

// -----

// Not exact (a tensor leaf that is not a range): the wrapped lanes of every
// iteration are ORed into a loop-carried i1 tensor, counted after the loop.
// CHECK-LABEL: tt.func @vocab_loop_tensor_leaf
// CHECK:         scf.for {{.*}} -> (tensor<128xf32>, tensor<128xi1>)
// CHECK:           arith.cmpi ne, %{{.*}}, %{{.*}} : tensor<128xi64>
// CHECK-NOT:       scf.if
// CHECK:           arith.ori %{{.*}}, %{{.*}} : tensor<128xi1>
// CHECK-NOT:       scf.if
// CHECK:           scf.yield
// CHECK:         tt.print "[triton-ext offset_overflow_check] kernel=vocab_loop_tensor_leaf
tt.func @vocab_loop_tensor_leaf(%p: !tt.ptr<f32>, %t: tensor<128xi32>, %n: i32) -> tensor<128xf32> {
  %c0 = arith.constant 0 : i32
  %c128 = arith.constant 128 : i32
  %zero = arith.constant dense<0.0> : tensor<128xf32>
  %r = scf.for %i = %c0 to %n step %c128 iter_args(%acc = %zero) -> (tensor<128xf32>) : i32 {
    %is = tt.splat %i : i32 -> tensor<128xi32>
    %off = arith.addi %is, %t : tensor<128xi32>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
    %pp = tt.addptr %ps, %off : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    %x = tt.load %pp : tensor<128x!tt.ptr<f32>>
    %s = arith.addf %acc, %x : tensor<128xf32>
    scf.yield %s : tensor<128xf32>
  }
  tt.return %r : tensor<128xf32>
}
