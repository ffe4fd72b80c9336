//===- PassDatabase.h - What libTritonExtPassInfra knows of loaded plugins ===//
//
// SPDX-License-Identifier: Apache-2.0
//
// The query side of the pass database, in standard C++ types only, so that
// code built without MLIR's headers or with other flags (the Python bindings
// need RTTI, MLIR has none) can use it.
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_PASSDATABASE_H
#define TRITON_EXT_PASSDATABASE_H

#include <string>
#include <utility>
#include <vector>

namespace mlir::triton_ext {

/// What the database knows of one pass, derived from the MLIR pass itself.
struct PassDescription {
  std::string plugin;   ///< plugin name (TritonExt<Name>)
  std::string name;     ///< name bound by Triton: passes.plugin.add_<name>
  std::string argument; ///< MLIR pass argument (the opt flag)
  std::string summary;  ///< MLIR pass description
  std::string passName; ///< C++ pass name
  std::string anchor;   ///< op the pass runs on, or "any"
  std::string pipeline; ///< textual pipeline with every option's default
};

/// Passes of every plugin whose entry point has run in this process.
__attribute__((visibility("default"))) std::vector<PassDescription>
describeRegisteredPasses();

/// ("dialect" | "op", "<plugin>:<name>") for every plugin whose entry point
/// has run in this process.
__attribute__((visibility("default")))
std::vector<std::pair<std::string, std::string>>
describeRegisteredDialectsAndOps();

} // namespace mlir::triton_ext

#endif // TRITON_EXT_PASSDATABASE_H
