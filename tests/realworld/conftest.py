"""The real-world corpus shares the reliability suite's setup (caches, tallies, cleanup)."""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_RELIABILITY = _HERE.parents[0] / "reliability"
for _path in (_RELIABILITY, _HERE):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from reliability_conftest import *  # noqa: E402,F401,F403
