// RUN: %opt %s -split-input-file --pass barrier_vote --no-debug-info | FileCheck %s
// RUN: env MLIR_ENABLE_DIAGNOSTICS=remarks %opt %s -split-input-file --pass 'barrier_vote{remarks=true}' --no-debug-info 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// A tagged any-lane test as Triton lowers it for 8 warps (the flag's
// maximum within the thread, within the warp, across the warps through
// shared memory, then `!= 0`), behind the barrier Triton put in front of
// the reduction. All of it from the warp step on becomes one vote on the
// thread's partial; the barrier in front goes too (only arithmetic between
// it and the vote). The test's `or` with a scalar test (a flag group) stays.
// CHECK-LABEL: llvm.func @row
// CHECK-NOT:     nvvm.barrier
// CHECK:         %[[PART:.*]] = llvm.intr.umax(%arg0, %arg0)
// CHECK-NEXT:    %[[VOTE:.*]] = llvm.inline_asm has_side_effects {{.*}}barrier.red.or.pred{{.*}}, "=r,r" %[[PART]] : (i32) -> i32
// CHECK-NEXT:    %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[ANY:.*]] = llvm.icmp "ne" %[[VOTE]], %[[ZERO]] : i32
// CHECK-NEXT:    %[[OR:.*]] = llvm.or %arg3, %[[ANY]] : i1
// CHECK-NEXT:    llvm.cond_br %[[OR]]
// CHECK-NOT:     nvvm.redux.sync
// CHECK-NOT:     !llvm.ptr<3>
// CHECK:         llvm.return
// REMARK: remark: barrier_vote: test 0: replaced by one barrier vote
#vote = loc("triton_ext.barrier_vote.0"("row.py":7:4))
module attributes {"ttg.num-warps" = 8 : i32, ttg.target = "cuda:90"} {
  llvm.func @row(%flag: i32, %out: !llvm.ptr<1>, %smem: !llvm.ptr<3>, %other: i1) {
    %c0 = llvm.mlir.constant(0 : i32) : i32
    %all = llvm.mlir.constant(-1 : i32) : i32
    nvvm.barrier loc(#vote)
    %part = llvm.intr.umax(%flag, %flag) : (i32, i32) -> i32 loc(#vote)
    %warp = nvvm.redux.sync umax %part, %all : i32 -> i32 loc(#vote)
    llvm.store %warp, %smem : i32, !llvm.ptr<3> loc(#vote)
    nvvm.barrier loc(#vote)
    %back = llvm.load %smem : !llvm.ptr<3> -> i32 loc(#vote)
    %cta = nvvm.redux.sync umax %back, %all : i32 -> i32 loc(#vote)
    %found = llvm.icmp "ne" %cta, %c0 : i32 loc(#vote)
    %either = llvm.or %other, %found : i1 loc(#vote)
    llvm.cond_br %either, ^bb1, ^bb2
  ^bb1:
    llvm.store %c0, %out : i32, !llvm.ptr<1>
    llvm.br ^bb2
  ^bb2:
    llvm.return
  }
}

// -----

// A shared-memory access between the barrier in front and the reduction:
// that barrier orders it, so it stays; the reduction still becomes a vote.
// CHECK-LABEL: llvm.func @access_in_front
// CHECK:         nvvm.barrier
// CHECK-NEXT:    llvm.store %{{.*}} : i32, !llvm.ptr<3>
// CHECK:         barrier.red.or.pred
// CHECK-NOT:     nvvm.barrier
// CHECK:         llvm.return
// REMARK: remark: barrier_vote: test 0: replaced by one barrier vote
#vote = loc("triton_ext.barrier_vote.0"("row.py":7:4))
module attributes {"ttg.num-warps" = 8 : i32, ttg.target = "cuda:90"} {
  llvm.func @access_in_front(%flag: i32, %out: !llvm.ptr<1>, %smem: !llvm.ptr<3>) {
    %c0 = llvm.mlir.constant(0 : i32) : i32
    %all = llvm.mlir.constant(-1 : i32) : i32
    nvvm.barrier loc(#vote)
    llvm.store %flag, %smem : i32, !llvm.ptr<3>
    %warp = nvvm.redux.sync umax %flag, %all : i32 -> i32 loc(#vote)
    llvm.store %warp, %smem : i32, !llvm.ptr<3> loc(#vote)
    nvvm.barrier loc(#vote)
    %back = llvm.load %smem : !llvm.ptr<3> -> i32 loc(#vote)
    %cta = nvvm.redux.sync umax %back, %all : i32 -> i32 loc(#vote)
    %found = llvm.icmp "ne" %cta, %c0 : i32 loc(#vote)
    %z = llvm.zext %found : i1 to i32
    llvm.store %z, %out : i32, !llvm.ptr<1>
    llvm.return
  }
}

// -----

// CSE shared the reduction's shared-memory address with a later reduction
// (in the reporting branch): the address stays, the rest becomes the vote.
// CHECK-LABEL: llvm.func @shared_address
// CHECK:         barrier.red.or.pred
// CHECK:         %[[ADDR:.*]] = llvm.getelementptr %arg2[%arg0]
// CHECK-NOT:     nvvm.redux.sync
// CHECK:       ^bb1:
// CHECK-NEXT:    llvm.load %[[ADDR]]
// REMARK: remark: barrier_vote: test 0: replaced by one barrier vote
#vote = loc("triton_ext.barrier_vote.0"("row.py":7:4))
module attributes {"ttg.num-warps" = 8 : i32, ttg.target = "cuda:90"} {
  llvm.func @shared_address(%flag: i32, %out: !llvm.ptr<1>, %smem: !llvm.ptr<3>) {
    %c0 = llvm.mlir.constant(0 : i32) : i32
    %all = llvm.mlir.constant(-1 : i32) : i32
    %warp = nvvm.redux.sync umax %flag, %all : i32 -> i32 loc(#vote)
    %addr = llvm.getelementptr %smem[%flag] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32 loc(#vote)
    llvm.store %warp, %addr : i32, !llvm.ptr<3> loc(#vote)
    nvvm.barrier loc(#vote)
    %back = llvm.load %addr : !llvm.ptr<3> -> i32 loc(#vote)
    %cta = nvvm.redux.sync umax %back, %all : i32 -> i32 loc(#vote)
    %found = llvm.icmp "ne" %cta, %c0 : i32 loc(#vote)
    llvm.cond_br %found, ^bb1, ^bb2
  ^bb1:
    %again = llvm.load %addr : !llvm.ptr<3> -> i32
    llvm.store %again, %out : i32, !llvm.ptr<1>
    llvm.br ^bb2
  ^bb2:
    llvm.return
  }
}

// -----

// Declined, the IR left as it is: a reduction within one warp (nothing
// crosses warps: a vote would add a barrier), and one whose ops lie in two
// blocks.
// CHECK-LABEL: llvm.func @one_warp
// CHECK-NOT:     llvm.inline_asm
// CHECK:         nvvm.redux.sync
// CHECK-LABEL: llvm.func @two_blocks
// CHECK-NOT:     llvm.inline_asm
// CHECK:         nvvm.barrier
// REMARK: remark: barrier_vote: test 0: left as is (no cross-warp step: nothing to save)
// REMARK: remark: barrier_vote: test 1: left as is (its ops are in more than one block)
#one = loc("triton_ext.barrier_vote.0"("row.py":7:4))
#two = loc("triton_ext.barrier_vote.1"("row.py":9:4))
module attributes {"ttg.num-warps" = 1 : i32, ttg.target = "cuda:90"} {
  llvm.func @one_warp(%flag: i32, %out: !llvm.ptr<1>) {
    %c0 = llvm.mlir.constant(0 : i32) : i32
    %all = llvm.mlir.constant(-1 : i32) : i32
    %warp = nvvm.redux.sync umax %flag, %all : i32 -> i32 loc(#one)
    %found = llvm.icmp "ne" %warp, %c0 : i32 loc(#one)
    %z = llvm.zext %found : i1 to i32
    llvm.store %z, %out : i32, !llvm.ptr<1>
    llvm.return
  }
  llvm.func @two_blocks(%flag: i32, %out: !llvm.ptr<1>, %smem: !llvm.ptr<3>) {
    %c0 = llvm.mlir.constant(0 : i32) : i32
    %all = llvm.mlir.constant(-1 : i32) : i32
    %warp = nvvm.redux.sync umax %flag, %all : i32 -> i32 loc(#two)
    llvm.store %warp, %smem : i32, !llvm.ptr<3> loc(#two)
    llvm.br ^bb1
  ^bb1:
    nvvm.barrier loc(#two)
    %back = llvm.load %smem : !llvm.ptr<3> -> i32 loc(#two)
    %found = llvm.icmp "ne" %back, %c0 : i32 loc(#two)
    %z = llvm.zext %found : i1 to i32
    llvm.store %z, %out : i32, !llvm.ptr<1>
    llvm.return
  }
}

// -----

// Not a CUDA module (the vote is PTX): left as it is.
// CHECK-LABEL: llvm.func @hip
// CHECK-NOT:     llvm.inline_asm
// CHECK:         llvm.icmp "ne"
// REMARK: remark: barrier_vote: left as is (not a CUDA module)
#vote = loc("triton_ext.barrier_vote.0"("row.py":7:4))
module attributes {"ttg.num-warps" = 8 : i32, ttg.target = "hip:gfx942"} {
  llvm.func @hip(%flag: i32, %out: !llvm.ptr<1>, %smem: !llvm.ptr<3>) {
    %c0 = llvm.mlir.constant(0 : i32) : i32
    %all = llvm.mlir.constant(-1 : i32) : i32
    %warp = nvvm.redux.sync umax %flag, %all : i32 -> i32 loc(#vote)
    llvm.store %warp, %smem : i32, !llvm.ptr<3> loc(#vote)
    nvvm.barrier loc(#vote)
    %back = llvm.load %smem : !llvm.ptr<3> -> i32 loc(#vote)
    %found = llvm.icmp "ne" %back, %c0 : i32 loc(#vote)
    %z = llvm.zext %found : i1 to i32
    llvm.store %z, %out : i32, !llvm.ptr<1>
    llvm.return
  }
}
