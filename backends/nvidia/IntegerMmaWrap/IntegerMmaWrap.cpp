//===- IntegerMmaWrap.cpp - Integer MMA sums that wrap like tl.dot's ------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Triton lowers an integer tt.dot (int8 or int4 operands, int32 accumulator)
// on Hopper to wgmma at 4 warps and more, and to Ampere's mma.sync below
// that. The two disagree once a sum leaves int32: Triton writes mma.sync with
// `.satfinite` (clamp to INT32_MIN/INT32_MAX) and wgmma without it (wrap
// modulo 2^32, as tl.dot does in Triton's interpreter, NumPy's int32 matmul).
// So the transparent mode could not offer an int8 GEMM launched at 4 warps its
// 2-warp build: Liger's int8 x int2 GEMM runs 1.78x faster there on an H100
// (benchmarks/results/num-warps-probe-all-h100.json), and equals the 4-warp
// kernel only while no sum overflows.
//
// What: every `llvm.inline_asm` whose text holds an MMA instruction with an
// s32 accumulator and `.satfinite` loses the `.satfinite` qualifier.
//
// Why it is legal (and what it changes): an integer MMA computes
// D = A * B + C from exact products of small integers; without `.satfinite`
// PTX defines the s32 result modulo 2^32. Addition modulo 2^32 is associative
// and commutative, so a kernel whose sums wrap computes the same value in any
// order, on any instruction shape, at any warp count: the rewritten 2-warp
// kernel equals the 4-warp wgmma kernel for every input, overflow included.
// It differs from the unrewritten mma.sync kernel exactly where that one
// clamped. Floating-point MMAs and conversions (`cvt...satfinite`) are left
// alone: only the mnemonic of an MMA with an `.s32` accumulator is touched.
//
// Ops are matched by name ("llvm.inline_asm") so the plugin does not depend on
// LLVM-dialect TypeIDs.
//
//===----------------------------------------------------------------------===//

#include "triton-ext/PassInfra.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/Debug.h"

#include <string>

#define DEBUG_TYPE "triton-ext-nvidia-integer-mma-wrap"

namespace mlir::triton_ext {
#define GEN_PASS_DECL_TRITONEXTINTEGERMMAWRAP
#define GEN_PASS_DEF_TRITONEXTINTEGERMMAWRAP
#include "Passes.h.inc"
} // namespace mlir::triton_ext

using namespace mlir;

namespace {

/// Whether `mnemonic` (one PTX instruction name, `a.b.c`) is an MMA with an
/// s32 accumulator that saturates: `mma.sync...` or `wgmma.mma_async...`
/// whose qualifiers hold `satfinite` followed by `s32` (the D type comes first
/// among the types in both forms).
constexpr llvm::StringLiteral kSaturatingS32 = ".satfinite.s32.";

bool isSaturatingIntegerMma(StringRef mnemonic) {
  if (!mnemonic.starts_with("mma.") && !mnemonic.starts_with("wgmma.mma_async"))
    return false;
  return mnemonic.contains(kSaturatingS32);
}

/// `text` with `.satfinite` dropped from every saturating integer MMA
/// mnemonic; `text` itself when it has none.
std::string wrapIntegerMmas(StringRef text, unsigned &rewritten) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    // An instruction starts at the beginning or after a separator.
    size_t start = text.find_first_not_of(" \t\n;{}");
    out += text.take_front(start == StringRef::npos ? text.size() : start);
    if (start == StringRef::npos)
      break;
    text = text.drop_front(start);
    StringRef word = text.take_until([](char c) {
      return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '{';
    });
    if (isSaturatingIntegerMma(word)) {
      // Keep the ".s32." that follows the qualifier.
      size_t at = word.find(kSaturatingS32);
      out += word.take_front(at);
      out += word.drop_front(at + StringRef(".satfinite").size());
      ++rewritten;
    } else {
      out += word;
    }
    text = text.drop_front(word.size());
  }
  return out;
}

class IntegerMmaWrapPass
    : public mlir::triton_ext::impl::TritonExtIntegerMmaWrapBase<
          IntegerMmaWrapPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([&](Operation *op) {
      if (op->getName().getStringRef() != "llvm.inline_asm")
        return;
      auto text = op->getAttrOfType<StringAttr>("asm_string");
      if (!text)
        return;
      unsigned rewritten = 0;
      std::string wrapped = wrapIntegerMmas(text.getValue(), rewritten);
      if (!rewritten)
        return;
      LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": " << rewritten
                              << " integer MMA(s) made to wrap in: "
                              << text.getValue() << "\n");
      op->setAttr("asm_string", StringAttr::get(op->getContext(), wrapped));
    });
  }
};

} // namespace

TRITON_EXT_REGISTER_PASS(nvidia_integer_mma_wrap, IntegerMmaWrapPass);
