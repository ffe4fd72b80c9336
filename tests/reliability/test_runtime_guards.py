"""Run-time guards of the loading side (preflight, loader, registry, extension packages) whose
failure path no other test executed.

Each test reaches its guard the way a user or a contributor does: a real fixture plugin from
tests/fixtures checked or loaded with the stock Triton, a real registry.yaml, a real installed
distribution's entry point (a ``.dist-info`` folder on ``sys.path``). Nothing of Triton is mocked.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import triton_ext
from tests.reliability.fixture_plugins import FIXTURE_A, REPO, Entry, fixture_library, standard_tree
from triton_ext import PreflightError
from triton_ext._errors import ManifestError, TritonExtError
from triton_ext._manifest import load_manifest
from triton_ext._model import ENTRY_POINT_GROUP


# Guard: _preflight._run_probe's TimeoutExpired branch. A plugin that hangs in a static initializer
# must cost the user a PreflightError after TRITON_EXT_PROBE_TIMEOUT, not a hung process.
def test_a_preflight_child_past_its_timeout_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    library = fixture_library("FixtureA")
    monkeypatch.setenv("TRITON_EXT_CACHE_DIR", str(tmp_path / "cache"))  # no cached verdict answers
    monkeypatch.setenv("TRITON_EXT_PROBE_TIMEOUT", "0.01")  # no child Python starts in 10 ms
    with pytest.raises(PreflightError) as caught:
        triton_ext.check_library(library, "fixture_a")
    message = str(caught.value)
    assert "did not finish within 0.01 s" in message, message
    assert library.name in message and caught.value.extension == "fixture_a", message
    assert not list((tmp_path / "cache").glob("*.json")), "a timed-out verdict must not be cached"


# Guard: _preflight._write_cache's OSError branch. Caching verdicts is an optimisation: a cache
# folder that cannot be written (read-only home, a file in its place) must not stop a good plugin.
def test_an_unwritable_verdict_cache_does_not_refuse_a_good_plugin(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be\n")
    monkeypatch.setenv("TRITON_EXT_CACHE_DIR", str(blocker / "preflight"))
    report = triton_ext.check_library(fixture_library("FixtureA"), "fixture_a")
    assert "fixture_tag_module" in report.passes
    assert blocker.read_text().startswith("a file"), "the cache write must leave the file alone"


_OUTSIDE_THEN_TRITON_EXT = textwrap.dedent("""
    import sys
    from triton._C.libtriton import passes
    import triton_ext
    from triton_ext import LoadError

    passes.plugin.extend_with(sys.argv[1])  # loaded behind triton_ext's back
    try:
        triton_ext.load(sys.argv[1])
    except LoadError as exc:
        print("REFUSED:", exc)
        sys.exit(0)
    print("LOADED")
    sys.exit(1)
""")


# Guard: _loader.load's "already bound by a library loaded outside triton_ext" refusal. Triton keeps
# the first add_<pass> binding silently, so a second registration would run the other library's pass.
# In a child process: a library handed to Triton stays loaded for the life of the process.
def test_a_pass_bound_outside_triton_ext_is_refused(tmp_path: Path) -> None:
    env = dict(os.environ, TRITON_EXT_CACHE_DIR=str(tmp_path / "cache"), TRITON_CACHE_DIR=str(tmp_path / "triton"),
               PYTHONPATH=str(REPO) + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else ""))
    env.pop("TRITON_EXT_ENABLE", None)
    library = fixture_library("FixtureA")
    proc = subprocess.run([sys.executable, "-c", _OUTSIDE_THEN_TRITON_EXT, str(library)], capture_output=True,
                          text=True, timeout=120, env=env, cwd=tmp_path)
    assert proc.returncode == 0, f"status {proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr[-3000:]}"
    assert "passes.plugin.add_fixture_tag_module is already bound by a library loaded outside triton_ext" in proc.stdout
    assert "load plugins through triton_ext only" in proc.stdout


@pytest.mark.parametrize("target, found", [
    ("triton_ext_no_such_fragment_module:registry", "No module named 'triton_ext_no_such_fragment_module'"),
    ("os:sep", "not enough values to unpack"),  # a string, neither a mapping nor a pair
])
# Guard: _manifest._entry_point_fragments' except. An installed package with a broken
# triton_ext.extensions entry point must be named (which package to fix or uninstall), not surface as
# a bare ImportError/ValueError from the middle of every `import triton_ext` user's first enable.
def test_a_broken_entry_point_names_its_package(target: str, found: str, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    dist = tmp_path / "site" / "triton_ext_broken_fragment-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: triton-ext-broken-fragment\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\nbroken_fragment = {target}\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    registry = tmp_path / "registry.yaml"
    registry.write_text("schema: 1\nextensions:\n" + FIXTURE_A.yaml())
    with pytest.raises(ManifestError) as caught:
        load_manifest(registry, entry_points=True)
    message = str(caught.value)
    assert f"entry point broken_fragment = {target} (group {ENTRY_POINT_GROUP})" in message, message
    assert found in message and "fix or uninstall the package that provides it" in message, message


class _PackagedEntry(Entry):
    """A fixture entry that also declares the extension's Python package (and its on_enable)."""

    def __init__(self, base: Entry, package: str, on_enable: str | None) -> None:
        super().__init__(base.extension, base.library, dict(base.passes), base.stage, base.auto)
        self.package, self.on_enable = package, on_enable

    def yaml(self) -> str:
        lines = super().yaml().splitlines()
        extra = [f"    package: {self.package}"] + ([f"    on_enable: {self.on_enable}"] if self.on_enable else [])
        return "\n".join(lines[:1] + extra + lines[1:]) + "\n"


# Guard: _extensions.import_package's "neither in <folder> nor installed" refusal. A registry that
# names a package the checkout lacks and no wheel installed must say so and how to fix it.
def test_a_missing_extension_package_says_where_it_looked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entry = _PackagedEntry(FIXTURE_A, "triton_ext_no_such_fixture_package", None)
    standard_tree(tmp_path, monkeypatch, [entry])
    with pytest.raises(TritonExtError) as caught:
        triton_ext.import_extension("fixture_a")
    message = str(caught.value)
    assert "its package triton_ext_no_such_fixture_package is neither in" in message, message
    assert str(tmp_path / "tests" / "fixtures") in message and "install the extension's wheel" in message, message
    assert caught.value.extension == "fixture_a"


# Guard: _extensions._entry's "on_enable ... is not a function" refusal. A registry whose on_enable
# names a non-callable must tell the contributor what to fix at enable(), not fail with
# "'int' object is not callable"; the user's process keeps compiling without the pass.
def test_an_on_enable_that_is_not_a_function_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = "triton_ext_fixture_not_callable"
    folder = tmp_path / "tests" / "fixtures" / package
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("on_enable = 42  # a registry points here, but it is no function\n")
    monkeypatch.delitem(sys.modules, package, raising=False)
    entry = _PackagedEntry(FIXTURE_A, package, f"{package}:on_enable")
    standard_tree(tmp_path, monkeypatch, [entry])
    try:
        with pytest.raises(TritonExtError) as caught:
            triton_ext.enable("fixture_tag_module")
    finally:
        sys.modules.pop(package, None)
    message = str(caught.value)
    assert f"on_enable {package}:on_enable is not a function of {package}" in message, message
    assert "fix the registry or the package" in message and caught.value.extension == "fixture_a", message
    assert triton_ext.enabled_passes() == {}, "a refused extension's pass must not stay enabled"


def _run_child(script: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A library handed to Triton stays loaded for the life of the process: load in a child."""
    env = dict(os.environ, TRITON_EXT_CACHE_DIR=str(tmp_path / "cache"), TRITON_CACHE_DIR=str(tmp_path / "triton"),
               PYTHONPATH=str(REPO) + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else ""))
    env.pop("TRITON_EXT_ENABLE", None)
    return subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=180,
                          env=env, cwd=tmp_path)


_TWO_LIBRARIES_ONE_DIALECT = textwrap.dedent("""
    import sys
    import triton_ext
    from triton_ext import LoadError, _loader

    assert triton_ext.check_library(sys.argv[2]).dialects == ("triton_ext_range",)  # alone it passes preflight
    assert "triton_ext_range" in triton_ext.load(sys.argv[1]).dialects
    try:
        triton_ext.load(sys.argv[2])
    except LoadError as exc:
        print("REFUSED:", exc)
        print("LOADED NOW:", sorted(lib.path.name for lib in _loader.loaded()))
        sys.exit(0)
    print("LOADED")
    sys.exit(1)
""")


# Guard: _loader.load's "dialect ... is already registered by" refusal. Two libraries registering one
# dialect make MLIR abort the process on the second; the loader must refuse the second library first
# and keep the first. The fixture DialectTwin declares dialects/RangeFactsIR's dialect name.
def test_a_second_library_of_one_dialect_is_refused(tmp_path: Path) -> None:
    from triton_ext._settings import settings

    range_facts = Path(settings.build_dir) / "plugins" / "libTritonExtRangeFactsIR.so"
    assert range_facts.is_file(), f"{range_facts} is not built: run the build first"
    proc = _run_child(_TWO_LIBRARIES_ONE_DIALECT, tmp_path, str(range_facts), str(fixture_library("DialectTwin")))
    assert proc.returncode == 0, f"status {proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr[-3000:]}"
    assert "dialect 'triton_ext_range' is already registered by" in proc.stdout, proc.stdout
    assert str(range_facts.resolve()) in proc.stdout and "Load only one" in proc.stdout, proc.stdout
    assert "LOADED NOW: ['libTritonExtRangeFactsIR.so']" in proc.stdout, proc.stdout


_REFUSED_AFTER_PREFLIGHT = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    import triton_ext
    from triton_ext import LoadError, _loader, _preflight

    # A verdict saying "ok" for bytes Triton refuses: what a library whose entry point answers
    # the checking child differently from the user's process (or a hand-edited cache) amounts to.
    path = Path(sys.argv[1]).resolve()
    installed = _preflight.installed_triton_version()
    cache = _preflight._cache_path(_preflight.sha256_file(path), installed, _preflight.environment_key(path))
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"ok": True, "error": None, "stage": "done", "plugin_name": "RawFixture",
                                 "plugin_version": "1", "triton_version": installed,
                                 "api_version": _preflight.API_VERSION, "passes": ["fixture_raw"],
                                 "dialects": [], "ops": [], "descriptions": None}))
    try:
        triton_ext.load(path)
    except LoadError as exc:
        print("REFUSED:", exc)
        print("LOADED NOW:", len(_loader.loaded()))
        sys.exit(0)
    print("LOADED")
    sys.exit(1)
""")


# Guard: _loader.load's "Triton refused the library" branch. Preflight runs the library in a child;
# should Triton's own extend_with still refuse it in the user's process, the user gets a LoadError
# naming the library and Triton's reason, the process goes on, and nothing is recorded as loaded.
def test_triton_refusing_a_library_that_passed_preflight_is_a_load_error(tmp_path: Path) -> None:
    proc = _run_child(_REFUSED_AFTER_PREFLIGHT, tmp_path, str(fixture_library("BadApiVersion")))
    assert proc.returncode == 0, f"status {proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr[-3000:]}"
    assert "Triton refused the library: Wrong API version on plugin" in proc.stdout, proc.stdout
    assert "libTritonExtBadApiVersion.so" in proc.stdout and "LOADED NOW: 0" in proc.stdout, proc.stdout
