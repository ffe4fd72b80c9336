"""Extension READMEs are references (issue 30): each has the sections of
:data:`triton_ext.dev.extension_docs.REQUIRED_SECTIONS`, and its generated Options and Results
blocks equal what ``triton-ext docs`` makes from the build's pass records and the committed
``results/*.json`` (a stale README fails here)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from triton_ext._errors import TritonExtError
from triton_ext._manifest import load_manifest
from triton_ext.dev import extension_docs as docs
from triton_ext.testing import repo_root, require_built

REPO = repo_root()
EXTENSIONS = [e.name for e in load_manifest().extensions if (REPO / e.directory).is_dir()]


@pytest.mark.parametrize("name", EXTENSIONS)
def test_extension_readme_has_the_reference_sections(name: str) -> None:
    ext = load_manifest().extension(name)
    text = docs.readme_path(ext).read_text(encoding="utf-8")
    assert not docs.missing_sections(text), f"{ext.directory}/README.md lacks {docs.missing_sections(text)}"
    for begin in (docs.OPTIONS_BEGIN, docs.RESULTS_BEGIN):
        assert begin in text, f"{ext.directory}/README.md lacks the marker {begin}"


@pytest.mark.parametrize("name", EXTENSIONS)
def test_extension_readme_generated_blocks_are_current(name: str) -> None:
    ext = load_manifest().extension(name)
    if ext.passes:
        require_built(name)  # the options come from the build's pass records
    path = docs.readme_path(ext)
    text = path.read_text(encoding="utf-8")
    assert docs.render_readme(text, ext) == text, (
        f"{path.relative_to(REPO)}: the generated Options/Results differ from the pass records and "
        f"results/*.json; run `triton-ext docs {name}`")


def test_missing_pass_records_fail_with_the_build_command(tmp_path: Path) -> None:
    ext = load_manifest().extension("grid_swizzle")
    gone = replace(ext, passes=tuple(replace(p, options=(), options_source=str(tmp_path / "libX.passes.records"))
                                     for p in ext.passes))
    with pytest.raises(TritonExtError, match=r"missing; build the extension first: `triton-ext build grid_swizzle`"):
        docs.options_markdown(gone)


def test_results_table_names_file_commit_and_date(tmp_path: Path) -> None:
    ext = load_manifest().extension("grid_swizzle")
    folder = tmp_path / ext.directory / "results"
    folder.mkdir(parents=True)
    (folder / "check-h200.json").write_text(
        '{"commit": "abc1234 (note)", "date": "2026-01-02T03:04:05Z", "device": "NVIDIA H200", '
        '"rows": [{"n": 1, "ok": true, "speedup": 1.23456}]}', encoding="utf-8")
    (folder / "check-h100.json").write_text('{"rows": []}', encoding="utf-8")  # not an H200 run
    out = docs.results_markdown(ext, tmp_path)
    assert "[`results/check-h200.json`](results/check-h200.json), NVIDIA H200, commit abc1234, 2026-01-02." in out
    assert "| 1 | yes | 1.235 |" in out and "h100" not in out
    # A short hash of digits only is still a commit when the field holds nothing else; inside a
    # note, a run of digits (a date) is not.
    (folder / "check-h200.json").write_text('{"environment": {"commit": "9654598", "date": "2026-12-03"}, "rows": [{"n": 1}]}',
                                            encoding="utf-8")
    assert "commit 9654598, 2026-12-03." in docs.results_markdown(ext, tmp_path)
    (folder / "check-h200.json").write_text('{"commit": "run of 20261203", "rows": [{"n": 1}]}', encoding="utf-8")
    assert "commit not recorded" in docs.results_markdown(ext, tmp_path)


def test_results_measured_only_on_another_gpu_are_linked(tmp_path: Path) -> None:
    ext = load_manifest().extension("grid_swizzle")
    folder = tmp_path / ext.directory / "results"
    folder.mkdir(parents=True)
    assert "(its tests run on the CPU" in docs.results_markdown(ext, tmp_path)
    (folder / "bench-h100.json").write_text('{"rows": []}', encoding="utf-8")
    out = docs.results_markdown(ext, tmp_path)
    assert "on other GPUs: [bench-h100.json](results/bench-h100.json)." in out and "on the CPU" not in out
    (folder / "BENCHMARK.md").write_text("# b\n", encoding="utf-8")
    assert "([BENCHMARK.md](results/BENCHMARK.md))." in docs.results_markdown(ext, tmp_path)


def test_a_readme_without_markers_is_refused() -> None:
    ext = load_manifest().extension("range_facts")
    with pytest.raises(TritonExtError, match="expected the markers"):
        docs.render_readme("# no markers\n", ext)


def test_missing_sections_reports_order() -> None:
    text = "## Options\n## What it does\n## When to use it\n## Results\n"
    assert docs.missing_sections(text) and "out of order" in docs.missing_sections(text)[0]
    assert docs.missing_sections("## What it does\n") == ["## When to use it", "## Options", "## Results"]
