// RUN: %opt %s -split-input-file --pass 'nan_inf_check{print=first}' --no-debug-info | FileCheck %s

// Stores of values that cannot be NaN or +-Inf get no check (issue 18).
// Each negative case keeps its check.

// Integer-derived: i32 -> f32 is always finite.
// CHECK-LABEL: tt.func @int_to_f32
// CHECK-NOT:     tt.print
// CHECK:         tt.return
tt.func @int_to_f32(%p: tensor<128x!tt.ptr<f32>>, %x: tensor<128xi32>) {
  %f = arith.sitofp %x : tensor<128xi32> to tensor<128xf32>
  tt.store %p, %f : tensor<128x!tt.ptr<f32>>
  tt.return
}

// -----

// u16 -> f16 can round past 65504 to +Inf: checked.
// CHECK-LABEL: tt.func @u16_to_f16
// CHECK:         tt.print "[triton-ext nan_inf_check] kernel=u16_to_f16
tt.func @u16_to_f16(%p: tensor<128x!tt.ptr<f16>>, %x: tensor<128xi16>) {
  %f = arith.uitofp %x : tensor<128xi16> to tensor<128xf16>
  tt.store %p, %f : tensor<128x!tt.ptr<f16>>
  tt.return
}

// -----

// tl.where(m, 1.0, 0.0): a select of finite constants.
// CHECK-LABEL: tt.func @where_constants
// CHECK-NOT:     tt.print
// CHECK:         tt.return
tt.func @where_constants(%p: tensor<128x!tt.ptr<f32>>, %m: tensor<128xi1>) {
  %one = arith.constant dense<1.0> : tensor<128xf32>
  %zero = arith.constant dense<0.0> : tensor<128xf32>
  %f = arith.select %m, %one, %zero : tensor<128xi1>, tensor<128xf32>
  tt.store %p, %f : tensor<128x!tt.ptr<f32>>
  tt.return
}

// -----

// tl.where(m, x, 0.0) with a loaded x: x may be NaN: checked.
// CHECK-LABEL: tt.func @where_loaded
// CHECK:         tt.print "[triton-ext nan_inf_check] kernel=where_loaded
tt.func @where_loaded(%p: tensor<128x!tt.ptr<f32>>, %m: tensor<128xi1>) {
  %x = tt.load %p : tensor<128x!tt.ptr<f32>>
  %zero = arith.constant dense<0.0> : tensor<128xf32>
  %f = arith.select %m, %x, %zero : tensor<128xi1>, tensor<128xf32>
  tt.store %p, %f : tensor<128x!tt.ptr<f32>>
  tt.return
}

// -----

// tl.minimum(tl.maximum(x, -1), 1): maxnum/minnum return the non-NaN operand,
// so the result is in [-1, 1]; tl.clamp (tt.clampf without NaN propagation)
// likewise.
// CHECK-LABEL: tt.func @clamped
// CHECK-NOT:     tt.print
// CHECK:         tt.return
tt.func @clamped(%p: tensor<128x!tt.ptr<f32>>) {
  %x = tt.load %p : tensor<128x!tt.ptr<f32>>
  %lo = arith.constant dense<-1.0> : tensor<128xf32>
  %hi = arith.constant dense<1.0> : tensor<128xf32>
  %a = arith.maxnumf %x, %lo : tensor<128xf32>
  %b = arith.minnumf %a, %hi : tensor<128xf32>
  tt.store %p, %b : tensor<128x!tt.ptr<f32>>
  %c = tt.clampf %x, %lo, %hi, propagateNan = none : tensor<128xf32>
  tt.store %p, %c : tensor<128x!tt.ptr<f32>>
  tt.return
}

// -----

// ReLU (tl.maximum(x, 0)) keeps +Inf; a NaN-propagating clamp
// (tl.clamp(..., propagate_nan=ALL), or maximumf) keeps NaN: checked.
// CHECK-LABEL: tt.func @relu
// CHECK:         tt.print "[triton-ext nan_inf_check] kernel=relu
tt.func @relu(%p: tensor<128x!tt.ptr<f32>>) {
  %x = tt.load %p : tensor<128x!tt.ptr<f32>>
  %zero = arith.constant dense<0.0> : tensor<128xf32>
  %r = arith.maxnumf %x, %zero : tensor<128xf32>
  tt.store %p, %r : tensor<128x!tt.ptr<f32>>
  tt.return
}

// -----

// CHECK-LABEL: tt.func @clamp_propagating_nan
// CHECK-COUNT-2: tt.print "[triton-ext nan_inf_check] kernel=clamp_propagating_nan
tt.func @clamp_propagating_nan(%p: tensor<128x!tt.ptr<f32>>) {
  %x = tt.load %p : tensor<128x!tt.ptr<f32>>
  %lo = arith.constant dense<-1.0> : tensor<128xf32>
  %hi = arith.constant dense<1.0> : tensor<128xf32>
  %c = tt.clampf %x, %lo, %hi, propagateNan = all : tensor<128xf32>
  tt.store %p, %c : tensor<128x!tt.ptr<f32>>
  %a = arith.maximumf %x, %lo : tensor<128xf32>
  %b = arith.minimumf %a, %hi : tensor<128xf32>
  tt.store %p, %b : tensor<128x!tt.ptr<f32>>
  tt.return
}

// -----

// A constant that is NaN is checked (and reported: it is written).
// CHECK-LABEL: tt.func @nan_constant
// CHECK:         tt.print "[triton-ext nan_inf_check] kernel=nan_constant
tt.func @nan_constant(%p: tensor<128x!tt.ptr<f32>>) {
  %nan = arith.constant dense<0x7FC00000> : tensor<128xf32>
  tt.store %p, %nan : tensor<128x!tt.ptr<f32>>
  tt.return
}
