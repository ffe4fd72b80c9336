// RUN: %opt %s -split-input-file --pass nvidia_auto_pdl --no-debug-info | FileCheck %s
// RUN: env MLIR_ENABLE_DIAGNOSTICS=remarks %opt %s -split-input-file --pass 'nvidia_auto_pdl{remarks=true}' --no-debug-info 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// Where the pass runs: only on Hopper (cuda >= 90) modules, TTIR or TritonGPU.
// A Hopper TritonGPU module is handled (the pass also works after ttgir
// conversion), with no remark.
// REMARK-NOT: remark:
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

// -----

// A pre-Hopper CUDA module is not touched.
// CHECK: module attributes {ttg.target = "cuda:80"}
// CHECK-LABEL: tt.func public @ampere_kernel
// CHECK-NOT:     tt.grid_dependency
// CHECK:         tt.return
// REMARK: auto-pdl-targets.mlir:[[@LINE+1]]:1: remark: nvidia_auto_pdl: not applied: the target is not cuda >= 90
module attributes {ttg.target = "cuda:80"} {
  tt.func public @ampere_kernel(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>) {
    %v = tt.load %x : !tt.ptr<f32>
    tt.store %y, %v : !tt.ptr<f32>
    tt.return
  }
}

// -----

// A HIP module (after conversion to TritonGPU) is not touched.
// CHECK: module attributes {ttg.target = "hip:gfx942"}
// CHECK-NOT: triton_ext.launch_pdl
// CHECK-LABEL: tt.func public @hip_kernel
// CHECK-NOT:     tt.grid_dependency
// CHECK:         tt.return
// REMARK: auto-pdl-targets.mlir:[[@LINE+1]]:1: remark: nvidia_auto_pdl: not applied: the target is not cuda >= 90
module attributes {ttg.target = "hip:gfx942"} {
  tt.func public @hip_kernel(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>) {
    %v = tt.load %x : !tt.ptr<f32>
    tt.store %y, %v : !tt.ptr<f32>
    tt.return
  }
}
