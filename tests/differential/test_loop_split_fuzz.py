"""A fixed-seed slice of the LoopSplit composition fuzzer (issue 26, Deliver 2).

fuzz_loop_split.py composes the analysis' features at random and checks every kernel the pass
changes against the unsplit one with the interpreter on boundary-weighted arguments; its long
run is a script (results in results/fuzz-loop-split.json). Here 1,200 kernels of seed 26
(about 20 s of CPU): no mismatch, and the slice must keep reaching the features, so a generator
that stopped producing kernels the pass splits would fail.
"""

from __future__ import annotations

import json

import pytest

from tests.differential.fuzz_loop_split import run

SLICE = 1200
SEED = 26

# Feature values that the pass leaves alone by design (i8/i16 loops, `scf.for unsigned`).
DECLINED = {("width", "i8"), ("width", "i16"), ("loop", "unsigned")}


@pytest.fixture(scope="module")
def summary():
    return run(SLICE, SEED)


def test_slice_has_no_mismatch(summary):
    assert summary.unsupported == 0, summary.mismatches[:3]
    if summary.mismatches:
        pytest.fail(f"{len(summary.mismatches)} of {summary.count} kernels differ with and "
                    f"without loop_split; first:\n{json.dumps(summary.mismatches[0], indent=1)}",
                    pytrace=False)


def test_slice_reaches_the_features(summary):
    assert summary.count == SLICE
    assert summary.changed >= SLICE * 0.4, summary.plans
    assert summary.lanes >= summary.changed * 100
    for name, values in summary.features_drawn.items():
        for value in values:
            if (name, value) in DECLINED:
                assert summary.features_changed.get(name, {}).get(value, 0) == 0
                continue
            assert summary.features_changed.get(name, {}).get(value, 0) > 0, \
                f"no kernel with {name}={value} was changed by the pass in the slice"
    assert any("3 loops, guarded" in plan for plan in summary.plans), summary.plans
    assert any("2 loops, guarded" in plan for plan in summary.plans), summary.plans
