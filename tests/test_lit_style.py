"""Lit files follow MLIR's habits (issue 30): a file with more than one function runs every
``%opt %s`` with ``-split-input-file`` and separates its cases with ``// -----`` (unless a
``// One case: <reason>`` line says its functions form one case, e.g. a module-level table over
all of them); in a file checked with FileCheck every function has a ``CHECK-LABEL`` (any
prefix's ``-LABEL``) naming it; a ``// -----`` line only appears in a
file that splits (elsewhere it does nothing); diagnostics are checked in place
(``-verify-diagnostics`` with ``expected-error`` comments), not through ``Inputs/`` files.

The scaffold's templates (``triton_ext/dev/scaffold/templates``) are held to the same rules, so a
new extension starts in this style.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from triton_ext.testing import repo_root

REPO = repo_root()
ROOTS = ("passes", "backends", "dialects", "language", "tools", "triton_ext/dev/scaffold/templates")
FILES = sorted(p for root in ROOTS for p in (REPO / root).rglob("*.mlir") if "Inputs" not in p.parts)

#: A function definition (a declaration has no body and needs no label).
_FUNC = re.compile(r"^\s*(?:tt\.func|func\.func|llvm\.func)\s+(?:(?:public|private|nested)\s+)?"
                   r"@([\w$.@-]+)\s*\(.*\{\s*$", re.M)
_LABEL = re.compile(r"^\s*//\s*[\w-]+-LABEL:(.*)$", re.M)
_RUN = re.compile(r"^\s*//\s*RUN:(.*)$", re.M)
_SEPARATOR = re.compile(r"^// -----\s*$", re.M)
#: A file whose functions are one case (a module-level result over all of them, such as the
#: sanitizers' site table) says so, with the reason, and is not split.
_ONE_CASE = re.compile(r"^// One case: \S", re.M)


def _runs(text: str) -> list[str]:
    """RUN commands, with lines continued by a trailing backslash joined."""
    joined, out = "", []
    for body in _RUN.findall(text):
        joined += body.rstrip()
        if joined.endswith("\\"):
            joined = joined[:-1]
            continue
        out.append(joined.strip())
        joined = ""
    return out


def problems_of(text: str) -> list[str]:
    """What ``text`` (a lit .mlir file) does against the style; empty when it follows it."""
    problems: list[str] = []
    functions = _FUNC.findall(text)
    labels = " ".join(_LABEL.findall(text))
    checked = any("FileCheck" in r for r in _runs(text))  # -verify-diagnostics files print nothing
    for name in functions if checked else ():
        if not re.search(rf"@{re.escape(name)}(?![\w$.-])", labels):
            problems.append(f"function @{name} has no CHECK-LABEL")
    opt_runs = [r for r in _runs(text) if re.search(r"%opt\s+(?:\S+\s+)*%s\b", r)]
    splits = [r for r in opt_runs if "-split-input-file" in r]
    separators = len(_SEPARATOR.findall(text))
    if len(functions) > 1 and not _ONE_CASE.search(text):
        if not opt_runs or len(splits) != len(opt_runs):
            problems.append(f"{len(functions)} functions but {len(opt_runs) - len(splits)} of "
                            f"{len(opt_runs)} '%opt %s' RUN lines lack -split-input-file")
        if not separators:
            problems.append(f"{len(functions)} functions and no '// -----' separator")
    if separators and not splits:
        problems.append("'// -----' separators but no RUN line with -split-input-file "
                        "(they do nothing)")
    if re.search(r"%S/Inputs/", text):
        problems.append("reads Inputs/ files: put each case in a '// -----' chunk of a "
                        "-invalid.mlir file run with -verify-diagnostics")
    return problems


def test_there_are_lit_files() -> None:
    assert len(FILES) > 20


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_lit_file_style(path: Path) -> None:
    problems = problems_of(path.read_text(encoding="utf-8"))
    assert not problems, f"{path.relative_to(REPO)}: " + "; ".join(problems)


def test_no_inputs_folders() -> None:
    found = sorted(str(p.relative_to(REPO)) for root in ROOTS for p in (REPO / root).rglob("Inputs")
                   if p.is_dir())
    assert not found, f"diagnostics belong in -invalid.mlir files with -verify-diagnostics: {found}"


# The lint itself, on small files: each rule fires, and a file in style passes.

_GOOD = """// RUN: %opt %s -split-input-file --pass cse | FileCheck %s
// CHECK-LABEL: tt.func @a
tt.func @a() {
  tt.return
}

// -----

// CHECK-LABEL: tt.func public @b
tt.func public @b(%x: i32) {
  tt.return
}
"""


def test_lint_accepts_a_file_in_style() -> None:
    assert problems_of(_GOOD) == []


def test_lint_rejects_two_functions_without_split() -> None:
    text = _GOOD.replace(" -split-input-file", "")
    assert any("lack -split-input-file" in p for p in problems_of(text))
    assert any("do nothing" in p for p in problems_of(text))
    assert any("no '// -----'" in p for p in problems_of(text.replace("// -----\n", "")))


def test_lint_rejects_a_function_without_label() -> None:
    text = _GOOD.replace("// CHECK-LABEL: tt.func public @b\n", "// CHECK: tt.func public @b\n")
    assert problems_of(text) == ["function @b has no CHECK-LABEL"]


def test_lint_one_case_files_and_verify_diagnostics_files() -> None:
    unsplit = _GOOD.replace(" -split-input-file", "").replace("// -----\n", "")
    assert problems_of("// One case: one site table over both kernels.\n" + unsplit) == []
    invalid = ("// RUN: %opt %s -split-input-file -verify-diagnostics --pass cse\n"
               "tt.func @a() {\n  tt.return\n}\n\n// -----\n\ntt.func @b() {\n  tt.return\n}\n")
    assert problems_of(invalid) == []


def test_lint_rejects_inputs_files() -> None:
    text = "// RUN: not %opt %S/Inputs/bad.mlir --pass cse 2>&1 | FileCheck %s\n"
    assert any("Inputs/" in p for p in problems_of(text))
