// RUN: %opt %s -split-input-file --pass 'nan_inf_check{cta-vote=false}' --no-debug-info | FileCheck %s --check-prefixes=CHECK,RELOAD
// RUN: %opt %s -split-input-file --pass 'nan_inf_check{cta-vote=false fast-path=count}' --no-debug-info | FileCheck %s --check-prefixes=CHECK,COUNT
// RUN: %opt %s -split-input-file --pass 'nan_inf_check{cta-vote=false fast-path=peak}' --no-debug-info | FileCheck %s --check-prefix=PEAK

// Two stores of one source line (an unrolled loop, as Liger's MoE gather:
// `tl.static_range` gives 8 stores of line 596, one element per thread) with
// a load between them (not a group of checkGroup): one site run. Each store
// adds its (bad as 0/1, lane where bad else INT32_MAX) to two tensors lane by
// lane, and after the last one a single two-operand reduction (one cross-warp
// step, where each store paid its own) and one record update.
// CHECK-LABEL: tt.func @unrolled
// CHECK:         tt.store %{{.*}}, %[[X:[^,]*]], %[[M:[^ ]*]] :
// CHECK:         %[[ABS0:.*]] = math.absf %[[X]]
// CHECK:         %[[NF0:.*]] = arith.cmpf ueq, %[[ABS0]], %{{.*}}
// CHECK:         %[[BAD0:.*]] = arith.andi %[[NF0]], %[[M]]
// CHECK:         %[[N0:.*]] = arith.extui %[[BAD0]]
// CHECK:         %[[F0:.*]] = arith.select %[[BAD0]], %{{.*}}, %{{.*}}
// CHECK-NOT:     "tt.reduce"
// CHECK:         tt.load
// CHECK:         tt.store %{{.*}}, %[[Y:[^,]*]], %[[M]] :
// CHECK:         %[[ABS1:.*]] = math.absf %[[Y]]
// CHECK:         %[[NF1:.*]] = arith.cmpf ueq, %[[ABS1]], %{{.*}}
// CHECK:         %[[BAD1:.*]] = arith.andi %[[NF1]], %[[M]]
// CHECK:         %[[N1:.*]] = arith.extui %[[BAD1]]
// CHECK:         %[[F1:.*]] = arith.select %[[BAD1]], %{{.*}}, %{{.*}}
// CHECK:         %[[N:.*]] = arith.addi %[[N0]], %[[N1]]
// CHECK:         %[[F:.*]] = arith.minsi %[[F0]], %[[F1]]
// CHECK:         %[[TOTAL:.*]]:2 = "tt.reduce"(%[[N]], %[[F]]) <{axis = 0 : i32}>
// CHECK-NOT:     "tt.reduce"
// CHECK:         scf.if
// CHECK-COUNT-3:   tt.atomic_rmw
// CHECK-NOT:     tt.atomic_rmw
// CHECK:         tt.return
// The peak fast path keeps a check per store.
// PEAK-LABEL: tt.func @unrolled
// PEAK-COUNT-2: arith.maximumf

#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#site = loc("moe.py":596:4)
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func @unrolled(%p: tensor<128x!tt.ptr<bf16>, #blocked>, %q: tensor<128x!tt.ptr<bf16>, #blocked>, %x: tensor<128xbf16, #blocked>, %m: tensor<128xi1, #blocked>) {
    tt.store %p, %x, %m : tensor<128x!tt.ptr<bf16>, #blocked> loc(#site)
    %y = tt.load %q : tensor<128x!tt.ptr<bf16>, #blocked>
    tt.store %q, %y, %m : tensor<128x!tt.ptr<bf16>, #blocked> loc(#site)
    tt.return
  }
}

// -----

// Stores of two lines keep a reduction each on the count path. With the
// reload fast path (the default) they form a flag group
// (nan-inf-check-flag.mlir): one maximum of both tiles, one reduction.
// CHECK-LABEL: tt.func @two_lines
// COUNT:         tt.store
// COUNT:         "tt.reduce"
// COUNT:         tt.store
// COUNT:         "tt.reduce"
// RELOAD:        tt.store
// RELOAD-NOT:    "tt.reduce"
// RELOAD:        tt.store
// RELOAD:        arith.maximumf
// RELOAD:        "tt.reduce"
// RELOAD:        scf.if
// PEAK-LABEL: tt.func @two_lines

#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func @two_lines(%p: tensor<128x!tt.ptr<bf16>, #blocked>, %q: tensor<128x!tt.ptr<bf16>, #blocked>, %x: tensor<128xbf16, #blocked>, %m: tensor<128xi1, #blocked>) {
    tt.store %p, %x, %m : tensor<128x!tt.ptr<bf16>, #blocked> loc("moe.py":596:4)
    %y = tt.load %q : tensor<128x!tt.ptr<bf16>, #blocked>
    tt.store %q, %y, %m : tensor<128x!tt.ptr<bf16>, #blocked> loc("moe.py":597:4)
    tt.return
  }
}
