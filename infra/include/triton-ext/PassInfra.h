//===- PassInfra.h - Register passes, dialects and ops with triton-ext ----===//
//
// SPDX-License-Identifier: Apache-2.0
//
// An extension registers each of its passes with one line:
//
//   TRITON_EXT_REGISTER_PASS(loop_split, LoopSplitPass);
//
// The name is what Triton binds (`passes.plugin.add_loop_split`) and what
// registry.yaml uses; everything else (pass argument, summary, options) is read
// from the MLIR pass itself. Registrations are collected in a list private to
// the plugin `.so` (hidden visibility), and the plugin's `tritonGetPluginInfo`
// (compiled into every plugin from PluginEntry.cpp) reports exactly that list,
// so several plugins linking libTritonExtPassInfra coexist in one process.
//
// Registration runs at load time but only links a node into the local list: it
// allocates nothing and calls nothing, so it cannot fail.
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_PASSINFRA_H
#define TRITON_EXT_PASSINFRA_H

#include "triton-ext/PassDatabase.h"
#include "triton/Tools/PluginUtils.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/Pass.h"

#include <memory>
#include <string>
#include <vector>

#define TRITON_EXT_HIDDEN __attribute__((visibility("hidden")))
#define TRITON_EXT_EXPORT __attribute__((visibility("default")))

namespace mlir::triton_ext {

using PassFactory = std::unique_ptr<mlir::Pass> (*)();
using AddPassFn = mlir::triton::plugin::AddPassCallback;
using RegisterPassFn = mlir::triton::plugin::RegisterPassCallback;
using RegisterDialectFn = mlir::triton::plugin::RegisterDialectCallback;
using AddOpFn = mlir::triton::plugin::AddOpCallback;

/// One registered item of a plugin. Nodes form a singly linked list private
/// to the plugin that defines them (the class and the list head are hidden).
struct TRITON_EXT_HIDDEN Registration {
  enum class Kind { Pass, Dialect, Op };

  Registration(Kind kind, const char *name, PassFactory passFactory,
               AddPassFn addPass, RegisterPassFn registerPass,
               RegisterDialectFn registerDialect, AddOpFn addOp)
      : kind(kind), name(name), passFactory(passFactory), addPass(addPass),
        registerPass(registerPass), registerDialect(registerDialect),
        addOp(addOp) {
    // Append, so the plugin reports items in declaration order.
    Registration **slot = &head();
    while (*slot)
      slot = &(*slot)->next;
    *slot = this;
  }
  Registration(const Registration &) = delete;
  Registration &operator=(const Registration &) = delete;

  /// First registration of the plugin this code is compiled into.
  static Registration *&head() {
    static Registration *first = nullptr;
    return first;
  }

  Kind kind;
  const char *name;
  PassFactory passFactory;
  AddPassFn addPass;
  RegisterPassFn registerPass;
  RegisterDialectFn registerDialect;
  AddOpFn addOp;
  Registration *next = nullptr;
};

//===----------------------------------------------------------------------===//
// Exported by libTritonExtPassInfra
//===----------------------------------------------------------------------===//

/// Adds the pass built by `factory` to `pm`, configured by `args`. Each arg is
/// `flag=value` (flag spelled as in Passes.td). A pass anchored on an op other
/// than the pass manager's is nested. Invalid options do not abort the process:
/// the pipeline gets a pass that reports the problem as an error diagnostic
/// and fails, so `pm.run` raises in Python.
TRITON_EXT_EXPORT void addPassWithOptions(mlir::PassManager *pm,
                                          const std::vector<std::string> &args,
                                          PassFactory factory,
                                          const char *tritonName);

/// Registers the pass with MLIR's global registry (for textual pipelines).
TRITON_EXT_EXPORT void registerPassGlobally(PassFactory factory);

/// Builds the PluginInfo Triton expects from one plugin's registrations and
/// records the plugin in the process-wide pass database. The returned struct
/// lives for the rest of the process, as Triton requires.
TRITON_EXT_EXPORT mlir::triton::plugin::PluginInfo *
makePluginInfo(const char *pluginName, const char *pluginVersion,
               Registration *registrations);

namespace detail {
template <typename PassT> std::unique_ptr<mlir::Pass> makePass() {
  return std::make_unique<PassT>();
}
} // namespace detail

} // namespace mlir::triton_ext

#define TRITON_EXT_CONCAT_IMPL(a, b) a##b
#define TRITON_EXT_CONCAT(a, b) TRITON_EXT_CONCAT_IMPL(a, b)

/// Registers pass class CLASS under NAME (snake_case; Triton binds
/// `passes.plugin.add_<NAME>`). Place at namespace scope after the class.
#define TRITON_EXT_REGISTER_PASS(NAME, CLASS)                                   \
  static ::mlir::triton_ext::Registration TRITON_EXT_CONCAT(                    \
      tritonExtRegistration_, __LINE__)(                                        \
      ::mlir::triton_ext::Registration::Kind::Pass, #NAME,                      \
      &::mlir::triton_ext::detail::makePass<CLASS>,                             \
      [](::mlir::PassManager *pm, const std::vector<std::string> &args) {       \
        ::mlir::triton_ext::addPassWithOptions(                                 \
            pm, args, &::mlir::triton_ext::detail::makePass<CLASS>, #NAME);     \
      },                                                                        \
      [] {                                                                      \
        ::mlir::triton_ext::registerPassGlobally(                               \
            &::mlir::triton_ext::detail::makePass<CLASS>);                      \
      },                                                                        \
      nullptr, nullptr)

/// Registers dialect class CLASS under NAME (loaded by ir.extend_dialects_with).
#define TRITON_EXT_REGISTER_DIALECT(NAME, CLASS)                                \
  static ::mlir::triton_ext::Registration TRITON_EXT_CONCAT(                    \
      tritonExtRegistration_, __LINE__)(                                        \
      ::mlir::triton_ext::Registration::Kind::Dialect, #NAME, nullptr,          \
      nullptr, nullptr,                                                         \
      [](::mlir::DialectRegistry *registry) { registry->insert<CLASS>(); },     \
      nullptr)

/// Registers FN (a Triton AddOpCallback) as builder op NAME: Triton binds
/// `builder.create_<NAME>(values)`.
#define TRITON_EXT_REGISTER_OP(NAME, FN)                                        \
  static ::mlir::triton_ext::Registration TRITON_EXT_CONCAT(                    \
      tritonExtRegistration_, __LINE__)(                                        \
      ::mlir::triton_ext::Registration::Kind::Op, #NAME, nullptr, nullptr,      \
      nullptr, nullptr, FN)

#endif // TRITON_EXT_PASSINFRA_H
