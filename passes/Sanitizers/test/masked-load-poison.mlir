// RUN: %opt %s -split-input-file --pass masked_load_poison --no-debug-info | FileCheck %s
// RUN: %opt %s -split-input-file --pass 'masked_load_poison{poison-ints=false}' --no-debug-info | FileCheck %s --check-prefix=NOINTS
// RUN: %opt %s -split-input-file --pass 'masked_load_poison{dot-operands=true}' --no-debug-info | FileCheck %s --check-prefix=DOTS

// A masked f32 load without `other` gets a quiet-NaN splat.
// CHECK-LABEL: tt.func @masked_f32
// CHECK:         %[[NAN:.*]] = arith.constant dense<0x7FC00000> : tensor<128xf32>
// CHECK:         tt.load %{{.*}}, %{{.*}}, %[[NAN]] : tensor<128x!tt.ptr<f32>>
tt.func @masked_f32(%p: tensor<128x!tt.ptr<f32>>, %m: tensor<128xi1>) -> tensor<128xf32> {
  %x = tt.load %p, %m : tensor<128x!tt.ptr<f32>>
  tt.return %x : tensor<128xf32>
}

// -----

// f16 and bf16 get their own NaN encodings.
// CHECK-LABEL: tt.func @masked_half
// CHECK:         %[[H:.*]] = arith.constant dense<0x7E00> : tensor<64xf16>
// CHECK:         tt.load %{{.*}}, %{{.*}}, %[[H]] : tensor<64x!tt.ptr<f16>>
// CHECK:         %[[B:.*]] = arith.constant dense<0x7FC0> : tensor<64xbf16>
// CHECK:         tt.load %{{.*}}, %{{.*}}, %[[B]] : tensor<64x!tt.ptr<bf16>>
tt.func @masked_half(%p: tensor<64x!tt.ptr<f16>>, %q: tensor<64x!tt.ptr<bf16>>, %m: tensor<64xi1>) -> (tensor<64xf16>, tensor<64xbf16>) {
  %x = tt.load %p, %m : tensor<64x!tt.ptr<f16>>
  %y = tt.load %q, %m : tensor<64x!tt.ptr<bf16>>
  tt.return %x, %y : tensor<64xf16>, tensor<64xbf16>
}

// -----

// Integers get the most negative value of their type, unless poison-ints=false.
// CHECK-LABEL: tt.func @masked_i32
// CHECK:         %[[MIN:.*]] = arith.constant dense<-2147483648> : tensor<128xi32>
// CHECK:         tt.load %{{.*}}, %{{.*}}, %[[MIN]] : tensor<128x!tt.ptr<i32>>
// NOINTS-LABEL: tt.func @masked_i32
// NOINTS-NOT:    arith.constant
// NOINTS:        tt.load %{{.*}}, %{{.*}} : tensor<128x!tt.ptr<i32>>
tt.func @masked_i32(%p: tensor<128x!tt.ptr<i32>>, %m: tensor<128xi1>) -> tensor<128xi32> {
  %x = tt.load %p, %m : tensor<128x!tt.ptr<i32>>
  tt.return %x : tensor<128xi32>
}

// -----

// A scalar masked load is poisoned with a scalar constant.
// CHECK-LABEL: tt.func @masked_scalar
// CHECK:         %[[S:.*]] = arith.constant 0x7FC00000 : f32
// CHECK:         tt.load %{{.*}}, %{{.*}}, %[[S]] : !tt.ptr<f32>
tt.func @masked_scalar(%p: !tt.ptr<f32>, %m: i1) -> f32 {
  %x = tt.load %p, %m : !tt.ptr<f32>
  tt.return %x : f32
}

// -----

// Loads without a mask, or with `other`, and i1 loads are left alone.
// CHECK-LABEL: tt.func @left_alone
// CHECK:         tt.load %arg0 : tensor<128x!tt.ptr<f32>>
// CHECK:         tt.load %arg0, %arg1, %arg2 : tensor<128x!tt.ptr<f32>>
// CHECK:         tt.load %arg3, %arg1 : tensor<128x!tt.ptr<i1>>
tt.func @left_alone(%p: tensor<128x!tt.ptr<f32>>, %m: tensor<128xi1>, %o: tensor<128xf32>, %q: tensor<128x!tt.ptr<i1>>) -> (tensor<128xf32>, tensor<128xf32>, tensor<128xi1>) {
  %a = tt.load %p : tensor<128x!tt.ptr<f32>>
  %b = tt.load %p, %m, %o : tensor<128x!tt.ptr<f32>>
  %c = tt.load %q, %m : tensor<128x!tt.ptr<i1>>
  tt.return %a, %b, %c : tensor<128xf32>, tensor<128xf32>, tensor<128xi1>
}

// -----

// Loads that feed a dot operand (here B through tt.trans) keep no `other` by
// default: a NaN `other` stops the pipeliner from feeding wgmma from the
// async copy's shared buffer. The load feeding the accumulator is poisoned.
// With dot-operands=true both operands are poisoned too.
// CHECK-LABEL: tt.func @dot_operands
// CHECK:         tt.load %{{.*}}, %{{.*}} : tensor<32x32x!tt.ptr<f16>>
// CHECK:         tt.load %{{.*}}, %{{.*}} : tensor<32x32x!tt.ptr<f16>>
// CHECK:         tt.load %{{.*}}, %{{.*}}, %{{.*}} : tensor<32x32x!tt.ptr<f32>>
// DOTS-LABEL:  tt.func @dot_operands
// DOTS:          tt.load %{{.*}}, %{{.*}}, %{{.*}} : tensor<32x32x!tt.ptr<f16>>
// DOTS:          tt.load %{{.*}}, %{{.*}}, %{{.*}} : tensor<32x32x!tt.ptr<f16>>
// DOTS:          tt.load %{{.*}}, %{{.*}}, %{{.*}} : tensor<32x32x!tt.ptr<f32>>
tt.func @dot_operands(%pa: tensor<32x32x!tt.ptr<f16>>, %pb: tensor<32x32x!tt.ptr<f16>>, %pc: tensor<32x32x!tt.ptr<f32>>, %m: tensor<32x32xi1>) {
  %a = tt.load %pa, %m : tensor<32x32x!tt.ptr<f16>>
  %b = tt.load %pb, %m : tensor<32x32x!tt.ptr<f16>>
  %c = tt.load %pc, %m : tensor<32x32x!tt.ptr<f32>>
  %bt = tt.trans %b {order = array<i32: 1, 0>} : tensor<32x32xf16> -> tensor<32x32xf16>
  %d = tt.dot %a, %bt, %c : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
  tt.store %pc, %d : tensor<32x32x!tt.ptr<f32>>
  tt.return
}
