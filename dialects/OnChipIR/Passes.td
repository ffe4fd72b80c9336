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

def TritonExtOnChipRestoreWaits
    : Pass<"triton-ext-onchip-restore-waits", "mlir::ModuleOp"> {
  let summary = "Give the program's own waits back after Triton's pipeliner";
  let description = [{
    In the OnChip model the kernel author synchronises explicitly:
    `wait_copies(n)` waits for all but `n` commit groups, and
    `mma(..., pending=p)` leaves `p` wgmma groups running. Triton's
    pipeliner (which runs on every loop) rewrites both: it recomputes each
    `ttg.async_wait` count from async tokens, which these waits do not carry,
    and inserts `ttng.warp_group_dot_wait {pendings = 0}` after a wgmma whose
    operands it cannot prove stable. Both serialise the pipeline the author
    wrote. This pass runs right after the pipeliner and

    * sets the count of every `ttg.async_wait` carrying
      `triton_ext_onchip.pending` back to that value;
    * removes a `ttng.warp_group_dot_wait` that onchip_lower did not create
      (no `triton_ext_onchip.mma`) when all its tensor inputs come from
      wgmma ops that onchip_lower created, forwarding its inputs.

    Legal under the model's contract: the program's own waits order every
    read of a buffer after the copy that filled it and every overwrite after
    the wgmma that read it (README.md, "who waits on what").
  }];
}

#endif // TRITON_EXT_ONCHIP_PASSES
