"""Results name the code they measured: every committed ``results/*.json`` names at least one commit,
each commit it names is in this repository's history, and none was written from a checkout with
uncommitted changes. Files that cannot meet this are listed, with the reason, in
``tests/results-provenance-exceptions.txt`` (a stale entry fails too). The writers' side
(``triton_ext.bench.gpu.checkout_commit``) refuses a dirty checkout unless told to record the diff."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path
from typing import Any, Iterator

import pytest

from triton_ext.bench.gpu import DirtyCheckoutError, checkout_commit, checkout_state
from triton_ext.testing import repo_root

REPO = repo_root()
EXCEPTIONS = REPO / "tests" / "results-provenance-exceptions.txt"
_HASH = re.compile(r"\b[0-9a-f]{7,40}\b")
_DIFF = re.compile(r"\+diff\.[0-9a-f]+")


def _git(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60)


def _results_files() -> list[str]:
    out = _git("ls-files", "-z", "--", "*.json")
    if out.returncode != 0:
        pytest.skip(f"not a git checkout: {out.stderr.strip()}")
    return sorted(p for p in out.stdout.split("\0") if p and "results" in Path(p).parts[:-1])


def _exceptions() -> dict[str, str]:
    entries: dict[str, str] = {}
    for n, line in enumerate(EXCEPTIONS.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        path, sep, reason = line.partition(":")
        assert sep and reason.strip(), f"{EXCEPTIONS.name}:{n}: expected 'path: reason', got {line!r}"
        entries[path.strip()] = reason.strip()
    return entries


def _commit_fields(doc: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key in ("commit", "dirty"):
                yield key, value
            yield from _commit_fields(value)
    elif isinstance(doc, list):
        for item in doc:
            yield from _commit_fields(item)


def provenance_problems(path: Path) -> list[str]:
    """Why ``path`` does not record a clean commit of this repository (empty: it does)."""
    fields = list(_commit_fields(json.loads(path.read_text(encoding="utf-8"))))
    problems: list[str] = []
    commits = [str(v) for k, v in fields if k == "commit"]
    hashes = {h for c in commits for h in _HASH.findall(_DIFF.sub("", c))}
    if not hashes:
        problems.append(f"names no commit (commit fields: {commits or 'none'})")
    for h in sorted(hashes):
        if _git("cat-file", "-e", f"{h}^{{commit}}").returncode != 0:
            problems.append(f"names commit {h}, which is not in this repository's history")
    if any(v is True for k, v in fields if k == "dirty") or any(_DIFF.search(c) for c in commits):
        problems.append("was written from a checkout with uncommitted changes")
    return problems


def test_every_committed_result_names_a_clean_commit_in_the_history() -> None:
    if _git("rev-parse", "--is-shallow-repository").stdout.strip() == "true":
        pytest.skip("shallow clone: older commits are not here to check")
    files = _results_files()
    assert len(files) > 10, f"expected the committed results/*.json files, found {files}"
    allowed = _exceptions()
    unexplained = {}
    for rel in files:
        problems = provenance_problems(REPO / rel)
        if problems and rel not in allowed:
            unexplained[rel] = problems
    assert not unexplained, (
        "results that do not name a clean commit in the history (re-run from a clean commit, or add "
        f"'path: reason' to {EXCEPTIONS.relative_to(REPO)}):\n"
        + "\n".join(f"  {p}: {'; '.join(why)}" for p, why in unexplained.items()))
    stale = sorted(p for p in allowed if p not in files or not provenance_problems(REPO / p))
    assert not stale, f"{EXCEPTIONS.relative_to(REPO)} lists files that are gone or now fine: {stale}"


def _repo_with_one_commit(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["config", "user.email", "t@example.com"], ["config", "user.name", "t"]):
        assert _git(*args, cwd=repo).returncode == 0
    (repo / "kernel.py").write_text("x = 1\n")
    assert _git("add", "kernel.py", cwd=repo).returncode == 0
    assert _git("commit", "-q", "-m", "one", cwd=repo).returncode == 0
    return repo, _git("rev-parse", "HEAD", cwd=repo).stdout.strip()


def test_writer_refuses_a_dirty_checkout_and_records_the_diff_when_allowed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRITON_EXT_COMMIT", raising=False)
    monkeypatch.delenv("TRITON_EXT_ALLOW_DIRTY", raising=False)
    repo, head = _repo_with_one_commit(tmp_path)
    assert checkout_commit(repo=repo) == head
    assert checkout_state(repo=repo).dirty is False
    (repo / "untracked.txt").write_text("not part of the build\n")  # untracked files do not count
    assert checkout_commit(repo=repo) == head

    (repo / "kernel.py").write_text("x = 2\n")
    with pytest.raises(DirtyCheckoutError, match="uncommitted changes.*--allow-dirty"):
        checkout_commit(repo=repo)
    digest = hashlib.sha256(subprocess.run(["git", "diff", "HEAD", "--no-ext-diff", "--binary"], cwd=repo,
                                           capture_output=True, check=True).stdout).hexdigest()
    assert checkout_commit(repo=repo, allow_dirty=True) == f"{head}+diff.{digest[:12]}"
    monkeypatch.setenv("TRITON_EXT_ALLOW_DIRTY", "1")
    assert checkout_commit(repo=repo) == f"{head}+diff.{digest[:12]}"


def test_provenance_check_flags_dirty_missing_and_absent_commits(tmp_path: Path) -> None:
    head = _git("rev-parse", "HEAD").stdout.strip()
    cases = {
        "clean.json": ({"environment": {"commit": head, "dirty": False}}, []),
        "dirty.json": ({"environment": {"commit": head, "dirty": True}}, ["uncommitted"]),
        "diff.json": ({"commit": f"{head[:7]}+diff.0123456789ab"}, ["uncommitted"]),
        "missing.json": ({"commit": "deadbeefdeadbeef"}, ["not in this repository's history"]),
        "none.json": ({"commit": "HEAD"}, ["names no commit"]),
    }
    for name, (doc, expected) in cases.items():
        (tmp_path / name).write_text(json.dumps(doc))
        problems = provenance_problems(tmp_path / name)
        assert len(problems) == len(expected) and all(e in p for e, p in zip(expected, problems)), (name, problems)
