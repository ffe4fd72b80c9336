"""import_file under threads: no thread sees a module that is still executing."""

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
