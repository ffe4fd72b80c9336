"""The toolchain step: complete, cached, and never half-written."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from triton_ext.dev import toolchain as _toolchain
from triton_ext.dev.toolchain import ToolchainError


def test_recorded_toolchain_is_complete() -> None:
    tc = _toolchain.read_toolchain()
    assert tc is not None, "run `triton-ext toolchain` (tools/setup.sh does)"
    assert tc.triton_version == "3.9.0"
    assert Path(tc.libtriton).name == "libtriton.so"
    assert "clang" in tc.cxx_version.lower()
    override = Path(tc.abi_override_include) / "llvm" / "Config" / "abi-breaking.h"
    assert "#define LLVM_ENABLE_ABI_BREAKING_CHECKS 1" in override.read_text()
    assert tc.llvm_version.split(":")[-1].startswith("23.")
    assert {"libmlir-23-dev", "llvm-23-dev", "mlir-23-tools"} <= set(tc.packages)
    res = subprocess.run([tc.mlir_tblgen, "--version"], capture_output=True, text=True)
    assert res.returncode == 0 and "LLVM version 23" in res.stdout


def test_second_run_is_cached_and_fast() -> None:
    start = time.monotonic()
    res = subprocess.run([sys.executable, "-m", "triton_ext", "toolchain", "--print"],
                         capture_output=True, text=True, timeout=120)
    took = time.monotonic() - start
    assert res.returncode == 0, res.stderr
    assert "cached toolchain is complete" in res.stderr
    assert json.loads(res.stdout)["schema"] == _toolchain.TOOLCHAIN_SCHEMA
    assert took < 30, f"a warm toolchain run took {took:.1f}s"


def test_unreachable_mirror_leaves_no_partial_cache(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # Port 9 on loopback refuses at once: apt's update fails like a broken network.
    monkeypatch.setattr(_toolchain, "SID_MIRROR", "http://127.0.0.1:9/debian")
    with pytest.raises(ToolchainError, match="could not fetch Debian sid package lists"):
        _toolchain.ensure_toolchain(tmp_path, quiet=True)
    assert not (tmp_path / "toolchain").exists()
    assert not list(tmp_path.glob("toolchain.tmp.*"))
    assert _toolchain.read_toolchain(tmp_path) is None


@pytest.mark.parametrize("found, accepted", [
    ("1:23.1.4-2", True), ("1:23.1.7-1", True), ("1:24.0.0~++20261001-1", False),
    ("1:22.1.0-1", False), ("garbage", False)])
def test_llvm_version_acceptance(found: str, accepted: bool) -> None:
    notes: list[str] = []
    if accepted:
        _toolchain._accept_llvm_version(found, notes, lambda msg: None)
        assert bool(notes) == (found != _toolchain.VERIFIED_LLVM_VERSION)
    else:
        with pytest.raises(ToolchainError, match="Not accepted"):
            _toolchain._accept_llvm_version(found, notes, lambda msg: None)


def test_incomplete_toolchain_is_not_trusted(tmp_path: Path) -> None:
    tc = _toolchain.read_toolchain()
    assert tc is not None
    data = json.loads(_toolchain.manifest_path().read_text())
    data["mlir_tblgen"] = str(tmp_path / "missing-mlir-tblgen")
    (tmp_path / "toolchain").mkdir()
    (tmp_path / "toolchain" / "toolchain.json").write_text(json.dumps(data))
    assert _toolchain.read_toolchain(tmp_path) is None


def test_a_record_whose_triton_is_gone_is_pointed_at_this_one_without_a_download(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # One cache serves every checkout: the record names the triton of whichever ran `triton-ext
    # toolchain` last, and that venv may be gone. Its headers and tools still serve: the record is
    # trusted and retargeted, where before it read as incomplete and the whole toolchain was
    # downloaded again (here the mirror is unreachable, so a download would fail).
    data = json.loads(_toolchain.manifest_path().read_text())
    gone = tmp_path / "deleted-venv" / "triton"
    data.update(triton_dir=str(gone), libtriton=str(gone / "_C" / "libtriton.so"), triton_include=str(gone / "include"))
    (tmp_path / "toolchain").mkdir()
    (tmp_path / "toolchain" / "toolchain.json").write_text(json.dumps(data))
    assert _toolchain.read_toolchain(tmp_path) is not None
    monkeypatch.setattr(_toolchain, "SID_MIRROR", "http://127.0.0.1:9/debian")
    tc = _toolchain.ensure_toolchain(tmp_path, quiet=True)
    version, triton_dir = _toolchain.locate_triton()
    assert tc.triton_dir == str(triton_dir) and Path(tc.libtriton).exists() and tc.mlir_tblgen == data["mlir_tblgen"]
    assert json.loads(_toolchain.manifest_path(tmp_path).read_text())["triton_dir"] == str(triton_dir)
