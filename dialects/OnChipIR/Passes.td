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

def TritonExtOnChipPrune : Pass<"triton-ext-onchip-prune", "mlir::ModuleOp"> {
  let summary = "Remove OnChip buffers nobody reads and barriers nobody waits on";
  let description = [{
    Runs right after onchip_lower. An allocation made by triton_ext_onchip
    `alloc` or `barriers` (marked `triton_ext_onchip.ring`) whose every use,
    through memdesc views, only writes it (`ttg.local_store`, a
    `ttg.async_copy_global_to_local` whose token is unused) or arms its
    barriers (`ttng.init_barrier`, `arrive_barrier`, `barrier_expect`,
    `inval_barrier`) is erased with those uses and views, freeing its shared
    memory. Legal because nothing can observe the contents: shared memory
    is private to the block, and a buffer is observed only by a read (a
    load, a wgmma operand) and an mbarrier only by a wait or by the TMA
    copy that completes on it; a buffer written by TMA is kept. Other
    allocations are never touched.
  }];
  let options = [
    Option<"warnUnused", "warn-unused", "bool", /*default=*/"false",
           "Emit a warning at each allocation removed (at the user's alloc "
           "or barriers line), to find dead code in a kernel; Triton prints "
           "warnings when MLIR_ENABLE_DIAGNOSTICS=warnings.">,
  ];
}

def TritonExtOnChipCheckExpect
    : Pass<"triton-ext-onchip-check-expect", "mlir::ModuleOp"> {
  let summary = "Check that expect announces the bytes its TMA copies bring";
  let description = [{
    Runs at the end of the ttir stage (after inlining and CSE). For each
    mbarrier phase the kernel shows in one block (expects on one barrier
    value, the TMA copies on it that follow, up to a wait on it or the end
    of the block, under one predicate), the bytes announced by
    `ttng.barrier_expect` must equal the bytes of the copies
    (`triton_ext_onchip.tma_copy` or `ttng.async_tma_copy_global_to_local`:
    the buffer's elements times the element size). Too few lets the phase
    complete while a copy is landing (a race), too many never completes it
    (a hang); either is an error at the user's expect, with a note at each
    copy, and the pass fails. Phases a nested region or a call could add to
    are not checked. The pass changes no IR.
  }];
}

#endif // TRITON_EXT_ONCHIP_PASSES
