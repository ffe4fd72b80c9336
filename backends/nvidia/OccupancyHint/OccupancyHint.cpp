//===- OccupancyHint.cpp - Minimum CTAs-per-SM hint for ptxas -------------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Memory-bound kernels hide latency with resident warps. ptxas picks the
// register count per thread on its own, and for kernels with large tiles it
// often leaves the SM at one or two CTAs. PTX `.minnctapersm N` (LLVM function
// attribute "nvvm.minctasm", from the LLVM-dialect attribute `nvvm.minctasm`)
// asks ptxas to cap registers so that N CTAs fit (GitHub issue 8, item 2).
//
// How: at the end of make_llir the module is in the LLVM dialect; every
// kernel `llvm.func` with `nvvm.reqntid = array<i32: x[, y, z]>` gets
// `nvvm.minctasm = N : i32`. MLIR's NVVM translation turns it into the LLVM
// attribute and NVPTX prints `.minnctapersm N`; ptxas honours it only with
// `.maxntid`/`.reqntid`, which Triton always emits (hence the requirement).
//
// Why it is legal: the hint changes register allocation only (ptxas may spill
// to local memory to meet it); the program's semantics are unchanged.
//
// Declines (per kernel, LLVM_DEBUG): no `nvvm.reqntid`; `nvvm.minctasm`
// already set; N * threads > 2048 (sm_90 threads per SM); N * (shared + 1 KiB
// reserved) > 228 KiB (sm_90 shared memory per SM, from the module's
// `ttg.shared`); 65536 / (N * threads) < min-registers; 65536 / (N * threads)
// below the kernel's wgmma register floor (see wgmmaFloor). Ops are matched by
// name ("llvm.func", "llvm.inline_asm") so the plugin does not depend on
// LLVM-dialect TypeIDs. With the `remarks` option each decline of a kernel is
// a remark on its llvm.func, `nvidia_occupancy_hint: not applied: <reason>`.
//
// Why the wgmma floor: ptxas may spill ordinary values to meet the cap, but a
// wgmma accumulator must stay in registers for the whole asynchronous group,
// so a cap below it is a hard ptxas error ("Insufficient registers (128) to
// compile instruction ... register target of 154 or higher" for a 128x256x64
// fp16 GEMM tile at 8 warps, issue 16), not a slower kernel.
//
//===----------------------------------------------------------------------===//

#include "triton-ext/PassInfra.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Debug.h"

#include <string>

#define DEBUG_TYPE "triton-ext-nvidia-occupancy-hint"

namespace mlir::triton_ext {
#define GEN_PASS_DECL_TRITONEXTOCCUPANCYHINT
#define GEN_PASS_DEF_TRITONEXTOCCUPANCYHINT
#include "Passes.h.inc"
} // namespace mlir::triton_ext

using namespace mlir;

namespace {

/// sm_90 per-SM limits (H100/H200).
constexpr int64_t kMaxThreadsPerSm = 2048;
constexpr int64_t kRegistersPerSm = 65536;
constexpr int64_t kSharedPerSm = 228 * 1024;
constexpr int64_t kSharedReservedPerCta = 1024;
/// Registers a wgmma kernel needs beyond its accumulators (addresses, shared
/// memory descriptors, loop state, epilogue). The 128x256x64 fp16 tile needs
/// 154 with 128 accumulator registers; 32 covers that with a margin.
constexpr int64_t kWgmmaReserve = 32;

/// Accumulator registers per thread of one wgmma instruction, from its PTX
/// text "wgmma.mma_async.sync.aligned.m64n<N>k<K>.<acc>....": a warpgroup
/// (128 threads) holds the 64 x N accumulator, so each thread holds N / 2
/// 32-bit values (f32, s32) or N / 4 registers of packed f16. 0 when `text`
/// is not a wgmma or its shape cannot be read.
int64_t wgmmaAccumulatorRegisters(StringRef text, std::string &shape) {
  size_t at = text.find("wgmma.mma_async");
  if (at == StringRef::npos)
    return 0;
  StringRef rest = text.drop_front(at);
  size_t m = rest.find(".m64n");
  if (m == StringRef::npos)
    return 0;
  rest = rest.drop_front(m + 5);
  int64_t n = 0;
  StringRef digits =
      rest.take_while([](char c) { return c >= '0' && c <= '9'; });
  if (digits.empty() || digits.getAsInteger(10, n) || n <= 0)
    return 0;
  rest = rest.drop_front(digits.size());
  if (!rest.consume_front("k"))
    return 0;
  rest = rest.drop_while([](char c) { return c >= '0' && c <= '9'; });
  if (!rest.consume_front("."))
    return 0;
  StringRef acc = rest.take_until([](char c) { return c == '.' || c == ' '; });
  shape = ("n" + digits + "." + acc).str();
  if (acc == "f16")
    return n / 4;
  return n / 2; // f32, s32
}

class OccupancyHintPass
    : public mlir::triton_ext::impl::TritonExtOccupancyHintBase<
          OccupancyHintPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The value, not the option: a pass option streamed into a diagnostic
    // prints as a character.
    unsigned ctas = minCtasPerSm.getValue();
    if (ctas < 1 || ctas > 32) {
      module.emitOpError() << "triton-ext-nvidia-occupancy-hint: "
                              "min-ctas-per-sm must be in [1, 32], got "
                           << ctas;
      return signalPassFailure();
    }
    int64_t shared = 0;
    if (auto attr = module->getAttrOfType<IntegerAttr>("ttg.shared"))
      shared = attr.getInt();
    MLIRContext *ctx = &getContext();
    for (Operation &op : module.getBody()->getOperations()) {
      if (op.getName().getStringRef() != "llvm.func")
        continue;
      if (failed(hintKernel(op, shared)))
        continue;
      op.setAttr("nvvm.minctasm",
                 IntegerAttr::get(IntegerType::get(ctx, 32), minCtasPerSm));
    }
  }

private:
  /// Succeeds when `func` is a kernel that can take the hint.
  LogicalResult hintKernel(Operation &func, int64_t shared) {
    StringRef name = SymbolTable::getSymbolName(&func).getValue();
    auto reqntid = func.getAttrOfType<DenseI32ArrayAttr>("nvvm.reqntid");
    if (!reqntid || reqntid.empty())
      return decline(func, name,
                     "no nvvm.reqntid (not a kernel, or ptxas would "
                     "ignore .minnctapersm)");
    if (func.hasAttr("nvvm.minctasm"))
      return decline(func, name, "nvvm.minctasm already set");
    int64_t threads = 1;
    for (int32_t dim : reqntid.asArrayRef())
      threads *= dim;
    int64_t ctas = minCtasPerSm;
    if (ctas * threads > kMaxThreadsPerSm)
      return decline(func, name, "threads per SM would exceed 2048");
    if (ctas * (shared + kSharedReservedPerCta) > kSharedPerSm)
      return decline(func, name, "shared memory does not allow that many CTAs");
    int64_t budget = kRegistersPerSm / (ctas * threads);
    if (budget < int64_t(minRegisters))
      return decline(func, name, "register budget below min-registers");
    if (int64_t floor = wgmmaFloor(func); floor > 0 && budget < floor)
      return decline(func, name,
                     "register budget below the wgmma accumulators' "
                     "floor (ptxas would fail, not spill)");
    return success();
  }

  /// Registers the kernel's wgmma accumulators need, plus kWgmmaReserve; 0
  /// without wgmma. Accumulators of different shapes (attention's S and O)
  /// can be live together, so their sizes add up; the several instructions
  /// of one shape (the k-steps of one tile) share one accumulator. This can
  /// overestimate (two same-shape dots in sequence count once, two shapes
  /// that are never live together count twice), which only makes the pass
  /// decline more often.
  static int64_t wgmmaFloor(Operation &func) {
    llvm::StringMap<int64_t> byShape;
    func.walk([&](Operation *op) {
      if (op->getName().getStringRef() != "llvm.inline_asm")
        return;
      auto text = op->getAttrOfType<StringAttr>("asm_string");
      if (!text)
        return;
      std::string shape;
      if (int64_t regs = wgmmaAccumulatorRegisters(text.getValue(), shape))
        byShape[shape] = regs;
    });
    if (byShape.empty())
      return 0;
    int64_t total = kWgmmaReserve;
    for (const auto &entry : byShape)
      total += entry.getValue();
    return total;
  }

  /// Leaves `func` without the hint, saying why: LLVM_DEBUG, and a remark on
  /// the function with the `remarks` option, for kernels only (`nvvm.kernel`
  /// or `nvvm.reqntid`): helpers and libdevice declarations are not
  /// candidates.
  LogicalResult decline(Operation &func, StringRef kernel, StringRef why) {
    LLVM_DEBUG(llvm::dbgs()
               << DEBUG_TYPE ": " << kernel << ": " << why << "\n");
    if (remarks &&
        (func.hasAttr("nvvm.kernel") || func.hasAttr("nvvm.reqntid")))
      func.emitRemark() << "nvidia_occupancy_hint: not applied: " << why;
    return failure();
  }
};

} // namespace

TRITON_EXT_REGISTER_PASS(nvidia_occupancy_hint, OccupancyHintPass);
