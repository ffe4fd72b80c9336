"""Overriding built-in passes (issue 19): ``replaces`` and ``skips`` in registry entries.

A registry pass may take a built-in pass's place (``replaces: loop_unroll``) or drop built-ins
from the pass managers of its stage (``skips: [triton_licm]``); a ``kind: pipeline`` entry only
skips. Both act at the same seam that inserts plugin passes: the pipeline tap buffers the
backend's ``add_*`` calls per pass manager and replays them at ``run`` (see
:mod:`triton_ext._pipeline`), so a skipped or replaced built-in is simply not replayed. The
edit is part of the selection, so it is scoped like any pass (``triton_ext.enabled``, autotuning
configs) and part of the cache key (``Enabled.describe``).

Names are Triton's binding names without ``add_`` (``loop_unroll``, ``triton_licm``,
``ttgpuir.coalesce``); the MLIR argument spelling (``triton-licm``, ``tritongpu-coalesce``) is
accepted too. A name the installed Triton does not bind is an error at enable time.
"""

from __future__ import annotations

from typing import Any

from ._pipeline import resolve_builtin

__all__ = ["canonical", "check"]

# MLIR argument prefixes of Triton's passes; the binding names drop them (triton-licm is
# passes.ttir.add_triton_licm, but tritongpu-coalesce is passes.ttgpuir.add_coalesce).
_MLIR_PREFIXES = ("triton_nvidia_gpu_", "tritongpu_", "tritonamdgpu_", "triton_")


def canonical(name: str) -> str:
    """The spelling of ``name`` that :func:`resolve_builtin` knows; KeyError (with a
    suggestion) when the installed Triton has no such built-in pass."""
    try:
        resolve_builtin(name)
        return name
    except KeyError as first:
        error = first
    snake = name.replace("-", "_")
    module, _, short = snake.rpartition(".")
    candidates = [snake] + [
        (f"{module}." if module else "") + short[len(p):] for p in _MLIR_PREFIXES if short.startswith(p)
    ]
    for candidate in candidates:
        try:
            resolve_builtin(candidate)
            return candidate
        except KeyError:
            continue
    raise error


def check(spec: Any, where: str) -> None:
    """Resolve every built-in ``spec`` names (anchor, replaces, skips, then); raise KeyError
    naming the field and the registry line."""
    for field, names in (("replaces", [spec.replaces] if spec.replaces else []), ("skips", list(spec.skips))):
        for name in names:
            try:
                canonical(name)
            except KeyError as exc:
                import triton

                raise KeyError(f"{field}: {exc.args[0]} in the installed Triton {triton.__version__} ({where})") from None
