// RUN: %opt %s --pass nvidia_stream_eviction --no-debug-info | FileCheck %s

// A module for HIP (after conversion to TritonGPU) is not touched: the hint
// is NVIDIA-specific.
// CHECK: module attributes {ttg.target = "hip:gfx942"}
// CHECK-NOT: cachePolicy
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
