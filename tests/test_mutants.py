"""The mutation list stays applicable and its committed run killed every mutant.

``tools/mutate.py`` (see tests/mutation/README.md) is slow, so the suite does not run it; these
checks keep its inputs and its last committed result honest: a mutant whose code moved is caught
here, not at the next mutation run, and a mutant added without a run (or that survived) fails.
"""

from __future__ import annotations

import json

import pytest

from triton_ext.testing import import_file, repo_root

REPO = repo_root()
mutate = import_file(REPO / "tools" / "mutate.py")
MUTANTS = mutate.load_mutants()


def test_there_are_mutants_for_each_suite() -> None:
    assert MUTANTS.mutants
    assert {m.extension for m in MUTANTS.mutants} == set(MUTANTS.suites)


@pytest.mark.parametrize("mutant", MUTANTS.mutants, ids=lambda m: m.id)
def test_mutant_applies_to_the_current_source(mutant) -> None:
    text = (REPO / mutant.file).read_text(encoding="utf-8")
    assert text.count(mutant.old) == 1, (
        f"{mutant.id}: its old text occurs {text.count(mutant.old)} times in {mutant.file}; "
        "update tests/mutation/mutants.yaml to the current source")
    suite = MUTANTS.suites[mutant.extension]
    missing = [p for p in (*suite.lit, *suite.pytest, *mutant.pytest) if not (REPO / p).exists()]
    assert not missing, f"{mutant.id}: suite paths that do not exist: {missing}"


def test_committed_run_killed_every_listed_mutant() -> None:
    path = REPO / "tests" / "mutation" / "results.json"
    assert path.is_file(), "no committed mutation run: python tools/mutate.py writes it"
    run = json.loads(path.read_text(encoding="utf-8"))
    outcomes = {m["id"]: m["outcome"] for m in run["mutants"]}
    listed = [m.id for m in MUTANTS.mutants]
    assert sorted(outcomes) == sorted(listed), (
        f"results.json is not a run of the current list: not run {sorted(set(listed) - set(outcomes))}, "
        f"no longer listed {sorted(set(outcomes) - set(listed))}")
    not_killed = {k: v for k, v in outcomes.items() if v != "killed"}
    assert not not_killed, f"mutants not killed in the committed run ({run['commit'][:12]}): {not_killed}"
