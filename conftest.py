"""Repository-wide pytest setup: every test module ends with no triton_ext pass enabled and
Triton's (single) stages hook empty, so the suite's order does not matter."""

from __future__ import annotations

import os
from typing import Iterator

import pytest

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")


def _reset_triton_ext() -> None:
    import sys

    if "triton_ext._stages" in sys.modules:
        from triton_ext import _stages

        _stages.disable()
        _stages.uninstall()
    if "triton" in sys.modules:
        from triton import knobs

        knobs.runtime.add_stages_inspection_hook = None


@pytest.fixture(scope="module", autouse=True)
def _isolated_triton_ext_state() -> Iterator[None]:
    # Reset after each module (its own fixtures tear down first), so a module's enabled passes
    # and hooks never leak into the next one; within a module, tests manage their own state.
    yield
    _reset_triton_ext()
