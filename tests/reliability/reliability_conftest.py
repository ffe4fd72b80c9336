"""Shared setup of the reliability suite, imported by the conftest.py of tests/reliability and tests/corpus.

Before Triton is imported: a private kernel cache and preflight cache, no plugin enabled
from the environment, no entry-point fragments. At the end of the session the tallies
are written as JSON (see ``reliability_summary``).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
for path in (REPO, HERE, REPO / "tests" / "corpus"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

_TMP = Path(tempfile.mkdtemp(prefix="triton-ext-reliability-"))
os.environ.setdefault("TRITON_CACHE_DIR", str(_TMP / "triton-cache"))
os.environ.setdefault("TRITON_EXT_CACHE_DIR", str(_TMP / "preflight"))
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
os.environ.pop("TRITON_EXT_ENABLE", None)
os.environ.pop("TRITON_EXT_STRICT", None)
os.environ["TRITON_EXT_ENTRY_POINTS"] = "0"

import reliability_summary  # noqa: E402

__all__ = ["REPO", "clean_triton_ext_reliability", "pytest_sessionfinish"]


@pytest.fixture(autouse=True)
def clean_triton_ext_reliability() -> Iterator[None]:
    """Leave no globally enabled pass and no hook behind."""
    from triton import knobs

    before = knobs.runtime.add_stages_inspection_hook
    yield
    import triton_ext
    from triton_ext import _stages

    _stages.disable()
    triton_ext.uninstall()
    knobs.runtime.add_stages_inspection_hook = before


_reported: set[str] = set()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # Both conftests (tests/corpus, tests/reliability) import this hook; writing is idempotent.
    for path in reliability_summary.write_all():
        if str(path) in _reported:
            continue
        _reported.add(str(path))
        print(f"\nreliability: wrote {path}", file=sys.stderr)
