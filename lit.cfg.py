# lit configuration for every extension's FileCheck tests (`*.mlir` beside each pass).
#
# Substitutions:
#   %opt        triton-ext opt: parses the file with Triton's dialects inside libtriton, loads the
#               plugins that provide the named passes (--pass a,b,canonicalize) and prints the IR.
#               It runs through libtriton from Python, not triton-opt, whose own copy of MLIR
#               would give plugins different TypeIDs.
#   FileCheck   the real LLVM FileCheck shipped in the triton wheel.
import os
import sys

import lit.formats

import triton

config.name = "triton-ext"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.test_exec_root = os.path.join(config.test_source_root, "build", "lit")
config.excludes = [".venv", "build", ".git", "Inputs", "fixtures", "node_modules", "templates"]

filecheck = os.path.join(os.path.dirname(triton.__file__), "FileCheck")
config.substitutions.append(("%opt", f"{sys.executable} -m triton_ext opt"))
config.substitutions.append(("FileCheck", filecheck))

for var in ("HOME", "TRITON_EXT_BUILD_DIR", "TRITON_EXT_CACHE_DIR", "TRITON_EXT_REGISTRY",
            "TRITON_CACHE_DIR", "PYTHONPATH"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
config.environment["PYTHONPATH"] = os.pathsep.join(
    p for p in (config.test_source_root, os.environ.get("PYTHONPATH")) if p)
