// RUN: %opt %s --pass nvidia_stream_eviction --no-debug-info | FileCheck %s

// A module for sm_80 (after conversion to TritonGPU) is not touched: the hint
// was only measured on Hopper.
// CHECK: module attributes {ttg.target = "cuda:80"}
// CHECK-NOT: cachePolicy
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
