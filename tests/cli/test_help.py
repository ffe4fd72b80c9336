"""`triton-ext --version`, and help texts: every verb has a description, none carries internal
notes (issue numbers) or reStructuredText markup."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from triton_ext.dev.cli import _DELEGATED, main
from triton_ext.testing import repo_root

VERBS = ("list", "info", "doctor", "opt", *_DELEGATED)


def _help(*args: str) -> str:
    res = subprocess.run([sys.executable, "-m", "triton_ext", *args, "--help"], cwd=repo_root(),
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    import tomllib

    version = tomllib.loads((repo_root() / "pyproject.toml").read_text())["project"]["version"]
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert re.fullmatch(rf"triton-ext {re.escape(version)} \(triton 3\.\d+\.\d+, Python 3\.\d+\.\d+\)\n",
                        capsys.readouterr().out)


@pytest.mark.parametrize("verb", ("", *VERBS))
def test_help_has_a_description_and_no_internal_notes(verb: str) -> None:
    text = _help(*([verb] if verb else []))
    assert not re.search(r"\bissues? \d", text, re.I), text
    assert "``" not in text and ":func:" not in text and ":mod:" not in text, text
    # usage, a blank line, then a description paragraph before the argument lists
    body = text.split("\n\n")
    assert len(body) > 2 and body[1].strip() and not body[1].lstrip().startswith(
        ("positional arguments", "options")), text
