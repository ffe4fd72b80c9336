//===- Passes.td - Unroll innermost dot loops -------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_UNROLL_DOT_LOOPS_PASSES
#define TRITON_EXT_UNROLL_DOT_LOOPS_PASSES

include "triton-ext/PassOptions.td"

def TritonExtUnrollDotLoops
    : Pass<"triton-ext-unroll-dot-loops", "mlir::ModuleOp"> {
  let summary = "Ask Triton's loop_unroll to unroll innermost dot loops, "
                "behind a bounds guard";
  let description = [{
    Triton unrolls an `scf.for` that carries `tt.loop_unroll_factor = F` (what
    `tl.range(..., loop_unroll_factor=F)` writes) in the last pass of
    `make_ttir`: a main loop running F copies of the body per iteration, then
    a remainder loop. This pass writes the attribute where the kernel's author
    did not, on every innermost signed `scf.for` that holds a dot and a load,
    carries no unroll factor and is not warp-specialized. With two copies of
    the body in flight, the software pipeliner and the scheduler overlap one
    k-block's loads with the other's dot (measured on the H100: 1.03-1.16x on
    7 of 27 third-party dot-loop kernels, slower on 8;
    benchmarks/results/loop-unroll-probe-h100.json).

    Triton's unroller computes the main loop's bound as
    `lb + (T - T mod F) * step` with `T = (ub - lb + step - 1) /u step`, an
    unsigned division: on a reversed range (`ub < lb`) `T` is huge and the
    remainder loop can run iterations the original never ran, and near the
    limits of the induction variable's type the sums wrap. The pass therefore
    versions the loop: the unrolled copy runs when `0 < step <= MAX / F` and
    `0 <= lb <= ub <= MAX - F * step`, where none of that arithmetic wraps;
    any other loop runs the original loop, marked `tt.loop_unroll_factor = 1`
    (decided, never unrolled).

    Before:

    ```mlir
    %r = scf.for %k = %lb to %ub step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
      %a = tt.load ...
      %d = tt.dot %a, %b, %acc ...
      scf.yield %d : tensor<128x128xf32>
    }
    ```

    After (factor 2):

    ```mlir
    %ok = ... 0 < 64 <= MAX / 2, 0 <= %lb <= %ub <= MAX - 2 * 64 ...
    %r = scf.if %ok -> (tensor<128x128xf32>) {
      %u = scf.for ... { ... } {tt.loop_unroll_factor = 2 : i32}
      scf.yield %u : tensor<128x128xf32>
    } else {
      %o = scf.for ... { ... } {tt.loop_unroll_factor = 1 : i32}
      scf.yield %o : tensor<128x128xf32>
    }
    ```
  }];
  let options = [
    RangeOption<"factor", "factor", "int", /*default=*/"2",
                "Copies of the loop body per iteration of the unrolled loop.",
                /*min=*/2, /*max=*/8>,
    RemarksOption<"dot loop the pass leaves alone, on the loop">,
  ];
  let dependentDialects = ["mlir::triton::TritonDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect"];
}

#endif // TRITON_EXT_UNROLL_DOT_LOOPS_PASSES
