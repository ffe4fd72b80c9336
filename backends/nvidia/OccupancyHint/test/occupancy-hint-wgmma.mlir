// RUN: %opt %s -split-input-file --pass nvidia_occupancy_hint --no-debug-info | FileCheck %s
// RUN: env MLIR_ENABLE_DIAGNOSTICS=remarks %opt %s -split-input-file --pass 'nvidia_occupancy_hint{remarks=true}' --no-debug-info 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// Issue 16: a 128x256x64 fp16 GEMM tile at 8 warps (256 threads). Its wgmma
// m64n256 f32 accumulator takes 128 registers per thread and ptxas needs 154;
// two CTAs would cap registers at 65536 / 512 = 128, which ptxas rejects
// ("Insufficient registers") instead of spilling. The hint is not set.
// CHECK-LABEL: llvm.func @gemm_128x256_8warps
// CHECK-NOT:     nvvm.minctasm
// CHECK:         llvm.return

module attributes {ttg.shared = 98304 : i32} {
  // REMARK: occupancy-hint-wgmma.mlir:[[@LINE+1]]:3: remark: nvidia_occupancy_hint: not applied: register budget below the wgmma accumulators' floor (ptxas would fail, not spill)
  llvm.func @gemm_128x256_8warps(%a: i64, %b: i64) attributes {nvvm.kernel = 1 : ui1, nvvm.reqntid = array<i32: 256>} {
    %0 = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {$0}, $1, $2;", "=f,l,l" %a, %b : (i64, i64) -> f32
    %1 = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {$0}, $1, $2;", "=f,l,l" %a, %b : (i64, i64) -> f32
    llvm.return
  }
}

// -----

// The same instruction at 4 warps (128 threads): 256 registers per thread fit
// the 128 + 32 floor.
// CHECK-LABEL: llvm.func @gemm_64x256_4warps
// CHECK-SAME:    nvvm.minctasm = 2 : i32

module attributes {ttg.shared = 98304 : i32} {
  llvm.func @gemm_64x256_4warps(%a: i64, %b: i64) attributes {nvvm.kernel = 1 : ui1, nvvm.reqntid = array<i32: 128>} {
    %0 = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {$0}, $1, $2;", "=f,l,l" %a, %b : (i64, i64) -> f32
    llvm.return
  }
}

// -----

// f16 accumulators are packed two per register: 64 + 32 fit in 128.
// CHECK-LABEL: llvm.func @gemm_f16_acc_8warps
// CHECK-SAME:    nvvm.minctasm = 2 : i32

module attributes {ttg.shared = 98304 : i32} {
  llvm.func @gemm_f16_acc_8warps(%a: i64, %b: i64) attributes {nvvm.kernel = 1 : ui1, nvvm.reqntid = array<i32: 256>} {
    %0 = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n256k16.f16.f16.f16 {$0}, $1, $2;", "=r,l,l" %a, %b : (i64, i64) -> i32
    llvm.return
  }
}

// -----

// Attention keeps S (n64: 32 registers) and O (n128: 64 registers) live
// together: 96 + 32 = 128 fits exactly at 8 warps; a third shape would not.
// CHECK-LABEL: llvm.func @attention_8warps
// CHECK-SAME:    nvvm.minctasm = 2 : i32
// CHECK-LABEL: llvm.func @three_shapes_8warps
// CHECK-NOT:     nvvm.minctasm
// CHECK:         llvm.return

module attributes {ttg.shared = 98304 : i32} {
  llvm.func @attention_8warps(%a: i64, %b: i64) attributes {nvvm.kernel = 1 : ui1, nvvm.reqntid = array<i32: 256>} {
    %0 = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0}, $1, $2;", "=f,l,l" %a, %b : (i64, i64) -> f32
    %1 = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {$0}, $1, $2;", "=f,l,l" %a, %b : (i64, i64) -> f32
    llvm.return
  }
  // REMARK: occupancy-hint-wgmma.mlir:[[@LINE+1]]:3: remark: nvidia_occupancy_hint: not applied: register budget below the wgmma accumulators' floor (ptxas would fail, not spill)
  llvm.func @three_shapes_8warps(%a: i64, %b: i64) attributes {nvvm.kernel = 1 : ui1, nvvm.reqntid = array<i32: 256>} {
    %0 = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0}, $1, $2;", "=f,l,l" %a, %b : (i64, i64) -> f32
    %1 = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {$0}, $1, $2;", "=f,l,l" %a, %b : (i64, i64) -> f32
    %2 = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {$0}, $1, $2;", "=f,l,l" %a, %b : (i64, i64) -> f32
    llvm.return
  }
}
