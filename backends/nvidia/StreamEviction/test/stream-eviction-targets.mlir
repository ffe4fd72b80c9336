// RUN: %opt %s -split-input-file --pass nvidia_stream_eviction --no-debug-info | FileCheck %s
// RUN: env MLIR_ENABLE_DIAGNOSTICS=remarks %opt %s -split-input-file --pass 'nvidia_stream_eviction{remarks=true}' --no-debug-info 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// A module for sm_80 (after conversion to TritonGPU) is not touched: the hint
// was only measured on Hopper.
// CHECK: module attributes {ttg.target = "cuda:80"}
// CHECK-LABEL: tt.func public @ampere
// CHECK-NOT: cachePolicy
// CHECK: tt.return
// REMARK: stream-eviction-targets.mlir:[[@LINE+1]]:1: remark: nvidia_stream_eviction: not applied: the target is not cuda >= 90
module attributes {ttg.target = "cuda:80"} {
  tt.func public @ampere(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>) {
    %pid = tt.get_program_id x : i32
    %p = tt.addptr %x, %pid : !tt.ptr<f32>, i32
    %v = tt.load %p : !tt.ptr<f32>
    %q = tt.addptr %y, %pid : !tt.ptr<f32>, i32
    tt.store %q, %v : !tt.ptr<f32>
    tt.return
  }
}

// -----

// A module for HIP (after conversion to TritonGPU) is not touched: the hint
// is NVIDIA-specific.
// CHECK: module attributes {ttg.target = "hip:gfx942"}
// CHECK-LABEL: tt.func public @mi300
// CHECK-NOT: cachePolicy
// CHECK: tt.return
// REMARK: stream-eviction-targets.mlir:[[@LINE+1]]:1: remark: nvidia_stream_eviction: not applied: the target is not cuda >= 90
module attributes {ttg.target = "hip:gfx942"} {
  tt.func public @mi300(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>) {
    %pid = tt.get_program_id x : i32
    %p = tt.addptr %x, %pid : !tt.ptr<f32>, i32
    %v = tt.load %p : !tt.ptr<f32>
    %q = tt.addptr %y, %pid : !tt.ptr<f32>, i32
    tt.store %q, %v : !tt.ptr<f32>
    tt.return
  }
}
