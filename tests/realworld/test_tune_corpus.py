"""``triton-ext tune`` on a kernel of the real-world corpus (issue 19.3), on the CPU: which
candidates apply (real compiles through cubin for sm_90 with the package launcher's constexprs),
their pairs, and the error for a name that is neither a bench spec nor a corpus kernel. Timing
needs a GPU (the same command without --cpu)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from triton_ext.dev.cli import main
from triton_ext.testing import require_built


def test_tune_a_corpus_kernel_on_cpu(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    require_built("nvidia_auto_pdl", "nvidia_occupancy_hint", "loop_split")
    out = tmp_path / "tune.json"
    assert main(["tune", "liger_rms_norm_fwd", "--cpu", "--candidates",
                 "nvidia_auto_pdl,nvidia_occupancy_hint,loop_split", "--out", str(out)]) == 0
    [row] = json.loads(out.read_text())
    assert (row["kernel"], row["package"]) == ("liger_rms_norm_fwd", "liger-kernel")
    # PDL and the occupancy hint change Liger's RMSNorm kernel; it has no loop for loop_split.
    assert row["applicable"] == {"nvidia_auto_pdl": True, "nvidia_occupancy_hint": True, "loop_split": False}
    assert row["candidates"] == ["nvidia_auto_pdl", "nvidia_occupancy_hint", "nvidia_auto_pdl+nvidia_occupancy_hint"]
    assert row["timings"] is None
    assert "liger_rms_norm_fwd (liger-kernel): applicable ['nvidia_auto_pdl', 'nvidia_occupancy_hint']" in (
        capsys.readouterr().out)


def test_tune_unknown_name_names_both_kinds(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tune", "liger_rms_norm_fwdd", "--cpu"]) == 1
    err = capsys.readouterr().err
    assert "no spec for 'liger_rms_norm_fwdd'" in err and "nor is 'liger_rms_norm_fwdd' a kernel of the real-world corpus" in err
