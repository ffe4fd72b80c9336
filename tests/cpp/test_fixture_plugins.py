"""Real plugins built by our CMake rules, loaded into stock triton: isolation between plugins,
options, IR changes that come and go with enabling, and every kind of broken plugin.

The fixtures (tests/fixtures) are copied with libTritonExtPassInfra into a scratch plugins
folder described by a scratch registry, as an installed set of extensions would be.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from tests.cpp.cpp_support import BUILD, REPO, TEST_PLUGINS  # noqa: E402

import triton_ext
from triton_ext._database import describe_library
from triton_ext._errors import LoadError, PassFailedError, PreflightError, TritonExtWarning
from triton_ext._manifest import load_manifest
from triton_ext._preflight import preflight

GOOD = ("FixtureA", "FixtureB", "FailingPass", "InvalidIR", "DuplicateName", "WrongResult")
REGISTRY = """\
schema: 1
extensions:
  fixture_a:
    kind: pass
    directory: tests/fixtures
    library: TritonExtFixtureA
    status: experimental
    summary: Tags the module.
    targets: {cuda: {}}
    passes:
      fixture_tag_module: {stage: ttir, after: combine}
  fixture_b:
    kind: pass
    directory: tests/fixtures
    library: TritonExtFixtureB
    status: experimental
    summary: Tags every function with a value.
    targets: {cuda: {min_arch: 80}}
    passes:
      fixture_tag_functions:
        stage: ttgir
        options:
          value: {default: 7, type: int, help: Value stored on each function.}
  failing:
    kind: pass
    directory: tests/fixtures
    library: TritonExtFailingPass
    status: experimental
    summary: Always fails.
    targets: {cuda: {}}
    passes:
      fixture_always_fail: {stage: ttir}
  invalid_ir:
    kind: pass
    directory: tests/fixtures
    library: TritonExtInvalidIR
    status: experimental
    summary: Leaves IR the verifier rejects.
    targets: {cuda: {}}
    passes:
      fixture_break_ir: {stage: ttir}
  wrong_result:
    kind: pass
    directory: tests/fixtures
    library: TritonExtWrongResult
    status: experimental
    summary: Doubles every stored float (a wrong result the transparent mode must drop).
    targets: {cuda: {}}
    passes:
      fixture_double_stores: {stage: ttir}
"""


@pytest.fixture(scope="module")
def installed_fixtures(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One scratch install for the module: a loaded library stays loaded for the process."""
    # Links, not copies: the loader identifies a library by its resolved path, and other test
    # modules load the same fixtures from build/test-plugins in this process.
    root = tmp_path_factory.mktemp("fixture-install")
    plugins = root / "build" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "libTritonExtPassInfra.so").symlink_to(BUILD / "plugins" / "libTritonExtPassInfra.so")
    for bindings in (BUILD / "plugins").glob("_infra*.so"):
        (plugins / bindings.name).symlink_to(bindings)
    for name in GOOD:
        src = TEST_PLUGINS / f"libTritonExt{name}.so"
        if not src.exists():
            pytest.fail(f"{src} missing: run `triton-ext build` (fixtures are part of every build)")
        (plugins / src.name).symlink_to(src)
    (root / "registry.yaml").write_text(REGISTRY)
    return root


@pytest.fixture()
def fixture_registry(installed_fixtures: Path, tmp_path: Path,
                     monkeypatch: pytest.MonkeyPatch) -> Path:
    root = installed_fixtures
    monkeypatch.setenv("TRITON_EXT_REGISTRY", str(root / "registry.yaml"))
    monkeypatch.setenv("TRITON_EXT_BUILD_DIR", str(root / "build"))
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton-cache"))
    with triton_ext.settings.scope(registry=root / "registry.yaml", build_dir=root / "build"):
        yield root / "build" / "plugins"
    triton_ext.disable()


def compile_ttir(target_arch: int = 90, block: int = 64) -> tuple[str, str]:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from tests.cpp.tests_kernels import add_one  # noqa: PLC0415

    src = ASTSource(add_one, signature={"X": "*fp32", "N": "i32"}, constexprs={"BLOCK": block})
    compiled = triton.compile(src, target=GPUTarget("cuda", target_arch, 32))
    assert compiled.asm["cubin"]
    return compiled.asm["ttir"], compiled.asm["ttgir"]




def test_two_plugins_in_one_process_report_only_their_own(fixture_registry: Path) -> None:
    # Both plugins link the same libTritonExtPassInfra; each entry point must report only its
    # own registrations. Read both entry points in ONE child process.
    child = textwrap.dedent("""
        import ctypes, json, sys
        import triton._C.libtriton
        class PassInfo(ctypes.Structure):
            _fields_ = [("name", ctypes.c_char_p), ("version", ctypes.c_char_p),
                        ("addPass", ctypes.c_void_p), ("registerPass", ctypes.c_void_p)]
        class PluginInfo(ctypes.Structure):
            _fields_ = [("apiVersion", ctypes.c_uint32), ("pluginName", ctypes.c_char_p),
                        ("pluginVersion", ctypes.c_char_p), ("passes", ctypes.POINTER(PassInfo)),
                        ("numPasses", ctypes.c_size_t), ("dialects", ctypes.c_void_p),
                        ("numDialects", ctypes.c_size_t), ("ops", ctypes.c_void_p),
                        ("numOps", ctypes.c_size_t), ("tritonVersion", ctypes.c_char_p)]
        out = {}
        for path in sys.argv[1:]:
            lib = ctypes.CDLL(path)
            lib.tritonGetPluginInfo.restype = ctypes.POINTER(PluginInfo)
            info = lib.tritonGetPluginInfo().contents
            out[info.pluginName.decode()] = [info.passes[i].name.decode() for i in range(info.numPasses)]
        print(json.dumps(out))
    """)
    libs = [str(fixture_registry / f"libTritonExt{n}.so") for n in ("FixtureA", "FixtureB")]
    res = subprocess.run([sys.executable, "-c", child, *libs], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == {"TritonExtFixtureA": ["fixture_tag_module"],
                                      "TritonExtFixtureB": ["fixture_tag_functions"]}


def test_database_describes_passes_from_the_mlir_pass(fixture_registry: Path) -> None:
    (b,) = describe_library(fixture_registry / "libTritonExtFixtureB.so")
    assert (b.name, b.argument, b.anchor) == ("fixture_tag_functions",
                                              "triton-ext-test-tag-functions", "tt.func")
    assert b.summary.startswith("Set triton_ext.fixture_b")
    assert b.option_defaults == {"value": "7"}


def test_registry_options_match_the_compiled_passes() -> None:
    # The options read from Passes.td must be the ones compiled into each pass (defaults included);
    # every library with passes must be built (a missing one fails: it must not shrink the check
    # to nothing).
    checked = 0
    for ext in load_manifest(REPO / "registry.yaml", entry_points=False).extensions:
        lib = ext.library_path(BUILD)
        if not ext.passes:
            continue
        assert lib.exists(), f"{ext.name}: {lib} not built; run `triton-ext build {ext.name}`"
        compiled = {d.name: d.option_defaults for d in describe_library(lib)}
        for spec in ext.passes:
            assert spec.name in compiled, f"{ext.name}: {lib.name} has no pass {spec.name}"
            declared = {o.name: o.render(o.default).partition("=")[2] for o in spec.options}
            assert declared == compiled[spec.name], (ext.name, spec.name, declared, compiled)
            checked += 1
    expected = sum(len(e.passes) for e in load_manifest(REPO / "registry.yaml", entry_points=False).extensions)
    assert checked == expected > 0, f"{checked} of {expected} registry passes were compared with their plugins"


def test_enabling_changes_the_ir_and_disabling_restores_it(fixture_registry: Path) -> None:
    ttir, _ = compile_ttir()
    assert "triton_ext.fixture_a" not in ttir
    triton_ext.enable("fixture_tag_module")
    with triton_ext.record_pipelines() as plans:
        ttir_on, _ = compile_ttir()
    assert "triton_ext.fixture_a" in ttir_on
    order = plans[0].order
    # Declared `after: combine`: right after Triton's combine pass, before reorder-broadcast.
    i = order.index("plugin.fixture_tag_module")
    assert order[i - 1].endswith("combine") and order[i + 1].endswith("reorder_broadcast"), order
    triton_ext.disable("fixture_tag_module")
    ttir_off, _ = compile_ttir()
    assert ttir_off == ttir, "disabling did not bring back the original kernel"


def test_the_wrong_result_fixture_doubles_what_the_kernel_stores(fixture_registry: Path) -> None:
    # The pass the transparent mode's GPU check offers as a candidate (benchmarks/auto_safety_gpu.py,
    # wrong_pass): it must change the kernel, and the change must be a wrong result.
    import re

    stock, _ = compile_ttir()
    with triton_ext.enabled("fixture_double_stores"):
        ttir, _ = compile_ttir()
    stored = re.search(r"tt\.store %\S+, (%\S+)", ttir)
    assert stored and "tt.store" in stock and ttir != stock, ttir
    value = re.escape(stored.group(1).rstrip(","))
    assert re.search(rf"{value} = arith\.addf (%\S+), \1 :", ttir), ttir


def test_options_reach_the_pass_and_nested_passes_run(fixture_registry: Path) -> None:
    with triton_ext.enabled("fixture_tag_functions"):
        _, ttgir = compile_ttir()
    assert "triton_ext.fixture_b = 7 : i32" in ttgir
    with triton_ext.enabled("fixture_tag_functions", value=5):
        _, ttgir = compile_ttir()
    assert "triton_ext.fixture_b = 5 : i32" in ttgir


def test_target_limits_are_respected(fixture_registry: Path) -> None:
    # fixture_b declares cuda min_arch 80: an sm_75 compile is left alone.
    with triton_ext.enabled("fixture_tag_functions"):
        _, ttgir = compile_ttir(target_arch=75)
    assert "triton_ext.fixture_b" not in ttgir


def test_invalid_option_value_is_a_diagnostic_not_a_crash(fixture_registry: Path) -> None:
    from triton._C.libtriton import ir, passes

    triton_ext.load(str(fixture_registry / "libTritonExtFixtureB.so"))
    ctx = ir.context()
    ir.load_dialects(ctx)
    module = ir.parse_mlir_module(str(Path(__file__).with_name("empty.mlir")), ctx)
    pm = ir.pass_manager(ctx)
    passes.plugin.add_fixture_tag_functions(pm, ["value=not-a-number"])
    with pytest.raises(RuntimeError):
        pm.run(module, "bad-option")


@pytest.mark.parametrize("library, expected", [
    ("BadApiVersion", "wrong plugin API version: expected 2, found 1"),
    ("WrongTritonVersion", "built for Triton 3.8.0, 3.9.0 installed"),
    ("NullPassTable", "pass table is NULL but numPasses is 3"),
    ("CrashOnLoad", "killed the checking process with SIGABRT"),
    ("ExitOnLoad", "the checking process exited with status 3"),
    ("NoEntryPoint", "no entry point tritonGetPluginInfo"),
])
def test_broken_plugins_raise_and_the_process_lives(library: str, expected: str) -> None:
    path = TEST_PLUGINS / f"libTritonExt{library}.so"
    with pytest.raises(PreflightError) as info:
        preflight(path)
    assert expected in str(info.value) and path.name in str(info.value)
    with pytest.raises(PreflightError):
        triton_ext.load(str(path))  # the loader refuses it too, before Triton sees it


@pytest.mark.parametrize("pass_name", ["fixture_always_fail", "fixture_break_ir"])
def test_failing_pass_warns_and_leaves_no_broken_kernel(fixture_registry: Path, pass_name: str,
                                                        tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    clean, _ = compile_ttir()
    with triton_ext.enabled(pass_name), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ttir, _ = compile_ttir()
    messages = [str(w.message) for w in caught if issubclass(w.category, TritonExtWarning)]
    assert any(pass_name in m for m in messages), messages
    assert ttir == clean  # compiled without the failing pass
    # The fallback kernel (correct, compiled without the pass) was cached under this key; a
    # strict compile of a kernel not compiled before must raise instead of falling back.
    with triton_ext.enabled(pass_name), triton_ext.settings.scope(strict=True):
        with pytest.raises(PassFailedError) as info:
            compile_ttir(block=32)
    assert info.value.pass_name == pass_name
    again, _ = compile_ttir()
    assert again == clean  # nothing broken was cached


def test_duplicate_pass_name_is_refused(fixture_registry: Path) -> None:
    triton_ext.load(str(fixture_registry / "libTritonExtFixtureA.so"))
    with pytest.raises(LoadError) as info:
        triton_ext.load(str(fixture_registry / "libTritonExtDuplicateName.so"))
    assert "fixture_tag_module" in str(info.value)


def test_bindings_built_for_another_python_are_ignored(tmp_path: Path) -> None:
    # Plugins built on one machine load on another (a 3.11 build host, a 3.12 GPU host), but the
    # _infra bindings are a CPython extension: the probe must not load one built for another
    # interpreter (it killed the probe with SIGSEGV on the H200 host, so no pass could be enabled).
    import sysconfig

    plugins = tmp_path / "plugins"
    plugins.mkdir()
    for lib in ("libTritonExtLoopSplit.so", "libTritonExtPassInfra.so"):
        shutil.copy2(BUILD / "plugins" / lib, plugins / lib)
    ours = next((BUILD / "plugins").glob("_infra*.so"))
    foreign = "_infra.cpython-399-x86_64-linux-gnu.so"
    assert ours.name != foreign and sysconfig.get_config_var("EXT_SUFFIX") != foreign[len("_infra"):]
    # A library that is not this Python's extension at all: loading it as one would fail loudly.
    (plugins / foreign).write_bytes(b"\x7fELF not an extension for this interpreter")
    env = {**__import__("os").environ, "TRITON_EXT_BUILD_DIR": str(tmp_path)}
    res = subprocess.run([sys.executable, "-m", "triton_ext._probe", str(plugins / "libTritonExtLoopSplit.so")],
                         capture_output=True, text=True, env=env, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    verdict = json.loads(res.stdout.strip().splitlines()[-1])
    assert verdict["ok"] and verdict["passes"] == ["loop_split"]
    assert verdict["descriptions"] is None  # no bindings for this interpreter: nothing described
