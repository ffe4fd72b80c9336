// RUN: %opt %s --pass nvidia_auto_pdl --no-debug-info | FileCheck %s

// A HIP module (after conversion to TritonGPU) is not touched.
// CHECK: module attributes {ttg.target = "hip:gfx942"}
// CHECK-NOT: triton_ext.launch_pdl
// CHECK-LABEL: tt.func public @hip_kernel
// CHECK-NOT:     tt.grid_dependency
// CHECK:         tt.return
module attributes {ttg.target = "hip:gfx942"} {
  tt.func public @hip_kernel(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>) {
    %v = tt.load %x : !tt.ptr<f32>
    tt.store %y, %v : !tt.ptr<f32>
    tt.return
  }
}
