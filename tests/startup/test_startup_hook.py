"""TRITON_EXT_ENABLE with no code change: the start-up .pth (issue 16).

Each test runs a real interpreter of this venv in a subprocess (so site-packages' .pth files
are processed as for a user), on a script that never imports triton_ext, and checks the
compiled kernel's TTIR: loop_split turns the script's one loop into two.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from triton_ext.dev import startup_hook
from triton_ext.testing import require_built

SCRIPT = Path(__file__).with_name("loop_kernel_script.py")


@pytest.fixture(scope="module", autouse=True)
def _pth_installed() -> None:
    path = startup_hook.site_dir() / startup_hook.PTH_NAME
    if not path.exists() or path.read_text(encoding="utf-8") != startup_hook.PTH_LINE:
        pytest.fail(f"{path} is missing or stale: run `bash tools/setup.sh` "
                    "(or `triton-ext startup-hook install`)")
    require_built("loop_split")


def _run(env_extra: dict[str, str], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_EXT_")}
    env.update(env_extra)
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          env=env, timeout=600, cwd=cwd)


def _result(proc: subprocess.CompletedProcess[str]) -> dict[str, dict[str, object]]:
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_without_variable_nothing_is_imported_or_split(tmp_path: Path) -> None:
    out = _result(_run({}, cwd=tmp_path))["parent"]
    assert out == {"loops": 1, "cubin": True, "triton_ext_imported": False}


def test_variable_alone_splits_the_loop_in_parent_and_spawn_child(tmp_path: Path) -> None:
    # cwd outside the checkout: triton_ext is found through the install, not the current folder.
    out = _result(_run({"TRITON_EXT_ENABLE": "loop_split"}, "--spawn", cwd=tmp_path))
    assert out["parent"] == {"loops": 2, "cubin": True, "triton_ext_imported": True}
    assert out["child"] == {"loops": 2, "cubin": True, "triton_ext_imported": True}


def test_bad_value_one_line_and_the_process_goes_on(tmp_path: Path) -> None:
    proc = _run({"TRITON_EXT_ENABLE": "loop_split,no_such_pass"}, cwd=tmp_path)
    assert _result(proc)["parent"] == {"loops": 1, "cubin": True, "triton_ext_imported": False}
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("triton-ext: TRITON_EXT_ENABLE='loop_split,no_such_pass' not applied")
    assert "no_such_pass" in lines[0] and "fix: set TRITON_EXT_ENABLE" in lines[0]
    assert "Traceback" not in proc.stderr


def test_bad_value_is_fatal_under_strict(tmp_path: Path) -> None:
    proc = _run({"TRITON_EXT_ENABLE": "no_such_pass", "TRITON_EXT_STRICT": "1"}, cwd=tmp_path)
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == ""  # the script never ran
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "TRITON_EXT_STRICT=1, so the process exits" in lines[0], proc.stderr


def test_pth_line_reads_only_the_environment() -> None:
    # The line site.py executes must import nothing when the variable is unset or empty.
    for env in ({}, {"TRITON_EXT_ENABLE": ""}, {"TRITON_EXT_ENABLE": "  "}):
        namespace: dict[str, object] = {}
        before = set(sys.modules)
        saved = {k: os.environ.pop(k) for k in list(os.environ) if k == "TRITON_EXT_ENABLE"}
        os.environ.update(env)
        try:
            exec(startup_hook.PTH_LINE, namespace)
        finally:
            os.environ.pop("TRITON_EXT_ENABLE", None)
            os.environ.update(saved)
        assert set(sys.modules) - before == set()
        assert "_triton_ext_startup" not in sys.modules


@pytest.mark.parametrize("flag, runs", [("-I", True), ("-E", True), ("-S", False)])
def test_interpreter_flags_that_skip_the_hook(tmp_path: Path, flag: str, runs: bool) -> None:
    # docs/startup-hook.md: only -S (no site module, so no .pth files) skips the hook; -I and -E
    # still process site-packages, and the line reads os.environ itself, not a PYTHON* variable.
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_EXT_") or k == "TRITON_EXT_BUILD_DIR"}
    env["TRITON_EXT_ENABLE"] = "loop_split"
    proc = subprocess.run([sys.executable, flag, "-c", "import sys; print('_triton_ext_startup' in sys.modules)"],
                          capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == [str(runs)], (flag, proc.stdout, proc.stderr)
