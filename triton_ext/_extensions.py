"""The extension interface: an extension's own Python package, and the function the loader calls
when the extension is enabled.

The core knows extensions only through their registry fields: what they are for (``role``),
whether the transparent mode tries them (``auto``), and, here, their Python package::

    my_checks:
      directory: passes/MyChecks
      package: triton_ext_my_checks               # passes/MyChecks/triton_ext_my_checks/
      on_enable: triton_ext_my_checks:on_enable   # called whenever a pass of it is enabled

In a checkout the package is the folder of that name in the extension's directory, next to the
registry that declares it; an installed extension's wheel installs it. Either way it is imported
under its own name, once (:func:`import_package`, ``triton_ext.import_extension``).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterable

from ._errors import TritonExtError
from ._model import Extension
from ._modules import import_file

__all__ = ["import_package", "activate_packages", "package_folder"]

def package_folder(ext: Extension) -> Path | None:
    """The package's folder in a checkout (``<registry dir>/<directory>/<package>``), if there."""
    if ext.package is None or not ext.directory:
        return None
    folder = Path(ext.source).resolve().parent / ext.directory / ext.package
    return folder if (folder / "__init__.py").is_file() else None


def import_package(ext: Extension) -> ModuleType:
    """The extension's own Python package, imported under its name (the checkout's folder first,
    then an installed copy); :class:`TritonExtError` when the registry declares none or it cannot
    be found."""
    if ext.package is None:
        raise TritonExtError(f"extension {ext.name} ({ext.source}:{ext.line}) declares no Python package; "
                             "expected a registry field package: <import name>", extension=ext.name)
    folder = package_folder(ext)
    if folder is not None:
        return import_file(folder, name=ext.package)
    try:
        return importlib.import_module(ext.package)
    except ModuleNotFoundError as exc:
        if exc.name != ext.package:
            raise
        raise TritonExtError(
            f"extension {ext.name} ({ext.source}:{ext.line}): its package {ext.package} is neither in "
            f"{Path(ext.source).parent / ext.directory} nor installed; install the extension's wheel",
            extension=ext.name) from None


def _entry(ext: Extension) -> Callable[[], Any]:
    assert ext.on_enable is not None
    module_name, _, attr = ext.on_enable.partition(":")
    module = import_package(ext)
    if module_name != ext.package:
        module = importlib.import_module(module_name)
    function = getattr(module, attr, None)
    if not callable(function):
        raise TritonExtError(f"extension {ext.name} ({ext.source}:{ext.line}): on_enable {ext.on_enable} is not a "
                             f"function of {module_name}; fix the registry or the package", extension=ext.name)
    return function


def activate_packages(extensions: Iterable[Extension]) -> None:
    """Call the ``on_enable`` of each extension (once per call, however many of its passes are
    enabled), on every ``enable``/``enabled``: the function must be idempotent (arming an exit
    report once, say). The package is imported on the first call only."""
    seen: set[str] = set()
    for ext in extensions:
        if ext.on_enable is None or ext.name in seen:
            continue
        seen.add(ext.name)
        _entry(ext)()
