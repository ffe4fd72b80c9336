"""MLIR's ``-split-input-file`` and ``-verify-diagnostics`` for ``triton-ext opt``.

``triton-ext opt`` runs inside libtriton (not ``mlir-opt``), whose Python bindings expose no
diagnostic callback: Triton prints diagnostics to stderr through MLIR's handlers (parse and
verifier errors as ``loc("file":L:C): error: ...``, pass diagnostics as ``file:L:C: error: ...``,
warnings and remarks only with ``MLIR_ENABLE_DIAGNOSTICS``). So this module

* splits the input at ``// -----`` lines into chunks; each chunk is written to a file of the
  same name in a temporary folder, padded with empty lines, so that every location keeps the
  line number it has in the original file (unlike mlir-opt, whose chunks restart at line 1);
* captures file descriptor 2 while a chunk is parsed and run, parses the diagnostics out of it
  (:func:`parse_diagnostics`) and prints them again with the original path;
* checks them, with ``-verify-diagnostics``, against the chunk's ``expected-error``,
  ``expected-warning``, ``expected-remark`` and ``expected-note`` comments, with MLIR's syntax:
  ``// expected-error {{substring}}`` (this line), ``@+N``/``@-N`` (N lines below/above),
  ``@above``/``@below`` (the nearest line above/below that holds no ``expected-`` comment),
  ``@unknown`` (a diagnostic without a file location), ``-re`` for ``{{regex}}`` parts inside
  the text, as FileCheck. Every diagnostic must be expected and every expectation met.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

__all__ = ["SPLIT_MARKER", "Chunk", "Diagnostic", "Expectation", "split_input", "parse_diagnostics",
           "parse_expectations", "verify", "capture_stderr", "chunk_file"]

#: The separator line of -split-input-file (as in MLIR).
SPLIT_MARKER = "// -----"
SEVERITIES = ("error", "warning", "remark", "note")


@dataclass(frozen=True)
class Chunk:
    text: str
    first_line: int  # 1-based line of the chunk's first line in the original file


@dataclass(frozen=True)
class Diagnostic:
    severity: str
    message: str
    line: int | None  # None: no location in the input file
    col: int | None = None

    def render(self, path: str) -> str:
        where = f"{path}:{self.line}:{self.col or 1}: " if self.line else ""
        return f"{where}{self.severity}: {self.message}"


@dataclass
class Expectation:
    severity: str
    text: str
    regex: re.Pattern[str] | None  # -re: the compiled pattern; else substring match
    line: int | None  # the line it is expected on (None: @unknown)
    at_line: int  # the line of the comment itself
    col: int
    matched: bool = field(default=False)

    def accepts(self, diag: Diagnostic) -> bool:
        if self.matched or diag.severity != self.severity or diag.line != self.line:
            return False
        if self.regex is not None:
            return self.regex.search(diag.message) is not None
        return self.text in diag.message


def split_input(text: str) -> list[Chunk]:
    """Splits at lines whose content is ``// -----`` (the marker line belongs to no chunk)."""
    chunks: list[Chunk] = []
    current: list[str] = []
    first = 1
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        if line.strip() == SPLIT_MARKER:
            chunks.append(Chunk("".join(current), first))
            current, first = [], number + 1
        else:
            current.append(line)
    chunks.append(Chunk("".join(current), first))
    return chunks


def chunk_file(chunk: Chunk, folder: Path, name: str) -> Path:
    """Writes ``chunk`` to ``folder/name`` so that its lines keep their original numbers."""
    path = folder / name
    path.write_text("\n" * (chunk.first_line - 1) + chunk.text, encoding="utf-8")
    return path


@contextlib.contextmanager
def capture_stderr() -> Iterator[list[str]]:
    """Captures what is written to file descriptor 2 (C++ included); the text is appended to the
    yielded list when the block ends."""
    sink: list[str] = []
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield sink
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            sink.append(tmp.read().decode("utf-8", errors="replace"))


#: What libtriton's pass manager adds when a pipeline fails (its crash reproducer, printed to
#: stderr): not the pass's diagnostics, so never expected or checked (mlir-opt has no such lines).
_PIPELINE_NOISE = ("Failures have been detected while processing an MLIR pass pipeline",
                   "Pipeline failed while executing")

_HEADER = re.compile(r"^(?P<loc>.*?)(?:: |^)(?P<sev>error|warning|remark|note): (?P<msg>.*)$")
_FILE_LOC = re.compile(r'"?(?P<file>[^"()\s]+?)"?:(?P<line>\d+):(?P<col>\d+)')


def parse_diagnostics(text: str, path: str) -> list[Diagnostic]:
    """The diagnostics in captured stderr. A location in another file than ``path`` (same name
    counts as the same file) is reported as no location. Lines that are not diagnostics (the
    source excerpt and caret MLIR prints under one, Python warnings) are skipped, and so is the
    failed-pipeline error and note of libtriton's crash reproducer."""
    name = Path(path).name
    out: list[Diagnostic] = []
    for raw in text.splitlines():
        m = _HEADER.match(raw)
        if not m:
            continue
        if m.group("msg").startswith(_PIPELINE_NOISE):
            continue
        loc = m.group("loc")
        where = _FILE_LOC.search(loc) if loc else None
        if loc and not where and loc not in ("loc(unknown)", "<unknown>"):
            continue  # "// CHECK: error: x" in a source excerpt, not a diagnostic
        if where and Path(where.group("file")).name == name:
            out.append(Diagnostic(m.group("sev"), m.group("msg"), int(where.group("line")),
                                  int(where.group("col"))))
        else:
            out.append(Diagnostic(m.group("sev"), m.group("msg"), None))
    return out


_EXPECTED = re.compile(r"expected-(?P<sev>error|warning|remark|note)(?P<re>-re)?"
                       r"(?:\s*@(?P<where>[+-]\d+|above|below|unknown))?\s*\{\{(?P<text>.*)\}\}")


def _regex_of(text: str) -> re.Pattern[str]:
    """FileCheck-style: literal text with ``{{regex}}`` parts."""
    parts, pos = [], 0
    for m in re.finditer(r"\{\{(.*?)\}\}", text):
        parts.append(re.escape(text[pos:m.start()]))
        parts.append(f"(?:{m.group(1)})")
        pos = m.end()
    parts.append(re.escape(text[pos:]))
    return re.compile("".join(parts))


def parse_expectations(chunk: Chunk) -> list[Expectation]:
    """The ``expected-*`` comments of one chunk, with original line numbers."""
    lines = chunk.text.splitlines()
    found: list[tuple[int, re.Match[str]]] = []
    for i, line in enumerate(lines):
        for m in _EXPECTED.finditer(line):
            found.append((i, m))
    designator = {i for i, _ in found}
    out: list[Expectation] = []
    for i, m in found:
        where = m.group("where")
        target: int | None
        if where is None:
            target = i
        elif where == "unknown":
            target = None
        elif where == "above":
            target = next((j for j in range(i - 1, -1, -1) if j not in designator), None)
            if target is None:
                raise ValueError(f"line {chunk.first_line + i}: expected-{m.group('sev')}@above "
                                 "with no line above it")
        elif where == "below":
            target = next((j for j in range(i + 1, len(lines)) if j not in designator), None)
            if target is None:
                raise ValueError(f"line {chunk.first_line + i}: expected-{m.group('sev')}@below "
                                 "with no line below it")
        else:
            target = i + int(where)
        text = m.group("text")
        out.append(Expectation(
            severity=m.group("sev"), text=text, regex=_regex_of(text) if m.group("re") else None,
            line=None if target is None else chunk.first_line + target,
            at_line=chunk.first_line + i, col=m.start() + 1))
    return out


def verify(expectations: list[Expectation], diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Matches diagnostics to expectations (each expectation once); returns the problems as
    error diagnostics in MLIR's words (``unexpected error: ...``, ``expected error "..." was not
    produced``)."""
    problems: list[Diagnostic] = []
    for diag in diagnostics:
        match = next((e for e in expectations if e.accepts(diag)), None)
        if match is None:
            problems.append(Diagnostic("error", f"unexpected {diag.severity}: {diag.message}",
                                       diag.line, diag.col))
        else:
            match.matched = True
    for e in expectations:
        if not e.matched:
            problems.append(Diagnostic("error", f'expected {e.severity} "{e.text}" was not produced',
                                       e.at_line, e.col))
    return problems
