//===- OnChipBuilder.cpp - Builder ops for triton_ext_onchip --------------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Triton binds each callback here as `builder.create_<name>(values)`, which
// triton_ext_onchip (triton_ext_onchip/__init__.py) calls from @triton.jit
// code. `values` is [result slot, operands...]; the slot comes back to Python.
// Triton's builder passes only mlir::Value, so compile-time numbers (shapes,
// counts, byte counts) arrive as arith.constant ops, which a callback reads
// and erases when nothing else uses them, and an element type arrives as a
// zero constant of that type.
//
// What is emitted at ttir:
//  * ops that touch no tensor are Triton's own TritonGPU / TritonNvidiaGPU ops
//    already (local_alloc, memdesc_index, init/expect/arrive/wait on
//    mbarriers, async_commit_group, async_wait): convert-triton-to-tritongpu
//    treats the TritonGPU dialect as legal and leaves them alone;
//  * a buffer read is a ttg.local_load whose result has no layout yet
//    (onchip_lower gives it the layout its users want);
//  * views (dialects/OnChipIR) for the ops that take a tensor, which the
//    Python side then feeds to tt.store / tt.load / tt.dot.
// The view ops are created by name: their classes live in the dialect plugin
// with hidden visibility, and a copy compiled here would have another TypeID.
//
// Shared layouts are chosen here, at allocation, because a buffer's memdesc
// type carries its layout: 2-D buffers get the NVMMA (wgmma / TMA) layout
// with the widest swizzle the row allows, which also serves plain loads,
// stores and cp.async; other ranks and mbarriers get an unswizzled layout.
//
// Errors throw std::invalid_argument (a Python ValueError); the Python side
// checks first, so these guard against direct misuse of the builder.
//
//===----------------------------------------------------------------------===//

#include "triton-ext/PassInfra.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OperationSupport.h"
#include "triton/Dialect/Triton/IR/Dialect.h"
#include "triton/Dialect/TritonGPU/IR/Dialect.h"
#include "triton/Dialect/TritonNvidiaGPU/IR/Dialect.h"

#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>

namespace {
using namespace mlir;
namespace ttg = mlir::triton::gpu;
namespace ttng = mlir::triton::nvidia_gpu;

[[noreturn]] void fail(const std::string &op, const std::string &what) {
  throw std::invalid_argument("create_" + op + ": " + what);
}

void expectArity(const std::string &op, std::vector<Value> &values,
                 size_t arity) {
  if (values.size() != arity || values[0])
    fail(op, "expects [result slot, " + std::to_string(arity - 1) +
                 " operands], got " + std::to_string(values.size()) +
                 " values");
}

/// The value of an integer constant; erases the constant if unused.
int64_t takeConstant(const std::string &op, Value value, const char *what) {
  APInt bound;
  if (!value || !matchPattern(value, m_ConstantInt(&bound)))
    fail(op, std::string(what) + " must be an integer constant");
  return bound.getSExtValue();
}

void eraseIfDead(Value value) {
  if (Operation *def = value.getDefiningOp())
    if (def->use_empty() && isa<arith::ConstantOp>(def))
      def->erase();
}

ttg::MemDescType memdesc(Value value, const std::string &op) {
  auto type = dyn_cast<ttg::MemDescType>(value.getType());
  if (!type)
    fail(op, "expects a buffer (!ttg.memdesc)");
  return type;
}

Attribute sharedLayout(MLIRContext *ctx, ArrayRef<int64_t> shape,
                       Type element) {
  unsigned rank = shape.size();
  auto cga = ttg::CGAEncodingAttr::get1CTALayout(ctx, rank);
  SmallVector<unsigned> order(rank);
  std::iota(order.rbegin(), order.rend(), 0); // row-major: last dim fastest
  unsigned bits = element.getIntOrFloatBitWidth();
  if (rank == 2 && (bits == 8 || bits == 16 || bits == 32))
    return ttg::NVMMASharedEncodingAttr::get(ctx, shape, order, cga, element,
                                             /*fp4Padded=*/false);
  return ttg::SwizzledSharedEncodingAttr::get(ctx, 1, 1, 1, order, cga);
}

/// Marks an allocation as OnChip's (read by onchip_prune, which touches no
/// other allocation).
void markRing(ttg::LocalAllocOp alloc) {
  alloc->setAttr("triton_ext_onchip.ring", UnitAttr::get(alloc.getContext()));
}

/// [slot, zero of the element type, count, dim0, dim1, ...]: `count`
/// buffers of shape [dim0, ...], one allocation of shape [count, dim0, ...].
void createAlloc(TritonOpBuilder &self, std::vector<Value> &values) {
  const std::string op = "onchip_alloc";
  if (values.size() < 4 || values[0])
    fail(op, "expects [result slot, element prototype, count, dims...]");
  Type element = values[1].getType();
  if (!element.isIntOrFloat())
    fail(op, "the element prototype must be an integer or float scalar");
  SmallVector<int64_t> shape;
  for (size_t i = 2; i < values.size(); ++i) {
    int64_t dim = takeConstant(op, values[i], "count and dims");
    if (dim <= 0)
      fail(op, "count and dims must be positive");
    shape.push_back(dim);
  }
  for (size_t i = 1; i < values.size(); ++i)
    eraseIfDead(values[i]);
  MLIRContext *ctx = self.getContext();
  Attribute layout =
      sharedLayout(ctx, ArrayRef<int64_t>(shape).drop_front(), element);
  auto type = ttg::MemDescType::get(ctx, shape, element, layout,
                                    ttg::SharedMemorySpaceAttr::get(ctx),
                                    /*mutableMemory=*/true, shape);
  auto alloc =
      ttg::LocalAllocOp::create(self.getBuilder(), self.getLastLoc(), type);
  markRing(alloc);
  values[0] = alloc.getResult();
}

/// [slot, ring, index]: buffer `index` of a ring (memdesc_index).
void createIndex(TritonOpBuilder &self, std::vector<Value> &values) {
  const std::string op = "onchip_index";
  expectArity(op, values, 3);
  auto ring = memdesc(values[1], op);
  if (ring.getRank() < 2)
    fail(op, "expects a ring of buffers (rank >= 2)");
  if (!values[2].getType().isInteger(32))
    fail(op, "the index must be an i32 scalar");
  auto type = ttg::MemDescType::get(
      self.getContext(), ring.getShape().drop_front(), ring.getElementType(),
      ring.getEncoding(), ring.getMemorySpace(), ring.getMutableMemory(),
      ring.getShape().drop_front());
  values[0] = ttg::MemDescIndexOp::create(self.getBuilder(), self.getLastLoc(),
                                          type, values[1], values[2])
                  .getResult();
}

/// [slot, buffer]: the 2-D buffer seen transposed (memdesc_trans, order
/// [1, 0]). No data moves: the view's shared layout is the buffer's with the
/// dimensions swapped, which wgmma reads directly as a transposed operand
/// (attention's K^T from a row-major K tile).
void createTrans(TritonOpBuilder &self, std::vector<Value> &values) {
  const std::string op = "onchip_trans";
  expectArity(op, values, 2);
  auto buf = memdesc(values[1], op);
  if (buf.getRank() != 2)
    fail(op, "expects a 2-D buffer");
  values[0] = ttg::MemDescTransOp::create(self.getBuilder(), self.getLastLoc(),
                                          values[1], ArrayRef<int32_t>{1, 0})
                  .getResult();
}

/// [slot, buffer]: the buffer's contents, as a tensor without a layout.
void createRead(TritonOpBuilder &self, std::vector<Value> &values) {
  const std::string op = "onchip_read";
  expectArity(op, values, 2);
  auto buf = memdesc(values[1], op);
  auto type = RankedTensorType::get(buf.getShape(), buf.getElementType());
  values[0] = ttg::LocalLoadOp::create(self.getBuilder(), self.getLastLoc(),
                                       type, values[1])
                  .getResult();
}

Operation *createByName(TritonOpBuilder &self, const char *name,
                        ValueRange operands, Type result,
                        ArrayRef<NamedAttribute> attrs) {
  OperationName opName(name, self.getContext());
  if (!opName.isRegistered())
    throw std::invalid_argument(
        std::string("dialect triton_ext_onchip is not loaded in this context "
                    "(needed for ") +
        name +
        "); load libTritonExtOnChipIR (triton_ext.enable('onchip_lower')) "
        "before compiling");
  OperationState state(self.getLastLoc(), opName);
  state.addOperands(operands);
  if (result)
    state.addTypes(result);
  state.addAttributes(attrs);
  return self.getBuilder().create(state);
}

/// [slot, buffer, purpose (0: store, 1: copy)]: triton_ext_onchip.view.
void createView(TritonOpBuilder &self, std::vector<Value> &values) {
  const std::string op = "onchip_view";
  expectArity(op, values, 3);
  auto buf = memdesc(values[1], op);
  int64_t purpose = takeConstant(op, values[2], "purpose");
  eraseIfDead(values[2]);
  if (purpose != 0 && purpose != 1)
    fail(op, "purpose must be 0 (store) or 1 (copy)");
  OpBuilder &b = self.getBuilder();
  auto ptr = triton::PointerType::get(buf.getElementType());
  auto type = RankedTensorType::get(buf.getShape(), ptr);
  values[0] =
      createByName(self, "triton_ext_onchip.view", values[1], type,
                   {b.getNamedAttr(
                       "purpose", b.getStringAttr(purpose ? "copy" : "store"))})
          ->getResult(0);
}

/// [slot, buffer, pending]: triton_ext_onchip.mma_operand.
void createMmaOperand(TritonOpBuilder &self, std::vector<Value> &values) {
  const std::string op = "onchip_mma_operand";
  expectArity(op, values, 3);
  auto buf = memdesc(values[1], op);
  int64_t pending = takeConstant(op, values[2], "pending");
  eraseIfDead(values[2]);
  if (pending < 0)
    fail(op, "pending must be >= 0");
  OpBuilder &b = self.getBuilder();
  auto type = RankedTensorType::get(buf.getShape(), buf.getElementType());
  values[0] =
      createByName(self, "triton_ext_onchip.mma_operand", values[1], type,
                   {b.getNamedAttr("pending", b.getI32IntegerAttr(pending))})
          ->getResult(0);
}

/// [slot, count, arrivals]: `count` mbarriers, each initialised to expect
/// `arrivals` arrivals per phase.
void createBarriers(TritonOpBuilder &self, std::vector<Value> &values) {
  const std::string op = "onchip_barriers";
  expectArity(op, values, 3);
  int64_t count = takeConstant(op, values[1], "count");
  int64_t arrivals = takeConstant(op, values[2], "arrivals");
  eraseIfDead(values[1]);
  eraseIfDead(values[2]);
  if (count <= 0 || arrivals <= 0)
    fail(op, "count and arrivals must be positive");
  MLIRContext *ctx = self.getContext();
  OpBuilder &b = self.getBuilder();
  Location loc = self.getLastLoc();
  auto i64 = b.getI64Type();
  auto layout = ttg::SwizzledSharedEncodingAttr::get(
      ctx, 1, 1, 1, {0}, ttg::CGAEncodingAttr::get1CTALayout(ctx, 1));
  auto smem = ttg::SharedMemorySpaceAttr::get(ctx);
  SmallVector<int64_t> shape = {count, 1};
  auto ringType = ttg::MemDescType::get(ctx, shape, i64, layout, smem,
                                        /*mutableMemory=*/true, shape);
  SmallVector<int64_t> one = {1};
  auto oneType = ttg::MemDescType::get(ctx, one, i64, layout, smem,
                                       /*mutableMemory=*/true, one);
  auto alloc = ttg::LocalAllocOp::create(b, loc, ringType);
  markRing(alloc);
  Value ring = alloc.getResult();
  for (int64_t i = 0; i < count; ++i) {
    Value index = arith::ConstantIntOp::create(b, loc, i, 32);
    Value bar = ttg::MemDescIndexOp::create(b, loc, oneType, ring, index);
    ttng::InitBarrierOp::create(b, loc, bar, static_cast<uint32_t>(arrivals));
  }
  // The marker whose verifier reports a wait nothing can satisfy.
  createByName(self, "triton_ext_onchip.declare_barriers", ring, Type(), {});
  values[0] = ring;
}

ttg::MemDescType barrier(Value value, const std::string &op) {
  auto type = memdesc(value, op);
  if (type.getRank() != 1 || type.getShape()[0] != 1 ||
      !type.getElementType().isInteger(64))
    fail(op, "expects one mbarrier (a barrier ring indexed once)");
  return type;
}

/// [slot, barrier, bytes, pred]: the next phase also waits for `bytes`.
void createExpect(TritonOpBuilder &self, std::vector<Value> &values) {
  const std::string op = "onchip_expect";
  expectArity(op, values, 4);
  barrier(values[1], op);
  int64_t bytes = takeConstant(op, values[2], "bytes");
  eraseIfDead(values[2]);
  if (bytes <= 0 || bytes >= (int64_t(1) << 20))
    fail(op, "bytes must be in [1, 2**20)");
  ttng::BarrierExpectOp::create(self.getBuilder(), self.getLastLoc(), values[1],
                                static_cast<uint32_t>(bytes), values[3]);
}

/// [slot, barrier, count, pred]: arrive `count` times.
void createArrive(TritonOpBuilder &self, std::vector<Value> &values) {
  const std::string op = "onchip_arrive";
  expectArity(op, values, 4);
  barrier(values[1], op);
  int64_t count = takeConstant(op, values[2], "count");
  eraseIfDead(values[2]);
  if (count <= 0)
    fail(op, "count must be positive");
  ttng::ArriveBarrierOp::create(self.getBuilder(), self.getLastLoc(), values[1],
                                static_cast<uint32_t>(count), values[3]);
}

bool isDeclareBarriers(Operation *op) {
  return op->getName().getStringRef() == "triton_ext_onchip.declare_barriers";
}

std::optional<int64_t> constantIndex(ttg::MemDescIndexOp index) {
  APInt value;
  if (matchPattern(index.getIndex(), m_ConstantInt(&value)))
    return value.getSExtValue();
  return std::nullopt;
}

/// Why a wait for phase parity `phase` on `bar`, about to be built at the end
/// of what is built so far, can never return; "" when it may.
///
/// The code generator builds a kernel in program order, so every op that
/// exists now comes before the wait. A fresh mbarrier is in phase 0: a wait
/// for parity 0 returns only after an arrive or expect on that barrier (a
/// phase completes when its arrivals are in and its announced bytes have
/// landed; a TMA copy only delivers bytes, complete_tx, and is no arrival),
/// while a wait for parity 1 returns at once.
/// So a wait for a constant even phase on a barrier of this kernel's
/// `barriers` on which nothing has arrived yet blocks forever, in a loop too
/// (its first execution comes before every later op). Not statically
/// visible, and so never reported: a runtime phase or pred, a barrier that
/// reached a helper, loop, call or warp_specialize (it may be armed there,
/// or by another partition), and a wait inside a warp_specialize region.
/// The dialect's declare_barriers verifier reports the remaining case it
/// can see: a wait on a barrier nothing in the kernel ever arms.
std::string neverArmed(Value bar, Value phase, Value pred, Block *at) {
  APInt parity, enabled;
  if (!matchPattern(phase, m_ConstantInt(&parity)) || parity[0])
    return "";
  if (!matchPattern(pred, m_ConstantInt(&enabled)) || enabled.isZero())
    return "";
  auto index = bar.getDefiningOp<ttg::MemDescIndexOp>();
  if (!index)
    return "";
  Value ring = index.getSrc();
  auto alloc = ring.getDefiningOp<ttg::LocalAllocOp>();
  if (!alloc || !llvm::any_of(ring.getUsers(), isDeclareBarriers))
    return "";
  for (Operation *parent = at->getParentOp();
       parent && parent != alloc->getParentOp(); parent = parent->getParentOp())
    if (isa<ttg::WarpSpecializeOp, ttg::WarpSpecializePartitionsOp>(parent))
      return "";
  std::optional<int64_t> slot = constantIndex(index);
  for (Operation *user : ring.getUsers()) {
    if (isDeclareBarriers(user))
      continue;
    auto other = dyn_cast<ttg::MemDescIndexOp>(user);
    if (!other)
      return ""; // the whole ring went somewhere: it may be armed there
    std::optional<int64_t> otherSlot = constantIndex(other);
    bool sameSlot = !slot || !otherSlot || *slot == *otherSlot;
    for (OpOperand &use : other.getResult().getUses()) {
      Operation *op = use.getOwner();
      // A TMA copy completes bytes on the barrier (complete_tx) but is no
      // arrival: with no arrive or expect the phase never completes.
      if (isa<ttng::InitBarrierOp, ttng::WaitBarrierOp>(op) ||
          (op->getName().getStringRef() == "triton_ext_onchip.tma_copy" &&
           use.getOperandNumber() == 1))
        continue;
      bool arms = isa<ttng::ArriveBarrierOp, ttng::BarrierExpectOp>(op);
      if (!arms)
        return ""; // passed on: it may be armed where we cannot see
      if (sameSlot)
        return "";
    }
  }
  return "wait: this wait never returns: nothing has arrived on barrier " +
         (slot ? std::to_string(*slot) : std::string("ring")) +
         " before it (no arrive or expect on it comes first, and a wait for "
         "phase 0 of a barrier nothing arrived on blocks forever; a copy_tma "
         "only brings bytes, it is no arrival); arm it first, e.g. "
         "oc.expect(bar, nbytes) before oc.copy_tma(..., bar), or "
         "oc.arrive(bar)";
}

/// [slot, barrier, phase, pred]: wait until phase `phase` completed.
void createWait(TritonOpBuilder &self, std::vector<Value> &values) {
  const std::string op = "onchip_wait";
  expectArity(op, values, 4);
  barrier(values[1], op);
  if (!values[2].getType().isInteger(32))
    fail(op, "the phase must be an i32 scalar");
  std::string never = neverArmed(values[1], values[2], values[3],
                                 self.getBuilder().getInsertionBlock());
  if (!never.empty())
    fail(op, never);
  ttng::WaitBarrierOp::create(self.getBuilder(), self.getLastLoc(), values[1],
                              values[2], values[3]);
}

/// [slot]: close the group of copies started since the last commit.
void createCommit(TritonOpBuilder &self, std::vector<Value> &values) {
  expectArity("onchip_commit", values, 1);
  auto token = ttg::AsyncTokenType::get(self.getContext());
  values[0] = ttg::AsyncCommitGroupOp::create(
                  self.getBuilder(), self.getLastLoc(), token, ValueRange{})
                  .getResult();
}

/// [slot, pending]: wait until at most `pending` committed groups are in
/// flight.
void createWaitCopies(TritonOpBuilder &self, std::vector<Value> &values) {
  const std::string op = "onchip_wait_copies";
  expectArity(op, values, 2);
  int64_t pending = takeConstant(op, values[1], "pending");
  eraseIfDead(values[1]);
  if (pending < 0)
    fail(op, "pending must be >= 0");
  auto token = ttg::AsyncTokenType::get(self.getContext());
  auto wait =
      ttg::AsyncWaitOp::create(self.getBuilder(), self.getLastLoc(), token,
                               ValueRange{}, static_cast<uint32_t>(pending));
  // Triton's pipeliner recomputes every async_wait's count from async
  // tokens, which these waits do not carry (the program's own commit groups
  // are the contract); onchip_restore_waits puts the author's count back.
  wait->setAttr("triton_ext_onchip.pending",
                self.getBuilder().getI32IntegerAttr(pending));
  values[0] = wait.getResult();
}
/// [slot, descriptor, barrier, buffer, pred, coords...]: a TMA copy of the
/// descriptor's block at `coords` into `buffer`; its bytes count towards the
/// barrier's current phase (announce them with expect first).
void createTmaCopy(TritonOpBuilder &self, std::vector<Value> &values) {
  const std::string op = "onchip_tma_copy";
  if (values.size() < 6 || values[0])
    fail(op,
         "expects [result slot, descriptor, barrier, buffer, pred, coords...]");
  if (!isa<triton::TensorDescType>(values[1].getType()))
    fail(op, "expects a tensor descriptor (!tt.tensordesc)");
  barrier(values[2], op);
  memdesc(values[3], op);
  SmallVector<Value> coords(values.begin() + 5, values.end());
  for (Value c : coords)
    if (!c.getType().isInteger(32))
      fail(op, "coordinates must be i32 scalars");
  // The descriptor has no shared layout at ttir, which the TMA op requires:
  // emit the dialect's placeholder; onchip_lower sets the layout and lowers.
  SmallVector<Value> operands = {values[1], values[2], values[3], values[4]};
  operands.append(coords.begin(), coords.end());
  createByName(self, "triton_ext_onchip.tma_copy", operands, Type(), {});
}
/// [slot, descriptor, buffer, coords...]: a TMA store of `buffer` into the
/// descriptor's block at `coords` (store_tma). Asynchronous: the buffer may
/// be overwritten only after a store_wait saw the store read it.
void createTmaStore(TritonOpBuilder &self, std::vector<Value> &values) {
  const std::string op = "onchip_tma_store";
  if (values.size() < 4 || values[0])
    fail(op, "expects [result slot, descriptor, buffer, coords...]");
  if (!isa<triton::TensorDescType>(values[1].getType()))
    fail(op, "expects a tensor descriptor (!tt.tensordesc)");
  memdesc(values[2], op);
  SmallVector<Value> operands(values.begin() + 1, values.end());
  for (Value c : ArrayRef<Value>(operands).drop_front(2))
    if (!c.getType().isInteger(32))
      fail(op, "coordinates must be i32 scalars");
  // Like copy_tma, a placeholder: the descriptor has no shared layout yet.
  createByName(self, "triton_ext_onchip.tma_store", operands, Type(), {});
}

/// [slot, pending]: wait until at most `pending` TMA stores of this thread
/// are still reading their buffers (ttng.async_tma_store_wait).
void createTmaStoreWait(TritonOpBuilder &self, std::vector<Value> &values) {
  const std::string op = "onchip_tma_store_wait";
  expectArity(op, values, 2);
  int64_t pending = takeConstant(op, values[1], "pending");
  eraseIfDead(values[1]);
  if (pending < 0)
    fail(op, "pending must be >= 0");
  OpBuilder &b = self.getBuilder();
  // read_only: the buffers may be reused once read; the global writes
  // complete by the end of the kernel.
  ttng::TMAStoreWaitOp::create(b, self.getLastLoc(),
                               b.getI32IntegerAttr(pending), b.getUnitAttr());
}

//===----------------------------------------------------------------------===//
// Warp specialization. Built in steps because the Python side generates the
// partition bodies in between (the bodies are @triton.jit functions):
//   split_begin  [slot, #workers, warps..., regs..., captures...] -> marker
//                (regs: one per worker, the registers per thread it asks
//                for, 0 for none: Triton's allocate-warp-groups then emits
//                setmaxnreg, the default partition getting what is left)
//                creates ttg.warp_specialize with an empty default region
//                (ttg.warp_yield) and one partition region per worker (block
//                arguments = the captures, ttg.warp_return), puts a marker
//                constant at the start of the default region and leaves the
//                insertion point before the default region's yield;
//   split_enter  [slot, marker, i]: insertion point before partition i's
//                warp_return;
//   split_arg    [slot, marker, i, j]: block argument j of partition i;
//   split_end    [slot, marker]: erases the marker, insertion point after the
//                op.
// The default partition returns nothing: a tensor yielded there would be a
// tensor consumed by an op convert-triton-to-tritongpu leaves alone.
//===----------------------------------------------------------------------===//

ttg::WarpSpecializeOp splitOf(Value marker, const std::string &op) {
  Operation *parent = marker ? marker.getParentBlock()->getParentOp() : nullptr;
  auto ws = dyn_cast_or_null<ttg::WarpSpecializeOp>(parent);
  if (!ws)
    fail(op, "expects the marker returned by create_onchip_split_begin");
  return ws;
}

void createSplitBegin(TritonOpBuilder &self, std::vector<Value> &values) {
  const std::string op = "onchip_split_begin";
  if (values.size() < 3 || values[0])
    fail(op, "expects [result slot, #workers, warps..., regs..., captures...]");
  int64_t workers = takeConstant(op, values[1], "#workers");
  if (workers < 1 || values.size() < size_t(2 + 2 * workers))
    fail(op, "expects at least one worker and one warp count and one "
             "register count per worker");
  SmallVector<int32_t> warps, regs;
  for (int64_t i = 0; i < workers; ++i)
    warps.push_back(takeConstant(op, values[2 + i], "warp counts"));
  for (int64_t i = 0; i < workers; ++i)
    regs.push_back(
        takeConstant(op, values[2 + workers + i], "register counts"));
  SmallVector<Value> captures(values.begin() + 2 + 2 * workers, values.end());
  for (size_t i = 1; i < size_t(2 + 2 * workers); ++i)
    eraseIfDead(values[i]);
  bool anyRegs = llvm::any_of(regs, [](int32_t r) { return r != 0; });
  if (anyRegs && llvm::any_of(regs, [](int32_t r) {
        return r < 24 || r > 256 || r % 8 != 0;
      }))
    fail(op, "register counts must all be set, multiples of 8 in [24, 256]");
  OpBuilder &b = self.getBuilder();
  Location loc = self.getLastLoc();
  auto ws = ttg::WarpSpecializeOp::create(b, loc, TypeRange{}, warps);
  if (anyRegs)
    ws.setRequestedRegistersAttr(b.getDenseI32ArrayAttr(regs));
  Block *body = b.createBlock(&ws.getDefaultRegion());
  ttg::WarpYieldOp::create(b, loc, ValueRange{});
  b.createBlock(&ws.getPartitionOpHolder());
  auto partitions = ttg::WarpSpecializePartitionsOp::create(
      b, loc, captures, static_cast<unsigned>(workers));
  SmallVector<Type> types;
  SmallVector<Location> locs;
  for (Value c : captures) {
    types.push_back(c.getType());
    locs.push_back(loc);
  }
  for (Region &region : partitions.getPartitionRegions()) {
    b.createBlock(&region, {}, types, locs);
    ttg::WarpReturnOp::create(b, loc);
  }
  b.setInsertionPointToStart(body);
  Value marker = arith::ConstantIntOp::create(b, loc, 0, 32);
  values[0] = marker;
  // The caller continues in the default region, before its yield.
  b.setInsertionPoint(body->getTerminator());
}

void createSplitEnter(TritonOpBuilder &self, std::vector<Value> &values) {
  const std::string op = "onchip_split_enter";
  expectArity(op, values, 3);
  auto ws = splitOf(values[1], op);
  int64_t i = takeConstant(op, values[2], "partition");
  eraseIfDead(values[2]);
  auto regions = ws.getPartitionOp().getPartitionRegions();
  if (i < 0 || i >= int64_t(regions.size()))
    fail(op, "partition index out of range");
  Block &block = regions[i].front();
  self.getBuilder().setInsertionPoint(block.getTerminator());
}

void createSplitArg(TritonOpBuilder &self, std::vector<Value> &values) {
  const std::string op = "onchip_split_arg";
  expectArity(op, values, 4);
  auto ws = splitOf(values[1], op);
  int64_t i = takeConstant(op, values[2], "partition");
  int64_t j = takeConstant(op, values[3], "argument");
  eraseIfDead(values[2]);
  eraseIfDead(values[3]);
  auto regions = ws.getPartitionOp().getPartitionRegions();
  if (i < 0 || i >= int64_t(regions.size()))
    fail(op, "partition index out of range");
  Block &block = regions[i].front();
  if (j < 0 || j >= int64_t(block.getNumArguments()))
    fail(op, "argument index out of range");
  values[0] = block.getArgument(j);
}

void createSplitEnd(TritonOpBuilder &self, std::vector<Value> &values) {
  const std::string op = "onchip_split_end";
  expectArity(op, values, 2);
  auto ws = splitOf(values[1], op);
  values[1].getDefiningOp()->erase();
  self.getBuilder().setInsertionPointAfter(ws);
}
} // namespace

TRITON_EXT_REGISTER_OP(onchip_split_begin, createSplitBegin);
TRITON_EXT_REGISTER_OP(onchip_split_enter, createSplitEnter);
TRITON_EXT_REGISTER_OP(onchip_split_arg, createSplitArg);
TRITON_EXT_REGISTER_OP(onchip_split_end, createSplitEnd);
TRITON_EXT_REGISTER_OP(onchip_tma_copy, createTmaCopy);
TRITON_EXT_REGISTER_OP(onchip_tma_store, createTmaStore);
TRITON_EXT_REGISTER_OP(onchip_tma_store_wait, createTmaStoreWait);
TRITON_EXT_REGISTER_OP(onchip_alloc, createAlloc);
TRITON_EXT_REGISTER_OP(onchip_index, createIndex);
TRITON_EXT_REGISTER_OP(onchip_read, createRead);
TRITON_EXT_REGISTER_OP(onchip_trans, createTrans);
TRITON_EXT_REGISTER_OP(onchip_view, createView);
TRITON_EXT_REGISTER_OP(onchip_mma_operand, createMmaOperand);
TRITON_EXT_REGISTER_OP(onchip_barriers, createBarriers);
TRITON_EXT_REGISTER_OP(onchip_expect, createExpect);
TRITON_EXT_REGISTER_OP(onchip_arrive, createArrive);
TRITON_EXT_REGISTER_OP(onchip_wait, createWait);
TRITON_EXT_REGISTER_OP(onchip_commit, createCommit);
TRITON_EXT_REGISTER_OP(onchip_wait_copies, createWaitCopies);
