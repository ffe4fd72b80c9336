// Verifier errors of @@dialect@@.@@op@@, one case per chunk, each reported at the op
// (TRITON_EXT_ENABLE loads the dialect; cse only gives the pipeline a pass).
// RUN: env TRITON_EXT_ENABLE=@@lower_pass@@ %opt %s -split-input-file -verify-diagnostics --pass cse

tt.func @too_wide(%x: i8) -> i8 {
  // expected-error @below {{'@@dialect@@.@@op@@' op factor 256 does not fit 'i8' (expected -2^7 <= factor <= 2^8 - 1)}}
  %0 = @@dialect@@.@@op@@ %x, 256 : i8
  tt.return %0 : i8
}

// -----

tt.func @negative_too_wide(%x: tensor<4xi8>) -> tensor<4xi8> {
  // expected-error @below {{'@@dialect@@.@@op@@' op factor -129 does not fit 'i8'}}
  %0 = @@dialect@@.@@op@@ %x, -129 : tensor<4xi8>
  tt.return %0 : tensor<4xi8>
}

// -----

tt.func @float(%x: f32) -> f32 {
  // expected-error-re @below {{'@@dialect@@.@@op@@' op operand #0 must be {{.*}}, but got 'f32'}}
  %0 = @@dialect@@.@@op@@ %x, 2 : f32
  tt.return %0 : f32
}

// -----

tt.func @result_type(%x: i32) -> i64 {
  // expected-error @below {{'@@dialect@@.@@op@@' op failed to verify that all of {input, result} have same type}}
  %0 = "@@dialect@@.@@op@@"(%x) <{factor = 2 : i64}> : (i32) -> i64
  tt.return %0 : i64
}
