tt.func @float(%x: f32) -> f32 {
  %0 = triton_ext_range.assume_range %x, 0, 1 : f32
  tt.return %0 : f32
}
