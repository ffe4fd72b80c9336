tt.func @result_type(%x: i32) -> i64 {
  %0 = "@@dialect@@.@@op@@"(%x) <{factor = 2 : i64}> : (i32) -> i64
  tt.return %0 : i64
}
