// RUN: %opt %s -split-input-file --pass nan_inf_check --no-debug-info | FileCheck %s
// RUN: %opt %s -split-input-file --pass 'nan_inf_check{fast-path=count}' --no-debug-info | FileCheck %s
// RUN: %opt %s -split-input-file --pass 'nan_inf_check{fast-path=peak}' --no-debug-info | FileCheck %s
// RUN: %opt %s -split-input-file --pass 'nan_inf_check{mode=abort}' --no-debug-info | FileCheck %s --check-prefix=ABORT

// A store in a loop to addresses that change with the iteration (issue 32, a
// row loop as Liger's RMS-norm backward). A 1-D blocked tile (8 lanes per
// thread here): one tt.map_elementwise whose pack is the thread's 8 elements,
// so its scalar region runs once per thread. There, a NaN-propagating max of
// |x| over the thread's elements, and an scf.if on it that is per thread
// (divergent: no shuffle, shared memory or barrier in it or around it): only
// a thread with a non-finite element counts its elements under the mask
// (x * 0 is NaN) and finds the smallest own index. The pair lands in the
// pack's first element (0 / INT32_MAX in the others), the in-thread
// reduction of the [128, 8] view leaves one (count, first) per thread, and
// the loop carries it, added and min-ed. After the loop one two-operand
// reduction, and a program with findings updates its record once. The first
// lane is carried as the index among the thread's own lanes, r * 8 + k
// ((lane >> 10) << 3 | lane & 7: one constant per register once lowered,
// where the lane numbers themselves stayed live across the loop, a register
// each: Liger cross entropy's 48-byte spill), and turned into the tile's lane
// after the loop (r * 1024 + the thread's first lane + k).
// CHECK-LABEL: tt.func @row_loop
// CHECK:         tt.make_range
// CHECK:         %[[RANGE:.*]] = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #blocked>
// CHECK-NEXT:    arith.constant
// CHECK-NEXT:    %[[REP:.*]] = arith.shrui %[[RANGE]], %{{.*}} : tensor<1024xi32, #blocked>
// CHECK:         %[[REPS:.*]] = arith.shli %[[REP]], %{{.*}} : tensor<1024xi32, #blocked>
// CHECK:         %[[KPART:.*]] = arith.andi %[[RANGE]], %{{.*}} : tensor<1024xi32, #blocked>
// CHECK:         %[[OWN:.*]] = arith.ori %[[REPS]], %[[KPART]] : tensor<1024xi32, #blocked>
// CHECK:         %[[COUNTS:.*]]:2 = scf.for %{{.*}} iter_args(%[[N:.*]] = %{{.*}}, %[[F:.*]] = %{{.*}}) -> (tensor<128xi32, #ttg.slice<{dim = 1, parent = #[[VIEW:[a-z0-9]+]]}>>, tensor<128xi32, #ttg.slice<{dim = 1, parent = #[[VIEW]]}>>)
// CHECK:           tt.store %{{.*}}, %[[X:[^,]*]], %[[M:[^ ]*]] :
// CHECK:           %[[MAP:.*]]:2 = "tt.map_elementwise"(%[[X]], %[[M]], %[[OWN]]) <{pack = 8 : i32}> ({
// CHECK-NEXT:      ^bb0(%[[X0:[^:]*]]: f32, %[[X1:[^:]*]]: f32, {{.*}}: f32, %[[M0:[^:]*]]: i1, {{.*}}: i1, %[[I0:[^:]*]]: i32, {{.*}}: i32):
// CHECK-DAG:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:         %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK:             %[[A0:.*]] = math.absf %[[X0]] : f32
// CHECK:             %[[A1:.*]] = math.absf %[[X1]] : f32
// CHECK:             arith.maximumf %[[A0]], %[[A1]] : f32
// CHECK-COUNT-6:     arith.maximumf
// CHECK:             %[[FOUND:.*]] = arith.cmpf ueq, %{{.*}}, %[[INF]] : f32
// CHECK:             %[[PAIR:.*]]:2 = scf.if %[[FOUND]] -> (i32, i32) {
// CHECK-NEXT:          %[[P0:.*]] = arith.mulf %[[X0]], %[[ZERO]] : f32
// CHECK-NEXT:          %[[NAN0:.*]] = arith.cmpf uno, %[[P0]], %[[P0]] : f32
// CHECK-NEXT:          %[[BAD0:.*]] = arith.andi %[[NAN0]], %[[M0]] : i1
// CHECK-NEXT:          arith.extui %[[BAD0]] : i1 to i32
// CHECK-NEXT:          arith.select %[[BAD0]], %[[I0]], %{{.*}} : i32
// CHECK-COUNT-7:       arith.minsi
// CHECK-NOT:           tt.reduce
// CHECK:               scf.yield
// CHECK-NEXT:        } else {
// CHECK-NEXT:          scf.yield %{{.*}}, %{{.*}} : i32, i32
// CHECK-NEXT:        }
// CHECK-NEXT:        tt.map_elementwise.return %[[PAIR]]#0, {{.*}}, %[[PAIR]]#1,
// CHECK:           }) : (tensor<1024xf32, #blocked>, tensor<1024xi1, #blocked>, tensor<1024xi32, #blocked>) -> (tensor<1024xi32, #blocked>, tensor<1024xi32, #blocked>)
// CHECK-NEXT:      %[[VN:.*]] = tt.reshape %[[MAP]]#0 : tensor<1024xi32, #blocked> -> tensor<128x8xi32, #[[VIEW]]>
// CHECK-NEXT:      %[[VF:.*]] = tt.reshape %[[MAP]]#1 : tensor<1024xi32, #blocked> -> tensor<128x8xi32, #[[VIEW]]>
// CHECK-NEXT:      %[[PART:.*]]:2 = "tt.reduce"(%[[VN]], %[[VF]]) <{axis = 1 : i32}>
// CHECK-NOT:       tt.atomic_rmw
// CHECK:           %[[SUM:.*]] = arith.addi %[[N]], %[[PART]]#0
// CHECK:           %[[MIN:.*]] = arith.minsi %[[F]], %[[PART]]#1
// CHECK:           scf.yield %[[SUM]], %[[MIN]]
// CHECK:         }
// CHECK:         %[[BASE:.*]] = "tt.reduce"(%{{.*}}) <{axis = 1 : i32}>
// CHECK:           arith.minsi
// CHECK:         %[[R:.*]] = arith.divsi %[[COUNTS]]#1, %{{.*}}
// CHECK:         %[[K:.*]] = arith.remsi %[[COUNTS]]#1, %{{.*}}
// CHECK:         %[[ROW:.*]] = arith.muli %[[R]], %{{.*}}
// CHECK:         %[[AT:.*]] = arith.addi %[[ROW]], %[[BASE]]
// CHECK:         %[[LANE:.*]] = arith.addi %[[AT]], %[[K]]
// CHECK:         %[[NONE:.*]] = arith.cmpi eq, %[[COUNTS]]#1, %{{.*}}
// CHECK:         %[[FIRST:.*]] = arith.select %[[NONE]], %{{.*}}, %[[LANE]]
// CHECK:         %[[TOTAL:.*]]:2 = "tt.reduce"(%[[COUNTS]]#0, %[[FIRST]]) <{axis = 0 : i32}>
// CHECK:         %[[FOUND:.*]] = arith.cmpi sgt, %[[TOTAL]]#0, %{{.*}} : i32
// CHECK:         scf.if %[[FOUND]] {
// CHECK:           tt.atomic_rmw add
// CHECK:         tt.return
// Abort mode keeps the check in the loop, before the store.
// ABORT-LABEL: tt.func @row_loop
// ABORT:         scf.for
// ABORT:           tt.assert
// ABORT:           tt.store

#blocked = #ttg.blocked<{sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func @row_loop(%out: !tt.ptr<f32>, %x: tensor<1024xf32, #blocked>, %m: tensor<1024xi1, #blocked>, %n: i32, %stride: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #blocked>
    scf.for %i = %c0 to %n step %c1 : i32 {
      %row = arith.muli %i, %stride : i32
      %base = tt.addptr %out, %row : !tt.ptr<f32>, i32
      %bs = tt.splat %base : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, #blocked>
      %p = tt.addptr %bs, %r : tensor<1024x!tt.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
      tt.store %p, %x, %m : tensor<1024x!tt.ptr<f32>, #blocked>
    }
    tt.return
  }
}

// -----

// Without a mask (f16, 2 lanes per thread): the map takes the values and the
// own indices only, and the branch counts every non-finite element.
// CHECK-LABEL: tt.func @row_loop_no_mask
// CHECK:         scf.for
// CHECK:           tt.store
// CHECK:           "tt.map_elementwise"(%{{[^,]*}}, %{{[^,]*}}) <{pack = 2 : i32}> ({
// CHECK-NEXT:      ^bb0(%[[X0:[^:]*]]: f16, %[[X1:[^:]*]]: f16, %[[I0:[^:]*]]: i32, %[[I1:[^:]*]]: i32):
// CHECK:             arith.maximumf
// CHECK:             scf.if
// CHECK-NEXT:          %[[P0:.*]] = arith.mulf %[[X0]], %{{.*}} : f16
// CHECK-NEXT:          %[[NAN0:.*]] = arith.cmpf uno, %[[P0]], %[[P0]] : f16
// CHECK-NEXT:          arith.extui %[[NAN0]] : i1 to i32
// CHECK-NEXT:          arith.select %[[NAN0]], %[[I0]], %{{.*}} : i32
// CHECK-NOT:           arith.andi
// CHECK:               scf.yield
// ABORT-LABEL: tt.func @row_loop_no_mask

#blocked = #ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func @row_loop_no_mask(%out: !tt.ptr<f16>, %x: tensor<256xf16, #blocked>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c256 = arith.constant 256 : i32
    %r = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32, #blocked>
    scf.for %i = %c0 to %n step %c1 : i32 {
      %row = arith.muli %i, %c256 : i32
      %base = tt.addptr %out, %row : !tt.ptr<f16>, i32
      %bs = tt.splat %base : !tt.ptr<f16> -> tensor<256x!tt.ptr<f16>, #blocked>
      %p = tt.addptr %bs, %r : tensor<256x!tt.ptr<f16>, #blocked>, tensor<256xi32, #blocked>
      tt.store %p, %x : tensor<256x!tt.ptr<f16>, #blocked>
    }
    tt.return
  }
}

// -----

// A 2-D tile (4 lanes per thread): a per-lane i32 count is carried instead.
// CHECK-LABEL: tt.func @tile_loop
// CHECK:         %[[ZERO:.*]] = arith.constant dense<0> : tensor<32x16xi32, #[[TILE:[a-z0-9]+]]>
// CHECK:         %[[COUNTS:.*]] = scf.for %{{.*}} iter_args(%[[ARG:.*]] = %[[ZERO]]) -> (tensor<32x16xi32, #[[TILE]]>)
// CHECK:           tt.store
// CHECK-NOT:       tt.reduce
// CHECK:           %[[ONE:.*]] = arith.extui %{{.*}} : tensor<32x16xi1, #[[TILE]]> to tensor<32x16xi32, #[[TILE]]>
// CHECK:           %[[NEXT:.*]] = arith.addi %[[ARG]], %[[ONE]]
// CHECK:           scf.yield %[[NEXT]]
// CHECK:         }
// CHECK:         "tt.reduce"(%{{.*}}) <{axis = 1 : i32}>
// CHECK:         tt.return

#blocked1 = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func @tile_loop(%out: !tt.ptr<f32>, %x: tensor<32x16xf32, #blocked1>, %offs: tensor<32x16xi32, #blocked1>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    scf.for %i = %c0 to %n step %c1 : i32 {
      %base = tt.addptr %out, %i : !tt.ptr<f32>, i32
      %bs = tt.splat %base : !tt.ptr<f32> -> tensor<32x16x!tt.ptr<f32>, #blocked1>
      %p = tt.addptr %bs, %offs : tensor<32x16x!tt.ptr<f32>, #blocked1>, tensor<32x16xi32, #blocked1>
      tt.store %p, %x : tensor<32x16x!tt.ptr<f32>, #blocked1>
    }
    tt.return
  }
}

// -----

// The same addresses in every iteration (a later iteration overwrites what an
// earlier one stored): the check per iteration stays, in the loop.
// CHECK-LABEL: tt.func @same_addresses
// CHECK:         scf.for %{{.*}} : i32 {
// CHECK:           tt.store
// CHECK:           "tt.reduce"
// CHECK:           scf.if
// CHECK:         }
// CHECK:         tt.return

#blocked = #ttg.blocked<{sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func @same_addresses(%p: tensor<1024x!tt.ptr<f32>, #blocked>, %x: tensor<1024xf32, #blocked>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    scf.for %i = %c0 to %n step %c1 : i32 {
      %y = arith.addf %x, %x : tensor<1024xf32, #blocked>
      tt.store %p, %y : tensor<1024x!tt.ptr<f32>, #blocked>
    }
    tt.return
  }
}

// -----

// A loop store's records when a loop follows (FlagGems' rotary prefill: its
// q-head loop, then its k-head loop, with offset_overflow_check's replay
// branches in between): updated right after the first loop's reduction,
// before the next loop, not before the `tt.return` (deferred, its (count,
// first lane) stayed live across all that follows: 40 registers against 30
// for the rotary kernel with all three checks). The second loop's records,
// with nothing but records after them, stay before the return.
// CHECK-LABEL: tt.func @loop_then_loop
// CHECK:         scf.for
// CHECK:           tt.store
// CHECK:         "tt.reduce"(%{{.*}}) <{axis = 1 : i32}>
// CHECK:         %[[R1:.*]]:2 = scf.if %{{.*}} -> (i32, i32)
// CHECK:         %[[ANY1:.*]] = arith.cmpi sgt, %[[R1]]#0, %{{.*}} : i32
// CHECK-NEXT:    scf.if %[[ANY1]] {
// CHECK:           tt.atomic_rmw max
// CHECK:         } {triton_ext.sanitizer_records}
// CHECK-NOT:     tt.store
// CHECK:         scf.for
// CHECK:           tt.store
// CHECK:         %[[R2:.*]]:2 = scf.if %{{.*}} -> (i32, i32)
// CHECK:         %[[ANY2:.*]] = arith.cmpi sgt, %[[R2]]#0, %{{.*}} : i32
// CHECK-NEXT:    scf.if %[[ANY2]] {
// CHECK:         } {triton_ext.sanitizer_records}
// CHECK-NEXT:    tt.return

#blocked1 = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func @loop_then_loop(%out: !tt.ptr<f32>, %x: tensor<32x16xf32, #blocked1>, %offs: tensor<32x16xi32, #blocked1>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    scf.for %i = %c0 to %n step %c1 : i32 {
      %base = tt.addptr %out, %i : !tt.ptr<f32>, i32
      %bs = tt.splat %base : !tt.ptr<f32> -> tensor<32x16x!tt.ptr<f32>, #blocked1>
      %p = tt.addptr %bs, %offs : tensor<32x16x!tt.ptr<f32>, #blocked1>, tensor<32x16xi32, #blocked1>
      tt.store %p, %x : tensor<32x16x!tt.ptr<f32>, #blocked1>
    }
    scf.for %i = %c0 to %n step %c1 : i32 {
      %j = arith.addi %i, %n : i32
      %base = tt.addptr %out, %j : !tt.ptr<f32>, i32
      %bs = tt.splat %base : !tt.ptr<f32> -> tensor<32x16x!tt.ptr<f32>, #blocked1>
      %p = tt.addptr %bs, %offs : tensor<32x16x!tt.ptr<f32>, #blocked1>, tensor<32x16xi32, #blocked1>
      tt.store %p, %x : tensor<32x16x!tt.ptr<f32>, #blocked1>
    }
    tt.return
  }
}
