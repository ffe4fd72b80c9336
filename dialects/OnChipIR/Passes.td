//===- Passes.td - Lower on-chip placeholders ---------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_ONCHIP_PASSES
#define TRITON_EXT_ONCHIP_PASSES

include "mlir/Pass/PassBase.td"

def TritonExtOnChipLower : Pass<"triton-ext-onchip-lower", "mlir::ModuleOp"> {
  let summary = "Turn triton_ext_onchip carriers into TritonGPU / TritonNvidiaGPU ops";
  let description = [{
    Runs right after convert-triton-to-tritongpu, when every tensor has a
    register layout, and rewrites the ops that language/OnChip wrote at ttir:

    * `ttg.local_load %buf -> tensor<..>` (no layout yet) followed by
      `ttg.convert_layout` to the layout a user wanted: one `ttg.local_load`
      straight into that layout;
    * `tt.store (view "store" %buf), %v`: `ttg.local_store %v, %buf`;
    * `tt.store (view "copy" %buf), (tt.load %p, %m, %o)`:
      `ttg.async_copy_global_to_local %p, %buf mask %m other %o`;
    * `tt.dot (mma_operand %a), (mma_operand %b), %c`: `%c` converted to a
      Hopper MMA layout, `ttng.warp_group_dot %a, %b, %c {isAsync}`,
      `ttng.warp_group_dot_wait {pendings}`, converted back.

    A carrier used any other way (a view whose pointers are loaded, added
    to, or stored through with a mask) is reported as an error at the
    user's line, and the pass fails.
  }];
}

#endif // TRITON_EXT_ONCHIP_PASSES
