"""Templates of ``triton-ext new dialect`` and ``triton-ext new language`` (see ``_scaffold``).

Both follow the worked example ``dialects/RangeFactsIR`` + ``language/RangeFacts``:

``new dialect Name`` writes ``dialects/<Name>/``: an ODS dialect ``triton_ext_<name>`` with one
op, ``scale`` (``%y = triton_ext_<name>.scale %x, 3 : i32``: element-wise wrapping multiply by
a constant; verifier, folder, inliner interface), the pass ``<name>_lower`` that lowers it to
``arith.muli``, three lit tests (parse/print/fold, verifier errors, lowering) and a README.

``new language Name`` writes ``language/<Name>/``: the builder op ``create_<name>_scale``
(``TRITON_EXT_REGISTER_OP``) that creates the dialect's op by name, the Python package
``triton_ext_<name>`` with the ``@builtin`` ``scale(x, factor)`` (type checks, constexpr
factor, errors at the caller's line), a pytest compiling kernels through cubin on the CPU and a
README. The op lives in a dialect scaffolded by ``new dialect`` (``<Name>IR`` unless
``--dialect`` names another), written too when it does not exist yet.

Placeholders are ``@@key@@`` (C++, ODS and MLIR use every kind of brace); :func:`render`
refuses a placeholder it has no value for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["DialectNames", "LanguageNames", "render", "dialect_files", "language_files",
           "dialect_entry", "language_entry", "OP_MNEMONIC"]

#: The op the scaffolds define and call; a language scaffold needs a dialect that has it.
OP_MNEMONIC = "scale"

_PLACEHOLDER = re.compile(r"@@([a-z_]+)@@")


def render(template: str, values: dict[str, str]) -> str:
    """Substitute ``@@key@@``; a key without a value is a bug in the template, not a user error."""

    def one(m: re.Match[str]) -> str:
        if m.group(1) not in values:
            raise KeyError(f"template placeholder @@{m.group(1)}@@ has no value")
        return values[m.group(1)]

    return _PLACEHOLDER.sub(one, template)


@dataclass(frozen=True)
class DialectNames:
    """Every spelling a scaffolded dialect uses, from its folder name (``DemoIR``)."""

    camel: str     # DemoIR: folder, .td, DemoIRDialect class, CMake target TritonExtDemoIR
    snake: str     # demo_ir: registry key, C++ namespace mlir::triton_ext::demo_ir
    kebab: str     # demo-ir: lit file names
    dialect: str   # triton_ext_demo: the MLIR dialect namespace (ops are triton_ext_demo.scale)

    @property
    def folder(self) -> str:
        return f"dialects/{self.camel}"

    @property
    def lower_pass(self) -> str:
        return f"{self.snake}_lower"

    def values(self) -> dict[str, str]:
        return {
            "camel": self.camel,
            "snake": self.snake,
            "kebab": self.kebab,
            "dialect": self.dialect,
            "folder": self.folder,
            "guard": f"TRITON_EXT_{self.snake.upper()}",
            "lower_pass": self.lower_pass,
            "lower_record": f"TritonExt{self.camel}Lower",
            "lower_macro": f"TRITONEXT{self.camel.upper()}LOWER",
            "lower_flag": f"triton-ext-{self.kebab}-lower",
            "op": OP_MNEMONIC,
        }


def dialect_namespace(snake: str) -> str:
    """``demo_ir`` -> ``triton_ext_demo``: prefixed so that no name clashes with MLIR's or
    Triton's dialects (``gpu``, ``tt``), without the folder's ``IR`` suffix."""
    base = snake[:-3] if snake.endswith("_ir") and len(snake) > 3 else snake
    return f"triton_ext_{base}"


@dataclass(frozen=True)
class LanguageNames:
    """Every spelling a scaffolded language extension uses, with the dialect it builds ops of."""

    camel: str     # Demo: folder, DemoBuilder.cpp, CMake target TritonExtDemo
    snake: str     # demo: registry key, package triton_ext_demo, builder op demo_scale
    dialect: DialectNames

    @property
    def folder(self) -> str:
        return f"language/{self.camel}"

    @property
    def package(self) -> str:
        return f"triton_ext_{self.snake}"

    def values(self) -> dict[str, str]:
        return {
            **self.dialect.values(),
            "dfolder": self.dialect.folder,
            "dsnake": self.dialect.snake,
            "dcamel": self.dialect.camel,
            "lcamel": self.camel,
            "lsnake": self.snake,
            "lfolder": self.folder,
            "package": self.package,
            "opfn": f"{self.snake}_{OP_MNEMONIC}",
        }


# =========================================================================== #
# dialects/<Name>/
# =========================================================================== #

_D_CMAKE = """\
# The @@dialect@@ dialect (@@camel@@.td -> @@camel@@Dialect/@@camel@@Ops .inc files) and
# its lowering pass (Passes.td). Scaffolded by `triton-ext new dialect @@camel@@`.
triton_ext_add_dialect(@@camel@@
  SOURCES @@camel@@Dialect.cpp @@camel@@Lower.cpp
  TD @@camel@@.td Passes.td)
"""

_D_TD = """\
//===- @@camel@@.td - The @@dialect@@ dialect -*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Scaffolded by `triton-ext new dialect @@camel@@`. `triton_ext_add_dialect`
// runs mlir-tblgen over this file: -gen-dialect-* gives @@camel@@Dialect.*.inc
// and -gen-op-* gives @@camel@@Ops.*.inc. Replace `@@op@@` with your ops.
//
//===----------------------------------------------------------------------===//

#ifndef @@guard@@_TD
#define @@guard@@_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/DialectBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def @@camel@@_Dialect : Dialect {
  let name = "@@dialect@@";
  let summary = "TODO one line (scaffolded by `triton-ext new dialect @@camel@@`)";
  let description = [{
    TODO: what the dialect is for. Its ops live only in the ttir stage:
    `@@lower_pass@@` lowers them at the end of `make_ttir`, before
    `convert-triton-to-tritongpu`, which does not know the dialect.
  }];
  let cppNamespace = "::mlir::triton_ext::@@snake@@";
}

class @@camel@@_Op<string mnemonic, list<Trait> traits = []>
    : Op<@@camel@@_Dialect, mnemonic, traits>;

// An integer, or a ranked tensor of integers: Triton's scalars and blocks.
defvar @@camel@@_IntLike = AnyTypeOf<[AnySignlessInteger,
                                     RankedTensorOf<[AnySignlessInteger]>]>;

def @@camel@@_ScaleOp
    : @@camel@@_Op<"@@op@@", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Multiply every element of an integer value by a constant";
  let description = [{
    `result = input * factor`, element by element, wrapping on overflow (as
    `arith.muli` without overflow flags). `factor` is an i64 attribute that
    must fit the element type, read as signed or unsigned:
    `-2^(w-1) <= factor <= 2^w - 1` for a `w`-bit element type.

    ```mlir
    %y = @@dialect@@.@@op@@ %x, 3 : i32
    %t = @@dialect@@.@@op@@ %offs, -2 : tensor<128xi32>
    ```
  }];
  let arguments = (ins @@camel@@_IntLike:$input, I64Attr:$factor);
  let results = (outs @@camel@@_IntLike:$result);
  let assemblyFormat = "$input `,` $factor attr-dict `:` type($input)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

#endif // @@guard@@_TD
"""

_D_PASSES_TD = """\
//===- Passes.td - Lower @@dialect@@ -*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
//===----------------------------------------------------------------------===//

#ifndef @@guard@@_PASSES
#define @@guard@@_PASSES

include "mlir/Pass/PassBase.td"

def @@lower_record@@ : Pass<"@@lower_flag@@", "mlir::ModuleOp"> {
  let summary = "Lower @@dialect@@ ops to arith";
  let description = [{
    Replaces every `@@dialect@@.@@op@@ %x, K` by `%x * K` (`arith.muli` with
    an `arith.constant` of the element type, splat for a tensor). Must run
    before `convert-triton-to-tritongpu`, which does not know the dialect.

    Before:

    ```mlir
    %y = @@dialect@@.@@op@@ %x, 3 : i32
    ```

    After:

    ```mlir
    %c3_i32 = arith.constant 3 : i32
    %y = arith.muli %x, %c3_i32 : i32
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

#endif // @@guard@@_PASSES
"""

_D_H = """\
//===- @@camel@@Dialect.h - The @@dialect@@ dialect -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Declarations generated from @@camel@@.td. Private to this plugin: another
// plugin (such as a language extension) must create these ops by name,
// because a class compiled into two plugins has two TypeIDs.
//
//===----------------------------------------------------------------------===//

#ifndef @@guard@@_DIALECT_H
#define @@guard@@_DIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "@@camel@@Dialect.h.inc"

#define GET_OP_CLASSES
#include "@@camel@@Ops.h.inc"

#endif // @@guard@@_DIALECT_H
"""

_D_CPP = """\
//===- @@camel@@Dialect.cpp - The @@dialect@@ dialect ===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Scaffolded by `triton-ext new dialect @@camel@@`: the dialect class, the
// verifier and folder of the op
// `@@dialect@@.@@op@@`,
// and the inliner interface that lets Triton's inliner inline @triton.jit
// helpers holding the dialect's ops.
// Registered with Triton by TRITON_EXT_REGISTER_DIALECT (last line), which
// `ir.extend_dialects_with` reads when triton_ext loads the library.
//
//===----------------------------------------------------------------------===//

#include "@@camel@@Dialect.h"

#include "triton-ext/PassInfra.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Transforms/InliningUtils.h"

using namespace mlir;
using namespace mlir::triton_ext::@@snake@@;

#include "@@camel@@Dialect.cpp.inc"

namespace {
/// The ops are pure and refer to nothing outside their operands, so inlining
/// a function that holds them is always legal.
struct @@camel@@InlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void @@camel@@Dialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "@@camel@@Ops.cpp.inc"
      >();
  addInterfaces<@@camel@@InlinerInterface>();
}

//===----------------------------------------------------------------------===//
// ScaleOp
//===----------------------------------------------------------------------===//

LogicalResult ScaleOp::verify() {
  auto elementType =
      cast<IntegerType>(getElementTypeOrSelf(getInput().getType()));
  unsigned width = elementType.getWidth();
  // I64Attr hands the value back as uint64_t; the factor is signed.
  int64_t factor = static_cast<int64_t>(getFactor());
  APInt value(64, static_cast<uint64_t>(factor), /*isSigned=*/true);
  // Any bit pattern of the element type is a valid factor, whether the user
  // reads it as signed (-2^(w-1)..2^(w-1)-1) or unsigned (0..2^w-1).
  bool fits = width >= 64 || value.isSignedIntN(width) ||
              (factor >= 0 && value.isIntN(width));
  if (!fits)
    return emitOpError() << "factor " << factor << " does not fit "
                         << elementType << " (expected -2^" << width - 1
                         << " <= factor <= 2^" << width << " - 1)";
  return success();
}

OpFoldResult ScaleOp::fold(FoldAdaptor) {
  // Multiplying by one is the identity.
  if (getFactor() == 1)
    return getInput();
  return {};
}

#define GET_OP_CLASSES
#include "@@camel@@Ops.cpp.inc"

TRITON_EXT_REGISTER_DIALECT(@@dialect@@, @@camel@@Dialect);
"""

_D_LOWER_CPP = """\
//===- @@camel@@Lower.cpp - Lower @@dialect@@ to arith ===//
//
// SPDX-License-Identifier: Apache-2.0
//
// `@@lower_pass@@` replaces each `@@dialect@@.@@op@@ %x, K` by
// `arith.muli %x, K`. Legal because the op is defined as wrapping
// multiplication by K truncated to the element type, which is what
// `arith.muli` without overflow flags computes. It runs at the end of the
// ttir stage (registry.yaml), after the passes that may read the op and before
// convert-triton-to-tritongpu, which would reject an op of an unknown dialect.
// It never declines.
//
//===----------------------------------------------------------------------===//

#include "@@camel@@Dialect.h"

#include "triton-ext/PassInfra.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "@@lower_flag@@"

namespace mlir::triton_ext {
#define GEN_PASS_DECL_@@lower_macro@@
#define GEN_PASS_DEF_@@lower_macro@@
#include "Passes.h.inc"
} // namespace mlir::triton_ext

namespace {
using namespace mlir;
using mlir::triton_ext::@@snake@@::ScaleOp;

/// `factor` as an arith.constant of `type`: the element type truncated to its
/// width (the verifier checked that it fits), splat for a tensor.
Value materializeFactor(OpBuilder &builder, Location loc, Type type,
                        int64_t factor) {
  auto elementType = cast<IntegerType>(getElementTypeOrSelf(type));
  APInt value = APInt(64, static_cast<uint64_t>(factor), /*isSigned=*/true)
                    .sextOrTrunc(elementType.getWidth());
  TypedAttr attr = IntegerAttr::get(elementType, value);
  if (auto tensorType = dyn_cast<RankedTensorType>(type))
    attr = DenseElementsAttr::get(tensorType, attr);
  return arith::ConstantOp::create(builder, loc, attr);
}

class @@camel@@LowerPass
    : public mlir::triton_ext::impl::@@lower_record@@Base<@@camel@@LowerPass> {
public:
  void runOnOperation() override {
    SmallVector<ScaleOp> ops;
    getOperation()->walk([&](ScaleOp op) { ops.push_back(op); });
    for (ScaleOp op : ops) {
      LLVM_DEBUG(llvm::dbgs() << "lowering " << op << "\\n");
      OpBuilder builder(op);
      Value factor =
          materializeFactor(builder, op.getLoc(), op.getType(),
                            static_cast<int64_t>(op.getFactor()));
      Value product =
          arith::MulIOp::create(builder, op.getLoc(), op.getInput(), factor);
      op.getResult().replaceAllUsesWith(product);
      op->erase();
    }
  }
};
} // namespace

TRITON_EXT_REGISTER_PASS(@@lower_pass@@, @@camel@@LowerPass);
"""

_D_LIT = """\
// Parse, print and verify @@dialect@@.@@op@@; folding under canonicalize.
// TRITON_EXT_ENABLE loads the dialect's library before the file is parsed.
// RUN: env TRITON_EXT_ENABLE=@@lower_pass@@ %opt %s --pass cse --no-debug-info | FileCheck %s
// RUN: env TRITON_EXT_ENABLE=@@lower_pass@@ %opt %s --pass canonicalize --no-debug-info | FileCheck %s --check-prefix=FOLD

// A scalar op round-trips, a negative factor included.
// CHECK-LABEL: tt.func @scalar
// CHECK: %[[R:.*]] = @@dialect@@.@@op@@ %arg0, -3 : i32
// CHECK: tt.return %[[R]] : i32
// FOLD-LABEL: tt.func @scalar
// FOLD: @@dialect@@.@@op@@ %arg0, -3 : i32
tt.func @scalar(%x: i32) -> i32 {
  %0 = @@dialect@@.@@op@@ %x, -3 : i32
  tt.return %0 : i32
}

// Tensors; 255 fits i8 read as unsigned.
// CHECK-LABEL: tt.func @tensor_i8
// CHECK: @@dialect@@.@@op@@ %arg0, 255 : tensor<128xi8>
tt.func @tensor_i8(%t: tensor<128xi8>) -> tensor<128xi8> {
  %0 = @@dialect@@.@@op@@ %t, 255 : tensor<128xi8>
  tt.return %0 : tensor<128xi8>
}

// Multiplying by one folds to the operand.
// FOLD-LABEL: tt.func @by_one
// FOLD-NOT: @@dialect@@.@@op@@
// FOLD: tt.return %arg0 : i64
tt.func @by_one(%x: i64) -> i64 {
  %0 = @@dialect@@.@@op@@ %x, 1 : i64
  tt.return %0 : i64
}

// The op is Pure: CSE merges two equal ones, canonicalize erases an unused one.
// CHECK-LABEL: tt.func @unused_and_repeated
// CHECK: %[[A:.*]] = @@dialect@@.@@op@@ %arg0, 2 : i32
// CHECK-NOT: @@dialect@@.@@op@@
// CHECK: tt.return %[[A]], %[[A]] : i32, i32
// FOLD-LABEL: tt.func @unused_and_repeated
// FOLD-NOT: @@dialect@@.@@op@@ %arg0, 7
// FOLD: tt.return
tt.func @unused_and_repeated(%x: i32) -> (i32, i32) {
  %unused = @@dialect@@.@@op@@ %x, 7 : i32
  %a = @@dialect@@.@@op@@ %x, 2 : i32
  %b = @@dialect@@.@@op@@ %x, 2 : i32
  tt.return %a, %b : i32, i32
}
"""

_D_LIT_INVALID = """\
// Verifier errors of @@dialect@@.@@op@@, one input file per case (the opt driver has no
// -split-input-file / --verify-diagnostics). Each fails with the diagnostic at the op.
// RUN: not env TRITON_EXT_ENABLE=@@lower_pass@@ %opt %S/Inputs/invalid-factor-too-wide.mlir --pass cse 2>&1 | FileCheck %s --check-prefix=WIDE
// WIDE: invalid-factor-too-wide.mlir":2:8): error: '@@dialect@@.@@op@@' op factor 256 does not fit 'i8' (expected -2^7 <= factor <= 2^8 - 1)

// RUN: not env TRITON_EXT_ENABLE=@@lower_pass@@ %opt %S/Inputs/invalid-negative-too-wide.mlir --pass cse 2>&1 | FileCheck %s --check-prefix=NEG
// NEG: invalid-negative-too-wide.mlir":2:8): error: '@@dialect@@.@@op@@' op factor -129 does not fit 'i8'

// RUN: not env TRITON_EXT_ENABLE=@@lower_pass@@ %opt %S/Inputs/invalid-float.mlir --pass cse 2>&1 | FileCheck %s --check-prefix=FLOAT
// FLOAT: invalid-float.mlir":2:8): error: '@@dialect@@.@@op@@' op operand #0 must be {{.*}}, but got 'f32'

// RUN: not env TRITON_EXT_ENABLE=@@lower_pass@@ %opt %S/Inputs/invalid-result-type.mlir --pass cse 2>&1 | FileCheck %s --check-prefix=RESULT
// RESULT: invalid-result-type.mlir":2:8): error: '@@dialect@@.@@op@@' op failed to verify that all of {input, result} have same type
"""

_D_INPUTS = {
    "invalid-factor-too-wide.mlir": """\
tt.func @too_wide(%x: i8) -> i8 {
  %0 = @@dialect@@.@@op@@ %x, 256 : i8
  tt.return %0 : i8
}
""",
    "invalid-negative-too-wide.mlir": """\
tt.func @negative_too_wide(%x: tensor<4xi8>) -> tensor<4xi8> {
  %0 = @@dialect@@.@@op@@ %x, -129 : tensor<4xi8>
  tt.return %0 : tensor<4xi8>
}
""",
    "invalid-float.mlir": """\
tt.func @float(%x: f32) -> f32 {
  %0 = @@dialect@@.@@op@@ %x, 2 : f32
  tt.return %0 : f32
}
""",
    "invalid-result-type.mlir": """\
tt.func @result_type(%x: i32) -> i64 {
  %0 = "@@dialect@@.@@op@@"(%x) <{factor = 2 : i64}> : (i32) -> i64
  tt.return %0 : i64
}
""",
}

_D_LIT_LOWER = """\
// @@lower_pass@@ turns every @@dialect@@.@@op@@ into arith.muli by a constant.
// RUN: %opt %s --pass @@lower_pass@@ --no-debug-info | FileCheck %s
// RUN: %opt %s --pass @@lower_pass@@ --no-debug-info | FileCheck %s --check-prefix=GONE
// GONE-NOT: @@dialect@@

// CHECK-LABEL: tt.func @scalar
// CHECK: %[[K:.*]] = arith.constant -3 : i32
// CHECK: %[[R:.*]] = arith.muli %arg0, %[[K]] : i32
// CHECK: tt.return %[[R]] : i32
tt.func @scalar(%x: i32) -> i32 {
  %0 = @@dialect@@.@@op@@ %x, -3 : i32
  tt.return %0 : i32
}

// A tensor gets a splat constant; 255 is the i8 bit pattern of -1.
// CHECK-LABEL: tt.func @tensor_i8
// CHECK: %[[K:.*]] = arith.constant dense<-1> : tensor<128xi8>
// CHECK: arith.muli %arg0, %[[K]] : tensor<128xi8>
tt.func @tensor_i8(%t: tensor<128xi8>) -> tensor<128xi8> {
  %0 = @@dialect@@.@@op@@ %t, 255 : tensor<128xi8>
  tt.return %0 : tensor<128xi8>
}

// Ops inside a loop body, chained: each becomes one multiply, the loop stays.
// CHECK-LABEL: tt.func @in_loop
// CHECK: scf.for
// CHECK: %[[R:.*]] = tt.make_range {end = 128 : i32, start = 0 : i32}
// CHECK: %[[A:.*]] = arith.muli %[[R]], %{{.*}} : tensor<128xi32>
// CHECK: arith.muli %[[A]], %{{.*}} : tensor<128xi32>
tt.func @in_loop(%ub: i32) -> tensor<128xi32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %z = arith.constant dense<0> : tensor<128xi32>
  %r = scf.for %i = %c0 to %ub step %c1 iter_args(%acc = %z) -> (tensor<128xi32>) : i32 {
    %m = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %s0 = @@dialect@@.@@op@@ %m, 2 : tensor<128xi32>
    %s1 = @@dialect@@.@@op@@ %s0, 5 : tensor<128xi32>
    %a = arith.addi %s1, %acc : tensor<128xi32>
    scf.yield %a : tensor<128xi32>
  }
  tt.return %r : tensor<128xi32>
}
"""

_D_README = """\
# @@camel@@: the `@@dialect@@` dialect

## What it does

TODO: what the dialect is for. (Scaffolded by `triton-ext new dialect @@camel@@`: one op,
`@@dialect@@.@@op@@`, and the pass `@@lower_pass@@` that lowers it. Replace both.)

`@@dialect@@.@@op@@ %x, K : T` multiplies every element of `%x` (an integer or a ranked tensor
of integers) by the constant `K`, wrapping on overflow. Verifier: `K` fits the element type,
read as signed or unsigned. Folding: `K = 1` folds to `%x`. The op is `Pure`; a dialect inliner
interface lets Triton's inliner inline `@triton.jit` helpers that hold it.

Before / after `@@lower_pass@@`:

```mlir
%y = @@dialect@@.@@op@@ %x, 3 : i32
```
```mlir
%c3_i32 = arith.constant 3 : i32
%y = arith.muli %x, %c3_i32 : i32
```

## Flag and options

| Pass | Flag | Options |
|---|---|---|
| `@@lower_pass@@` | `@@lower_flag@@` | none |

## When it declines

Never: every op becomes one `arith.muli` (legal: both are multiplication modulo 2^w).

## Where it runs

`@@lower_pass@@`: stage `ttir`, end of `make_ttir`, after any ttir pass that reads the ops and
before `convert-triton-to-tritongpu`, which does not know the dialect. Enabling it
(`triton_ext.enable("@@lower_pass@@")`, `TRITON_EXT_ENABLE=@@lower_pass@@`) loads the library,
which registers the dialect (`ir.extend_dialects_with`). Python kernels create the op through a
language extension (`triton-ext new language NAME --dialect @@camel@@`).

## Layout

```
@@folder@@/
  CMakeLists.txt           triton_ext_add_dialect(@@camel@@ SOURCES ... TD @@camel@@.td Passes.td)
  @@camel@@.td             dialect + ops -> @@camel@@Dialect.{h,cpp}.inc, @@camel@@Ops.{h,cpp}.inc
  Passes.td                the lowering pass -> Passes.h.inc
  @@camel@@Dialect.h       includes the generated declarations
  @@camel@@Dialect.cpp     dialect, verifier, folder; TRITON_EXT_REGISTER_DIALECT
  @@camel@@Lower.cpp       @@lower_pass@@; TRITON_EXT_REGISTER_PASS
  test/@@kebab@@.mlir          parse, print, fold
  test/@@kebab@@-invalid.mlir  verifier errors (inputs in test/Inputs)
  test/@@kebab@@-lower.mlir    lowering
```

## Status and owner

experimental; TODO owner. Registry key `@@snake@@` (kind `dialect`), library
`libTritonExt@@camel@@.so`.

## How to test

```
triton-ext build @@snake@@
triton-ext test @@snake@@        # lit (@@folder@@/test)
```
"""

_D_ENTRY = """\
  @@snake@@:
    kind: dialect
    directory: @@folder@@
    library: TritonExt@@camel@@
    status: experimental
    summary: TODO one sentence (scaffolded; the @@dialect@@ dialect with one op, @@op@@, lowered to arith by @@lower_pass@@).
    owners: [@@owner@@]
    targets: {cuda: {}, hip: {}}
    passes:
      @@lower_pass@@:
        stage: ttir
        enabled_by_default: false
"""


def dialect_files(d: DialectNames) -> dict[str, str]:
    """Relative path -> text of a scaffolded ``dialects/<Name>/``."""
    files = {
        "CMakeLists.txt": _D_CMAKE,
        f"{d.camel}.td": _D_TD,
        "Passes.td": _D_PASSES_TD,
        f"{d.camel}Dialect.h": _D_H,
        f"{d.camel}Dialect.cpp": _D_CPP,
        f"{d.camel}Lower.cpp": _D_LOWER_CPP,
        f"test/{d.kebab}.mlir": _D_LIT,
        f"test/{d.kebab}-invalid.mlir": _D_LIT_INVALID,
        f"test/{d.kebab}-lower.mlir": _D_LIT_LOWER,
        "README.md": _D_README,
        **{f"test/Inputs/{name}": text for name, text in _D_INPUTS.items()},
    }
    values = d.values()
    return {path: render(text, values) for path, text in files.items()}


def dialect_entry(d: DialectNames, owner: str) -> str:
    return render(_D_ENTRY, {**d.values(), "owner": owner})


# =========================================================================== #
# language/<Name>/
# =========================================================================== #

_L_CMAKE = """\
# The builder op behind @@package@@.@@op@@; the op itself lives in @@dfolder@@
# (loaded first, see @@package@@/__init__.py). Scaffolded by `triton-ext new language @@lcamel@@`.
triton_ext_add_language(@@lcamel@@ SOURCES @@lcamel@@Builder.cpp)
"""

_L_BUILDER = """\
//===- @@lcamel@@Builder.cpp - Builder op for @@dialect@@.@@op@@ ===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Scaffolded by `triton-ext new language @@lcamel@@`. Triton binds this as
// `builder.create_@@opfn@@(values)`, which `@@package@@.@@op@@`
// (@@package@@/__init__.py) calls from @triton.jit code. Triton 3.9.0's
// binding puts a result slot in front of the arguments and returns it to
// Python: values = [result slot, x, factor]. Only mlir::Values cross the
// binding, so the Python side passes the compile-time factor as an i64
// `arith.constant`; the callback reads it, erases it when nothing else uses
// it, creates the op and stores its result in the slot.
//
// The op is created by name, not through the ScaleOp class: that class lives
// in the dialect plugin (libTritonExt@@dcamel@@) with hidden visibility, and a
// copy compiled here would have another TypeID. Creating it by name needs the
// dialect loaded in the context, which the Python side guarantees by loading
// the dialect plugin first; the check below turns a missing dialect into a
// Python exception instead of an unregistered op.
//
// Errors throw std::invalid_argument, which Triton's binding turns into a
// Python ValueError (a compile error at the caller's line); the Python side
// validates first, so these are defensive.
//
//===----------------------------------------------------------------------===//

#include "triton-ext/PassInfra.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OperationSupport.h"

#include <stdexcept>
#include <string>

namespace {
using namespace mlir;

constexpr const char *kOpName = "@@dialect@@.@@op@@";

void createScale(TritonOpBuilder &self, std::vector<Value> &values) {
  if (values.size() != 3 || values[0])
    throw std::invalid_argument(
        "create_@@opfn@@ expects [result slot, x, factor], got " +
        std::to_string(values.size()) + " values" +
        (values.empty() || !values[0] ? "" : " with a filled result slot"));
  Value input = values[1];
  if (!input || !isa<IntegerType>(getElementTypeOrSelf(input.getType())))
    throw std::invalid_argument(
        "create_@@opfn@@: x must be an integer or a tensor of integers");
  APInt factor;
  if (!values[2] || !matchPattern(values[2], m_ConstantInt(&factor)))
    throw std::invalid_argument(
        "create_@@opfn@@: factor must be an integer constant");

  OpBuilder &builder = self.getBuilder();
  OperationName name(kOpName, builder.getContext());
  if (!name.isRegistered())
    throw std::invalid_argument(
        "create_@@opfn@@: dialect @@dialect@@ is not loaded in this "
        "context; load libTritonExt@@dcamel@@ "
        "(triton_ext.enable('@@lower_pass@@')) before compiling");

  OperationState state(self.getLastLoc(), name);
  state.addOperands(input);
  state.addTypes(input.getType());
  Operation *op = builder.create(state);
  // setAttr stores an inherent attribute in the op's properties.
  op->setAttr("factor", builder.getI64IntegerAttr(factor.getSExtValue()));

  // The constant only carried the factor; drop it if that was its only use so
  // the IR is what a hand-written op would give.
  if (Operation *def = values[2].getDefiningOp())
    if (def->use_empty())
      def->erase();
  values[0] = op->getResult(0);
}
} // namespace

TRITON_EXT_REGISTER_OP(@@opfn@@, createScale);
"""

_L_INIT = '''\
"""``@@package@@``: ``@@op@@(x, factor)`` for ``@triton.jit`` kernels.

Scaffolded by ``triton-ext new language @@lcamel@@``; replace ``@@op@@`` with your functions::

    import @@package@@

    @triton.jit
    def kernel(X, Y, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(Y + offs, @@package@@.@@op@@(tl.load(X + offs), 3))   # x * 3

``@@op@@(x, factor)`` returns ``x * factor`` (wrapping) as the op ``@@dialect@@.@@op@@`` of the
``@@dsnake@@`` dialect; ``@@lower_pass@@`` lowers it to ``arith.muli`` at the end of the
``ttir`` stage.

Importing this module loads two plugins through ``triton_ext`` (preflighted, once each) and
enables ``@@lower_pass@@``:

* ``libTritonExt@@dcamel@@`` (registry ``@@dsnake@@``): the dialect, via
  ``ir.extend_dialects_with``, which every later ``ir.load_dialects`` picks up;
* ``libTritonExt@@lcamel@@`` (registry ``@@lsnake@@``): the builder op
  ``builder.create_@@opfn@@``, via ``ir.builder.extend_with``.

Both must happen before a kernel that uses ``@@op@@`` is compiled: Triton creates the compile
context and places the stage passes before it generates any IR.
"""

from __future__ import annotations

from typing import Any

from triton.language import core

__all__ = ["@@op@@", "load", "factor_range"]

DIALECT_EXTENSION = "@@dsnake@@"
LANGUAGE_EXTENSION = "@@lsnake@@"
LOWERING_PASS = "@@lower_pass@@"
_BUILDER_METHOD = "create_@@opfn@@"


def load() -> None:
    """Load the dialect and builder plugins and enable ``@@lower_pass@@``.

    Idempotent: triton_ext loads each library once. Raises :class:`triton_ext.TritonExtError`
    (with the fix) when a plugin is not built.
    """
    import triton_ext

    # Enabling the lowering pass loads its library, which registers the dialect.
    triton_ext.enable(LOWERING_PASS)
    triton_ext.load_extension(LANGUAGE_EXTENSION)


def factor_range(dtype: core.dtype) -> tuple[int, int]:
    """The factors ``@@op@@`` accepts for ``dtype``: the values of the type (signed or unsigned)."""
    bits = dtype.primitive_bitwidth
    if dtype.is_int_signed():
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def _factor(value: Any) -> int:
    if not isinstance(value, core.constexpr):
        raise TypeError(
            "@@op@@: factor must be a compile-time integer (a literal or tl.constexpr), got a "
            f"runtime value of type {getattr(value, 'type', type(value).__name__)}")
    v = value.value
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"@@op@@: factor must be an int, got {type(v).__name__} {v!r}")
    return v


@core.builtin
def @@op@@(x: Any, factor: Any, _semantic: Any = None) -> core.tensor:
    """Return ``x * factor``, element by element, wrapping on overflow.

    :param x: an integer scalar or tensor (``tl.int8`` ... ``tl.uint64``). A compile-time int
        (a literal, or an argument Triton specialized, such as 1) becomes a scalar first, as in
        ``x + 0``.
    :param factor: a compile-time int (``tl.constexpr``) that fits the type of ``x``.

    The result has the type of ``x``. Misuse (a float, bool or pointer ``x``, a runtime or
    non-int factor, a factor outside the type) is a compile error at the calling line.
    """
    f = _factor(factor)
    if isinstance(x, core.constexpr):
        if isinstance(x.value, bool) or not isinstance(x.value, int):
            raise TypeError(f"@@op@@: x must be an integer, got the constant {x.value!r}")
        x = _semantic.to_tensor(x)
    if not isinstance(x, core.tensor):
        raise TypeError(f"@@op@@: x must be an integer tensor or scalar, got {x!r}")
    dtype = x.dtype
    if dtype.is_bool() or not dtype.is_int():
        raise TypeError(f"@@op@@: x must have an integer type (int8 ... uint64), got {dtype}")
    lo, hi = factor_range(dtype)
    if not lo <= f <= hi:
        raise ValueError(f"@@op@@: factor = {f} does not fit {dtype}; expected a value in [{lo}, {hi}]")
    builder = _semantic.builder
    create = getattr(builder, _BUILDER_METHOD, None)
    if create is None:
        raise RuntimeError(
            f"@@op@@: Triton's builder has no {_BUILDER_METHOD}; the @@lsnake@@ plugin is not "
            "loaded (import @@package@@ before compiling, after `triton-ext build @@dsnake@@ "
            "@@lsnake@@`)")
    # Unsigned factors above 2**63 - 1 go as their two's complement bit pattern in i64.
    f64 = f - (1 << 64) if f >= 1 << 63 else f
    result = create([x.handle, builder.get_int64(f64)])
    return core.tensor(_result_handle(result), x.type)


def _result_handle(result: Any) -> Any:
    """Triton 3.9.0 returns the result slot (values[0] of the callback); accept a list too."""
    if isinstance(result, (list, tuple)):
        if len(result) != 1:
            raise RuntimeError(f"@@op@@: the builder returned {len(result)} values, expected 1")
        return result[0]
    return result


load()
'''

_L_PYTEST = '''\
"""End-to-end CPU tests of @@package@@.@@op@@: real kernels compiled through cubin with the stock
triton wheel, the dialect (@@dsnake@@) and builder (@@lsnake@@) plugins loaded through triton_ext.

No GPU is needed: triton.compile with a GPUTarget runs ttir -> ttgir -> llir -> ptx -> cubin.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton.compiler.errors import CompilationError

from triton_ext._manifest import load_manifest

_LIBS = [load_manifest().extension(n).library_path() for n in ("@@dsnake@@", "@@lsnake@@")]
pytestmark = pytest.mark.skipif(
    not all(p.exists() for p in _LIBS),
    reason=f"plugins not built ({', '.join(str(p) for p in _LIBS if not p.exists())}); "
    "run `triton-ext build @@dsnake@@ @@lsnake@@`")

if all(p.exists() for p in _LIBS):
    import @@package@@
else:  # keep collection working; every test is skipped
    @@package@@ = None  # type: ignore[assignment]

TARGET = GPUTarget("cuda", 90, 32)
OP = "@@dialect@@.@@op@@"


@pytest.fixture(autouse=True)
def _fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Compile for real in every test: a cached kernel would skip the stages under test."""
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton-cache"))
    @@package@@.load()  # the repository's conftest resets triton_ext between modules


def compile_kernel(fn, signature: dict[str, str], constexprs: dict[str, object] | None = None):
    return triton.compile(ASTSource(fn, signature=signature, constexprs=constexprs or {}),
                          target=TARGET)


def frontend_ir(fn, signature: dict[str, str], constexprs: dict[str, object]) -> str:
    """The kernel's IR as code generation leaves it, before any pass (the lowering included)."""
    from triton._C.libtriton import ir
    from triton.compiler.compiler import make_backend

    backend = make_backend(TARGET)
    options = backend.parse_options({})
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    src = ASTSource(fn, signature=signature, constexprs=constexprs)
    mod = src.make_ir(TARGET, options, backend.get_codegen_implementation(options),
                      backend.get_module_map(), context)
    assert mod.verify()
    return mod.str_nodebug()


@triton.jit
def scale_kernel(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    tl.store(Y + offs, @@package@@.@@op@@(x, 5), mask=mask)


@triton.jit
def _times_three(v):
    return @@package@@.@@op@@(v, 3)


@triton.jit
def helper_kernel(X, Y, n, BLOCK: tl.constexpr):
    # The op inside a called @triton.jit function: needs the dialect's inliner interface.
    offs = tl.arange(0, BLOCK)
    tl.store(Y + offs, _times_three(tl.load(X + offs)) + @@package@@.@@op@@(n, -2))


SIG = {"X": "*i32", "Y": "*i32", "n": "i32"}


def test_op_is_built_by_the_front_end() -> None:
    text = frontend_ir(scale_kernel, SIG, {"BLOCK": 128})
    assert f"{OP} %" in text and ", 5 : tensor<128xi32>" in text, text
    assert "5 : i64" not in text  # the constant that carried the factor is gone


def test_kernel_compiles_to_cubin_and_the_op_is_lowered() -> None:
    kernel = compile_kernel(scale_kernel, SIG, {"BLOCK": 128})
    assert kernel.asm["cubin"]
    ttir = kernel.asm["ttir"]
    assert OP not in ttir and "@@dialect@@" not in kernel.asm["ttgir"]
    assert "arith.constant dense<5> : tensor<128xi32>" in ttir and "arith.muli" in ttir


def test_op_in_a_called_function_and_on_a_scalar() -> None:
    text = frontend_ir(helper_kernel, SIG, {"BLOCK": 64})
    assert f"{OP} %arg2, -2 : i32" in text
    kernel = compile_kernel(helper_kernel, SIG, {"BLOCK": 64})
    assert kernel.asm["cubin"] and OP not in kernel.asm["ttir"]


def test_specialized_constant_argument_is_accepted() -> None:
    # Triton specializes an int argument equal to 1 into a constexpr: x arrives as a constant.
    sig = {"X": "*i32", "Y": "*i32", "n": "constexpr"}
    assert compile_kernel(helper_kernel, sig, {"n": 1, "BLOCK": 64}).asm["cubin"]


@triton.jit
def bad_float(X, v):
    y = @@package@@.@@op@@(v, 2)
    tl.store(X, y)


@triton.jit
def bad_runtime_factor(X, n, k):
    y = @@package@@.@@op@@(n, k)
    tl.store(X, y)


@triton.jit
def bad_float_factor(X, n):
    y = @@package@@.@@op@@(n, 2.5)
    tl.store(X, y)


@triton.jit
def bad_too_wide(X, n):
    y = @@package@@.@@op@@(n, 300)
    tl.store(X, y)


@triton.jit
def bad_negative_unsigned(X, n):
    y = @@package@@.@@op@@(n, -1)
    tl.store(X, y)


@pytest.mark.parametrize("fn, signature, message", [
    (bad_float, {"X": "*fp32", "v": "fp32"}, "x must have an integer type (int8 ... uint64), got fp32"),
    (bad_runtime_factor, {"X": "*i32", "n": "i32", "k": "i32"}, "factor must be a compile-time integer"),
    (bad_float_factor, {"X": "*i32", "n": "i32"}, "factor must be an int, got float 2.5"),
    (bad_too_wide, {"X": "*i8", "n": "i8"}, "factor = 300 does not fit int8; expected a value in [-128, 127]"),
    (bad_negative_unsigned, {"X": "*u32", "n": "u32"}, "factor = -1 does not fit uint32"),
])
def test_misuse_is_a_compile_error_at_the_users_line(fn, signature, message) -> None:
    with pytest.raises(CompilationError) as info:
        compile_kernel(fn, signature)
    text = str(info.value)
    assert message in text
    line = next(l for l in fn.src.splitlines() if "@@op@@(" in l)
    assert line.strip() in text  # the user's source line, with a caret under the call
    assert text.startswith("at 2:8:") and info.value.node.lineno == 2


def test_outside_jit_is_refused() -> None:
    with pytest.raises(ValueError, match="triton.jit"):
        @@package@@.@@op@@(1, 2)
'''

_L_README = """\
# @@lcamel@@: `@@package@@.@@op@@` in `@triton.jit` kernels

## What it does

TODO: what the functions are for. (Scaffolded by `triton-ext new language @@lcamel@@`.)

```python
import @@package@@            # loads the plugins, enables @@lower_pass@@

@triton.jit
def kernel(X, Y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(Y + offs, @@package@@.@@op@@(tl.load(X + offs), 3))    # x * 3
```

`@@op@@(x, factor)` returns `x * factor` (wrapping) as the op `@@dialect@@.@@op@@` of the dialect
in `@@dfolder@@`; `@@lower_pass@@` lowers it to `arith.muli` at the end of `ttir`.

Conventions as in `triton.language`: a `@builtin` taking `_semantic`; `x` an integer tensor or
scalar (a compile-time int becomes a scalar first); `factor` a compile-time int (`tl.constexpr`
or a literal) that fits the type of `x`. A float, bool or pointer `x`, a runtime or non-int
factor, or a factor outside the type is a `CompilationError` at the calling line.

How it reaches the IR: Triton 3.9.0 binds a plugin's `OpInfo` as `builder.create_<name>(values)`;
values are `mlir::Value`s only, so the factor goes as an `arith.constant`, and the binding puts a
result slot in front: the callback (`@@lcamel@@Builder.cpp`, `TRITON_EXT_REGISTER_OP(@@opfn@@,
...)`) gets `[slot, x, factor]`, reads and erases the constant, creates the op by name (the op
class is private to the dialect plugin) and stores its result in the slot.

## Flag and options

None. Registry key `@@lsnake@@` (kind `language`, library `libTritonExt@@lcamel@@.so`); it needs
`@@dsnake@@` (the dialect and `@@lower_pass@@`).

## When it declines

Never at run time; misuse fails compilation (above). If the plugins are not built, importing
`@@package@@` raises `triton_ext.LoadError` naming the build command.

## Where it runs

In the front end (code generation of `@triton.jit`). Importing `@@package@@` calls
`triton_ext.enable("@@lower_pass@@")` (which loads `@@dsnake@@`, registering the dialect through
`ir.extend_dialects_with`) and loads this library (`ir.builder.extend_with`).

## Layout

```
@@lfolder@@/
  CMakeLists.txt             triton_ext_add_language(@@lcamel@@ SOURCES @@lcamel@@Builder.cpp)
  @@lcamel@@Builder.cpp      builder callback (TRITON_EXT_REGISTER_OP)
  @@package@@/__init__.py    the Python functions (@builtin) and load()
  test_@@lsnake@@.py         CPU tests through cubin
  README.md
```

## Status and owner

experimental; TODO owner.

## How to test

```
triton-ext build @@dsnake@@ @@lsnake@@
triton-ext test @@dsnake@@ @@lsnake@@    # lit of the dialect; pytest of this folder
```
(The tests import `@@package@@` from this folder, which pytest puts on `sys.path`.)
"""

_L_ENTRY = """\
  @@lsnake@@:
    kind: language
    directory: @@lfolder@@
    library: TritonExt@@lcamel@@
    status: experimental
    summary: TODO one sentence (scaffolded; @@package@@.@@op@@(x, factor) for @triton.jit kernels, builder op create_@@opfn@@; needs @@dsnake@@).
    owners: [@@owner@@]
    targets: {cuda: {}, hip: {}}
"""


def language_files(n: LanguageNames) -> dict[str, str]:
    """Relative path -> text of a scaffolded ``language/<Name>/``."""
    files = {
        "CMakeLists.txt": _L_CMAKE,
        f"{n.camel}Builder.cpp": _L_BUILDER,
        f"{n.package}/__init__.py": _L_INIT,
        f"test_{n.snake}.py": _L_PYTEST,
        "README.md": _L_README,
    }
    values = n.values()
    return {path: render(text, values) for path, text in files.items()}


def language_entry(n: LanguageNames, owner: str) -> str:
    return render(_L_ENTRY, {**n.values(), "owner": owner})
