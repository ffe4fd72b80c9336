// RUN: %opt %s -split-input-file --pass nvidia_pipeline_streams,canonicalize,cse --no-debug-info | FileCheck %s --check-prefixes=CHECK,S3
// RUN: %opt %s -split-input-file --pass 'nvidia_pipeline_streams{num-stages=4},canonicalize,cse' --no-debug-info | FileCheck %s --check-prefixes=CHECK,S4
// Idempotence: the second run finds both copies decided (tt.num_stages) and changes nothing.
// RUN: %opt %s -split-input-file --pass nvidia_pipeline_streams,canonicalize,cse,nvidia_pipeline_streams,canonicalize,cse --no-debug-info | FileCheck %s --check-prefixes=CHECK,S3
// Why a loop is left alone: with remarks=true, a remark on each such loop that loads.
// RUN: env MLIR_ENABLE_DIAGNOSTICS=remarks %opt %s -split-input-file --pass 'nvidia_pipeline_streams{remarks=true}' --no-debug-info 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// A read-only loop without a dot: versioned. The guard keeps step and both
// bounds where lb + k*step and ub - k*step (k <= num-stages) cannot wrap:
// MAX - 3 * 256 = 2147482879 (4 stages: 2147482623).
// CHECK-LABEL: tt.func public @row_sum
// S3-DAG:        %[[LIMIT:.*]] = arith.constant 2147482879 : i32
// S4-DAG:        %[[LIMIT:.*]] = arith.constant 2147482623 : i32
// CHECK:         %[[LB_OK:.*]] = arith.cmpi sge, %[[LB:.*]], %c0_i32
// CHECK:         %[[UB_OK:.*]] = arith.cmpi sge, %[[UB:.*]], %c0_i32
// CHECK:         arith.cmpi sle, %[[LB]], %[[LIMIT]]
// CHECK:         arith.cmpi sle, %[[UB]], %[[LIMIT]]
// CHECK:         %[[R:.*]] = scf.if %{{.*}} -> (tensor<256xf32>) {
// CHECK:           %[[P:.*]] = scf.for %{{.*}} = %[[LB]] to %[[UB]] step %c256_i32
// CHECK:             tt.load
// S3:              } {tt.num_stages = 3 : i32}
// S4:              } {tt.num_stages = 4 : i32}
// CHECK:           scf.yield %[[P]]
// CHECK:         } else {
// CHECK:           %[[O:.*]] = scf.for %{{.*}} = %[[LB]] to %[[UB]] step %c256_i32
// CHECK:             tt.load
// CHECK:           } {tt.num_stages = 1 : i32}
// CHECK:           scf.yield %[[O]]
// CHECK:         }
// CHECK:         "tt.reduce"(%[[R]])
// CHECK-NOT:     scf.for
tt.func public @row_sum(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>, %lb: i32, %ub: i32) {
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

// 64-bit bounds: the guard's limit is 2**63 - 1 - 3 * 8 (4 stages: - 4 * 8).
// CHECK-LABEL: tt.func public @wide_bounds
// S3:            arith.constant 9223372036854775783 : i64
// S4:            arith.constant 9223372036854775775 : i64
// CHECK:         scf.if
// S3:            {tt.num_stages = 3 : i32}
// S4:            {tt.num_stages = 4 : i32}
// CHECK:         {tt.num_stages = 1 : i32}
tt.func public @wide_bounds(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>, %lb: i64, %ub: i64) {
  %c8 = arith.constant 8 : i64
  %zero = arith.constant dense<0.0> : tensor<8xf32>
  %range = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
  %r = scf.for %i = %lb to %ub step %c8 iter_args(%acc = %zero) -> (tensor<8xf32>) : i64 {
    %v = tt.load %xs : tensor<8x!tt.ptr<f32>>
    %a = arith.addf %acc, %v : tensor<8xf32>
    scf.yield %a : tensor<8xf32>
  }
  %os = tt.splat %out : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
  tt.store %os, %r : tensor<8x!tt.ptr<f32>>
  tt.return
}

// -----

// A dynamic step: the guard also requires 0 < step <= MAX / 3 (4 stages: MAX / 4).
// CHECK-LABEL: tt.func public @dynamic_step
// S3-DAG:        arith.constant 715827882 : i32
// S4-DAG:        arith.constant 536870911 : i32
// CHECK:         arith.cmpi sgt, %[[STEP:[^,]*]], %c0_i32
// CHECK:         arith.cmpi sle, %[[STEP]]
// CHECK:         scf.if
tt.func public @dynamic_step(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>, %ub: i32, %step: i32) {
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<8xf32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
  %r = scf.for %i = %c0 to %ub step %step iter_args(%acc = %zero) -> (tensor<8xf32>) : i32 {
    %v = tt.load %xs : tensor<8x!tt.ptr<f32>>
    %a = arith.addf %acc, %v : tensor<8xf32>
    scf.yield %a : tensor<8xf32>
  }
  %os = tt.splat %out : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
  tt.store %os, %r : tensor<8x!tt.ptr<f32>>
  tt.return
}

// -----

// Loops the pass leaves alone.
// CHECK-LABEL: tt.func public @declines
// CHECK-NOT:     scf.if
// CHECK-NOT:     tt.num_stages = 3
// CHECK:         tt.return
tt.func public @declines(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>, %a: !tt.ptr<f16>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c8 = arith.constant 8 : i32
  %c1f = arith.constant 1.0 : f32
  %zero = arith.constant dense<0.0> : tensor<8xf32>
  %zero16 = arith.constant dense<0.0> : tensor<16x16xf32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
  %as = tt.splat %a : !tt.ptr<f16> -> tensor<16x16x!tt.ptr<f16>>
  // The loop stores: a prefetched load could miss the write.
  // REMARK: [[@LINE+1]]:{{[0-9]+}}: remark: nvidia_pipeline_streams: not applied: the loop may write memory (a prefetched load could miss the write)
  %r0 = scf.for %i = %c0 to %n step %c8 iter_args(%acc = %zero) -> (tensor<8xf32>) : i32 {
    %v = tt.load %xs : tensor<8x!tt.ptr<f32>>
    tt.store %xs, %acc : tensor<8x!tt.ptr<f32>>
    %s = arith.addf %acc, %v : tensor<8xf32>
    scf.yield %s : tensor<8xf32>
  }
  // An atomic is a write too.
  // REMARK: [[@LINE+1]]:{{[0-9]+}}: remark: nvidia_pipeline_streams: not applied: the loop may write memory (a prefetched load could miss the write)
  %r1 = scf.for %i = %c0 to %n step %c8 iter_args(%acc = %zero) -> (tensor<8xf32>) : i32 {
    %v = tt.load %xs : tensor<8x!tt.ptr<f32>>
    %old = tt.atomic_rmw fadd, relaxed, gpu, %y, %c1f : (!tt.ptr<f32>, f32) -> f32
    %s = arith.addf %acc, %v : tensor<8xf32>
    scf.yield %s : tensor<8xf32>
  }
  // A dot: Triton already pipelines the loop with the kernel's num_stages.
  // REMARK: [[@LINE+1]]:{{[0-9]+}}: remark: nvidia_pipeline_streams: not applied: the loop has a dot (Triton pipelines it with the kernel's num_stages)
  %r2 = scf.for %i = %c0 to %n step %c8 iter_args(%acc = %zero16) -> (tensor<16x16xf32>) : i32 {
    %t = tt.load %as : tensor<16x16x!tt.ptr<f16>>
    %d = tt.dot %t, %t, %acc : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %d : tensor<16x16xf32>
  }
  // The author's num_stages wins.
  // REMARK: [[@LINE+1]]:{{[0-9]+}}: remark: nvidia_pipeline_streams: not applied: the loop has tt.num_stages already (the author's choice wins)
  %r3 = scf.for %i = %c0 to %n step %c8 iter_args(%acc = %zero) -> (tensor<8xf32>) : i32 {
    %v = tt.load %xs : tensor<8x!tt.ptr<f32>>
    %s = arith.addf %acc, %v : tensor<8xf32>
    scf.yield %s : tensor<8xf32>
  } {tt.num_stages = 2 : i32}
  // A volatile load must happen when the program says.
  // REMARK: [[@LINE+1]]:{{[0-9]+}}: remark: nvidia_pipeline_streams: not applied: the loop has a volatile load
  %r4 = scf.for %i = %c0 to %n step %c8 iter_args(%acc = %zero) -> (tensor<8xf32>) : i32 {
    %v = tt.load %xs {isVolatile = true} : tensor<8x!tt.ptr<f32>>
    %s = arith.addf %acc, %v : tensor<8xf32>
    scf.yield %s : tensor<8xf32>
  }
  // Scalar loads only: nothing the pipeliner would prefetch.
  // REMARK: [[@LINE+1]]:{{[0-9]+}}: remark: nvidia_pipeline_streams: not applied: the loop body loads no tensor (nothing to prefetch)
  %r5 = scf.for %i = %c0 to %n step %c8 iter_args(%acc = %zero) -> (tensor<8xf32>) : i32 {
    %v = tt.load %y : !tt.ptr<f32>
    %vs = tt.splat %v : f32 -> tensor<8xf32>
    %s = arith.addf %acc, %vs : tensor<8xf32>
    scf.yield %s : tensor<8xf32>
  }
  // An unsigned compare of the bounds: the guard's signed reasoning does not hold.
  // REMARK: [[@LINE+1]]:{{[0-9]+}}: remark: nvidia_pipeline_streams: not applied: the loop compares its bounds unsigned
  %r6 = scf.for unsigned %i = %c0 to %n step %c8 iter_args(%acc = %zero) -> (tensor<8xf32>) : i32 {
    %v = tt.load %xs : tensor<8x!tt.ptr<f32>>
    %s = arith.addf %acc, %v : tensor<8xf32>
    scf.yield %s : tensor<8xf32>
  }
  // 8192 x 4 bytes x 2 buffers = 64 KiB of shared memory, over max-prefetch-kb=48.
  %big = tt.splat %x : !tt.ptr<f32> -> tensor<8192x!tt.ptr<f32>>
  %zbig = arith.constant dense<0.0> : tensor<8192xf32>
  // REMARK: [[@LINE+1]]:{{[0-9]+}}: remark: nvidia_pipeline_streams: not applied: the prefetch buffers would take 64 KiB of shared memory (more than max-prefetch-kb=48)
  %r8 = scf.for %i = %c0 to %n step %c8 iter_args(%acc = %zbig) -> (tensor<8192xf32>) : i32 {
    %v = tt.load %big : tensor<8192x!tt.ptr<f32>>
    %s = arith.addf %acc, %v : tensor<8192xf32>
    scf.yield %s : tensor<8192xf32>
  }
  tt.store %big, %r8 : tensor<8192x!tt.ptr<f32>>
  tt.store %xs, %r0 : tensor<8x!tt.ptr<f32>>
  tt.store %xs, %r1 : tensor<8x!tt.ptr<f32>>
  tt.store %xs, %r3 : tensor<8x!tt.ptr<f32>>
  tt.store %xs, %r4 : tensor<8x!tt.ptr<f32>>
  tt.store %xs, %r5 : tensor<8x!tt.ptr<f32>>
  tt.store %xs, %r6 : tensor<8x!tt.ptr<f32>>
  tt.return
}

// -----

// An outer loop is not pipelined; its inner loop is.
// CHECK-LABEL: tt.func public @nested
// CHECK:         scf.for %[[J:.*]] = %c0_i32 to %{{.*}} step %c1_i32
// CHECK:           scf.if
// CHECK:             scf.for
// CHECK:             } {tt.num_stages = {{3|4}} : i32}
// CHECK:           } else {
// CHECK:             } {tt.num_stages = 1 : i32}
// CHECK:         }
// CHECK-NOT:     tt.num_stages
// CHECK:         tt.return
tt.func public @nested(%x: !tt.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c8 = arith.constant 8 : i32
  %zero = arith.constant dense<0.0> : tensor<8xf32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
  // An outer loop is not pipelined .
  // REMARK: [[@LINE+1]]:{{[0-9]+}}: remark: nvidia_pipeline_streams: not applied: the loop is not innermost (the pipeliner skips outer loops)
  %r7 = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<8xf32>) : i32 {
    %v = tt.load %xs : tensor<8x!tt.ptr<f32>>
    %in = scf.for %i = %c0 to %n step %c8 iter_args(%b = %acc) -> (tensor<8xf32>) : i32 {
      %w = tt.load %xs : tensor<8x!tt.ptr<f32>>
      %s = arith.addf %b, %w : tensor<8xf32>
      scf.yield %s : tensor<8xf32>
    }
    %s2 = arith.addf %in, %v : tensor<8xf32>
    scf.yield %s2 : tensor<8xf32>
  }
  tt.store %xs, %r7 : tensor<8x!tt.ptr<f32>>
  tt.return
}
