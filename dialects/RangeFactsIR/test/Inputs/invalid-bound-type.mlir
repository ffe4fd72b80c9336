tt.func @generic(%n: i32) -> i32 {
  %0 = "triton_ext_range.assume_range"(%n) <{lo = 0 : i64, hi = 5 : i32}> : (i32) -> i32
  tt.return %0 : i32
}
