"""tests/bench: ``triton-ext bench`` on the CPU (real compiles through cubin) and its writers.

Kernels are compiled into a private Triton cache; plugins come from ``$TRITON_EXT_BUILD_DIR``
(default ``build/``), so ``triton-ext build loop_split`` must have run.
"""

from __future__ import annotations

from pathlib import Path

from triton_ext.testing import repo_root

REPO = repo_root()
SPECS = Path(__file__).resolve().parent / "specs"

