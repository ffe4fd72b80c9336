// RUN: %opt %s -split-input-file --pass 'offset_overflow_check{print=first}' --no-debug-info | FileCheck %s

// Offsets whose exact value provably fits in i32 on every lane, program and
// launch get no check at all (issue 18): the interval of the exact value
// over constants, ranges, grid limits, loop bounds and assumes is inside i32.
// Each negative case below keeps its check.

// pid_y < 65535: pid_y * 1024 + arange(0, 1024) <= 67,107,839.
// CHECK-LABEL: tt.func @pid_y_tile
// CHECK-NOT:     tt.print
// CHECK-NOT:     arith.extsi
// CHECK:         tt.return
tt.func @pid_y_tile(%p: !tt.ptr<f32>) -> tensor<1024xf32> {
  %c1024 = arith.constant 1024 : i32
  %pid = tt.get_program_id y : i32
  %base = arith.muli %pid, %c1024 : i32
  %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %bs = tt.splat %base : i32 -> tensor<1024xi32>
  %off = arith.addi %bs, %r : tensor<1024xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %off : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
  %x = tt.load %pp : tensor<1024x!tt.ptr<f32>>
  tt.return %x : tensor<1024xf32>
}

// -----

// pid_x can reach 2^31 - 2: pid_x * 1024 can wrap, the check stays.
// CHECK-LABEL: tt.func @pid_x_tile
// CHECK:         tt.print "[triton-ext offset_overflow_check] kernel=pid_x_tile
tt.func @pid_x_tile(%p: !tt.ptr<f32>) -> tensor<1024xf32> {
  %c1024 = arith.constant 1024 : i32
  %pid = tt.get_program_id x : i32
  %base = arith.muli %pid, %c1024 : i32
  %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %bs = tt.splat %base : i32 -> tensor<1024xi32>
  %off = arith.addi %bs, %r : tensor<1024xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %off : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
  %x = tt.load %pp : tensor<1024x!tt.ptr<f32>>
  tt.return %x : tensor<1024xf32>
}

// -----

// pid_y * 65536 can pass 2^31 (65534 * 65536): the check stays.
// CHECK-LABEL: tt.func @pid_y_wide
// CHECK:         tt.print "[triton-ext offset_overflow_check] kernel=pid_y_wide
tt.func @pid_y_wide(%p: !tt.ptr<f32>) -> f32 {
  %c = arith.constant 65536 : i32
  %pid = tt.get_program_id y : i32
  %off = arith.muli %pid, %c : i32
  %q = tt.addptr %p, %off : !tt.ptr<f32>, i32
  %x = tt.load %q : !tt.ptr<f32>
  tt.return %x : f32
}

// -----

// A tile of constants and ranges: rows[:, None] * 64 + cols[None, :].
// CHECK-LABEL: tt.func @const_tile
// CHECK-NOT:     tt.print
// CHECK:         tt.return
tt.func @const_tile(%p: !tt.ptr<f32>) -> tensor<16x64xf32> {
  %c64 = arith.constant dense<64> : tensor<16x1xi32>
  %r0 = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %r1 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %e0 = tt.expand_dims %r0 {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %e1 = tt.expand_dims %r1 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %m = arith.muli %e0, %c64 : tensor<16x1xi32>
  %b0 = tt.broadcast %m : tensor<16x1xi32> -> tensor<16x64xi32>
  %b1 = tt.broadcast %e1 : tensor<1x64xi32> -> tensor<16x64xi32>
  %off = arith.addi %b0, %b1 : tensor<16x64xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<16x64x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %off : tensor<16x64x!tt.ptr<f32>>, tensor<16x64xi32>
  %x = tt.load %pp : tensor<16x64x!tt.ptr<f32>>
  tt.return %x : tensor<16x64xf32>
}

// -----

// tl.assume(0 <= n) and tl.assume(n < 4096) in the entry block bound n, so
// n * 1024 + arange fits; with only the upper bound (n may be negative) or
// with the assume inside a branch, the check stays.
// CHECK-LABEL: tt.func @assumed
// CHECK-NOT:     tt.print
// CHECK:         tt.return
tt.func @assumed(%p: !tt.ptr<f32>, %n: i32) -> tensor<1024xf32> {
  %c0 = arith.constant 0 : i32
  %c4096 = arith.constant 4096 : i32
  %lo = arith.cmpi sge, %n, %c0 : i32
  llvm.intr.assume %lo : i1
  %hi = arith.cmpi slt, %n, %c4096 : i32
  llvm.intr.assume %hi : i1
  %c1024 = arith.constant 1024 : i32
  %base = arith.muli %n, %c1024 : i32
  %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %bs = tt.splat %base : i32 -> tensor<1024xi32>
  %off = arith.addi %bs, %r : tensor<1024xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %off : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
  %x = tt.load %pp : tensor<1024x!tt.ptr<f32>>
  tt.return %x : tensor<1024xf32>
}

// -----

// CHECK-LABEL: tt.func @assumed_upper_only
// CHECK:         tt.print "[triton-ext offset_overflow_check] kernel=assumed_upper_only
tt.func @assumed_upper_only(%p: !tt.ptr<f32>, %n: i32) -> f32 {
  %c4096 = arith.constant 4096 : i32
  %hi = arith.cmpi slt, %n, %c4096 : i32
  llvm.intr.assume %hi : i1
  %c1024 = arith.constant 1024 : i32
  %off = arith.muli %n, %c1024 : i32
  %q = tt.addptr %p, %off : !tt.ptr<f32>, i32
  %x = tt.load %q : !tt.ptr<f32>
  tt.return %x : f32
}

// -----

// CHECK-LABEL: tt.func @assumed_in_branch
// CHECK:         tt.print "[triton-ext offset_overflow_check] kernel=assumed_in_branch
tt.func @assumed_in_branch(%p: !tt.ptr<f32>, %n: i32, %c: i1) -> f32 {
  %c0 = arith.constant 0 : i32
  %c4096 = arith.constant 4096 : i32
  scf.if %c {
    %lo = arith.cmpi sge, %n, %c0 : i32
    llvm.intr.assume %lo : i1
    %hi = arith.cmpi slt, %n, %c4096 : i32
    llvm.intr.assume %hi : i1
  }
  %c1024 = arith.constant 1024 : i32
  %off = arith.muli %n, %c1024 : i32
  %q = tt.addptr %p, %off : !tt.ptr<f32>, i32
  %x = tt.load %q : !tt.ptr<f32>
  tt.return %x : f32
}

// -----

// A loop over constant bounds: i in [0, 16), i * 128 + arange(0, 128) fits.
// With a runtime upper bound the check stays (after the loop).
// CHECK-LABEL: tt.func @const_loop
// CHECK-NOT:     tt.print
// CHECK:         tt.return
tt.func @const_loop(%p: !tt.ptr<f32>) -> tensor<128xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c16 = arith.constant 16 : i32
  %c128 = arith.constant 128 : i32
  %zero = arith.constant dense<0.0> : tensor<128xf32>
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %acc = scf.for %i = %c0 to %c16 step %c1 iter_args(%a = %zero) -> (tensor<128xf32>) : i32 {
    %b = arith.muli %i, %c128 : i32
    %bs = tt.splat %b : i32 -> tensor<128xi32>
    %off = arith.addi %bs, %r : tensor<128xi32>
    %pp = tt.addptr %ps, %off : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    %x = tt.load %pp : tensor<128x!tt.ptr<f32>>
    %s = arith.addf %a, %x : tensor<128xf32>
    scf.yield %s : tensor<128xf32>
  }
  tt.return %acc : tensor<128xf32>
}

// -----

// CHECK-LABEL: tt.func @runtime_loop
// CHECK:         scf.for
// CHECK:         tt.print "[triton-ext offset_overflow_check] kernel=runtime_loop
tt.func @runtime_loop(%p: !tt.ptr<f32>, %n: i32) -> tensor<128xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c128 = arith.constant 128 : i32
  %zero = arith.constant dense<0.0> : tensor<128xf32>
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %zero) -> (tensor<128xf32>) : i32 {
    %b = arith.muli %i, %c128 : i32
    %bs = tt.splat %b : i32 -> tensor<128xi32>
    %off = arith.addi %bs, %r : tensor<128xi32>
    %pp = tt.addptr %ps, %off : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    %x = tt.load %pp : tensor<128x!tt.ptr<f32>>
    %s = arith.addf %a, %x : tensor<128xf32>
    scf.yield %s : tensor<128xf32>
  }
  tt.return %acc : tensor<128xf32>
}

// -----

// k % 64 is in [-63, 63]; (k % 64) * 1024 + arange fits.
// CHECK-LABEL: tt.func @remainder
// CHECK-NOT:     tt.print
// CHECK:         tt.return
tt.func @remainder(%p: !tt.ptr<f32>, %k: i32) -> f32 {
  %c64 = arith.constant 64 : i32
  %c1024 = arith.constant 1024 : i32
  %m = arith.remsi %k, %c64 : i32
  %off = arith.muli %m, %c1024 : i32
  %q = tt.addptr %p, %off : !tt.ptr<f32>, i32
  %x = tt.load %q : !tt.ptr<f32>
  tt.return %x : f32
}

// The exact i32 boundary (issue 26 item 8): a make_range's last lane is
// end - 1. `2147483644 + arange(0, 4)` reaches 2^31 - 1 and fits: no check.
// CHECK-LABEL: tt.func @range_at_i32_max
// CHECK-NOT:     tt.print
// CHECK-NOT:     arith.extsi
// CHECK:         tt.return
tt.func @range_at_i32_max(%p: !tt.ptr<f32>) -> tensor<4xf32> {
  %c = arith.constant dense<2147483644> : tensor<4xi32>
  %r = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
  %off = arith.addi %c, %r : tensor<4xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %off : tensor<4x!tt.ptr<f32>>, tensor<4xi32>
  %x = tt.load %pp : tensor<4x!tt.ptr<f32>>
  tt.return %x : tensor<4xf32>
}

// One more and the last lane is 2^31: it wraps, the check stays.
// CHECK-LABEL: tt.func @range_past_i32_max
// CHECK:         tt.print "[triton-ext offset_overflow_check] kernel=range_past_i32_max
tt.func @range_past_i32_max(%p: !tt.ptr<f32>) -> tensor<4xf32> {
  %c = arith.constant dense<2147483645> : tensor<4xi32>
  %r = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
  %off = arith.addi %c, %r : tensor<4xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %off : tensor<4x!tt.ptr<f32>>, tensor<4xi32>
  %x = tt.load %pp : tensor<4x!tt.ptr<f32>>
  tt.return %x : tensor<4xf32>
}

// The same below: `-2147483648 + arange(0, 4)` fits; one less wraps.
// CHECK-LABEL: tt.func @range_at_i32_min
// CHECK-NOT:     tt.print
// CHECK-NOT:     arith.extsi
// CHECK:         tt.return
tt.func @range_at_i32_min(%p: !tt.ptr<f32>) -> tensor<4xf32> {
  %c = arith.constant dense<-2147483648> : tensor<4xi32>
  %r = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
  %off = arith.addi %c, %r : tensor<4xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %off : tensor<4x!tt.ptr<f32>>, tensor<4xi32>
  %x = tt.load %pp : tensor<4x!tt.ptr<f32>>
  tt.return %x : tensor<4xf32>
}

// CHECK-LABEL: tt.func @range_past_i32_min
// CHECK:         tt.print "[triton-ext offset_overflow_check] kernel=range_past_i32_min
tt.func @range_past_i32_min(%p: !tt.ptr<f32>) -> tensor<4xf32> {
  %c = arith.constant dense<-2147483648> : tensor<4xi32>
  %r = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
  %one = arith.constant dense<1> : tensor<4xi32>
  %s = arith.subi %r, %one : tensor<4xi32>
  %off = arith.addi %c, %s : tensor<4xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %off : tensor<4x!tt.ptr<f32>>, tensor<4xi32>
  %x = tt.load %pp : tensor<4x!tt.ptr<f32>>
  tt.return %x : tensor<4xf32>
}
