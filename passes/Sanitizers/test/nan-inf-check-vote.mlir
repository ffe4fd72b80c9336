// RUN: %opt %s -split-input-file --pass nan_inf_check | FileCheck %s
// RUN: %opt %s -split-input-file --pass 'nan_inf_check{cta-vote=false}' --no-debug-info | FileCheck %s --check-prefix=OFF

// The any-lane test of a row store (reload path) as a vote (cta-vote, the
// default): each thread's flag, its 32 elements' maximum tested once (a
// map_elementwise whose pack is all of its elements), fills its elements;
// the flags' maximum over the tile and its `!= 0` carry the location name
// barrier_vote looks for, numbered in the module. The branch is the same.
// (MLIR prints the location aliases in front of the module.)
// CHECK:       #[[TAG0:loc[0-9]+]] = loc("triton_ext.barrier_vote.0"(
// CHECK:       #[[TAG1:loc[0-9]+]] = loc("triton_ext.barrier_vote.1"(
// CHECK-LABEL: tt.func @row_store
// CHECK:         tt.store %[[P:.*]], %[[X:[^,]*]], %[[M:[^ ]*]] :
// CHECK:         %[[SEL:.*]] = arith.select %[[M]], %{{.*}}, %{{.*}}
// CHECK:         %[[FLAGS:.*]] = "tt.map_elementwise"(%[[SEL]]) <{pack = 32 : i32}>
// CHECK-COUNT-31:  arith.maximumf
// CHECK:           %[[BAD:.*]] = arith.cmpf ueq, %{{.*}}, %{{.*}} : bf16
// CHECK:           %[[FLAG:.*]] = arith.extui %[[BAD]] : i1 to i32
// CHECK:           tt.map_elementwise.return %[[FLAG]], %[[FLAG]],
// CHECK:         }) : (tensor<4096xbf16, #blocked>) -> tensor<4096xi32, #blocked>
// CHECK:         %[[ANY:.*]] = "tt.reduce"(%[[FLAGS]]) <{axis = 0 : i32}>
// CHECK:           arith.maxui
// CHECK:         }) : (tensor<4096xi32, #blocked>) -> i32 loc(#[[TAG0]])
// CHECK:         %[[FOUND:.*]] = arith.cmpi ne, %[[ANY]], %{{.*}} : i32 loc(#[[TAG0]])
// CHECK:         scf.if %[[FOUND]] -> (i32, i32) {
// CHECK:           tt.load %[[P]], %[[M]] {isVolatile = true}
// The second store's test, in a branch, has the next number.
// CHECK:         scf.if
// CHECK:           tt.store
// CHECK:           "tt.map_elementwise"
// CHECK:           "tt.reduce"(%{{.*}}) <{axis = 0 : i32}>
// CHECK:           }) : (tensor<4096xi32, #blocked>) -> i32 loc(#[[TAG1]])
// CHECK:           arith.cmpi ne, %{{.*}}, %{{.*}} : i32 loc(#[[TAG1]])
// Off: the NaN-propagating maximum of |value| reduced, as before.
// OFF-LABEL: tt.func @row_store
// OFF-NOT:     tt.map_elementwise
// OFF:         "tt.reduce"
// OFF:           arith.maximumf
// OFF:         arith.cmpf ueq, %{{.*}}, %{{.*}} : bf16

#blocked = #ttg.blocked<{sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func @row_store(%p: tensor<4096x!tt.ptr<bf16>, #blocked>, %x: tensor<4096xbf16, #blocked>, %m: tensor<4096xi1, #blocked>, %q: tensor<4096x!tt.ptr<bf16>, #blocked>, %y: tensor<4096xbf16, #blocked>) {
    tt.store %p, %x, %m : tensor<4096x!tt.ptr<bf16>, #blocked>
    %c = arith.constant 1 : i32
    %s = tt.get_program_id x : i32
    %cond = arith.cmpi eq, %s, %c : i32
    scf.if %cond {
      tt.store %q, %y : tensor<4096x!tt.ptr<bf16>, #blocked>
    }
    tt.return
  }
}

// -----

// A vote is a barrier of every thread of the program: a kernel split into
// warp-specialized partitions keeps the reduction of |value| (here a row
// stored by the default partition's warps only).
// CHECK-LABEL: tt.func @partitioned
// CHECK-NOT:     tt.map_elementwise
// CHECK-NOT:     barrier_vote
// CHECK:         arith.maximumf
// CHECK-NOT:     barrier_vote

#blocked = #ttg.blocked<{sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func @partitioned(%p: tensor<4096x!tt.ptr<bf16>, #blocked>, %x: tensor<4096xbf16, #blocked>, %m: tensor<4096xi1, #blocked>, %a: i32) {
    tt.store %p, %x, %m : tensor<4096x!tt.ptr<bf16>, #blocked>
    ttg.warp_specialize(%a)
    default {
      ttg.warp_yield
    }
    partition0(%b: i32) num_warps(4) {
      %0 = arith.addi %b, %b : i32
      ttg.warp_return
    } : (i32) -> ()
    tt.return
  }
}
