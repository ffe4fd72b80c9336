tt.func @wide(%n: i8) -> i8 {
  %0 = triton_ext_range.assume_range %n, 0, 300 : i8
  tt.return %0 : i8
}
