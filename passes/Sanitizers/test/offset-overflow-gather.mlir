// RUN: %opt %s -split-input-file --pass masked_load_poison --pass 'offset_overflow_check{print=first}' --no-debug-info | FileCheck %s
// RUN: %opt %s -split-input-file --pass 'offset_overflow_check{print=first}' --no-debug-info | FileCheck %s --check-prefix=ALONE

// masked_load_poison + offset_overflow_check on a masked gather (issue 26
// item 2): `idx = tl.load(ids + offs, mask=m)`, then `tl.load(W + idx[:, None]
// * D + cols[None, :], mask=m[:, None])`. The poison (INT_MIN in masked-off
// rows) wrapped in `idx * D` on every masked-off row. A lane of an offset that
// reads a masked-off lane of a masked load is counted only if some access it
// feeds touches it: the wrapped lanes are ANDed with `loaded | touched`, here
// both `m[:, None]` (folded into one value by the pipeline's cse and
// canonicalize; `triton-ext opt` runs the passes alone). The check moves below
// the mask `m[:, None]`, computed after the offset.
// CHECK-LABEL: tt.func @gather
// CHECK:         %[[M:.*]] = arith.cmpi slt
// CHECK:         tt.load %{{.*}}, %[[M]], %{{.*}} : tensor<8x!tt.ptr<i32>>
// CHECK:         arith.muli
// CHECK:         %[[ME:.*]] = tt.expand_dims %[[M]] {axis = 1 : i32} : tensor<8xi1> -> tensor<8x1xi1>
// CHECK:         %[[ME2:.*]] = tt.expand_dims %[[M]] {axis = 1 : i32} : tensor<8xi1> -> tensor<8x1xi1>
// CHECK:         %[[COUNTED:.*]] = arith.ori %[[ME2]], %[[ME]] : tensor<8x1xi1>
// CHECK:         %[[WRAPPED:.*]] = arith.cmpi ne, %{{.*}}, %{{.*}} : tensor<8x1xi64>
// CHECK:         arith.andi %[[WRAPPED]], %[[COUNTED]] : tensor<8x1xi1>
// CHECK:         tt.print "[triton-ext offset_overflow_check] kernel=gather
// The masked index alone (no poison) is counted the same way: its masked-off
// lanes are undefined.
// ALONE-LABEL: tt.func @gather
// ALONE:         arith.andi %{{.*}}, %{{.*}} : tensor<8x1xi1>
// ALONE:         tt.print "[triton-ext offset_overflow_check] kernel=gather
tt.func @gather(%w: !tt.ptr<f32>, %ids: !tt.ptr<i32>, %n: i32, %d: i32) -> tensor<8x16xf32> {
  %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
  %ns = tt.splat %n : i32 -> tensor<8xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<8xi32>
  %ip = tt.splat %ids : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
  %iq = tt.addptr %ip, %r : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
  %idx = tt.load %iq, %m : tensor<8x!tt.ptr<i32>>
  %ie = tt.expand_dims %idx {axis = 1 : i32} : tensor<8xi32> -> tensor<8x1xi32>
  %ds = tt.splat %d : i32 -> tensor<8x1xi32>
  %rows = arith.muli %ie, %ds : tensor<8x1xi32>
  %me = tt.expand_dims %m {axis = 1 : i32} : tensor<8xi1> -> tensor<8x1xi1>
  %mb = tt.broadcast %me : tensor<8x1xi1> -> tensor<8x16xi1>
  %wp = tt.splat %w : !tt.ptr<f32> -> tensor<8x1x!tt.ptr<f32>>
  %wq = tt.addptr %wp, %rows : tensor<8x1x!tt.ptr<f32>>, tensor<8x1xi32>
  %wb = tt.broadcast %wq : tensor<8x1x!tt.ptr<f32>> -> tensor<8x16x!tt.ptr<f32>>
  %c = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %ce = tt.expand_dims %c {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %cb = tt.broadcast %ce : tensor<1x16xi32> -> tensor<8x16xi32>
  %wr = tt.addptr %wb, %cb : tensor<8x16x!tt.ptr<f32>>, tensor<8x16xi32>
  %v = tt.load %wr, %mb : tensor<8x16x!tt.ptr<f32>>
  tt.return %v : tensor<8x16xf32>
}

// -----

// The same gather read without a mask: every lane is touched, every lane is
// counted (no narrowing).
// CHECK-LABEL: tt.func @gather_unmasked_read
// CHECK:         arith.cmpi ne, %{{.*}}, %{{.*}} : tensor<8x1xi64>
// CHECK-NOT:     arith.andi {{.*}}: tensor
// CHECK:         tt.print "[triton-ext offset_overflow_check] kernel=gather_unmasked_read
tt.func @gather_unmasked_read(%w: !tt.ptr<f32>, %ids: !tt.ptr<i32>, %n: i32, %d: i32) -> tensor<8x16xf32> {
  %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
  %ns = tt.splat %n : i32 -> tensor<8xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<8xi32>
  %ip = tt.splat %ids : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
  %iq = tt.addptr %ip, %r : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
  %idx = tt.load %iq, %m : tensor<8x!tt.ptr<i32>>
  %ie = tt.expand_dims %idx {axis = 1 : i32} : tensor<8xi32> -> tensor<8x1xi32>
  %ds = tt.splat %d : i32 -> tensor<8x1xi32>
  %rows = arith.muli %ie, %ds : tensor<8x1xi32>
  %wp = tt.splat %w : !tt.ptr<f32> -> tensor<8x1x!tt.ptr<f32>>
  %wq = tt.addptr %wp, %rows : tensor<8x1x!tt.ptr<f32>>, tensor<8x1xi32>
  %wb = tt.broadcast %wq : tensor<8x1x!tt.ptr<f32>> -> tensor<8x16x!tt.ptr<f32>>
  %c = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %ce = tt.expand_dims %c {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %cb = tt.broadcast %ce : tensor<1x16xi32> -> tensor<8x16xi32>
  %wr = tt.addptr %wb, %cb : tensor<8x16x!tt.ptr<f32>>, tensor<8x16xi32>
  %v = tt.load %wr : tensor<8x16x!tt.ptr<f32>>
  tt.return %v : tensor<8x16xf32>
}

// -----

// An offset that reads no masked load (`pid * 1024 + arange`, stored under a
// mask) counts every lane, masked-off ones included, as before.
// CHECK-LABEL: tt.func @no_masked_load
// CHECK-NOT:     arith.andi {{.*}}: tensor
// CHECK:         tt.return
tt.func @no_masked_load(%p: !tt.ptr<f32>, %n: i32, %x: tensor<1024xf32>) {
  %c1024 = arith.constant 1024 : i32
  %pid = tt.get_program_id x : i32
  %base = arith.muli %pid, %c1024 : i32
  %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %bs = tt.splat %base : i32 -> tensor<1024xi32>
  %off = arith.addi %bs, %r : tensor<1024xi32>
  %ns = tt.splat %n : i32 -> tensor<1024xi32>
  %m = arith.cmpi slt, %off, %ns : tensor<1024xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %off : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
  tt.store %pp, %x, %m : tensor<1024x!tt.ptr<f32>>
  tt.return
}
