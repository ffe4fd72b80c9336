"""Scaffold a new extension: ``triton-ext new pass|dialect|language NAME``.

Writes a folder that follows CONTRIBUTING.md (one name, every layer) and builds and passes its
own tests at once, and appends the extension's entry to ``registry.yaml``::

    triton-ext new pass DemoThing
    triton-ext build demo_thing && triton-ext test demo_thing

``pass`` writes ``passes/<Name>/``: CMakeLists.txt, Passes.td (one option), <Name>.cpp (a working
ModuleOp pass that tags each ``tt.func`` with its number of ``scf.for`` loops: replace the body
with your transformation), test/<kebab>.mlir (lit + FileCheck), test_<snake>.py (a real kernel
compiled through cubin on the CPU with the pass enabled), bench.py (benchmark spec) and README.md.
``dialect`` writes ``dialects/<Name>/`` and ``language`` writes ``language/<Name>/``: for now
both hold the same ODS dialect with one op (``<snake>.identity``) and a registry entry without
passes; a ``language`` scaffold does not yet add a builder op (``TRITON_EXT_REGISTER_OP``) or the
Python function that calls it. The dialect scaffold was checked by hand to build, load and parse;
no test builds it (the pass scaffold's test does).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

__all__ = ["ScaffoldError", "Names", "names_for", "scaffold", "main"]

_CAMEL = re.compile(r"^[A-Z][a-z0-9]*(?:[A-Z][a-z0-9]*)*$")
_KIND_ROOT = {"pass": "passes", "dialect": "dialects", "language": "language"}


class ScaffoldError(RuntimeError):
    """The extension cannot be scaffolded; the message says why and what to do."""


@dataclass(frozen=True)
class Names:
    """One name in every spelling CONTRIBUTING.md uses."""

    camel: str   # DemoThing: folder, file, CMake target suffix
    snake: str   # demo_thing: registry and pass name
    kebab: str   # demo-thing: test file, flag suffix

    @property
    def record(self) -> str:
        return f"TritonExt{self.camel}"

    @property
    def flag(self) -> str:
        return f"triton-ext-{self.kebab}"

    @property
    def upper(self) -> str:
        return self.record.upper()


def names_for(name: str) -> Names:
    """``DemoThing`` (or ``demo_thing``) -> its spellings; raises on anything else."""
    if re.fullmatch(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*", name):
        name = "".join(part.capitalize() for part in name.split("_"))
    if not _CAMEL.fullmatch(name):
        raise ScaffoldError(f"name '{name}': expected CamelCase like LoopSplit (or snake_case like "
                            "loop_split), letters and digits only")
    words = re.findall(r"[A-Z][a-z0-9]*", name)
    return Names(camel=name, snake="_".join(w.lower() for w in words),
                 kebab="-".join(w.lower() for w in words))


# --------------------------------------------------------------------------- #
# Templates. {camel} {snake} {kebab} {record} {flag} {upper} are substituted.
# --------------------------------------------------------------------------- #

_PASS_CMAKE = "triton_ext_add_pass({camel} SOURCES {camel}.cpp TD Passes.td)\n"

_PASS_TD = """\
//===- Passes.td - {camel} -*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
//===----------------------------------------------------------------------===//

#ifndef {upper}_PASSES
#define {upper}_PASSES

include "mlir/Pass/PassBase.td"

def {record} : Pass<"{flag}", "mlir::ModuleOp"> {{
  let summary = "Tag each tt.func with the number of scf.for loops it holds";
  let description = [{{
    Scaffolded by `triton-ext new pass {camel}`: replace this with what your
    pass does, with the IR before and after.

    Sets the discardable attribute `triton_ext.{snake}.loops` (i64) on every
    `tt.func` that holds at least `min-loops` `scf.for` ops.
  }}];
  let options = [
    Option<"minLoops", "min-loops", "unsigned", /*default=*/"0",
           "Fewest scf.for ops (count) a function needs to be tagged.">,
  ];
  let dependentDialects = ["mlir::scf::SCFDialect",
                           "mlir::triton::TritonDialect"];
}}

#endif // {upper}_PASSES
"""

_PASS_CPP = """\
//===- {camel}.cpp - Tag functions with their loop count -------------------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Scaffolded by `triton-ext new pass {camel}`. The pass counts the `scf.for`
// ops in each `tt.func` and records the count in the discardable attribute
// `triton_ext.{snake}.loops`. Replace `runOnOperation` with your
// transformation; keep the registration line at the end.
//
// Legal on any module: a discardable attribute in a dialect namespace that is
// not loaded changes no semantics, and later passes and the LLVM translation
// ignore it. Declines (leaves a function untouched) when it holds fewer than
// `min-loops` loops.
//
//===----------------------------------------------------------------------===//

#include "triton-ext/PassInfra.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/Pass.h"
#include "triton/Dialect/Triton/IR/Dialect.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "{flag}"

namespace mlir::triton_ext {{
#define GEN_PASS_DECL_{upper}
#define GEN_PASS_DEF_{upper}
#include "Passes.h.inc"
}} // namespace mlir::triton_ext

using namespace mlir;

namespace {{

/// Number of scf.for ops nested anywhere in `func`.
unsigned countLoops(triton::FuncOp func) {{
  unsigned count = 0;
  func.walk([&](scf::ForOp) {{ ++count; }});
  return count;
}}

class {camel}Pass
    : public triton_ext::impl::{record}Base<{camel}Pass> {{
public:
  using {record}Base::{record}Base;

  void runOnOperation() override {{
    Builder builder(&getContext());
    getOperation().walk([&](triton::FuncOp func) {{
      unsigned loops = countLoops(func);
      if (loops < minLoops) {{
        LLVM_DEBUG(llvm::dbgs() << "[{flag}] skip " << func.getName() << ": "
                                << loops << " loop(s) < min-loops\\n");
        return;
      }}
      func->setAttr("triton_ext.{snake}.loops",
                    builder.getI64IntegerAttr(loops));
    }});
  }}
}};

}} // namespace

TRITON_EXT_REGISTER_PASS({snake}, {camel}Pass);
"""

_PASS_LIT = """\
// RUN: %opt %s --pass {snake} --no-debug-info | FileCheck %s
// RUN: %opt %s --pass '{snake}{{min-loops=2}}' --no-debug-info | FileCheck %s --check-prefix=MIN2

// One loop: tagged with 1 by default; min-loops=2 leaves it untagged.
// CHECK-LABEL: tt.func @one_loop
// CHECK-SAME:    triton_ext.{snake}.loops = 1 : i64
// MIN2-LABEL:  tt.func @one_loop
// MIN2-NOT:      triton_ext.{snake}.loops
tt.func @one_loop(%n: i32) -> i32 {{
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.for %iv = %c0 to %n step %c1 iter_args(%acc = %c0) -> (i32) : i32 {{
    %next = arith.addi %acc, %iv : i32
    scf.yield %next : i32
  }}
  tt.return %r : i32
}}

// -----

// Two nested loops: tagged with 2 under both option values.
// CHECK-LABEL: tt.func @nested_loops
// CHECK-SAME:    triton_ext.{snake}.loops = 2 : i64
// MIN2-LABEL:  tt.func @nested_loops
// MIN2-SAME:     triton_ext.{snake}.loops = 2 : i64
tt.func @nested_loops(%n: i32) -> i32 {{
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c0) -> (i32) : i32 {{
    %inner = scf.for %j = %c0 to %n step %c1 iter_args(%a = %acc) -> (i32) : i32 {{
      %next = arith.addi %a, %j : i32
      scf.yield %next : i32
    }}
    scf.yield %inner : i32
  }}
  tt.return %r : i32
}}
"""

_PASS_PYTEST = '''\
"""End-to-end CPU test of {snake}: a real kernel compiled through cubin with the pass enabled.

No GPU is needed: triton.compile with a GPUTarget runs ttir -> ttgir -> llir -> ptx -> cubin with
the wheel's ptxas. The pass runs where registry.yaml places it (end of make_ttir).
"""

from __future__ import annotations

import pytest

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

import triton_ext

TARGET = GPUTarget("cuda", 90, 32)
ATTR = "triton_ext.{snake}.loops"


@triton.jit
def _row_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + tl.arange(0, BLOCK), acc)


@pytest.fixture(autouse=True)
def _fresh_cache(tmp_path, monkeypatch):
    # Each test compiles from scratch, so the IR read back is this run's.
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(triton.knobs.cache, "dir", str(tmp_path / "cache"), raising=False)


def _compile(enabled: bool, **options):
    src = ASTSource(_row_sum, signature={{"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}},
                    constexprs={{"BLOCK": 128}})
    if not enabled:
        return triton.compile(src, target=TARGET)
    with triton_ext.enabled("{snake}", **options):
        return triton.compile(src, target=TARGET)


def test_tags_the_kernel_and_reaches_cubin() -> None:
    kernel = _compile(enabled=True)
    assert f"{{ATTR}} = 1 : i64" in kernel.asm["ttir"]
    assert kernel.asm["cubin"]


def test_off_by_default() -> None:
    assert ATTR not in _compile(enabled=False).asm["ttir"]


def test_min_loops_declines() -> None:
    assert ATTR not in _compile(enabled=True, min_loops=2).asm["ttir"]
'''

_PASS_BENCH = '''\
"""Benchmark spec of {snake}: what to time with the pass on and off (GPU only).

    python {folder}/bench.py --out {snake}.json

Times each case with triton.testing.do_bench, the pass off and on, and checks that the outputs
agree before timing. Needs torch and a GPU.
"""

from __future__ import annotations

import argparse
import json

#: (name, n) cases; n is the length summed by the kernel in test_{snake}.py.
CASES = [("n=4096", 4096), ("n=1048576", 1 << 20)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    import torch
    import triton
    import triton_ext
    from test_{snake} import _row_sum

    rows = []
    for name, n in CASES:
        x = torch.randn(n, device="cuda", dtype=torch.float32)
        times = {{}}
        outs = {{}}
        for enabled in (False, True):
            out = torch.empty(128, device="cuda", dtype=torch.float32)
            run = lambda: _row_sum[(1,)](x, out, n, BLOCK=128)  # noqa: E731
            if enabled:
                with triton_ext.enabled("{snake}"):
                    run()
                    times[enabled] = triton.testing.do_bench(run)
            else:
                run()
                times[enabled] = triton.testing.do_bench(run)
            outs[enabled] = out.clone()
        torch.testing.assert_close(outs[False], outs[True])
        rows.append({{"case": name, "off_ms": times[False], "on_ms": times[True]}})
        print(f"{{name:12}} off {{times[False]:.4f}} ms  on {{times[True]:.4f}} ms")
    with open(args.out, "w") as f:
        json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
'''

_README = """\
# {camel}

## What it does

TODO: one paragraph, with the IR before and after. (Scaffolded: the pass tags each `tt.func`
with `triton_ext.{snake}.loops`, its number of `scf.for` ops.)

## Flag and options

`{flag}` (`passes.plugin.add_{snake}`); `TRITON_EXT_ENABLE={snake}`.

| Option | Type | Default | Effect |
|---|---|---|---|
| `min-loops` | int | 0 | Fewest `scf.for` ops a function needs to be tagged. |

## When it declines

A function with fewer than `min-loops` loops is left as it is.

## Where it runs

Stage `ttir`, at the end of `make_ttir` (registry.yaml).

## Status and owner

experimental; TODO owner.

## How to test

```
triton-ext build {snake}
triton-ext test {snake}        # lit ({folder}/test) and pytest ({folder}/test_{snake}.py)
```
"""

_PASS_REGISTRY = """\
  {snake}:
    kind: pass
    directory: {folder}
    library: {record}
    status: experimental
    summary: TODO one sentence (scaffolded; tags each tt.func with its number of scf.for loops).
    owners: [{owner}]
    targets: {{cuda: {{}}, hip: {{}}}}
    passes:
      {snake}:
        stage: ttir
        enabled_by_default: false
        options:
          min-loops: {{default: 0, type: int, help: "Fewest scf.for ops a function needs to be tagged."}}
"""

_DIALECT_CMAKE = "triton_ext_add_dialect({camel} SOURCES {camel}.cpp TD {camel}.td)\n"
_LANGUAGE_CMAKE = "triton_ext_add_language({camel} SOURCES {camel}.cpp TD {camel}.td)\n"

_DIALECT_TD = """\
//===- {camel}.td - The {snake} dialect -*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0
//
//===----------------------------------------------------------------------===//

#ifndef {upper}_TD
#define {upper}_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def {camel}_Dialect : Dialect {{
  let name = "{snake}";
  let summary = "Scaffolded by `triton-ext new {kind} {camel}`";
  let cppNamespace = "::mlir::triton_ext::{snake}";
}}

class {camel}_Op<string mnemonic, list<Trait> traits = []>
    : Op<{camel}_Dialect, mnemonic, traits>;

def {camel}_IdentityOp : {camel}_Op<"identity", [Pure, AllTypesMatch<["input", "result"]>]> {{
  let summary = "Returns its operand (replace with your op)";
  let arguments = (ins AnyType:$input);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}}

#endif // {upper}_TD
"""

_DIALECT_CPP = """\
//===- {camel}.cpp - The {snake} dialect -----------------------------------===//
//
// SPDX-License-Identifier: Apache-2.0
//
// Scaffolded by `triton-ext new {kind} {camel}`: an ODS dialect with one op,
// `{snake}.identity`, registered with Triton through libTritonExtPassInfra.
//
//===----------------------------------------------------------------------===//

#include "triton-ext/PassInfra.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "{camel}Dialect.h.inc"
#define GET_OP_CLASSES
#include "{camel}Ops.h.inc"

#include "{camel}Dialect.cpp.inc"
#define GET_OP_CLASSES
#include "{camel}Ops.cpp.inc"

namespace mlir::triton_ext::{snake} {{
void {camel}Dialect::initialize() {{
  addOperations<
#define GET_OP_LIST
#include "{camel}Ops.cpp.inc"
      >();
}}
}} // namespace mlir::triton_ext::{snake}

TRITON_EXT_REGISTER_DIALECT({snake}, ::mlir::triton_ext::{snake}::{camel}Dialect);
"""

_DIALECT_REGISTRY = """\
  {snake}:
    kind: {kind}
    directory: {folder}
    library: {record}
    status: experimental
    summary: TODO one sentence (scaffolded {kind} with one op, {snake}.identity).
    owners: [{owner}]
    targets: {{cuda: {{}}, hip: {{}}}}
"""


def _files(kind: str, n: Names, folder: str) -> dict[str, str]:
    fmt = dict(camel=n.camel, snake=n.snake, kebab=n.kebab, record=n.record, flag=n.flag,
               upper=n.upper, folder=folder, kind=kind)
    if kind == "pass":
        files = {
            "CMakeLists.txt": _PASS_CMAKE,
            "Passes.td": _PASS_TD,
            f"{n.camel}.cpp": _PASS_CPP,
            f"test/{n.kebab}.mlir": _PASS_LIT,
            f"test_{n.snake}.py": _PASS_PYTEST,
            "bench.py": _PASS_BENCH,
            "README.md": _README,
        }
    else:
        files = {
            "CMakeLists.txt": _DIALECT_CMAKE if kind == "dialect" else _LANGUAGE_CMAKE,
            f"{n.camel}.td": _DIALECT_TD,
            f"{n.camel}.cpp": _DIALECT_CPP,
            "README.md": f"# {n.camel}\n\nScaffolded by `triton-ext new {kind} {n.camel}`: "
                         f"the `{n.snake}` dialect with one op, `{n.snake}.identity`.\n",
        }
    return {path: text.format(**fmt) for path, text in files.items()}


def _registry_entry(kind: str, n: Names, folder: str, owner: str) -> str:
    template = _PASS_REGISTRY if kind == "pass" else _DIALECT_REGISTRY
    return template.format(snake=n.snake, folder=folder, record=n.record, owner=owner, kind=kind)


def _append_entry(registry: Path, entry: str, name: str) -> None:
    """Append under ``extensions:`` (the last top-level key) and re-validate; undo on error."""
    from ._errors import TritonExtError
    from ._manifest import load_manifest

    text = registry.read_text(encoding="utf-8")
    top = re.findall(r"^([A-Za-z_][\w-]*):", text, re.M)
    if not top or top[-1] != "extensions":
        raise ScaffoldError(f"{registry}: expected 'extensions:' as the last top-level key, found "
                            f"{top[-1] if top else 'none'}; add this entry under extensions by hand:\n"
                            + entry)
    if re.search(r"^extensions:\s*\{\s*\}\s*$", text, re.M):
        text = re.sub(r"^extensions:\s*\{\s*\}\s*$", "extensions:", text, flags=re.M)
    new = text.rstrip("\n") + "\n" + entry
    registry.write_text(new, encoding="utf-8")
    try:
        load_manifest(registry, entry_points=False).extension(name)
    except TritonExtError as exc:
        registry.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        raise ScaffoldError(f"{registry}: the new entry does not validate, registry left as it "
                            f"was: {exc}") from exc


def _owner(root: Path) -> str:
    import subprocess

    try:
        res = subprocess.run(["git", "config", "user.name"], cwd=root, capture_output=True,
                             text=True, timeout=10)
        name = res.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        name = ""
    return name.replace(",", " ").replace("]", "").replace("[", "") or "TODO owner"


def scaffold(kind: str, name: str, root: Path, registry: Path | None = None,
             owner: str | None = None) -> tuple[Path, Names]:
    """Write the extension folder under ``root`` and its registry entry; return the folder."""
    if kind not in _KIND_ROOT:
        raise ScaffoldError(f"kind '{kind}': expected one of {', '.join(_KIND_ROOT)}")
    n = names_for(name)
    root = root.resolve()
    registry = registry or root / "registry.yaml"
    if not (root / "CMakeLists.txt").exists() or not (root / "cmake" / "TritonExt.cmake").exists():
        raise ScaffoldError(f"{root}: not a triton-ext source checkout (no CMakeLists.txt and "
                            "cmake/TritonExt.cmake); run in a clone or pass --root")
    if not registry.exists():
        raise ScaffoldError(f"{registry}: registry not found; expected registry.yaml at the "
                            "checkout root (or pass --registry)")
    folder = f"{_KIND_ROOT[kind]}/{n.camel}"
    target = root / folder
    if target.exists():
        raise ScaffoldError(f"{target}: already exists; choose another name or remove the folder")
    from ._errors import TritonExtError
    from ._manifest import load_manifest

    try:
        manifest = load_manifest(registry, entry_points=False)
    except TritonExtError as exc:
        raise ScaffoldError(f"the registry is broken, fix it first: {exc}") from exc
    taken = {e.name for e in manifest.extensions} | {p.name for p in manifest.passes}
    if n.snake in taken:
        raise ScaffoldError(f"'{n.snake}' is already an extension or pass name in {registry}; "
                            "choose another name")
    files = _files(kind, n, folder)
    _append_entry(registry, _registry_entry(kind, n, folder, owner or _owner(root)), n.snake)
    for rel, text in files.items():
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return target, n


def main(argv: Sequence[str] | None = None) -> int:
    from ._settings import repo_root

    parser = argparse.ArgumentParser(
        prog="triton-ext new",
        description="Scaffold an extension folder and its registry.yaml entry.",
        epilog="Then: triton-ext build NAME && triton-ext test NAME")
    parser.add_argument("kind", choices=sorted(_KIND_ROOT))
    parser.add_argument("name", help="CamelCase (DemoThing) or snake_case (demo_thing)")
    parser.add_argument("--root", type=Path, default=None,
                        help="checkout to write into (default: the one triton_ext lives in)")
    parser.add_argument("--registry", type=Path, default=None,
                        help="registry to add the entry to (default: <root>/registry.yaml)")
    parser.add_argument("--owner", default=None, help="owner in the registry (default: git user)")
    args = parser.parse_args(argv)
    try:
        target, n = scaffold(args.kind, args.name, args.root or repo_root(), args.registry,
                             args.owner)
    except ScaffoldError as exc:
        print(f"triton-ext new: error: {exc}", file=sys.stderr)
        return 1
    print(f"created {target} and registry entry '{n.snake}'")
    for rel in sorted(_files(args.kind, n, str(target))):
        print(f"  {target / rel}")
    print(f"next: triton-ext build {n.snake} && triton-ext test {n.snake}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
