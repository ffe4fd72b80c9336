#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
tt.func @f(%buf: !ttg.memdesc<64x64xf16, #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>, #ttg.shared_memory, mutable>) -> tensor<64x64xf16, #blocked> {
  %0 = triton_ext_onchip.view %buf {purpose = "store"} : !ttg.memdesc<64x64xf16, #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>, #ttg.shared_memory, mutable> -> tensor<64x64x!tt.ptr<f16>>
  %1 = ttg.convert_layout %0 : tensor<64x64x!tt.ptr<f16>> -> tensor<64x64x!tt.ptr<f16>, #blocked>
  %2 = tt.load %1 : tensor<64x64x!tt.ptr<f16>, #blocked>
  tt.return %2 : tensor<64x64xf16, #blocked>
}
}
