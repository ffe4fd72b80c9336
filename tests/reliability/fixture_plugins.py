"""Registries and build trees around the fixture plugins of tests/fixtures.

Every build puts them in ``<build dir>/test-plugins`` (``$TRITON_EXT_BUILD_DIR`` first, then
the checkout's ``build/``). A test gets a private build tree whose ``plugins/`` links to the
fixtures it needs and a registry.yaml naming them, both wired in through the environment.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pytest is imported where a test needs it: benchmarks on a GPU host use Entry without it
    import pytest

from triton_ext.testing import repo_root

REPO = repo_root()

GOOD = ("FixtureA", "FixtureB")
BROKEN = ("BadApiVersion", "WrongTritonVersion", "NullPassTable", "CrashOnLoad", "ExitOnLoad", "NoEntryPoint")
MISBEHAVING = ("FailingPass", "InvalidIR", "DuplicateName")


def fixture_dirs() -> list[Path]:
    dirs = []
    env = os.environ.get("TRITON_EXT_BUILD_DIR")
    if env:
        dirs.append(Path(env) / "test-plugins")
    dirs.append(REPO / "build" / "test-plugins")
    return dirs


def fixture_library(name: str) -> Path:
    """``libTritonExt<name>.so`` from the first build that has it; fails the test when none has it
    (an unbuilt plugin must not look like a pass)."""
    for directory in fixture_dirs():
        path = directory / f"libTritonExt{name}.so"
        if path.exists():
            return path
    import pytest

    pytest.fail(f"fixture plugin libTritonExt{name}.so not built in {' or '.join(map(str, fixture_dirs()))}; "
                f"build with `triton-ext build` (fixtures are part of every build)")


@dataclass
class Entry:
    """One registry extension around a library: its passes (name -> options YAML) and stage."""

    extension: str
    library: str  # without lib/.so
    passes: dict[str, str] = field(default_factory=dict)
    stage: str = "ttir"
    auto: bool = False  # a candidate of the transparent mode

    def yaml(self) -> str:
        """This entry as registry.yaml lines (under ``extensions:``)."""
        lines = [f"  {self.extension}:", "    kind: pass", "    directory: tests/fixtures", f"    library: {self.library}",
                 "    status: experimental", "    summary: Reliability fixture.", "    targets:", "      cuda: {}",
                 "    passes:"]
        for name, options in self.passes.items():
            lines += [f"      {name}:", f"        stage: {self.stage}"] + (["        auto: true"] if self.auto else [])
            if options:
                lines += ["        options:", f"          {options}"]
        return "\n".join(lines) + "\n"


def write_tree(root: Path, entries: list[Entry], files: dict[str, Path]) -> tuple[Path, Path]:
    """Write ``root/registry.yaml`` and ``root/build/plugins`` (links, or copies when asked).

    ``files`` maps a library name to the file it should be (a fixture to link to, or a
    prepared broken file that is moved in place). Returns (registry, build dir).
    """
    plugins = root / "build" / "plugins"
    plugins.mkdir(parents=True, exist_ok=True)
    for library, source in files.items():
        target = plugins / f"lib{library}.so"
        if target.exists() or target.is_symlink():
            target.unlink()
        if source.parent == root:  # a prepared file: move it in
            source.rename(target)
        else:
            target.symlink_to(source)
    registry = root / "registry.yaml"
    registry.write_text("schema: 1\nextensions:\n" + "".join(e.yaml() for e in entries))
    return registry, root / "build"


def use_tree(monkeypatch: pytest.MonkeyPatch, registry: Path, build: Path) -> None:
    monkeypatch.setenv("TRITON_EXT_REGISTRY", str(registry))
    monkeypatch.setenv("TRITON_EXT_BUILD_DIR", str(build))


# The good fixtures with FixtureB's option declared, as the concurrency and cache tests use them.
FIXTURE_A = Entry("fixture_a", "TritonExtFixtureA", {"fixture_tag_module": ""})
FIXTURE_B = Entry("fixture_b", "TritonExtFixtureB",
                  {"fixture_tag_functions": 'value: {default: 7, type: int, help: "Value stored in triton_ext.fixture_b."}'})
FAILING = Entry("fixture_failing", "TritonExtFailingPass", {"fixture_always_fail": ""})
INVALID = Entry("fixture_invalid", "TritonExtInvalidIR", {"fixture_break_ir": ""})
DUPLICATE = Entry("fixture_duplicate", "TritonExtDuplicateName", {"fixture_tag_module": ""})
#: A pass that compiles and verifies but doubles every stored float: the transparent mode must drop it.
WRONG_RESULT = Entry("wrong_result", "TritonExtWrongResult", {"fixture_double_stores": ""}, auto=True)


def standard_tree(root: Path, monkeypatch: pytest.MonkeyPatch, entries: list[Entry]) -> tuple[Path, Path]:
    """A tree with the given fixture entries, each linked to its built library."""
    files = {e.library: fixture_library(e.library[len("TritonExt"):]) for e in entries}
    registry, build = write_tree(root, entries, files)
    use_tree(monkeypatch, registry, build)
    return registry, build
