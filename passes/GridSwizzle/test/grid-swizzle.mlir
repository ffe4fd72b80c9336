// RUN: %opt %s -split-input-file --pass grid_swizzle --no-debug-info | FileCheck %s --check-prefixes=CHECK,G8
// Idempotence: a second run changes nothing.
// RUN: %opt %s -split-input-file --pass grid_swizzle,grid_swizzle --no-debug-info | FileCheck %s --check-prefixes=CHECK,G8
// RUN: %opt %s -split-input-file --pass 'grid_swizzle{group-size=4}' --no-debug-info | FileCheck %s --check-prefixes=CHECK,G4
// Why a kernel is left alone: with remarks=true, one remark per decline on the function.
// RUN: env MLIR_ENABLE_DIAGNOSTICS=remarks %opt %s -split-input-file --pass 'grid_swizzle{remarks=true}' --no-debug-info 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// A naive 2-D GEMM tile: pid x picks the A rows, pid y the B columns. Every
// use of the program ids is replaced by the grouped coordinates, computed
// once at the top of the entry block, in i64 (a grid of 2^31 or more programs
// would wrap the i32 launch index) and truncated back to the kernel's i32.
// REMARK-NOT: remark:
// CHECK-LABEL: tt.func public @gemm
// CHECK-SAME:    attributes {triton_ext.grid_swizzled}
// CHECK-DAG:     %[[PX32:.*]] = tt.get_program_id x : i32
// CHECK-DAG:     %[[PX:.*]] = arith.extsi %[[PX32]] : i32 to i64
// CHECK-DAG:     %[[PY32:.*]] = tt.get_program_id y : i32
// CHECK-DAG:     %[[PY:.*]] = arith.extsi %[[PY32]] : i32 to i64
// CHECK-DAG:     %[[NX32:.*]] = tt.get_num_programs x : i32
// CHECK-DAG:     %[[NX:.*]] = arith.extsi %[[NX32]] : i32 to i64
// CHECK-DAG:     %[[NY32:.*]] = tt.get_num_programs y : i32
// CHECK-DAG:     %[[NY:.*]] = arith.extsi %[[NY32]] : i32 to i64
// G8-DAG:        %[[G:.*]] = arith.constant 8 : i64
// G4-DAG:        %[[G:.*]] = arith.constant 4 : i64
// CHECK:         %[[ROW:.*]] = arith.muli %[[PY]], %[[NX]] : i64
// CHECK-NEXT:    %[[L:.*]] = arith.addi %[[ROW]], %[[PX]] : i64
// CHECK-NEXT:    %[[GC:.*]] = arith.minsi %[[G]], %[[NX]] : i64
// CHECK-NEXT:    %[[PER:.*]] = arith.muli %[[GC]], %[[NY]] : i64
// CHECK-NEXT:    %[[GID:.*]] = arith.divsi %[[L]], %[[PER]] : i64
// CHECK-NEXT:    %[[FIRST:.*]] = arith.muli %[[GID]], %[[GC]] : i64
// CHECK-NEXT:    %[[LEFT:.*]] = arith.subi %[[NX]], %[[FIRST]] : i64
// CHECK-NEXT:    %[[GSZ:.*]] = arith.minsi %[[LEFT]], %[[GC]] : i64
// CHECK-NEXT:    %[[IN:.*]] = arith.remsi %[[L]], %[[PER]] : i64
// CHECK-NEXT:    %[[R:.*]] = arith.remsi %[[IN]], %[[GSZ]] : i64
// CHECK-NEXT:    %[[X64:.*]] = arith.addi %[[FIRST]], %[[R]] : i64
// CHECK-NEXT:    %[[NEWX:.*]] = arith.trunci %[[X64]] : i64 to i32
// CHECK-NEXT:    %[[Y64:.*]] = arith.divsi %[[IN]], %[[GSZ]] : i64
// CHECK-NEXT:    %[[NEWY:.*]] = arith.trunci %[[Y64]] : i64 to i32
// CHECK-NOT:     tt.get_program_id
// CHECK:         arith.muli %[[NEWX]], %{{.*}} : i32
// CHECK-NOT:     tt.get_program_id
// CHECK:         arith.muli %[[NEWY]], %{{.*}} : i32
// CHECK-NOT:     tt.get_program_id
// CHECK:         tt.dot
// CHECK:         tt.return
tt.func public @gemm(%a: !tt.ptr<f16>, %b: !tt.ptr<f16>, %c: !tt.ptr<f32>, %lda: i32, %ldb: i32) {
  %c32 = arith.constant 32 : i32
  %zero = arith.constant dense<0.000000e+00> : tensor<32x32xf32>
  %pm = tt.get_program_id x : i32
  %m0 = arith.muli %pm, %c32 : i32
  %pn = tt.get_program_id y : i32
  %n0 = arith.muli %pn, %c32 : i32
  %ar = arith.muli %m0, %lda : i32
  %ap = tt.addptr %a, %ar : !tt.ptr<f16>, i32
  %bp = tt.addptr %b, %n0 : !tt.ptr<f16>, i32
  %as = tt.splat %ap : !tt.ptr<f16> -> tensor<32x32x!tt.ptr<f16>>
  %bs = tt.splat %bp : !tt.ptr<f16> -> tensor<32x32x!tt.ptr<f16>>
  %av = tt.load %as : tensor<32x32x!tt.ptr<f16>>
  %bv = tt.load %bs : tensor<32x32x!tt.ptr<f16>>
  %d = tt.dot %av, %bv, %zero : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
  %cr = arith.addi %ar, %n0 : i32
  %cp = tt.addptr %c, %cr : !tt.ptr<f32>, i32
  %cs = tt.splat %cp : !tt.ptr<f32> -> tensor<32x32x!tt.ptr<f32>>
  tt.store %cs, %d : tensor<32x32x!tt.ptr<f32>>
  tt.return
}

// -----

// Program ids read twice (in the entry block and inside a loop) and axis z:
// both x reads and both y reads are replaced; z is left alone.
// CHECK-LABEL: tt.func public @repeated_reads
// CHECK-SAME:    attributes {triton_ext.grid_swizzled}
// CHECK:         tt.get_program_id x
// CHECK-NOT:     tt.get_program_id x
// CHECK:         arith.remsi
// CHECK-NEXT:    arith.remsi
// CHECK-NEXT:    arith.addi
// CHECK-NEXT:    %[[NEWX:.*]] = arith.trunci
// CHECK-NEXT:    arith.divsi
// CHECK-NEXT:    %[[NEWY:.*]] = arith.trunci
// CHECK-NOT:     tt.get_program_id x
// CHECK:         arith.addi %[[NEWX]], %[[PZ:.*]] : i32
// CHECK:         scf.for
// CHECK-NOT:       tt.get_program_id
// CHECK:           arith.addi %[[NEWY]], %{{.*}} : i32
// CHECK:           tt.dot
tt.func public @repeated_reads(%a: !tt.ptr<f16>, %c: !tt.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.000000e+00> : tensor<32x32xf32>
  %px = tt.get_program_id x : i32
  %pz = tt.get_program_id z : i32
  %base = arith.addi %px, %pz : i32
  %ap = tt.addptr %a, %base : !tt.ptr<f16>, i32
  %as = tt.splat %ap : !tt.ptr<f16> -> tensor<32x32x!tt.ptr<f16>>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<32x32xf32>) : i32 {
    %py = tt.get_program_id y : i32
    %off = arith.addi %py, %i : i32
    %v = tt.load %as : tensor<32x32x!tt.ptr<f16>>
    %q = tt.addptr %a, %off : !tt.ptr<f16>, i32
    %w = tt.load %q : !tt.ptr<f16>
    %ws = tt.splat %w : f16 -> tensor<32x32xf16>
    %d = tt.dot %v, %ws, %acc : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
    scf.yield %d : tensor<32x32xf32>
  }
  %cs = tt.splat %c : !tt.ptr<f32> -> tensor<32x32x!tt.ptr<f32>>
  tt.store %cs, %r : tensor<32x32x!tt.ptr<f32>>
  tt.return
}

// -----

// The kernels below are left alone: no num_programs read appears, the
// program ids stay where they were.

// 1-D grid (x only): it may group its programs itself.
// CHECK-LABEL: tt.func public @one_d(
// CHECK-NOT:     grid_swizzled
// CHECK-NOT:     tt.get_num_programs
// CHECK:         %[[P:.*]] = tt.get_program_id x : i32
// CHECK-NEXT:    tt.addptr %{{.*}}, %[[P]]
// REMARK: grid-swizzle.mlir:[[@LINE+1]]:1: remark: grid_swizzle: not applied: does not read both program ids x and y
tt.func public @one_d(%a: !tt.ptr<f16>, %c: !tt.ptr<f32>) {
  %zero = arith.constant dense<0.000000e+00> : tensor<32x32xf32>
  %px = tt.get_program_id x : i32
  %ap = tt.addptr %a, %px : !tt.ptr<f16>, i32
  %as = tt.splat %ap : !tt.ptr<f16> -> tensor<32x32x!tt.ptr<f16>>
  %v = tt.load %as : tensor<32x32x!tt.ptr<f16>>
  %d = tt.dot %v, %v, %zero : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
  %cs = tt.splat %c : !tt.ptr<f32> -> tensor<32x32x!tt.ptr<f32>>
  tt.store %cs, %d : tensor<32x32x!tt.ptr<f32>>
  tt.return
}

// -----

// 2-D elementwise kernel without a dot: neighbouring programs share nothing.
// CHECK-LABEL: tt.func public @no_dot(
// CHECK-NOT:     grid_swizzled
// CHECK-NOT:     tt.get_num_programs
// CHECK:         %[[PX:.*]] = tt.get_program_id x : i32
// CHECK-NEXT:    %[[PY:.*]] = tt.get_program_id y : i32
// CHECK-NEXT:    arith.addi %[[PX]], %[[PY]]
// REMARK: grid-swizzle.mlir:[[@LINE+1]]:1: remark: grid_swizzle: not applied: no dot
tt.func public @no_dot(%a: !tt.ptr<f32>) {
  %px = tt.get_program_id x : i32
  %py = tt.get_program_id y : i32
  %o = arith.addi %px, %py : i32
  %p = tt.addptr %a, %o : !tt.ptr<f32>, i32
  %v = tt.load %p : !tt.ptr<f32>
  %w = arith.addf %v, %v : f32
  tt.store %p, %w : !tt.ptr<f32>
  tt.return
}

// -----

// A dot kernel that takes a lock: the protocol may rely on launch order.
// CHECK-LABEL: tt.func public @atomic(
// CHECK-NOT:     grid_swizzled
// CHECK-NOT:     tt.get_num_programs
// CHECK:         %[[PX:.*]] = tt.get_program_id x : i32
// CHECK-NEXT:    %[[PY:.*]] = tt.get_program_id y : i32
// CHECK-NEXT:    arith.addi %[[PX]], %[[PY]]
// CHECK:         tt.atomic_cas
// REMARK: grid-swizzle.mlir:[[@LINE+1]]:1: remark: grid_swizzle: not applied: atomics (a cross-program protocol may rely on launch order)
tt.func public @atomic(%a: !tt.ptr<f16>, %c: !tt.ptr<f32>, %lock: !tt.ptr<i32>) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.000000e+00> : tensor<32x32xf32>
  %px = tt.get_program_id x : i32
  %py = tt.get_program_id y : i32
  %o = arith.addi %px, %py : i32
  %ap = tt.addptr %a, %o : !tt.ptr<f16>, i32
  %as = tt.splat %ap : !tt.ptr<f16> -> tensor<32x32x!tt.ptr<f16>>
  %v = tt.load %as : tensor<32x32x!tt.ptr<f16>>
  %d = tt.dot %v, %v, %zero : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
  %old = tt.atomic_cas acq_rel, gpu, %lock, %c0, %c1 : (!tt.ptr<i32>, i32, i32) -> i32
  %cs = tt.splat %c : !tt.ptr<f32> -> tensor<32x32x!tt.ptr<f32>>
  tt.store %cs, %d : tensor<32x32x!tt.ptr<f32>>
  tt.return
}

// -----

// A dot kernel with an atomic add (split-K style accumulation).
// CHECK-LABEL: tt.func public @atomic_add(
// CHECK-NOT:     grid_swizzled
// CHECK-NOT:     tt.get_num_programs
// CHECK:         tt.atomic_rmw fadd
// REMARK: grid-swizzle.mlir:[[@LINE+1]]:1: remark: grid_swizzle: not applied: atomics (a cross-program protocol may rely on launch order)
tt.func public @atomic_add(%a: !tt.ptr<f16>, %c: !tt.ptr<f32>) {
  %zero = arith.constant dense<0.000000e+00> : tensor<32x32xf32>
  %px = tt.get_program_id x : i32
  %py = tt.get_program_id y : i32
  %o = arith.addi %px, %py : i32
  %ap = tt.addptr %a, %o : !tt.ptr<f16>, i32
  %as = tt.splat %ap : !tt.ptr<f16> -> tensor<32x32x!tt.ptr<f16>>
  %v = tt.load %as : tensor<32x32x!tt.ptr<f16>>
  %d = tt.dot %v, %v, %zero : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
  %cs = tt.splat %c : !tt.ptr<f32> -> tensor<32x32x!tt.ptr<f32>>
  %r = tt.atomic_rmw fadd, relaxed, gpu, %cs, %d : (tensor<32x32x!tt.ptr<f32>>, tensor<32x32xf32>) -> tensor<32x32xf32>
  tt.return
}

// -----

// A kernel that reads the grid size may already map its programs itself
// (the tutorial's grouped GEMM on a 2-D grid, a persistent loop).
// CHECK-LABEL: tt.func public @reads_num_programs(
// CHECK-NOT:     grid_swizzled
// CHECK:         %[[PX:.*]] = tt.get_program_id x : i32
// CHECK-NEXT:    %[[PY:.*]] = tt.get_program_id y : i32
// CHECK-NEXT:    %[[NX:.*]] = tt.get_num_programs x : i32
// CHECK-NEXT:    arith.muli %[[PY]], %[[NX]]
// CHECK-NOT:     tt.get_num_programs
// REMARK: grid-swizzle.mlir:[[@LINE+1]]:1: remark: grid_swizzle: not applied: reads tt.get_num_programs (may map its programs itself)
tt.func public @reads_num_programs(%a: !tt.ptr<f16>, %c: !tt.ptr<f32>) {
  %zero = arith.constant dense<0.000000e+00> : tensor<32x32xf32>
  %px = tt.get_program_id x : i32
  %py = tt.get_program_id y : i32
  %nx = tt.get_num_programs x : i32
  %row = arith.muli %py, %nx : i32
  %o = arith.addi %row, %px : i32
  %ap = tt.addptr %a, %o : !tt.ptr<f16>, i32
  %as = tt.splat %ap : !tt.ptr<f16> -> tensor<32x32x!tt.ptr<f16>>
  %v = tt.load %as : tensor<32x32x!tt.ptr<f16>>
  %d = tt.dot %v, %v, %zero : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
  %cs = tt.splat %c : !tt.ptr<f32> -> tensor<32x32x!tt.ptr<f32>>
  tt.store %cs, %d : tensor<32x32x!tt.ptr<f32>>
  tt.return
}

// -----

// Already swizzled (marked by an earlier run): nothing is added.
// CHECK-LABEL: tt.func public @marked(
// CHECK-SAME:    attributes {triton_ext.grid_swizzled}
// CHECK-NOT:     tt.get_num_programs
// CHECK:         %[[PX:.*]] = tt.get_program_id x : i32
// CHECK-NEXT:    %[[PY:.*]] = tt.get_program_id y : i32
// CHECK-NEXT:    arith.addi %[[PX]], %[[PY]]
// REMARK: grid-swizzle.mlir:[[@LINE+1]]:1: remark: grid_swizzle: not applied: already swizzled
tt.func public @marked(%a: !tt.ptr<f16>, %c: !tt.ptr<f32>) attributes {triton_ext.grid_swizzled} {
  %zero = arith.constant dense<0.000000e+00> : tensor<32x32xf32>
  %px = tt.get_program_id x : i32
  %py = tt.get_program_id y : i32
  %o = arith.addi %px, %py : i32
  %ap = tt.addptr %a, %o : !tt.ptr<f16>, i32
  %as = tt.splat %ap : !tt.ptr<f16> -> tensor<32x32x!tt.ptr<f16>>
  %v = tt.load %as : tensor<32x32x!tt.ptr<f16>>
  %d = tt.dot %v, %v, %zero : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
  %cs = tt.splat %c : !tt.ptr<f32> -> tensor<32x32x!tt.ptr<f32>>
  tt.store %cs, %d : tensor<32x32x!tt.ptr<f32>>
  tt.return
}

// -----

// A non-public function is not a kernel (its caller's program ids would not
// change with it), and a kernel calling a function that may read the program
// ids is left alone too.
// CHECK-LABEL: tt.func private @helper(
// CHECK-NOT:     grid_swizzled
// CHECK-NOT:     tt.get_num_programs
// CHECK:         tt.get_program_id x
// CHECK-LABEL: tt.func public @calls(
// CHECK-NOT:     grid_swizzled
// CHECK-NOT:     tt.get_num_programs
// CHECK:         tt.call @helper
// REMARK: grid-swizzle.mlir:[[@LINE+1]]:1: remark: grid_swizzle: not applied: not a kernel
tt.func private @helper(%a: !tt.ptr<f16>) -> tensor<32x32xf32> attributes {noinline = true} {
  %zero = arith.constant dense<0.000000e+00> : tensor<32x32xf32>
  %px = tt.get_program_id x : i32
  %py = tt.get_program_id y : i32
  %o = arith.addi %px, %py : i32
  %ap = tt.addptr %a, %o : !tt.ptr<f16>, i32
  %as = tt.splat %ap : !tt.ptr<f16> -> tensor<32x32x!tt.ptr<f16>>
  %v = tt.load %as : tensor<32x32x!tt.ptr<f16>>
  %d = tt.dot %v, %v, %zero : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
  tt.return %d : tensor<32x32xf32>
}
// REMARK: grid-swizzle.mlir:[[@LINE+1]]:1: remark: grid_swizzle: not applied: calls a function (which may read the original program ids)
tt.func public @calls(%a: !tt.ptr<f16>, %c: !tt.ptr<f32>) {
  %zero = arith.constant dense<0.000000e+00> : tensor<32x32xf32>
  %px = tt.get_program_id x : i32
  %py = tt.get_program_id y : i32
  %o = arith.addi %px, %py : i32
  %ap = tt.addptr %a, %o : !tt.ptr<f16>, i32
  %as = tt.splat %ap : !tt.ptr<f16> -> tensor<32x32x!tt.ptr<f16>>
  %v = tt.load %as : tensor<32x32x!tt.ptr<f16>>
  %d = tt.dot %v, %v, %zero : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
  %e = tt.call @helper(%a) : (!tt.ptr<f16>) -> tensor<32x32xf32>
  %s = arith.addf %d, %e : tensor<32x32xf32>
  %cs = tt.splat %c : !tt.ptr<f32> -> tensor<32x32x!tt.ptr<f32>>
  tt.store %cs, %s : tensor<32x32x!tt.ptr<f32>>
  tt.return
}

// A group size below 2 is an error, not a silent default: refused before the pass runs (Passes.td
// declares group-size a MinOption of 2).
// RUN: not %opt %s -split-input-file --pass 'grid_swizzle{group-size=1}' 2>&1 | FileCheck %s --check-prefix=BAD1
// BAD1: option group-size: expected an int >= 2, found 1 (declared in GridSwizzle/Passes.td)
// RUN: not %opt %s -split-input-file --pass 'grid_swizzle{group-size=0}' 2>&1 | FileCheck %s --check-prefix=BAD0
// BAD0: option group-size: expected an int >= 2, found 0 (declared in GridSwizzle/Passes.td)
// RUN: not %opt %s -split-input-file --pass 'grid_swizzle{group-size=-3}' 2>&1 | FileCheck %s --check-prefix=BADNEG
// BADNEG: option group-size: expected an int >= 2, found -3 (declared in GridSwizzle/Passes.td)
