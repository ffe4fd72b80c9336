"""Import a Python file of an extension folder by path, without editing ``sys.path``.

Extension folders (``passes/LoopSplit``) are not packages: their ``bench.py`` and tests import
the folder's ``kernels.py`` with :func:`import_file`, under a module name derived from the path,
so that two folders' ``kernels.py`` never shadow each other in ``sys.modules``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
import threading
from pathlib import Path
from types import ModuleType

from ._errors import TritonExtError

__all__ = ["import_file", "module_name_for"]

#: One import at a time: a module is in sys.modules while it executes, and another thread must not
#: take it half-initialised (seen: an extension's GPU scenarios, run on a thread pool, read
#: kernels.SOURCE before kernels.py had defined it).
_import_lock = threading.RLock()


def module_name_for(path: Path) -> str:
    """A stable, unique module name for a file or package folder: its stem plus a path digest."""
    path = path.resolve()
    stem = re.sub(r"\W", "_", path.stem if path.is_file() else path.name)
    return f"triton_ext_local_{stem}_{hashlib.sha1(str(path).encode()).hexdigest()[:10]}"


def import_file(anchor: str | Path, relative: str | Path = "", name: str | None = None) -> ModuleType:
    """Import ``anchor``'s folder / ``relative`` (a ``.py`` file or a package folder) once.

    ``anchor`` is usually ``__file__`` of the importing module; with ``relative`` empty, ``anchor``
    itself is imported. ``name`` registers the module under that name (e.g. a language package
    that its own code imports by name); by default the name is derived from the path.
    """
    anchor = Path(anchor)
    path = (anchor.parent / relative if relative else anchor).resolve()
    if path.is_dir():
        init, search = path / "__init__.py", [str(path)]
    else:
        init, search = path, None
    if not init.is_file():
        raise TritonExtError(f"{path}: no such module; expected a .py file or a folder with __init__.py",
                             path=path)
    module_name = name or module_name_for(path)
    with _import_lock:
        module = sys.modules.get(module_name)
        if module is not None:
            return module
        spec = importlib.util.spec_from_file_location(module_name, init, submodule_search_locations=search)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[module_name]
            raise
        return module
