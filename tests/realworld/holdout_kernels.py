"""The hold-out set: third-party kernels that no pass, profitability rule or selection rule of this
project was tuned on, to measure the transparent mode where it has not been tuned
(``python -m benchmarks.auto_mode_gpu --set holdout``; ``auto_gpu_checks.sh holdout0|holdout1``).

Each part picks its kernels by a rule stated in its own docstring, written before any of them was
compiled with a pass or timed: holdout_fla_liger.py (flash-linear-attention's chunked linear
attention and Liger's training kernels), holdout_serving_gems.py (SGLang's and vLLM's serving
kernels, FlagGems' operators). Like the corpus, they come from the pinned packages, launched as
their launchers launch them; unlike it, they are not registered into ``REALWORLD``: the CPU corpus
tests, the pass benchmarks and the tuning runs never see them. Once a result of this set has been
used to change a pass or a rule, its kernels are no longer held out: move them into the corpus and
pick new ones.
"""

from __future__ import annotations

from tests.realworld.holdout_fla_liger import HOLDOUT_FLA_LIGER
from tests.realworld.holdout_serving_gems import HOLDOUT_SERVING_GEMS
from tests.realworld.realworld_kernels import RealKernel

__all__ = ["HOLDOUT"]

HOLDOUT: list[RealKernel] = [*HOLDOUT_FLA_LIGER, *HOLDOUT_SERVING_GEMS]
