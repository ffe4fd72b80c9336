"""Documentation cannot drift from the result files: the README's benchmark table is generated from
the committed ``results/bench-<gpu>.json`` files, and every relative link in the Markdown files
points at a file that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from triton_ext.bench import find_specs
from triton_ext.bench.cli import SUMMARY_BEGIN, SUMMARY_END, replace_block, summary_reports
from triton_ext.bench.report import summary_markdown
from triton_ext.testing import repo_root

REPO = repo_root()


def test_benchmark_table_is_generated_from_the_result_files() -> None:
    results = REPO / "docs" / "results.md"
    readme = results.read_text()
    table = summary_markdown(summary_reports(find_specs([])), results.parent)
    assert table.count("\n") > 2, "no bench-*.json results found: the table would be empty"
    expected = replace_block(readme, table)
    assert readme == expected, (
        "docs/results.md's benchmark table differs from the results/bench-*.json files; run "
        "`triton-ext bench --summary --readme docs/results.md`")
    block = readme[readme.index(SUMMARY_BEGIN):readme.index(SUMMARY_END)]
    assert "NVIDIA H200" in block


def test_replace_block_needs_both_markers() -> None:
    with pytest.raises(Exception, match="expected the markers"):
        replace_block("no markers here", "| table |")


_LINK = re.compile(r"(?<!`)\[[^\]`]*\]\(([^)#\s]+)(?:#[^)]*)?\)")


def _markdown_files() -> list[Path]:
    skip = {".venv", "build", ".git", "templates"}
    # .venv-demo, .venv-triton-<v>, build-triton-<v> (tools/demo.sh, tools/try-triton.sh) too
    return sorted(p for p in REPO.rglob("*.md") if not skip & set(p.relative_to(REPO).parts)
                  and not p.relative_to(REPO).parts[0].startswith((".venv", "build")))


@pytest.mark.parametrize("path", _markdown_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(path: Path) -> None:
    broken = [target for target in _LINK.findall(path.read_text(encoding="utf-8"))
              if "://" not in target and not target.startswith("mailto:")
              and re.search(r"\w\.\w+$|\w/$", target)  # a path, not code such as kernel[grid](...)
              and not (path.parent / target).exists()]
    assert not broken, f"{path.relative_to(REPO)}: broken links {broken}"
