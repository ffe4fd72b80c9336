//===- InfraBindings.cpp - Python view of the pass database ---------------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// `triton_ext._infra.describe(path)` loads one plugin and returns what its
// passes say about themselves (argument, summary, option defaults), without
// compiling anything. Loading runs the plugin's code, so triton_ext calls this
// only in a child process (triton_ext._probe) or after the preflight passed.
//
//===----------------------------------------------------------------------===//

#include "triton-ext/PassDatabase.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <dlfcn.h>

namespace nb = nanobind;
using mlir::triton_ext::PassDescription;

namespace {

nb::list describe(const std::string &path) {
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    throw std::runtime_error("cannot load " + path + ": " + dlerror() +
                             " (import triton before loading plugins)");
  using Entry = void *(*)();
  auto entry = reinterpret_cast<Entry>(dlsym(handle, "tritonGetPluginInfo"));
  if (!entry)
    throw std::runtime_error(path + " has no tritonGetPluginInfo entry point");
  entry(); // records the plugin in the database
  // The plugin's name is the library's TritonExt<Name>: match on it.
  std::string file = path.substr(path.find_last_of('/') + 1);
  std::string plugin = file.substr(3, file.rfind(".so") - 3);
  nb::list out;
  for (const PassDescription &d : mlir::triton_ext::describeRegisteredPasses()) {
    if (d.plugin != plugin)
      continue;
    nb::dict item;
    item["plugin"] = d.plugin;
    item["name"] = d.name;
    item["argument"] = d.argument;
    item["summary"] = d.summary;
    item["pass_name"] = d.passName;
    item["anchor"] = d.anchor;
    item["pipeline"] = d.pipeline;
    out.append(item);
  }
  return out;
}

} // namespace

NB_MODULE(_infra, m) {
  m.doc() = "Read-only view of libTritonExtPassInfra's pass database.";
  m.def("describe", &describe, nb::arg("path"),
        "Load the plugin at `path` and describe its passes (list of dicts).");
  m.def(
      "registered_passes",
      [] {
        std::vector<std::string> names;
        for (const PassDescription &d :
             mlir::triton_ext::describeRegisteredPasses())
          names.push_back(d.plugin + ":" + d.name);
        return names;
      },
      "plugin:name of every pass whose plugin entry point has run.");
}
