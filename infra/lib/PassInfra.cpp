//===- PassInfra.cpp - libTritonExtPassInfra: the pass database -----------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Turns a plugin's registration list into Triton's PluginInfo, adds passes to
// Triton's pass managers with their options, and keeps a process-wide record
// of every plugin whose entry point ran, for introspection from Python.
//
//===----------------------------------------------------------------------===//

#include "triton-ext/PassInfra.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <deque>
#include <mutex>

using namespace mlir;
using namespace mlir::triton_ext;

namespace {

/// A pass that fails with a diagnostic. Stands in for a pass whose options
/// could not be parsed: Triton's AddPassCallback cannot return an error, and
/// aborting would take the user's process down.
class ReportOptionErrorPass
    : public PassWrapper<ReportOptionErrorPass, OperationPass<>> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ReportOptionErrorPass)

  explicit ReportOptionErrorPass(std::string message)
      : message(std::move(message)) {}
  StringRef getArgument() const final { return "triton-ext-option-error"; }
  void runOnOperation() final {
    getOperation()->emitError() << message;
    signalPassFailure();
  }

private:
  std::string message;
};

struct PluginRecord {
  std::string name;
  std::string version;
  std::vector<Registration *> items;
  std::vector<triton::plugin::PassInfo> passes;
  std::vector<triton::plugin::DialectInfo> dialects;
  std::vector<triton::plugin::OpInfo> ops;
  triton::plugin::PluginInfo info{};
};

/// Every plugin whose entry point ran. A deque keeps records (and the
/// PluginInfo pointers handed to Triton) at stable addresses.
struct Database {
  std::mutex mutex;
  std::deque<PluginRecord> plugins;
};

Database &database() {
  static Database *db = new Database(); // never destroyed: Triton keeps pointers
  return *db;
}

} // namespace

void mlir::triton_ext::addPassWithOptions(PassManager *pm,
                                          const std::vector<std::string> &args,
                                          PassFactory factory,
                                          const char *tritonName) {
  std::unique_ptr<Pass> pass = factory();
  if (!args.empty()) {
    std::string joined = llvm::join(args, " ");
    std::string problem;
    auto onError = [&](const Twine &msg) {
      problem = msg.str();
      return failure();
    };
    if (failed(pass->initializeOptions(joined, onError))) {
      std::string message;
      llvm::raw_string_ostream os(message);
      os << "triton-ext: invalid options for pass '" << tritonName << "' ("
         << pass->getArgument() << "): '" << joined << "'";
      if (!problem.empty())
        os << ": " << problem;
      os << "; expected flag=value pairs as declared in its Passes.td";
      pm->addPass(std::make_unique<ReportOptionErrorPass>(os.str()));
      return;
    }
  }
  // Triton's pass managers are op-agnostic ("any") and run on the module, so a
  // module pass goes in directly; a pass anchored on a nested op (tt.func)
  // must be nested, or the pass manager rejects it when it runs.
  std::optional<StringRef> anchor = pass->getOpName();
  if (anchor && *anchor != pm->getOpAnchorName() &&
      *anchor != ModuleOp::getOperationName())
    pm->nest(*anchor).addPass(std::move(pass));
  else
    pm->addPass(std::move(pass));
}

void mlir::triton_ext::registerPassGlobally(PassFactory factory) {
  // MLIR's registry rejects a second registration of the same argument with a
  // fatal error; Triton may call this more than once per plugin.
  std::unique_ptr<Pass> probe = factory();
  if (PassInfo::lookup(probe->getArgument()))
    return;
  mlir::registerPass([factory] { return factory(); });
}

triton::plugin::PluginInfo *
mlir::triton_ext::makePluginInfo(const char *pluginName,
                                 const char *pluginVersion,
                                 Registration *registrations) {
  Database &db = database();
  std::lock_guard<std::mutex> lock(db.mutex);
  PluginRecord &rec = db.plugins.emplace_back();
  rec.name = pluginName;
  rec.version = pluginVersion;
  for (Registration *r = registrations; r; r = r->next) {
    rec.items.push_back(r);
    switch (r->kind) {
    case Registration::Kind::Pass:
      rec.passes.push_back({r->name, pluginVersion, r->addPass,
                            r->registerPass});
      break;
    case Registration::Kind::Dialect:
      rec.dialects.push_back({r->name, pluginVersion, r->registerDialect});
      break;
    case Registration::Kind::Op:
      rec.ops.push_back({r->name, r->addOp});
      break;
    }
  }
  rec.info.apiVersion = TRITON_PLUGIN_API_VERSION;
  rec.info.pluginName = rec.name.c_str();
  rec.info.pluginVersion = rec.version.c_str();
  rec.info.passes = rec.passes.empty() ? nullptr : rec.passes.data();
  rec.info.numPasses = rec.passes.size();
  rec.info.dialects = rec.dialects.empty() ? nullptr : rec.dialects.data();
  rec.info.numDialects = rec.dialects.size();
  rec.info.ops = rec.ops.empty() ? nullptr : rec.ops.data();
  rec.info.numOps = rec.ops.size();
  rec.info.tritonVersion = TRITON_VERSION;
  return &rec.info;
}

std::vector<PassDescription> mlir::triton_ext::describeRegisteredPasses() {
  Database &db = database();
  std::lock_guard<std::mutex> lock(db.mutex);
  std::vector<PassDescription> out;
  for (PluginRecord &rec : db.plugins) {
    for (Registration *r : rec.items) {
      if (r->kind != Registration::Kind::Pass)
        continue;
      std::unique_ptr<Pass> pass = r->passFactory();
      PassDescription d;
      d.plugin = rec.name;
      d.name = r->name;
      d.argument = pass->getArgument().str();
      d.summary = pass->getDescription().str();
      d.passName = pass->getName().str();
      std::optional<StringRef> anchor = pass->getOpName();
      d.anchor = anchor ? anchor->str() : "any";
      llvm::raw_string_ostream os(d.pipeline);
      pass->printAsTextualPipeline(os);
      out.push_back(std::move(d));
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>>
mlir::triton_ext::describeRegisteredDialectsAndOps() {
  Database &db = database();
  std::lock_guard<std::mutex> lock(db.mutex);
  std::vector<std::pair<std::string, std::string>> out;
  for (PluginRecord &rec : db.plugins)
    for (Registration *r : rec.items)
      if (r->kind != Registration::Kind::Pass)
        out.emplace_back(r->kind == Registration::Kind::Dialect ? "dialect"
                                                                : "op",
                         std::string(rec.name) + ":" + r->name);
  return out;
}
