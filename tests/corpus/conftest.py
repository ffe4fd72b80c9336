"""The corpus shares the reliability suite's setup (caches, tallies, cleanup)."""

from __future__ import annotations

import sys
from pathlib import Path

_RELIABILITY = Path(__file__).resolve().parents[1] / "reliability"
if str(_RELIABILITY) not in sys.path:
    sys.path.insert(0, str(_RELIABILITY))

from reliability_conftest import *  # noqa: E402,F401,F403
