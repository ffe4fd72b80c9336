//===- PluginEntry.cpp - The entry point Triton looks up in each plugin ---===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Linked into every plugin (not into libTritonExtPassInfra): Triton finds
// `tritonGetPluginInfo` with dlsym on the plugin's own handle, and this copy
// sees only the plugin's hidden registration list, so each plugin reports
// exactly its own passes, dialects and ops. Compiled once; the plugin's name
// comes from its generated PluginIdentity.cpp.
//
//===----------------------------------------------------------------------===//

#include "triton-ext/PassInfra.h"
#include "triton-ext/PluginIdentity.h"

TRITON_PLUGIN_API mlir::triton::plugin::PluginInfo *tritonGetPluginInfo() {
  static mlir::triton::plugin::PluginInfo *info =
      mlir::triton_ext::makePluginInfo(mlir::triton_ext::pluginName,
                                       mlir::triton_ext::pluginVersion,
                                       mlir::triton_ext::Registration::head());
  return info;
}
