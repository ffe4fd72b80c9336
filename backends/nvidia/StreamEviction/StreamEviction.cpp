//===- StreamEviction.cpp - L2 eviction hints for streamed loads ----------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// On Hopper, L2 (50 MB on an H200) is shared by every SM, and loads allocate
// lines with the normal (LRU-like) policy by default. A kernel that streams
// inputs it reads once while it gathers from a table (an embedding lookup, a
// paged cache, any `table[idx]`) lets the streams push the table out of L2.
// `ld.global.L2::cache_hint` with an evict_first policy (Triton:
// `eviction_policy="evict_first"`) on the streamed loads makes their lines
// the first to go. Writing that hint by hand needs knowing which loads
// stream; this pass derives it from the address computation (GitHub issue 8).
//
// A load is streamed when:
//  * its pointer is one kernel pointer argument plus offsets computed from
//    program ids, ranges, constants, scalar arguments and loop induction
//    variables by memory-effect-free ops (no load feeds the address: a
//    gather's targets may repeat; no loop-carried value: the pass does not
//    model what it advances by);
//  * the offsets depend on every program id the kernel reads, so different
//    programs read different elements (a GEMM's A tile depends on pid_m only
//    and is shared by all pid_n programs: not streamed);
//  * the offsets depend on the induction variable of every loop around the
//    load, so one program does not read the same element again;
//  * it is the only load from that argument (a two-pass softmax reads each
//    row twice and wants it in L2 for the second pass);
//  * it has no cache policy yet (the author's choice wins) and is not
//    volatile.
// By default the streams of a kernel are only marked when the kernel also
// gathers (some load's address depends on a loaded value). Measured on the
// H200 (results/explore-h200.json): evict_first on the streams of
// `x * table[idx]` saves 8.5% with a 24 MB table and 7.5% with 40 MB, but a
// pure stream (`x + y`, 1 GiB each) gets 6% slower with it: with nothing to
// protect, the hint only costs.
//
// Why this is legal: a cache policy is a performance hint with no
// memory-ordering meaning (TT_CachePolicyAttr says so); every load returns
// the same value under every policy. The analysis can only cost time when it
// guesses wrong, never change a result. The GPU check compares outputs bit
// for bit.
//
// Declines: modules whose `ttg.target` is not cuda >= 90 (at the ttir stage
// there is no target attribute; registry.yaml restricts the pass to cuda >=
// 90), declarations, kernels without a gather (unless only-with-gathers is
// off), loads with a cache policy. Running the pass twice changes nothing
// the second time: every load it marked now has a policy.
// With the `remarks` option each decline is a remark,
// `nvidia_stream_eviction: not applied: <reason>`: on the module (target), on
// the kernel (no gather) or on the load (why it is not a stream).
//
//===----------------------------------------------------------------------===//

#include "triton-ext/PassInfra.h"
#include "triton-ext/TargetFilter.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "triton/Dialect/Triton/IR/Dialect.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "triton-ext-nvidia-stream-eviction"

namespace mlir::triton_ext {
#define GEN_PASS_DECL_TRITONEXTSTREAMEVICTION
#define GEN_PASS_DEF_TRITONEXTSTREAMEVICTION
#include "Passes.h.inc"
} // namespace mlir::triton_ext

using namespace mlir;
namespace tt = mlir::triton;

namespace {

/// Oldest CUDA compute capability the hint was measured on.
constexpr unsigned kMinArch = 90;

/// What the address of one load is computed from.
struct AddressFacts {
  /// The kernel pointer argument the address starts from (null: none found).
  Value base;
  /// Program id axes (bit i: axis i) the address depends on.
  unsigned programIdAxes = 0;
  /// Loop induction variables the address depends on.
  llvm::SmallPtrSet<Value, 4> inductionVars;
  /// Set when a loaded value feeds the address (a gather).
  bool gathered = false;
  /// Set when the address cannot be summarized: it flows through a
  /// loop-carried or branch result or an op with other memory effects, or
  /// has two pointer bases.
  bool opaque = false;
};

static bool isInductionVar(BlockArgument arg) {
  auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
  return loop && arg == loop.getInductionVar();
}

/// Walks the use-def graph of `ptr` back to its leaves.
static AddressFacts summarizeAddress(Value ptr, Block &entry) {
  AddressFacts facts;
  SmallVector<Value> worklist{ptr};
  llvm::SmallPtrSet<Value, 16> seen;
  while (!worklist.empty() && !facts.opaque) {
    Value value = worklist.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (arg.getOwner() == &entry) {
        if (isa<tt::PointerType>(arg.getType())) {
          facts.opaque |= facts.base && facts.base != arg;
          facts.base = arg;
        }
      } else if (isInductionVar(arg)) {
        facts.inductionVars.insert(arg);
      } else {
        facts.opaque = true; // Loop-carried or other region argument.
      }
      continue;
    }
    Operation *def = value.getDefiningOp();
    if (auto pid = dyn_cast<tt::GetProgramIdOp>(def)) {
      facts.programIdAxes |= 1u << pid.getAxisAsInt();
      continue;
    }
    if (isa<tt::LoadOp>(def)) {
      facts.gathered = true;
      continue;
    }
    // Region ops (scf.if, scf.for results) and anything that may touch
    // memory end the summary: their value is not a function of the leaves.
    if (def->getNumRegions() != 0 || !isMemoryEffectFree(def)) {
      facts.opaque = true;
      continue;
    }
    llvm::append_range(worklist, def->getOperands());
  }
  return facts;
}

static bool hasCachePolicy(tt::LoadOp load) {
  auto policy =
      dyn_cast_if_present<tt::CachePolicyAttr>(load.getCachePolicyAttr());
  if (!policy)
    return load.getCachePolicyAttr() != nullptr; // Another target's policy.
  return policy.getCacheModifier() != tt::CacheModifier::NONE ||
         policy.getEvictionPolicy() != tt::EvictionPolicy::NORMAL;
}

class StreamEvictionPass
    : public mlir::triton_ext::impl::TritonExtStreamEvictionBase<
          StreamEvictionPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!mlir::triton_ext::mayTargetCudaAtLeast(module, kMinArch)) {
      LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": target is not cuda >= 90\n");
      if (remarks)
        module.emitRemark() << "nvidia_stream_eviction: not applied: the "
                               "target is not cuda >= 90";
      return;
    }
    for (auto func : module.getOps<tt::FuncOp>())
      if (!func.isDeclaration())
        markKernel(func);
  }

private:
  void markKernel(tt::FuncOp func) {
    Block &entry = func.getBody().front();
    unsigned usedAxes = 0;
    func.walk(
        [&](tt::GetProgramIdOp pid) { usedAxes |= 1u << pid.getAxisAsInt(); });

    SmallVector<std::pair<tt::LoadOp, AddressFacts>> loads;
    llvm::DenseMap<Value, unsigned> loadsPerBase;
    func.walk([&](tt::LoadOp load) {
      AddressFacts facts = summarizeAddress(load.getPtr(), entry);
      if (facts.base)
        ++loadsPerBase[facts.base];
      loads.emplace_back(load, std::move(facts));
    });

    bool gathers = llvm::any_of(
        loads, [](const auto &entry) { return entry.second.gathered; });
    if (onlyWithGathers && !gathers) {
      LLVM_DEBUG(llvm::dbgs()
                 << DEBUG_TYPE ": no gather in " << func.getSymName() << "\n");
      if (remarks && !loads.empty())
        func.emitRemark() << "nvidia_stream_eviction: not applied: the kernel "
                             "does not gather (no load's address depends on a "
                             "loaded value), so its streams are not marked "
                             "(only-with-gathers)";
      return;
    }

    auto evictFirst =
        tt::CachePolicyAttr::get(&getContext(), tt::CacheModifier::NONE,
                                 tt::EvictionPolicy::EVICT_FIRST);
    for (auto &[load, facts] : loads) {
      StringRef reason = notStreamedReason(load, facts, usedAxes, loadsPerBase);
      if (!reason.empty()) {
        LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": not streamed (" << reason
                                << "): " << load << "\n");
        if (remarks)
          load.emitRemark()
              << "nvidia_stream_eviction: not applied: " << reason;
        continue;
      }
      load.setCachePolicyAttr(evictFirst);
    }
  }

  /// Why `load` is not a stream, or an empty string when it is one.
  static StringRef
  notStreamedReason(tt::LoadOp load, const AddressFacts &facts,
                    unsigned usedAxes,
                    const llvm::DenseMap<Value, unsigned> &loadsPerBase) {
    if (load.getIsVolatile())
      return "the load is volatile";
    if (hasCachePolicy(load))
      return "the load has a cache policy already (the author's choice wins)";
    if (facts.opaque)
      return "its address goes through a loop-carried value, a branch or "
             "loop result, an op with memory effects, or two pointer "
             "arguments";
    if (facts.gathered)
      return "its address depends on a loaded value (a gather: its targets "
             "may repeat)";
    if (!facts.base)
      return "its address does not start from a kernel pointer argument";
    if (usedAxes == 0)
      return "the kernel reads no program id";
    if ((facts.programIdAxes & usedAxes) != usedAxes)
      return "its offset does not depend on every program id the kernel "
             "reads (several programs read the same data)";
    if (loadsPerBase.lookup(facts.base) != 1)
      return "another load reads the same pointer argument (the data is "
             "read again)";
    if (!advancesWithEveryLoop(load, facts))
      return "its offset does not advance with every loop around it (the "
             "data is read again)";
    return "";
  }

  /// True when the address depends on the induction variable of every
  /// scf.for around the load (other loops: unknown trip structure, false).
  static bool advancesWithEveryLoop(tt::LoadOp load,
                                    const AddressFacts &facts) {
    for (Operation *parent = load->getParentOp();
         parent && !isa<tt::FuncOp>(parent); parent = parent->getParentOp()) {
      if (auto loop = dyn_cast<scf::ForOp>(parent)) {
        if (!facts.inductionVars.contains(loop.getInductionVar()))
          return false;
      } else if (isa<LoopLikeOpInterface>(parent)) {
        return false;
      }
    }
    return true;
  }
};

} // namespace

TRITON_EXT_REGISTER_PASS(nvidia_stream_eviction, StreamEvictionPass);
