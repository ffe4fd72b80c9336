// Parse, print and verify triton_ext_range.assume_range; folding under canonicalize.
// TRITON_EXT_ENABLE loads the dialect's library before the file is parsed.
// RUN: env TRITON_EXT_ENABLE=range_facts_lower %opt %s -split-input-file --pass cse --no-debug-info | FileCheck %s
// RUN: env TRITON_EXT_ENABLE=range_facts_lower %opt %s -split-input-file --pass canonicalize --no-debug-info | FileCheck %s --check-prefix=FOLD

// A scalar fact round-trips with signed decimal bounds.
// CHECK-LABEL: tt.func @scalar_i32
// CHECK: %[[R:.*]] = triton_ext_range.assume_range %arg0, -5, 4096 : i32
// CHECK: tt.return %[[R]] : i32
// FOLD-LABEL: tt.func @scalar_i32
// FOLD: triton_ext_range.assume_range %arg0, -5, 4096 : i32
tt.func @scalar_i32(%n: i32) -> i32 {
  %0 = triton_ext_range.assume_range %n, -5, 4096 : i32
  tt.return %0 : i32
}

// -----

// Tensor facts: the bounds have the element type.
// CHECK-LABEL: tt.func @tensor_i64
// CHECK: triton_ext_range.assume_range %{{.*}}, 0, 1099511627776 : tensor<128xi64>
tt.func @tensor_i64(%t: tensor<128xi64>) -> tensor<128xi64> {
  %0 = triton_ext_range.assume_range %t, 0, 1099511627776 : tensor<128xi64>
  tt.return %0 : tensor<128xi64>
}

// -----

// The extreme values of i8 parse and print as signed values.
// CHECK-LABEL: tt.func @extremes_i8
// CHECK: triton_ext_range.assume_range %arg0, -128, 126 : i8
tt.func @extremes_i8(%x: i8) -> i8 {
  %0 = triton_ext_range.assume_range %x, -128, 126 : i8
  tt.return %0 : i8
}

// -----

// The op is Pure: an unused fact is dead and canonicalize erases it, so the
// CSE run keeps it and the canonicalize run does not.
// CHECK-LABEL: tt.func @unused
// CHECK: triton_ext_range.assume_range
// FOLD-LABEL: tt.func @unused
// FOLD-NOT: triton_ext_range.assume_range
// FOLD: tt.return
tt.func @unused(%x: i32) {
  %0 = triton_ext_range.assume_range %x, 0, 1 : i32
  tt.return
}

// -----

// A range that covers the whole type states nothing and folds away.
// FOLD-LABEL: tt.func @full_range_folds
// FOLD-NOT: triton_ext_range.assume_range
// FOLD: tt.return %arg0 : i8
tt.func @full_range_folds(%x: i8) -> i8 {
  %0 = triton_ext_range.assume_range %x, -128, 127 : i8
  tt.return %0 : i8
}

// -----

// An outer fact that contains the inner one adds nothing: only the inner one stays.
// FOLD-LABEL: tt.func @nested_wider_folds
// FOLD: %[[IN:.*]] = triton_ext_range.assume_range %arg0, 0, 10 : i32
// FOLD-NOT: triton_ext_range.assume_range
// FOLD: tt.return %[[IN]] : i32
tt.func @nested_wider_folds(%x: i32) -> i32 {
  %0 = triton_ext_range.assume_range %x, 0, 10 : i32
  %1 = triton_ext_range.assume_range %0, -1, 100 : i32
  tt.return %1 : i32
}

// -----

// A narrower outer fact is new information and stays.
// FOLD-LABEL: tt.func @nested_narrower_kept
// FOLD: triton_ext_range.assume_range %arg0, 0, 10 : i32
// FOLD: triton_ext_range.assume_range %{{.*}}, 2, 5 : i32
tt.func @nested_narrower_kept(%x: i32) -> i32 {
  %0 = triton_ext_range.assume_range %x, 0, 10 : i32
  %1 = triton_ext_range.assume_range %0, 2, 5 : i32
  tt.return %1 : i32
}
