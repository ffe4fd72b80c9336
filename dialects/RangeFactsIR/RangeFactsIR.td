//===- RangeFactsIR.td - Value range facts as IR -------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
// The `triton_ext_range` dialect: facts about integer values that the
// programmer knows and the compiler cannot prove. `triton_ext_add_dialect`
// runs mlir-tblgen over this file for -gen-dialect-* (RangeFactsIRDialect.*.inc)
// and -gen-op-* (RangeFactsIROps.*.inc).
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_RANGE_FACTS_TD
#define TRITON_EXT_RANGE_FACTS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/DialectBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def RangeFacts_Dialect : Dialect {
  let name = "triton_ext_range";
  let summary = "Value range facts for Triton kernels (triton-ext)";
  let description = [{
    Ops that state facts about values. They compute nothing: each returns its
    operand unchanged, so consumers (LoopSplit's no-wrap proof, an overflow
    sanitizer) can read the fact from the use-def chain, and
    `range_facts_lower` removes them before conversion to TritonGPU.
  }];
  let cppNamespace = "::mlir::triton_ext::range";
}

class RangeFacts_Op<string mnemonic, list<Trait> traits = []>
    : Op<RangeFacts_Dialect, mnemonic, traits>;

def RangeFacts_AssumeRangeOp
    : RangeFacts_Op<"assume_range", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "State that every element of an integer value lies in [lo, hi]";
  let description = [{
    Returns `input` unchanged, with the promise that each element, read as a
    signed integer, lies in the closed interval `[lo, hi]`. `lo` and `hi`
    are integer attributes of the element type of `input`; `lo <= hi`
    (signed). A value outside the interval makes the program's behaviour
    undefined, as with `llvm.intr.assume`.

    ```mlir
    %n1 = triton_ext_range.assume_range %n, 0, 4096 : i32
    %o1 = triton_ext_range.assume_range %offs, 0, 1023 : tensor<128xi32>
    ```
  }];
  let arguments = (ins AnyTypeOf<[AnySignlessInteger,
                                  RankedTensorOf<[AnySignlessInteger]>]>:$input,
                       APIntAttr:$lo, APIntAttr:$hi);
  let results = (outs AnyTypeOf<[AnySignlessInteger,
                                 RankedTensorOf<[AnySignlessInteger]>]>:$result);
  // `%x, lo, hi : type`; the bounds are printed as signed decimals of the
  // element type (see RangeFactsDialect.cpp).
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// Element type of the input: the type of `lo` and `hi`.
    ::mlir::IntegerType getElementType();
  }];
}

#endif // TRITON_EXT_RANGE_FACTS_TD
