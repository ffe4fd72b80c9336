//===- OffsetOverflowAnalysis.h - Which offsets may wrap -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
// The analysis half of offset_overflow_check: reads the IR and says which i32
// trees feed offsets, which of them provably never wrap, which accesses use an
// offset's lanes, and why a site's check stays. Creates and changes no IR;
// OffsetOverflowCheck.cpp builds the checks (the emission half).
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_SANITIZERS_OFFSET_OVERFLOW_ANALYSIS_H
#define TRITON_EXT_SANITIZERS_OFFSET_OVERFLOW_ANALYSIS_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <cstddef>
#include <optional>
#include <string>

namespace mlir::triton_ext::range {
class IntegerRanges;
} // namespace mlir::triton_ext::range

namespace mlir::triton_ext::sanitizers::offset_overflow {

/// Levels of add/sub/mul recomputed in i64; deeper operands become leaves.
constexpr unsigned kMaxDepth = 8;

/// Ops cloned in front of a loop to check a loop-invariant offset there.
constexpr size_t kMaxHoisted = 32;

/// What an offset site reports.
constexpr StringLiteral kWhat = "i32 offset overflow lanes";

/// True for i32 add/sub/mul (scalar or tensor).
bool isI32Arith(Value value);

/// Whether the offset tree expands `value`, `depth` levels below its root and
/// under `products` multiplications, and if so the product count its operands
/// get (one more below a multiply). A leaf otherwise: not i32 add/sub/mul,
/// too deep, or a product of products (which could overflow i64). Every walk
/// of the tree (static bounds, reasons, the i64 recompute, the bounds test)
/// uses this one rule, so they agree on where the leaves are.
std::optional<unsigned> expandedProducts(Value value, unsigned depth,
                                         unsigned products);

/// The i32 arithmetic root behind an offset or coordinate, if any. Shape ops
/// (`tt.splat`, `tt.broadcast`, `tt.expand_dims`) are seen through: they copy
/// values, so `ptrs += splat(BLOCK_K * stride)` checks the scalar product.
Value arithRoot(Value offset);

/// Ops that compute `root` inside the body of `loop` from values defined
/// outside it, in block order; none if `root` depends on the loop (induction
/// variable, iter_args), on ops with memory effects or regions, or on ops in
/// nested blocks.
std::optional<SmallVector<Operation *>>
loopInvariantSlice(Value root, scf::ForOp loop, bool allowIV = false);

/// True if `root`'s exact (unwrapped) value provably fits in i32 on every
/// lane, program and launch: its i32 result then never wraps and its check
/// is left out. Bounds come from the shared range facts (RangeAnalysis.h),
/// narrowed at the leaves by `ranges` (MLIR's integer range analysis, if
/// given), and interval arithmetic over the tree, cut as the i64 recompute
/// cuts it.
bool fitsI32(Value root, const range::IntegerRanges *ranges = nullptr);

/// Collects, for every access (`tt.load`, `tt.store` address) that `value`
/// reaches as an offset (`offset`) or a pointer, the conjuncts of its mask
/// on `value`'s lanes; an empty list for an access whose lanes cannot be
/// narrowed. Followed through `arith.extsi`, `tt.addptr`, `tt.broadcast`,
/// `tt.expand_dims` (the `path`) and integer add/sub/mul of the same shape
/// (`idx[:, None] * D` inside `idx[:, None] * D + cols`); false if `value`
/// has another use (a loop-carried pointer, an atomic, a compare): its lanes
/// may then be used in ways the masks do not describe.
bool accessMasks(Value value, bool offset, SmallVectorImpl<Operation *> &path,
                 SmallVectorImpl<SmallVector<Value>> &accesses,
                 unsigned depth = 0);

/// The outermost `scf.for` marked `tt.flatten` (`tl.range(..., flatten=True)`)
/// whose body holds `op` through `scf.for`s only, if any (issue 32): a check
/// in such a nest is carried out of it (checkAcrossIterations).
scf::ForOp flattenedNest(Operation *op);

/// Why the offset check of `root` stays (the leaves it cannot bound) and
/// what it costs (`how`), as the site's reason
/// (`triton_ext.sanitizer_sites_reason`, issue 18).
std::string offsetReason(Value root, StringRef how);

} // namespace mlir::triton_ext::sanitizers::offset_overflow

#endif // TRITON_EXT_SANITIZERS_OFFSET_OVERFLOW_ANALYSIS_H
