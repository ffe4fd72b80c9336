"""End-to-end CPU test of @@snake@@: a real kernel compiled through cubin with the pass enabled.

No GPU is needed: triton.compile with a GPUTarget runs ttir -> ttgir -> llir -> ptx -> cubin with
the wheel's ptxas. The pass runs where registry.yaml places it (end of make_ttir).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from triton_ext.bench import check_cpu, load_spec
from triton_ext.testing import compile_through_cubin, import_file, require_built

kernels = import_file(__file__, "../kernels.py")
require_built("@@snake@@")  # an unbuilt plugin fails, never skips
pytestmark = pytest.mark.usefixtures("fresh_cache")  # compile from scratch: the IR read back is this run's

ATTR = "triton_ext.@@snake@@.loops"


def _compile(enabled: bool, **options):
    passes = ("@@snake@@",) if enabled else ()
    return compile_through_cubin(kernels.row_sum_kernel, kernels.SIGNATURE, {"BLOCK": 128},
                                 passes=passes, pass_options=options)


def test_tags_the_kernel_and_reaches_cubin() -> None:
    kernel = _compile(enabled=True)
    assert f"{ATTR} = 1 : i64" in kernel.asm["ttir"]


def test_off_by_default() -> None:
    assert ATTR not in _compile(enabled=False).asm["ttir"]


def test_min_loops_declines() -> None:
    assert ATTR not in _compile(enabled=True, **{"min-loops": 2}).asm["ttir"]


def test_bench_spec_cpu_check() -> None:
    # What `triton-ext bench --cpu @@snake@@` runs: every variant compiles through cubin with and
    # without the pass, and the pass variant's IR carries the tag.
    checks = check_cpu(load_spec(Path(__file__).resolve().parents[1] / "bench.py"), log=lambda s: None)
    assert [(c.variant, c.ok, c.problem) for c in checks] == [
        ("row_sum", True, None), ("row_sum+@@snake@@", True, None)]
