//===- Passes.td - L2-friendly program order for 2-D grids -*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_GRID_SWIZZLE_PASSES
#define TRITON_EXT_GRID_SWIZZLE_PASSES

include "triton-ext/PassOptions.td"

def TritonExtGridSwizzle : Pass<"triton-ext-grid-swizzle", "mlir::ModuleOp"> {
  let summary = "Visit the tiles of a naive 2-D dot grid in groups of rows, "
                "so programs running together share operand tiles in L2";
  let description = [{
    A GEMM written with `pid_m = program_id(0)`, `pid_n = program_id(1)` on a
    grid `(M / BM, N / BN)` is launched x fastest: the programs resident at
    one time cover a few columns of C and read all of A between them. This
    pass renumbers the programs of such kernels in the grouped order of the
    Triton matmul tutorial: with `L = py * nx + px` the launch index and `G`
    the group size, the programs walk `G` x-rows down one y-column, then the
    next column, so a wave reads `G` row blocks of A and a band of columns of
    B, which stay in L2.

    Before:

    ```mlir
    %px = tt.get_program_id x : i32
    %py = tt.get_program_id y : i32
    ```

    After (`G = 8`):

    ```mlir
    %px = tt.get_program_id x : i32
    %py = tt.get_program_id y : i32
    %nx = tt.get_num_programs x : i32
    %ny = tt.get_num_programs y : i32
    %l = py * nx + px
    %g = min(8, nx)                      // one group never exceeds the grid
    %per = g * ny
    %first = (l / per) * g
    %gsz = min(nx - first, g)
    %new_x = first + (l % per) % gsz     // replaces every use of %px
    %new_y = (l % per) / gsz             // replaces every use of %py
    ```

    The new coordinates are a permutation of `[0, nx) x [0, ny)`: every tile
    is still computed exactly once, by one program. Triton programs are
    independent and unordered, so only the order in which tiles are produced
    changes. The function gets the unit attribute `triton_ext.grid_swizzled`.

    Declines: kernels that do not read both program ids x and y, kernels
    without a dot (only dots share operand tiles between neighbours),
    kernels with atomics (a cross-program protocol such as a spin lock may
    depend on launch order), kernels that read `tt.get_num_programs` (they
    may map programs themselves) or call other functions (a callee reading
    the program ids would see the old ones), non-public functions and
    functions already swizzled. Axis z is left alone.
  }];
  let options = [
    MinOption<"groupSize", "group-size", "int", /*default=*/"8",
           "Program-id x rows walked per group (at least 2). Larger groups "
           "share more of B and less of A per wave.", /*min=*/2>,
    RemarksOption<"kernel the pass leaves alone, on the function">,
  ];
  let dependentDialects = ["mlir::triton::TritonDialect",
                           "mlir::arith::ArithDialect"];
}

#endif // TRITON_EXT_GRID_SWIZZLE_PASSES
