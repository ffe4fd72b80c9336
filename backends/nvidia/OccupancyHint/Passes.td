//===- Passes.td - Minimum CTAs-per-SM occupancy hint -------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_NVIDIA_OCCUPANCY_HINT_PASSES
#define TRITON_EXT_NVIDIA_OCCUPANCY_HINT_PASSES

include "triton-ext/PassOptions.td"

def TritonExtOccupancyHint : Pass<"triton-ext-nvidia-occupancy-hint", "mlir::ModuleOp"> {
  let summary = "Set nvvm.minctasm (PTX .minnctapersm) on kernels at the LLVM stage";
  let description = [{
    Runs on the LLVM-dialect module at the end of Triton's `make_llir`. For
    each kernel `llvm.func` that carries `nvvm.reqntid` (Triton sets it, so
    ptxas honours `.minnctapersm`) and no `nvvm.minctasm` yet, sets
    `nvvm.minctasm = <min-ctas-per-sm> : i32`. ptxas then caps registers per
    thread so that that many CTAs fit on one SM. The hint is not set when it
    cannot be met (threads or shared memory per SM) or when it would leave
    fewer than `min-registers` registers per thread.

    Before: `llvm.func @k(...) attributes {nvvm.kernel = 1 : ui1, nvvm.reqntid = array<i32: 256>}`
    After:  `llvm.func @k(...) attributes {nvvm.kernel = 1 : ui1, nvvm.minctasm = 2 : i32, nvvm.reqntid = array<i32: 256>}`
  }];
  let options = [
    Option<"minCtasPerSm", "min-ctas-per-sm", "unsigned", /*default=*/"2",
           "CTAs per SM that ptxas must make room for (it caps registers per "
           "thread to 65536 / (threads * this)).">,
    Option<"minRegisters", "min-registers", "unsigned", /*default=*/"64",
           "Leave the kernel alone when the hint would allow fewer 32-bit "
           "registers per thread than this (spilling costs more than occupancy "
           "gains).">,
    RemarksOption<"kernel the pass leaves without the hint, on its "
                  "llvm.func">,
  ];
}

#endif // TRITON_EXT_NVIDIA_OCCUPANCY_HINT_PASSES
