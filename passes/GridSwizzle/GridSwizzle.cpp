//===- GridSwizzle.cpp - L2-friendly program order for 2-D grids ----------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// A GEMM written the simple way, `pid_m = program_id(0)`, `pid_n =
// program_id(1)` on a grid `(M / BM, N / BN)`, is launched with x fastest
// (blockIdx.x varies first). The programs resident at one time then cover one
// or two columns of C: they share a B column block, but between them read
// every row block of A, which for large K does not stay in L2 until the next
// column needs it. The Triton matmul tutorial fixes this by hand with a
// "grouped" program order; this pass does the same to kernels written
// without it (GitHub issue 8; measured +4.5% on 4096-8192 GEMMs).
//
// With px, py the program ids, nx, ny the grid size, L = py * nx + px the
// launch index and G the group size:
//
//   per   = G * ny                    programs in one group of G x-rows
//   first = (L / per) * G             first x-row of L's group
//   gsz   = min(nx - first, G)        x-rows in this group (the last may be
//                                     short)
//   new_x = first + (L % per) % gsz
//   new_y = (L % per) / gsz
//
// Consecutive programs walk down gsz x-rows of one y-column, then the next
// column of the same group.
//
// Why this is legal: for each group, (L % per) ranges over [0, gsz * ny)
// exactly, and (r % gsz, r / gsz) is a bijection from [0, gsz * ny) onto
// [0, gsz) x [0, ny); the groups tile [0, nx) in x. So (new_x, new_y) is a
// permutation of the grid: every tile is still computed exactly once, by one
// program. Triton programs are independent and their order is unspecified,
// so only the order in which tiles are produced changes. The G used at run
// time is min(G, nx): with G >= nx the order is the identity either way.
//
// The index math runs in i64: a legal grid may hold 2^31 programs or more
// (x up to 2^31 - 1 programs, y up to 65535), and then L = py * nx + px
// wraps in i32 (the differential tester found grid (2^31 - 1, 2) sending
// program (6567516, 1) to tile x = -1070458069). With nx, ny < 2^31 every
// intermediate is below nx * ny < 2^62, and new_x < nx, new_y < ny fit the
// i32 the kernel reads. The cost is a few 64-bit divisions once per program.
//
// Declines (the kernel is left as it is):
//  * it does not read both program ids x and y (a 1-D kernel may group its
//    programs itself; axis z is never touched);
//  * it has no dot: only dots make neighbouring programs share operand
//    tiles, elsewhere the new order only costs a few integer ops;
//  * it has atomics: a cross-program protocol (a spin lock, a split-K
//    semaphore) may rely on the launch order;
//  * it reads tt.get_num_programs (it may already map its programs) or calls
//    another function (a callee reading the program ids would see the
//    original ones);
//  * it is not public (not a kernel), a declaration, or already carries
//    `triton_ext.grid_swizzled` (so the pass is idempotent).
// With the `remarks` option each decline but a declaration's is a remark on
// the function, `grid_swizzle: not applied: <reason>`.
// A group size below 2 is an error.
//
//===----------------------------------------------------------------------===//

#include "triton-ext/PassInfra.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"
#include "triton/Dialect/Triton/IR/Dialect.h"
#include "triton/Dialect/Triton/IR/OpInterfaces.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "triton-ext-grid-swizzle"

namespace mlir::triton_ext {
#define GEN_PASS_DECL_TRITONEXTGRIDSWIZZLE
#define GEN_PASS_DEF_TRITONEXTGRIDSWIZZLE
#include "Passes.h.inc"
} // namespace mlir::triton_ext

using namespace mlir;
namespace tt = mlir::triton;

namespace {

/// Unit attribute set on every function the pass rewrote.
constexpr llvm::StringLiteral kSwizzledAttr = "triton_ext.grid_swizzled";

constexpr int kAxisX = 0;
constexpr int kAxisY = 1;

/// What a kernel reads and does that decides whether it is swizzled.
struct KernelFacts {
  SmallVector<tt::GetProgramIdOp> pidX, pidY;
  bool readsNumPrograms = false;
  bool hasDot = false;
  bool hasAtomic = false;
  bool hasCall = false;
};

static KernelFacts collectFacts(tt::FuncOp func) {
  KernelFacts facts;
  func.walk([&](Operation *op) {
    if (auto pid = dyn_cast<tt::GetProgramIdOp>(op)) {
      if (pid.getAxisAsInt() == kAxisX)
        facts.pidX.push_back(pid);
      else if (pid.getAxisAsInt() == kAxisY)
        facts.pidY.push_back(pid);
    } else if (isa<tt::GetNumProgramsOp>(op)) {
      facts.readsNumPrograms = true;
    } else if (isa<tt::DotOpInterface>(op)) {
      facts.hasDot = true;
    } else if (isa<tt::AtomicOpInterface>(op)) {
      facts.hasAtomic = true;
    } else if (isa<tt::CallOp>(op)) {
      facts.hasCall = true;
    }
  });
  return facts;
}

/// Why `func` is left alone, or an empty string when it is swizzled.
static StringRef declineReason(tt::FuncOp func, const KernelFacts &facts) {
  if (func.isDeclaration() || !func.isPublic())
    return "not a kernel";
  if (func->hasAttr(kSwizzledAttr))
    return "already swizzled";
  if (facts.pidX.empty() || facts.pidY.empty())
    return "does not read both program ids x and y";
  if (!facts.hasDot)
    return "no dot";
  if (facts.hasAtomic)
    return "atomics (a cross-program protocol may rely on launch order)";
  if (facts.readsNumPrograms)
    return "reads tt.get_num_programs (may map its programs itself)";
  if (facts.hasCall)
    return "calls a function (which may read the original program ids)";
  return "";
}

class GridSwizzlePass
    : public mlir::triton_ext::impl::TritonExtGridSwizzleBase<GridSwizzlePass> {
public:
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t group = groupSize.getValue();
    if (group < 2) {
      module.emitOpError() << "triton-ext-grid-swizzle: group-size must be "
                              "at least 2, got "
                           << group;
      return signalPassFailure();
    }
    for (auto func : module.getOps<tt::FuncOp>()) {
      KernelFacts facts = collectFacts(func);
      StringRef reason = declineReason(func, facts);
      if (!reason.empty()) {
        LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": " << func.getSymName() << ": "
                                << reason << "\n");
        // A declaration has nothing to swizzle and nowhere to point at.
        if (remarks && !func.isDeclaration())
          func.emitRemark() << "grid_swizzle: not applied: " << reason;
        continue;
      }
      swizzle(func, facts);
    }
  }

private:
  void swizzle(tt::FuncOp func, KernelFacts &facts) {
    Block &entry = func.getBody().front();
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    // Named, so the printed IR says where the new values come from; the
    // source location stays that of the kernel's first program_id(0).
    Location loc = NameLoc::get(b.getStringAttr("grid_swizzle"),
                                facts.pidX.front().getLoc());

    // Program ids and grid sizes are non-negative i32, so sign extension is
    // exact.
    Type i64 = b.getI64Type();
    auto wide = [&](Value v) -> Value {
      return arith::ExtSIOp::create(b, loc, i64, v);
    };
    Value px = wide(tt::GetProgramIdOp::create(b, loc, kAxisX));
    Value py = wide(tt::GetProgramIdOp::create(b, loc, kAxisY));
    Value nx = wide(tt::GetNumProgramsOp::create(b, loc, kAxisX));
    Value ny = wide(tt::GetNumProgramsOp::create(b, loc, kAxisY));
    Value option = arith::ConstantIntOp::create(b, loc, groupSize, 64);

    // Launch index: the hardware launches x fastest.
    Value rowStart = arith::MulIOp::create(b, loc, py, nx);
    Value linear = arith::AddIOp::create(b, loc, rowStart, px);
    // min(G, nx): the same order when G >= nx.
    Value group = arith::MinSIOp::create(b, loc, option, nx);
    Value perGroup = arith::MulIOp::create(b, loc, group, ny);
    Value groupId = arith::DivSIOp::create(b, loc, linear, perGroup);
    Value first = arith::MulIOp::create(b, loc, groupId, group);
    Value left = arith::SubIOp::create(b, loc, nx, first);
    Value groupRows = arith::MinSIOp::create(b, loc, left, group);
    Value inGroup = arith::RemSIOp::create(b, loc, linear, perGroup);
    Value rowInGroup = arith::RemSIOp::create(b, loc, inGroup, groupRows);
    Type i32 = b.getI32Type();
    Value newX = arith::TruncIOp::create(
        b, loc, i32, arith::AddIOp::create(b, loc, first, rowInGroup));
    Value newY = arith::TruncIOp::create(
        b, loc, i32, arith::DivSIOp::create(b, loc, inGroup, groupRows));

    for (tt::GetProgramIdOp pid : facts.pidX) {
      pid.getResult().replaceAllUsesWith(newX);
      pid.erase();
    }
    for (tt::GetProgramIdOp pid : facts.pidY) {
      pid.getResult().replaceAllUsesWith(newY);
      pid.erase();
    }
    func->setAttr(kSwizzledAttr, b.getUnitAttr());
    LLVM_DEBUG(llvm::dbgs()
               << DEBUG_TYPE ": swizzled " << func.getSymName()
               << " (group size " << groupSize.getValue() << ")\n");
  }
};

} // namespace

TRITON_EXT_REGISTER_PASS(grid_swizzle, GridSwizzlePass);
