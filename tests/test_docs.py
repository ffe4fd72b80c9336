"""Documentation cannot drift from the repository: the generated tables equal what their generators
make from the committed JSON, every relative link in the Markdown files points at a file that exists,
and every repository path or file name the docs (and the scripts' docstrings and messages) name
exists."""

from __future__ import annotations

import json
import os
import re
import subprocess
from functools import cache
from pathlib import Path
from typing import Any, Iterator

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


# Names in docs that are not files of this repository, with the reason (anything else must exist).
NOT_REPO_FILES: dict[str, str] = {
    "FILE.mlir": "a placeholder in a command line",
    "MyThing.cpp": "an example extension's source in packaging/README.md",
    "PluginUtils.h": "Triton's header, inside the triton wheel",
    "abi-breaking.h": "written by the toolchain into ~/.cache/triton-ext",
    "toolchain.json": "written by the toolchain into ~/.cache/triton-ext",
    "entry_points.txt": "a wheel's metadata file",
    "site.py": "CPython's standard library",
    "test_pipeliner.py": "Triton's own test file (python/test/unit/language in Triton's repository)",
    "test_core.py": "Triton's own test file (python/test/unit/language in Triton's repository)",
    "A.json": "placeholder file names in a command line (benchmarks/pass_selection_gpu.py --merge)",
    "B.json": "placeholder file names in a command line (benchmarks/pass_selection_gpu.py --merge)",
    "X.json": "placeholder file names in a command line (benchmarks/pass_selection_gpu.py --merge)",
    "triton_ext/plugins/": "the core wheel's install layout, not a repository folder",
    "passes/sanitizers/": "the folder name the Sanitizers' issue asked for (the README says why it differs)",
}


def _not_repo_file(token: str) -> bool:
    return token in NOT_REPO_FILES or any(token.startswith(k) for k in NOT_REPO_FILES if k.endswith("/"))


_FILE_NAME = re.compile(r"^[\w.\-/]+\.(py|md|json|cpp|h|td|mlir|sh|yaml|yml|txt|toml|cmake)$")


@cache
def _tracked() -> tuple[frozenset[str], frozenset[str]]:
    """(top-level folders, file base names) of the repository's tracked files."""
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    return frozenset(f.split("/")[0] for f in files if "/" in f), frozenset(Path(f).name for f in files)


def missing_names(text: str, folder: Path, spans: re.Pattern[str]) -> list[str]:
    """Repository paths (``passes/LoopSplit/bench.py``, ``results/x.json`` beside ``folder``) and
    file names (``kernels.py``) inside ``spans`` of ``text`` that do not exist. A path starting with
    a top-level folder of the repository is taken from the root, one whose first part exists in
    ``folder`` from there; a bare file name must be a tracked file's name or exist in ``folder``.
    Patterns (``bench-<gpu>.json``, ``*.json``, ``{json,png}``) and ``../`` paths are not checked."""
    top, names = _tracked()
    missing = []
    for span in spans.findall(text):
        for token in re.split(r"[\s,;()=\"'\[\]]+", span):
            token = token.split("::")[0].rstrip(".:")  # test/test_x.py::test_name
            if (not token or _not_repo_file(token) or any(c in token for c in "<>*{}$|%~")
                    or token.startswith(("/", "-", "..", "http")) or "..." in token or "//" in token):
                continue
            if "/" in token:
                first = token.split("/")[0]
                base = REPO if first in top else folder if (folder / first).exists() and folder != REPO else None
                if base is not None and not (base / token).exists():
                    missing.append(token)
            elif _FILE_NAME.match(token) and token not in names and not (folder / token).exists():
                missing.append(token)
    return sorted(set(missing))


@pytest.mark.parametrize("path", _markdown_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_paths_named_in_docs_exist(path: Path) -> None:
    missing = missing_names(path.read_text(encoding="utf-8"), path.parent, re.compile(r"`([^`\n]+)`"))
    assert not missing, (f"{path.relative_to(REPO)} names {missing}, which do not exist; fix the name or, "
                         "if it is not a repository file, add it to NOT_REPO_FILES with the reason")


def _scripts() -> list[Path]:
    """Tracked Python files outside the tests (their docstrings and messages are user-facing)."""
    files = subprocess.run(["git", "ls-files", "*.py"], cwd=REPO, capture_output=True, text=True,
                           check=True).stdout.split()
    return [REPO / f for f in files if not f.startswith("tests/") and "/test/" not in f]


def test_paths_named_in_scripts_exist() -> None:
    top, _ = _tracked()
    broken = {}
    for path in _scripts():
        text = path.read_text(encoding="utf-8")
        # ``name.py`` in docstrings, and "passes/X/results/BENCHMARK.md" in strings and comments
        missing = missing_names(text, path.parent, re.compile(r"``([^`\n]+)``"))
        missing += [t for t in re.findall(r"(?<![\w/.])([A-Za-z_][\w\-]*/[\w.\-/]+\.[a-z]+)\b", text)
                    if t.split("/")[0] in top and _FILE_NAME.match(t) and not _not_repo_file(t)
                    and not (REPO / t).exists()]
        if missing:
            broken[str(path.relative_to(REPO))] = sorted(set(missing))
    assert not broken, f"scripts name files that do not exist: {broken}"


def test_missing_names_flags_what_is_not_there(tmp_path: Path) -> None:
    text = ("run `passes/LoopSplit/bench.py` and `passes/LoopSplit/nope.py`, read `kernels.py`, "
            "`causal_attention.py`, `results/bench-<gpu>.json`, `tools/explore/x.py`, `FILE.mlir`")
    assert missing_names(text, REPO / "passes" / "LoopSplit", re.compile(r"`([^`\n]+)`")) == [
        "causal_attention.py", "passes/LoopSplit/nope.py", "tools/explore/x.py"]


# --------------------------------------------------------------------------- #
# Every generated table equals what its generator makes from the committed JSON.
# --------------------------------------------------------------------------- #


def _block(text: str, begin: str, end: str) -> str:
    assert begin in text and end in text, f"markers {begin} ... {end} not found"
    return text.split(begin, 1)[1].split(end, 1)[0]


def test_reach_table_is_generated_from_its_json() -> None:
    from tests.realworld import gpu_table

    results = REPO / "docs" / "results.md"
    data_path = REPO / "tests" / "realworld" / "results" / "realworld-gpu-h200.json"
    table = gpu_table.render(json.loads(data_path.read_text(encoding="utf-8")),
                             os.path.relpath(data_path, results.parent))
    assert _block(results.read_text(encoding="utf-8"), gpu_table.BEGIN, gpu_table.END) == "\n" + table, (
        "docs/results.md's reach table differs from its JSON; run `python tests/realworld/gpu_table.py "
        "tests/realworld/results/realworld-gpu-h200.json --readme docs/results.md`")


def test_cpu_reach_table_is_generated_from_its_json() -> None:
    from tests.realworld import make_table

    data = json.loads((REPO / "tests" / "realworld" / "results" / "cpu-reach.json").read_text(encoding="utf-8"))
    assert (REPO / "tests" / "realworld" / "REACH.md").read_text(encoding="utf-8") == make_table.render(data), (
        "tests/realworld/REACH.md differs from results/cpu-reach.json; run "
        "`python tests/realworld/make_table.py tests/realworld/results/cpu-reach.json`")


def test_sanitizer_overhead_table_is_generated_from_its_json(tmp_path: Path) -> None:
    from tests.realworld import sanitizer_overhead

    readme = REPO / "passes" / "Sanitizers" / "README.md"
    copy = tmp_path / "README.md"
    copy.write_text(readme.read_text(encoding="utf-8"), encoding="utf-8")
    results = REPO / "tests" / "realworld" / "results"
    sanitizer_overhead.main([
        "--corpus", str(results / "realworld-san-h200.json"),
        "--bench", str(REPO / "passes" / "Sanitizers" / "results" / "bench-h200.json"),
        "--sites", str(results / "sanitizer-sites-cpu.json"), "--costs", str(results / "sanitizer-costs-cpu.json"),
        "--readme", str(copy)])  # exits 1 when a target is missed; the table is written either way
    generated = _block(copy.read_text(encoding="utf-8"), sanitizer_overhead.BEGIN, sanitizer_overhead.END)
    assert _block(readme.read_text(encoding="utf-8"), sanitizer_overhead.BEGIN, sanitizer_overhead.END) == generated, (
        "passes/Sanitizers/README.md's overhead table differs from its JSON; regenerate it with "
        "`python -m tests.realworld.sanitizer_overhead ... --readme passes/Sanitizers/README.md` "
        "(inputs as in this test)")


def test_reliability_gpu_rows_are_generated_from_their_json() -> None:
    """The GPU section of tests/reliability/RESULTS.md from its committed JSON. (The CPU sections'
    JSON is written into the build folder by the suite and not committed, so only this part of
    the file can be regenerated here.)"""
    from tests.reliability.reliability_table import read_sections, render

    sections = read_sections([REPO / "tests" / "corpus" / "results" / "corpus-gpu-h200.json"])
    assert [s.key for s in sections] == ["gpu"]
    lines = [ln for ln in render(sections).splitlines()
             if ln.startswith(("| ", "- **", "  ")) and not ln.startswith(("| **All", "| Area"))]
    committed = (REPO / "tests" / "reliability" / "RESULTS.md").read_text(encoding="utf-8").splitlines()
    missing = [ln for ln in lines if ln not in committed]
    assert len(lines) > 10 and not missing, (
        f"tests/reliability/RESULTS.md lacks these generated lines {missing}; run "
        "`python -m tests.reliability.reliability_table <section JSON> tests/corpus/results/corpus-gpu-h200.json`")


# Commits the docs cite that are not in the history, with the reason.
UNKEPT_COMMITS: dict[str, str] = {
    "6d7e970": "the temporary merge the GPU window of session 5 ran (gpu-s5w1: onchip20b 4834ae5 and "
               "others); not kept in the history, its parts are",
}


@pytest.mark.parametrize("path", _markdown_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_commits_cited_in_docs_exist(path: Path) -> None:
    if subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=REPO, capture_output=True,
                      text=True).stdout.strip() == "true":
        pytest.skip("shallow clone: older commits are not here to check")
    cited = {h for h in re.findall(r"\b[0-9a-f]{7,40}\b", path.read_text(encoding="utf-8"))
             if re.search(r"[a-f]", h) and re.search(r"[0-9]", h)}
    missing = sorted(h for h in cited - set(UNKEPT_COMMITS)
                     if subprocess.run(["git", "cat-file", "-e", f"{h}^{{commit}}"], cwd=REPO,
                                       capture_output=True).returncode != 0)
    assert not missing, (f"{path.relative_to(REPO)} cites commits {missing} that are not in the history; "
                         "cite a commit that is, or add it to UNKEPT_COMMITS with the reason")


def _json_numbers(doc: Any) -> Iterator[float]:
    if isinstance(doc, dict):
        for value in doc.values():
            yield from _json_numbers(value)
    elif isinstance(doc, list):
        for value in doc:
            yield from _json_numbers(value)
    elif isinstance(doc, (int, float)) and not isinstance(doc, bool):
        yield float(doc)


def _extension_rows(readme: str) -> list[list[str]]:
    table = readme.split("## Extensions", 1)[1].split("\n## ", 1)[0]
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in table.splitlines()
            if line.startswith("| [")]


def test_readme_extension_numbers_come_from_committed_results() -> None:
    """Each number in the README's extension table is in the results its row links: the generated
    summary (docs/results.md) and BENCHMARK.md of that extension, or a value of the linked JSON (or
    its reciprocal: "21x slower") rounded as written."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    summary = (REPO / "docs" / "results.md").read_text(encoding="utf-8")
    rows = _extension_rows(readme)
    assert len(rows) >= 8, rows
    unsupported = {}
    for row in rows:
        measured = row[-1]
        links = re.findall(r"\]\(([^)]+)\)", measured)
        assert links, f"README row {row[0]} links no results"
        texts, values = [], []
        for link in links:
            target = REPO / link
            if target.suffix == ".json":
                values += list(_json_numbers(json.loads(target.read_text(encoding="utf-8"))))
            else:
                texts.append(target.read_text(encoding="utf-8"))
                texts += [ln for ln in summary.splitlines() if f"(../{link})" in ln]
        found = set(re.findall(r"\d+(?:\.\d+)?", "\n".join(texts)))
        prose = re.sub(r"\([^()]*\]\([^)]*\)\)|`[^`]*`|sm_\d+|\d+-D", "", measured)
        for number in re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?=x|–|-)", prose):
            digits = len(number.split(".")[1]) if "." in number else 0
            rounded = {f"{v:.{digits}f}" for v in values} | {f"{1 / v:.{digits}f}" for v in values if v}
            if number not in found and number not in rounded:
                unsupported.setdefault(row[0], []).append(number)
    assert not unsupported, f"README extension table numbers not found in the results they link: {unsupported}"
