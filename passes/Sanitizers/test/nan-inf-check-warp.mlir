// RUN: %opt %s --pass 'nan_inf_check{fast-path=warp}' --no-debug-info | FileCheck %s

// fast-path=warp (issue 18, "one vote per warp"): the (count, first lane) pair
// is reduced only over axes held inside one warp, and the site's record is
// updated with tensor atomics masked to the warp groups that found something.
// No cross-warp reduction (shared memory and a barrier), no scf.if.

// One case: the module's site table over its three kernels (warp and count-path sites side by side).
// The site table marks the warp sites (`numel:warps`: the second slot counts
// warp groups), not the count-path site.
// CHECK: triton_ext.sanitizer_sites = ["nan_inf_check|store non-finite|4096:warps|row_store|{{.*}}", "nan_inf_check|store non-finite|2048:warps|rows_store|{{.*}}", "nan_inf_check|store non-finite|4096|tile_both_axes|{{.*}}"]

// A 1-D row of 4096 lanes, 8 per thread, 4 warps: 4096 = 4 repeats x 4 warps x
// 256. Viewed as 4x4x256 (no data movement: the inferred view layout keeps the
// 4 warps on their own axis), reduced over the repeats (registers) and the 256
// lanes of a warp row (registers and shuffles): one pair per warp.
// CHECK-LABEL: tt.func @row_store
// CHECK:         tt.store
// CHECK-NOT:     scf.if
// CHECK:         tt.reshape %{{.*}} : tensor<4096xi32, #blocked> -> tensor<4x4x256xi32, #[[VIEW:blocked[0-9]+]]>
// CHECK:         tt.reshape %{{.*}} : tensor<4096xi32, #blocked> -> tensor<4x4x256xi32, #[[VIEW]]>
// CHECK:         "tt.reduce"(%{{.*}}, %{{.*}}) <{axis = 0 : i32}>
// CHECK:         "tt.reduce"(%{{.*}}, %{{.*}}) <{axis = 1 : i32}>
// CHECK:         }) : (tensor<4x256xi32, {{.*}}>, tensor<4x256xi32, {{.*}}>) -> (tensor<4xi32, [[G:.*]]>, tensor<4xi32, [[G]]>)
// CHECK:         %[[FOUND:.*]] = arith.cmpi sgt, %{{.*}}, %{{.*}} : tensor<4xi32, [[G]]>
// CHECK:         tt.atomic_rmw add, relaxed, gpu, %{{.*}}, %{{.*}}, %[[FOUND]] : (tensor<4x!tt.ptr<i64>, [[G]]>
// CHECK:         tt.atomic_rmw add, relaxed, gpu, %{{.*}}, %{{.*}}, %[[FOUND]] : (tensor<4x!tt.ptr<i64>, [[G]]>
// CHECK:         tt.atomic_rmw max, relaxed, gpu, %{{.*}}, %{{.*}}, %[[FOUND]] : (tensor<4x!tt.ptr<i64>, [[G]]>
// CHECK-NOT:     scf.if
// CHECK:         tt.return

// A 2-D tile with its warps along rows: the columns are reduced inside each
// warp, one pair per row, no view.
// CHECK-LABEL: tt.func @rows_store
// CHECK:         tt.store
// CHECK-NOT:     tt.reshape
// CHECK:         "tt.reduce"(%{{.*}}, %{{.*}}) <{axis = 1 : i32}>
// CHECK:         }) : (tensor<16x128xi32, #[[ROWS:blocked[0-9]*]]>, tensor<16x128xi32, #[[ROWS]]>) -> (tensor<16xi32, #ttg.slice<{dim = 1, parent = #[[ROWS]]}>>
// CHECK-NOT:     "tt.reduce"
// CHECK:         tt.atomic_rmw add, relaxed, gpu, {{.*}} : (tensor<16x!tt.ptr<i64>, #ttg.slice<{dim = 1, parent = #[[ROWS]]}>>
// CHECK-NOT:     scf.if
// CHECK:         tt.return

// Warps along both axes: no axis lies inside a warp; the count path (one
// reduction per axis, records under `count > 0` before the return).
// CHECK-LABEL: tt.func @tile_both_axes
// CHECK:         tt.store
// CHECK-NOT:     tt.atomic_rmw
// CHECK:         "tt.reduce"(%{{.*}}, %{{.*}}) <{axis = 1 : i32}>
// CHECK:         "tt.reduce"(%{{.*}}, %{{.*}}) <{axis = 0 : i32}>
// CHECK:         scf.if
// CHECK:         tt.atomic_rmw add, relaxed, gpu, {{.*}} : (!tt.ptr<i64>, i64, i1) -> i64
// CHECK:         tt.return

#blocked = #ttg.blocked<{sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked2 = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [2, 2], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func @row_store(%p: tensor<4096x!tt.ptr<f32>, #blocked>, %x: tensor<4096xf32, #blocked>, %m: tensor<4096xi1, #blocked>) {
    tt.store %p, %x, %m : tensor<4096x!tt.ptr<f32>, #blocked>
    tt.return
  }
  tt.func @rows_store(%p: tensor<16x128x!tt.ptr<f16>, #blocked1>, %x: tensor<16x128xf16, #blocked1>) {
    tt.store %p, %x : tensor<16x128x!tt.ptr<f16>, #blocked1>
    tt.return
  }
  tt.func @tile_both_axes(%p: tensor<32x128x!tt.ptr<f32>, #blocked2>, %x: tensor<32x128xf32, #blocked2>) {
    tt.store %p, %x : tensor<32x128x!tt.ptr<f32>, #blocked2>
    tt.return
  }
}
