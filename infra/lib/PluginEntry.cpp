//===- PluginEntry.cpp - The entry point Triton looks up in each plugin ---===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Compiled into every plugin (not into libTritonExtPassInfra): Triton finds
// `tritonGetPluginInfo` with dlsym on the plugin's own handle, and this copy
// sees only the plugin's hidden registration list, so each plugin reports
// exactly its own passes, dialects and ops.
//
//===----------------------------------------------------------------------===//

#include "triton-ext/PassInfra.h"

#ifndef TRITON_EXT_PLUGIN_NAME
#error "TRITON_EXT_PLUGIN_NAME must be defined by the build (triton_ext_add_*)"
#endif
#ifndef TRITON_EXT_PLUGIN_VERSION
#define TRITON_EXT_PLUGIN_VERSION "0.0.0"
#endif

TRITON_PLUGIN_API mlir::triton::plugin::PluginInfo *tritonGetPluginInfo() {
  static mlir::triton::plugin::PluginInfo *info =
      mlir::triton_ext::makePluginInfo(TRITON_EXT_PLUGIN_NAME,
                                       TRITON_EXT_PLUGIN_VERSION,
                                       mlir::triton_ext::Registration::head());
  return info;
}
