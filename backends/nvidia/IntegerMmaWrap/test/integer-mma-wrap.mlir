// RUN: %opt %s -split-input-file --pass nvidia_integer_mma_wrap --no-debug-info | FileCheck %s

// Triton's int8 tt.dot below 4 warps on Hopper: mma.sync with `.satfinite`
// (clamps a sum that leaves int32). The pass drops the qualifier, so the sum
// wraps modulo 2^32 as wgmma's does; the operands and constraints stay.
// CHECK-LABEL: llvm.func @int8_mma_sync
// CHECK:         llvm.inline_asm {{.*}}"mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 { $0, $1, $2, $3 }, { $8, $9, $10, $11 }, { $12, $13 }, { $4, $5, $6, $7 };", "=r,=r,=r,=r,0,1,2,3,r,r,r,r,r,r"
// CHECK-NOT:     satfinite
// CHECK:         llvm.return

module {
  llvm.func @int8_mma_sync(%c: i32, %a: i32, %b: i32) attributes {nvvm.kernel = 1 : ui1} {
    %0 = llvm.inline_asm has_side_effects asm_dialect = att operand_attrs = [] "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 { $0, $1, $2, $3 }, { $8, $9, $10, $11 }, { $12, $13 }, { $4, $5, $6, $7 };", "=r,=r,=r,=r,0,1,2,3,r,r,r,r,r,r" %c, %c, %c, %c, %a, %a, %a, %a, %b, %b : (i32, i32, i32, i32, i32, i32, i32, i32, i32, i32) -> !llvm.struct<(i32, i32, i32, i32)>
    llvm.return
  }
}

// -----

// Unsigned and mixed-sign int8, and int4 (m16n8k64): the same accumulator, the
// same rewrite; a predicated instruction and one of several in a string too.
// CHECK-LABEL: llvm.func @other_integer_mmas
// CHECK:         "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32 {$0}, {$1}, {$2}, {$3};"
// CHECK:         "mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32 {$0}, {$1}, {$2}, {$3};"
// CHECK:         "mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32 {$0}, {$1}, {$2}, {$3};"
// CHECK:         "@$4 mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {$0}, {$1}, {$2}, {$3};\0A\09mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {$0}, {$1}, {$2}, {$3};"
// CHECK-NOT:     satfinite
// CHECK:         llvm.return

module {
  llvm.func @other_integer_mmas(%x: i32, %p: i1) attributes {nvvm.kernel = 1 : ui1} {
    %0 = llvm.inline_asm has_side_effects asm_dialect = att "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.u8.u8.s32 {$0}, {$1}, {$2}, {$3};", "=r,r,r,0" %x, %x, %x : (i32, i32, i32) -> i32
    %1 = llvm.inline_asm has_side_effects asm_dialect = att "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.u8.s32 {$0}, {$1}, {$2}, {$3};", "=r,r,r,0" %x, %x, %x : (i32, i32, i32) -> i32
    %2 = llvm.inline_asm has_side_effects asm_dialect = att "mma.sync.aligned.m16n8k64.row.col.satfinite.s32.s4.s4.s32 {$0}, {$1}, {$2}, {$3};", "=r,r,r,0" %x, %x, %x : (i32, i32, i32) -> i32
    %3 = llvm.inline_asm has_side_effects asm_dialect = att "@$4 mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {$0}, {$1}, {$2}, {$3};\0A\09mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {$0}, {$1}, {$2}, {$3};", "=r,r,r,0,b" %x, %x, %x, %p : (i32, i32, i32, i1) -> i32
    llvm.return
  }
}

// -----

// Left alone: wgmma's integer MMA (already wraps), float MMAs, and a
// saturating conversion, whose `.satfinite` is not an integer sum's.
// CHECK-LABEL: llvm.func @not_integer_sums
// CHECK:         "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 {$0}, $1, $2, $3;"
// CHECK:         "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {$0}, {$1}, {$2}, {$3};"
// CHECK:         "cvt.rn.satfinite.e4m3x2.f32 $0, $1, $2;"
// CHECK:         "mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.satfinite.f32.e4m3.e4m3.f32 {$0}, {$1}, {$2}, {$3};"

module {
  llvm.func @not_integer_sums(%x: i32, %f: f32, %l: i64) attributes {nvvm.kernel = 1 : ui1} {
    %0 = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 {$0}, $1, $2, $3;", "=r,l,l,n" %l, %l, %x : (i64, i64, i32) -> i32
    %1 = llvm.inline_asm has_side_effects asm_dialect = att "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {$0}, {$1}, {$2}, {$3};", "=f,r,r,0" %x, %x, %f : (i32, i32, f32) -> f32
    %2 = llvm.inline_asm asm_dialect = att "cvt.rn.satfinite.e4m3x2.f32 $0, $1, $2;", "=h,f,f" %f, %f : (f32, f32) -> i16
    %3 = llvm.inline_asm has_side_effects asm_dialect = att "mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.satfinite.f32.e4m3.e4m3.f32 {$0}, {$1}, {$2}, {$3};", "=f,r,r,0" %x, %x, %f : (i32, i32, f32) -> f32
    llvm.return
  }
}
