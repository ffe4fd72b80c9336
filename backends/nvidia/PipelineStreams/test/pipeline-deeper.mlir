// RUN: %opt %s -split-input-file --pass 'nvidia_pipeline_deeper{kernel-num-stages=3},canonicalize,cse' --no-debug-info | FileCheck %s --check-prefixes=CHECK,S4,O3
// RUN: %opt %s -split-input-file --pass 'nvidia_pipeline_deeper{kernel-num-stages=3 extra-stages=2},canonicalize,cse' --no-debug-info | FileCheck %s --check-prefixes=CHECK,S5,O3
// The depth is capped at 8: 7 + 3 stages give 8.
// RUN: %opt %s -split-input-file --pass 'nvidia_pipeline_deeper{kernel-num-stages=7 extra-stages=3},canonicalize,cse' --no-debug-info | FileCheck %s --check-prefixes=CHECK,S8,O7
// Idempotence: the second run finds both copies decided (tt.num_stages) and changes nothing.
// RUN: %opt %s -split-input-file --pass 'nvidia_pipeline_deeper{kernel-num-stages=3},canonicalize,cse,nvidia_pipeline_deeper{kernel-num-stages=3},canonicalize,cse' --no-debug-info | FileCheck %s --check-prefixes=CHECK,S4,O3
// A kernel compiled with num_stages=1 (nvidia_pipeline_dots' kernels), with
// the deepest pipeline the pass writes (8), or with an unknown num_stages (0,
// the default): nothing changes.
// RUN: %opt %s -split-input-file --pass 'nvidia_pipeline_deeper{kernel-num-stages=1}' --no-debug-info | FileCheck %s --check-prefix=KEEP
// RUN: %opt %s -split-input-file --pass 'nvidia_pipeline_deeper{kernel-num-stages=8}' --no-debug-info | FileCheck %s --check-prefix=KEEP
// RUN: %opt %s -split-input-file --pass 'nvidia_pipeline_deeper' --no-debug-info | FileCheck %s --check-prefix=KEEP
// Why a loop (or the module) is left alone, with remarks=true.
// RUN: env MLIR_ENABLE_DIAGNOSTICS=remarks %opt %s -split-input-file --pass 'nvidia_pipeline_deeper{kernel-num-stages=3 remarks=true}' --no-debug-info 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: env MLIR_ENABLE_DIAGNOSTICS=remarks %opt %s -split-input-file --pass 'nvidia_pipeline_deeper{kernel-num-stages=3 extra-stages=2 remarks=true}' --no-debug-info 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK5
// RUN: env MLIR_ENABLE_DIAGNOSTICS=remarks %opt %s -split-input-file --pass 'nvidia_pipeline_deeper{kernel-num-stages=1 remarks=true}' --no-debug-info 2>&1 >/dev/null | FileCheck %s --check-prefix=UNPIPELINED
// RUN: env MLIR_ENABLE_DIAGNOSTICS=remarks %opt %s -split-input-file --pass 'nvidia_pipeline_deeper{kernel-num-stages=8 remarks=true}' --no-debug-info 2>&1 >/dev/null | FileCheck %s --check-prefix=DEEPEST
// RUN: env MLIR_ENABLE_DIAGNOSTICS=remarks %opt %s -split-input-file --pass 'nvidia_pipeline_deeper{remarks=true}' --no-debug-info 2>&1 >/dev/null | FileCheck %s --check-prefix=UNKNOWN

// UNPIPELINED: remark: nvidia_pipeline_deeper: not applied: the kernel is compiled with num_stages=1, so its dot loops are not pipelined at all (nvidia_pipeline_dots is the pass for those)
// DEEPEST: remark: nvidia_pipeline_deeper: not applied: the kernel is compiled with num_stages=8, the deepest pipeline (8) the pass writes
// UNKNOWN: remark: nvidia_pipeline_deeper: not applied: the kernel's num_stages is unknown (kernel-num-stages=0; the loader sets it from the compile options)

// The dot loop of a kernel compiled with num_stages=3 (or 7): a dot over K
// tiles loaded in the loop, nothing stored. Versioned: the pipelined copy
// gets num_stages + extra-stages (capped at 8), the original loop keeps the
// kernel's depth. The guard keeps both bounds where lb + k*step and
// ub - k*step (k <= the new depth) cannot wrap: MAX - 4 * 32 = 2147483519
// (5 stages: 2147483487, 8 stages: 2147483391).
// KEEP-LABEL: tt.func public @dot_loop
// KEEP-NOT:     scf.if
// KEEP-NOT:     tt.num_stages
// CHECK-LABEL: tt.func public @dot_loop
// S4-DAG:        %[[LIMIT:.*]] = arith.constant 2147483519 : i32
// S5-DAG:        %[[LIMIT:.*]] = arith.constant 2147483487 : i32
// S8-DAG:        %[[LIMIT:.*]] = arith.constant 2147483391 : i32
// CHECK:         %[[LB_OK:.*]] = arith.cmpi sge, %[[LB:.*]], %c0_i32
// CHECK:         %[[UB_OK:.*]] = arith.cmpi sge, %[[UB:.*]], %c0_i32
// CHECK:         arith.cmpi sle, %[[LB]], %[[LIMIT]]
// CHECK:         arith.cmpi sle, %[[UB]], %[[LIMIT]]
// CHECK:         %[[R:.*]] = scf.if %{{.*}} -> (tensor<64x64xf32>) {
// CHECK:           %[[P:.*]] = scf.for %{{.*}} = %[[LB]] to %[[UB]] step %c32_i32
// CHECK:             tt.load
// CHECK:             tt.dot
// S4:              } {tt.num_stages = 4 : i32}
// S5:              } {tt.num_stages = 5 : i32}
// S8:              } {tt.num_stages = 8 : i32}
// CHECK:           scf.yield %[[P]]
// CHECK:         } else {
// CHECK:           %[[O:.*]] = scf.for %{{.*}} = %[[LB]] to %[[UB]] step %c32_i32
// CHECK:             tt.dot
// O3:              } {tt.num_stages = 3 : i32}
// O7:              } {tt.num_stages = 7 : i32}
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

// A run-time step and i64 bounds: the whole guard stays. For depth N it is
// 0 < step <= MAX / N and both bounds in [0, MAX - N * step]; depth 4:
// MAX / 4 = 2305843009213693951 (5: 1844674407370955161, 8: 1152921504606846975).
// KEEP-LABEL: tt.func public @dot_loop_i64_step
// KEEP-NOT:     scf.if
// KEEP-NOT:     tt.num_stages
// CHECK-LABEL: tt.func public @dot_loop_i64_step
// CHECK-SAME:    %[[LB:[^:]*]]: i64, %[[UB:[^:]*]]: i64, %[[ST:[^:]*]]: i64)
// CHECK-DAG:     %[[MAX:.*]] = arith.constant 9223372036854775807 : i64
// S4-DAG:        %[[N:.*]] = arith.constant 4 : i64
// S5-DAG:        %[[N:.*]] = arith.constant 5 : i64
// S8-DAG:        %[[N:.*]] = arith.constant 8 : i64
// S4-DAG:        %[[STEP_LIMIT:.*]] = arith.constant 2305843009213693951 : i64
// S5-DAG:        %[[STEP_LIMIT:.*]] = arith.constant 1844674407370955161 : i64
// S8-DAG:        %[[STEP_LIMIT:.*]] = arith.constant 1152921504606846975 : i64
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK:         %[[STEPS:.*]] = arith.muli %[[ST]], %[[N]] : i64
// CHECK:         %[[LIMIT:.*]] = arith.subi %[[MAX]], %[[STEPS]] : i64
// CHECK:         arith.cmpi sgt, %[[ST]], %[[ZERO]] : i64
// CHECK:         arith.cmpi sle, %[[ST]], %[[STEP_LIMIT]] : i64
// CHECK:         arith.cmpi sge, %[[LB]], %[[ZERO]] : i64
// CHECK:         arith.cmpi sge, %[[UB]], %[[ZERO]] : i64
// CHECK:         arith.cmpi sle, %[[LB]], %[[LIMIT]] : i64
// CHECK:         arith.cmpi sle, %[[UB]], %[[LIMIT]] : i64
// CHECK:         scf.if
// CHECK:           scf.for %{{.*}} = %[[LB]] to %[[UB]] step %[[ST]]
// S4:              } {tt.num_stages = 4 : i32}
// S5:              } {tt.num_stages = 5 : i32}
// S8:              } {tt.num_stages = 8 : i32}
// CHECK:         } else {
// CHECK:           scf.for %{{.*}} = %[[LB]] to %[[UB]] step %[[ST]]
// O3:              } {tt.num_stages = 3 : i32}
// O7:              } {tt.num_stages = 7 : i32}
tt.func public @dot_loop_i64_step(%a: tensor<64x32x!tt.ptr<f16>>, %b: !tt.ptr<f16>, %out: tensor<64x64x!tt.ptr<f32>>, %lb: i64, %ub: i64, %st: i64) {
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %q = tt.load %a : tensor<64x32x!tt.ptr<f16>>
  %bs = tt.splat %b : !tt.ptr<f16> -> tensor<32x64x!tt.ptr<f16>>
  %r = scf.for %i = %lb to %ub step %st iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i64 {
    %s = tt.splat %i : i64 -> tensor<32x64xi64>
    %p = tt.addptr %bs, %s : tensor<32x64x!tt.ptr<f16>>, tensor<32x64xi64>
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
// KEEP-NOT:     scf.if
// KEEP-NOT:     tt.num_stages
// CHECK-LABEL: tt.func public @no_dot
// CHECK-NOT:     scf.if
// CHECK-NOT:     tt.num_stages
tt.func public @no_dot(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>, %lb: i32, %ub: i32) {
  %c256 = arith.constant 256 : i32
  %zero = arith.constant dense<0.0> : tensor<256xf32>
  %range = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
  // REMARK: [[@LINE+1]]:{{[0-9]+}}: remark: nvidia_pipeline_deeper: not applied: the loop has no dot (nvidia_pipeline_streams is the pass for those)
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
// KEEP-LABEL: tt.func public @dot_loop_stores
// KEEP-NOT:     scf.if
// KEEP-NOT:     tt.num_stages
// CHECK-LABEL: tt.func public @dot_loop_stores
// CHECK-NOT:     scf.if
// CHECK-NOT:     tt.num_stages
tt.func public @dot_loop_stores(%a: tensor<64x32x!tt.ptr<f16>>, %b: !tt.ptr<f16>, %out: tensor<64x64x!tt.ptr<f32>>, %lb: i32, %ub: i32) {
  %c32 = arith.constant 32 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %q = tt.load %a : tensor<64x32x!tt.ptr<f16>>
  %bs = tt.splat %b : !tt.ptr<f16> -> tensor<32x64x!tt.ptr<f16>>
  // REMARK: [[@LINE+1]]:{{[0-9]+}}: remark: nvidia_pipeline_deeper: not applied: the loop may write memory (a prefetched load could miss the write)
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

// The author's tl.range(num_stages=...) wins, whatever the kernel's num_stages.
// KEEP-LABEL: tt.func public @staged_dot_loop
// KEEP-NOT:     scf.if
// KEEP:         tt.num_stages = 2 : i32
// KEEP-NOT:     tt.num_stages
// CHECK-LABEL: tt.func public @staged_dot_loop
// CHECK-NOT:     scf.if
// CHECK:         tt.num_stages = 2 : i32
// CHECK-NOT:     tt.num_stages
tt.func public @staged_dot_loop(%a: tensor<64x32x!tt.ptr<f16>>, %b: !tt.ptr<f16>, %out: tensor<64x64x!tt.ptr<f32>>, %lb: i32, %ub: i32) {
  %c32 = arith.constant 32 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %q = tt.load %a : tensor<64x32x!tt.ptr<f16>>
  %bs = tt.splat %b : !tt.ptr<f16> -> tensor<32x64x!tt.ptr<f16>>
  // REMARK: [[@LINE+1]]:{{[0-9]+}}: remark: nvidia_pipeline_deeper: not applied: the loop has tt.num_stages already (the author's choice wins)
  %r = scf.for %i = %lb to %ub step %c32 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
    %s = tt.splat %i : i32 -> tensor<32x64xi32>
    %p = tt.addptr %bs, %s : tensor<32x64x!tt.ptr<f16>>, tensor<32x64xi32>
    %k = tt.load %p : tensor<32x64x!tt.ptr<f16>>
    %d = tt.dot %q, %k, %acc : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  } {tt.num_stages = 2 : i32}
  tt.store %out, %r : tensor<64x64x!tt.ptr<f32>>
  tt.return
}

// -----

// An unsigned compare of the bounds: the guard's signed reasoning does not hold.
// KEEP-LABEL: tt.func public @unsigned_dot_loop
// KEEP-NOT:     scf.if
// KEEP-NOT:     tt.num_stages
// CHECK-LABEL: tt.func public @unsigned_dot_loop
// CHECK-NOT:     scf.if
// CHECK-NOT:     tt.num_stages
tt.func public @unsigned_dot_loop(%a: tensor<64x32x!tt.ptr<f16>>, %b: !tt.ptr<f16>, %out: tensor<64x64x!tt.ptr<f32>>, %lb: i32, %ub: i32) {
  %c32 = arith.constant 32 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %q = tt.load %a : tensor<64x32x!tt.ptr<f16>>
  %bs = tt.splat %b : !tt.ptr<f16> -> tensor<32x64x!tt.ptr<f16>>
  // REMARK: [[@LINE+1]]:{{[0-9]+}}: remark: nvidia_pipeline_deeper: not applied: the loop compares its bounds unsigned
  %r = scf.for unsigned %i = %lb to %ub step %c32 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
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

// Prefetch buffers over max-prefetch-kb (160 KiB) at the new depth: the
// loop loads a 64x128 and a 128x128 f16 tile, 48 KiB per stage; 3 copies
// (depth 4) = 144 KiB fit, 4 copies (depth 5) = 192 KiB and 7 copies
// (depth 8) = 336 KiB do not.
// KEEP-LABEL: tt.func public @big_tiles
// KEEP-NOT:     scf.if
// KEEP-NOT:     tt.num_stages
// CHECK-LABEL: tt.func public @big_tiles
// S4:            scf.if
// S4:            tt.num_stages = 4 : i32
// S5-NOT:        scf.if
// S5-NOT:        tt.num_stages
// S8-NOT:        scf.if
// S8-NOT:        tt.num_stages
tt.func public @big_tiles(%a: !tt.ptr<f16>, %b: !tt.ptr<f16>, %out: tensor<64x128x!tt.ptr<f32>>, %lb: i32, %ub: i32) {
  %c128 = arith.constant 128 : i32
  %zero = arith.constant dense<0.0> : tensor<64x128xf32>
  %as = tt.splat %a : !tt.ptr<f16> -> tensor<64x128x!tt.ptr<f16>>
  %bs = tt.splat %b : !tt.ptr<f16> -> tensor<128x128x!tt.ptr<f16>>
  // REMARK5: [[@LINE+1]]:{{[0-9]+}}: remark: nvidia_pipeline_deeper: not applied: the prefetch buffers would take 192 KiB of shared memory (more than max-prefetch-kb=160)
  %r = scf.for %i = %lb to %ub step %c128 iter_args(%acc = %zero) -> (tensor<64x128xf32>) : i32 {
    %sa = tt.splat %i : i32 -> tensor<64x128xi32>
    %pa = tt.addptr %as, %sa : tensor<64x128x!tt.ptr<f16>>, tensor<64x128xi32>
    %q = tt.load %pa : tensor<64x128x!tt.ptr<f16>>
    %sb = tt.splat %i : i32 -> tensor<128x128xi32>
    %pb = tt.addptr %bs, %sb : tensor<128x128x!tt.ptr<f16>>, tensor<128x128xi32>
    %k = tt.load %pb : tensor<128x128x!tt.ptr<f16>>
    %d = tt.dot %q, %k, %acc : tensor<64x128xf16> * tensor<128x128xf16> -> tensor<64x128xf32>
    scf.yield %d : tensor<64x128xf32>
  }
  tt.store %out, %r : tensor<64x128x!tt.ptr<f32>>
  tt.return
}
