"""Shared paths for the C++-side tests (toolchain, build rules, ABI probe, fixture plugins).

Each compiles real code with the project toolchain and runs it inside the stock triton wheel.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
BUILD = Path(os.environ.get("TRITON_EXT_BUILD_DIR") or REPO / "build")
TEST_PLUGINS = BUILD / "test-plugins"
