"""``triton-ext tune`` (issue 19.3) on the CPU: which candidates apply to a bench spec's kernel
(real compiles through cubin for sm_90), candidates from --candidates and --sweep, errors.
Timing the candidates needs a GPU (same command without --cpu)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from triton_ext.dev.cli import main

from triton_ext.testing import require_built


@pytest.fixture(autouse=True)
def _built() -> None:
    require_built("grid_swizzle", "loop_split")  # an unbuilt plugin fails the test, never skips it


def test_tune_cpu_reports_applicable_candidates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "tune.json"
    assert main(["tune", "grid_swizzle", "--cpu", "--quick", "--candidates", "grid_swizzle,loop_split",
                 "--sweep", "grid_swizzle.group-size=4,16", "--out", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert [(r["kernel"], r["params"]) for r in rows] == [("naive", {"M": 4096, "N": 4096, "K": 4096})]
    # grid_swizzle renumbers the naive GEMM's programs; loop_split finds no loop to split there.
    assert rows[0]["applicable"] == {"loop_split": False, "grid_swizzle{group-size=4}": True,
                                     "grid_swizzle{group-size=16}": True}
    assert rows[0]["candidates"] == ["grid_swizzle{group-size=4}", "grid_swizzle{group-size=16}"]
    assert "applicable ['grid_swizzle{group-size=4}', 'grid_swizzle{group-size=16}']" in capsys.readouterr().out


def test_tune_pairs_applicable_passes(tmp_path: Path) -> None:
    from triton_ext.dev.tune import Candidate, _with_pairs

    pairs = _with_pairs([Candidate(("a",)), Candidate(("b",)), Candidate(("c",), (("x", 1),))])
    assert [c.label for c in pairs] == ["a", "b", "c{x=1}", "a+b"]


def test_tune_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tune", "grid_swizzle", "--cpu", "--sweep", "grid_swizzle=4"]) == 1
    assert "expected PASS.FLAG=V1,V2" in capsys.readouterr().err
    assert main(["tune", "grid_swizzle", "--cpu", "--candidates", "grid_swizle"]) == 1
    assert "did you mean 'grid_swizzle'" in capsys.readouterr().err
    assert main(["tune", "grid_swizzle", "--cpu", "--sweep", "grid_swizzle.group-sise=4"]) == 1
    assert "did you mean 'group-size'" in capsys.readouterr().err


def test_tune_best_must_beat_no_pass_by_more_than_the_spread() -> None:
    from triton_ext.dev.tune import _best

    def row(label: str, ms: float, spread: float, ok: bool = True) -> dict:
        return {"candidate": label, "passes": {} if label == "no pass" else {label: {}}, "ms": ms, "spread": spread,
                "ok": ok}

    # 2% faster, but both timings spread over 4%: noise, no pass is the best.
    assert _best([row("no pass", 1.0, 0.04), row("a", 0.98, 0.01)])["candidate"] == "no pass"
    # 5% faster with 2% spreads: a real win; a faster but wrong candidate never wins.
    assert _best([row("no pass", 1.0, 0.02), row("a", 0.95, 0.02), row("b", 0.5, 0.0, ok=False)])["candidate"] == "a"
