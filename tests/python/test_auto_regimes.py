"""benchmarks/auto_mode_regimes.py on the committed corpus run, and the numbers the transparent
mode's documentation quotes from it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from benchmarks.auto_mode_regimes import LAUNCH_BOUND, compare, main, replaced, split
from triton_ext.testing import repo_root

REPO = repo_root()
SHARDS = [REPO / "benchmarks" / "results" / f"auto-mode-all{i}-h200.json" for i in range(4)]
#: The whole corpus again on an H100 (no H200 was lent), the latest run (6cd40cc).
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


def test_a_comparison_lists_what_moved_and_how_the_hosts_launch_path_moved() -> None:
    earlier = [_row("decode", 6.0, 20.0, 1.0), _row("attention", 300.0, 302.0, 1.25), _row("gemm", 300.0, 300.0, 1.0),
               _row("gone", 300.0, 300.0, 1.0), {"kernel": "broken", "error": "x"}]
    earlier[1]["choice"] = "nvidia_pipeline_deeper"
    rows = [_row("decode", 6.0, 30.0, 1.01), _row("attention", 300.0, 303.0, 1.0), _row("gemm", 300.0, 309.0, 1.05),
            {"kernel": "broken", "error": "x"}]
    rows[2]["choice"] = "num_warps/2"
    c = compare(rows, earlier)
    assert c.common == 3  # the kernel with an error and the one only the earlier run has are left out
    assert [(m.kernel, m.old_choice, m.new_choice) for m in c.moved] == [
        ("attention", "nvidia_pipeline_deeper", ""), ("gemm", "", "num_warps/2")]  # largest move first; decode: 1%
    assert (c.launch_bound.kernels, c.launch_bound.median, c.launch_bound.within) == (1, 1.5, 0)
    assert (c.gpu_bound.kernels, c.gpu_bound.low, c.gpu_bound.high, c.gpu_bound.within) == (2, 303.0 / 302.0, 1.03, 1)
    assert c.geomean_old == pytest.approx(1.25 ** (1 / 3)) and c.geomean_new == pytest.approx((1.01 * 1.05) ** (1 / 3))
    with pytest.raises(ValueError, match="no kernel in common"):
        compare(rows, [_row("other", 1.0, 1.0, 1.0)])


def _committed(commit: str, name: str) -> list[dict]:
    """The corpus run as ``commit`` committed it (``benchmarks/results/auto-mode-{name}{0..3}-h100.json``)."""
    try:
        return [json.loads(subprocess.run(["git", "show", f"{commit}:benchmarks/results/auto-mode-{name}{i}-h100.json"],
                                          cwd=REPO, check=True, capture_output=True, text=True).stdout)
                for i in range(4)]
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"the earlier runs need this repository's git history: {exc}")


def test_the_documented_comparison_with_the_run_before_is_the_committed_files(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # The run before (114ac4b's) is the four files as 92f8d7a committed them, before this run replaced them.
    earlier = _committed("92f8d7a", "all")
    assert {e["commit"] for e in earlier} == {"114ac4b"}
    rows = [row for p in SHARDS_H100 for row in json.loads(p.read_text())["rows"]]
    c = compare(rows, [row for e in earlier for row in e["rows"]])
    lb, gb = c.launch_bound, c.gpu_bound
    doc = _doc()
    for text in (f"{lb.kernels} launch-bound kernels was {lb.low:.2f}-{lb.high:.2f}x their time there, median "
                 f"{lb.median:.2f}x", f"{gb.kernels} GPU-bound kernels', median {gb.median:.2f}x, {gb.within} within 2%",
                 f"**1.031x** (114ac4b: {c.geomean_old:.3f}x)"):
        assert text in doc, text
    assert {m.kernel for m in c.moved} == {"liger_mm_int8int2", "vllm_unified_decode_3d", "sage_attn_prefill",
                                           "fla_logsumexp_fwd", "attention_bwd_causal"}
    assert c.geomean_new == pytest.approx(split(rows).geomean_all)
    # The documented "would read 1.027x": the run before with the int8 GEMM at this run's ratio.
    int8 = next(r for r in rows if r["kernel"] == "liger_mm_int8int2")["b2b_speedup"]
    before = [row for e in earlier for row in e["rows"]]
    with_gemm = [dict(r, b2b_speedup=int8) if r["kernel"] == "liger_mm_int8int2" else r for r in before]
    assert f"with it at {int8:.3f}x would read {split(with_gemm).geomean_all:.3f}x" in doc
    paths = [tmp_path / f"earlier{i}.json" for i in range(4)]
    for path, e in zip(paths, earlier):
        path.write_text(json.dumps(e))
    assert main([str(p) for p in SHARDS_H100] + ["--against"] + [str(p) for p in paths]) == 0
    printed = capsys.readouterr().out
    assert f"was {c.geomean_old:.3f}x" in printed and "1.000x -> 1.820x  (no pass) -> nvidia_integer_mma_wrap+num_warps/2" in printed


def test_the_comparison_of_the_run_before_with_its_own_predecessor_stays_in_the_history() -> None:
    # 114ac4b's run (as 92f8d7a committed it) against 01ea787's (as 114ac4b committed it).
    runs = _committed("92f8d7a", "all"), _committed("114ac4b", "all")
    assert [{e["commit"] for e in run} for run in runs] == [{"114ac4b"}, {"01ea787"}]
    rows, earlier = ([row for e in run for row in e["rows"]] for run in runs)
    c = compare(rows, earlier)
    lb, gb = c.launch_bound, c.gpu_bound
    doc = _doc("transparent-mode-history.md")
    for text in (f"{lb.kernels} launch-bound kernels was {lb.low:.2f}-{lb.high:.2f}x their time at 01ea787 "
                 f"(median {lb.median:.2f}x)", f"{gb.kernels} GPU-bound kernels', median {gb.median:.2f}x, "
                 f"{gb.within} within 2%", f"**1.020x** (01ea787: {c.geomean_old:.3f}x)"):
        assert text in doc, text
    assert {m.kernel for m in c.moved} == {"vllm_unified_decode_3d", "sage_attn_prefill", "fla_logsumexp_fwd"}
