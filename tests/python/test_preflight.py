"""Preflight turns every kind of broken library into an exception; the process survives."""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from tests.python.conftest import TRITON_PLUGIN
from triton_ext import _loader, _preflight
from triton_ext._errors import LoadError, PreflightError
from triton_ext._preflight import preflight

# A C stand-in for PluginUtils.h (API version 2). Each case tweaks it with -D flags.
PLUGIN_C = textwrap.dedent(
    """\
    #include <stddef.h>
    #include <stdint.h>
    #include <stdlib.h>
    typedef struct { const char *name, *version; void *addPass, *registerPass; } PassInfo;
    typedef struct {
      uint32_t apiVersion; const char *pluginName, *pluginVersion;
      PassInfo *passes; size_t numPasses; void *dialects; size_t numDialects;
      void *ops; size_t numOps; const char *tritonVersion;
    } PluginInfo;
    #ifndef API
    #define API 2
    #endif
    #ifndef TRITON
    #define TRITON "3.9.0"
    #endif
    #ifndef PASS
    #define PASS "c_fixture"
    #endif
    static void add_pass(void *pm, void *args) { (void)pm; (void)args; }
    static void register_pass(void) {}
    static PassInfo passes[] = {{PASS, "0.1", (void *)add_pass, (void *)register_pass}};
    #ifdef ABORT_IN_CONSTRUCTOR
    __attribute__((constructor)) static void boom(void) { abort(); }
    #endif
    #ifndef NO_ENTRY
    __attribute__((visibility("default"))) PluginInfo *tritonGetPluginInfo(void) {
    #ifdef SEGV_IN_ENTRY
      *(volatile int *)0 = 1;
    #endif
    #ifdef NULL_PASSES
      static PluginInfo info = {API, "broken", "0.1", NULL, 3, NULL, 0, NULL, 0, TRITON};
    #else
      static PluginInfo info = {API, "fixture", "0.1", passes, 1, NULL, 0, NULL, 0, TRITON};
    #endif
      return &info;
    }
    #else
    int not_an_entry_point(void) { return 0; }
    #endif
    """
)


@pytest.fixture(scope="module")
def make_plugin(cc: str, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("c-plugins")
    source = root / "plugin.c"
    source.write_text(PLUGIN_C)

    def build(name: str, *defines: str) -> Path:
        out = root / f"lib{name}.so"
        if not out.exists():
            subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(out), str(source), *(f"-D{d}" for d in defines)], check=True)
        return out

    return build


def test_triton_test_plugin_passes_and_is_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRITON_EXT_CACHE_DIR", str(tmp_path))
    first = preflight(TRITON_PLUGIN)
    assert first.passes == ("plugin",) and first.api_version == 2 and first.triton_version == "3.9.0"
    assert not first.cached and len(list(tmp_path.glob("*.json"))) == 1

    def no_child(*args: object, **kwargs: object) -> None:
        raise AssertionError("a cached verdict must not start a child process")

    monkeypatch.setattr(_preflight.subprocess, "run", no_child)
    second = preflight(TRITON_PLUGIN)
    assert second.cached and second.sha256 == first.sha256


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PreflightError, match="library not found.*triton-ext build loop_split") as info:
        preflight(tmp_path / "libNope.so", "loop_split")
    assert info.value.extension == "loop_split" and info.value.path == tmp_path / "libNope.so"


def test_directory_and_unreadable(tmp_path: Path) -> None:
    with pytest.raises(PreflightError, match="expected a shared library file"):
        preflight(tmp_path)


def test_text_file_is_not_a_shared_library(tmp_path: Path) -> None:
    text = tmp_path / "libText.so"
    text.write_text("not a library\n")
    with pytest.raises(PreflightError, match="not a shared library: expected ELF magic 7f 45 4c 46, found 6e 6f 74 20"):
        preflight(text)


def test_empty_file(tmp_path: Path) -> None:
    empty = tmp_path / "libEmpty.so"
    empty.write_bytes(b"")
    with pytest.raises(PreflightError, match="found an empty file"):
        preflight(empty)


def test_truncated_copy_fails_in_the_child(tmp_path: Path) -> None:
    truncated = tmp_path / "libTruncated.so"
    truncated.write_bytes(TRITON_PLUGIN.read_bytes()[:4096])
    # dlopen either refuses it or dies of SIGBUS touching the missing pages.
    with pytest.raises(PreflightError, match="cannot load the library|killed the checking process with SIGBUS") as info:
        preflight(truncated, "truncated")
    assert "triton-ext build truncated" in str(info.value)


def test_no_entry_point(make_plugin) -> None:
    with pytest.raises(PreflightError, match="no entry point tritonGetPluginInfo"):
        preflight(make_plugin("NoEntry", "NO_ENTRY"))


def test_wrong_api_version(make_plugin) -> None:
    with pytest.raises(PreflightError, match="wrong plugin API version: expected 2, found 1.*rebuild"):
        preflight(make_plugin("Api1", "API=1"), "old_thing")


def test_wrong_triton_version(make_plugin) -> None:
    with pytest.raises(PreflightError, match=r"built for Triton 3\.8\.0, 3\.9\.0 installed; rebuild with `triton-ext build loop_split`"):
        preflight(make_plugin("Triton38", 'TRITON="3.8.0"'), "loop_split")


def test_null_pass_table_with_count(make_plugin) -> None:
    with pytest.raises(PreflightError, match="pass table is NULL but numPasses is 3"):
        preflight(make_plugin("NullPasses", "NULL_PASSES"))


def test_abort_in_static_initializer(make_plugin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRITON_EXT_CACHE_DIR", str(tmp_path))
    with pytest.raises(PreflightError, match="killed the checking process with SIGABRT") as info:
        preflight(make_plugin("Abort", "ABORT_IN_CONSTRUCTOR"))
    assert "SIGABRT" in str(info.value)
    assert not list(tmp_path.glob("*.json"))  # a crash may be environmental: not cached


def test_deterministic_failures_are_cached(make_plugin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRITON_EXT_CACHE_DIR", str(tmp_path))
    library = make_plugin("Api1", "API=1")
    with pytest.raises(PreflightError):
        preflight(library)
    monkeypatch.setattr(_preflight.subprocess, "run", lambda *a, **k: pytest.fail("child started again"))
    with pytest.raises(PreflightError, match="wrong plugin API version"):
        preflight(library)


def test_segfault_in_entry_point(make_plugin) -> None:
    with pytest.raises(PreflightError, match="SIGSEGV"):
        preflight(make_plugin("Segv", "SEGV_IN_ENTRY"))


def test_a_sound_c_plugin_passes(make_plugin) -> None:
    report = preflight(make_plugin("Sound", 'PASS="c_fixture_sound"'))
    assert report.passes == ("c_fixture_sound",) and report.plugin_name == "fixture"


def test_loading_the_same_path_twice_is_a_no_op(build_dir: Path) -> None:
    path = build_dir / "plugins" / TRITON_PLUGIN.name
    first = _loader.load(path)
    assert _loader.load(path) is first
    from triton._C.libtriton import passes

    assert hasattr(passes.plugin, "add_plugin")


def test_same_bytes_from_another_path_is_an_error(build_dir: Path, tmp_path: Path) -> None:
    _loader.load(build_dir / "plugins" / TRITON_PLUGIN.name)
    copy = tmp_path / TRITON_PLUGIN.name
    shutil.copy2(TRITON_PLUGIN, copy)
    with pytest.raises(LoadError, match="the same library is already loaded from"):
        _loader.load(copy)


def test_duplicate_pass_name_across_libraries(build_dir: Path, make_plugin) -> None:
    _loader.load(build_dir / "plugins" / TRITON_PLUGIN.name)
    impostor = make_plugin("Impostor", 'PASS="plugin"')
    with pytest.raises(LoadError, match="pass 'plugin' is already provided by"):
        _loader.load(impostor)
