"""import_file: under threads no thread sees a module that is still executing; a path that is no
module, and a module that fails to import, are reported and leave nothing half imported."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from triton_ext._modules import import_file


def test_threads_never_see_a_half_imported_module(tmp_path: Path) -> None:
    # The module is in sys.modules while it runs; before the lock a second thread took it from
    # there and read a name it had not defined yet (the sanitizers' GPU scenarios on a pool).
    (tmp_path / "slow.py").write_text("import time\ntime.sleep(0.3)\nSOURCE = 'ready'\n")
    with ThreadPoolExecutor(8) as pool:
        seen = list(pool.map(lambda _: import_file(tmp_path / "slow.py").SOURCE, range(8)))
    assert seen == ["ready"] * 8


def test_a_path_that_is_no_module_says_what_was_expected(tmp_path: Path) -> None:
    # Guard: a registry entry or a language package pointing at a missing file gets the path and
    # what should be there, not an ImportError from deep inside importlib.
    import pytest

    from triton_ext._errors import TritonExtError

    with pytest.raises(TritonExtError, match=r"missing\.py: no such module; expected a \.py file or a folder with __init__\.py"):
        import_file(tmp_path / "missing.py")


def test_a_module_that_fails_to_import_is_not_left_half_imported(tmp_path: Path) -> None:
    # Guard: a failed import removes the module from sys.modules, so the next import runs it again
    # (a contributor fixing the file in a live session) instead of returning the broken half.
    import sys

    import pytest

    path = tmp_path / "flaky.py"
    path.write_text("PARTIAL = 1\nraise RuntimeError('broken on purpose')\n")
    with pytest.raises(RuntimeError, match="broken on purpose"):
        import_file(path)
    assert not any(getattr(m, "__file__", None) == str(path) for m in list(sys.modules.values()))
    path.write_text("PARTIAL = 1\nFIXED = True\n")
    assert import_file(path).FIXED is True
