//===- OnChipIRCheckHazards.cpp - reads before waits, overwrites in flight ===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Two mistakes of the OnChip model (language/OnChip/README.md, "who waits on
// what") that are silent on the GPU, checked where one block shows them
// (issue 31). Runs inside onchip_check_expect, at the end of the ttir stage
// (after inlining and CSE: helpers are inlined and the same buffer indexed
// twice is one SSA value):
//
//  1. A read of a buffer (`read`, or an `mma` operand) whose copy has not been
//     waited for: a `copy_tma` into it with no `wait` on the copy's barrier
//     since, or a `copy_async` into it whose commit group no `wait_copies`
//     has covered since (uncommitted, or more groups left in flight than
//     were committed after it). The read sees whatever the buffer held.
//
//        oc.copy_tma(buf, desc, [m, k], bar)
//        x = oc.read(buf)                 # error: before oc.wait(bar, phase)
//
//  2. An overwrite of a buffer (`copy_async`, `copy_tma`, `write`) that an
//     `mma` still in flight reads: `mma(..., pending=p)` returns with the
//     newest `p` wgmma groups running, `mma_wait(acc, q)` leaves `q`; the
//     tensor cores read the operands while the group runs. Also an
//     overwrite of a buffer a `store_tma` may still be reading (no
//     `store_wait` since that covers it).
//
//        acc = oc.mma(a_buf, b_buf, acc, pending=1)
//        oc.copy_tma(a_buf, desc, [m, k + 64], bar)   # error: in flight
//
// Statically visible means: the two ops in one block (a loop body counts,
// and also its wrap-around to the next iteration for buffers defined
// outside the loop), on the same buffer (the same value, or the same ring at
// the same constant index), with no op in between that has a region or is a
// call and contains a wait or an mma. Dynamic indices that differ are
// assumed to name different buffers (the pipelined pattern: the copy of
// stage `(kt + 1) % S` while stage `kt % S` is read), and a wait on any
// barrier that may be the copy's covers it. Nothing else is reported.
//
//===----------------------------------------------------------------------===//

#include "OnChipIRChecks.h"
#include "OnChipIRDialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "triton/Dialect/Triton/IR/Dialect.h"
#include "triton/Dialect/TritonGPU/IR/Dialect.h"
#include "triton/Dialect/TritonNvidiaGPU/IR/Dialect.h"

#include <optional>
#include <string>

namespace {
using namespace mlir;
namespace tt = mlir::triton;
namespace ttg = mlir::triton::gpu;
namespace ttng = mlir::triton::nvidia_gpu;
using mlir::triton_ext::onchip::MmaOperandOp;
using mlir::triton_ext::onchip::TmaCopyOp;
using mlir::triton_ext::onchip::TmaStoreOp;
using mlir::triton_ext::onchip::ViewOp;

constexpr const char *kMmaWaitMarker = "// triton_ext_onchip.mma_wait";

/// Which buffer (or barrier) a memdesc value is: a ring and an index into
/// it, through transposed views.
struct Key {
  Value ring, index;
  std::optional<int64_t> constant;
};

Key keyOf(Value value) {
  while (auto trans = value.getDefiningOp<ttg::MemDescTransOp>())
    value = trans.getSrc();
  Key key{value, Value(), std::nullopt};
  if (auto index = value.getDefiningOp<ttg::MemDescIndexOp>()) {
    key.ring = index.getSrc();
    key.index = index.getIndex();
    APInt c;
    if (matchPattern(key.index, m_ConstantInt(&c)))
      key.constant = c.getSExtValue();
  }
  return key;
}

/// Certainly the same buffer.
bool mustAlias(const Key &a, const Key &b) {
  if (a.ring != b.ring)
    return false;
  if (a.index == b.index)
    return true;
  return a.constant && b.constant && *a.constant == *b.constant;
}

/// Possibly the same buffer: rings from two allocations never overlap, and
/// two constant indices that differ name two buffers.
bool mayAlias(const Key &a, const Key &b) {
  if (a.ring != b.ring)
    return !a.ring.getDefiningOp<ttg::LocalAllocOp>() ||
           !b.ring.getDefiningOp<ttg::LocalAllocOp>();
  return !(a.constant && b.constant && *a.constant != *b.constant);
}

/// Whether `key` names the same buffer in every iteration of `loop`.
bool invariantIn(const Key &key, Operation *loop) {
  auto outside = [&](Value v) {
    return !v || !loop->isAncestor(v.getParentRegion()->getParentOp());
  };
  return outside(key.ring) && outside(key.index);
}

/// "line N" of the user's source (Triton wraps it in name and call-site
/// locations).
std::string lineOf(Operation *op) {
  if (auto loc = op->getLoc()->findInstanceOf<FileLineColLoc>())
    return "line " + std::to_string(loc.getLine());
  return "an earlier line";
}

/// A copy not yet waited for.
struct Copy {
  Operation *op;
  Key buffer;
  bool tma;
  Key barrier;                  // tma
  std::optional<int64_t> group; // cp.async: commit sequence number
};

/// An asynchronous reader of buffers: an mma (wgmma group) or a TMA store.
struct Reader {
  Operation *op;
  SmallVector<Key, 2> buffers;
  int64_t pending; // mma: the pending it was issued with
};

struct State {
  SmallVector<Copy> copies;
  int64_t commits = 0;
  SmallVector<Reader> mmas;   // in issue order, the newest last
  SmallVector<Reader> stores; // likewise
  void clear() {
    copies.clear();
    mmas.clear();
    stores.clear();
  }
};

/// Keeps the newest `n` entries.
void keepNewest(SmallVector<Reader> &readers, int64_t n) {
  if (int64_t(readers.size()) > n)
    readers.erase(readers.begin(), readers.end() - n);
}

class Checker {
public:
  bool ok = true;

  void checkBlock(Block &block) {
    State state;
    run(block, state, /*carried=*/false);
    Operation *loop = block.getParentOp();
    if (!isa_and_nonnull<scf::ForOp>(loop))
      return;
    // The next iteration: what is still in flight at the end of the body on
    // buffers that are the same in every iteration.
    auto invariant = [&](const Key &key) { return invariantIn(key, loop); };
    llvm::erase_if(state.copies,
                   [&](const Copy &c) { return !invariant(c.buffer); });
    for (auto *readers : {&state.mmas, &state.stores})
      for (Reader &r : *readers)
        llvm::erase_if(r.buffers, [&](const Key &k) { return !invariant(k); });
    run(block, state, /*carried=*/true);
  }

private:
  void report(Operation *at, const Twine &message, Operation *other,
              const Twine &note) {
    InFlightDiagnostic diag = at->emitError()
                              << "triton_ext_onchip: " << message;
    diag.attachNote(other->getLoc()) << note;
    ok = false;
  }

  /// A read of `value` at `op`: an error if a copy into it is not waited.
  void read(Operation *op, Value value, State &state, bool carried) {
    Key key = keyOf(value);
    for (const Copy &copy : state.copies) {
      if (!mustAlias(copy.buffer, key))
        continue;
      std::string how =
          copy.tma ? "wait on its barrier first (oc.wait(bar, phase))"
          : copy.group
              ? "wait for its group first (oc.wait_copies(" +
                    std::to_string(state.commits - 1 - *copy.group) +
                    ") or fewer)"
              : "commit its group and wait for it first (oc.commit(), then "
                "oc.wait_copies(n))";
      report(op,
             Twine("this reads a buffer before the wait for the ") +
                 (copy.tma ? "copy_tma" : "copy_async") + " into it at " +
                 lineOf(copy.op) + (carried ? " (previous iteration)" : "") +
                 ": it may read stale data; " + how,
             copy.op, "the copy into the buffer");
      return;
    }
  }

  /// An overwrite of `value` at `op`: an error if an mma in flight or a TMA
  /// store not waited for reads it.
  void overwrite(Operation *op, Value value, State &state, bool carried) {
    Key key = keyOf(value);
    for (const Reader &mma : state.mmas) {
      if (!llvm::any_of(mma.buffers,
                        [&](const Key &k) { return mustAlias(k, key); }))
        continue;
      report(op,
             Twine("this overwrites a buffer that the mma at ") +
                 lineOf(mma.op) + (carried ? " (previous iteration)" : "") +
                 " may still be reading: it was issued with pending=" +
                 Twine(mma.pending) +
                 " and no wait since lets it finish; wait first "
                 "(oc.mma_wait(acc, 0), or an mma with a smaller pending) or "
                 "overwrite the buffer of an mma that has finished",
             mma.op, "the mma that reads the buffer");
      return;
    }
    for (const Reader &store : state.stores) {
      if (!llvm::any_of(store.buffers,
                        [&](const Key &k) { return mustAlias(k, key); }))
        continue;
      report(op,
             Twine("this overwrites a buffer that the store_tma at ") +
                 lineOf(store.op) + (carried ? " (previous iteration)" : "") +
                 " may still be reading; oc.store_wait(0) first",
             store.op, "the store_tma that reads the buffer");
      return;
    }
  }

  static bool isMmaWait(Operation *op) {
    auto inlineAsm = dyn_cast<tt::ElementwiseInlineAsmOp>(op);
    return inlineAsm && inlineAsm.getAsmString().starts_with(kMmaWaitMarker);
  }

  static std::optional<int64_t> mmaWaitPending(Operation *op) {
    unsigned pending = 0;
    if (cast<tt::ElementwiseInlineAsmOp>(op)
            .getAsmString()
            .drop_front(StringRef(kMmaWaitMarker).size())
            .trim()
            .getAsInteger(10, pending))
      return std::nullopt;
    return pending;
  }

  /// Whether a region op or call may wait, commit, or run an mma where this
  /// block does not show it.
  static bool mayHide(Operation &op) {
    if (isa<CallOpInterface>(op))
      return true;
    if (op.getNumRegions() == 0)
      return false;
    return op
        .walk([](Operation *inner) {
          if (isa<CallOpInterface, ttg::AsyncWaitOp, ttg::AsyncCommitGroupOp,
                  ttng::WaitBarrierOp, tt::DotOp, ttng::TMAStoreWaitOp,
                  ttng::WarpGroupDotWaitOp>(inner) ||
              isMmaWait(inner))
            return WalkResult::interrupt();
          return WalkResult::advance();
        })
        .wasInterrupted();
  }

  void run(Block &block, State &state, bool carried) {
    for (Operation &op : block) {
      if (auto store = dyn_cast<tt::StoreOp>(op)) {
        auto view = store.getPtr().getDefiningOp<ViewOp>();
        if (!view)
          continue;
        overwrite(&op, view.getBuffer(), state, carried);
        if (view.getPurpose() == "copy" && !carried)
          state.copies.push_back(
              {&op, keyOf(view.getBuffer()), false, Key{}, std::nullopt});
        continue;
      }
      if (auto copy = dyn_cast<TmaCopyOp>(op)) {
        overwrite(&op, copy.getBuffer(), state, carried);
        if (!carried)
          state.copies.push_back({&op, keyOf(copy.getBuffer()), true,
                                  keyOf(copy.getBarrier()), std::nullopt});
        continue;
      }
      if (isa<ttg::AsyncCommitGroupOp>(op)) {
        for (Copy &copy : state.copies)
          if (!copy.tma && !copy.group)
            copy.group = state.commits;
        ++state.commits;
        continue;
      }
      if (auto wait = dyn_cast<ttg::AsyncWaitOp>(op)) {
        int64_t newestLeft = wait.getNum();
        llvm::erase_if(state.copies, [&](const Copy &c) {
          return !c.tma && c.group && *c.group < state.commits - newestLeft;
        });
        continue;
      }
      if (auto wait = dyn_cast<ttng::WaitBarrierOp>(op)) {
        Key bar = keyOf(wait.getAlloc());
        llvm::erase_if(state.copies, [&](const Copy &c) {
          return c.tma && mayAlias(c.barrier, bar);
        });
        continue;
      }
      if (auto load = dyn_cast<ttg::LocalLoadOp>(op)) {
        read(&op, load.getSrc(), state, carried);
        continue;
      }
      if (auto dot = dyn_cast<tt::DotOp>(op)) {
        auto a = dot.getA().getDefiningOp<MmaOperandOp>();
        auto b = dot.getB().getDefiningOp<MmaOperandOp>();
        if (!b) { // Triton's own dot: a wgmma it waits for entirely
          state.mmas.clear();
          continue;
        }
        Reader mma{&op, {}, b.getPending()};
        for (MmaOperandOp operand : {a, b}) {
          if (!operand)
            continue;
          read(&op, operand.getBuffer(), state, carried);
          mma.buffers.push_back(keyOf(operand.getBuffer()));
        }
        if (!carried)
          state.mmas.push_back(mma);
        keepNewest(state.mmas, b.getPending());
        continue;
      }
      if (isMmaWait(&op)) {
        std::optional<int64_t> pending = mmaWaitPending(&op);
        keepNewest(state.mmas, pending ? *pending : 0);
        continue;
      }
      if (auto store = dyn_cast<TmaStoreOp>(op)) {
        if (!carried)
          state.stores.push_back({&op, {keyOf(store.getBuffer())}, 0});
        continue;
      }
      if (auto wait = dyn_cast<ttng::TMAStoreWaitOp>(op)) {
        keepNewest(state.stores, wait.getPendings());
        continue;
      }
      if (mayHide(op))
        state.clear();
    }
  }
};
} // namespace

LogicalResult mlir::triton_ext::onchip::checkHazards(ModuleOp module) {
  Checker checker;
  module.walk([&](Block *block) { checker.checkBlock(*block); });
  return success(checker.ok);
}
