// RUN: %opt %s --pass nvidia_auto_pdl --no-debug-info | FileCheck %s

// Nor is a pre-Hopper CUDA module.
// CHECK: module attributes {ttg.target = "cuda:80"}
// CHECK-LABEL: tt.func public @ampere_kernel
// CHECK-NOT:     tt.grid_dependency
// CHECK:         tt.return
module attributes {ttg.target = "cuda:80"} {
  tt.func public @ampere_kernel(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>) {
    %v = tt.load %x : !tt.ptr<f32>
    tt.store %y, %v : !tt.ptr<f32>
    tt.return
  }
}
