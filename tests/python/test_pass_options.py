"""Pass options from TableGen itself (issue 26 item 5, issue 30 Deliver 3 and 7).

The build writes each Passes.td's records (``mlir-tblgen --print-records``) beside the plugin;
the registry's options, their types, defaults, allowed values and bounds come from there. Every
value is checked before anything compiles, with one line naming the option, what it accepts and
where the value came from: ``enable()``, ``TRITON_EXT_ENABLE``, ``Config(passes=...)`` and
``triton-ext opt --pass``. A check pass never compiles silently without its check."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import triton_ext
from triton_ext._manifest import load_manifest
from triton_ext._pass_records import flag_of, read_pass_records, records_path
from triton_ext._autotune import PASSES_KWARG, selection_for
from triton_ext._passlist import parse_pass_list
from triton_ext._schema import parse_registry
from triton_ext.testing import enabled_label, repo_root, require_built

REPO = repo_root()


@pytest.fixture
def real_registry(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TRITON_EXT_REGISTRY", str(REPO / "registry.yaml"))
    monkeypatch.delenv("TRITON_EXT_BUILD_DIR", raising=False)
    return REPO / "registry.yaml"


def _tblgen_records(td: Path, out: Path) -> Path:
    """Run the toolchain's mlir-tblgen as the build does (cmake/TritonExt.cmake)."""
    from triton_ext.dev.toolchain import read_toolchain

    tc = read_toolchain()
    if tc is None:
        pytest.fail("no toolchain; run `triton-ext toolchain` (tools/setup.sh does)")
    res = subprocess.run([tc.mlir_tblgen, "--print-records", f"-I{tc.mlir_include}", f"-I{REPO / 'infra/include'}",
                          f"-I{td.parent}", str(td), "-o", str(out)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return out


DEMO_TD = """
include "triton-ext/PassOptions.td"

class SharedMode : EnumOption<"mode", "mode", "::demo::Mode", /*default=*/"record", "What to do.",
    [EnumValue<"Record", "record", "keep going">, EnumValue<"Abort", "abort", "stop">]>;

def TritonExtDemo : Pass<"triton-ext-demo", "mlir::ModuleOp"> {
  let options = [
    SharedMode<>,
    RangeOption<"parts", "parts", "unsigned", /*default=*/"3", "Parts, 2 or 3.", 2, 3>,
    MinOption<"group", "group-size", "int", /*default=*/"8", "Rows per group.", 2>,
    Option<"limit", "limit", "uint64_t", /*default=*/"0", "No limit: 0.">,
    Option<"name", "name", "std::string", /*default=*/"\\"a b\\"", "A name.">,
    Option<"on", "on", "bool", /*default=*/"true", "On.">,
  ];
}
def TritonExtOther : Pass<"triton-ext-other", "mlir::ModuleOp"> {
  let options = [SharedMode<>];
}
"""


def test_records_of_a_passes_td_with_shared_and_enum_options(tmp_path: Path) -> None:
    td = tmp_path / "Passes.td"
    td.write_text(DEMO_TD)
    table = read_pass_records(_tblgen_records(td, tmp_path / "libTritonExtDemo.passes.records"))
    assert list(table) == ["triton-ext-demo", "triton-ext-other"]
    by_flag = {o.flag: o for o in table["triton-ext-demo"]}
    mode = by_flag["mode"]
    assert (mode.type, mode.default, mode.allowed, mode.cpp_type) == ("str", "record", ("record", "abort"), "::demo::Mode")
    assert mode.help == "What to do. record: keep going; abort: stop."
    assert (by_flag["parts"].default, by_flag["parts"].minimum, by_flag["parts"].maximum) == (3, 2, 3)
    assert (by_flag["group-size"].minimum, by_flag["group-size"].maximum) == (2, None)
    assert (by_flag["limit"].type, by_flag["limit"].minimum) == ("int", 0)  # unsigned: at least 0
    assert by_flag["name"].default == "a b" and by_flag["on"].default is True
    assert [o.flag for o in table["triton-ext-other"]] == ["mode"]  # the shared class, declared once


def test_tablegen_refuses_an_enum_default_that_is_not_a_value(tmp_path: Path) -> None:
    td = tmp_path / "Passes.td"
    td.write_text(DEMO_TD.replace('/*default=*/"record"', '/*default=*/"recrod"'))
    from triton_ext.dev.toolchain import read_toolchain

    tc = read_toolchain()
    assert tc is not None
    res = subprocess.run([tc.mlir_tblgen, "--print-records", f"-I{tc.mlir_include}", f"-I{REPO / 'infra/include'}",
                          str(td)], capture_output=True, text=True)
    assert res.returncode != 0 and "the default 'recrod' is not one of its values" in res.stderr


def test_registry_options_are_the_records_of_the_build(real_registry: Path) -> None:
    # Every pass of an extension with a Passes.td gets its options from the built records, and
    # the compiled plugin agrees on every default (its textual pipeline, from the pass database).
    from triton_ext._database import describe_library

    manifest = load_manifest(real_registry, entry_points=False)
    compared = 0
    for ext in manifest.extensions:
        if not (REPO / ext.directory / "Passes.td").exists() or not ext.passes:
            continue
        (library,) = require_built(ext.name)
        table = read_pass_records(records_path(library))
        described = {d.name: d.option_defaults for d in describe_library(library, ext.name)}
        for spec in ext.passes:
            declared = table[flag_of(spec.name)]
            assert [(o.name, o.type, o.default, o.help, o.choices, o.minimum, o.maximum) for o in spec.options] == \
                   [(o.flag, o.type, o.default, o.help, o.allowed, o.minimum, o.maximum) for o in declared]
            assert {o.name: o.render(o.default).partition("=")[2] for o in spec.options} == described[spec.name]
            compared += 1
    assert compared >= 10
    assert manifest.find_pass("nan_inf_check").option("mode").choices == ("record", "abort")
    assert manifest.find_pass("offset_overflow_check").option("print").choices == ("none", "first", "every")
    assert manifest.find_pass("nvidia_auto_pdl").option("launch-dependents").choices == \
        ("after-loads", "after-wait", "none")
    max_parts = manifest.find_pass("loop_split").option("max-parts")
    assert (max_parts.minimum, max_parts.maximum) == (2, 3)


def test_options_in_registry_next_to_passes_td_are_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "passes" / "Demo"
    folder.mkdir(parents=True)
    (folder / "Passes.td").write_text(DEMO_TD)
    plugins = tmp_path / "build" / "plugins"
    plugins.mkdir(parents=True)
    monkeypatch.setenv("TRITON_EXT_BUILD_DIR", str(tmp_path / "build"))
    text = """\
schema: 1
extensions:
  demo:
    kind: pass
    directory: passes/Demo
    library: TritonExtDemo
    status: experimental
    summary: A demo.
    targets: {cuda: {}}
    passes:
      demo:
        stage: ttir
        options:
          parts: {default: 2, type: int, help: "Parts."}
"""
    bare = text.replace("""        options:
          parts: {default: 2, type: int, help: "Parts."}
""", "")
    # Not built: the options are not known yet, and saying one names the missing records.
    spec = parse_registry(bare, tmp_path / "registry.yaml", read_sources=True).find_pass("demo")
    assert spec.options == ()
    with pytest.raises(triton_ext.UnknownPassError, match=r"options are not known yet: .*libTritonExtDemo"
                                                         r"\.passes\.records is missing; build the extension"):
        spec.option("parts")
    _tblgen_records(folder / "Passes.td", plugins / "libTritonExtDemo.passes.records")
    with pytest.raises(triton_ext.ManifestError, match="Passes.td declares the options of demo"):
        parse_registry(text, tmp_path / "registry.yaml", read_sources=True)
    spec = parse_registry(bare, tmp_path / "registry.yaml", read_sources=True).find_pass("demo")
    assert [o.name for o in spec.options] == ["mode", "parts", "group-size", "limit", "name", "on"]


# --------------------------------------------------------------------------- #
# One line naming the option, what it accepts and where the value came from
# --------------------------------------------------------------------------- #


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    assert "\n" not in text, text
    return text


def test_enable_refuses_a_bad_enum_value(real_registry: Path) -> None:
    # Issue 26 item 5: enable("nan_inf_check", mode="abrt") was accepted; the kernel then compiled
    # without its check after 41 lines of MLIR reproducer.
    require_built("sanitizers")
    with pytest.raises(triton_ext.OptionError) as info:
        triton_ext.enable("nan_inf_check", mode="abrt")
    assert _one_line(info.value) == ("enable(): pass nan_inf_check: option mode: expected one of record, abort, "
                                     "found 'abrt' (declared in Sanitizers/Passes.td)")
    with pytest.raises(triton_ext.OptionError, match=r"^enabled\(\): pass offset_overflow_check: option print: "
                                                     r"expected one of none, first, every, found 'all'"):
        with triton_ext.enabled("offset_overflow_check", options={"print": "all"}):
            pass
    assert triton_ext.enabled_passes() == {}


def test_enable_refuses_out_of_range_and_wrong_types(real_registry: Path) -> None:
    require_built("loop_split")
    with pytest.raises(triton_ext.OptionError, match=r"^enable\(\): pass loop_split: option max-parts: expected an "
                                                     r"int in \[2, 3\], found 7 \(declared in LoopSplit/Passes.td\)$"):
        triton_ext.enable("loop_split", options={"max-parts": 7})
    with pytest.raises(triton_ext.OptionError, match=r"option max-parts: expected an int in \[2, 3\], found '2'"):
        triton_ext.enable("loop_split", options={"max-parts": "2"})
    with pytest.raises(triton_ext.OptionError, match=r"option group-size: expected an int >= 2, found 1"):
        triton_ext.enable("grid_swizzle", group_size=1)
    with pytest.raises(triton_ext.OptionError, match="option min-ctas-per-sm: expected an int >= 0, found -1"):
        triton_ext.enable("nvidia_occupancy_hint", options={"min-ctas-per-sm": -1})
    assert triton_ext.enabled_passes() == {}
    option = triton_ext.manifest().find_pass("loop_split").option("max-parts")
    assert option.coerce(2) == 2 and option.coerce(3) == 3


def test_config_refuses_a_bad_value_when_made(real_registry: Path) -> None:
    require_built("sanitizers")
    with pytest.raises(triton_ext.OptionError) as info:
        triton_ext.Config({"BLOCK": 64}, passes={"nan_inf_check": {"fast_path": "fast"}})
    assert _one_line(info.value) == ("Config(passes=...): pass nan_inf_check: option fast-path: expected one of "
                                     "count, peak, warp, reload, found 'fast' (declared in Sanitizers/Passes.td)")
    ok = triton_ext.Config({"BLOCK": 64}, passes={"nan_inf_check": {"fast-path": "warp"}})
    assert ok.passes == {"nan_inf_check": {"fast-path": "warp"}}


def test_enabled_label_takes_options_per_pass_for_one_block(real_registry: Path) -> None:
    # Benchmark rows (tests/realworld/check_gpu.py --passes): option variants beside the defaults.
    require_built("sanitizers")
    label = "nan_inf_check{fast-path=count print=none}+offset_overflow_check"
    with enabled_label(label):
        passes = triton_ext.enabled_passes()
        assert passes["nan_inf_check"]["options"]["fast-path"] == "count"
        assert passes["offset_overflow_check"]["options"] == {
            o.name: o.default for o in triton_ext.manifest().find_pass("offset_overflow_check").options}
    assert triton_ext.enabled_passes() == {}
    with pytest.raises(triton_ext.OptionError, match=r"row 'nan_inf_check\{fast-path=fast\}'.*expected one of count"):
        with enabled_label("nan_inf_check{fast-path=fast}"):
            pass
    assert triton_ext.enabled_passes() == {}


def test_a_pass_brings_its_registry_companions(real_registry: Path) -> None:
    # registry.yaml: nan_inf_check `with: [thread_ids_after_loops, barrier_vote]` (the llir helpers
    # its checks need); named with options, the user's options win; masked_load_poison has none.
    require_built("sanitizers")
    with triton_ext.enabled("nan_inf_check"):
        passes = triton_ext.enabled_passes()
        assert set(passes) == {"nan_inf_check", "thread_ids_after_loops", "barrier_vote"}
        assert passes["thread_ids_after_loops"]["stage"] == passes["barrier_vote"]["stage"] == "llir"
    for label in ("nan_inf_check+thread_ids_after_loops{max-loop-state=64}",
                  "thread_ids_after_loops{max-loop-state=64}+nan_inf_check"):
        with enabled_label(label):
            entries = [e for e in triton_ext._selection.current().entries if e.spec.name == "thread_ids_after_loops"]
            assert [dict(e.options)["max-loop-state"] for e in entries] == [64], label
    # triton_ext.Config's passes (read back at launch by selection_for): the same rule.
    config = triton_ext.Config({"BLOCK": 64}, passes={"nan_inf_check": {}, "thread_ids_after_loops": {"min-freed": 0}})
    entries = [e for e in selection_for(config.kwargs[PASSES_KWARG]).entries
               if e.spec.name == "thread_ids_after_loops"]
    assert [dict(e.options)["min-freed"] for e in entries] == [0]
    with triton_ext.enabled("masked_load_poison"):
        assert set(triton_ext.enabled_passes()) == {"masked_load_poison"}


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_EXT_")}
    full.update(PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
                TRITON_EXT_REGISTRY=str(REPO / "registry.yaml"), **env)
    return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True, timeout=300,
                          cwd=REPO)


SHOW_ENABLED = ("import triton_ext\nfrom triton_ext import _selection\n"
                "print(sorted((e.spec.name, e.options) for e in _selection.current().entries))\n")


def test_triton_ext_enable_takes_options_in_mlir_syntax(tmp_path: Path) -> None:
    # Issue 30 Deliver 7: 'nan_inf_check{mode=abort}' was "unknown pass".
    require_built("sanitizers", "loop_split")
    res = _python(SHOW_ENABLED, TRITON_EXT_ENABLE="nan_inf_check{mode=abort print=first},loop_split{max-parts=2}",
                  TRITON_EXT_CACHE_DIR=str(tmp_path))
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().splitlines()[-1] == (
        "[('barrier_vote', ()), ('loop_split', (('max-parts', 2),)), "
        "('nan_inf_check', (('mode', 'abort'), ('print', 'first'))), "
        "('thread_ids_after_loops', ())]")  # registry `with:` of nan_inf_check


def test_triton_ext_enable_refuses_a_bad_value_in_one_line(tmp_path: Path) -> None:
    require_built("sanitizers")
    res = _python(SHOW_ENABLED, TRITON_EXT_ENABLE="nan_inf_check{mode=abrt}", TRITON_EXT_STRICT="1",
                  TRITON_EXT_CACHE_DIR=str(tmp_path))
    assert res.returncode != 0
    (line,) = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert "TRITON_EXT_ENABLE: pass nan_inf_check: option mode: expected one of record, abort, found 'abrt' " \
           "(declared in Sanitizers/Passes.td)" in line, res.stderr


def test_opt_refuses_a_bad_value_in_one_line(tmp_path: Path) -> None:
    # Issue 26 item 5: `triton-ext opt ... 'loop_split{max-parts=7}'` printed 343 lines starting
    # `got \a` (the pass's diagnostic, then the module).
    require_built("loop_split")
    mlir = tmp_path / "empty.mlir"
    mlir.write_text("module {\n}\n")
    full = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_EXT_")}
    full.update(PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
                TRITON_EXT_CACHE_DIR=str(tmp_path / "preflight"))
    res = subprocess.run([sys.executable, "-m", "triton_ext", "opt", str(mlir), "--pass", "loop_split{max-parts=7}"],
                         env=full, capture_output=True, text=True, timeout=300, cwd=REPO)
    assert res.returncode == 1 and res.stdout == ""
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "\a" not in res.stderr, res.stderr
    assert "--pass: pass loop_split: option max-parts: expected an int in [2, 3], found 7 " \
           "(declared in LoopSplit/Passes.td)" in lines[0]


@pytest.mark.parametrize("text, expected", [
    ("a", [("a", {})]),
    ("a,b{x=1 y=two},c", [("a", {}), ("b", {"x": "1", "y": "two"}), ("c", {})]),
    (" nan_inf_check{mode=abort} , loop_split ", [("nan_inf_check", {"mode": "abort"}), ("loop_split", {})]),
    ("p{name='a b' q=\"c,d\"}", [("p", {"name": "a b", "q": "c,d"})]),
])
def test_pass_list_syntax(text: str, expected: list) -> None:
    assert parse_pass_list(text, "X") == expected


@pytest.mark.parametrize("text, message", [
    ("a{x}", r"X: a\{\.\.\.\}: expected flag=value pairs separated by spaces, found 'x'"),
    ("a{x=1 x=2}", r"option 'x' given twice"),
    ("a(x=1)", r"X: expected a\{flag=value \.\.\.\}"),
])
def test_pass_list_errors(text: str, message: str) -> None:
    with pytest.raises(triton_ext.UnknownPassError, match=message):
        parse_pass_list(text, "X")


def test_a_sanitizer_that_cannot_run_fails_the_compile(real_registry: Path, fresh_cache: Path,
                                                       capfd: pytest.CaptureFixture[str]) -> None:
    # Issue 26 item 5: a check that fails to apply was a TritonExtWarning and the kernel compiled
    # without it. The sanitizers are `role: check` in registry.yaml: the compile fails.
    from tests.python.conftest import compile_kernel

    require_built("sanitizers")
    assert triton_ext.manifest().find_pass("nan_inf_check").on_failure == "error"
    with triton_ext.enabled("nan_inf_check", print="first", records=False), warnings.catch_warnings():
        warnings.simplefilter("error", triton_ext.TritonExtWarning)
        with pytest.raises(triton_ext.PassFailedError, match=r"pass nan_inf_check .* is a check \(role: check, "
                                                             r"on_failure: error\), so the kernel is not compiled"):
            compile_kernel(block=256)
    assert "nan_inf_check: print=first needs records=true" in capfd.readouterr().err


FRAGMENT = """\
schema: 1
extensions:
  demo:
    kind: pass
    directory: passes/Demo
    library: TritonExtDemo
    status: experimental
    summary: A demo, as an installed wheel's fragment carries it (no Passes.td beside it).
    targets: {cuda: {}}
    role: check
    passes:
      demo:
        stage: ttir
        options:
          mode: {default: record, type: str, help: "What to do.", allowed: [record, abort]}
          parts: {default: 3, type: int, help: "Parts.", min: 2, max: 3}
"""


def test_a_fragment_carries_allowed_values_and_bounds(tmp_path: Path) -> None:
    spec = parse_registry(FRAGMENT, tmp_path / "registry.yaml").find_pass("demo")
    assert (spec.role, spec.on_failure) == ("check", "error")
    assert spec.option("mode").choices == ("record", "abort")
    with pytest.raises(ValueError, match=r"option parts: expected an int in \[2, 3\], found 4 \(declared in "
                                         r"registry.yaml:\d+\)"):
        spec.option("parts").coerce(4)
    bad = FRAGMENT.replace("default: record,", "default: loud,").replace("type: int, help", "type: bool, help")
    with pytest.raises(triton_ext.ManifestError) as info:
        parse_registry(bad, tmp_path / "registry.yaml")
    text = str(info.value)
    assert "options.mode.default: expected a default the option accepts: option mode: expected one of record, abort, " \
           "found 'loud'" in text
    assert "options.parts.min: expected min only for type int or float, found type bool" in text
