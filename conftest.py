"""Repository-wide pytest setup: every test starts and ends with no triton_ext pass enabled and
Triton's (single) stages hook empty, whatever order the suite runs in."""

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


@pytest.fixture(autouse=True)
def _isolated_triton_ext_state() -> Iterator[None]:
    _reset_triton_ext()
    yield
    _reset_triton_ext()
