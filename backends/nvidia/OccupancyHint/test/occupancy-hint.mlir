// RUN: %opt %s -split-input-file --pass nvidia_occupancy_hint --no-debug-info | FileCheck %s
// RUN: %opt %s -split-input-file --pass 'nvidia_occupancy_hint{min-ctas-per-sm=4}' --no-debug-info | FileCheck %s --check-prefix=FOUR
// Why a kernel gets no hint: with remarks=true, a remark on its llvm.func
// (none on a function that is not a kernel).
// RUN: env MLIR_ENABLE_DIAGNOSTICS=remarks %opt %s -split-input-file --pass 'nvidia_occupancy_hint{remarks=true}' --no-debug-info 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: env MLIR_ENABLE_DIAGNOSTICS=remarks %opt %s -split-input-file --pass 'nvidia_occupancy_hint{min-ctas-per-sm=4 remarks=true}' --no-debug-info 2>&1 >/dev/null | FileCheck %s --check-prefixes=REMARK,REMARK4
// RUN: env MLIR_ENABLE_DIAGNOSTICS=remarks %opt %s -split-input-file --pass 'nvidia_occupancy_hint{min-ctas-per-sm=5 remarks=true}' --no-debug-info 2>&1 >/dev/null | FileCheck %s --check-prefixes=REMARK,REMARK5
// A count outside [1, 32] is an error, which names the count given.
// RUN: not %opt %s -split-input-file --pass 'nvidia_occupancy_hint{min-ctas-per-sm=33}' 2>&1 | FileCheck %s --check-prefix=BAD33
// BAD33: min-ctas-per-sm must be in [1, 32], got 33
// RUN: not %opt %s -split-input-file --pass 'nvidia_occupancy_hint{min-ctas-per-sm=0}' 2>&1 | FileCheck %s --check-prefix=BAD0
// BAD0: min-ctas-per-sm must be in [1, 32], got 0

// 128 threads, 16 KiB shared: 2 CTAs fit (256 registers each allowed); 4 too
// (128 registers).
// CHECK-LABEL: llvm.func @small_kernel
// CHECK-SAME:    nvvm.minctasm = 2 : i32
// FOUR-LABEL:  llvm.func @small_kernel
// FOUR-SAME:     nvvm.minctasm = 4 : i32
// REMARK-NOT: remark:

module attributes {ttg.shared = 16384 : i32} {
  llvm.func @small_kernel() attributes {nvvm.kernel = 1 : ui1, nvvm.reqntid = array<i32: 128>} {
    llvm.return
  }
}

// -----

// 512 threads: 4 CTAs would need 2048 threads and leave 32 registers per
// thread (below min-registers=64); 2 CTAs leave 64; 5 CTAs would need 2560
// threads.
// CHECK-LABEL: llvm.func @wide_kernel
// CHECK-SAME:    nvvm.minctasm = 2 : i32
// FOUR-LABEL:  llvm.func @wide_kernel
// FOUR-NOT:      nvvm.minctasm

module attributes {ttg.shared = 16384 : i32} {
  // REMARK4: occupancy-hint.mlir:[[@LINE+2]]:3: remark: nvidia_occupancy_hint: not applied: register budget below min-registers
  // REMARK5: occupancy-hint.mlir:[[@LINE+1]]:3: remark: nvidia_occupancy_hint: not applied: threads per SM would exceed 2048
  llvm.func @wide_kernel() attributes {nvvm.kernel = 1 : ui1, nvvm.reqntid = array<i32: 512>} {
    llvm.return
  }
}

// -----

// A hint already there is kept.
// CHECK-LABEL: llvm.func @hinted_kernel
// CHECK-SAME:    nvvm.minctasm = 3 : i32
// FOUR-LABEL:  llvm.func @hinted_kernel
// FOUR-SAME:     nvvm.minctasm = 3 : i32

module attributes {ttg.shared = 16384 : i32} {
  // REMARK: occupancy-hint.mlir:[[@LINE+1]]:3: remark: nvidia_occupancy_hint: not applied: nvvm.minctasm already set
  llvm.func @hinted_kernel() attributes {nvvm.kernel = 1 : ui1, nvvm.minctasm = 3 : i32, nvvm.reqntid = array<i32: 128>} {
    llvm.return
  }
}

// -----

// Not a kernel (no nvvm.reqntid): untouched, without a remark.
// REMARK-NOT: remark:
// CHECK-LABEL: llvm.func @device_helper
// CHECK-NOT:     nvvm.minctasm

module attributes {ttg.shared = 16384 : i32} {
  llvm.func @device_helper() {
    llvm.return
  }
}
