"""The README's main command runs examples/demo.py: it must keep working and keep showing the
split (it exits non-zero when loop_split does not split the attention loop)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from triton_ext.testing import repo_root

REPO = repo_root()


def test_demo_shows_the_split(tmp_path: Path) -> None:
    env = {**os.environ, "TRITON_CACHE_DIR": str(tmp_path), "TRITON_DEFAULT_FP_FUSION": "1"}
    env.pop("TRITON_EXT_ENABLE", None)
    res = subprocess.run([sys.executable, str(REPO / "examples" / "demo.py")], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    assert ("triton-ext-loop-split{guarded-mask=true max-parts=3 max-tail-step=16384 max-tile-elements=32768 "
            "min-unmasked-trips=3") in res.stdout
    assert "loop 1: unmasked" in res.stdout and "loop 2: MASKED" in res.stdout
