"""Shared setup of the reliability suite, imported by the conftest.py of tests/reliability and tests/corpus.

The session is isolated by :mod:`triton_ext.testing.plugin` (private caches, no plugin enabled
from the environment, no entry-point fragments). Here: every test leaves no pass or hook behind,
and at the end of the session the tallies are written as JSON (see ``reliability_summary``).
"""

from __future__ import annotations

import sys
from typing import Iterator

import pytest

from tests.reliability import reliability_summary
from triton_ext.testing import repo_root

REPO = repo_root()

__all__ = ["REPO", "clean_triton_ext_reliability", "pytest_sessionfinish"]


@pytest.fixture(autouse=True)
def clean_triton_ext_reliability(clean_triton_ext: None) -> Iterator[None]:
    """Leave no globally enabled pass and no hook behind (``clean_triton_ext`` on every test)."""
    yield


_reported: set[str] = set()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # Both conftests (tests/corpus, tests/reliability) import this hook; writing is idempotent.
    for path in reliability_summary.write_all():
        if str(path) in _reported:
            continue
        _reported.add(str(path))
        print(f"\nreliability: wrote {path}", file=sys.stderr)
