tt.func @float(%x: f32) -> f32 {
  %0 = @@dialect@@.@@op@@ %x, 2 : f32
  tt.return %0 : f32
}
