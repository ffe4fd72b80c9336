"""One source per fact (issue 15): pass options come from Passes.td; registry.yaml says placement,
targets and status; a value the pass's declaration refuses is refused at ``enable``."""

from __future__ import annotations

from pathlib import Path

import pytest

import triton_ext
from triton_ext._manifest import load_manifest
from triton_ext._passes_td import read_passes_td
from triton_ext._schema import parse_registry
from triton_ext.testing import repo_root, require_built

REPO = repo_root()


@pytest.fixture
def real_registry(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TRITON_EXT_REGISTRY", str(REPO / "registry.yaml"))
    monkeypatch.delenv("TRITON_EXT_BUILD_DIR", raising=False)
    return REPO / "registry.yaml"


def test_out_of_range_option_is_refused_at_enable(real_registry: Path) -> None:
    require_built("loop_split")
    with pytest.raises(triton_ext.OptionError, match=r"max-parts: expected one of 2, 3, found 7 \(LoopSplit/Passes.td:\d+\)"):
        triton_ext.enable("loop_split", options={"max-parts": 7})
    assert triton_ext.enabled_passes() == {}
    with pytest.raises(triton_ext.OptionError, match="expected int, found '2'"):
        triton_ext.enable("loop_split", options={"max-parts": "2"})
    # A value the declaration allows passes the same check (nothing is loaded into this process:
    # other tests here need Triton's address space free of the repository's plugins).
    option = {o.name: o for o in triton_ext.manifest().find_pass("loop_split").options}["max-parts"]
    assert option.coerce(2) == 2 and option.coerce(3) == 3


def test_unsigned_option_refuses_a_negative_value(real_registry: Path) -> None:
    with pytest.raises(triton_ext.OptionError, match="min-ctas-per-sm: expected at least 0, found -1"):
        triton_ext.enable("nvidia_occupancy_hint", options={"min-ctas-per-sm": -1})


def test_registry_options_are_the_passes_td_options(real_registry: Path) -> None:
    manifest = load_manifest(real_registry, entry_points=False)
    compared = 0
    for ext in manifest.extensions:
        td = REPO / ext.directory / "Passes.td"
        if not td.exists():
            continue
        table = read_passes_td(td)
        for spec in ext.passes:
            declared = table[f"triton-ext-{spec.name.replace('_', '-')}"]
            assert [(o.name, o.type, o.default, o.help) for o in spec.options] == \
                   [(o.flag, o.type, o.default, o.help) for o in declared]
            compared += 1
    assert compared == sum(len(e.passes) for e in manifest.extensions) > 0


def test_options_in_registry_next_to_passes_td_are_an_error(tmp_path: Path) -> None:
    folder = tmp_path / "passes" / "Demo"
    folder.mkdir(parents=True)
    (folder / "Passes.td").write_text(
        'def TritonExtDemo : Pass<"triton-ext-demo", "mlir::ModuleOp"> {\n'
        '  let options = [\n    Option<"n", "n", "unsigned", /*default=*/"2", "Parts (2 or 3).">,\n  ];\n}\n')
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
          n: {default: 2, type: int, help: "Parts."}
"""
    with pytest.raises(triton_ext.ManifestError, match="Passes.td declares the options of demo"):
        parse_registry(text, tmp_path / "registry.yaml", read_sources=True)
    spec = parse_registry(text.replace("""        options:
          n: {default: 2, type: int, help: "Parts."}
""", ""), tmp_path / "registry.yaml", read_sources=True).find_pass("demo")
    (option,) = spec.options
    assert (option.name, option.type, option.default, option.choices) == ("n", "int", 2, (2, 3))


def test_one_child_process_reads_a_plugin(real_registry: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The pass database is read by the preflight child (triton_ext._probe) and kept in its cached
    # verdict: describing a checked library starts no second process.
    import subprocess

    from triton_ext._database import describe_library
    from triton_ext._preflight import preflight

    (library,) = require_built("loop_split")
    assert preflight(library).descriptions is not None

    def no_child(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a second child process was started: {args}")

    monkeypatch.setattr(subprocess, "run", no_child)
    (description,) = describe_library(library)
    assert description.argument == "triton-ext-loop-split"
    assert description.option_defaults == {"max-parts": "3", "max-tile-elements": "32768", "max-tail-step": "16384"}
