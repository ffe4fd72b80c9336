"""`triton-ext test` and the help listing: error paths (the passing path is in test_new.py)."""

from __future__ import annotations

from tests.cli.cli_support import REPO, cli


def test_help_lists_new_test_and_wheel() -> None:
    res = cli("--help")
    assert res.returncode == 0
    for sub in ("new", "test", "wheel"):
        assert f"    {sub} " in res.stdout, res.stdout


def test_unknown_name() -> None:
    res = cli("test", "no_such_extension")
    assert res.returncode == 1
    assert "unknown extension 'no_such_extension'" in res.stderr and "loop_split" in res.stderr


def test_nothing_built_yet(tmp_path) -> None:
    res = cli("test", "loop_split", TRITON_EXT_BUILD_DIR=str(tmp_path / "empty-build"))
    assert res.returncode == 1
    assert "nothing built yet" in res.stderr and "run `triton-ext build loop_split` first" in res.stderr


def test_broken_registry(tmp_path) -> None:
    bad = tmp_path / "registry.yaml"
    bad.write_text("schema: 1\nextensions:\n  loop_split:\n    kind: pass\n    pases: {}\n")
    res = cli("test", "loop_split", "--registry", str(bad))
    assert res.returncode == 1
    assert f"{bad}:" in res.stderr and "did you mean 'passes'" in res.stderr


def test_folder_missing(tmp_path) -> None:
    reg = tmp_path / "registry.yaml"
    reg.write_text((REPO / "registry.yaml").read_text())  # directories resolve against tmp_path
    res = cli("test", "loop_split", "--registry", str(reg))
    assert res.returncode == 1 and "needs a source checkout" in res.stderr
