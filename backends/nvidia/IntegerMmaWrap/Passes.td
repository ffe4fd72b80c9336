//===- Passes.td - Integer MMA sums that wrap like tl.dot's ---*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_NVIDIA_INTEGER_MMA_WRAP_PASSES
#define TRITON_EXT_NVIDIA_INTEGER_MMA_WRAP_PASSES

include "triton-ext/PassOptions.td"

def TritonExtIntegerMmaWrap : Pass<"triton-ext-nvidia-integer-mma-wrap", "mlir::ModuleOp"> {
  let summary = "Integer mma.sync sums wrap modulo 2^32, as wgmma's and tl.dot's do";
  let description = [{
    Runs on the LLVM-dialect module at the end of Triton's `make_llir`. Triton
    lowers an integer `tt.dot` (int8 or int4 operands, int32 accumulator) to
    Ampere's `mma.sync ... .satfinite.s32...` below 4 warps and to Hopper's
    `wgmma.mma_async ... .s32...` (no `.satfinite`) at 4 warps and more: the
    first clamps a sum that leaves int32, the second wraps it. This pass drops
    `.satfinite` from every integer-accumulator MMA in the module's inline
    assembly, so the kernel's sums wrap whatever its warp count.

    Before: `mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {$0, ...}`
    After:  `mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {$0, ...}`
  }];
}

#endif // TRITON_EXT_NVIDIA_INTEGER_MMA_WRAP_PASSES
