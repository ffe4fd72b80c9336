//===- PluginIdentity.h - Name and version of the plugin being built ------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Defined once per plugin by a file the build generates; hidden, so each
// plugin's entry point sees its own.
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_PLUGINIDENTITY_H
#define TRITON_EXT_PLUGINIDENTITY_H

namespace mlir::triton_ext {
__attribute__((visibility("hidden"))) extern const char pluginName[];
__attribute__((visibility("hidden"))) extern const char pluginVersion[];
} // namespace mlir::triton_ext

#endif // TRITON_EXT_PLUGINIDENTITY_H
