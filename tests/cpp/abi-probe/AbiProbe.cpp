//===- AbiProbe.cpp - Tripwire for header drift against libtriton ---------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Plugins compile against Debian's LLVM 23 headers but run inside libtriton,
// which was built from a later LLVM snapshot. Most of MLIR's ABI is stable
// enough across that gap; the parts that are not fail silently (a trait query
// returns false, a TypeID differs, an ilist walks off its sentinel). This pass
// exercises each such part on a real kernel compiled by stock Triton and
// writes a JSON report (option `report`), one entry per check with what was
// expected and what was found. tests/test_abi_probe.py turns the report into
// a readable failure.
//
// Checks: op traits (IsTerminator, ConstantLike) on ops created by libtriton;
// interface casts (LoopLikeOpInterface, FunctionOpInterface,
// MemoryEffectOpInterface); op isa/cast; attribute and type creation and
// uniquing against types libtriton created; OpBuilder op creation plus the
// verifier; the greedy pattern driver on a scratch clone.
//
//===----------------------------------------------------------------------===//

#include "triton-ext/PassInfra.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "triton/Dialect/Triton/IR/Dialect.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::triton_ext {
#define GEN_PASS_DECL_TRITONEXTABIPROBE
#define GEN_PASS_DEF_TRITONEXTABIPROBE
#include "Passes.h.inc"
} // namespace mlir::triton_ext

using namespace mlir;

namespace {

/// Rewrites an i32 arith.constant carrying the marker attribute into the
/// constant 42 (without the marker), so the driver's effect is observable.
struct RewriteMarkedConstant : OpRewritePattern<arith::ConstantOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ConstantOp op,
                                PatternRewriter &rewriter) const override {
    if (!op->hasAttr("triton_ext.abi_probe_marker"))
      return rewriter.notifyMatchFailure(op, "not marked");
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, rewriter.getI32IntegerAttr(42));
    return success();
  }
};

class AbiProbePass
    : public triton_ext::impl::TritonExtAbiProbeBase<AbiProbePass> {
public:
  using TritonExtAbiProbeBase::TritonExtAbiProbeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::json::Array checks;
    auto check = [&](StringRef name, int64_t expected, int64_t found) {
      checks.push_back(llvm::json::Object{{"check", name},
                                          {"expected", expected},
                                          {"found", found},
                                          {"ok", expected == found}});
    };

    // Traits: every scf.yield is a terminator, every arith.constant is
    // constant-like. With mismatched TypeIDs both counts come out as 0.
    int64_t yields = 0, yieldTerminators = 0;
    int64_t constants = 0, constantLike = 0;
    int64_t fors = 0, loopLike = 0, funcs = 0, functionLike = 0;
    int64_t loads = 0, loadEffects = 0, funcCasts = 0;
    module.walk([&](Operation *op) {
      if (isa<scf::YieldOp>(op)) {
        ++yields;
        yieldTerminators += op->hasTrait<OpTrait::IsTerminator>();
      }
      if (isa<arith::ConstantOp>(op)) {
        ++constants;
        constantLike += op->hasTrait<OpTrait::ConstantLike>();
      }
      if (isa<scf::ForOp>(op)) {
        ++fors;
        loopLike += static_cast<bool>(dyn_cast<LoopLikeOpInterface>(op));
      }
      if (op->getName().getStringRef() == "tt.func") {
        ++funcs;
        functionLike += static_cast<bool>(dyn_cast<FunctionOpInterface>(op));
        funcCasts += isa<triton::FuncOp>(op);
      }
      if (op->getName().getStringRef() == "tt.load") {
        ++loads;
        if (auto effects = dyn_cast<MemoryEffectOpInterface>(op))
          loadEffects += effects.hasEffect<MemoryEffects::Read>();
      }
    });
    check("scf.yield hasTrait<IsTerminator>", yields, yieldTerminators);
    check("arith.constant hasTrait<ConstantLike>", constants, constantLike);
    check("scf.for dyn_cast<LoopLikeOpInterface>", fors, loopLike);
    check("tt.func dyn_cast<FunctionOpInterface>", funcs, functionLike);
    check("tt.func isa<triton::FuncOp>", funcs, funcCasts);
    check("tt.load MemoryEffectOpInterface reads", loads, loadEffects);
    check("kernel has scf.for, scf.yield, tt.load, constants",
          /*expected=*/1, fors > 0 && yields > 0 && loads > 0 && constants > 0);

    // Types and attributes created here must unique to the same storage as
    // libtriton's: compare against a type libtriton built.
    MLIRContext *ctx = module.getContext();
    Builder b(ctx);
    int64_t sameI32 = 0;
    module.walk([&](arith::ConstantOp op) {
      if (op.getType().isInteger(32))
        sameI32 = op.getType() == b.getI32Type();
    });
    check("IntegerType::get(32) uniques with libtriton's i32", 1, sameI32);
    auto attr = b.getI32IntegerAttr(7);
    check("IntegerAttr round trip", 7, attr.getInt());
    check("isa<IntegerAttr> on a created attribute", 1,
          isa<IntegerAttr>(Attribute(attr)));

    // OpBuilder + verifier + greedy driver on a scratch module, so the real
    // kernel is left exactly as it was.
    OwningOpRef<ModuleOp> scratch = ModuleOp::create(module.getLoc());
    OpBuilder builder(ctx);
    Location loc = module.getLoc();
    builder.setInsertionPointToEnd(scratch->getBody());
    // A function returning both values keeps them alive through the driver's
    // dead-code removal: the marked constant (our pattern turns it into 42)
    // and 1 + 5 (arith's folder turns it into 6).
    Type i32 = builder.getI32Type();
    auto func = triton::FuncOp::create(
        builder, loc, "abi_probe_scratch",
        builder.getFunctionType(/*inputs=*/{}, {i32, i32}));
    builder.setInsertionPointToStart(func.addEntryBlock());
    auto c1 = arith::ConstantOp::create(builder, loc, builder.getI32IntegerAttr(1));
    auto c5 = arith::ConstantOp::create(builder, loc, builder.getI32IntegerAttr(5));
    auto marked =
        arith::ConstantOp::create(builder, loc, builder.getI32IntegerAttr(2));
    marked->setAttr("triton_ext.abi_probe_marker", builder.getUnitAttr());
    auto sum = arith::AddIOp::create(builder, loc, c1, c5);
    triton::ReturnOp::create(builder, loc,
                             ValueRange{marked.getResult(), sum.getResult()});
    check("OpBuilder-created ops verify", 1,
          succeeded(verify(scratch->getOperation())));
    check("created arith.constant hasTrait<ConstantLike>", 1,
          c1->hasTrait<OpTrait::ConstantLike>());

    RewritePatternSet patterns(ctx);
    patterns.add<RewriteMarkedConstant>(ctx);
    bool changed = false;
    LogicalResult converged =
        applyPatternsGreedily(scratch->getOperation(), std::move(patterns),
                              GreedyRewriteConfig(), &changed);
    check("applyPatternsGreedily converges", 1, succeeded(converged));
    check("applyPatternsGreedily changed the IR", 1, changed);
    // Read back what the function returns: both must now be constants.
    auto returned = [&](unsigned i) -> int64_t {
      Operation *term = func.getBody().front().getTerminator();
      auto def = term->getOperand(i).getDefiningOp<arith::ConstantOp>();
      auto value = def ? dyn_cast<IntegerAttr>(def.getValue()) : IntegerAttr();
      return value ? value.getInt() : -1;
    };
    check("greedy driver applied a plugin pattern", 42, returned(0));
    check("greedy driver folded 1 + 5 through arith's folder", 6, returned(1));

    if (report.empty())
      return;
    std::error_code ec;
    llvm::raw_fd_ostream os(report, ec, llvm::sys::fs::OF_Text);
    if (ec) {
      module.emitError() << "abi-probe: cannot write report '" << report
                         << "': " << ec.message();
      return signalPassFailure();
    }
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(checks))) << "\n";
  }
};

} // namespace

TRITON_EXT_REGISTER_PASS(abi_probe, AbiProbePass);
