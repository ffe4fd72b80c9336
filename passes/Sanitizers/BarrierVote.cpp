//===- BarrierVote.cpp - Any-lane tests of the checks as one barrier vote -===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Why: a check's clean path asks one question per program: "does any lane
// hold a NaN or Inf?". nan_inf_check answers it with a `tt.reduce`, which
// Triton lowers to an in-warp step, a shared-memory round trip between the
// warps, a barrier in front of it (the scratch buffer was used before) and
// one inside it. On a row kernel that is the whole cost of the check: Liger's
// softmax reads 0.888x of the stock kernel on the H200, with 2 barriers, a
// shared store and load and their shuffles after the row's store. The
// hardware answers the question in one instruction: `barrier.red.or.pred`, a
// barrier of every thread of the program that returns the OR of their
// predicates to all of them. H200, whole corpus (results/real-vote-h200.json):
// Liger's softmax 0.885x -> 0.964x, Liger's layer norm 0.909x -> 0.978x, FLA's
// softmax 0.916x -> 0.983x; Liger's SwiGLU, where the vote replaces one barrier
// and saves none, 0.963x -> 0.93x.
//
// What: at the end of make_llir (LLVM dialect), for each reduction that
// nan_inf_check tagged (location name kBarrierVoteTag + number: the maximum
// of one i32 flag per thread, 0 or 1, then `!= 0`), the cross-thread part
// (from the first warp-level op, `nvvm.redux.sync` or `nvvm.shfl.sync`, to
// the compare) is replaced by one vote on the thread's partial value, and a
// tagged barrier in front of the reduction is dropped where nothing but
// register arithmetic separates it from the vote.
//
// Why it is legal: every thread of the program reaches the reduction (Triton
// only reduces in program-uniform control flow, and nan_inf_check does not
// tag reductions in warp-specialized kernels, whose partitions hold part of
// the warps), so every thread reaches the vote, and the OR of the threads'
// flags is the maximum the reduction computed (each flag is 0 or 1, and the
// thread's partial is the maximum of its own elements). The vote is a
// barrier with the memory ordering of `bar.sync` for shared memory: it orders
// everything the dropped barrier ordered (no memory access lies between
// them), and the reduction's own shared-memory accesses are removed with it.
// It is the non-aligned form, correct even if LLVM duplicates the asm into
// two paths (a plain inline asm call is not `convergent`).
//
//===----------------------------------------------------------------------===//

#include "triton-ext/PassInfra.h"

#include "SanitizerUtils.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::triton_ext {
#define GEN_PASS_DECL_TRITONEXTBARRIERVOTE
#define GEN_PASS_DEF_TRITONEXTBARRIERVOTE
#include "Passes.h.inc"
} // namespace mlir::triton_ext

using namespace mlir;
using mlir::triton_ext::sanitizers::kBarrierVoteTag;

namespace {

/// The number of the any-lane test whose tag `loc` carries, if any.
std::optional<unsigned> voteNumber(Location loc) {
  std::optional<unsigned> number;
  loc->walk([&](Location inner) {
    auto named = dyn_cast<NameLoc>(inner);
    if (!named || !named.getName().getValue().starts_with(kBarrierVoteTag))
      return WalkResult::advance();
    unsigned n;
    if (!named.getName()
             .getValue()
             .drop_front(kBarrierVoteTag.size())
             .getAsInteger(10, n))
      number = n;
    return WalkResult::interrupt();
  });
  return number;
}

bool isWarpStep(Operation *op) {
  StringRef name = op->getName().getStringRef();
  return name == "nvvm.redux.sync" || name == "nvvm.shfl.sync";
}

bool isBarrier(Operation *op) {
  StringRef name = op->getName().getStringRef();
  return name == "nvvm.barrier" || name == "nvvm.barrier0";
}

class BarrierVotePass
    : public mlir::triton_ext::impl::TritonExtBarrierVoteBase<BarrierVotePass> {
public:
  using Base::Base;

  void runOnOperation() override {
    // The vote is PTX: other targets keep their reductions.
    auto target = getOperation()->getAttrOfType<StringAttr>("ttg.target");
    if (!target || !target.getValue().starts_with("cuda:")) {
      if (remarks)
        getOperation().emitRemark()
            << "barrier_vote: left as is (not a CUDA module)";
      return;
    }
    getOperation().walk([&](LLVM::LLVMFuncOp func) {
      // Each tagged test's ops, in their block's order.
      llvm::MapVector<unsigned, SmallVector<Operation *>> tests;
      func.walk([&](Operation *op) {
        if (std::optional<unsigned> n = voteNumber(op->getLoc()))
          tests[*n].push_back(op);
      });
      for (auto &[number, test] : tests) {
        StringRef outcome = rewrite(test, aligned);
        if (remarks)
          func.emitRemark()
              << "barrier_vote: test " << number << ": " << outcome;
      }
    });
  }

private:
  /// Replaces the test's cross-thread part by a vote; says what it did.
  static StringRef rewrite(ArrayRef<Operation *> test, bool aligned) {
    Block *block = test.front()->getBlock();
    if (llvm::any_of(test,
                     [&](Operation *op) { return op->getBlock() != block; }))
      return "left as is (its ops are in more than one block)";
    auto firstStep = llvm::find_if(test, isWarpStep);
    if (firstStep == test.end())
      return "left as is (no warp-level step)";
    // The reduction ends at its (last) compare; tagged ops after it (an `or`
    // with other tests) stay.
    auto last = std::find_if(test.rbegin(), test.rend(), [](Operation *op) {
      return isa<LLVM::ICmpOp>(op);
    });
    if (last == test.rend() || last.base() <= firstStep)
      return "left as is (the reduction does not end in `!= 0`)";
    auto end = last.base();
    if (llvm::none_of(llvm::make_range(firstStep, end), isBarrier))
      return "left as is (no cross-warp step: nothing to save)";
    SmallPtrSet<Operation *, 16> replaced(firstStep, end);
    // The test's answer is the compare's. Other values the reduction
    // computed may be used elsewhere only if they are plain arithmetic (CSE
    // shares its shared-memory addresses with later reductions); those stay.
    auto compare = cast<LLVM::ICmpOp>(*std::prev(end));
    Value answer = compare.getResult();
    for (Operation *op : replaced)
      if (op != compare && !isMemoryEffectFree(op) &&
          llvm::any_of(op->getUsers(), [&](Operation *user) {
            return !replaced.contains(user);
          }))
        return "left as is (a value it loads or exchanges is used elsewhere)";
    if (compare.getPredicate() != LLVM::ICmpPredicate::ne ||
        !matchPattern(compare.getRhs(), m_Zero()))
      return "left as is (the reduction does not end in `!= 0`)";
    Value partial = (*firstStep)
                        ->getOperand((*firstStep)->getName().getStringRef() ==
                                             "nvvm.redux.sync"
                                         ? 0
                                         : 1);
    if (!partial.getType().isInteger(32))
      return "left as is (the thread's partial is not an i32 flag)";

    Operation *at = *firstStep;
    OpBuilder builder(at);
    Location loc = at->getLoc();
    Type i32 = builder.getI32Type();
    std::string text =
        std::string(
            "{\n\t.reg .pred %vote_p;\n\tsetp.ne.u32 %vote_p, $1, 0;\n\t") +
        (aligned ? "bar.red.or.pred" : "barrier.red.or.pred") +
        " %vote_p, 0, %vote_p;\n\tselp.u32 $0, 1, 0, %vote_p;\n\t}";
    auto vote = LLVM::InlineAsmOp::create(
        builder, loc, i32, ValueRange{partial}, text, "=r,r",
        /*has_side_effects=*/true, /*is_align_stack=*/false,
        LLVM::TailCallKind::None, /*asm_dialect=*/nullptr,
        /*operand_attrs=*/nullptr);
    Value zero = LLVM::ConstantOp::create(builder, loc, i32, 0);
    Value any =
        LLVM::ICmpOp::create(builder, compare.getLoc(), LLVM::ICmpPredicate::ne,
                             vote.getRes(), zero);
    answer.replaceAllUsesWith(any);
    for (Operation *op : llvm::reverse(llvm::make_range(firstStep, end)))
      if (op->use_empty())
        op->erase();
    // The barrier Triton put in front of the reduction (its scratch buffer
    // was used before): the vote orders the same accesses if only register
    // arithmetic lies between them.
    for (Operation *op :
         llvm::reverse(llvm::make_range(test.begin(), firstStep))) {
      if (!isBarrier(op))
        continue;
      bool onlyArithmetic = true;
      for (Operation *it = op->getNextNode(); it && it != vote;
           it = it->getNextNode())
        onlyArithmetic &= isMemoryEffectFree(it);
      if (onlyArithmetic)
        op->erase();
      break;
    }
    return "replaced by one barrier vote";
  }
};

} // namespace

TRITON_EXT_REGISTER_PASS(barrier_vote, BarrierVotePass);
