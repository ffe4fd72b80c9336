//===- PassOptions.td - triton-ext pass option classes -*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Option classes for an extension's Passes.td, beside MLIR's `Option`. Each
// is an `Option` (the generated pass base and MLIR's option parser see
// nothing new) with extra fields the build emits as data: `mlir-tblgen
// --print-records` writes every record, resolved, next to the plugin
// (lib<Target>.passes.records), and the Python loader reads option names,
// types, defaults, help and these constraints from there
// (triton_ext/_pass_records.py): a bad value is refused before anything
// compiles.
//
//   EnumOption<"mode", "mode", "::mlir::triton_ext::sanitizers::ReportMode",
//              /*default=*/"record", "help",
//              [EnumValue<"Record", "record", "help">,
//               EnumValue<"Abort", "abort">]>
//   RangeOption<"maxParts", "max-parts", "unsigned", /*default=*/"3", "help",
//               /*min=*/2, /*max=*/3>
//   MinOption<"groupSize", "group-size", "int", /*default=*/"8", "help",
//             /*min=*/2>
//   RemarksOption<"kernel the pass leaves alone">
//
//===----------------------------------------------------------------------===//

#ifndef TRITON_EXT_PASS_OPTIONS
#define TRITON_EXT_PASS_OPTIONS

include "mlir/Pass/PassBase.td"

/// One value of an EnumOption: the C++ enumerator (without the enum's name) and
/// how users spell it (`mode=abort`, `enable(..., mode="abort")`).
class EnumValue<string enumerator, string spelling, string help = ""> {
  string cppEnumerator = enumerator;
  string name = spelling;
  string description = help;
}

/// An option whose value is one of `values`, parsed by MLIR into the C++ enum
/// `enumType` (declared before the generated pass base is included). The
/// default is given by its spelling; TableGen refuses one that is not a value.
class EnumOption<string varName, string arg, string enumType, string default,
                 string desc, list<EnumValue> values>
    : Option<varName, arg, enumType,
             !foldl("", values, acc, v,
                    !if(!eq(v.name, default),
                        enumType # "::" # v.cppEnumerator, acc)),
             desc,
             "::llvm::cl::values(" #
                 !interleave(!foreach(v, values,
                                      "clEnumValN(" # enumType # "::" #
                                          v.cppEnumerator # ", \"" # v.name #
                                          "\", \"" #
                                          !subst("\"", "\\\"", v.description) #
                                          "\")"),
                             ", ") #
                 ")"> {
  list<string> allowedValues = !foreach(v, values, v.name);
  list<string> allowedHelp = !foreach(v, values, v.description);
  string defaultName = default;
  // The records dump prints list elements unescaped: keep quotes out of them.
  assert !foldl(1, values, ok, v,
                !and(ok, !eq(!find(v.name # v.description, "\""), -1))),
      "EnumOption " # arg # ": a value's name or help contains a double quote";
  assert !ne(defaultValue, ""),
      "EnumOption " # arg # ": the default '" # default #
          "' is not one of its values";
}

/// An integer option that must be at least `min`.
class MinOption<string varName, string arg, string valueType, string default,
                string desc, int min>
    : Option<varName, arg, valueType, default, desc> {
  int minValue = min;
}

/// An integer option that must lie in [`min`, `max`].
class RangeOption<string varName, string arg, string valueType, string default,
                  string desc, int min, int max>
    : MinOption<varName, arg, valueType, default, desc, min> {
  int maxValue = max;
  assert !le(min, max), "RangeOption " # arg # ": min is greater than max";
}

/// The `remarks` option every optimization pass that declines declares: when
/// true, the pass emits a remark `<pass>: not applied: <reason>` on the op it
/// leaves alone. `what` completes "for each ..." in the help ("kernel the pass
/// leaves alone"). The loader sets it on every enabled pass that declares it
/// when TRITON_EXT_REMARKS=1 (unless the user set it) and turns on Triton's
/// printing of remarks (MLIR_ENABLE_DIAGNOSTICS=remarks). The C++ member is
/// `remarks`.
class RemarksOption<string what>
    : Option<"remarks", "remarks", "bool", /*default=*/"false",
             "Emit a remark `<pass>: not applied: <reason>` for each " # what #
                 ". TRITON_EXT_REMARKS=1 sets it on every enabled pass; Triton "
                 "prints remarks on stderr with MLIR_ENABLE_DIAGNOSTICS=remarks, "
                 "which the loader then sets.">;

#endif // TRITON_EXT_PASS_OPTIONS
