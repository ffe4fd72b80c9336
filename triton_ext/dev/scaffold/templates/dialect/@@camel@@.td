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
