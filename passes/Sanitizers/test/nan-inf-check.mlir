// RUN: %opt %s --pass 'nan_inf_check{cta-vote=false print=first fast-path=peak}' --no-debug-info | FileCheck %s
// The count fast path of a single store in the entry block (fast-path=count; the default is reload): one
// two-operand reduction (count, first lane) right after the store, no branch there, the
// records before the return under count > 0.
// RUN: %opt %s --pass 'nan_inf_check{cta-vote=false fast-path=count}' --no-debug-info | FileCheck %s --check-prefix=COUNT
// RUN: %opt %s --pass 'nan_inf_check{cta-vote=false fast-path=count print=first}' --no-debug-info | FileCheck %s --check-prefix=FIRSTC
// RUN: not %opt %s --pass 'nan_inf_check{fast-path=max}' --no-debug-info 2>&1 | FileCheck %s --check-prefix=BADFAST
// BADFAST: --pass: pass nan_inf_check: option fast-path: expected one of count, peak, warp, reload, found 'max'
// RUN: %opt %s --pass 'nan_inf_check{cta-vote=false mode=abort}' --no-debug-info | FileCheck %s --check-prefix=ABORT
// RUN: %opt %s --pass 'nan_inf_check{cta-vote=false check-dots=false print=first fast-path=peak}' --no-debug-info | FileCheck %s --check-prefix=NODOTS
// RUN: %opt %s --pass 'nan_inf_check{cta-vote=false print=every fast-path=peak}' --no-debug-info | FileCheck %s --check-prefix=EVERY
// RUN: %opt %s --pass 'nan_inf_check{cta-vote=false print=none}' --no-debug-info | FileCheck %s --check-prefix=NONE
// The default is print=none (issue 18: a device printf call costs GEMM registers even never
// executed; the host prints from the records): no tt.print and no thread-id asm anywhere.
// RUN: %opt %s --pass 'nan_inf_check{cta-vote=false}' --no-debug-info | FileCheck %s --check-prefix=NONE
// RUN: %opt %s --pass 'nan_inf_check{cta-vote=false}' --no-debug-info | FileCheck %s --check-prefix=DEFAULT
// DEFAULT-NOT: tt.print
// DEFAULT-NOT: tt.elementwise_inline_asm
// RUN: not %opt %s --pass 'nan_inf_check{print=all}' --no-debug-info 2>&1 | FileCheck %s --check-prefix=BADPRINT
// BADPRINT: --pass: pass nan_inf_check: option print: expected one of none, first, every, found 'all'
// RUN: %opt %s --pass 'nan_inf_check{cta-vote=false print=every records=false}' --no-debug-info | FileCheck %s --check-prefix=NORECORDS
// RUN: not %opt %s --pass 'nan_inf_check{records=false print=first}' --no-debug-info 2>&1 | FileCheck %s --check-prefix=BADRECORDS
// BADRECORDS: print=first needs records=true (use print=every)
// Without records: per-program prints only, no module globals, no atomics.
// NORECORDS-NOT: triton_ext.sanitizer_sites
// One case: the module's site table over its kernels (store_f32, store_bf16_2d, ...), checked once against all of them.
// NORECORDS-NOT: llvm.mlir
// NORECORDS-LABEL: tt.func @store_f32
// NORECORDS:       scf.if
// NORECORDS:         "tt.reduce"
// NORECORDS:         tt.print "[triton-ext nan_inf_check] kernel=store_f32 site={{.*}} store non-finite="
// NORECORDS-NEXT:  {{^ *}}}
// NORECORDS-NOT:   tt.atomic_rmw

// A masked f32 store. Fast path: one NaN-propagating max reduction of |x|
// with masked-off lanes set to 0; its result is NaN or +Inf exactly when a
// lane under the mask is non-finite (`ueq +Inf`). Only then (a branch that is
// uniform over the program): count the lanes, find the first, update the
// site's record in the module's counters global with one atomic each (lanes,
// programs, INT64_MAX - first index) and print one line only from thread 0 of
// the program whose `programs` update saw zero. The site table is a module
// attribute and a constant global. Record mode: no assert; abort mode adds a
// scalar assert.
// CHECK:       module attributes {triton_ext.sanitizer_sites = [{{.*}}"nan_inf_check|store non-finite|128|store_f32|{{[^"]*}}nan-inf-check.mlir:[[STORE_LINE:[0-9]+]]", "nan_inf_check|store non-finite|512|store_bf16_2d|
// CHECK-DAG:   llvm.mlir.global external @triton_ext_sanitizer_counters(dense<0> : tensor<[[SLOTS:[0-9]+]]xi64>) {addr_space = 1 : i32, alignment = 8 : i64} : !llvm.array<[[SLOTS]] x i64>
// CHECK-DAG:   llvm.mlir.global external constant @triton_ext_sanitizer_sites("{{.*}}nan_inf_check|store non-finite|128|store_f32|{{.*}}\0A
// CHECK-LABEL: tt.func @store_f32
// CHECK:         %[[X:.*]] = tt.load
// CHECK-NEXT:    tt.store %{{.*}}, %[[X]], %[[M:[^ ]*]] :
// CHECK:         %[[INF:.*]] = arith.constant dense<0x7F800000> : tensor<128xf32>
// CHECK:         %[[ABS:.*]] = math.absf %[[X]] : tensor<128xf32>
// CHECK:         %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<128xf32>
// CHECK:         %[[MASKED:.*]] = arith.select %[[M]], %[[ABS]], %[[ZERO]] : tensor<128xi1>, tensor<128xf32>
// CHECK:         %[[PEAK:.*]] = "tt.reduce"(%[[MASKED]]) <{axis = 0 : i32}>
// CHECK:           arith.maximumf
// CHECK:         }) : (tensor<128xf32>) -> f32
// CHECK:         %[[SINF:.*]] = arith.constant 0x7F800000 : f32
// CHECK:         %[[FOUND:.*]] = arith.cmpf ueq, %[[PEAK]], %[[SINF]] : f32
// CHECK:         %[[REP:.*]]:2 = scf.if %[[FOUND]] -> (i32, i32) {
// CHECK-NEXT:      %[[BAD:.*]] = arith.cmpf ueq, %[[ABS]], %[[INF]] : tensor<128xf32>
// CHECK-NEXT:      %[[BADM:.*]] = arith.andi %[[BAD]], %[[M]] : tensor<128xi1>
// CHECK-NEXT:      %[[EXT:.*]] = arith.extui %[[BADM]] : tensor<128xi1> to tensor<128xi32>
// CHECK-NEXT:      %[[CNT:.*]] = "tt.reduce"(%[[EXT]]) <{axis = 0 : i32}>
// CHECK:             arith.addi
// CHECK:           }) : (tensor<128xi32>) -> i32
// CHECK:           %[[LANE:.*]] = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
// CHECK:           %[[PICK:.*]] = arith.select %[[BADM]], %[[LANE]], %{{.*}} : tensor<128xi1>, tensor<128xi32>
// CHECK:           %[[FIRST:.*]] = "tt.reduce"(%[[PICK]]) <{axis = 0 : i32}>
// CHECK:             arith.minsi
// CHECK-NOT:       tt.atomic_rmw
// CHECK-NOT:       tt.print
// CHECK:           scf.yield %[[CNT]], %[[FIRST]] : i32, i32
// CHECK-NEXT:    } else {
// CHECK:           scf.yield %{{.*}}, %{{.*}} : i32, i32
// CHECK-NEXT:    }
// CHECK-NOT:     tt.assert
// Only the tile's two scalars leave the reporting branch: the records and the
// one line come right before the return (issue 18: in place, the atomics and
// the vprintf call kept the tile's registers allocated).
// CHECK:         %[[ANY:.*]] = arith.cmpi sgt, %[[REP]]#0, %{{.*}} : i32
// CHECK:         scf.if %[[ANY]] {
// CHECK:           %[[CNT64:.*]] = arith.extsi %[[REP]]#0 : i32 to i64
// CHECK:           %[[G0:.*]] = llvm.mlir.addressof @triton_ext_sanitizer_counters : !llvm.ptr<1>
// CHECK:           %[[B0:.*]] = builtin.unrealized_conversion_cast %[[G0]] : !llvm.ptr<1> to !tt.ptr<i64>
// CHECK:           %[[P0:.*]] = tt.addptr %[[B0]], %{{.*}} : !tt.ptr<i64>, i32
// CHECK:           tt.atomic_rmw add, relaxed, gpu, %[[P0]], %[[CNT64]], %{{.*}} : (!tt.ptr<i64>, i64, i1) -> i64
// CHECK:           %[[OLD:.*]] = tt.atomic_rmw add, relaxed, gpu, %{{.*}}, %{{.*}}, %{{.*}} : (!tt.ptr<i64>, i64, i1) -> i64
// CHECK:           tt.get_program_id x
// CHECK:           arith.extsi %[[REP]]#1 : i32 to i64
// CHECK:           %[[ENC:.*]] = arith.subi %{{.*}}, %{{.*}} : i64
// CHECK:           tt.atomic_rmw max, relaxed, gpu, %{{.*}}, %[[ENC]], %{{.*}} : (!tt.ptr<i64>, i64, i1) -> i64
// CHECK:           %[[TID:.*]] = tt.elementwise_inline_asm "mov.u32 $0, %tid.x;"
// CHECK:           %[[FIRSTPROG:.*]] = arith.cmpi eq, %[[OLD]], %{{.*}} : i64
// CHECK:           %[[THREAD0:.*]] = arith.cmpi eq, %[[TID]], %{{.*}} : i32
// CHECK:           %[[PRINTS:.*]] = arith.andi %[[FIRSTPROG]], %[[THREAD0]] : i1
// CHECK:           scf.if %[[PRINTS]] {
// CHECK-NEXT:        tt.print "[triton-ext nan_inf_check] kernel=store_f32 site={{.*}}nan-inf-check.mlir:[[STORE_LINE]] store non-finite; first report of this site, lanes in this program=" {{.*}} : %[[REP]]#0 : i32
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    tt.return
// ABORT-LABEL: tt.func @store_f32
// ABORT-NOT:     tt.print
// ABORT:         %[[OK:.*]] = arith.xori %{{.*}}, %true
// ABORT-NEXT:    tt.assert %[[OK]], "[triton-ext nan_inf_check] kernel=store_f32 site={{.*}}nan-inf-check.mlir:{{[0-9]+}} store non-finite nonzero" : i1
// ABORT-NEXT:    tt.store
// EVERY-LABEL: tt.func @store_f32
// EVERY:         tt.store
// EVERY:         scf.if %{{.*}} {
// EVERY:             "tt.reduce"
// EVERY:           tt.print "[triton-ext nan_inf_check] kernel=store_f32 site={{.*}} store non-finite="
// EVERY-NOT:       tt.elementwise_inline_asm
// EVERY:           tt.atomic_rmw add
// EVERY:         tt.return
// COUNT-LABEL: tt.func @store_f32
// COUNT:         %[[X:.*]] = tt.load
// COUNT-NEXT:    tt.store %{{.*}}, %[[X]], %[[M:[^ ]*]] :
// COUNT:         %[[ABS:.*]] = math.absf %[[X]] : tensor<128xf32>
// COUNT-NEXT:    %[[BAD:.*]] = arith.cmpf ueq, %[[ABS]], %{{.*}} : tensor<128xf32>
// COUNT-NEXT:    %[[BADM:.*]] = arith.andi %[[BAD]], %[[M]] : tensor<128xi1>
// COUNT-NEXT:    %[[LANE:.*]] = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
// COUNT:         %[[EXT:.*]] = arith.extui %[[BADM]] : tensor<128xi1> to tensor<128xi32>
// COUNT-NEXT:    %[[PICK:.*]] = arith.select %[[BADM]], %[[LANE]], %{{.*}} : tensor<128xi1>, tensor<128xi32>
// COUNT-NEXT:    %[[RED:.*]]:2 = "tt.reduce"(%[[EXT]], %[[PICK]]) <{axis = 0 : i32}>
// COUNT:           arith.addi
// COUNT:           arith.minsi
// COUNT:         }) : (tensor<128xi32>, tensor<128xi32>) -> (i32, i32)
// COUNT-NOT:     scf.if
// COUNT-NOT:     tt.print
// COUNT:         %[[ANY:.*]] = arith.cmpi sgt, %[[RED]]#0, %{{.*}} : i32
// COUNT-NEXT:    scf.if %[[ANY]] {
// COUNT:           arith.extsi %[[RED]]#0 : i32 to i64
// COUNT:           tt.atomic_rmw add
// COUNT:           tt.atomic_rmw add
// COUNT:           arith.extsi %[[RED]]#1 : i32 to i64
// COUNT:           tt.atomic_rmw max
// COUNT-NOT:       tt.print
// COUNT:         }
// COUNT-NEXT:    tt.return
// COUNT-LABEL: tt.func @store_bf16_2d
// COUNT:         "tt.reduce"(%{{.*}}, %{{.*}}) <{axis = 0 : i32}>
// COUNT:         }) : (tensor<16x32xi32>, tensor<16x32xi32>) -> (tensor<32xi32>, tensor<32xi32>)
// COUNT:         "tt.reduce"(%{{.*}}, %{{.*}}) <{axis = 0 : i32}>
// COUNT:         }) : (tensor<32xi32>, tensor<32xi32>) -> (i32, i32)
// COUNT:         tt.atomic_rmw max
// NONE-LABEL:  tt.func @store_f32
// NONE-NOT:      tt.print
// NONE:          tt.store
// NONE:          tt.atomic_rmw add
// NONE-NOT:      tt.print
// NONE:          tt.return
tt.func @store_f32(%p: !tt.ptr<f32>, %n: i32) {
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %ns = tt.splat %n : i32 -> tensor<128xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<128xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %r : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %x = tt.load %pp, %m : tensor<128x!tt.ptr<f32>>
  tt.store %pp, %x, %m : tensor<128x!tt.ptr<f32>>
  tt.return
}

// A 2-D unmasked bf16 store: one reduction per dimension, no mask and.
// CHECK-LABEL: tt.func @store_bf16_2d
// CHECK:         tt.store
// CHECK:         math.absf %{{.*}} : tensor<16x32xbf16>
// CHECK:         arith.cmpf ueq
// CHECK-NOT:     arith.andi
// CHECK:         "tt.reduce"(%{{.*}}) <{axis = 0 : i32}>
// CHECK:         }) : (tensor<16x32xi32>) -> tensor<32xi32>
// CHECK:         "tt.reduce"(%{{.*}}) <{axis = 0 : i32}>
// CHECK:         }) : (tensor<32xi32>) -> i32
// CHECK:         tt.print "[triton-ext nan_inf_check] kernel=store_bf16_2d
tt.func @store_bf16_2d(%p: tensor<16x32x!tt.ptr<bf16>>, %x: tensor<16x32xbf16>) {
  tt.store %p, %x : tensor<16x32x!tt.ptr<bf16>>
  tt.return
}

// Integer stores are not checked.
// CHECK-LABEL: tt.func @store_i32_unchecked
// CHECK-NOT:     tt.print
// CHECK:         tt.store
tt.func @store_i32_unchecked(%p: tensor<128x!tt.ptr<i32>>, %x: tensor<128xi32>) {
  tt.store %p, %x : tensor<128x!tt.ptr<i32>>
  tt.return
}

// The loop-carried dot accumulator is checked once, after the loop; nothing
// is inserted into the loop body. (The ReLU can turn -Inf into 0, so the
// store check does not cover the dot.) With check-dots=false only the store
// is checked.
// CHECK-LABEL: tt.func @dot_loop_accumulator
// CHECK:         %[[ACC:.*]] = scf.for
// CHECK-NOT:       tt.print
// CHECK:           tt.dot
// CHECK-NOT:       tt.print
// CHECK:           scf.yield
// CHECK:         }
// CHECK:         tt.store
// CHECK:         math.absf %[[ACC]] : tensor<32x32xf32>
// CHECK:         tt.print "[triton-ext nan_inf_check] kernel=dot_loop_accumulator site={{.*}} dot non-finite; first report of this site, lanes in this program="
// CHECK:         tt.print "[triton-ext nan_inf_check] kernel=dot_loop_accumulator site={{.*}} store non-finite; first report of this site, lanes in this program="
// NODOTS-LABEL: tt.func @dot_loop_accumulator
// NODOTS-NOT:    dot non-finite
// NODOTS:        store non-finite
tt.func @dot_loop_accumulator(%a: tensor<32x32xf16>, %b: tensor<32x32xf16>, %p: tensor<32x32x!tt.ptr<f32>>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<32x32xf32>
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%c = %zero) -> (tensor<32x32xf32>) : i32 {
    %d = tt.dot %a, %b, %c : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
    scf.yield %d : tensor<32x32xf32>
  }
  %relu = arith.maxnumf %acc, %zero : tensor<32x32xf32>
  tt.store %p, %relu : tensor<32x32x!tt.ptr<f32>>
  tt.return
}
// The dot check is left out when every op between the dot and its stores
// keeps a non-finite value non-finite (scale, numerator of a division,
// truncation) and every store is checked: the store check counts every lane
// the dot check would.
// CHECK-LABEL: tt.func @dot_covered_by_store
// CHECK-NOT:     dot non-finite
// CHECK:         tt.store
// CHECK-NOT:     dot non-finite
// CHECK:         tt.print "[triton-ext nan_inf_check] kernel=dot_covered_by_store site={{.*}} store non-finite; first report of this site, lanes in this program="
// CHECK-NOT:     tt.print
tt.func @dot_covered_by_store(%a: tensor<32x32xf16>, %b: tensor<32x32xf16>, %p: tensor<32x32x!tt.ptr<f16>>, %l: tensor<32x32xf32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<32x32xf32>
  %two = arith.constant dense<2.0> : tensor<32x32xf32>
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%c = %zero) -> (tensor<32x32xf32>) : i32 {
    %d = tt.dot %a, %b, %c : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
    scf.yield %d : tensor<32x32xf32>
  }
  %s = arith.mulf %acc, %two : tensor<32x32xf32>
  %q = arith.divf %s, %l : tensor<32x32xf32>
  %h = arith.truncf %q : tensor<32x32xf32> to tensor<32x32xf16>
  tt.store %p, %h : tensor<32x32x!tt.ptr<f16>>
  tt.return
}
// Kept: the dot is the divisor (x / Inf = 0) and nothing else stores it.
// Covered although one store is not checked (fp8): the unmasked f32 store of
// the dot writes every lane the fp8 store writes, and its check counts it.
// CHECK-LABEL: tt.func @dot_divisor
// CHECK:         dot non-finite
// CHECK:         store non-finite
// CHECK-LABEL: tt.func @dot_to_fp8_store
// CHECK-NOT:     dot non-finite
// CHECK:         tt.store %{{.*}} : tensor<32x32x!tt.ptr<f32>>
// CHECK:         tt.store %{{.*}} : tensor<32x32x!tt.ptr<f8E5M2>>
// CHECK-NOT:     dot non-finite
// CHECK:         store non-finite
// CHECK-NOT:     tt.print
// Kept: the f32 store is masked, the fp8 store (not checked) writes lanes the
// mask turns off.
// CHECK-LABEL: tt.func @dot_to_fp8_store_masked
// CHECK:         tt.store %{{.*}} : tensor<32x32x!tt.ptr<f8E5M2>>
// CHECK:         dot non-finite
// CHECK:         store non-finite
// Issue 18, Liger's MoE up-projection: the accumulator is stored as it is
// (truncf) and through a path that can hide a NaN (the divisor of a
// sigmoid), both under the same mask: the direct store's check counts every
// lane the dot check would, so there is no dot check.
// CHECK-LABEL: tt.func @dot_covered_by_one_store
// CHECK-NOT:     dot non-finite
// CHECK-COUNT-2: store non-finite
// CHECK-NOT:     dot non-finite
// Kept: the same two stores under different masks.
// CHECK-LABEL: tt.func @dot_two_masks
// CHECK:         dot non-finite
tt.func @dot_divisor(%a: tensor<32x32xf16>, %b: tensor<32x32xf16>, %p: tensor<32x32x!tt.ptr<f32>>) {
  %zero = arith.constant dense<0.0> : tensor<32x32xf32>
  %one = arith.constant dense<1.0> : tensor<32x32xf32>
  %d = tt.dot %a, %b, %zero : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
  %r = arith.divf %one, %d : tensor<32x32xf32>
  tt.store %p, %r : tensor<32x32x!tt.ptr<f32>>
  tt.return
}
tt.func @dot_to_fp8_store(%a: tensor<32x32xf16>, %b: tensor<32x32xf16>, %p: tensor<32x32x!tt.ptr<f32>>, %q: tensor<32x32x!tt.ptr<f8E5M2>>) {
  %zero = arith.constant dense<0.0> : tensor<32x32xf32>
  %d = tt.dot %a, %b, %zero : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
  tt.store %p, %d : tensor<32x32x!tt.ptr<f32>>
  %e = tt.fp_to_fp %d, rounding = rtne : tensor<32x32xf32> -> tensor<32x32xf8E5M2>
  tt.store %q, %e : tensor<32x32x!tt.ptr<f8E5M2>>
  tt.return
}
tt.func @dot_to_fp8_store_masked(%a: tensor<32x32xf16>, %b: tensor<32x32xf16>, %p: tensor<32x32x!tt.ptr<f32>>, %q: tensor<32x32x!tt.ptr<f8E5M2>>, %m: tensor<32x32xi1>) {
  %zero = arith.constant dense<0.0> : tensor<32x32xf32>
  %d = tt.dot %a, %b, %zero : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
  tt.store %p, %d, %m : tensor<32x32x!tt.ptr<f32>>
  %e = tt.fp_to_fp %d, rounding = rtne : tensor<32x32xf32> -> tensor<32x32xf8E5M2>
  tt.store %q, %e : tensor<32x32x!tt.ptr<f8E5M2>>
  tt.return
}
tt.func @dot_covered_by_one_store(%a: tensor<32x32xf16>, %b: tensor<32x32xf16>, %p: tensor<32x32x!tt.ptr<f16>>, %q: tensor<32x32x!tt.ptr<f32>>, %m: tensor<32x32xi1>) {
  %zero = arith.constant dense<0.0> : tensor<32x32xf32>
  %one = arith.constant dense<1.0> : tensor<32x32xf32>
  %d = tt.dot %a, %b, %zero : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
  %h = arith.truncf %d : tensor<32x32xf32> to tensor<32x32xf16>
  tt.store %p, %h, %m : tensor<32x32x!tt.ptr<f16>>
  %s = arith.divf %one, %d : tensor<32x32xf32>
  tt.store %q, %s, %m : tensor<32x32x!tt.ptr<f32>>
  tt.return
}
tt.func @dot_two_masks(%a: tensor<32x32xf16>, %b: tensor<32x32xf16>, %p: tensor<32x32x!tt.ptr<f16>>, %q: tensor<32x32x!tt.ptr<f32>>, %m: tensor<32x32xi1>, %n: tensor<32x32xi1>) {
  %zero = arith.constant dense<0.0> : tensor<32x32xf32>
  %one = arith.constant dense<1.0> : tensor<32x32xf32>
  %d = tt.dot %a, %b, %zero : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
  %h = arith.truncf %d : tensor<32x32xf32> to tensor<32x32xf16>
  tt.store %p, %h, %m : tensor<32x32x!tt.ptr<f16>>
  %s = arith.divf %one, %d : tensor<32x32xf32>
  tt.store %q, %s, %n : tensor<32x32x!tt.ptr<f32>>
  tt.return
}

// A dot outside loops feeding a masked store through elementwise ops (a
// ReLU, which can hide -Inf): only the lanes under the store's mask are
// counted, right after the store (record mode).
// CHECK-LABEL: tt.func @dot_masked_store
// CHECK:         %[[D:.*]] = tt.dot
// CHECK-NOT:     tt.print
// CHECK:         %[[S:.*]] = arith.maxnumf %[[D]]
// CHECK:         tt.store %{{.*}}, %[[S]], %[[M:[^ ]*]] :
// CHECK:         math.absf %[[D]] : tensor<32x32xf32>
// CHECK:         arith.select %[[M]], %{{.*}}, %{{.*}} : tensor<32x32xi1>, tensor<32x32xf32>
// CHECK:         %[[BAD:.*]] = arith.cmpf ueq, %{{.*}}, %{{.*}} : tensor<32x32xf32>
// CHECK:         arith.andi %[[BAD]], %[[M]] : tensor<32x32xi1>
// CHECK:         tt.print "[triton-ext nan_inf_check] kernel=dot_masked_store site={{.*}} dot non-finite; first report of this site, lanes in this program="
// CHECK:         tt.print "[triton-ext nan_inf_check] kernel=dot_masked_store site={{.*}} store non-finite; first report of this site, lanes in this program="
tt.func @dot_masked_store(%a: tensor<32x32xf16>, %b: tensor<32x32xf16>, %p: tensor<32x32x!tt.ptr<f32>>, %m: tensor<32x32xi1>) {
  %zero = arith.constant dense<0.0> : tensor<32x32xf32>
  %d = tt.dot %a, %b, %zero : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
  %s = arith.maxnumf %d, %zero : tensor<32x32xf32>
  tt.store %p, %s, %m : tensor<32x32x!tt.ptr<f32>>
  tt.return
}

// A dot whose result reaches no store (only a reduction) is not checked: its
// lanes cannot be matched with written lanes, and the store of the sum is
// checked itself.
// CHECK-LABEL: tt.func @dot_to_reduce
// CHECK-NOT:     dot non-finite
// CHECK:         store non-finite
// NODOTS-LABEL: tt.func @dot_to_reduce
tt.func @dot_to_reduce(%a: tensor<32x32xf16>, %b: tensor<32x32xf16>, %p: tensor<32x!tt.ptr<f32>>) {
  %zero = arith.constant dense<0.0> : tensor<32x32xf32>
  %d = tt.dot %a, %b, %zero : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
  %r = "tt.reduce"(%d) <{axis = 0 : i32}> ({
  ^bb0(%x: f32, %y: f32):
    %t = arith.addf %x, %y : f32
    tt.reduce.return %t : f32
  }) : (tensor<32x32xf32>) -> tensor<32xf32>
  tt.store %p, %r : tensor<32x!tt.ptr<f32>>
  tt.return
}

// A bad mode is an error, not a silent default.
// CHECK-LABEL: tt.func @bad_mode
// RUN: not %opt %s --pass 'nan_inf_check{mode=loud}' 2>&1 | FileCheck %s --check-prefix=BADMODE
// BADMODE: --pass: pass nan_inf_check: option mode: expected one of record, abort, found 'loud'
tt.func @bad_mode() {
  tt.return
}

// Two stores of one tile type with only pure ops between them share one fast
// path (issue 18, "merge per tile"): their masked |value|s are combined with
// a NaN-propagating maximum and reduced once; only when that finds something
// does each store count its lanes and find its first; each site keeps its own
// record and line (before the return).
// CHECK-LABEL: tt.func @two_tiles
// CHECK:         tt.store %arg0
// CHECK:         arith.mulf
// CHECK:         tt.store %arg1
// CHECK:         %[[A:.*]] = math.absf %arg2
// CHECK:         %[[AM:.*]] = arith.select %arg3, %[[A]], %{{.*}}
// CHECK:         %[[B:.*]] = math.absf
// CHECK:         %[[BOTH:.*]] = arith.maximumf %[[AM]], %[[B]] : tensor<128xf32>
// CHECK:         "tt.reduce"(%[[BOTH]])
// CHECK-NOT:     "tt.reduce"
// CHECK:         scf.if %{{.*}} -> (i32, i32, i32, i32) {
// CHECK-COUNT-4:   "tt.reduce"
// CHECK:         } else {
// CHECK:         tt.print "[triton-ext nan_inf_check] kernel=two_tiles site={{.*}}nan-inf-check.mlir:[[@LINE+5]] store non-finite
// CHECK:         tt.print "[triton-ext nan_inf_check] kernel=two_tiles site={{.*}}nan-inf-check.mlir:[[@LINE+7]] store non-finite
// CHECK:         tt.return
tt.func @two_tiles(%p: tensor<128x!tt.ptr<f32>>, %q: tensor<128x!tt.ptr<f32>>, %x: tensor<128xf32>, %m: tensor<128xi1>) {
  %one = arith.constant dense<1.0> : tensor<128xf32>
  tt.store %p, %x, %m : tensor<128x!tt.ptr<f32>>
  %y = arith.mulf %x, %x : tensor<128xf32>
  %z = arith.addf %y, %one : tensor<128xf32>
  tt.store %q, %z : tensor<128x!tt.ptr<f32>>
  tt.return
}

// Not grouped: a load between the stores (the first value would stay live
// across it), or two tile types.
// CHECK-LABEL: tt.func @load_between
// CHECK:         tt.store
// CHECK:         "tt.reduce"
// CHECK:         tt.load
// CHECK:         tt.store
// CHECK:         "tt.reduce"
// CHECK-LABEL: tt.func @two_types
// CHECK:         tt.store
// CHECK:         "tt.reduce"
// CHECK:         tt.store
// CHECK:         "tt.reduce"
tt.func @load_between(%p: tensor<128x!tt.ptr<f32>>, %q: tensor<128x!tt.ptr<f32>>, %x: tensor<128xf32>) {
  tt.store %p, %x : tensor<128x!tt.ptr<f32>>
  %y = tt.load %q : tensor<128x!tt.ptr<f32>>
  tt.store %q, %y : tensor<128x!tt.ptr<f32>>
  tt.return
}
tt.func @two_types(%p: tensor<128x!tt.ptr<f32>>, %q: tensor<128x!tt.ptr<f16>>, %x: tensor<128xf32>) {
  tt.store %p, %x : tensor<128x!tt.ptr<f32>>
  %y = arith.truncf %x : tensor<128xf32> to tensor<128xf16>
  tt.store %q, %y : tensor<128x!tt.ptr<f16>>
  tt.return
}

// A store in a loop (count fast path, the default): the (count, first lane) reduction and the
// record update stay in the loop body, the update under count > 0 with only scalars in it; no
// branch holds the tile (the peak path's reporting branch recounts from |x| in the body).
// COUNT-LABEL: tt.func @store_in_loop
// COUNT:         scf.for
// COUNT:           tt.store
// COUNT:           %[[R:.*]]:2 = "tt.reduce"(%{{.*}}, %{{.*}}) <{axis = 0 : i32}>
// COUNT:           %[[ANY:.*]] = arith.cmpi sgt, %[[R]]#0, %{{.*}} : i32
// COUNT-NEXT:      scf.if %[[ANY]] {
// COUNT-NOT:         "tt.reduce"
// COUNT:             tt.atomic_rmw max
// COUNT:           } {triton_ext.sanitizer_records}
// COUNT-NEXT:    }
// COUNT-NEXT:    tt.return
tt.func @store_in_loop(%p: tensor<128x!tt.ptr<f32>>, %x: tensor<128xf32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  scf.for %i = %c0 to %n step %c1 : i32 {
    tt.store %p, %x : tensor<128x!tt.ptr<f32>>
  }
  tt.return
}

// A store after a loop with a dot (a GEMM's epilogue after its K loop), print=none: the
// records before the return are updated by atomics masked with count > 0, no branch. A branch
// there kept LLVM from sinking the epilogue's index arithmetic below the loop (torchao's int8
// GEMM: 125 registers without the check, 134 with the branch, 119 masked). Without a loop
// (@store_f32: scf.if above), after a loop without a dot (@store_after_plain_loop) and with
// print=first (its line needs the `programs` atomic's result) the branch stays.
// COUNT-LABEL: tt.func @store_after_loop
// COUNT:         scf.for
// COUNT:           tt.dot
// COUNT:         tt.store
// COUNT:         %[[R:.*]]:2 = "tt.reduce"(%{{.*}}, %{{.*}}) <{axis = 0 : i32}>
// COUNT:         %[[S:.*]]:2 = "tt.reduce"(%[[R]]#0, %[[R]]#1) <{axis = 0 : i32}>
// COUNT:         %[[ANY:.*]] = arith.cmpi sgt, %[[S]]#0, %{{.*}} : i32
// COUNT-NOT:     scf.if
// COUNT:         arith.extsi %[[S]]#0 : i32 to i64
// COUNT:         tt.atomic_rmw add, relaxed, gpu, %{{.*}}, %{{.*}}, %[[ANY]] :
// COUNT:         tt.atomic_rmw add, relaxed, gpu, %{{.*}}, %{{.*}}, %[[ANY]] :
// COUNT:         arith.extsi %[[S]]#1 : i32 to i64
// COUNT:         tt.atomic_rmw max, relaxed, gpu, %{{.*}}, %{{.*}}, %[[ANY]] :
// COUNT-NEXT:    tt.return
// FIRSTC-LABEL: tt.func @store_after_loop
// FIRSTC:         %[[R:.*]]:2 = "tt.reduce"
// FIRSTC:         %[[S:.*]]:2 = "tt.reduce"
// FIRSTC:         %[[ANY:.*]] = arith.cmpi sgt, %[[S]]#0, %{{.*}} : i32
// FIRSTC-NEXT:    scf.if %[[ANY]] {
// FIRSTC:           tt.atomic_rmw add, relaxed, gpu, %{{.*}}, %{{.*}}, %true
// FIRSTC:           tt.print
// FIRSTC:         tt.return
// COUNT-LABEL: tt.func @store_after_plain_loop
// COUNT:         scf.for
// COUNT:         tt.store
// COUNT:         %[[R:.*]]:2 = "tt.reduce"(%{{.*}}, %{{.*}}) <{axis = 0 : i32}>
// COUNT:         %[[ANY:.*]] = arith.cmpi sgt, %[[R]]#0, %{{.*}} : i32
// COUNT-NEXT:    scf.if %[[ANY]] {
// COUNT:           tt.atomic_rmw max, relaxed, gpu, %{{.*}}, %{{.*}}, %true
// COUNT:         tt.return
tt.func @store_after_loop(%p: tensor<16x16x!tt.ptr<f32>>, %a: tensor<16x16xf16>, %b: tensor<16x16xf16>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%c = %zero) -> (tensor<16x16xf32>) : i32 {
    %d = tt.dot %a, %b, %c : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %d : tensor<16x16xf32>
  }
  tt.store %p, %acc : tensor<16x16x!tt.ptr<f32>>
  tt.return
}
tt.func @store_after_plain_loop(%p: tensor<128x!tt.ptr<f32>>, %x: tensor<128xf32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (tensor<128xf32>) : i32 {
    %s = arith.addf %a, %x : tensor<128xf32>
    scf.yield %s : tensor<128xf32>
  }
  tt.store %p, %acc : tensor<128x!tt.ptr<f32>>
  tt.return
}
