// RUN: %opt %s -split-input-file --pass 'nan_inf_check{cta-vote=false}' --no-debug-info | FileCheck %s
// RUN: %opt %s -split-input-file --pass 'nan_inf_check{cta-vote=false fast-path=count}' --no-debug-info | FileCheck %s --check-prefix=COUNT

// A flag group (issue 32, the layer norms): a row kernel stores the row's mean
// and rstd (scalars) and then the normalized row (8 elements per thread, the
// reload path). One test per store, or-ed, one branch that computes each
// store's exact (count, first lane): the scalars' from their kept values, the
// row's from the lanes it reloads right after its store. One records branch
// before the return holds the three sites' record updates, each under its
// own count. Before: a branch per scalar store, the row's reload branch and
// three record branches.
// CHECK-LABEL: tt.func @row_norm
// CHECK:         tt.store %{{.*}}, %[[MEAN:[^ ]*]] : !tt.ptr<f32>
// CHECK:         %[[AMEAN:.*]] = math.absf %[[MEAN]] : f32
// CHECK-NEXT:    %[[FMEAN:.*]] = arith.cmpf ueq, %[[AMEAN]]
// CHECK-NOT:     scf.if
// CHECK:         tt.store %{{.*}}, %[[RSTD:[^ ]*]] : !tt.ptr<f32>
// CHECK:         %[[ARSTD:.*]] = math.absf %[[RSTD]] : f32
// CHECK-NEXT:    %[[FRSTD:.*]] = arith.cmpf ueq, %[[ARSTD]]
// CHECK-NEXT:    %[[F2:.*]] = arith.ori %[[FMEAN]], %[[FRSTD]]
// CHECK-NOT:     scf.if
// CHECK:         tt.store %[[PY:[^,]*]], %[[Y:[^,]*]], %[[M:[^ ]*]] : tensor<2048x
// CHECK:         %[[AY:.*]] = math.absf %[[Y]]
// CHECK:         %[[SEL:.*]] = arith.select %[[M]], %[[AY]], %{{.*}}
// CHECK:         %[[PEAK:.*]] = "tt.reduce"(%[[SEL]])
// CHECK:           arith.maximumf
// CHECK:         %[[FY:.*]] = arith.cmpf ueq, %[[PEAK]]
// CHECK-NEXT:    %[[ANY:.*]] = arith.ori %[[F2]], %[[FY]]
// CHECK-NEXT:    %[[R:.*]]:6 = scf.if %[[ANY]] -> (i32, i32, i32, i32, i32, i32) {
// CHECK:           arith.cmpf ueq, %[[AMEAN]]
// CHECK:           arith.cmpf ueq, %[[ARSTD]]
// CHECK:           %[[RELOAD:.*]] = tt.load %[[PY]], %[[M]] {isVolatile = true}
// CHECK:           math.absf %[[RELOAD]]
// CHECK:           "tt.reduce"
// CHECK:           "tt.reduce"
// CHECK:           scf.yield
// CHECK:         } else {
// CHECK-NOT:     "tt.reduce"
// CHECK:         scf.if %[[ANY]] {
// CHECK:           arith.cmpi sgt, %[[R]]#0
// CHECK:           scf.if
// CHECK-COUNT-3:     tt.atomic_rmw
// CHECK:           } {triton_ext.sanitizer_records}
// CHECK:           arith.cmpi sgt, %[[R]]#2
// CHECK:           scf.if
// CHECK-COUNT-3:     tt.atomic_rmw
// CHECK:           } {triton_ext.sanitizer_records}
// CHECK:           arith.cmpi sgt, %[[R]]#4
// CHECK:           scf.if
// CHECK-COUNT-3:     tt.atomic_rmw
// CHECK:           } {triton_ext.sanitizer_records}
// CHECK-NEXT:    } {triton_ext.sanitizer_records}
// CHECK-NEXT:    tt.return
// With the count fast path every store keeps its own check.
// COUNT-LABEL: tt.func @row_norm
// COUNT:         tt.store
// COUNT:         scf.if
// COUNT:         tt.store
// COUNT:         scf.if
// COUNT:         tt.store
// COUNT:         "tt.reduce"

#blocked = #ttg.blocked<{sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func @row_norm(%pmean: !tt.ptr<f32>, %prstd: !tt.ptr<f32>, %py: tensor<2048x!tt.ptr<f16>, #blocked>, %mean: f32, %rstd: f32, %y: tensor<2048xf16, #blocked>, %m: tensor<2048xi1, #blocked>) {
    tt.store %pmean, %mean : !tt.ptr<f32> loc("ln.py":78:4)
    tt.store %prstd, %rstd : !tt.ptr<f32> loc("ln.py":79:4)
    tt.store %py, %y, %m : tensor<2048x!tt.ptr<f16>, #blocked> loc("ln.py":83:4)
    tt.return
  }
}

// -----

// fla's blocked layer norm: the 16 rows' mean and rstd (16 lanes, one per
// thread: each site on its own a two-operand count reduction), a reduction of
// the kernel's own between them, then the 16 x 512 row block (reload path).
// The two small tiles have one type: one maximum of both, one single-operand
// reduction; the row block its own maximum; one branch.
// CHECK-LABEL: tt.func @block_norm
// CHECK:         tt.store %{{.*}}, %[[MEAN:[^,]*]], %[[MM:[^ ]*]] : tensor<16x
// CHECK-NOT:     "tt.reduce"(%{{[^)]*}}, %{{[^)]*}})
// CHECK:         "tt.reduce"(%{{.*}}) <{axis = 1 : i32}>
// CHECK:         tt.store %{{.*}}, %[[RSTD:[^,]*]], %[[MM]] : tensor<16x
// CHECK:         tt.store %{{.*}}, %[[Y:[^,]*]], %{{[^ ]*}} : tensor<16x512x
// CHECK:         %[[A0:.*]] = math.absf %[[MEAN]]
// CHECK:         %[[S0:.*]] = arith.select %[[MM]], %[[A0]]
// CHECK:         %[[A1:.*]] = math.absf %[[RSTD]]
// CHECK:         %[[S1:.*]] = arith.select %[[MM]], %[[A1]]
// CHECK:         %[[BOTH:.*]] = arith.maximumf %[[S0]], %[[S1]] : tensor<16xf32
// CHECK:         math.absf %[[Y]]
// CHECK:         "tt.reduce"(%[[BOTH]])
// CHECK:         tt.reshape
// CHECK:         "tt.reduce"
// CHECK:         %[[ANY:.*]] = arith.ori
// CHECK:         scf.if %[[ANY]] -> (i32, i32, i32, i32, i32, i32) {
// CHECK:           "tt.reduce"(%{{.*}}, %{{.*}})
// CHECK:           "tt.reduce"(%{{.*}}, %{{.*}})
// CHECK:           tt.load {{.*}} {isVolatile = true}
// CHECK:         scf.if %[[ANY]] {
// CHECK-COUNT-9:   tt.atomic_rmw
// CHECK:           } {triton_ext.sanitizer_records}
// CHECK-NEXT:    } {triton_ext.sanitizer_records}
// CHECK-NEXT:    tt.return

#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [1, 32], warpsPerCTA = [4, 2], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func @block_norm(%pmean: tensor<16x!tt.ptr<f32>, #blocked1>, %prstd: tensor<16x!tt.ptr<f32>, #blocked1>, %py: tensor<16x512x!tt.ptr<bf16>, #blocked>, %mean: tensor<16xf32, #blocked1>, %x: tensor<16x512xf32, #blocked>, %y: tensor<16x512xbf16, #blocked>, %mm: tensor<16xi1, #blocked1>, %my: tensor<16x512xi1, #blocked>) {
    tt.store %pmean, %mean, %mm : tensor<16x!tt.ptr<f32>, #blocked1> loc("norm.py":90:4)
    %var = "tt.reduce"(%x) <{axis = 1 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      tt.reduce.return %s : f32
    }) : (tensor<16x512xf32, #blocked>) -> tensor<16xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
    %rstd = ttg.convert_layout %var : tensor<16xf32, #ttg.slice<{dim = 1, parent = #blocked}>> -> tensor<16xf32, #blocked1>
    tt.store %prstd, %rstd, %mm : tensor<16x!tt.ptr<f32>, #blocked1> loc("norm.py":99:4)
    tt.store %py, %y, %my : tensor<16x512x!tt.ptr<bf16>, #blocked> loc("norm.py":111:4)
    tt.return
  }
}

// -----

// A loop between two stores: no group (what the group keeps live would cross
// the loop); each store keeps its own check.
// CHECK-LABEL: tt.func @loop_between
// CHECK:         tt.store %{{.*}} : !tt.ptr<f32>
// CHECK:         math.absf
// CHECK:         arith.cmpf
// CHECK-NEXT:    scf.if
// CHECK:         scf.for
// CHECK:         tt.store

#blocked = #ttg.blocked<{sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func @loop_between(%pmean: !tt.ptr<f32>, %py: tensor<2048x!tt.ptr<f16>, #blocked>, %mean: f32, %y: tensor<2048xf16, #blocked>, %m: tensor<2048xi1, #blocked>, %n: i32) {
    tt.store %pmean, %mean : !tt.ptr<f32> loc("ln.py":78:4)
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %z = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %y) -> (tensor<2048xf16, #blocked>) : i32 {
      %d = arith.addf %acc, %acc : tensor<2048xf16, #blocked>
      scf.yield %d : tensor<2048xf16, #blocked>
    }
    tt.store %py, %z, %m : tensor<2048x!tt.ptr<f16>, #blocked> loc("ln.py":83:4)
    tt.return
  }
}
