// RUN: %opt %s --pass nvidia_auto_pdl --no-debug-info | FileCheck %s

// A Hopper TritonGPU module is handled (the pass also works after ttgir
// conversion).
// CHECK: module attributes {triton_ext.launch_pdl = 1 : i32, ttg.target = "cuda:90"}
// CHECK-LABEL: tt.func public @hopper_kernel
// CHECK:         tt.grid_dependency_wait
// CHECK-NEXT:    tt.load
module attributes {ttg.target = "cuda:90"} {
  tt.func public @hopper_kernel(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>) {
    %v = tt.load %x : !tt.ptr<f32>
    tt.store %y, %v : !tt.ptr<f32>
    tt.return
  }
}
