tt.func @too_wide(%x: i8) -> i8 {
  %0 = @@dialect@@.@@op@@ %x, 256 : i8
  tt.return %0 : i8
}
