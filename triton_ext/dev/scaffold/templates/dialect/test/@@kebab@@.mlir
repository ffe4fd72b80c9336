// Parse, print and verify @@dialect@@.@@op@@; folding under canonicalize.
// TRITON_EXT_ENABLE loads the dialect's library before the file is parsed.
// RUN: env TRITON_EXT_ENABLE=@@lower_pass@@ %opt %s -split-input-file --pass cse --no-debug-info | FileCheck %s
// RUN: env TRITON_EXT_ENABLE=@@lower_pass@@ %opt %s -split-input-file --pass canonicalize --no-debug-info | FileCheck %s --check-prefix=FOLD

// A scalar op round-trips, a negative factor included.
// CHECK-LABEL: tt.func @scalar
// CHECK: %[[R:.*]] = @@dialect@@.@@op@@ %arg0, -3 : i32
// CHECK: tt.return %[[R]] : i32
// FOLD-LABEL: tt.func @scalar
// FOLD: @@dialect@@.@@op@@ %arg0, -3 : i32
tt.func @scalar(%x: i32) -> i32 {
  %0 = @@dialect@@.@@op@@ %x, -3 : i32
  tt.return %0 : i32
}

// -----

// Tensors; 255 fits i8 read as unsigned.
// CHECK-LABEL: tt.func @tensor_i8
// CHECK: @@dialect@@.@@op@@ %arg0, 255 : tensor<128xi8>
tt.func @tensor_i8(%t: tensor<128xi8>) -> tensor<128xi8> {
  %0 = @@dialect@@.@@op@@ %t, 255 : tensor<128xi8>
  tt.return %0 : tensor<128xi8>
}

// -----

// Multiplying by one folds to the operand.
// FOLD-LABEL: tt.func @by_one
// FOLD-NOT: @@dialect@@.@@op@@
// FOLD: tt.return %arg0 : i64
tt.func @by_one(%x: i64) -> i64 {
  %0 = @@dialect@@.@@op@@ %x, 1 : i64
  tt.return %0 : i64
}

// -----

// The op is Pure: CSE merges two equal ones, canonicalize erases an unused one.
// CHECK-LABEL: tt.func @unused_and_repeated
// CHECK: %[[A:.*]] = @@dialect@@.@@op@@ %arg0, 2 : i32
// CHECK-NOT: @@dialect@@.@@op@@
// CHECK: tt.return %[[A]], %[[A]] : i32, i32
// FOLD-LABEL: tt.func @unused_and_repeated
// FOLD-NOT: @@dialect@@.@@op@@ %arg0, 7
// FOLD: tt.return
tt.func @unused_and_repeated(%x: i32) -> (i32, i32) {
  %unused = @@dialect@@.@@op@@ %x, 7 : i32
  %a = @@dialect@@.@@op@@ %x, 2 : i32
  %b = @@dialect@@.@@op@@ %x, 2 : i32
  tt.return %a, %b : i32, i32
}
