//===- TargetFilter.h - Which compile target a module is for ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Backend passes (backends/<vendor>/) decline modules for other targets. From
// the ttgir stage on, Triton records the target in the module attribute
// `ttg.target` ("cuda:90", "hip:gfx942"); at the ttir stage there is none
// yet, and registry.yaml's `targets` keep the pass off other targets instead.
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_TARGETFILTER_H
#define TRITON_EXT_TARGETFILTER_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::triton_ext {

/// False only when the module's `ttg.target` names another backend or a CUDA
/// compute capability below `minArch`; true without the attribute.
inline bool mayTargetCudaAtLeast(ModuleOp module, unsigned minArch) {
  auto target = module->getAttrOfType<StringAttr>("ttg.target");
  if (!target)
    return true;
  StringRef rest = target.getValue();
  unsigned arch = 0;
  if (!rest.consume_front("cuda:") || rest.getAsInteger(/*Radix=*/10, arch))
    return false;
  return arch >= minArch;
}

} // namespace mlir::triton_ext

#endif // TRITON_EXT_TARGETFILTER_H
