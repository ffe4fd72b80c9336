"""benchmarks/auto_mode_regimes.py on the committed corpus run, and the numbers the transparent
mode's documentation quotes from it."""

from __future__ import annotations

import json

import pytest

from benchmarks.auto_mode_regimes import LAUNCH_BOUND, main, replaced, split
from triton_ext.testing import repo_root

REPO = repo_root()
SHARDS = [REPO / "benchmarks" / "results" / f"auto-mode-all{i}-h200.json" for i in range(4)]
#: The whole corpus again on an H100 (no H200 was lent), the latest run (114ac4b).
SHARDS_H100 = [REPO / "benchmarks" / "results" / f"auto-mode-all{i}-h100.json" for i in range(4)]


def _doc(page: str = "transparent-mode.md") -> str:
    """A page of the transparent mode's documentation as prose (line breaks aside). The current run
    is quoted in transparent-mode.md, the H200 run and the estimate in the history page."""
    return " ".join((REPO / "docs" / page).read_text().split())


def _row(kernel: str, gpu_us: float, b2b_us: float, speedup: float) -> dict:
    return {"kernel": kernel, "stock_ms": gpu_us / 1e3, "b2b_stock_us": b2b_us, "b2b_speedup": speedup}


def test_a_kernel_launched_faster_than_the_cpu_can_issue_is_launch_bound() -> None:
    rows = [_row("decode", 6.0, 20.0, 1.0), _row("attention", 300.0, 302.0, 1.2),
            _row("edge", 8.0, 8.0 * LAUNCH_BOUND + 0.01, 1.0), _row("short", 8.0, 8.0 * LAUNCH_BOUND - 0.01, 1.0), {"kernel": "broken", "error": "x"}]
    r = split(rows)
    assert r.launch_bound == ["decode", "edge"] and r.gpu_bound == ["attention", "short"]
    assert r.geomean_gpu_bound == pytest.approx(1.2**0.5)
    # 4 kernels to 1.1x with two pinned at 1.0x: the other two need 1.1^2 between them.
    assert r.gpu_bound_needed(1.1) == pytest.approx(1.1**2)


def test_the_documented_split_is_the_committed_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(p) for p in SHARDS]) == 0
    out = capsys.readouterr().out
    r = split([row for p in SHARDS for row in json.loads(p.read_text())["rows"]])
    doc = _doc("transparent-mode-history.md")
    quoted = (f"{len(r.launch_bound)} of the {len(r.launch_bound) + len(r.gpu_bound)} kernels are launch-bound",
              f"geomean {r.geomean_launch_bound:.3f}x", f"{len(r.gpu_bound)} GPU-bound kernels read "
              f"{r.geomean_gpu_bound:.3f}x", f"would need {r.gpu_bound_needed(1.03):.3f}x")
    for text in quoted:
        assert text in doc, text
    assert f"would need {r.gpu_bound_needed(1.03):.3f}x" in out


def test_replace_swaps_only_kernels_of_the_corpus_and_the_documented_estimate_is_the_committed_files(
        capsys: pytest.CaptureFixture[str]) -> None:
    rows = [_row("a", 300.0, 301.0, 1.0), _row("b", 300.0, 301.0, 1.0)]
    out, swapped = replaced(rows, [_row("b", 300.0, 301.0, 1.21), _row("new", 300.0, 301.0, 2.0)])
    assert [r["kernel"] for r in out] == ["a", "b"] and out[1]["b2b_speedup"] == 1.21 and swapped == ["b"]
    later = [REPO / "benchmarks" / "results" / f"auto-mode-pipeline-deeper{i}-h100.json" for i in range(2)]
    assert main([str(p) for p in SHARDS] + ["--replace"] + [str(p) for p in later]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("ESTIMATE: 22 kernels' rows")
    estimate = split(replaced([row for p in SHARDS for row in json.loads(p.read_text())["rows"]],
                              [row for p in later for row in json.loads(p.read_text())["rows"]])[0]).geomean_all
    history = _doc("transparent-mode-history.md")
    assert f"(the deeper runs' H100 rows in the H200 run, `--replace`) gave {estimate:.3f}x" in history
    assert f"geomean {estimate:.3f}x" in printed


def test_the_documented_h100_run_is_the_committed_files(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(p) for p in SHARDS_H100]) == 0
    r = split([row for p in SHARDS_H100 for row in json.loads(p.read_text())["rows"]])
    doc = _doc()
    for text in (f"back to back **{r.geomean_all:.3f}x**", f"{len(r.launch_bound)} launch-bound kernels at "
                 f"{r.geomean_launch_bound:.3f}x", f"{len(r.gpu_bound)} GPU-bound at {r.geomean_gpu_bound:.3f}x",
                 f"would need {r.gpu_bound_needed(1.03):.3f}x on the GPU-bound ones"):
        assert text in doc, text
    assert f"geomean {r.geomean_all:.3f}x" in capsys.readouterr().out
