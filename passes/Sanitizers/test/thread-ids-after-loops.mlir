// RUN: %opt %s -split-input-file --pass 'thread_ids_after_loops{min-freed=0}' --no-debug-info | FileCheck %s
// RUN: env MLIR_ENABLE_DIAGNOSTICS=remarks %opt %s -split-input-file --pass 'thread_ids_after_loops{max-loop-state=0 min-freed=0 remarks=true}' --no-debug-info 2>&1 | FileCheck %s --check-prefix=CAP
// RUN: env MLIR_ENABLE_DIAGNOSTICS=remarks %opt %s -split-input-file --pass 'thread_ids_after_loops{min-freed=0 remarks=true}' --no-debug-info 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: env MLIR_ENABLE_DIAGNOSTICS=remarks %opt %s -split-input-file --pass 'thread_ids_after_loops{remarks=true}' --no-debug-info 2>&1 | FileCheck %s --check-prefix=FREED

// A kernel's epilogue indexes its lanes from the thread id, as its prologue
// did: the lane (tid & 31), a row (lane * 16 + 4) and a row mask (row < n).
// After the loop they are recomputed from a fresh, unmergeable tid read; the
// prologue's copies are no longer used after the loop. The scalar `n` is
// reused as it is.
// CHECK-LABEL: llvm.func @epilogue
// CHECK:         ^bb3:
// CHECK-NEXT:      %[[TID:.*]] = llvm.inline_asm has_side_effects "mov.u32 $0, %tid.x;", "=r"  : () -> i32
// CHECK-NEXT:      %[[LANE:.*]] = llvm.and %[[TID]], %{{.*}} : i32
// CHECK-NEXT:      %[[ROW0:.*]] = llvm.mul %[[LANE]], %{{.*}} : i32
// CHECK-NEXT:      %[[ROW:.*]] = llvm.add %[[ROW0]], %{{.*}} : i32
// CHECK-NEXT:      llvm.store %[[ROW]], %arg0 : i32, !llvm.ptr<1>
// CHECK-NEXT:      %[[MASK:.*]] = llvm.icmp "slt" %[[ROW]], %arg1 : i32
// CHECK-NEXT:      %[[Z:.*]] = llvm.zext %[[MASK]] : i1 to i32
// CHECK-NEXT:      llvm.store %[[Z]], %arg0 : i32, !llvm.ptr<1>
// CHECK-NEXT:      llvm.return
// A loop state above max-loop-state (here 0 registers) is declined.
// CAP: remark: thread_ids_after_loops: declined (loop state above max-loop-state): loop state=1 live across=3 from thread id=2 uses recomputed=0
// With the default min-freed (16 registers), 2 registers of thread-id
// expressions live across the loop are too few: declined.
// FREED: remark: thread_ids_after_loops: declined (fewer registers freed than min-freed): loop state=1 live across=3 from thread id=2 uses recomputed=0
// FREED-LABEL: llvm.func @epilogue
// FREED-NOT:     llvm.inline_asm
// CAP-LABEL: llvm.func @epilogue
// CAP-NOT:     llvm.inline_asm
// REMARK: remark: thread_ids_after_loops: loop state=1 live across=3 from thread id=2 uses recomputed=2
// REMARK: remark: thread_ids_after_loops: loop state=0 live across=0 from thread id=0 uses recomputed=0
// REMARK: remark: thread_ids_after_loops: loop state=1 live across=3 from thread id=1 uses recomputed=1
module {
  llvm.func @epilogue(%out: !llvm.ptr<1>, %n: i32, %trips: i32) {
    %c0 = llvm.mlir.constant(0 : i32) : i32
    %c1 = llvm.mlir.constant(1 : i32) : i32
    %c4 = llvm.mlir.constant(4 : i32) : i32
    %c16 = llvm.mlir.constant(16 : i32) : i32
    %c31 = llvm.mlir.constant(31 : i32) : i32
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %lane = llvm.and %tid, %c31 : i32
    %row0 = llvm.mul %lane, %c16 : i32
    %row = llvm.add %row0, %c4 : i32
    %mask = llvm.icmp "slt" %row, %n : i32
    llvm.store %row, %out : i32, !llvm.ptr<1>
    llvm.br ^bb1(%c0 : i32)
  ^bb1(%i: i32):
    %more = llvm.icmp "slt" %i, %trips : i32
    llvm.cond_br %more, ^bb2, ^bb3
  ^bb2:
    %next = llvm.add %i, %c1 : i32
    llvm.br ^bb1(%next : i32)
  ^bb3:
    llvm.store %row, %out : i32, !llvm.ptr<1>
    %z = llvm.zext %mask : i1 to i32
    llvm.store %z, %out : i32, !llvm.ptr<1>
    llvm.return
  }
}

// -----

// No loop: nothing to do.
// CHECK-LABEL: llvm.func @no_loop
// CHECK-NOT:     llvm.inline_asm
module {
  llvm.func @no_loop(%out: !llvm.ptr<1>) {
    %c31 = llvm.mlir.constant(31 : i32) : i32
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %lane = llvm.and %tid, %c31 : i32
    llvm.store %lane, %out : i32, !llvm.ptr<1>
    llvm.return
  }
}

// -----

// Two loops: the block between them is left alone (what it recomputed would
// be live across the second loop instead); only the block after the last
// loop recomputes. Values that do not derive from the thread id (the scalar
// `%p`) are not touched.
// CHECK-LABEL: llvm.func @two_loops
// CHECK:         ^bb3:
// CHECK-NEXT:      llvm.store %[[LANE0:.*]], %arg0
// CHECK:         ^bb6:
// CHECK-NEXT:      %[[TID:.*]] = llvm.inline_asm has_side_effects "mov.u32 $0, %tid.x;"
// CHECK-NEXT:      %[[LANE:.*]] = llvm.and %[[TID]]
// CHECK-NEXT:      llvm.store %[[LANE]], %arg0
// CHECK-NEXT:      llvm.store %arg1, %arg0
module {
  llvm.func @two_loops(%out: !llvm.ptr<1>, %p: i32, %trips: i32) {
    %c0 = llvm.mlir.constant(0 : i32) : i32
    %c1 = llvm.mlir.constant(1 : i32) : i32
    %c31 = llvm.mlir.constant(31 : i32) : i32
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %lane = llvm.and %tid, %c31 : i32
    llvm.br ^bb1(%c0 : i32)
  ^bb1(%i: i32):
    %more = llvm.icmp "slt" %i, %trips : i32
    llvm.cond_br %more, ^bb2, ^bb3
  ^bb2:
    %next = llvm.add %i, %c1 : i32
    llvm.br ^bb1(%next : i32)
  ^bb3:
    llvm.store %lane, %out : i32, !llvm.ptr<1>
    llvm.br ^bb4(%c0 : i32)
  ^bb4(%j: i32):
    %again = llvm.icmp "slt" %j, %trips : i32
    llvm.cond_br %again, ^bb5, ^bb6
  ^bb5:
    %jnext = llvm.add %j, %c1 : i32
    llvm.br ^bb4(%jnext : i32)
  ^bb6:
    llvm.store %lane, %out : i32, !llvm.ptr<1>
    llvm.store %p, %out : i32, !llvm.ptr<1>
    llvm.return
  }
}
