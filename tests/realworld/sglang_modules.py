"""Import sglang's Triton attention modules with or without sglang's serving stack.

sglang (pinned in nodeps-requirements.txt, installed with ``--no-deps``) runs its whole serving
stack at package import: ``sglang/__init__.py`` and ``sglang.srt.utils`` import zmq, starlette,
aiohttp, pybase64, PIL... A GPU host that has only the wheel lacks them. The corpus's kernel
modules (``sglang.srt.layers.attention.triton_ops.{prefill,extend}_attention``) need only torch,
triton and ``is_cuda``/``is_hip`` from ``sglang.srt.utils``.

:func:`import_kernel_module` tries the normal import first. If that fails for a missing module,
it imports the installed kernel module files as they are, under their own names, with their
parent packages as bare namespace modules (their ``__init__`` files not run) and
``sglang.srt.utils`` answering ``is_cuda``/``is_hip`` from ``torch.version`` and
``torch.cuda.is_available()``, as sglang's helpers do. The kernels and their launchers are the
package's, unchanged; nothing is copied.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from pathlib import Path

__all__ = ["import_kernel_module", "loaded_without_package_init"]

_PARENTS = ("sglang", "sglang.srt", "sglang.srt.layers", "sglang.srt.layers.attention",
            "sglang.srt.layers.attention.triton_ops")


def loaded_without_package_init() -> bool:
    """True if sglang's package ``__init__`` was skipped (the bare parents are installed)."""
    root = sys.modules.get("sglang")
    return root is not None and getattr(root, "__file__", None) is None


def _install_bare_parents() -> None:
    import torch

    spec = importlib.util.find_spec("sglang")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("sglang is not installed (tests/realworld/nodeps-requirements.txt)")
    root = Path(list(spec.submodule_search_locations)[0])
    for name in [m for m in sys.modules if m == "sglang" or m.startswith("sglang.")]:
        del sys.modules[name]  # what the failed import left half-initialized
    for name in _PARENTS:
        mod = types.ModuleType(name)
        mod.__path__ = [str(root.joinpath(*name.split(".")[1:]))]
        sys.modules[name] = mod
    utils = types.ModuleType("sglang.srt.utils")
    utils.is_cuda = lambda: torch.version.cuda is not None and torch.cuda.is_available()  # type: ignore[attr-defined]
    utils.is_hip = lambda: torch.version.hip is not None  # type: ignore[attr-defined]
    sys.modules["sglang.srt.utils"] = utils


def import_kernel_module(name: str) -> types.ModuleType:
    """``sglang.srt.layers.attention.triton_ops.<name>``, e.g. ``prefill_attention``."""
    full = f"{_PARENTS[-1]}.{name}"
    if full in sys.modules:
        return sys.modules[full]
    if not loaded_without_package_init():
        try:
            return importlib.import_module(full)
        except ImportError:
            _install_bare_parents()
    return importlib.import_module(full)
