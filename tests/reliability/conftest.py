"""Setup of tests/reliability: see ``reliability_conftest``."""

from __future__ import annotations

import sys
from pathlib import Path

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from reliability_conftest import *  # noqa: E402,F401,F403
