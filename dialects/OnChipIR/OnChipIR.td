//===- OnChipIR.td - Placeholders for on-chip buffer traffic -*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
// The `triton_ext_onchip` dialect. At ttir, tensors have no layout, so an op
// that moves a tensor into shared memory cannot be a TritonGPU op yet, and an
// op of an unknown dialect must not *consume* a tensor either:
// convert-triton-to-tritongpu re-types every tensor and has no way back (its
// source materialization is unreachable). The ops below therefore only
// *produce* tensors, which the conversion accepts (it inserts a
// ttg.convert_layout in front of each converted user), and the tensor data
// flows through ordinary Triton ops (tt.store, tt.load, tt.dot) that the
// conversion knows. `onchip_lower` then recognises those carriers and
// replaces them by TritonGPU / TritonNvidiaGPU ops.
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_ONCHIP_TD
#define TRITON_EXT_ONCHIP_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/DialectBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def OnChip_Dialect : Dialect {
  let name = "triton_ext_onchip";
  let summary = "Placeholders for explicit on-chip buffers in Triton kernels (triton-ext)";
  let description = [{
    Views of shared-memory buffers (`!ttg.memdesc`) as tensors, so that
    stores into a buffer, asynchronous copies into it and warp-group dots
    reading it can be written with Triton's own tensor ops at ttir.
    `onchip_lower` removes every op of this dialect right after
    convert-triton-to-tritongpu.
  }];
  let cppNamespace = "::mlir::triton_ext::onchip";
}

class OnChip_Op<string mnemonic, list<Trait> traits = []>
    : Op<OnChip_Dialect, mnemonic, traits>;

def OnChip_ViewOp : OnChip_Op<"view", [Pure]> {
  let summary = "Pointers standing for the elements of a shared-memory buffer";
  let description = [{
    A tensor of pointers with the buffer's shape and element type, used only
    as the pointer operand of a `tt.store`. `purpose` says what that store
    means:

    * `"store"`: `tt.store %view, %value` writes `%value` into the buffer
      (becomes `ttg.local_store`);
    * `"copy"`: `tt.store %view, (tt.load %ptrs, %mask, %other)` starts an
      asynchronous global-to-shared copy (becomes
      `ttg.async_copy_global_to_local`).

    The pointers are never dereferenced; a view left after `onchip_lower` is
    an error.

    ```mlir
    %v = triton_ext_onchip.view %buf {purpose = "store"}
        : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64x!tt.ptr<f16>>
    ```
  }];
  let arguments = (ins AnyType:$buffer, StrAttr:$purpose);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$buffer attr-dict `:` type($buffer) `->` type($result)";
  let hasVerifier = 1;
}

def OnChip_MmaOperandOp : OnChip_Op<"mma_operand", [Pure]> {
  let summary = "A shared-memory buffer as an operand of a warp-group dot";
  let description = [{
    The buffer's contents as a tensor, used only as operand A or B of a
    `tt.dot`; `onchip_lower` turns that dot into an asynchronous
    `ttng.warp_group_dot` reading the buffers directly, followed by
    `ttng.warp_group_dot_wait {pendings = pending}` (the `pending` of
    operand A). Nothing is loaded into registers.

    ```mlir
    %a = triton_ext_onchip.mma_operand %abuf {pending = 1 : i32}
        : !ttg.memdesc<128x64xf16, #shared, #smem, mutable> -> tensor<128x64xf16>
    ```
  }];
  let arguments = (ins AnyType:$buffer, I32Attr:$pending);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$buffer attr-dict `:` type($buffer) `->` type($result)";
  let hasVerifier = 1;
}

def OnChip_TmaCopyOp : OnChip_Op<"tma_copy"> {
  let summary = "A TMA copy whose descriptor has no shared layout yet";
  let description = [{
    Copies the block of tensor descriptor `desc` at `coords` into `buffer`,
    counting its bytes towards the current phase of mbarrier `barrier`.
    At ttir a descriptor's block type has no shared layout, which
    `ttng.async_tma_copy_global_to_local` requires to equal the buffer's;
    `onchip_lower` gives the descriptor the buffer's layout (on the kernel
    argument or the `tt.make_tensor_descriptor` that defines it) and emits
    that op. No memory effects are declared: the op is never removed or
    reordered.

    ```mlir
    triton_ext_onchip.tma_copy %desc[%c0, %off] -> %buf, %bar, %true
        : !tt.tensordesc<tensor<128x64xf16>>, !ttg.memdesc<1xi64, #bar, #smem, mutable>,
          !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
    ```
  }];
  let arguments = (ins AnyType:$desc, AnyType:$barrier, AnyType:$buffer, I1:$pred,
                       Variadic<I32>:$coords);
  let assemblyFormat = [{
    $desc `[` $coords `]` `->` $buffer `,` $barrier `,` $pred attr-dict `:`
    type($desc) `,` type($barrier) `,` type($buffer)
  }];
  let hasVerifier = 1;
}

def OnChip_TmaStoreOp : OnChip_Op<"tma_store"> {
  let summary = "A TMA store whose descriptor has no shared layout yet";
  let description = [{
    Starts copying `buffer` into the block of tensor descriptor `desc` at
    `coords` (global memory), asynchronously: the buffer may be overwritten
    only after `ttng.async_tma_store_wait` saw the store read it. Like
    `tma_copy`, it exists because at ttir the descriptor has no shared
    layout; `onchip_lower` gives the descriptor the buffer's layout and
    emits `ttng.fence_async_shared` (the buffer may have been written from
    registers) and `ttng.async_tma_copy_local_to_global`. No memory effects
    are declared: the op is never removed or reordered.

    ```mlir
    triton_ext_onchip.tma_store %desc[%m, %n] from %buf
        : !tt.tensordesc<tensor<128x128xf16>>, !ttg.memdesc<128x128xf16, #shared, #smem, mutable>
    ```
  }];
  let arguments = (ins AnyType:$desc, AnyType:$buffer, Variadic<I32>:$coords);
  let assemblyFormat = [{
    $desc `[` $coords `]` `from` $buffer attr-dict `:` type($desc) `,` type($buffer)
  }];
  let hasVerifier = 1;
}

def OnChip_DeclareBarriersOp : OnChip_Op<"declare_barriers"> {
  let summary = "Marks a ring of mbarriers made by triton_ext_onchip.barriers";
  let description = [{
    Computes nothing. Its verifier checks, where the kernel shows it, that
    every `ttng.wait_barrier` on these barriers can return: some
    `ttng.arrive_barrier` or `ttng.barrier_expect` must use the same barrier
    (the same constant index, or any index when one of them is dynamic). A
    `triton_ext_onchip.tma_copy` does not count: it only delivers bytes
    (complete_tx), and a phase completes after its arrivals. A barrier
    value passed anywhere else (a call, a loop, another op) may be armed
    there, and then nothing is reported. Verification runs when the front
    end finishes the kernel, so the error points at the user's `wait`.
    `onchip_lower` erases the op.

    ```mlir
    triton_ext_onchip.declare_barriers %bars : !ttg.memdesc<2x1xi64, #bar, #smem, mutable>
    ```
  }];
  let arguments = (ins AnyType:$ring);
  let assemblyFormat = "$ring attr-dict `:` type($ring)";
  let hasVerifier = 1;
}

#endif // TRITON_EXT_ONCHIP_TD
