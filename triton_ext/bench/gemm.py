"""What the GEMM benchmarks share: their inputs and their TFLOP/s metric.

A bench spec of a ``C = A @ B`` kernel (parameters ``M``, ``N``, ``K``) takes its tensors from
:func:`gemm_inputs` and its metric from :data:`GEMM_TFLOPS`.
"""

from __future__ import annotations

import math
from typing import Any

from .spec import Case, Metric


def gemm_inputs(m: int, n: int, k: int, dtype: Any, device: Any, generator: Any) -> dict[str, Any]:
    """``a`` (m x k), ``b`` (k x n) from ``generator`` and an empty ``c`` (m x n), all ``dtype``.

    A is scaled by 1/sqrt(K): C has unit variance at every K, so one absolute tolerance fits all
    shapes (fp16 output rounding stays below 4e-3 for |C| < 8)."""
    import torch

    a = (torch.randn(m, k, device=device, generator=generator) / math.sqrt(k)).to(dtype)
    b = torch.randn(k, n, device=device, generator=generator).to(dtype)
    return {"a": a, "b": b, "c": torch.empty(m, n, device=device, dtype=dtype)}


def _flops(case: Case) -> float:
    p = case.params
    return 2.0 * p["M"] * p["N"] * max(p["K"], 0)  # an empty or reversed k range does no work


#: ``2 * M * N * K`` flops per call, as TFLOP/s.
GEMM_TFLOPS = Metric("TFLOP/s", _flops, "2 * M * N * K")
