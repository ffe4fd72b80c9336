//===- ThreadIdsAfterLoops.cpp - Recompute thread ids after a kernel's loops
//===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Why: a check after a kernel's main loop (nan_inf_check of an attention's
// output store) lowers to code that indexes its lanes from the thread id, as
// the kernel's code in front of the loop does. LLVM merges the two (the
// `llvm.nvvm.read.ptx.sreg.tid.x` read and every integer expression of it:
// lane, warp, row and column of each element, and compares of those with
// scalars), so that the values computed in front of the loop are kept live
// across it and ptxas holds them in registers for the whole loop. On sglang's
// extend attention (8 warps, 128x128 output tile) the check's row and column
// indices and eight row-mask predicates became live across the causal loop:
// 187 -> 201 registers, the predicates packed into general registers (`P2R`)
// and the loop 812 -> 919 instructions per iteration (0.89x on the H200).
//
// What: at the end of make_llir (LLVM dialect), every use after the kernel's
// last loop of an integer expression of the thread id computed in front of
// that loop is recomputed where it is used, from a thread-id read that LLVM
// cannot merge (an inline `mov.u32 %tid.x` with side effects, one per block).
// The expression's other operands (constants, kernel arguments, uniform
// scalars) are reused as they are. Blocks between two loops are left alone
// (what they recomputed would be live across the next loop instead), and so
// are functions whose loop state is near ptxas's register cap
// (`max-loop-state`) or where few registers would be freed (`min-freed`).
//
// The checks bring it (registry `with:`). H200,
// whole real-kernel corpus, outputs unchanged everywhere
// (results/real-threadidsalone-h200.json, real-lastmiletid-h200.json):
// alone it fires on 26 kernels, 1.22x / 1.25x on sglang's prefill and extend
// attention and 1.28x on vLLM's prefix-prefill attention, 0.984-1.013x on the
// rest; with nan_inf_check it turns sglang's extend attention from 0.889x
// into 1.204x of the stock kernel, but FLA's decoding attention from 0.993x
// into 0.878x (the same instructions, a different load schedule in its
// loop, from 7 registers freed), hence `min-freed`.
//
// Why it is legal: the thread id does not change during a program, and the
// recomputed ops are pure integer arithmetic of it and of values that dominate
// the use, so every recomputed value equals the one it replaces.
//
//===----------------------------------------------------------------------===//

#include "triton-ext/PassInfra.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::triton_ext {
#define GEN_PASS_DECL_TRITONEXTTHREADIDSAFTERLOOPS
#define GEN_PASS_DEF_TRITONEXTTHREADIDSAFTERLOOPS
#include "Passes.h.inc"
} // namespace mlir::triton_ext

using namespace mlir;

namespace {

/// Integer ops recomputed after a loop: pure, cheap, one result.
bool isRecomputable(Operation *op) {
  static const llvm::StringSet<> names = {
      "llvm.and",       "llvm.or",       "llvm.xor",       "llvm.shl",
      "llvm.lshr",      "llvm.ashr",     "llvm.add",       "llvm.sub",
      "llvm.mul",       "llvm.udiv",     "llvm.urem",      "llvm.sdiv",
      "llvm.srem",      "llvm.zext",     "llvm.sext",      "llvm.trunc",
      "llvm.icmp",      "llvm.select",   "llvm.intr.umin", "llvm.intr.umax",
      "llvm.intr.smin", "llvm.intr.smax"};
  return op->getNumResults() == 1 && op->getNumRegions() == 0 &&
         names.contains(op->getName().getStringRef());
}

bool isThreadIdRead(Operation *op) {
  return op->getName().getStringRef() == "nvvm.read.ptx.sreg.tid.x";
}

/// 32-bit registers a value of `type` takes (structs: the sum of their
/// members, as Triton packs a thread's elements of a tensor).
int64_t registerSlots(Type type) {
  if (auto st = dyn_cast<LLVM::LLVMStructType>(type)) {
    int64_t sum = 0;
    for (Type member : st.getBody())
      sum += registerSlots(member);
    return sum;
  }
  if (auto vec = dyn_cast<VectorType>(type)) {
    // Packed: <2 x f16> is one register. Pointers count 64 bits.
    Type elt = vec.getElementType();
    int64_t bits = elt.isIntOrFloat() ? elt.getIntOrFloatBitWidth() : 64;
    return std::max<int64_t>(1, vec.getNumElements() * bits / 32);
  }
  if (type.isIntOrFloat())
    return std::max<int64_t>(1, type.getIntOrFloatBitWidth() / 32);
  return 1;
}

/// Expressions deeper than this are left alone (each level is one op
/// recomputed per use block).
constexpr int kMaxDepth = 16;

class FunctionRemat {
public:
  FunctionRemat(Region &body, DominanceInfo &dom) : body(body), dom(dom) {
    findLoops();
  }

  /// Registers of the largest loop state (a header's block arguments) and of
  /// the values computed in front of a loop and used after it, and how many of
  /// the latter derive from the thread id.
  struct Pressure {
    int64_t carried = 0, across = 0, fromThreadId = 0;
  };

  Pressure measure() {
    Pressure p;
    for (Block *h : headers) {
      int64_t state = 0;
      for (BlockArgument arg : h->getArguments())
        state += registerSlots(arg.getType());
      p.carried = std::max(p.carried, state);
    }
    llvm::DenseSet<Value> counted;
    for (Block &block : body) {
      if (inLoop.contains(&block) || !afterALoop(&block))
        continue;
      for (Operation &op : block)
        for (Value value : op.getOperands())
          if (liveAcrossALoop(value, &block) && counted.insert(value).second) {
            int64_t slots = registerSlots(value.getType());
            p.across += slots;
            if (derivesFromThreadId(value))
              p.fromThreadId += slots;
          }
    }
    return p;
  }

  unsigned run() {
    if (headers.empty())
      return 0;
    unsigned rewritten = 0;
    for (Block &block : body) {
      if (inLoop.contains(&block) || !afterALoop(&block))
        continue;
      DenseMap<Value, Value> recomputed;
      Value tid;
      for (Operation &op : llvm::make_early_inc_range(block)) {
        for (OpOperand &use : op.getOpOperands()) {
          Value value = use.get();
          if (!liveAcrossALoop(value, &block) || !derivesFromThreadId(value))
            continue;
          OpBuilder builder(&op);
          use.set(recompute(builder, value, recomputed, tid));
          ++rewritten;
        }
      }
    }
    return rewritten;
  }

private:
  /// Natural loops of the back edges (latch -> header, header dominating
  /// latch): the header and every block that reaches the latch without
  /// passing the header.
  void findLoops() {
    for (Block &latch : body) {
      for (Block *header : latch.getSuccessors()) {
        if (!dom.dominates(header, &latch))
          continue;
        headers.insert(header);
        llvm::SmallPtrSet<Block *, 16> loop{header};
        SmallVector<Block *> work{&latch};
        while (!work.empty()) {
          Block *b = work.pop_back_val();
          if (!loop.insert(b).second)
            continue;
          for (Block *pred : b->getPredecessors())
            work.push_back(pred);
        }
        inLoop.insert(loop.begin(), loop.end());
      }
    }
  }

  /// After a loop and in front of none: the kernel's epilogue (a block
  /// between two loops is left alone: what it recomputes would be live
  /// across the next loop instead).
  bool afterALoop(Block *block) const {
    if (!llvm::any_of(
            headers, [&](Block *h) { return dom.properlyDominates(h, block); }))
      return false;
    llvm::SmallPtrSet<Block *, 16> seen;
    SmallVector<Block *> work{block};
    while (!work.empty()) {
      Block *b = work.pop_back_val();
      if (!seen.insert(b).second)
        continue;
      if (headers.contains(b))
        return false;
      for (Block *succ : b->getSuccessors())
        work.push_back(succ);
    }
    return true;
  }

  /// Defined in front of a loop whose header dominates `use`.
  bool liveAcrossALoop(Value value, Block *use) const {
    Block *def = value.getParentBlock();
    if (!def || def == use || inLoop.contains(def))
      return false;
    return llvm::any_of(headers, [&](Block *h) {
      return dom.dominates(def, h) && dom.properlyDominates(h, use);
    });
  }

  bool derivesFromThreadId(Value value, int depth = 0) {
    auto it = derived.find(value);
    if (it != derived.end())
      return it->second;
    bool result = false;
    if (Operation *op = value.getDefiningOp()) {
      if (isThreadIdRead(op))
        result = true;
      else if (depth < kMaxDepth && isRecomputable(op))
        result = llvm::any_of(op->getOperands(), [&](Value operand) {
          return derivesFromThreadId(operand, depth + 1);
        });
    }
    derived[value] = result;
    return result;
  }

  /// `value` recomputed at the builder's point, from one fresh thread-id
  /// read per block; operands that do not derive from the thread id are
  /// reused (they dominate the original op, hence this point).
  Value recompute(OpBuilder &builder, Value value,
                  DenseMap<Value, Value> &recomputed, Value &tid) {
    if (Value done = recomputed.lookup(value))
      return done;
    Operation *op = value.getDefiningOp();
    Value result;
    if (isThreadIdRead(op)) {
      if (!tid) {
        // Side effects: LLVM neither merges it with the read in front of
        // the loop nor hoists it there.
        tid = LLVM::InlineAsmOp::create(builder, op->getLoc(), value.getType(),
                                        ValueRange{}, "mov.u32 $0, %tid.x;",
                                        "=r", /*has_side_effects=*/true,
                                        /*is_align_stack=*/false,
                                        LLVM::tailcallkind::TailCallKind::None,
                                        /*asm_dialect=*/LLVM::AsmDialectAttr(),
                                        /*operand_attrs=*/ArrayAttr())
                  .getResult(0);
      }
      result = tid;
    } else {
      IRMapping mapping;
      for (Value operand : op->getOperands())
        if (derivesFromThreadId(operand))
          mapping.map(operand, recompute(builder, operand, recomputed, tid));
      result = builder.clone(*op, mapping)->getResult(0);
    }
    recomputed[value] = result;
    return result;
  }

  Region &body;
  DominanceInfo &dom;
  llvm::SmallPtrSet<Block *, 8> headers;
  llvm::DenseSet<Block *> inLoop;
  DenseMap<Value, bool> derived;
};

class ThreadIdsAfterLoopsPass
    : public mlir::triton_ext::impl::TritonExtThreadIdsAfterLoopsBase<
          ThreadIdsAfterLoopsPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    DominanceInfo dom(getOperation());
    getOperation().walk([&](LLVM::LLVMFuncOp func) {
      if (func.getBody().empty())
        return;
      FunctionRemat remat(func.getBody(), dom);
      auto p = remat.measure();
      // A loop state near ptxas's 255 registers per thread (two wgmma
      // accumulators of a backward attention) is spilled or at the cap
      // anyway; there, freeing a few registers across the loop buys nothing
      // and the recomputed code moves ptxas's spill choices (FLA's attention
      // backward dk/dv, loop state 230: 0.84x on the H200).
      // Few registers freed: too few to change ptxas's allocation in the
      // loop, while the recomputed code still moves its schedule (FLA's
      // decoding attention under nan_inf_check: 7 registers, the same
      // instructions, a different load order, 0.88x).
      StringRef declined =
          p.carried > maxLoopState    ? "loop state above max-loop-state"
          : p.fromThreadId < minFreed ? "fewer registers freed than min-freed"
                                      : "";
      unsigned n = declined.empty() ? remat.run() : 0;
      if (remarks)
        func.emitRemark() << "thread_ids_after_loops: "
                          << (declined.empty()
                                  ? std::string()
                                  : ("declined (" + declined + "): ").str())
                          << "loop state=" << p.carried
                          << " live across=" << p.across
                          << " from thread id=" << p.fromThreadId
                          << " uses recomputed=" << n;
    });
  }
};

} // namespace

TRITON_EXT_REGISTER_PASS(thread_ids_after_loops, ThreadIdsAfterLoopsPass);
