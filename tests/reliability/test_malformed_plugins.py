"""Malformed plugins: each is refused with an error that names the library and extension,
and the user's process survives (a real kernel compiles afterwards).

Broken libraries come from tests/fixtures (wrong API version, wrong Triton version, NULL
pass table, abort in a static initializer, no entry point) plus files made here (the good
FixtureA truncated at several lengths, garbage, an empty file). They are reached the way a
user reaches them: a registry entry, then ``triton_ext.enable(pass)``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.reliability import reliability_summary as summary
import triton
import triton_ext
from tests.corpus.corpus_kernels import BY_NAME
from tests.reliability.fixture_plugins import BROKEN, DUPLICATE, FIXTURE_A, Entry, fixture_library, standard_tree, use_tree, write_tree
from triton.backends.compiler import GPUTarget
from triton_ext import LoadError, PreflightError

SECTION = "malformed_plugins"
TARGET = GPUTarget("cuda", 90, 32)

# What each defect's message must say besides the library and the extension.
EXPECTED = {
    "BadApiVersion": "api",
    "WrongTritonVersion": "3.8.0",
    "NullPassTable": "pass table is NULL",
    "CrashOnLoad": "SIGABRT",
    "ExitOnLoad": "the checking process exited with status 3",
    "NoEntryPoint": "tritonGetPluginInfo",
}


def _still_compiles() -> None:
    kernel = BY_NAME["vector_add"]
    compiled = triton.compile(kernel.source(), target=TARGET, options=kernel.options())
    assert compiled.asm["cubin"]


def _expect_refusal(check: str, library: Path, extension: str, pass_name: str, needle: str) -> None:
    """enable() must raise PreflightError naming library and extension; the process goes on."""
    try:
        with pytest.raises(PreflightError) as caught:
            triton_ext.enable(pass_name)
        message = str(caught.value)
        assert library.name in message, f"library not named: {message}"
        assert extension in message and caught.value.extension == extension, f"extension not named: {message}"
        assert needle and needle.lower() in message.lower(), f"expected {needle!r} in: {message}"
        assert f"triton-ext build {extension}" in message, f"no fix named: {message}"
        assert triton_ext.enabled_passes() == {}, "a refused pass must not stay enabled"
        _still_compiles()
    except BaseException as exc:
        summary.record(SECTION, check, False, f"{library.name}: {type(exc).__name__}: {exc}")
        raise
    summary.record(SECTION, check, True)


@pytest.mark.parametrize("defect", BROKEN)
def test_broken_fixture_is_refused(defect: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    library = f"TritonExt{defect}"
    entry = Entry(f"broken_{defect.lower()}", library, {"fixture_raw": ""})
    standard_tree(tmp_path, monkeypatch, [entry])
    _expect_refusal(f"fixture plugin: {defect}", tmp_path / "build" / "plugins" / f"lib{library}.so",
                    entry.extension, "fixture_raw", EXPECTED[defect])


def _truncated(source: Path, size: int | str, tmp_path: Path) -> Path:
    data = source.read_bytes()
    cut = {"half": len(data) // 2, "last-page": len(data) - 4096}.get(size, size) if isinstance(size, str) else size
    out = tmp_path / "libTritonExtBroken.so"
    out.write_bytes(data[:cut])
    return out


#: What each truncation is refused for: the in-process ELF checks name the header they read; a
#: library cut after its header fails in the preflight child (a loader error or a signal).
TRUNCATED = {0: "found an empty file", 4: "expected ELF type ET_DYN", 17: "expected ELF type ET_DYN",
             64: "preflight failed", 4096: "preflight failed", "half": "preflight failed",
             "last-page": "preflight failed"}


@pytest.mark.parametrize("size", list(TRUNCATED))
def test_truncated_library_is_refused(size: int | str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prepared = _truncated(fixture_library("FixtureA"), size, tmp_path)
    entry = Entry("broken_truncated", "TritonExtBroken", {"fixture_raw": ""})
    registry, build = write_tree(tmp_path, [entry], {"TritonExtBroken": prepared})
    use_tree(monkeypatch, registry, build)
    _expect_refusal(f"truncated .so ({size})", build / "plugins" / "libTritonExtBroken.so", entry.extension,
                    "fixture_raw", TRUNCATED[size])


@pytest.mark.parametrize("content,reason", [(b"not a library\n", "expected ELF magic"),
                                            (b"\x7fELF" + b"\0" * 60, "expected ELF type ET_DYN"),
                                            (b"#!/bin/sh\nexit 0\n", "expected ELF magic")])
def test_garbage_library_is_refused(content: bytes, reason: str, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    prepared = tmp_path / "garbage.so"
    prepared.write_bytes(content)
    entry = Entry("broken_garbage", "TritonExtGarbage", {"fixture_raw": ""})
    registry, build = write_tree(tmp_path, [entry], {"TritonExtGarbage": prepared})
    use_tree(monkeypatch, registry, build)
    _expect_refusal("garbage or non-library file", build / "plugins" / "libTritonExtGarbage.so", entry.extension,
                    "fixture_raw", reason)


def test_missing_library_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entry = Entry("broken_missing", "TritonExtNeverBuilt", {"fixture_raw": ""})
    registry, build = write_tree(tmp_path, [entry], {})
    use_tree(monkeypatch, registry, build)
    _expect_refusal("library not built", build / "plugins" / "libTritonExtNeverBuilt.so", entry.extension,
                    "fixture_raw", "not found")


def test_library_without_the_declared_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The registry names a pass the (good) library does not provide.
    entry = Entry("fixture_a_misdeclared", "TritonExtFixtureA", {"fixture_not_there": ""})
    standard_tree(tmp_path, monkeypatch, [entry])
    check = "registry declares a pass the library lacks"
    try:
        with pytest.raises(LoadError) as caught:
            triton_ext.enable("fixture_not_there")
        message = str(caught.value)
        assert "fixture_not_there" in message and "libTritonExtFixtureA.so" in message and entry.extension in message
        assert "fixture_tag_module" in message, message  # says what the library does provide
        _still_compiles()
    except BaseException as exc:
        summary.record(SECTION, check, False, f"{type(exc).__name__}: {exc}")
        raise
    summary.record(SECTION, check, True)


def test_duplicate_pass_name_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # FixtureA first (it provides fixture_tag_module), then DuplicateName, which provides it again.
    standard_tree(tmp_path / "a", monkeypatch, [FIXTURE_A])
    triton_ext.enable("fixture_tag_module")
    triton_ext.disable()
    standard_tree(tmp_path / "dup", monkeypatch, [DUPLICATE])
    check = "duplicate pass name across plugins"
    try:
        with pytest.raises(LoadError) as caught:
            triton_ext.enable("fixture_tag_module")
        message = str(caught.value)
        assert "fixture_tag_module" in message and "libTritonExtDuplicateName.so" in message, message
        assert "libTritonExtFixtureA.so" in message, f"the first provider is not named: {message}"
        _still_compiles()
    except BaseException as exc:
        summary.record(SECTION, check, False, f"{type(exc).__name__}: {exc}")
        raise
    summary.record(SECTION, check, True)


def test_copy_of_a_loaded_library_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The same bytes under another path: Triton would stack duplicate bindings.
    standard_tree(tmp_path / "a", monkeypatch, [FIXTURE_A])
    triton_ext.enable("fixture_tag_module")
    triton_ext.disable()
    copy = tmp_path / "copy.so"
    shutil.copy2(fixture_library("FixtureA"), copy)
    entry = Entry("fixture_a_copy", "TritonExtCopy", {"fixture_tag_module": ""})
    registry, build = write_tree(tmp_path / "b", [entry], {})
    shutil.move(str(copy), build / "plugins" / "libTritonExtCopy.so")
    use_tree(monkeypatch, registry, build)
    check = "second copy of a loaded library"
    try:
        with pytest.raises(LoadError) as caught:
            triton_ext.enable("fixture_tag_module")
        assert "libTritonExtCopy.so" in str(caught.value) and "already loaded" in str(caught.value)
        _still_compiles()
    except BaseException as exc:
        summary.record(SECTION, check, False, f"{type(exc).__name__}: {exc}")
        raise
    summary.record(SECTION, check, True)
