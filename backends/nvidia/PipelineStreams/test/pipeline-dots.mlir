// RUN: %opt %s -split-input-file --pass 'nvidia_pipeline_dots{kernel-num-stages=1},canonicalize,cse' --no-debug-info | FileCheck %s --check-prefixes=CHECK,S2
// RUN: %opt %s -split-input-file --pass 'nvidia_pipeline_dots{kernel-num-stages=1 num-stages=3},canonicalize,cse' --no-debug-info | FileCheck %s --check-prefixes=CHECK,S3
// Idempotence: the second run finds both copies decided (tt.num_stages) and changes nothing.
// RUN: %opt %s -split-input-file --pass 'nvidia_pipeline_dots{kernel-num-stages=1},canonicalize,cse,nvidia_pipeline_dots{kernel-num-stages=1},canonicalize,cse' --no-debug-info | FileCheck %s --check-prefixes=CHECK,S2
// A kernel compiled with num_stages >= 2 (Triton pipelines its dot loops) or
// an unknown num_stages (0, the default): nothing changes.
// RUN: %opt %s -split-input-file --pass 'nvidia_pipeline_dots{kernel-num-stages=3}' --no-debug-info | FileCheck %s --check-prefix=KEEP
// RUN: %opt %s -split-input-file --pass 'nvidia_pipeline_dots' --no-debug-info | FileCheck %s --check-prefix=KEEP
// Why a loop (or the module) is left alone, with remarks=true.
// RUN: env MLIR_ENABLE_DIAGNOSTICS=remarks %opt %s -split-input-file --pass 'nvidia_pipeline_dots{kernel-num-stages=1 remarks=true}' --no-debug-info 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: env MLIR_ENABLE_DIAGNOSTICS=remarks %opt %s -split-input-file --pass 'nvidia_pipeline_dots{kernel-num-stages=4 remarks=true}' --no-debug-info 2>&1 >/dev/null | FileCheck %s --check-prefix=PIPELINED
// RUN: env MLIR_ENABLE_DIAGNOSTICS=remarks %opt %s -split-input-file --pass 'nvidia_pipeline_dots{remarks=true}' --no-debug-info 2>&1 >/dev/null | FileCheck %s --check-prefix=UNKNOWN

// PIPELINED: remark: nvidia_pipeline_dots: not applied: the kernel is compiled with num_stages=4, so Triton pipelines its dot loops already
// UNKNOWN: remark: nvidia_pipeline_dots: not applied: the kernel's num_stages is unknown (kernel-num-stages=0; the loader sets it from the compile options)

// The attention-like loop of a num_stages=1 kernel: a dot over K tiles
// loaded in the loop, nothing stored. Versioned: the guard keeps the step
// and both bounds where lb + k*step and ub - k*step (k <= num-stages) cannot
// wrap: MAX - 2 * 32 = 2147483583 (3 stages: 2147483551).
// KEEP-LABEL: tt.func public @dot_loop
// KEEP-NOT:     scf.if
// KEEP-NOT:     tt.num_stages
// CHECK-LABEL: tt.func public @dot_loop
// S2-DAG:        %[[LIMIT:.*]] = arith.constant 2147483583 : i32
// S3-DAG:        %[[LIMIT:.*]] = arith.constant 2147483551 : i32
// CHECK:         %[[LB_OK:.*]] = arith.cmpi sge, %[[LB:.*]], %c0_i32
// CHECK:         %[[UB_OK:.*]] = arith.cmpi sge, %[[UB:.*]], %c0_i32
// CHECK:         arith.cmpi sle, %[[LB]], %[[LIMIT]]
// CHECK:         arith.cmpi sle, %[[UB]], %[[LIMIT]]
// CHECK:         %[[R:.*]] = scf.if %{{.*}} -> (tensor<64x64xf32>) {
// CHECK:           %[[P:.*]] = scf.for %{{.*}} = %[[LB]] to %[[UB]] step %c32_i32
// CHECK:             tt.load
// CHECK:             tt.dot
// S2:              } {tt.num_stages = 2 : i32}
// S3:              } {tt.num_stages = 3 : i32}
// CHECK:           scf.yield %[[P]]
// CHECK:         } else {
// CHECK:           %[[O:.*]] = scf.for %{{.*}} = %[[LB]] to %[[UB]] step %c32_i32
// CHECK:             tt.dot
// CHECK:           } {tt.num_stages = 1 : i32}
// CHECK:           scf.yield %[[O]]
// CHECK:         }
// CHECK:         tt.store %{{.*}}, %[[R]]
tt.func public @dot_loop(%a: tensor<64x32x!tt.ptr<f16>>, %b: !tt.ptr<f16>, %out: tensor<64x64x!tt.ptr<f32>>, %lb: i32, %ub: i32) {
  %c32 = arith.constant 32 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %q = tt.load %a : tensor<64x32x!tt.ptr<f16>>
  %bs = tt.splat %b : !tt.ptr<f16> -> tensor<32x64x!tt.ptr<f16>>
  %r = scf.for %i = %lb to %ub step %c32 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
    %s = tt.splat %i : i32 -> tensor<32x64xi32>
    %p = tt.addptr %bs, %s : tensor<32x64x!tt.ptr<f16>>, tensor<32x64xi32>
    %k = tt.load %p : tensor<32x64x!tt.ptr<f16>>
    %d = tt.dot %q, %k, %acc : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  tt.store %out, %r : tensor<64x64x!tt.ptr<f32>>
  tt.return
}

// -----

// A loop without a dot is nvidia_pipeline_streams's: left alone.
// KEEP-LABEL: tt.func public @no_dot
// CHECK-LABEL: tt.func public @no_dot
// CHECK-NOT:     scf.if
// CHECK-NOT:     tt.num_stages
// REMARK: remark: nvidia_pipeline_dots: not applied: the loop has no dot (nvidia_pipeline_streams is the pass for those)
tt.func public @no_dot(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>, %lb: i32, %ub: i32) {
  %c256 = arith.constant 256 : i32
  %zero = arith.constant dense<0.0> : tensor<256xf32>
  %range = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
  %r = scf.for %i = %lb to %ub step %c256 iter_args(%acc = %zero) -> (tensor<256xf32>) : i32 {
    %s = tt.splat %i : i32 -> tensor<256xi32>
    %offs = arith.addi %s, %range : tensor<256xi32>
    %p = tt.addptr %xs, %offs : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
    %v = tt.load %p : tensor<256x!tt.ptr<f32>>
    %a = arith.addf %acc, %v : tensor<256xf32>
    scf.yield %a : tensor<256xf32>
  }
  %sum = "tt.reduce"(%r) <{axis = 0 : i32}> ({
  ^bb0(%l: f32, %m: f32):
    %t = arith.addf %l, %m : f32
    tt.reduce.return %t : f32
  }) : (tensor<256xf32>) -> f32
  tt.store %out, %sum : !tt.ptr<f32>
  tt.return
}

// -----

// A dot loop that stores: a prefetched load could miss the store.
// CHECK-LABEL: tt.func public @dot_loop_stores
// CHECK-NOT:     scf.if
// CHECK-NOT:     tt.num_stages
// REMARK: remark: nvidia_pipeline_dots: not applied: the loop may write memory (a prefetched load could miss the write)
tt.func public @dot_loop_stores(%a: tensor<64x32x!tt.ptr<f16>>, %b: !tt.ptr<f16>, %out: tensor<64x64x!tt.ptr<f32>>, %lb: i32, %ub: i32) {
  %c32 = arith.constant 32 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %q = tt.load %a : tensor<64x32x!tt.ptr<f16>>
  %bs = tt.splat %b : !tt.ptr<f16> -> tensor<32x64x!tt.ptr<f16>>
  %r = scf.for %i = %lb to %ub step %c32 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
    %s = tt.splat %i : i32 -> tensor<32x64xi32>
    %p = tt.addptr %bs, %s : tensor<32x64x!tt.ptr<f16>>, tensor<32x64xi32>
    %k = tt.load %p : tensor<32x64x!tt.ptr<f16>>
    %d = tt.dot %q, %k, %acc : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
    tt.store %out, %d : tensor<64x64x!tt.ptr<f32>>
    scf.yield %d : tensor<64x64xf32>
  }
  tt.return
}

// -----

// The author's tl.range(num_stages=...) wins.
// CHECK-LABEL: tt.func public @staged_dot_loop
// CHECK-NOT:     scf.if
// CHECK:         tt.num_stages = 1 : i32
// REMARK: remark: nvidia_pipeline_dots: not applied: the loop has tt.num_stages already (the author's choice wins)
tt.func public @staged_dot_loop(%a: tensor<64x32x!tt.ptr<f16>>, %b: !tt.ptr<f16>, %out: tensor<64x64x!tt.ptr<f32>>, %lb: i32, %ub: i32) {
  %c32 = arith.constant 32 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %q = tt.load %a : tensor<64x32x!tt.ptr<f16>>
  %bs = tt.splat %b : !tt.ptr<f16> -> tensor<32x64x!tt.ptr<f16>>
  %r = scf.for %i = %lb to %ub step %c32 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
    %s = tt.splat %i : i32 -> tensor<32x64xi32>
    %p = tt.addptr %bs, %s : tensor<32x64x!tt.ptr<f16>>, tensor<32x64xi32>
    %k = tt.load %p : tensor<32x64x!tt.ptr<f16>>
    %d = tt.dot %q, %k, %acc : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  } {tt.num_stages = 1 : i32}
  tt.store %out, %r : tensor<64x64x!tt.ptr<f32>>
  tt.return
}

// -----

// Prefetch buffers over max-prefetch-kb (128 KiB): (2 - 1) x 256x256 f16 =
// 128 KiB fits, 3 stages (256 KiB) do not.
// CHECK-LABEL: tt.func public @big_tiles
// S2:            scf.if
// S3-NOT:        scf.if
tt.func public @big_tiles(%a: tensor<64x256x!tt.ptr<f16>>, %b: !tt.ptr<f16>, %out: tensor<64x256x!tt.ptr<f32>>, %lb: i32, %ub: i32) {
  %c256 = arith.constant 256 : i32
  %zero = arith.constant dense<0.0> : tensor<64x256xf32>
  %q = tt.load %a : tensor<64x256x!tt.ptr<f16>>
  %bs = tt.splat %b : !tt.ptr<f16> -> tensor<256x256x!tt.ptr<f16>>
  %r = scf.for %i = %lb to %ub step %c256 iter_args(%acc = %zero) -> (tensor<64x256xf32>) : i32 {
    %s = tt.splat %i : i32 -> tensor<256x256xi32>
    %p = tt.addptr %bs, %s : tensor<256x256x!tt.ptr<f16>>, tensor<256x256xi32>
    %k = tt.load %p : tensor<256x256x!tt.ptr<f16>>
    %d = tt.dot %q, %k, %acc : tensor<64x256xf16> * tensor<256x256xf16> -> tensor<64x256xf32>
    scf.yield %d : tensor<64x256xf32>
  }
  tt.store %out, %r : tensor<64x256x!tt.ptr<f32>>
  tt.return
}
