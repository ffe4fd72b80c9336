"""The triton-ext command, run as `python -m triton_ext` and through main()."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.python.conftest import REPO
from triton_ext.dev.cli import main

MODULE = textwrap.dedent(
    """\
    module {
      tt.func public @kernel(%arg0: i32) -> i32 {
        %c0 = arith.constant 0 : i32
        %0 = arith.addi %arg0, %c0 : i32
        tt.return %0 : i32
      }
    }
    """
)


def test_list_and_json(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "test_plugin" in out and "pass plugin: ttir after loop_unroll (first)" in out and "built" in out
    assert main(["list", "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)
    assert entry["name"] == "test_plugin" and entry["built"] is True
    assert entry["passes"]["plugin"]["options"]["num-warps"]["default"] == 4


def test_info_by_extension_or_pass(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", "plugin"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("test_plugin: ") and "--num-warps (int, default 4)" in out
    assert main(["info", "plugn"]) == 1
    assert "did you mean 'plugin'?" in capsys.readouterr().err


def test_info_shows_the_transparent_modes_fields(capsys: pytest.CaptureFixture[str]) -> None:
    # The repository's registry: nvidia_auto_pdl is an auto candidate that asks for PDL launches.
    assert main(["info", "nvidia_auto_pdl"]) == 0
    out = capsys.readouterr().out
    assert "    auto: True (a candidate of TRITON_EXT_ENABLE=auto)" in out
    assert "    launch_requests: launch_pdl (launch options it may ask for)" in out
    assert main(["info", "nvidia_occupancy_hint"]) == 0
    out = capsys.readouterr().out
    assert "    auto: False" in out and "launch_requests" not in out and "needs_ops" not in out
    assert main(["info", "grid_swizzle"]) == 0
    assert "    needs_ops: tt.dot, tt.dot_scaled (the mode compiles it only for kernels with one)" in capsys.readouterr().out


def test_doctor_all_well(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "triton: 3.9.0" in out and "test_plugin: ok" in out and out.rstrip().endswith("all well")


def test_doctor_reports_the_fix(registry: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # An unbuilt extension that TRITON_EXT_ENABLE asks for is a problem, with the fix.
    monkeypatch.setenv("TRITON_EXT_BUILD_DIR", str(tmp_path / "empty-build"))
    monkeypatch.setenv("TRITON_EXT_ENABLE", "plugin")
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "test_plugin: PROBLEM (TRITON_EXT_ENABLE names plugin)" in out
    assert "fix: triton-ext build test_plugin" in out


def test_doctor_unbuilt_and_not_enabled_is_information(registry: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TRITON_EXT_BUILD_DIR", str(tmp_path / "empty-build"))
    monkeypatch.delenv("TRITON_EXT_ENABLE", raising=False)
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "not built, not enabled (information, not a problem): test_plugin" in out
    assert "PROBLEM" not in out and out.rstrip().endswith("all well")


def test_doctor_reports_the_startup_hook(registry: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from triton_ext.dev import startup_hook

    monkeypatch.setattr(startup_hook, "site_dir", lambda: tmp_path)
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert f"start-up hook: PROBLEM: {tmp_path / startup_hook.PTH_NAME} not installed" in out
    assert "fix: triton-ext startup-hook install" in out
    startup_hook.install(tmp_path)
    assert main(["doctor"]) == 0
    assert f"start-up hook: installed ({tmp_path / startup_hook.PTH_NAME})" in capsys.readouterr().out


def test_doctor_runs_when_the_variable_names_an_unknown_pass(registry: Path, tmp_path: Path) -> None:
    env = {**os.environ, "TRITON_EXT_ENABLE": "no_such_pass", "TRITON_EXT_REGISTRY": str(registry),
           "PYTHONPATH": str(REPO)}
    res = subprocess.run([sys.executable, "-m", "triton_ext", "doctor"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr
    assert "TRITON_EXT_ENABLE names 'no_such_pass', which no registered extension provides" in res.stdout


def test_opt_runs_builtins_and_plugin_passes(registry: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "kernel.mlir"
    source.write_text(MODULE)
    assert main(["opt", str(source), "--pass", "canonicalize", "--no-debug-info"]) == 0
    out = capsys.readouterr().out
    assert "@kernel" in out and "arith.addi" not in out
    assert main(["opt", str(source), "--pass", "plugin,cse", "--no-debug-info"]) == 0
    assert "tt.func public @foo" in capsys.readouterr().out


def test_opt_errors_go_to_stderr(registry: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "bad.mlir"
    source.write_text("module { this is not mlir }\n")
    assert main(["opt", str(source), "--pass", "cse"]) == 1
    assert "cannot parse the module" in capsys.readouterr().err
    assert main(["opt", str(tmp_path / "missing.mlir"), "--pass", "cse"]) == 1
    assert "no such file" in capsys.readouterr().err
    good = tmp_path / "good.mlir"
    good.write_text(MODULE)
    assert main(["opt", str(good), "--pass", "nonsense"]) == 1
    assert "unknown pass 'nonsense'" in capsys.readouterr().err


def test_python_dash_m_is_the_same_command(registry: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-m", "triton_ext", "list"], capture_output=True, text=True, env=env, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert "test_plugin" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "triton_ext", "info", "nope"], capture_output=True, text=True, env=env)
    assert proc.returncode == 1 and "triton-ext: error: unknown" in proc.stderr


@pytest.mark.parametrize("command", ["toolchain", "build", "new", "test", "wheel", "bench"])
def test_tooling_commands_are_delegated(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    # Each developer command is handed to its own module's parser (triton_ext.dev.*, bench.cli).
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: ") and command in out.splitlines()[0], out[:300]


def test_closed_pipe_ends_quietly_with_sigpipe_status() -> None:
    # `triton-ext list --json | head -1`: the reader goes away before the JSON is written. A Unix
    # tool ends without a traceback and reports the broken pipe (128 + SIGPIPE).
    env = dict(os.environ, PYTHONPATH=str(REPO))
    read, write = os.pipe()
    os.close(read)  # no reader at all: the first write fails with EPIPE
    try:
        proc = subprocess.run([sys.executable, "-m", "triton_ext", "list", "--json"], stdout=write,
                              stderr=subprocess.PIPE, text=True, env=env, cwd=REPO, timeout=120)
    finally:
        os.close(write)
    assert "Traceback" not in proc.stderr and "BrokenPipeError" not in proc.stderr, proc.stderr
    assert proc.returncode == 141, (proc.returncode, proc.stderr)
