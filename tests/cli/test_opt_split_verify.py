"""``triton-ext opt -split-input-file`` and ``-verify-diagnostics`` (issue 30), through the real
command (libtriton parses and runs the chunks; diagnostics come from MLIR's own handlers), and
the expectation syntax on its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.cli_support import cli
from triton_ext.dev import opt_diagnostics as od

GOOD = """tt.func @f(%x: i32) -> i32 {
  %0 = arith.addi %x, %x : i32
  tt.return %0 : i32
}
"""
BAD = """tt.func @g(%x: i32) -> i32 {
  %0 = arith.addi %x, %x : i64
  tt.return %0 : i32
}
"""
FOLD = """tt.func @h(%x: i32) -> i32 {
  %c = arith.constant 0 : i32
  %0 = arith.addi %x, %c : i32
  tt.return %0 : i32
}
"""
SEP = "\n// -----\n\n"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "case.mlir"
    path.write_text(text)
    return path


def test_split_runs_each_chunk_and_joins_the_outputs(tmp_path: Path) -> None:
    path = _write(tmp_path, GOOD + SEP + FOLD)
    res = cli("opt", str(path), "-split-input-file", "--pass", "canonicalize", "--no-debug-info")
    assert res.returncode == 0, res.stderr
    first, second = res.stdout.split("// -----")
    assert "@f" in first and "@h" not in first
    assert "@h" in second and "arith.addi" not in second  # canonicalize ran on the chunk
    # Without the flag the separator is an ordinary comment: one module with both functions.
    whole = cli("opt", str(path), "--pass", "canonicalize", "--no-debug-info")
    assert whole.returncode == 0 and "// -----" not in whole.stdout
    assert whole.stdout.count("module {") == 1


def test_split_keeps_line_numbers_and_the_path(tmp_path: Path) -> None:
    path = _write(tmp_path, GOOD + SEP + BAD + SEP + FOLD)
    res = cli("opt", str(path), "-split-input-file", "--pass", "cse")
    assert res.returncode == 1
    bad_line = (GOOD + SEP).count("\n") + 2  # the arith.addi of @g, in the original file
    assert f'"{path}":{bad_line}:19' in res.stderr, res.stderr
    assert "triton-ext-opt-" not in res.stderr + res.stdout  # no temporary path leaks
    assert f'loc("{path}":' in res.stdout and "@f" in res.stdout and "@h" in res.stdout
    assert "@g" not in res.stdout  # the failing chunk prints nothing; the others still do


def test_verify_diagnostics_accepts_the_expected_error(tmp_path: Path) -> None:
    expected = BAD.replace("  %0 = arith.addi %x, %x : i64\n",
                           "  // expected-error @below {{expects different type than prior uses: 'i64' vs 'i32'}}\n"
                           "  %0 = arith.addi %x, %x : i64\n")
    path = _write(tmp_path, GOOD + SEP + expected)
    res = cli("opt", str(path), "-split-input-file", "-verify-diagnostics", "--pass", "cse")
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""


def test_verify_diagnostics_reports_unexpected_and_missing(tmp_path: Path) -> None:
    text = (GOOD.replace("  tt.return", "  // expected-error @+1 {{never emitted}}\n  tt.return") + SEP + BAD)
    path = _write(tmp_path, text)
    res = cli("opt", str(path), "-split-input-file", "-verify-diagnostics", "--pass", "cse")
    assert res.returncode == 1
    assert f"{path}:3:6: error: expected error \"never emitted\" was not produced" in res.stderr, res.stderr
    assert "error: unexpected error: use of value '%x' expects different type" in res.stderr


@pytest.mark.parametrize("designator,offset", [("", 0), ("@+2", 2), ("@-1", -1), ("@above", -1),
                                               ("@below", 1)])
def test_expectation_lines(designator: str, offset: int) -> None:
    lines = ["a", "b", f"// expected-warning{designator} {{{{careful}}}}", "// expected-note {{x}}", "c"]
    if designator == "@below":  # the next line without an expectation: skips the note's line
        offset = 2
    chunk = od.Chunk("\n".join(lines) + "\n", first_line=10)
    (warning, note) = od.parse_expectations(chunk)
    assert warning.severity == "warning" and warning.text == "careful"
    assert warning.line == 12 + offset and warning.at_line == 12
    assert note.line == 13


def test_regex_expectations_and_unknown_locations() -> None:
    chunk = od.Chunk("// expected-error-re @unknown {{op {{[a-z]+}} failed}}\n", first_line=1)
    (e,) = od.parse_expectations(chunk)
    assert e.line is None
    assert od.verify([e], [od.Diagnostic("error", "op foo failed", None)]) == []
    (e,) = od.parse_expectations(chunk)
    problems = od.verify([e], [od.Diagnostic("error", "op 42 failed", None)])
    assert [p.message for p in problems] == ["unexpected error: op 42 failed",
                                             'expected error "op {{[a-z]+}} failed" was not produced']


def test_parse_diagnostics_reads_both_mlir_formats() -> None:
    stderr = "\n".join([
        'loc("/tmp/x/case.mlir":7:19): error: parse failed here',
        "/tmp/x/case.mlir:9:3: warning: a pass warning",
        "  %0 = arith.addi %x, %x : i64   // CHECK: error: not a diagnostic",
        "  ^",
        "/other/file.mlir:1:1: remark: elsewhere",
        "/tmp/x/case.mlir:4:1: error: Failures have been detected while processing an MLIR pass pipeline",
    ])
    assert od.parse_diagnostics(stderr, "/somewhere/case.mlir") == [
        od.Diagnostic("error", "parse failed here", 7, 19),
        od.Diagnostic("warning", "a pass warning", 9, 3),
        od.Diagnostic("remark", "elsewhere", None),
    ]
