//===- OnChipIRLower.cpp - Carriers to TritonGPU ops ----------------------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// `onchip_lower` runs in the ttgir stage right after Triton's coalesce pass,
// the first point where every tensor has a register layout and global loads
// have their coalesced layout. language/OnChip wrote, at ttir:
//
//   read(buf)          ttg.local_load %buf -> tensor<..>        (no layout)
//   write(buf, v)      tt.store (view "store" %buf), %v
//   copy_async(buf,p)  tt.store (view "copy" %buf), (tt.load %p, %m, %o)
//   mma(a, b, c)       tt.dot (mma_operand %a), (mma_operand %b), %c
//
// convert-triton-to-tritongpu re-typed the Triton ops and put a
// ttg.convert_layout between each unconverted producer (our views, the
// layout-less local_load) and its converted user. This pass replaces each
// carrier by the TritonGPU / TritonNvidiaGPU op it stands for. Every rewrite
// keeps the program's meaning because the carrier was only ever a spelling of
// that op: the views' pointers are never dereferenced, and the values stored
// or multiplied are the ones the new op stores or multiplies.
//
//===----------------------------------------------------------------------===//

#include "OnChipIRDialect.h"

#include "triton-ext/PassInfra.h"

#include "mlir/IR/Builders.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "triton/Dialect/Triton/IR/Dialect.h"
#include "triton/Dialect/TritonGPU/IR/Dialect.h"
#include "triton/Dialect/TritonNvidiaGPU/IR/Dialect.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "triton-ext-onchip-lower"

namespace mlir::triton_ext {
#define GEN_PASS_DECL_TRITONEXTONCHIPLOWER
#define GEN_PASS_DEF_TRITONEXTONCHIPLOWER
#include "Passes.h.inc"
} // namespace mlir::triton_ext

namespace {
using namespace mlir;
namespace tt = mlir::triton;
namespace ttg = mlir::triton::gpu;
namespace ttng = mlir::triton::nvidia_gpu;
using mlir::triton_ext::onchip::DeclareBarriersOp;
using mlir::triton_ext::onchip::MmaOperandOp;
using mlir::triton_ext::onchip::TmaCopyOp;
using mlir::triton_ext::onchip::TmaStoreOp;
using mlir::triton_ext::onchip::ViewOp;

/// The asm string of the elementwise_inline_asm that stands for mma_wait
/// (language/OnChip writes it; it never reaches PTX).
constexpr const char *kMmaWaitMarker = "// triton_ext_onchip.mma_wait";
/// Marks the wgmma ops and waits this pass creates (read by
/// onchip_restore_waits).
constexpr const char *kMmaAttr = "triton_ext_onchip.mma";

/// The value before any chain of ttg.convert_layout: layout conversions do
/// not change which elements a tensor holds.
Value skipConverts(Value value) {
  while (auto cvt = value.getDefiningOp<ttg::ConvertLayoutOp>())
    value = cvt.getSrc();
  return value;
}

/// Erase `op`, then every carrier feeding it that became dead: layout
/// conversions, views, and the tt.load of an asynchronous copy.
void eraseWithDeadConverts(Operation *op) {
  SmallVector<Operation *> worklist = {op};
  // Each producer is queued once, so an op is never erased twice; one that
  // still has another user when reached stays (later cleanups drop it).
  llvm::SmallPtrSet<Operation *, 8> queued = {op};
  while (!worklist.empty()) {
    Operation *current = worklist.pop_back_val();
    if (!current->use_empty())
      continue;
    SmallVector<Operation *> producers;
    for (Value operand : current->getOperands())
      if (Operation *def = operand.getDefiningOp())
        if (isa<ttg::ConvertLayoutOp, ViewOp, MmaOperandOp, tt::LoadOp>(def) &&
            queued.insert(def).second)
          producers.push_back(def);
    current->erase();
    worklist.append(producers.begin(), producers.end());
  }
}

/// Warps of a Hopper MMA layout for an MxN accumulator: one warp group (4
/// warps) along M, further warp groups along M while each still gets at
/// least 64 rows, the rest along N (as Triton's accelerate-matmul does).
SmallVector<unsigned> mmaWarps(int64_t m, int64_t n, unsigned numWarps) {
  SmallVector<unsigned> warps = {4, 1};
  while (warps[0] * warps[1] < numWarps) {
    if (m >= 16 * warps[0] * 2)
      warps[0] *= 2;
    else
      warps[1] *= 2;
  }
  return warps;
}

/// The widest wgmma N (a multiple of 8, at most 256) that divides the
/// per-warp N extent.
unsigned mmaInstrN(int64_t nPerWarps) {
  for (unsigned n = 256; n >= 8; n -= 8)
    if (nPerWarps % n == 0)
      return n;
  return 8;
}

/// Whether every write to the allocation behind `buffer` (through any
/// memdesc_index of it) is a TMA copy. Unknown uses count as other writes.
bool writtenOnlyByTma(Value buffer) {
  // Views (an index into the ring, a transposed view) share the allocation.
  while (isa_and_nonnull<ttg::MemDescIndexOp, ttg::MemDescTransOp>(
      buffer.getDefiningOp()))
    buffer = buffer.getDefiningOp()->getOperand(0);
  if (!buffer.getDefiningOp<ttg::LocalAllocOp>())
    return false;
  SmallVector<Value> worklist = {buffer};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (isa<ttg::MemDescIndexOp, ttg::MemDescTransOp>(user)) {
        worklist.push_back(user->getResult(0));
        continue;
      }
      // Captured by warp-specialized partitions: follow it into each.
      if (auto partitions = dyn_cast<ttg::WarpSpecializePartitionsOp>(user)) {
        for (Region &region : partitions.getPartitionRegions())
          worklist.push_back(
              region.front().getArgument(use.getOperandNumber()));
        continue;
      }
      if (isa<ttng::AsyncTMACopyGlobalToLocalOp, ttng::WarpGroupDotOp,
              ttng::WarpGroupDotWaitOp, MmaOperandOp, ttg::LocalLoadOp,
              ttng::AsyncTMACopyLocalToGlobalOp, TmaStoreOp>(user))
        continue; // TMA writes; the rest only read
      if (auto copy = dyn_cast<TmaCopyOp>(user))
        if (use.getOperandNumber() == 2)
          continue;
      return false;
    }
  }
  return true;
}

class OnChipLowerPass
    : public mlir::triton_ext::impl::TritonExtOnChipLowerBase<OnChipLowerPass> {
public:
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool ok = true;
    ok &= lowerLocalLoads(module);
    ok &= lowerStores(module);
    ok &= lowerTmaCopies(module);
    ok &= lowerDots(module);
    carryMmaThroughLoops(module);
    ok &= lowerMmaWaits(module);
    // The barrier check was the verifier's; the marker has done its job.
    SmallVector<DeclareBarriersOp> marks;
    module.walk([&](DeclareBarriersOp op) { marks.push_back(op); });
    for (DeclareBarriersOp op : marks)
      op->erase();
    ok &= checkNothingLeft(module);
    if (!ok)
      signalPassFailure();
  }

private:
  /// A layout-less ttg.local_load is only ever read through the
  /// convert_layout the conversion put in front of each user: load straight
  /// into each requested layout instead. The new loads sit where the old one
  /// was, so they read the buffer at the same program point.
  bool lowerLocalLoads(ModuleOp module) {
    SmallVector<ttg::LocalLoadOp> loads;
    module.walk([&](ttg::LocalLoadOp load) {
      if (!load.getType().getEncoding())
        loads.push_back(load);
    });
    bool ok = true;
    for (ttg::LocalLoadOp load : loads) {
      OpBuilder builder(load);
      for (Operation *user : llvm::make_early_inc_range(load->getUsers())) {
        auto cvt = dyn_cast<ttg::ConvertLayoutOp>(user);
        if (!cvt) {
          user->emitError() << "triton_ext_onchip: a buffer read is used by '"
                            << user->getName()
                            << "', which has no register layout to read into";
          ok = false;
          continue;
        }
        auto fresh = ttg::LocalLoadOp::create(builder, load.getLoc(),
                                              cvt.getType(), load.getSrc());
        cvt.replaceAllUsesWith(fresh.getResult());
        cvt->erase();
      }
      if (load->use_empty())
        load->erase();
    }
    return ok;
  }

  bool lowerStores(ModuleOp module) {
    SmallVector<tt::StoreOp> stores;
    module.walk([&](tt::StoreOp store) {
      if (skipConverts(store.getPtr()).getDefiningOp<ViewOp>())
        stores.push_back(store);
    });
    bool ok = true;
    for (tt::StoreOp store : stores) {
      auto view = skipConverts(store.getPtr()).getDefiningOp<ViewOp>();
      OpBuilder builder(store);
      if (store.getMask()) {
        store.emitError() << "triton_ext_onchip: a masked store into a buffer "
                             "is not supported";
        ok = false;
        continue;
      }
      if (view.getPurpose() == "store") {
        ttg::LocalStoreOp::create(builder, store.getLoc(), store.getValue(),
                                  view.getBuffer());
        eraseWithDeadConverts(store);
        continue;
      }
      // purpose == "copy": the stored value is the carrier load.
      auto load = skipConverts(store.getValue()).getDefiningOp<tt::LoadOp>();
      if (!load) {
        store.emitError() << "triton_ext_onchip: an asynchronous copy must "
                             "store the result of its own tt.load";
        ok = false;
        continue;
      }
      auto copy = ttg::AsyncCopyGlobalToLocalOp::create(
          builder, store.getLoc(), load.getPtr(), view.getBuffer(),
          load.getMask(), load.getOther(), load.getCachePolicyAttr(),
          load.getIsVolatile());
      (void)copy;
      // Also erases the carrier load (and its conversions) once unused.
      eraseWithDeadConverts(store);
    }
    return ok;
  }

  /// Give descriptor `value` the type `typed` where it is defined: a kernel
  /// argument (and the function type), a tt.make_tensor_descriptor, or a
  /// capture of warp-specialized partitions (every partition's block
  /// argument, then the captured value, recursively).
  static LogicalResult retypeDescriptor(Value value, tt::TensorDescType typed) {
    if (auto make = value.getDefiningOp<tt::MakeTensorDescOp>()) {
      make.getResult().setType(typed);
      return success();
    }
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg)
      return failure();
    Operation *owner = arg.getOwner()->getParentOp();
    if (auto func = dyn_cast<tt::FuncOp>(owner)) {
      if (arg.getOwner() != &func.getBody().front())
        return failure();
      arg.setType(typed);
      SmallVector<Type> inputs(func.getArgumentTypes());
      inputs[arg.getArgNumber()] = typed;
      func.setType(FunctionType::get(func.getContext(), inputs,
                                     func.getResultTypes()));
      return success();
    }
    if (auto partitions = dyn_cast<ttg::WarpSpecializePartitionsOp>(owner)) {
      unsigned index = arg.getArgNumber();
      for (Region &region : partitions.getPartitionRegions())
        region.front().getArgument(index).setType(typed);
      return retypeDescriptor(partitions.getExplicitCaptures()[index], typed);
    }
    return failure();
  }

  /// TMA needs the descriptor's shared layout to be the buffer's. A
  /// descriptor from the front end has none yet, so give it the buffer's
  /// (NVMMA) layout where it is defined: on the kernel argument (the host
  /// builds the tensor map from the compiled signature) or on its
  /// tt.make_tensor_descriptor. Legal because the layout only says how the
  /// copy lands in shared memory, and it is chosen to be the one every
  /// reader of that buffer (read, mma) already assumes.
  static bool giveDescriptorLayout(Operation *op, Value descValue,
                                   Value bufferValue, StringRef what) {
    auto buffer = cast<ttg::MemDescType>(bufferValue.getType());
    auto desc = cast<tt::TensorDescType>(descValue.getType());
    Attribute layout = buffer.getEncoding();
    if (!desc.getSharedLayout()) {
      auto typed = tt::TensorDescType::get(desc.getShape(),
                                           desc.getElementType(), layout);
      if (failed(retypeDescriptor(descValue, typed))) {
        op->emitError() << "triton_ext_onchip: " << what
                        << " needs a descriptor that is a kernel argument or "
                           "made in the kernel";
        return false;
      }
    } else if (desc.getSharedLayout() != layout) {
      op->emitError() << "triton_ext_onchip: this descriptor already moves "
                         "buffers of layout "
                      << desc.getSharedLayout() << ", this buffer has "
                      << layout;
      return false;
    }
    return true;
  }

  bool lowerTmaCopies(ModuleOp module) {
    SmallVector<TmaCopyOp> copies;
    module.walk([&](TmaCopyOp op) { copies.push_back(op); });
    bool ok = true;
    for (TmaCopyOp op : copies) {
      if (!giveDescriptorLayout(op, op.getDesc(), op.getBuffer(), "copy_tma")) {
        ok = false;
        continue;
      }
      OpBuilder builder(op);
      ttng::AsyncTMACopyGlobalToLocalOp::create(
          builder, op.getLoc(), op.getDesc(), op.getCoords(), op.getBarrier(),
          op.getBuffer(), op.getPred());
      op->erase();
    }
    // TMA stores (store_tma): the buffer may have been written from
    // registers (write), whose generic-proxy stores the TMA unit (async
    // proxy) sees only after fence.proxy.async; Triton's barrier pass then
    // puts the block barrier between the writes and the store, as for its
    // own descriptor stores.
    SmallVector<TmaStoreOp> stores;
    module.walk([&](TmaStoreOp op) { stores.push_back(op); });
    for (TmaStoreOp op : stores) {
      if (!giveDescriptorLayout(op, op.getDesc(), op.getBuffer(),
                                "store_tma")) {
        ok = false;
        continue;
      }
      OpBuilder builder(op);
      ttng::FenceAsyncSharedOp::create(builder, op.getLoc(),
                                       /*bCluster=*/false);
      ttng::AsyncTMACopyLocalToGlobalOp::create(
          builder, op.getLoc(), op.getDesc(), op.getCoords(), op.getBuffer());
      op->erase();
    }
    return ok;
  }

  bool lowerDots(ModuleOp module) {
    SmallVector<tt::DotOp> dots;
    module.walk([&](tt::DotOp dot) {
      if (skipConverts(dot.getB()).getDefiningOp<MmaOperandOp>())
        dots.push_back(dot);
    });
    bool ok = true;
    auto numWarps = module->getAttrOfType<IntegerAttr>("ttg.num-warps");
    for (tt::DotOp dot : dots) {
      // B is always a buffer; A is a buffer or, for mma(tensor, buf, acc),
      // a register tensor (wgmma reads A from registers too).
      auto a = skipConverts(dot.getA()).getDefiningOp<MmaOperandOp>();
      auto b = skipConverts(dot.getB()).getDefiningOp<MmaOperandOp>();
      if (!numWarps || numWarps.getInt() % 4 != 0) {
        dot.emitError() << "triton_ext_onchip: mma needs num_warps to be a "
                           "multiple of 4 (a warp group)";
        ok = false;
        continue;
      }
      auto accType = cast<RankedTensorType>(dot.getC().getType());
      int64_t m = accType.getDimSize(0), n = accType.getDimSize(1);
      SmallVector<unsigned> warps = mmaWarps(m, n, numWarps.getInt());
      unsigned bits = b.getType().getElementTypeBitWidth();
      SmallVector<unsigned> instr = {16, mmaInstrN(n / warps[1]), 256 / bits};
      MLIRContext *ctx = module.getContext();
      auto cga = ttg::CGAEncodingAttr::get1CTALayout(ctx, 2);
      auto mma = ttg::NvidiaMmaEncodingAttr::get(ctx, 3, 0, warps, cga, instr);
      auto mmaType = RankedTensorType::get(accType.getShape(),
                                           accType.getElementType(), mma);
      OpBuilder builder(dot);
      Location loc = dot.getLoc();
      // Buffers written through the generic proxy (st.shared, cp.async) are
      // seen by wgmma (async proxy) only after a proxy fence, which Triton's
      // fence insertion adds only for operands it allocated itself: fence
      // here. Buffers written only by TMA (async proxy, ordered by the
      // mbarrier wait) need none.
      if ((a && !writtenOnlyByTma(a.getBuffer())) ||
          !writtenOnlyByTma(b.getBuffer()))
        ttng::FenceAsyncSharedOp::create(builder, loc, /*bCluster=*/false);
      Value acc =
          ttg::ConvertLayoutOp::create(builder, loc, mmaType, dot.getC());
      // Buffer operands are read by the tensor cores straight from shared
      // memory (their NVMMA layouts were chosen at allocation); a register A
      // is converted to the wgmma operand layout of this MMA layout.
      Value lhs = a ? a.getBuffer() : Value();
      if (!a) {
        auto aType = cast<RankedTensorType>(dot.getA().getType());
        auto operand = ttg::DotOperandEncodingAttr::get(
            ctx, 0, mma, aType.getElementType());
        lhs = ttg::ConvertLayoutOp::create(
            builder, loc,
            RankedTensorType::get(aType.getShape(), aType.getElementType(),
                                  operand),
            dot.getA());
      }
      auto wgmma = ttng::WarpGroupDotOp::create(
          builder, loc, mmaType, lhs, b.getBuffer(), acc,
          /*useC=*/Value(), dot.getInputPrecision(),
          dot.getMaxNumImpreciseAcc(), /*isAsync=*/true);
      auto wait = ttng::WarpGroupDotWaitOp::create(
          builder, loc, TypeRange{mmaType}, ValueRange{wgmma.getResult()},
          static_cast<uint32_t>(b.getPending()));
      wgmma->setAttr(kMmaAttr, builder.getUnitAttr());
      wait->setAttr(kMmaAttr, builder.getUnitAttr());
      Value back = ttg::ConvertLayoutOp::create(builder, loc, accType,
                                                wait.getResult(0));
      dot.getResult().replaceAllUsesWith(back);
      eraseWithDeadConverts(dot);
    }
    return ok;
  }

  /// An accumulator that a loop carries must stay in its MMA layout from one
  /// iteration to the next: with `pending > 0` the wgmma that produced it is
  /// still writing those registers when the iteration ends, so converting it
  /// to the loop's (blocked) layout there would read them too early. For
  /// each scf.for whose yielded value is (through layout conversions) the
  /// result of one of our wgmma waits, re-type that iter_arg and result to
  /// the MMA layout, converting only at the loop's edges: the values are the
  /// same, only where they live in registers changes. Inner loops first, so
  /// an outer loop sees the already re-typed inner result.
  void carryMmaThroughLoops(ModuleOp module) {
    SmallVector<scf::ForOp> loops;
    module.walk([&](scf::ForOp loop) { loops.push_back(loop); }); // post-order
    for (scf::ForOp loop : loops) {
      auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
      for (unsigned i = 0; i < loop.getNumRegionIterArgs(); ++i) {
        Value yielded = skipConverts(yield.getOperand(i));
        auto mmaType = dyn_cast<RankedTensorType>(yielded.getType());
        auto carried = dyn_cast<RankedTensorType>(loop.getResult(i).getType());
        if (!mmaType || !carried || mmaType == carried ||
            !isa_and_nonnull<ttg::NvidiaMmaEncodingAttr>(mmaType.getEncoding()))
          continue;
        Operation *def = yielded.getDefiningOp();
        // An inner loop's MMA-typed result was re-typed by this walk.
        if (!isa_and_nonnull<ttng::WarpGroupDotWaitOp, ttng::WarpGroupDotOp,
                             scf::ForOp>(def))
          continue;
        Location loc = loop.getLoc();
        // Edge in: convert the initial value once, before the loop.
        OpBuilder before(loop);
        OpOperand &init = loop.getInitArgsMutable()[i];
        init.set(ttg::ConvertLayoutOp::create(before, loc, mmaType, init.get()));
        // Inside: old users read a converted copy; conversions back to the
        // MMA layout read the argument itself.
        BlockArgument arg = loop.getRegionIterArg(i);
        OpBuilder body = OpBuilder::atBlockBegin(loop.getBody());
        auto inside = ttg::ConvertLayoutOp::create(body, loc, carried, arg);
        arg.replaceAllUsesExcept(inside.getResult(), inside);
        arg.setType(mmaType);
        for (Operation *user : llvm::make_early_inc_range(inside->getUsers()))
          if (auto cvt = dyn_cast<ttg::ConvertLayoutOp>(user))
            if (cvt.getType() == mmaType) {
              cvt.replaceAllUsesWith(arg);
              cvt->erase();
            }
        if (inside->use_empty())
          inside->erase();
        // Edge out: the yield passes the MMA value, users after the loop
        // get it converted.
        Value old = yield.getOperand(i);
        yield->setOperand(i, yielded);
        if (Operation *oldDef = old.getDefiningOp())
          if (old.use_empty() && isa<ttg::ConvertLayoutOp>(oldDef))
            eraseWithDeadConverts(oldDef);
        OpBuilder after(loop->getBlock(), std::next(loop->getIterator()));
        Value result = loop.getResult(i);
        auto outside = ttg::ConvertLayoutOp::create(after, loc, carried, result);
        result.replaceAllUsesExcept(outside.getResult(), outside);
        result.setType(mmaType);
      }
    }
  }

  /// `mma_wait(acc, n)` is an elementwise_inline_asm whose asm string is a
  /// marker (the one op with a tensor operand that the conversion re-types
  /// generically). It becomes ttng.warp_group_dot_wait on the accumulator
  /// *in its MMA layout*: waiting on a converted copy would read the
  /// registers of a wgmma still in flight.
  bool lowerMmaWaits(ModuleOp module) {
    SmallVector<tt::ElementwiseInlineAsmOp> waits;
    module.walk([&](tt::ElementwiseInlineAsmOp op) {
      if (op.getAsmString().starts_with(kMmaWaitMarker))
        waits.push_back(op);
    });
    bool ok = true;
    for (tt::ElementwiseInlineAsmOp op : waits) {
      unsigned pending = 0;
      if (op.getAsmString()
              .drop_front(StringRef(kMmaWaitMarker).size())
              .trim()
              .getAsInteger(10, pending) ||
          op.getArgs().size() != 1 || op.getNumResults() != 1) {
        op.emitError() << "triton_ext_onchip: malformed mma_wait marker";
        ok = false;
        continue;
      }
      Value acc = skipConverts(op.getArgs()[0]);
      auto accType = dyn_cast<RankedTensorType>(acc.getType());
      if (!accType || !isa_and_nonnull<ttg::NvidiaMmaEncodingAttr>(
                          accType.getEncoding())) {
        op.emitError() << "triton_ext_onchip: mma_wait expects the result of "
                          "an mma";
        ok = false;
        continue;
      }
      OpBuilder builder(op);
      auto wait = ttng::WarpGroupDotWaitOp::create(
          builder, op.getLoc(), TypeRange{accType}, ValueRange{acc}, pending);
      wait->setAttr(kMmaAttr, builder.getUnitAttr());
      Value back = ttg::ConvertLayoutOp::create(
          builder, op.getLoc(), op->getResult(0).getType(), wait.getResult(0));
      op->getResult(0).replaceAllUsesWith(back);
      eraseWithDeadConverts(op);
    }
    return ok;
  }

  /// Any placeholder still used means a carrier was used in a way no
  /// rewrite above covers; report it at the user's line.
  bool checkNothingLeft(ModuleOp module) {
    bool ok = true;
    SmallVector<Operation *> dead;
    module.walk([&](Operation *op) {
      if (!isa<ViewOp, MmaOperandOp, TmaCopyOp, TmaStoreOp>(op))
        return;
      if (op->use_empty()) {
        dead.push_back(op);
        return;
      }
      // Report at the op the user wrote, not at a conversion Triton added.
      SmallVector<Operation *> users(op->getUsers());
      while (!users.empty()) {
        Operation *user = users.pop_back_val();
        if (isa<ttg::ConvertLayoutOp>(user)) {
          users.append(user->getUsers().begin(), user->getUsers().end());
          continue;
        }
        user->emitError() << "triton_ext_onchip: '" << op->getName()
                          << "' reaches '" << user->getName()
                          << "', which onchip_lower cannot lower";
      }
      ok = false;
    });
    for (Operation *op : dead)
      op->erase();
    return ok;
  }
};
} // namespace

TRITON_EXT_REGISTER_PASS(onchip_lower, OnChipLowerPass);
