"""``triton-ext bench --compare`` (issue 19.6): the regression gate over bench-<gpu>.json files.

The baseline is a committed H200 report (passes/GridSwizzle/results/bench-h200.json); the "current" files
are that report with some results' timing rounds scaled, written back with the bench's own
``write_json`` (time, spread and metric recomputed from the rounds the way the bench does).
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from triton_ext import bench
from triton_ext.dev.cli import main
from triton_ext.testing import repo_root

REPO = repo_root()
COMMITTED = REPO / "passes" / "GridSwizzle" / "results" / "bench-h200.json"


def _scaled(report: dict[str, Any], variant: str, factor: float, where: int = 0) -> dict[str, Any]:
    """``report`` with the ``where``-th result of ``variant`` timed ``factor`` times slower."""
    out = copy.deepcopy(report)
    hits = [r for r in out["results"] if r["variant"] == variant and r.get("ms")]
    r = hits[where]
    old_ms = r["ms"]
    r["ms_rounds"] = [ms * factor for ms in r["ms_rounds"]]
    r["ms"] = sorted(r["ms_rounds"])[len(r["ms_rounds"]) // 2]
    r["spread"] = (max(r["ms_rounds"]) - min(r["ms_rounds"])) / r["ms"]
    r["metric"] = r["metric"] * old_ms / r["ms"]
    return out


def _write(tmp: Path, name: str, report: dict[str, Any]) -> Path:
    return bench.write_json(report, tmp / name / "passes" / "GridSwizzle" / "results" / "bench-h200.json")


def test_regression_beyond_spread_fails_and_within_spread_passes(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    committed = json.loads(COMMITTED.read_text())
    target = next(r for r in committed["results"] if r["variant"] == "naive+grid_swizzle")
    spread = target["spread"]
    assert 0 < spread < 0.2
    # Slower by twice the committed spread (the scaled rounds keep the same relative spread, so the
    # allowed drop is 2 * spread): beyond it.
    slow = _write(tmp_path, "slow", _scaled(committed, "naive+grid_swizzle", 1 + 4 * spread))
    # Slower by half the spread: noise.
    noisy = _write(tmp_path, "noisy", _scaled(committed, "naive+grid_swizzle", 1 + 0.5 * spread))
    fast = _write(tmp_path, "fast", _scaled(committed, "naive+grid_swizzle", 0.5))

    assert main(["bench", "--compare", str(COMMITTED), "--current", str(slow)]) == 1
    out = capsys.readouterr().out
    assert out.count("regressed") == 1 and "naive+grid_swizzle" in out and "1 regression(s)" in out
    assert main(["bench", "--compare", str(COMMITTED), "--current", str(noisy)]) == 0
    assert "0 regression(s)" in capsys.readouterr().out
    assert main(["bench", "--compare", str(COMMITTED), "--current", str(fast)]) == 0
    assert "improved" in capsys.readouterr().out
    # Folders (what the workflow passes): paired by spec and file name; Markdown for the summary.
    assert main(["bench", "--compare", str(tmp_path / "noisy"), "--current", str(tmp_path / "slow"),
                 "--markdown"]) == 1
    md = capsys.readouterr().out
    assert md.startswith("### Benchmark comparison: 1 regression(s) in 12 result(s)")
    assert "| grid_swizzle | bench-h200.json | naive+grid_swizzle |" in md and "**REGRESSED**" in md
    # --tolerance widens the allowed drop.
    assert main(["bench", "--compare", str(COMMITTED), "--current", str(slow), "--tolerance", "0.5"]) == 0


def test_wrong_output_fails_and_missing_results_are_listed(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    committed = json.loads(COMMITTED.read_text())
    wrong = copy.deepcopy(committed)
    wrong["results"][0]["ok"] = False
    partial = copy.deepcopy(committed)
    dropped = partial["results"].pop()
    assert main(["bench", "--compare", str(COMMITTED), "--current", str(_write(tmp_path, "w", wrong))]) == 1
    assert "wrong" in capsys.readouterr().out
    assert main(["bench", "--compare", str(COMMITTED), "--current", str(_write(tmp_path, "p", partial))]) == 0
    out = capsys.readouterr().out
    assert f"missing   grid_swizzle {dropped['variant']}" in out


def test_bad_input_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bench-h200.json"
    bad.write_text('{"not": "a report"}')
    assert main(["bench", "--compare", str(bad), "--current", str(COMMITTED)]) == 1
    assert "not a bench report" in capsys.readouterr().err
    assert main(["bench", "--compare", str(tmp_path / "nope.json")]) == 1
    assert "no such file or folder" in capsys.readouterr().err
    other = REPO / "passes" / "LoopSplit" / "results" / "bench-h200.json"
    assert main(["bench", "--compare", str(COMMITTED), "--current", str(other)]) == 1
    assert "is spec 'grid_swizzle' but" in capsys.readouterr().err


def test_workflow_gates_on_the_comparison() -> None:
    workflow = (REPO / ".github" / "workflows" / "gpu-bench.yml").read_text()
    assert "bench --compare" in workflow and "GITHUB_STEP_SUMMARY" in workflow
