//===- Passes.td - Loop splitting on induction-variable conditions -*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_LOOP_SPLIT_PASSES
#define TRITON_EXT_LOOP_SPLIT_PASSES

include "triton-ext/PassOptions.td"

def TritonExtLoopSplit : Pass<"triton-ext-loop-split", "mlir::ModuleOp"> {
  let summary = "Split scf.for loops where a condition on the induction variable flips";
  let description = [{
    Finds, in each `scf.for` with a constant positive step, an `arith.cmpi`
    that compares an affine function of the induction variable with a
    loop-invariant value: either scalars (`%iv < %diag`) or tensors built from
    `tt.splat`, `tt.make_range`, `tt.expand_dims`, `tt.broadcast` and
    `arith.addi` (the causal mask `offs_m[:, None] >= start_n + offs_n[None, :]`).
    From the value intervals of both sides it computes, before the loop, the
    iterations where the whole comparison is true and where it is false, and
    splits the loop there into two or three loops. In the parts where the
    comparison is known it becomes a constant (`dense<true>`/`dense<false>`
    for tensors), so a following canonicalize removes the selects it fed.

    Before:

    ```mlir
    %r = scf.for %iv = %c0 to %n step %c64 iter_args(%a = %init) -> (f32) : i32 {
      %c = arith.cmpi slt, %iv, %diag : i32
      %v = arith.select %c, %x, %y : f32
      ...
    }
    ```

    After (split points computed in i64, clamped to the bounds and rounded up
    to the step). When the comparison's operands might wrap, a run-time guard
    decides the bounds, and a middle loop that keeps the comparison takes
    every iteration if the guard fails (it is empty otherwise); a guard known
    to fail leaves the loop alone. Here `%iv < %diag` cannot wrap:

    ```mlir
    %r0 = scf.for %iv = %c0 to %m step %c64 iter_args(%a = %init) -> (f32) : i32 {
      ... uses %x ...
    }
    %r = scf.for %iv = %m_rounded to %n step %c64 iter_args(%a = %r0) -> (f32) : i32 {
      ... uses %y ...
    }
    ```

    Every such comparison of the body is folded at once (the causal mask
    AND-ed with `start_n + offs_n < seq_len`): the known parts end at the
    smallest and start at the largest split point. Also read: monotone maps of
    the row offsets (`offs_m // k`, constant or run-time k, guarded), an iv
    times a positive constant (`j * TILE_SIZE + offs`), and loop bounds
    `min(x, y)` and `block_mask * x` that prove the part past the diagonal
    empty. Loops whose body holds a tensor of more than `max-tile-elements`
    elements are left alone (each part copies the body), and so are loops whose
    only folded comparisons are tail masks against the loop's own bound when
    the step exceeds `max-tail-step` (the unmasked part rarely runs).

    Loop attributes (`tt.num_stages`, `tt.warp_specialize`, ...) are copied to
    every part; nests marked `tt.flatten` are left alone. Run `canonicalize`
    and `cse` afterwards.
  }];
  let options = [
    RangeOption<"maxParts", "max-parts", "unsigned", /*default=*/"3",
           "Most loops one loop is split into (2 or 3). With 2, a mask that is "
           "only partly known over a band of iterations keeps the band and "
           "everything after it in one unspecialized loop.",
           /*min=*/2, /*max=*/3>,
    Option<"maxTileElements", "max-tile-elements", "uint64_t", /*default=*/"32768",
           "Loops whose body holds a tensor with more elements are left alone "
           "(0: no limit). Each part copies the body; tiles this large spill "
           "registers already, and a second copy of a spilling body made "
           "Liger's group norm (65536-element tiles) 0.803x on the H200.">,
    Option<"maxTailStep", "max-tail-step", "uint64_t", /*default=*/"16384",
           "Loops whose only folded comparisons are tail masks (`iv + "
           "arange(0, step) < ub`, ub the loop's own bound) and whose step is "
           "larger are left alone (0: no limit). Launchers size such tiles to "
           "the row (next_power_of_2(n_cols), capped), so a large step means "
           "one iteration, the masked one, at common row lengths: the split "
           "only adds its bounds and a body copy (Liger's cross entropy, "
           "32768-element tiles, vocab 32000).">,
    Option<"profitability", "profitability", "bool", /*default=*/"true",
           "Split only where the profitability model of "
           "LoopSplitProfitability.cpp says it pays (issue 28); false: "
           "wherever it is legal.">,
    Option<"minUnmaskedTrips", "min-unmasked-trips", "uint64_t",
           /*default=*/"3",
           "Loops whose bounds (constants, or the remainder loop of "
           "loop_unroll) leave fewer unmasked iterations are left alone.">,
    Option<"singleDrain", "single-drain", "bool", /*default=*/"false",
           "In a loop Triton software-pipelines (tt.dot fed by loads of the "
           "body), only the main part keeps its stages; the other parts get "
           "tt.num_stages = 1, so the split keeps one pipeline drain. Off by "
           "default: the causal split then pipelines both parts as the "
           "hand-split kernel does; unpipelined, its diagonal part loads "
           "through registers (+5 / +13 registers at head_dim 128 / 64).">,
    EnumOption<"rounding", "rounding",
               "::mlir::triton_ext::loop_split::Rounding", /*default=*/"decline",
               "Where folding a mask removes a select between a multiply and "
               "an add (`tl.where(mask, x * s, -inf) - m`), the backends "
               "would contract them into one FMA, which rounds once where the "
               "masked loop rounded twice: outputs would move by an ulp "
               "(vLLM's prefix-prefill on the H200). The registry sets "
               "mul-rn for CUDA.",
               [EnumValue<"Decline", "decline",
                          "leave such loops alone">,
                EnumValue<"MulRn", "mul-rn",
                          "split; the multiply reaches the add through an "
                          "inline PTX mul.rn (never fused, no flush to zero): "
                          "results bit for bit as unsplit. CUDA only">,
                EnumValue<"Contract", "contract",
                          "split and let the backends contract, as in a "
                          "hand-split kernel (the last bit may differ)">]>,
    Option<"scaleAfterMax", "scale-after-max", "bool", /*default=*/"true",
           "With rounding=mul-rn, in the parts where the mask folds, a row "
           "maximum of scaled scores (`tl.max(qk * s, 1)`, s a loop-invariant "
           "scalar) is taken of the unscaled scores and scaled once with "
           "mul.rn: the same bits when s is positive and finite (rounding "
           "x * s is then monotone), which a run-time guard checks, sending "
           "every iteration to the masked loop otherwise (where every part "
           "folds, as in `if start_n >= diag:` attention, the last part "
           "keeps the mask for this). The products are "
           "then made where the subtraction uses them: on the H200 the "
           "one-loop causal attention at head dim 64 needed 224 registers "
           "and ran at 0.95x of the hand-split kernel without it.">,
    Option<"guardedMask", "guarded-mask", "bool", /*default=*/"true",
           "In the part that keeps the comparisons, a branch on one of them "
           "that only applies a mask (`if start_n >= diag: qk = "
           "tl.where(mask, qk, -inf)`) becomes straight-line code: one "
           "operand of the mask is replaced, where the condition is false, by "
           "the extreme value that makes the mask keep `qk` "
           "(LoopSplitGuardedMask.h). On the H200 the branch cost the "
           "scalar-form attention 16 registers at head dim 64.">,
    RemarksOption<"loop the pass could split but leaves alone "
                  "(profitability and limits), on the loop">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::triton::TritonDialect"];
}

#endif // TRITON_EXT_LOOP_SPLIT_PASSES
