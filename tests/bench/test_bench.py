"""``triton-ext bench``: the CPU check CI runs, a spec whose pass does nothing, and the writers."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from triton_ext import TritonExtError
from triton_ext import bench as _bench
from triton_ext.bench import BenchSpec, Case, Target, Timing, Variant

from triton_ext.testing import repo_root

REPO = repo_root()
SPECS = Path(__file__).resolve().parent / "specs"


def test_cpu_check_of_loop_split_passes() -> None:
    # What CI runs (quick subset: fp16, head dims 64 and 128), as a separate process.
    proc = subprocess.run([sys.executable, "-m", "triton_ext", "bench", "--cpu", "--quick", "loop_split"],
                          capture_output=True, text=True, cwd=REPO, env=dict(os.environ), timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "10/10 kernel combination(s) ok" in proc.stdout, proc.stdout
    assert "tensor+loop_split" in proc.stdout and "scalar+loop_split" in proc.stdout


def test_spec_whose_pass_changes_the_ir_passes() -> None:
    checks = _bench.check_cpu(_bench.load_spec(SPECS / "split_scalar" / "bench.py"), log=lambda s: None)
    assert [(c.variant, c.ok) for c in checks] == [("plain", True), ("split", True)], checks


def test_spec_whose_pass_leaves_the_ir_unchanged_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert _bench.main(["--cpu", str(SPECS / "no_loop" / "bench.py")]) == 1
    out = capsys.readouterr().out
    assert "FAIL no_loop split" in out and "left the ttir of copy unchanged" in out, out


def test_ir_predicate_decides(capsys: pytest.CaptureFixture[str]) -> None:
    spec = _bench.load_spec(SPECS / "split_scalar" / "bench.py")
    strict = dataclasses.replace(spec, name="three_loops",
                                 ir_check=lambda v, off, on: None if _bench.top_level_loops(on) == 3 else "not 3")
    checks = _bench.check_cpu(strict, log=lambda s: None)
    assert [c.problem for c in checks] == [None, "not 3"]


def test_find_specs_by_pass_name_and_unknown_name() -> None:
    (spec,) = _bench.find_specs(["loop_split"])
    assert spec.name == "loop_split" and spec.directory == REPO / "passes" / "LoopSplit"
    assert len(spec.cases()) == 20 and len(spec.cases(quick=True)) == 4
    with pytest.raises(TritonExtError, match="no spec for 'no_such_pass'"):
        _bench.find_specs(["no_such_pass"])


def test_pass_variant_needs_a_baseline() -> None:
    spec = _bench.load_spec(SPECS / "split_scalar" / "bench.py")
    with pytest.raises(TritonExtError, match="has no baseline in group 'x'"):
        dataclasses.replace(spec, variants=(Variant("plain", None, "baseline"), Variant("s", None, "pass", group="x")))


@pytest.mark.parametrize("name,slug", [("NVIDIA H200", "h200"), ("NVIDIA H100 80GB HBM3", "h100"),
                                       ("NVIDIA GeForce RTX 4090", "geforce-rtx-4090"), ("", "gpu")])
def test_gpu_slug(name: str, slug: str) -> None:
    assert _bench.gpu_slug(name) == slug


def _records(spec: BenchSpec) -> list[dict]:
    """What run_case returns, for two sizes: split is 1.25x faster at n=64 and 0.9x at n=128."""
    out = []
    for n, plain_ms, split_ms in ((64, 1.0, 0.8), (128, 1.0, 1.0 / 0.9)):
        for name, role, ms in (("plain", "baseline", plain_ms), ("split", "pass", split_ms)):
            case = Case("fp32", {"n": n})
            out.append({"spec": spec.name, "variant": name, "role": role, "group": "", **case.as_dict(),
                        "seed": 1, "max_abs_err": 0.0, "tolerance": 1e-5, "ok": True, "problem": None,
                        "kernel_hash": name, "ms": ms, "ms_rounds": [ms, ms * 1.01, ms * 0.99],
                        "spread": 0.02, "metric": spec.metric.value(case, ms)})
    return out


def test_writers(tmp_path: Path) -> None:
    spec = dataclasses.replace(
        _bench.load_spec(SPECS / "split_scalar" / "bench.py"),
        targets=(Target("10% faster from n=128", "split", "plain", 1.10, where=lambda c: c.params["n"] >= 128),
                 Target("never slower", "split", "plain", 1.0, allow_spread=True, where=lambda c: c.params["n"] < 128)))
    env = {"gpu": "NVIDIA H200", "driver": "570.1", "triton": "3.9.0", "commit": "abc", "date": "today"}
    report = _bench.build_report(spec, _records(spec), env, Timing(), quick=False)
    assert [t["met"] for t in report["targets"]] == [False, True]
    assert report["targets"][0]["worst"]["speedup"] == pytest.approx(0.9)
    assert report["targets"][1]["worst"]["bound"] == pytest.approx(1.0 - 0.04)

    paths = _bench.write_outputs(report, tmp_path)
    assert tmp_path / "bench-h200.json" in paths and tmp_path / "BENCHMARK.md" in paths
    back = json.loads((tmp_path / "bench-h200.json").read_text())
    assert back["environment"]["gpu"] == "NVIDIA H200" and back["failures"] == 0 and len(back["results"]) == 4

    md = (tmp_path / "BENCHMARK.md").read_text()
    assert "| dtype | n | plain (GB/s) | split (GB/s) | split vs plain |" in md
    assert "| fp32 | 64 |" in md and "1.250x" in md and "0.900x" in md
    assert "| 10% faster from n=128 | 1 | fp32 n=128 | 0.900 | 1.100 | **no** |" in md
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        svg = ElementTree.parse(tmp_path / "bench-h200.svg").getroot()
        lines = [e for e in svg.iter("{http://www.w3.org/2000/svg}polyline") if e.get("stroke") != "black"]
        assert len(lines) == 2 and "![split_scalar](bench-h200.svg)" in md  # one line per variant
    else:
        assert (tmp_path / "bench-h200.png").stat().st_size > 0 and "![split_scalar](bench-h200.png)" in md
    # Rewriting from the JSON (e.g. on a machine with matplotlib) gives the same table.
    (tmp_path / "again").mkdir()
    assert _bench.main(["--from-json", str(tmp_path / "bench-h200.json"), "--out", str(tmp_path / "again")]) == 0
    assert (tmp_path / "again" / "BENCHMARK.md").read_text() == md

    back["_path"] = "tests/BENCHMARK.md"
    summary = _bench.summary_markdown([back])
    row = summary.splitlines()[2]
    assert "| split | NVIDIA H200 | 1.061x (0.90..1.25) |" in row and "| 1/2 |" in row, summary


def test_failed_check_is_flagged_in_markdown(tmp_path: Path) -> None:
    spec = _bench.load_spec(SPECS / "split_scalar" / "bench.py")
    records = _records(spec)
    records[1].update(ok=False, problem="max abs error 1 > tolerance 1e-5")
    report = _bench.build_report(spec, records, {"gpu": "NVIDIA H200"}, Timing(), quick=True)
    md = _bench.write_markdown(report, tmp_path / "BENCHMARK.md", None).read_text()
    assert report["failures"] == 1 and "**FAIL**" in md and "1 FAILED" in md and "(quick subset)" in md


def test_environment_takes_the_commit_from_triton_ext_commit(monkeypatch):
    """A copied checkout (the GPU host's) can carry stale git metadata: results name the
    commit the caller built, given in TRITON_EXT_COMMIT, before asking git."""
    from triton_ext.bench import gpu

    monkeypatch.setenv("TRITON_EXT_COMMIT", "0123abc")
    assert gpu.environment()["commit"] == "0123abc"
    monkeypatch.delenv("TRITON_EXT_COMMIT")
    assert gpu.environment(allow_dirty=True)["commit"] != "0123abc"
