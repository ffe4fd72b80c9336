tt.func @negative_too_wide(%x: tensor<4xi8>) -> tensor<4xi8> {
  %0 = @@dialect@@.@@op@@ %x, -129 : tensor<4xi8>
  tt.return %0 : tensor<4xi8>
}
