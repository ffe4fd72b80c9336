// RUN: %opt %s --pass nvidia_occupancy_hint --no-debug-info | FileCheck %s

// 160 KiB of shared memory per CTA: two CTAs cannot share an SM (228 KiB), so
// the hint is not set.
// CHECK-LABEL: llvm.func @big_smem_kernel
// CHECK-NOT:     nvvm.minctasm
module attributes {ttg.shared = 163840 : i32} {
  llvm.func @big_smem_kernel() attributes {nvvm.kernel = 1 : ui1, nvvm.reqntid = array<i32: 128>} {
    llvm.return
  }
}
