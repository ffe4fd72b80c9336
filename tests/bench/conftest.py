"""tests/bench: ``triton-ext bench`` on the CPU (real compiles through cubin) and its writers.

Kernels are compiled into a private Triton cache; plugins come from ``$TRITON_EXT_BUILD_DIR``
(default ``build/``), so ``triton-ext build loop_split`` must have run.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SPECS = Path(__file__).resolve().parent / "specs"
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

_TMP = Path(tempfile.mkdtemp(prefix="triton-ext-bench-tests-"))
os.environ.setdefault("TRITON_CACHE_DIR", str(_TMP / "triton-cache"))
os.environ.setdefault("TRITON_EXT_CACHE_DIR", str(_TMP / "preflight"))
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
os.environ.pop("TRITON_EXT_ENABLE", None)
