// RUN: %opt %s -split-input-file --pass nvidia_stream_eviction --no-debug-info | FileCheck %s
// RUN: %opt %s -split-input-file --pass 'nvidia_stream_eviction{only-with-gathers=false}' --no-debug-info | FileCheck %s --check-prefixes=CHECK,ALL
// Idempotence: a second run changes nothing.
// RUN: %opt %s -split-input-file --pass nvidia_stream_eviction,nvidia_stream_eviction --no-debug-info | FileCheck %s --check-prefixes=CHECK,DEFAULT
// RUN: %opt %s -split-input-file --pass nvidia_stream_eviction --no-debug-info | FileCheck %s --check-prefixes=CHECK,DEFAULT
// Why a load is not marked: with remarks=true, a remark on each such load (and,
// by default, on a kernel that does not gather).
// RUN: env MLIR_ENABLE_DIAGNOSTICS=remarks %opt %s -split-input-file --pass 'nvidia_stream_eviction{remarks=true}' --no-debug-info 2>&1 >/dev/null | FileCheck %s --check-prefixes=REMARK,REMARK-DEFAULT
// RUN: env MLIR_ENABLE_DIAGNOSTICS=remarks %opt %s -split-input-file --pass 'nvidia_stream_eviction{only-with-gathers=false remarks=true}' --no-debug-info 2>&1 >/dev/null | FileCheck %s --check-prefixes=REMARK,REMARK-ALL

// Elementwise gather: x and idx are streamed (pid * 1024 + arange, one load
// each); the table load's address depends on a loaded value and is untouched.
// CHECK-LABEL: tt.func public @gather
// CHECK:         tt.load %{{.*}} {cachePolicy = #tt.cache_policy<cache_modifier = none, eviction_policy = evict_first>}
// CHECK:         tt.load %{{.*}} {cachePolicy = #tt.cache_policy<cache_modifier = none, eviction_policy = evict_first>}
// CHECK:         %[[T:.*]] = tt.load %{{.*}}, %{{.*}} : tensor<1024x!tt.ptr<f32>>
// CHECK:         tt.store
tt.func public @gather(%x: !tt.ptr<f32>, %idx: !tt.ptr<i32>, %table: !tt.ptr<f32>, %out: !tt.ptr<f32>, %n: i32) {
  %c1024 = arith.constant 1024 : i32
  %pid = tt.get_program_id x : i32
  %start = arith.muli %pid, %c1024 : i32
  %range = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %s = tt.splat %start : i32 -> tensor<1024xi32>
  %offs = arith.addi %s, %range : tensor<1024xi32>
  %ns = tt.splat %n : i32 -> tensor<1024xi32>
  %m = arith.cmpi slt, %offs, %ns : tensor<1024xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
  %xp = tt.addptr %xs, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
  %xv = tt.load %xp, %m : tensor<1024x!tt.ptr<f32>>
  %is = tt.splat %idx : !tt.ptr<i32> -> tensor<1024x!tt.ptr<i32>>
  %ip = tt.addptr %is, %offs : tensor<1024x!tt.ptr<i32>>, tensor<1024xi32>
  %iv = tt.load %ip, %m : tensor<1024x!tt.ptr<i32>>
  %ts = tt.splat %table : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
  %tp = tt.addptr %ts, %iv : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
  // REMARK: stream-eviction.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: nvidia_stream_eviction: not applied: its address depends on a loaded value (a gather: its targets may repeat)
  %tv = tt.load %tp, %m : tensor<1024x!tt.ptr<f32>>
  %r = arith.mulf %xv, %tv : tensor<1024xf32>
  %os = tt.splat %out : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
  %op = tt.addptr %os, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
  tt.store %op, %r, %m : tensor<1024x!tt.ptr<f32>>
  tt.return
}

// -----

// The kernels below do not gather: by default nothing in them changes (a
// pure stream measured 6% slower with the hint). With only-with-gathers=false
// they show which loads count as streamed.
// A 2-D grid: the a-tile depends on pid x only, so every pid y program reads
// it too (shared, untouched); the c-tile depends on both (streamed); the bias
// load depends on no program id (read by all).
// CHECK-LABEL: tt.func public @two_axes
// CHECK:         tt.load %{{[^ ]*}} : tensor<64x!tt.ptr<f32>>
// ALL-NEXT:      tt.load %{{.*}} {cachePolicy = #tt.cache_policy<cache_modifier = none, eviction_policy = evict_first>}
// DEFAULT-NEXT:  tt.load %{{[^ ]*}} : tensor<64x!tt.ptr<f32>>
// CHECK-NEXT:    tt.load %{{[^ ]*}} : tensor<64x!tt.ptr<f32>>
// REMARK-DEFAULT: stream-eviction.mlir:[[@LINE+1]]:1: remark: nvidia_stream_eviction: not applied: the kernel does not gather (no load's address depends on a loaded value), so its streams are not marked (only-with-gathers)
tt.func public @two_axes(%a: !tt.ptr<f32>, %c: !tt.ptr<f32>, %bias: !tt.ptr<f32>, %ld: i32) {
  %px = tt.get_program_id x : i32
  %py = tt.get_program_id y : i32
  %range = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %row = arith.muli %px, %ld : i32
  %rs = tt.splat %row : i32 -> tensor<64xi32>
  %aoffs = arith.addi %rs, %range : tensor<64xi32>
  %coln = arith.muli %py, %ld : i32
  %both = arith.addi %row, %coln : i32
  %bs = tt.splat %both : i32 -> tensor<64xi32>
  %coffs = arith.addi %bs, %range : tensor<64xi32>
  %as = tt.splat %a : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %ap = tt.addptr %as, %aoffs : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  %cs = tt.splat %c : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %cp = tt.addptr %cs, %coffs : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  %bsp = tt.splat %bias : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %bp = tt.addptr %bsp, %range : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  // REMARK-ALL: stream-eviction.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: nvidia_stream_eviction: not applied: its offset does not depend on every program id the kernel reads (several programs read the same data)
  %av = tt.load %ap : tensor<64x!tt.ptr<f32>>
  %cv = tt.load %cp : tensor<64x!tt.ptr<f32>>
  // REMARK-ALL: stream-eviction.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: nvidia_stream_eviction: not applied: its offset does not depend on every program id the kernel reads (several programs read the same data)
  %bv = tt.load %bp : tensor<64x!tt.ptr<f32>>
  %s1 = arith.addf %av, %cv : tensor<64xf32>
  %s2 = arith.addf %s1, %bv : tensor<64xf32>
  tt.store %cp, %s2 : tensor<64x!tt.ptr<f32>>
  tt.return
}

// -----

// Loops: the row loop's load advances with the induction variable
// (streamed); a second pass over the same row reads it again (two loads from
// %x: neither is marked); a loop-carried pointer is not analysed; a load in a
// loop whose address ignores the induction variable is re-read every
// iteration.
// CHECK-LABEL: tt.func public @loops
// CHECK:         scf.for
// ALL:             tt.load %{{.*}} {cachePolicy = #tt.cache_policy<cache_modifier = none, eviction_policy = evict_first>}
// DEFAULT:         tt.load %{{[^ ]*}} : tensor<128x!tt.ptr<f32>>
// CHECK:         scf.for
// CHECK:           tt.load %{{[^ ]*}} : tensor<128x!tt.ptr<f32>>
// CHECK:           tt.load %{{[^ ]*}} : tensor<128x!tt.ptr<f32>>
// CHECK:         scf.for
// CHECK:           tt.load %{{[^ ]*}} : tensor<128x!tt.ptr<f32>>
// CHECK:         scf.for
// CHECK:           tt.load %{{[^ ]*}} : tensor<128x!tt.ptr<f32>>
// CHECK:         tt.return
// REMARK-DEFAULT: stream-eviction.mlir:[[@LINE+1]]:1: remark: nvidia_stream_eviction: not applied: the kernel does not gather (no load's address depends on a loaded value), so its streams are not marked (only-with-gathers)
tt.func public @loops(%y: !tt.ptr<f32>, %x: !tt.ptr<f32>, %z: !tt.ptr<f32>, %w: !tt.ptr<f32>, %stride: i32, %ncols: i32) -> tensor<128xf32> {
  %c0 = arith.constant 0 : i32
  %c128 = arith.constant 128 : i32
  %zero = arith.constant dense<0.0> : tensor<128xf32>
  %pid = tt.get_program_id x : i32
  %row = arith.muli %pid, %stride : i32
  %range = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %ys = tt.splat %y : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %yrow = tt.addptr %ys, %range : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %s0 = scf.for %k = %c0 to %ncols step %c128 iter_args(%acc = %zero) -> (tensor<128xf32>) : i32 {
    %base = arith.addi %row, %k : i32
    %bs = tt.splat %base : i32 -> tensor<128xi32>
    %offs = arith.addi %bs, %range : tensor<128xi32>
    %p = tt.addptr %ys, %offs : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    %v = tt.load %p : tensor<128x!tt.ptr<f32>>
    %a = arith.addf %acc, %v : tensor<128xf32>
    scf.yield %a : tensor<128xf32>
  }
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %s1 = scf.for %k = %c0 to %ncols step %c128 iter_args(%acc = %s0) -> (tensor<128xf32>) : i32 {
    %base = arith.addi %row, %k : i32
    %bs = tt.splat %base : i32 -> tensor<128xi32>
    %offs = arith.addi %bs, %range : tensor<128xi32>
    %p = tt.addptr %xs, %offs : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    // REMARK-ALL: stream-eviction.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: nvidia_stream_eviction: not applied: another load reads the same pointer argument (the data is read again)
    %v = tt.load %p : tensor<128x!tt.ptr<f32>>
    // REMARK-ALL: stream-eviction.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: nvidia_stream_eviction: not applied: another load reads the same pointer argument (the data is read again)
    %v2 = tt.load %p : tensor<128x!tt.ptr<f32>>
    %m = arith.mulf %v, %v2 : tensor<128xf32>
    %a = arith.addf %acc, %m : tensor<128xf32>
    scf.yield %a : tensor<128xf32>
  }
  %rs = tt.splat %row : i32 -> tensor<128xi32>
  %zs = tt.splat %z : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %z0 = tt.addptr %zs, %rs : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %s2:2 = scf.for %k = %c0 to %ncols step %c128 iter_args(%acc = %s1, %p = %z0) -> (tensor<128xf32>, tensor<128x!tt.ptr<f32>>) : i32 {
    // REMARK-ALL: stream-eviction.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: nvidia_stream_eviction: not applied: its address goes through a loop-carried value, a branch or loop result, an op with memory effects, or two pointer arguments
    %v = tt.load %p : tensor<128x!tt.ptr<f32>>
    %a = arith.addf %acc, %v : tensor<128xf32>
    %step = tt.splat %c128 : i32 -> tensor<128xi32>
    %next = tt.addptr %p, %step : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    scf.yield %a, %next : tensor<128xf32>, tensor<128x!tt.ptr<f32>>
  }
  %ws = tt.splat %w : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %wp = tt.addptr %ws, %rs : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %s3 = scf.for %k = %c0 to %ncols step %c128 iter_args(%acc = %s2#0) -> (tensor<128xf32>) : i32 {
    // REMARK-ALL: stream-eviction.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: nvidia_stream_eviction: not applied: its offset does not advance with every loop around it (the data is read again)
    %v = tt.load %wp : tensor<128x!tt.ptr<f32>>
    %a = arith.addf %acc, %v : tensor<128xf32>
    scf.yield %a : tensor<128xf32>
  }
  tt.return %s3 : tensor<128xf32>
}

// -----

// The author's policy wins and volatile loads are left alone, in a kernel
// that gathers (so the default run marks its other stream).
// CHECK-LABEL: tt.func public @author_policy
// CHECK:         tt.load %{{.*}} {cachePolicy = #tt.cache_policy<cache_modifier = none, eviction_policy = evict_last>}
// CHECK:         tt.load %{{.*}} {isVolatile = true}
// CHECK:         tt.load %{{.*}} {cachePolicy = #tt.cache_policy<cache_modifier = none, eviction_policy = evict_first>} : tensor<64x!tt.ptr<i32>>
// CHECK:         tt.load %{{[^ ]*}} : tensor<64x!tt.ptr<f32>>
tt.func public @author_policy(%x: !tt.ptr<f32>, %v: !tt.ptr<f32>, %idx: !tt.ptr<i32>, %table: !tt.ptr<f32>) -> tensor<64xf32> {
  %pid = tt.get_program_id x : i32
  %range = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %ps = tt.splat %pid : i32 -> tensor<64xi32>
  %offs = arith.addi %ps, %range : tensor<64xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %xp = tt.addptr %xs, %offs : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  // REMARK: stream-eviction.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: nvidia_stream_eviction: not applied: the load has a cache policy already (the author's choice wins)
  %a = tt.load %xp {cachePolicy = #tt.cache_policy<cache_modifier = none, eviction_policy = evict_last>} : tensor<64x!tt.ptr<f32>>
  %vs = tt.splat %v : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %vp = tt.addptr %vs, %offs : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  // REMARK: stream-eviction.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: nvidia_stream_eviction: not applied: the load is volatile
  %b = tt.load %vp {isVolatile = true} : tensor<64x!tt.ptr<f32>>
  %is = tt.splat %idx : !tt.ptr<i32> -> tensor<64x!tt.ptr<i32>>
  %ip = tt.addptr %is, %offs : tensor<64x!tt.ptr<i32>>, tensor<64xi32>
  %i = tt.load %ip : tensor<64x!tt.ptr<i32>>
  %ts = tt.splat %table : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %tp = tt.addptr %ts, %i : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  // REMARK: stream-eviction.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: nvidia_stream_eviction: not applied: its address depends on a loaded value (a gather: its targets may repeat)
  %t = tt.load %tp : tensor<64x!tt.ptr<f32>>
  %r = arith.addf %a, %b : tensor<64xf32>
  %r2 = arith.addf %r, %t : tensor<64xf32>
  tt.return %r2 : tensor<64xf32>
}
