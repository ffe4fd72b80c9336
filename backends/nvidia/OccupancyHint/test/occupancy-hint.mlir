// RUN: %opt %s -split-input-file --pass nvidia_occupancy_hint --no-debug-info | FileCheck %s
// RUN: %opt %s -split-input-file --pass 'nvidia_occupancy_hint{min-ctas-per-sm=4}' --no-debug-info | FileCheck %s --check-prefix=FOUR

// 128 threads, 16 KiB shared: 2 CTAs fit (256 registers each allowed); 4 too
// (128 registers).
// CHECK-LABEL: llvm.func @small_kernel
// CHECK-SAME:    nvvm.minctasm = 2 : i32
// FOUR-LABEL:  llvm.func @small_kernel
// FOUR-SAME:     nvvm.minctasm = 4 : i32

module attributes {ttg.shared = 16384 : i32} {
  llvm.func @small_kernel() attributes {nvvm.kernel = 1 : ui1, nvvm.reqntid = array<i32: 128>} {
    llvm.return
  }
}

// -----

// 512 threads: 4 CTAs would need 2048 threads and leave 32 registers per
// thread (below min-registers=64); 2 CTAs leave 64.
// CHECK-LABEL: llvm.func @wide_kernel
// CHECK-SAME:    nvvm.minctasm = 2 : i32
// FOUR-LABEL:  llvm.func @wide_kernel
// FOUR-NOT:      nvvm.minctasm

module attributes {ttg.shared = 16384 : i32} {
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
  llvm.func @hinted_kernel() attributes {nvvm.kernel = 1 : ui1, nvvm.minctasm = 3 : i32, nvvm.reqntid = array<i32: 128>} {
    llvm.return
  }
}

// -----

// Not a kernel (no nvvm.reqntid): untouched.
// CHECK-LABEL: llvm.func @device_helper
// CHECK-NOT:     nvvm.minctasm

module attributes {ttg.shared = 16384 : i32} {
  llvm.func @device_helper() {
    llvm.return
  }
}
