// RUN: %opt %s --pass nvidia_occupancy_hint --no-debug-info | FileCheck %s
// RUN: env MLIR_ENABLE_DIAGNOSTICS=remarks %opt %s --pass 'nvidia_occupancy_hint{remarks=true}' --no-debug-info 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// 160 KiB of shared memory per CTA: two CTAs cannot share an SM (228 KiB), so
// the hint is not set.
// CHECK-LABEL: llvm.func @big_smem_kernel
// CHECK-NOT:     nvvm.minctasm
module attributes {ttg.shared = 163840 : i32} {
  // REMARK: occupancy-hint-shared.mlir:[[@LINE+1]]:3: remark: nvidia_occupancy_hint: not applied: shared memory does not allow that many CTAs
  llvm.func @big_smem_kernel() attributes {nvvm.kernel = 1 : ui1, nvvm.reqntid = array<i32: 128>} {
    llvm.return
  }
}
