// Verifier and parser errors of triton_ext_range.assume_range, one case per chunk, each reported
// at the op (TRITON_EXT_ENABLE loads the dialect; cse only gives the pipeline a pass).
// RUN: env TRITON_EXT_ENABLE=range_facts_lower %opt %s -split-input-file -verify-diagnostics --pass cse

tt.func @empty(%n: i32) -> i32 {
  // expected-error @below {{'triton_ext_range.assume_range' op empty range: lo (10) is greater than hi (2)}}
  %0 = triton_ext_range.assume_range %n, 10, 2 : i32
  tt.return %0 : i32
}

// -----

tt.func @wide(%n: i8) -> i8 {
  // expected-error @below {{custom op 'triton_ext_range.assume_range' bound does not fit 'i8'}}
  %0 = triton_ext_range.assume_range %n, 0, 300 : i8
  tt.return %0 : i8
}

// -----

tt.func @generic(%n: i32) -> i32 {
  // expected-error @below {{'triton_ext_range.assume_range' op 'lo' has type 'i64', expected the element type 'i32'}}
  %0 = "triton_ext_range.assume_range"(%n) <{lo = 0 : i64, hi = 5 : i32}> : (i32) -> i32
  tt.return %0 : i32
}

// -----

tt.func @float(%x: f32) -> f32 {
  // expected-error @below {{expected an integer or a tensor of integers, found 'f32'}}
  %0 = triton_ext_range.assume_range %x, 0, 1 : f32
  tt.return %0 : f32
}

// -----

tt.func @result_type(%x: i32) -> i64 {
  // expected-error @below {{'triton_ext_range.assume_range' op failed to verify that all of {input, result} have same type}}
  %0 = "triton_ext_range.assume_range"(%x) <{lo = 0 : i32, hi = 5 : i32}> : (i32) -> i64
  tt.return %0 : i64
}
