//===- Passes.td - Device-side sanitizers for Triton kernels -*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_SANITIZERS_PASSES
#define TRITON_EXT_SANITIZERS_PASSES

include "triton-ext/PassOptions.td"

// The reporting options nan_inf_check and offset_overflow_check share (C++
// enums in SanitizerUtils.h).
class ReportModeOption
    : EnumOption<"mode", "mode", "::mlir::triton_ext::sanitizers::ReportMode",
                 /*default=*/"record", "What a finding does.",
                 [EnumValue<"Record", "record",
                            "record findings per site (device counters) and "
                            "let the kernel finish">,
                  EnumValue<"Abort", "abort",
                            "print, then tt.assert (the kernel aborts)">]>;

class PrintOption
    : EnumOption<"print", "print", "::mlir::triton_ext::sanitizers::PrintMode",
                 /*default=*/"none",
                 "Which programs print a device line for a site with findings. "
                 "A device printf call, even never executed, costs "
                 "GEMM/attention registers (H200, results/explore-h200.json: GEMM 0.881x vs 0.977x).",
                 [EnumValue<"None", "none",
                            "no device printf; the host prints one line per "
                            "site from the records (triton_ext.sanitizers."
                            "report()/check(), and at exit for findings nobody "
                            "collected)">,
                  EnumValue<"First", "first",
                            "also one device line per site, from the first "
                            "program that reports it (needs records=true)">,
                  EnumValue<"Every", "every",
                            "one device line per program with findings, from "
                            "every thread">]>;

class RecordsOption
    : Option<"records", "records", "bool", /*default=*/"true",
             "Keep per-site records (lanes, programs, first index) in a device "
             "global of the module, read by triton_ext.sanitizers.report(). "
             "false: no globals and no atomics (print=first needs them).">;

def TritonExtNanInfCheck : Pass<"triton-ext-nan-inf-check", "mlir::ModuleOp"> {
  let summary = "Check values written by stores (and dot results) for NaN/Inf";
  let description = [{
    Before every `tt.store` / `tt.descriptor_store` of f16/bf16/f32/f64
    values, counts the lanes (under the store's mask) that hold NaN or +-Inf,
    reduces the count over the program, and records a non-zero count in the
    site's device record (kernel name, source file:line of the store, lanes,
    programs, first index; read and printed by triton_ext.sanitizers). In
    `abort` mode a scalar `tt.assert` follows, so the kernel aborts with the
    same site. With `check-dots`, `tt.dot` results outside loops and the final
    accumulator of loops whose yielded value is a dot are checked the same
    way, after the loop (after its `ttng.warp_group_dot_wait`, if any): NaN
    and Inf stay non-finite under accumulation, so nothing is lost by not
    checking inside the pipelined loop. A dot check is left out when every
    op between the dot and its stores keeps NaN/Inf non-finite (add, mul,
    numerator of div, extf/truncf, convert_layout, ...) and those stores are
    checked: their checks then count every lane the dot check would.

    Runs at the end of `make_ttgir`, after software pipelining, so the checks
    do not stop loads from becoming async copies.
  }];
  let options = [
    ReportModeOption<>, PrintOption<>, RecordsOption<>,
    EnumOption<"fastPath", "fast-path",
               "::mlir::triton_ext::sanitizers::FastPath", /*default=*/"reload",
               "How a store (not grouped with others) of a tile that dies "
               "at the store, at most 64 elements per thread, is checked in "
               "record mode.",
               [EnumValue<"Count", "count",
                          "the exact (count, first lane) in one two-operand "
                          "reduction, nothing of the tile live after it">,
                EnumValue<"Peak", "peak",
                          "a NaN-propagating max of |value| (fewer ops per "
                          "lane), count and first lane on a branch that keeps "
                          "the tile live across the reduction">,
                EnumValue<"Warp", "warp",
                          "(count, first lane) per warp and masked tensor "
                          "atomics, no shared memory or barrier on the clean "
                          "path (record mode, print=none; the record's "
                          "programs slot then counts warp groups with "
                          "findings; 1-D blocked tiles and 2-D tiles with "
                          "warps along one axis, else count)">,
                EnumValue<"Reload", "reload",
                          "a NaN-propagating max of |value| as for peak, but "
                          "the reporting branch reloads the stored lanes from "
                          "memory, so nothing of the tile is live after the "
                          "reduction (tt.store of a tensor of pointers, record "
                          "mode; else count)">]>,
    Option<"checkDots", "check-dots", "bool", /*default=*/"true",
           "Also check the results of dots outside loops and the final "
           "accumulator of dot loops.">,
    Option<"ctaVote", "cta-vote", "bool", /*default=*/"true",
           "Build each tile's any-lane test (peak, reload and group paths; "
           "tiles of at most 64 elements per thread) as a per-thread flag and a tagged reduction that barrier_vote (llir "
           "stage) turns into one barrier vote. Off: a maximum of |value| "
           "reduced over the program.">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::math::MathDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::triton::TritonDialect"];
}

def TritonExtMaskedLoadPoison : Pass<"triton-ext-masked-load-poison", "mlir::ModuleOp"> {
  let summary = "Give masked tt.load without `other` a poison value in masked lanes";
  let description = [{
    A `tt.load` with a mask and no `other` leaves its masked lanes undefined.
    This pass sets `other` to a quiet NaN splat for float loads and to the
    most negative value of the type for integer loads (with `poison-ints`),
    so code that reads masked lanes produces visibly wrong results (and
    `nan_inf_check` reports them at the store).

    Before: `%x = tt.load %p, %m : tensor<128x!tt.ptr<f32>>`
    After:  `%x = tt.load %p, %m, %nan : tensor<128x!tt.ptr<f32>>`
  }];
  let options = [
    Option<"poisonInts", "poison-ints", "bool", /*default=*/"true",
           "Also poison integer loads (masked lanes get the most negative "
           "value of the type); floats always get a quiet NaN.">,
    Option<"dotOperands", "dot-operands", "bool", /*default=*/"false",
           "Also poison loads that feed a dot's A/B operand. Off by default: "
           "a non-zero `other` there stops the pipeliner from feeding wgmma "
           "from the async copy's shared buffer (GEMM ~80% slower on H200).">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::triton::TritonDialect"];
}

def TritonExtOffsetOverflowCheck : Pass<"triton-ext-offset-overflow-check", "mlir::ModuleOp"> {
  let summary = "Recompute 32-bit offset arithmetic in 64 bits and report wrap-around";
  let description = [{
    For every `tt.addptr` offset and every `tt.descriptor_load` /
    `tt.descriptor_store` coordinate computed by i32 `arith.addi`/`subi`/
    `muli` (directly or through `arith.extsi` to i64), recomputes the
    expression tree in i64 from sign-extended leaves, compares it with the
    sign-extended i32 result, and reports the lanes where they differ (the
    i32 arithmetic wrapped) with kernel name and source file:line of the
    arithmetic, like `nan_inf_check`. Loop-invariant arithmetic in a loop
    body is checked once in front of the loop; loop-dependent arithmetic
    ORs its wrapped lanes into a loop-carried value and is reported once
    after the loop, so no report lands in a loop body. Trees whose lane-varying
    leaves are make_ranges along distinct dimensions are first tested on
    their exact i64 bounds (two scalars); the lanes are counted only when
    the bounds leave the i32 range.
  }];
  let options = [
    ReportModeOption<>, PrintOption<>, RecordsOption<>,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::triton::TritonDialect"];
}

def TritonExtThreadIdsAfterLoops
    : Pass<"triton-ext-thread-ids-after-loops", "mlir::ModuleOp"> {
  let summary = "Recompute thread-id expressions used after a loop instead of "
                "keeping them live across it";
  let description = [{
    At the end of make_llir (LLVM dialect): every use, after a loop, of an
    integer expression of the thread id that was computed in front of the
    loop is recomputed at the use from a thread-id read LLVM cannot merge
    with the first (inline `mov.u32 %tid.x`, with side effects). A check
    after a kernel's main loop indexes its lanes from the thread id; without
    this pass LLVM reuses the loop's prologue values, and ptxas keeps them
    (and compares of them) in registers across the whole loop.
  }];
  let options = [
    Option<"maxLoopState", "max-loop-state", "int", /*default=*/"192",
           "Functions whose largest loop state (the values a loop carries, "
           "in 32-bit registers per thread) is above this are left alone: "
           "ptxas spills or sits at its 255-register cap there, and moving "
           "work after the loop only moves its spill choices.">,
    Option<"minFreed", "min-freed", "int", /*default=*/"16",
           "Functions where fewer than this many 32-bit registers of thread-id "
           "expressions live across the loop are left alone: too few to "
           "change ptxas's allocation, while the recomputed code still moves "
           "its schedule.">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "A remark per function: registers of the loops' state, of the "
           "values live across a loop, of those derived from the thread id, "
           "and the uses recomputed.">,
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def TritonExtBarrierVote : Pass<"triton-ext-barrier-vote", "mlir::ModuleOp"> {
  let summary = "Turn nan_inf_check's tagged any-lane reductions into one "
                "barrier vote";
  let description = [{
    At the end of make_llir (LLVM dialect): each reduction nan_inf_check
    tagged as an any-lane test (a maximum of one 0/1 flag per thread, then
    `!= 0`) loses its cross-thread part (warp reductions, the shared-memory
    round trip between warps and its barriers) to one
    `barrier.red.or.pred` on the thread's flag, which gives every thread of
    the program the OR of all flags.
  }];
  let options = [
    Option<"aligned", "aligned", "bool", /*default=*/"false",
           "Vote with `bar.red.or.pred` (every thread of a warp executes the "
           "same instruction) instead of `barrier.red.or.pred`.">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "A remark per tagged test: replaced, or why it was left as is.">,
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

#endif // TRITON_EXT_SANITIZERS_PASSES
