//===- Passes.td - Automatic programmatic dependent launch -*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_NVIDIA_AUTO_PDL_PASSES
#define TRITON_EXT_NVIDIA_AUTO_PDL_PASSES

include "triton-ext/PassOptions.td"

def TritonExtAutoPDL : Pass<"triton-ext-nvidia-auto-pdl", "mlir::ModuleOp"> {
  let summary = "Insert grid-dependency wait/launch-dependents so kernels can use programmatic dependent launch";
  let description = [{
    For every kernel (public `tt.func`) of a module that contains no
    `tt.grid_dependency_wait` / `tt.grid_dependency_launch_dependents` yet,
    inserts `tt.grid_dependency_wait` in the entry block right before the first
    operation that is not free of memory effects (so it follows the pure index
    computation and dominates every load, store, atomic and descriptor access),
    and `tt.grid_dependency_launch_dependents` after the last entry-block
    operation that may read memory (or right after the wait, or nowhere; see
    the option). It then marks the module with `triton_ext.launch_pdl = 1 : i32`,
    which the triton_ext loader turns into the `launch_pdl` launch metadata.

    Before:

    ```mlir
    tt.func public @k(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>) {
      %pid = tt.get_program_id x : i32
      %p = tt.addptr %x, %pid : !tt.ptr<f32>, i32
      %v = tt.load %p : !tt.ptr<f32>
      %q = tt.addptr %y, %pid : !tt.ptr<f32>, i32
      tt.store %q, %v : !tt.ptr<f32>
      tt.return
    }
    ```

    After:

    ```mlir
      %pid = tt.get_program_id x : i32
      %p = tt.addptr %x, %pid : !tt.ptr<f32>, i32
      tt.grid_dependency_wait
      %v = tt.load %p : !tt.ptr<f32>
      tt.grid_dependency_launch_dependents
      %q = tt.addptr %y, %pid : !tt.ptr<f32>, i32
      tt.store %q, %v : !tt.ptr<f32>
    ```

    Modules whose `ttg.target` names another backend or a CUDA arch below 90
    are left alone (at the ttir stage there is no such attribute; registry.yaml
    restricts the pass to cuda >= 90).
  }];
  let options = [
    EnumOption<"launchDependents", "launch-dependents",
               "::mlir::triton_ext::TriggerPlacement",
               /*default=*/"after-loads",
               "Where tt.grid_dependency_launch_dependents goes.",
               [EnumValue<"AfterLoads", "after-loads",
                          "after the last entry-block op that may read memory">,
                EnumValue<"AfterWait", "after-wait",
                          "right after the wait: the most overlap">,
                EnumValue<"None", "none", "no trigger">]>,
    RemarksOption<"module the pass leaves alone, on the module or on the "
                  "author's grid-dependency op">,
  ];
  let dependentDialects = ["mlir::triton::TritonDialect"];
}

#endif // TRITON_EXT_NVIDIA_AUTO_PDL_PASSES
