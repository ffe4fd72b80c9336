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
using mlir::triton_ext::onchip::MmaOperandOp;
using mlir::triton_ext::onchip::ViewOp;

/// The value before any chain of ttg.convert_layout: layout conversions do
/// not change which elements a tensor holds.
Value skipConverts(Value value) {
  while (auto cvt = value.getDefiningOp<ttg::ConvertLayoutOp>())
    value = cvt.getSrc();
  return value;
}

/// Erase `op` and then every ttg.convert_layout feeding it that became dead.
void eraseWithDeadConverts(Operation *op) {
  SmallVector<Value> operands(op->getOperands());
  op->erase();
  while (!operands.empty()) {
    Value v = operands.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (!def || !v.use_empty())
      continue;
    if (isa<ttg::ConvertLayoutOp, ViewOp, MmaOperandOp, tt::LoadOp>(def)) {
      operands.append(def->getOperands().begin(), def->getOperands().end());
      def->erase();
    }
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

class OnChipLowerPass
    : public mlir::triton_ext::impl::TritonExtOnChipLowerBase<OnChipLowerPass> {
public:
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool ok = true;
    ok &= lowerLocalLoads(module);
    ok &= lowerStores(module);
    ok &= lowerDots(module);
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
      eraseWithDeadConverts(store);
      if (load->use_empty())
        load->erase();
    }
    return ok;
  }

  bool lowerDots(ModuleOp module) {
    SmallVector<tt::DotOp> dots;
    module.walk([&](tt::DotOp dot) {
      if (skipConverts(dot.getA()).getDefiningOp<MmaOperandOp>())
        dots.push_back(dot);
    });
    bool ok = true;
    auto numWarps = module->getAttrOfType<IntegerAttr>("ttg.num-warps");
    for (tt::DotOp dot : dots) {
      auto a = skipConverts(dot.getA()).getDefiningOp<MmaOperandOp>();
      auto b = skipConverts(dot.getB()).getDefiningOp<MmaOperandOp>();
      if (!b) {
        dot.emitError() << "triton_ext_onchip: both operands of an mma must "
                           "be buffers";
        ok = false;
        continue;
      }
      if (!numWarps || numWarps.getInt() % 4 != 0) {
        dot.emitError() << "triton_ext_onchip: mma needs num_warps to be a "
                           "multiple of 4 (a warp group)";
        ok = false;
        continue;
      }
      auto accType = cast<RankedTensorType>(dot.getC().getType());
      int64_t m = accType.getDimSize(0), n = accType.getDimSize(1);
      SmallVector<unsigned> warps = mmaWarps(m, n, numWarps.getInt());
      unsigned bits = a.getType().getElementTypeBitWidth();
      SmallVector<unsigned> instr = {16, mmaInstrN(n / warps[1]), 256 / bits};
      MLIRContext *ctx = module.getContext();
      auto cga = ttg::CGAEncodingAttr::get1CTALayout(ctx, 2);
      auto mma = ttg::NvidiaMmaEncodingAttr::get(ctx, 3, 0, warps, cga, instr);
      auto mmaType = RankedTensorType::get(accType.getShape(),
                                           accType.getElementType(), mma);
      OpBuilder builder(dot);
      Location loc = dot.getLoc();
      Value acc =
          ttg::ConvertLayoutOp::create(builder, loc, mmaType, dot.getC());
      // The operands are read by the tensor cores straight from shared
      // memory; the buffers' NVMMA layouts were chosen at allocation.
      auto wgmma = ttng::WarpGroupDotOp::create(
          builder, loc, mmaType, a.getBuffer(), b.getBuffer(), acc,
          /*useC=*/Value(), dot.getInputPrecision(),
          dot.getMaxNumImpreciseAcc(), /*isAsync=*/true);
      auto wait = ttng::WarpGroupDotWaitOp::create(
          builder, loc, TypeRange{mmaType}, ValueRange{wgmma.getResult()},
          static_cast<uint32_t>(a.getPending()));
      Value back = ttg::ConvertLayoutOp::create(builder, loc, accType,
                                                wait.getResult(0));
      dot.getResult().replaceAllUsesWith(back);
      eraseWithDeadConverts(dot);
    }
    return ok;
  }

  /// Any placeholder still used means a carrier was used in a way no
  /// rewrite above covers; report it at the user's line.
  bool checkNothingLeft(ModuleOp module) {
    bool ok = true;
    SmallVector<Operation *> dead;
    module.walk([&](Operation *op) {
      if (!isa<ViewOp, MmaOperandOp>(op))
        return;
      if (op->use_empty()) {
        dead.push_back(op);
        return;
      }
      for (Operation *user : op->getUsers())
        user->emitError() << "triton_ext_onchip: '" << op->getName()
                          << "' reaches '" << user->getName()
                          << "', which onchip_lower cannot lower";
      ok = false;
    });
    for (Operation *op : dead)
      op->erase();
    return ok;
  }
};
} // namespace

TRITON_EXT_REGISTER_PASS(onchip_lower, OnChipLowerPass);
