tt.func @result_type(%x: i32) -> i64 {
  %0 = "triton_ext_range.assume_range"(%x) <{lo = 0 : i32, hi = 5 : i32}> : (i32) -> i64
  tt.return %0 : i64
}
