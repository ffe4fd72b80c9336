//===- SanitizerUtils.cpp - Shared reporting for the sanitizer passes -----===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Counting and reporting shared by nan_inf_check and offset_overflow_check.
// The count is a plain sum reduction (`tt.reduce` with `arith.addi`), whose
// result type Triton infers (slice layouts in TTGIR, plain tensors in TTIR),
// so the same code serves both stages.
//
// Reporting (issue 18). A device printf per program printed 61-69k lines for
// one 4096-element torch.compile kernel; nobody reads that. Each site now
// owns a record of three i64 in a device global of the kernel's module
// (`kCountersName`, an `llvm.mlir.global` in address space 1: a `.visible
// .global` array in the cubin, zero-initialized when the module is loaded):
//   [0] lanes     total finding lanes over all programs (atomic add)
//   [1] programs  programs that found something (atomic add; its old value
//                 elects the one program that prints)
//   [2] first     INT64_MAX - the smallest finding index (atomic max, so a
//                 zero-initialized record means "none"); the index is
//                 pid_linear * numel + lane (row-major lane in the tile)
// Why a module global rather than Triton's global scratch: the launcher
// allocates global scratch per launch from the user's allocator and frees it
// after, so nothing survives for the host to read, and profile scratch
// belongs to Proton. A module global needs no launcher change, no extra
// kernel argument and no host work per launch (so CUDA graphs and
// torch.compile launchers work unchanged), persists across launches, and
// the host finds it by name with cuModuleGetGlobal on the kernel's CUmodule
// (triton_ext/sanitizers.py). Why no "last program prints a launch total":
// that needs a ticket atomic from every program of every launch, one
// contended same-address atomic per CTA on clean kernels; here a clean
// program does no atomic at all (the records are only touched under
// `count > 0`).
//
// Who prints (print=none, the default): the host, from the records
// (triton_ext.sanitizers prints one line per site with findings when
// report()/check() read them, and at interpreter exit for what nobody read).
// A device line needs a `vprintf` call; ptxas allocates registers for the
// call's ABI across the whole kernel even though a correct run never takes
// the branch: the in-house fp16 GEMM went from 198 registers (no check) to
// 209 with the print and 199 without, 0.875x against 0.980x on the H200.
// print=first / every stay as opt-in immediate device lines.
//
// All updates are in the `count > 0` branch. The count is a reduction over
// the whole program, so the branch is uniform and the reductions and scalar
// atomics inside it (which Triton lowers with a shared-memory broadcast and a
// barrier) are legal. The report only reads kernel values; it writes only the
// records, which no kernel code reads.
//
//===----------------------------------------------------------------------===//

#include "SanitizerUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMAttrs.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "triton/Dialect/Triton/IR/Dialect.h"
#include "triton/Dialect/TritonGPU/IR/Dialect.h"

#include <climits>

namespace mlir::triton_ext::sanitizers {

std::optional<ReportOptions> makeReportOptions(Operation *op,
                                               StringRef passName,
                                               ReportMode mode, PrintMode print,
                                               bool records) {
  ReportOptions options;
  options.records = records;
  options.mode = mode;
  options.print = print;
  if (!records && options.print == PrintMode::First) {
    // The one line per site is elected through the records' atomics.
    op->emitError() << passName
                    << ": print=first needs records=true (use print=every)";
    return std::nullopt;
  }
  return options;
}

std::string siteOf(Location loc) {
  if (auto fileLoc = loc->findInstanceOf<FileLineColLoc>())
    return (fileLoc.getFilename().getValue() + ":" +
            std::to_string(fileLoc.getLine()))
        .str();
  return "unknown";
}

/// The file location in `loc` that a kernel's author wrote: for code inlined
/// from Triton's own library (`tl.sum`, `tl.softmax`: triton/language/...),
/// the line that called it.
static FileLineColLoc userFileLoc(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return userFileLoc(name.getChildLoc());
  if (auto call = dyn_cast<CallSiteLoc>(loc)) {
    FileLineColLoc callee = userFileLoc(call.getCallee());
    if (callee &&
        !callee.getFilename().getValue().contains("/triton/language/"))
      return callee;
    FileLineColLoc caller = userFileLoc(call.getCaller());
    return caller ? caller : callee;
  }
  return loc->findInstanceOf<FileLineColLoc>();
}

std::string shortSiteOf(Location loc) {
  if (FileLineColLoc fileLoc = userFileLoc(loc)) {
    StringRef file = fileLoc.getFilename().getValue();
    return (file.substr(file.find_last_of('/') + 1) + ":" +
            std::to_string(fileLoc.getLine()))
        .str();
  }
  return "unknown";
}

std::string nameOf(Value value) {
  Location loc = value.getLoc();
  if (auto name = loc->findInstanceOf<NameLoc>())
    return name.getName().str();
  return "";
}

std::string joinShort(ArrayRef<std::string> items, size_t keep) {
  std::string out;
  for (auto [i, item] : llvm::enumerate(items)) {
    if (i == keep) {
      out += " +" + std::to_string(items.size() - keep) + " more";
      break;
    }
    out += (i ? ", " : "") + item;
  }
  return out;
}

std::string kernelNameOf(Operation *op) {
  if (auto func = op->getParentOfType<triton::FuncOp>())
    return func.getSymName().str();
  return "unknown";
}

unsigned nextReduceAxis(RankedTensorType type) {
  auto layout = dyn_cast_or_null<triton::gpu::DistributedEncodingTrait>(
      type.getEncoding());
  if (!layout || type.getRank() < 2)
    return 0;
  SmallVector<unsigned> warps =
      triton::gpu::getWarpsPerCTA(type.getEncoding(), type.getShape());
  unsigned best = 0;
  for (unsigned axis = 1; axis < warps.size(); ++axis)
    if (warps[axis] <= warps[best])
      best = axis;
  return best;
}

/// Reduces every dimension of `value` (i32 tensor) with addi or minsi.
static Value reduceAll(OpBuilder &builder, Location loc, Value value,
                       bool min) {
  Type i32 = builder.getI32Type();
  auto tensorTy = cast<RankedTensorType>(value.getType());
  // Reduce one dimension at a time (nextReduceAxis) until a scalar is left;
  // Triton infers each result type (a slice of the previous layout in TTGIR).
  for (int64_t rank = tensorTy.getRank(); rank > 0; --rank) {
    auto reduce = triton::ReduceOp::create(
        builder, loc, ValueRange{value},
        nextReduceAxis(cast<RankedTensorType>(value.getType())));
    OpBuilder::InsertionGuard guard(builder);
    Block *body =
        builder.createBlock(&reduce.getCombineOp(), {}, {i32, i32}, {loc, loc});
    Value lhs = body->getArgument(0), rhs = body->getArgument(1);
    Value combined =
        min ? arith::MinSIOp::create(builder, loc, lhs, rhs).getResult()
            : arith::AddIOp::create(builder, loc, lhs, rhs).getResult();
    triton::ReduceReturnOp::create(builder, loc, ValueRange{combined});
    value = reduce.getResult()[0];
  }
  return value;
}

Value sumLanes(OpBuilder &builder, Location loc, Value counts) {
  return reduceAll(builder, loc, counts, /*min=*/false);
}

Value countTrue(OpBuilder &builder, Location loc, Value bad) {
  Type i32 = builder.getI32Type();
  auto tensorTy = dyn_cast<RankedTensorType>(bad.getType());
  if (!tensorTy)
    return arith::ExtUIOp::create(builder, loc, i32, bad);
  Value count = arith::ExtUIOp::create(builder, loc, tensorTy.clone(i32), bad);
  return reduceAll(builder, loc, count, /*min=*/false);
}

/// Row-major index of each lane of a tensor of type `like` (i32, same shape
/// and layout), or null for ranks above 2. In TTGIR the ranges of a 2-D
/// tensor take the slice layouts of `like`'s layout, so expand_dims and
/// broadcast bring them back to it without a layout conversion.
static Value laneIndex(OpBuilder &builder, Location loc,
                       RankedTensorType like) {
  Type i32 = builder.getI32Type();
  ArrayRef<int64_t> shape = like.getShape();
  Attribute enc = like.getEncoding();
  if (shape.size() == 1)
    return triton::MakeRangeOp::create(
        builder, loc, RankedTensorType::get(shape, i32, enc), 0, shape[0]);
  if (shape.size() != 2)
    return {};
  auto along = [&](unsigned dim) -> Value {
    Attribute sliceEnc;
    if (enc) {
      auto parent = dyn_cast<triton::gpu::DistributedEncodingTrait>(enc);
      if (!parent)
        return {};
      sliceEnc = triton::gpu::SliceEncodingAttr::get(builder.getContext(),
                                                     1 - dim, parent);
    }
    Value range = triton::MakeRangeOp::create(
        builder, loc, RankedTensorType::get({shape[dim]}, i32, sliceEnc), 0,
        shape[dim]);
    Value expanded = triton::ExpandDimsOp::create(builder, loc, range, 1 - dim);
    return triton::BroadcastOp::create(
        builder, loc, RankedTensorType::get(shape, i32, enc), expanded);
  };
  Value rows = along(0), cols = along(1);
  if (!rows || !cols)
    return {};
  Value width = arith::ConstantOp::create(
      builder, loc,
      DenseElementsAttr::get(RankedTensorType::get(shape, i32, enc),
                             builder.getI32IntegerAttr(shape[1])));
  return arith::AddIOp::create(
      builder, loc, arith::MulIOp::create(builder, loc, rows, width), cols);
}

/// The per-lane operands of a (count, first lane) reduction over `bad`:
/// {bad as 0/1, the lane's index where bad else INT32_MAX}, or empty when
/// the lanes cannot be numbered (rank above 2).
static SmallVector<Value> countAndIndexOperands(OpBuilder &builder,
                                                Location loc, Value bad,
                                                RankedTensorType badTy) {
  Value index = laneIndex(builder, loc, badTy);
  if (!index)
    return {};
  auto i32Ty = cast<RankedTensorType>(index.getType());
  Value none = arith::ConstantOp::create(
      builder, loc,
      DenseElementsAttr::get(cast<ShapedType>(i32Ty),
                             builder.getI32IntegerAttr(INT32_MAX)));
  return {arith::ExtUIOp::create(builder, loc, i32Ty, bad),
          arith::SelectOp::create(builder, loc, bad, index, none)};
}

Value firstTrueLane(OpBuilder &builder, Location loc, Value bad) {
  auto badTy = dyn_cast<RankedTensorType>(bad.getType());
  if (!badTy)
    return {};
  Value index = laneIndex(builder, loc, badTy);
  if (!index)
    return {};
  Value none = arith::ConstantOp::create(
      builder, loc,
      DenseElementsAttr::get(cast<ShapedType>(index.getType()),
                             builder.getI32IntegerAttr(INT32_MAX)));
  Value picked = arith::SelectOp::create(builder, loc, bad, index, none);
  return reduceAll(builder, loc, picked, /*min=*/true);
}

SmallVector<Value> countAndIndexLanes(OpBuilder &builder, Location loc,
                                      Value bad) {
  auto badTy = dyn_cast<RankedTensorType>(bad.getType());
  if (!badTy)
    return {};
  return countAndIndexOperands(builder, loc, bad, badTy);
}

std::pair<Value, Value> countAndFirstLane(OpBuilder &builder, Location loc,
                                          Value bad) {
  SmallVector<Value> values = countAndIndexLanes(builder, loc, bad);
  if (values.empty())
    return {};
  return sumAndMinLanes(builder, loc, values[0], values[1]);
}

std::pair<Value, Value> sumAndMinLanes(OpBuilder &builder, Location loc,
                                       Value counts, Value firsts) {
  Type i32 = builder.getI32Type();
  auto tensorTy = cast<RankedTensorType>(counts.getType());
  SmallVector<Value> values{counts, firsts};
  // One multi-operand reduction per dimension: (sum of the bad lanes,
  // smallest index of a bad lane), so the cross-warp step exchanges both in
  // one round (one barrier).
  for (int64_t rank = tensorTy.getRank(); rank > 0; --rank) {
    auto reduce = triton::ReduceOp::create(
        builder, loc, ValueRange(values),
        nextReduceAxis(cast<RankedTensorType>(values[0].getType())));
    OpBuilder::InsertionGuard guard(builder);
    Block *body = builder.createBlock(
        &reduce.getCombineOp(), {}, {i32, i32, i32, i32}, {loc, loc, loc, loc});
    Value sum = arith::AddIOp::create(builder, loc, body->getArgument(0),
                                      body->getArgument(2));
    Value min = arith::MinSIOp::create(builder, loc, body->getArgument(1),
                                       body->getArgument(3));
    triton::ReduceReturnOp::create(builder, loc, ValueRange{sum, min});
    values = {reduce.getResult()[0], reduce.getResult()[1]};
  }
  return {values[0], values[1]};
}

/// Longest reason kept for one site (several checks sharing a record each
/// add theirs while it fits; a longer first one is cut: the text is for a
/// table cell).
constexpr size_t kMaxReason = 240;

/// Records `reason` for site `index` in kSiteReasonsAttrName (kept as long
/// as the site table; "" for sites registered without one). Two checks that
/// share a record (one kind at one line) keep both reasons, once each.
static void registerReason(ModuleOp module, unsigned index, size_t count,
                           StringRef reason) {
  MLIRContext *ctx = module.getContext();
  SmallVector<std::string> reasons;
  if (auto existing = module->getAttrOfType<ArrayAttr>(kSiteReasonsAttrName))
    for (Attribute r : existing)
      reasons.push_back(cast<StringAttr>(r).getValue().str());
  reasons.resize(count);
  // `|` and newlines would break the `|`-separated, one-per-line formats the
  // reasons are shown next to.
  std::string text = reason.str();
  for (char &c : text)
    if (c == '|' || c == '\n')
      c = '/';
  std::string &slot = reasons[index];
  if (slot.empty())
    slot = text.size() <= kMaxReason ? text
                                     : text.substr(0, kMaxReason - 3) + "...";
  else if (!StringRef(slot).contains(text) &&
           slot.size() + text.size() + 2 <= kMaxReason)
    slot += "; " + text;
  SmallVector<Attribute> attrs;
  for (const std::string &r : reasons)
    attrs.push_back(StringAttr::get(ctx, r));
  module->setAttr(kSiteReasonsAttrName, ArrayAttr::get(ctx, attrs));
}

/// `site.reason` with the site's own file left out of the lines it cites
/// ("loaded `x` (line 12)" for "loaded `x` (kernel.py:12)" at kernel.py):
/// shorter table cells.
static std::string compactReason(const ReportSite &site) {
  StringRef file = StringRef(site.site).rsplit(':').first;
  std::string cited =
      ("(" + file.substr(file.find_last_of('/') + 1) + ":").str();
  std::string text = site.reason;
  for (size_t at = text.find(cited); at != std::string::npos;
       at = text.find(cited, at))
    text.replace(at, cited.size(), "(line ");
  return text;
}

/// Appends `entry` to the module's site table (or finds it: two checks of
/// one kind at one line share a record), records `reason` for it, and sizes
/// the counters global to match. Returns the site's index.
static unsigned registerSite(ModuleOp module, StringRef entry,
                             StringRef reason) {
  MLIRContext *ctx = module.getContext();
  // The globals get the module's location: Triton's debug-info pass
  // (LLVMDIScope) fails on a global located in an inlined callee.
  Location loc = module.getLoc();
  SmallVector<Attribute> sites;
  if (auto existing = module->getAttrOfType<ArrayAttr>(kSitesAttrName))
    sites.assign(existing.begin(), existing.end());
  for (auto [idx, site] : llvm::enumerate(sites)) {
    if (cast<StringAttr>(site).getValue() == entry) {
      registerReason(module, idx, sites.size(), reason);
      return idx;
    }
  }
  unsigned index = sites.size();
  sites.push_back(StringAttr::get(ctx, entry));
  module->setAttr(kSitesAttrName, ArrayAttr::get(ctx, sites));
  registerReason(module, index, sites.size(), reason);

  int64_t slots = 3 * static_cast<int64_t>(sites.size());
  auto i64 = IntegerType::get(ctx, 64);
  auto arrayTy = LLVM::LLVMArrayType::get(i64, slots);
  auto zeros = DenseElementsAttr::get(RankedTensorType::get({slots}, i64),
                                      IntegerAttr::get(i64, 0));
  std::string table;
  for (Attribute site : sites)
    table += (cast<StringAttr>(site).getValue() + "\n").str();
  table.push_back('\0');
  auto tableTy =
      LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), table.size());
  auto tableAttr = StringAttr::get(ctx, table);
  // External linkage keeps both globals in the cubin although no kernel code
  // reads the table: the host finds them by name.
  if (auto global = module.lookupSymbol<LLVM::GlobalOp>(kCountersName)) {
    global.setGlobalType(arrayTy);
    global.setValueAttr(zeros);
  } else {
    OpBuilder builder(ctx);
    builder.setInsertionPointToStart(module.getBody());
    LLVM::GlobalOp::create(builder, loc, arrayTy, /*isConstant=*/false,
                           LLVM::Linkage::External, kCountersName, zeros,
                           /*alignment=*/8, /*addrSpace=*/1);
  }
  if (auto global = module.lookupSymbol<LLVM::GlobalOp>(kSitesGlobalName)) {
    global.setGlobalType(tableTy);
    global.setValueAttr(tableAttr);
  } else {
    OpBuilder builder(ctx);
    builder.setInsertionPointToStart(module.getBody());
    LLVM::GlobalOp::create(builder, loc, tableTy, /*isConstant=*/true,
                           LLVM::Linkage::External, kSitesGlobalName, tableAttr,
                           /*alignment=*/1, /*addrSpace=*/1);
  }
  return index;
}

/// Pointer (!tt.ptr<i64>) to slot `slot` of the counters global. The
/// unrealized cast from the LLVM pointer is resolved when TritonGPU lowers
/// to LLVM (!tt.ptr<i64, 1> becomes the same !llvm.ptr<1>).
static Value slotPointer(OpBuilder &builder, Location loc, int64_t slot) {
  MLIRContext *ctx = builder.getContext();
  Value address = LLVM::AddressOfOp::create(
      builder, loc, LLVM::LLVMPointerType::get(ctx, 1), kCountersName);
  Type ptrTy = triton::PointerType::get(builder.getI64Type(),
                                        triton::PtrAddrSpace::Global);
  Value base = UnrealizedConversionCastOp::create(
                   builder, loc, TypeRange{ptrTy}, ValueRange{address})
                   .getResult(0);
  Value offset =
      arith::ConstantIntOp::create(builder, loc, builder.getI32Type(), slot);
  return triton::AddPtrOp::create(builder, loc, ptrTy, base, offset);
}

/// A scalar atomic on `ptr`, done only where `mask` (i1) is true; always
/// without a mask.
static Value atomic(OpBuilder &builder, Location loc, triton::RMWOp op,
                    Value ptr, Value value, Value mask = Value()) {
  if (!mask)
    mask = arith::ConstantIntOp::create(builder, loc, builder.getI1Type(), 1);
  return triton::AtomicRMWOp::create(
      builder, loc, builder.getI64Type(), op, ptr, value, mask,
      triton::MemSemantic::RELAXED, triton::MemSyncScope::GPU);
}

/// The program's linear id, x + y * nx + z * nx * ny, as i64.
static Value linearProgramId(OpBuilder &builder, Location loc) {
  Type i64 = builder.getI64Type();
  auto ext = [&](Value v) -> Value {
    return arith::ExtSIOp::create(builder, loc, i64, v);
  };
  Value x = ext(
      triton::GetProgramIdOp::create(builder, loc, triton::ProgramIDDim::X));
  Value y = ext(
      triton::GetProgramIdOp::create(builder, loc, triton::ProgramIDDim::Y));
  Value z = ext(
      triton::GetProgramIdOp::create(builder, loc, triton::ProgramIDDim::Z));
  Value nx = ext(
      triton::GetNumProgramsOp::create(builder, loc, triton::ProgramIDDim::X));
  Value ny = ext(
      triton::GetNumProgramsOp::create(builder, loc, triton::ProgramIDDim::Y));
  Value yz = arith::AddIOp::create(builder, loc, y,
                                   arith::MulIOp::create(builder, loc, z, ny));
  return arith::AddIOp::create(builder, loc, x,
                               arith::MulIOp::create(builder, loc, yz, nx));
}

void emitReport(OpBuilder &builder, Location loc, Value count,
                LanesBuilder lanes, const ReportSite &site,
                const ReportOptions &options) {
  Value zero = arith::ConstantIntOp::create(builder, loc, count.getType(), 0);
  Value found = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::sgt,
                                      count, zero);
  emitReportWhen(
      builder, loc, found, [&](OpBuilder &, Location) { return count; }, lanes,
      site, options);
}

/// Builds (first lane, lanes per program) on the reporting path.
using FirstLaneBuilder =
    function_ref<std::pair<Value, int64_t>(OpBuilder &, Location)>;

static void emitReportImpl(OpBuilder &builder, Location loc, Value found,
                           CountBuilder counter, FirstLaneBuilder first,
                           const ReportSite &site,
                           const ReportOptions &options);

void emitReportWhen(OpBuilder &builder, Location loc, Value found,
                    CountBuilder counter, LanesBuilder lanes,
                    const ReportSite &site, const ReportOptions &options) {
  emitReportImpl(
      builder, loc, found, counter,
      [&](OpBuilder &b, Location l) -> std::pair<Value, int64_t> {
        Value bad = lanes(b, l);
        auto badTy = dyn_cast<RankedTensorType>(bad.getType());
        if (!badTy)
          return {Value(), 1};
        return {firstTrueLane(b, l, bad), badTy.getNumElements()};
      },
      site, options);
}

/// Updates the site's record with `count` (i32) and `firstLane` (i32, lane
/// of a tile of `numel`) and prints per `options.print`, at the builder's
/// insertion point, which must be under a branch taken only by programs with
/// findings (uniform over the program: the scalar atomics synchronize it),
/// or, with `found` (i1, uniform: count > 0), anywhere: the atomics are then
/// masked with it (print=none only: the print needs its own branch).
static void emitRecords(OpBuilder &builder, Location loc, Value count,
                        Value firstLane, int64_t numel, ModuleOp module,
                        const ReportSite &site, StringRef prefix,
                        const ReportOptions &options, Value found = Value()) {
  Type i64 = builder.getI64Type();
  Type i32 = builder.getI32Type();
  std::string entry =
      (site.pass + "|" + site.what + "|" + std::to_string(numel) + "|" +
       site.kernel + "|" + site.site)
          .str();
  unsigned index = registerSite(module, entry, compactReason(site));

  Value lanesTotal = arith::ExtSIOp::create(builder, loc, i64, count);
  atomic(builder, loc, triton::RMWOp::ADD, slotPointer(builder, loc, 3 * index),
         lanesTotal, found);
  Value one = arith::ConstantIntOp::create(builder, loc, i64, 1);
  Value before = atomic(builder, loc, triton::RMWOp::ADD,
                        slotPointer(builder, loc, 3 * index + 1), one, found);
  Value firstIndex = arith::AddIOp::create(
      builder, loc,
      arith::MulIOp::create(
          builder, loc, linearProgramId(builder, loc),
          arith::ConstantIntOp::create(builder, loc, i64, numel)),
      arith::ExtSIOp::create(builder, loc, i64, firstLane));
  Value encoded = arith::SubIOp::create(
      builder, loc, arith::ConstantIntOp::create(builder, loc, i64, INT64_MAX),
      firstIndex);
  atomic(builder, loc, triton::RMWOp::MAX,
         slotPointer(builder, loc, 3 * index + 2), encoded, found);
  if (options.print != PrintMode::First)
    return;
  assert(!found && "print=first reports under a branch");
  // One line per site: only the program whose update found the `programs`
  // counter at zero (the scalar atomic's result is broadcast to all its
  // threads), and in it only thread 0 (tt.print prints from every thread).
  // The thread id comes from PTX; the branch around the print is the only
  // per-thread one.
  Value c0 = arith::ConstantIntOp::create(builder, loc, i32, 0);
  Value tid = triton::ElementwiseInlineAsmOp::create(
                  builder, loc, TypeRange{i32}, "mov.u32 $0, %tid.x;", "=r,r",
                  /*pure=*/true, /*packed_element=*/1, ValueRange{c0})
                  .getResult()[0];
  Value firstProgram =
      arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq, before,
                            arith::ConstantIntOp::create(builder, loc, i64, 0));
  Value threadZero =
      arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq, tid, c0);
  Value prints = arith::AndIOp::create(builder, loc, firstProgram, threadZero);
  auto printIf =
      scf::IfOp::create(builder, loc, prints, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(printIf.thenBlock());
  triton::PrintOp::create(
      builder, loc,
      (prefix + "; first report of this site, lanes in this program=").str(),
      /*hex=*/false, ValueRange{count}, ArrayRef<int32_t>{1});
}

bool followsDotLoop(Operation *op) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (!isa<LoopLikeOpInterface>(prev))
      continue;
    bool dot = false;
    prev->walk([&](Operation *inner) {
      StringRef name = inner->getName().getStringRef();
      dot |= name == "tt.dot" || name == "tt.dot_scaled" ||
             name == "ttng.warp_group_dot";
    });
    if (dot)
      return true;
  }
  return false;
}

Operation *entryReturnAt(OpBuilder &builder) {
  if (!isa<triton::FuncOp>(builder.getInsertionBlock()->getParentOp()))
    return nullptr;
  Operation *last = builder.getInsertionBlock()->getTerminator();
  return last && isa<triton::ReturnOp>(last) ? last : nullptr;
}

/// Marks the `scf.if` that only updates a site's records (emitRecordsAtEnd):
/// recordsInPlace passes over it.
static constexpr llvm::StringLiteral kRecordsAttr =
    "triton_ext.sanitizer_records";

/// True if the records of a check whose scalars are ready at the builder's
/// insertion point should be updated right there instead of before `ret`
/// (the kernel's `tt.return`, in the same block): print=none, and a branch
/// or loop lies between the two (the kernel's own, or another check's
/// reporting branch) that is not itself a records-only `scf.if`. Deferred,
/// the site's (count, first lane) stay live across that code, and ptxas
/// sizes the kernel for the worst point of it, never-taken branches
/// included: FlagGems' rotary prefill with all three checks kept
/// nan_inf_check's two loop pairs live across offset_overflow_check's six
/// replay branches, 40 registers (12 programs of 128 threads per SM)
/// against 30 in place (16, as without the checks). With print on, the
/// call's cost in place is what the deferral avoids (emitReportImpl).
static bool recordsInPlace(OpBuilder &builder, Operation *ret,
                           const ReportOptions &options) {
  if (options.print != PrintMode::None || !isa<triton::ReturnOp>(ret) ||
      builder.getInsertionBlock() != ret->getBlock())
    return false;
  for (auto it = builder.getInsertionPoint(); &*it != ret; ++it) {
    if (it->hasAttr(kRecordsAttr))
      continue;
    if (isa<RegionBranchOpInterface, LoopLikeOpInterface>(&*it))
      return true;
  }
  return false;
}

Operation *deferredRecordsPoint(OpBuilder &builder, Operation *ret,
                                const ReportOptions &options) {
  return recordsInPlace(builder, ret, options) ? &*builder.getInsertionPoint()
                                               : ret;
}

void markRecordsOnly(Operation *op) {
  op->setAttr(kRecordsAttr, UnitAttr::get(op->getContext()));
}

void emitRecordsAtEnd(OpBuilder &builder, Location loc, Operation *ret,
                      Value count, Value firstLane, int64_t numel,
                      const ReportSite &site, const ReportOptions &options,
                      bool inPlaceBeforeBranches) {
  ModuleOp module = ret->getParentOfType<ModuleOp>();
  std::string prefix = ("[triton-ext " + site.pass + "] kernel=" + site.kernel +
                        " site=" + site.site + " " + site.what)
                           .str();
  OpBuilder::InsertionGuard guard(builder);
  if (inPlaceBeforeBranches && recordsInPlace(builder, ret, options))
    ret = &*builder.getInsertionPoint();
  builder.setInsertionPoint(ret);
  Value any = arith::CmpIOp::create(
      builder, loc, arith::CmpIPredicate::sgt, count,
      arith::ConstantIntOp::create(builder, loc, count.getType(), 0));
  // Whether a loop with a dot runs before the kernel's return (a GEMM's or
  // attention's main loop, the check in its epilogue).
  bool afterLoop = isa<triton::FuncOp>(ret->getParentOp()) && followsDotLoop(ret);
  if (options.maskedRecords && options.print == PrintMode::None && afterLoop) {
    // No branch: the three atomics are masked with `count > 0` (uniform), so
    // a clean program executes them predicated off, as the branch skipped
    // them, and the records get the same updates. Why: a branch right before
    // the `tt.return` kept LLVM from sinking the epilogue's index
    // arithmetic below the kernel's main loop (torchao's int8 GEMM computed
    // its 16 row and column offsets before the K loop and held them across
    // it: 134 registers, 125 without the check, which no longer fit two
    // 256-thread CTAs per SM; 119 masked). Triton lowers a scalar atomic
    // whose result is unused as one predicated instruction of one thread,
    // without shared memory or a barrier; the first index's scalar
    // arithmetic (program id times the tile size) runs in every program, a
    // few uniform ops. Kernels without a loop keep the branch: there it
    // costs nothing to sink, and the masked form cost registers (in-house
    // 8192-lane RMS-norm 64 -> 72, Liger layer-norm forward 47 -> 55), and
    // so do loops without a dot (Liger's MoE gather: 40 -> 48 registers).
    emitRecords(builder, loc, count, firstLane, numel, module, site, prefix,
                options, any);
    return;
  }
  auto atEnd = scf::IfOp::create(builder, loc, any, /*withElseRegion=*/false);
  atEnd->setAttr(kRecordsAttr, builder.getUnitAttr());
  builder.setInsertionPoint(atEnd.thenBlock()->getTerminator());
  if (options.print == PrintMode::Every)
    triton::PrintOp::create(builder, loc, prefix + "=", /*hex=*/false,
                            ValueRange{count}, ArrayRef<int32_t>{1});
  emitRecords(builder, loc, count, firstLane, numel, module, site, prefix,
              options);
}

static void emitReportImpl(OpBuilder &builder, Location loc, Value found,
                           CountBuilder counter, FirstLaneBuilder first,
                           const ReportSite &site,
                           const ReportOptions &options) {
  ModuleOp module =
      builder.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  std::string prefix = ("[triton-ext " + site.pass + "] kernel=" + site.kernel +
                        " site=" + site.site + " " + site.what)
                           .str();
  Type i32 = builder.getI32Type();

  // Where the records are updated and the line printed. The print is a call
  // (vprintf) and ptxas keeps every value live across a call in registers
  // that survive it, or on the stack, and sizes the kernel for its worst
  // point, the never-taken reporting branch included: printing in place,
  // next to the checked tile, cost the RMS-norm forward 39 -> 63 registers
  // and a 32-byte stack frame (H200 0.81x); the atomics' address and index
  // arithmetic add more. So when the report sits in the kernel's entry block
  // (record mode), the reporting branch in place only reduces the tile to
  // two scalars, (count, first lane), and everything else happens right
  // before the `tt.return`, where almost nothing is live, under `count > 0`
  // (uniform over the program, like `found`). Legal: that code only reads
  // the two scalars and writes the records, which no kernel code reads;
  // device printf order against the kernel's own memory effects is not
  // observable (it is flushed at the next synchronize). Nested reports (in a
  // loop or an `scf.if`) stay in place: carrying the scalars out would need
  // new loop-carried values. So does abort mode, whose assert ends the
  // kernel.
  Operation *ret = entryReturnAt(builder);
  bool defer = ret && options.records && options.mode == ReportMode::Record;
  if (defer && options.recordsAt && options.print == PrintMode::None)
    ret = options.recordsAt(&*builder.getInsertionPoint(), ret);

  if (defer) {
    int64_t numel = 1;
    auto ifOp = scf::IfOp::create(builder, loc, TypeRange{i32, i32}, found,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(ifOp.thenBlock());
      Value count = counter(builder, loc);
      auto [firstLane, lanesPerProgram] = first(builder, loc);
      numel = lanesPerProgram;
      if (!firstLane)
        firstLane = arith::ConstantIntOp::create(builder, loc, i32, 0);
      scf::YieldOp::create(builder, loc, ValueRange{count, firstLane});
      builder.setInsertionPointToStart(ifOp.elseBlock());
      Value zero = arith::ConstantIntOp::create(builder, loc, i32, 0);
      scf::YieldOp::create(builder, loc, ValueRange{zero, zero});
    }
    emitRecordsAtEnd(builder, loc, ret, ifOp.getResult(0), ifOp.getResult(1),
                     numel, site, options,
                     // offset_overflow_check's records in place cost
                     // torchao's int8 GEMM registers (122 -> 127 alone,
                     // 133 -> 141 with all three): deferred as before.
                     /*inPlaceBeforeBranches=*/site.pass == "nan_inf_check");
    return;
  }

  // In place: everything under `found`.
  auto ifOp = scf::IfOp::create(builder, loc, found, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    Value count = counter(builder, loc);
    if (options.print == PrintMode::Every)
      triton::PrintOp::create(builder, loc, prefix + "=", /*hex=*/false,
                              ValueRange{count}, ArrayRef<int32_t>{1});
    if (options.records) {
      auto [firstLane, numel] = first(builder, loc);
      if (!firstLane)
        firstLane = arith::ConstantIntOp::create(builder, loc, i32, 0);
      emitRecords(builder, loc, count, firstLane, numel, module, site, prefix,
                  options);
    }
  }
  if (options.mode == ReportMode::Abort) {
    Value clean = arith::XOrIOp::create(
        builder, loc, found,
        arith::ConstantIntOp::create(builder, loc, builder.getI1Type(), 1));
    triton::AssertOp::create(builder, loc, clean, prefix + " nonzero");
  }
}

SmallVector<Value> reducePair(OpBuilder &builder, Location loc,
                              ArrayRef<Value> values, unsigned axis) {
  Type i32 = builder.getI32Type();
  auto reduce =
      triton::ReduceOp::create(builder, loc, ValueRange(values), axis);
  OpBuilder::InsertionGuard guard(builder);
  Block *body = builder.createBlock(&reduce.getCombineOp(), {},
                                    {i32, i32, i32, i32}, {loc, loc, loc, loc});
  Value sum = arith::AddIOp::create(builder, loc, body->getArgument(0),
                                    body->getArgument(2));
  Value min = arith::MinSIOp::create(builder, loc, body->getArgument(1),
                                     body->getArgument(3));
  triton::ReduceReturnOp::create(builder, loc, ValueRange{sum, min});
  return {reduce.getResult()[0], reduce.getResult()[1]};
}

bool emitWarpRecords(OpBuilder &builder, Location loc, Value bad,
                     const ReportSite &site, const ReportOptions &options) {
  namespace ttg = triton::gpu;
  auto badTy = dyn_cast<RankedTensorType>(bad.getType());
  if (!badTy || !badTy.getEncoding() || !options.records ||
      options.mode != ReportMode::Record || options.print != PrintMode::None)
    return false;
  auto blocked = dyn_cast<ttg::BlockedEncodingAttr>(badTy.getEncoding());
  if (!blocked || badTy.getRank() > 2)
    return false;
  int64_t numel = badTy.getNumElements();
  ArrayRef<unsigned> warps = blocked.getWarpsPerCTA();
  // Which axes to reduce, all held inside one warp (Triton reduces an axis
  // with one warp along it by registers and shuffles only: no shared
  // memory, no barrier), so that the result holds one value per warp group.
  SmallVector<int64_t> view; // 1-D tiles: the shape they are viewed as
  unsigned axis = 0;
  if (badTy.getRank() == 1) {
    // A 1-D row of N elements spread as (registers, lanes, warps, repeats)
    // is viewed as [R, W, C] (C = sizePerThread * threadsPerWarp, the
    // elements of one warp row; W warps; R = N / (W * C) repeats), or as
    // [W, C] without repeats: element i is (i / (W C), i / C % W, i % C),
    // so every element stays in its register (a reshape that moves no
    // data) and reducing C (lanes) and then R (registers of one thread)
    // leaves one value per warp.
    int64_t row =
        int64_t(blocked.getSizePerThread()[0]) * blocked.getThreadsPerWarp()[0];
    int64_t w = warps[0];
    // A tile smaller than the CTA's lanes holds copies of elements in
    // several warps: each copy would be counted.
    if (numel % (row * w) != 0)
      return false;
    int64_t repeats = numel / (row * w);
    if (repeats > 1)
      view = {repeats, w, row};
    else
      view = {w, row};
  } else {
    if (warps[1] == 1)
      axis = 1;
    else if (warps[0] == 1)
      axis = 0;
    else
      return false;
    // Copies of elements in several warps (a tile smaller than the CTA
    // along the kept axis) would be counted once per copy.
    unsigned kept = 1 - axis;
    if (badTy.getShape()[kept] %
            (int64_t(blocked.getSizePerThread()[kept]) *
             blocked.getThreadsPerWarp()[kept] * warps[kept]) !=
        0)
      return false;
  }
  Type i64 = builder.getI64Type();
  SmallVector<Value> values = countAndIndexOperands(builder, loc, bad, badTy);
  if (values.empty())
    return false;
  Operation *select = values[1].getDefiningOp();
  Value index = select->getOperand(1), none = select->getOperand(2);
  if (!view.empty()) {
    // Both operands get the same view (the same register mapping), so each
    // count stays paired with its lane's index.
    for (Value &value : values)
      value = triton::ReshapeOp::create(builder, loc, view, value);
    SmallVector<unsigned> viewWarps =
        ttg::getWarpsPerCTA(cast<RankedTensorType>(values[0].getType()));
    bool inWarp = viewWarps.back() == 1 && viewWarps.front() == 1;
    if (view.size() == 2)
      inWarp = viewWarps.back() == 1;
    if (!inWarp) {
      // Not the layout the view should infer: leave it to the count path
      // (the ops built here are unused and pure; erase them).
      for (Value value : values) {
        Operation *reshape = value.getDefiningOp();
        Operation *src = reshape->getOperand(0).getDefiningOp();
        reshape->erase();
        src->erase();
      }
      none.getDefiningOp()->erase();
      index.getDefiningOp()->erase();
      return false;
    }
    // Repeats first (elementwise in each thread), then the warp row.
    if (view.size() == 3)
      values = reducePair(builder, loc, values, 0);
    values = reducePair(builder, loc, values, 1);
  } else {
    values = reducePair(builder, loc, values, axis);
  }
  Value count = values[0], first = values[1];
  auto groupTy = cast<RankedTensorType>(count.getType());
  auto group64 = groupTy.clone(i64);
  auto splat = [&](Type type, TypedAttr value) -> Value {
    return arith::ConstantOp::create(
        builder, loc, DenseElementsAttr::get(cast<ShapedType>(type), value));
  };
  // Only warp groups with findings update the record: the atomics are
  // masked, so a clean warp runs them predicated off. Triton lowers a
  // tensor atomic per element in the threads that own it (one thread per
  // element, the copies held by the other lanes are masked off) and, its
  // result unused, without shared memory.
  Value zero = splat(groupTy, builder.getI32IntegerAttr(0));
  Value found = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::sgt,
                                      count, zero);
  // `numel:warps`: the record's second slot counts warp groups with
  // findings, not programs (the host prints `warps=`).
  std::string entry =
      (site.pass + "|" + site.what + "|" + std::to_string(numel) + ":warps|" +
       site.kernel + "|" + site.site)
          .str();
  ModuleOp module =
      builder.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  unsigned siteIndex = registerSite(module, entry, compactReason(site));
  auto ptrTy = triton::PointerType::get(i64, triton::PtrAddrSpace::Global);
  auto ptrs = [&](int64_t slot) -> Value {
    return triton::SplatOp::create(builder, loc, groupTy.clone(ptrTy),
                                   slotPointer(builder, loc, slot));
  };
  auto update = [&](triton::RMWOp op, int64_t slot, Value value) {
    triton::AtomicRMWOp::create(builder, loc, group64, op, ptrs(slot), value,
                                found, triton::MemSemantic::RELAXED,
                                triton::MemSyncScope::GPU);
  };
  update(triton::RMWOp::ADD, 3 * siteIndex,
         arith::ExtSIOp::create(builder, loc, group64, count));
  update(triton::RMWOp::ADD, 3 * siteIndex + 1,
         splat(group64, builder.getI64IntegerAttr(1)));
  Value base = arith::MulIOp::create(
      builder, loc, linearProgramId(builder, loc),
      arith::ConstantIntOp::create(builder, loc, i64, numel));
  Value firstIndex = arith::AddIOp::create(
      builder, loc, triton::SplatOp::create(builder, loc, group64, base),
      arith::ExtSIOp::create(builder, loc, group64, first));
  Value encoded = arith::SubIOp::create(
      builder, loc, splat(group64, builder.getI64IntegerAttr(INT64_MAX)),
      firstIndex);
  update(triton::RMWOp::MAX, 3 * siteIndex + 2, encoded);
  return true;
}

void keepRolled(Operation *loop) {
  MLIRContext *ctx = loop->getContext();
  auto unroll = LLVM::LoopUnrollAttr::get(
      ctx, /*disable=*/BoolAttr::get(ctx, true), /*count=*/{},
      /*runtimeDisable=*/{}, /*full=*/{}, /*followupUnrolled=*/{},
      /*followupRemainder=*/{}, /*followupAll=*/{});
  auto annotation = LLVM::LoopAnnotationAttr::get(
      ctx, /*disableNonforced=*/{}, /*vectorize=*/{}, /*interleave=*/{}, unroll,
      /*unrollAndJam=*/{}, /*licm=*/{}, /*distribute=*/{}, /*pipeline=*/{},
      /*peeled=*/{}, /*unswitch=*/{}, /*mustProgress=*/{}, /*isVectorized=*/{},
      /*startLoc=*/{}, /*endLoc=*/{}, /*parallelAccesses=*/{});
  loop->setDiscardableAttr("llvm.loop_annotation",
                           annotation);
}

} // namespace mlir::triton_ext::sanitizers
