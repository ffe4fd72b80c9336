//===- SanitizerUtils.h - Shared reporting for the sanitizer passes -------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// The three sanitizer passes report the same way: a per-program count of bad
// lanes, printed with `tt.print` when non-zero (kernel name, site, count), and
// in abort mode followed by a scalar `tt.assert` that the count is zero.
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_SANITIZERS_UTILS_H
#define TRITON_EXT_SANITIZERS_UTILS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>

namespace mlir::triton_ext::sanitizers {

/// How a finding is reported.
enum class ReportMode { Record, Abort };

/// Parses the `mode` option (`record` or `abort`).
std::optional<ReportMode> parseMode(StringRef text);

/// `file:line` of the innermost file location inside `loc` (callee first for
/// inlined code), or `unknown`.
std::string siteOf(Location loc);

/// Name of the `tt.func` enclosing `op`, or `unknown`.
std::string kernelNameOf(Operation *op);

/// Number of true lanes of `bad` (i1 scalar or tensor of i1) as an i32
/// scalar, built with `arith.extui` and one `tt.reduce` (add) per dimension.
Value countTrue(OpBuilder &builder, Location loc, Value bad);

/// Emits the report for `count` (i32) at the builder's insertion point:
/// `scf.if count > 0 { tt.print "<prefix>" count }` and, in abort mode,
/// `tt.assert count == 0, "<prefix>"`. The prefix reads
/// `[triton-ext <pass>] kernel=<k> site=<file:line> <what>=`.
void emitReport(OpBuilder &builder, Location loc, Value count,
                StringRef passName, StringRef kernel, StringRef site,
                StringRef what, ReportMode mode);

} // namespace mlir::triton_ext::sanitizers

#endif // TRITON_EXT_SANITIZERS_UTILS_H
