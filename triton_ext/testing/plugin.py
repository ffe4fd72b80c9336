"""The pytest plugin of :mod:`triton_ext.testing` (``pytest_plugins = ["triton_ext.testing.plugin"]``
in the repository's root ``conftest.py``; an extension repository's conftest does the same).

At import, before any test module imports Triton, the session is isolated
(:func:`~triton_ext.testing.isolate_environment`). Fixtures:

- ``fresh_cache``: a private Triton kernel cache for one test.
- ``clean_triton_ext``: after the test, no enabled pass, and the hook slot, triton_ext's hook and
  tap as the test found them (autouse where a suite wants it per test; the plugin itself resets
  after every module, so order never matters).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from . import isolate_environment, reset, use_fresh_cache

SESSION_TMP = isolate_environment()


def _serialize_ast_parse() -> None:
    """Make ``ast.parse`` safe to call from several threads at once.

    CPython 3.11's AST constructor keeps its recursion depth in interpreter-wide state: two threads
    parsing at once fail with ``SystemError: AST constructor recursion depth mismatch`` (seen here
    on 3.11.7 in Triton's ``JITFunction.parse`` during the concurrent-compile and autotune tests,
    in about half of the full runs). Applied below 3.13 to be safe. Triton parses every kernel's
    source with ``ast.parse``, so tests that compile on several threads serialize that call; the
    rest of the compile stays concurrent.
    """
    import ast
    import sys
    import threading

    if sys.version_info >= (3, 13) or getattr(ast.parse, "_triton_ext_serialized", False):
        return
    original = ast.parse
    lock = threading.Lock()

    def parse(*args, **kwargs):  # type: ignore[no-untyped-def]
        with lock:
            return original(*args, **kwargs)

    parse._triton_ext_serialized = True  # type: ignore[attr-defined]
    parse.__wrapped__ = original  # type: ignore[attr-defined]
    ast.parse = parse


_serialize_ast_parse()


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Compile from scratch in this test, so the IR read back is this run's."""
    return use_fresh_cache(tmp_path / "triton-cache", monkeypatch)


@pytest.fixture
def clean_triton_ext() -> Iterator[None]:
    """Leave no enabled pass behind, and Triton's hook slot, triton_ext's hook and its tap exactly
    as they were before the test (installed or not, over the same earlier hook)."""
    from .. import _triton

    before = _triton.save()
    yield
    reset()
    _triton.restore(before)


@pytest.fixture(scope="module", autouse=True)
def _triton_ext_module_isolation() -> Iterator[None]:
    # After each module (its own fixtures tear down first): a module's enabled passes and hooks
    # never leak into the next one; within a module, tests manage their own state.
    yield
    reset()
