"""Launch side of ``nvidia_auto_pdl``: turn the pass's module mark into Triton's ``launch_pdl``.

The pass inserts ``tt.grid_dependency_wait`` / ``tt.grid_dependency_launch_dependents`` and marks
the module ``triton_ext.launch_pdl = 1 : i32``. Triton 3.9.0's CUDA launcher enables programmatic
dependent launch (``CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION``) when the compiled
kernel's metadata has ``launch_pdl`` true (``backends/nvidia/driver.py`` reads
``metadata.launch_pdl``). ``compiler.compile`` hands every stage function the same mutable
``metadata`` dict and writes it to the cache after the last stage, so a stage wrapper that sets
``metadata["launch_pdl"] = True`` when it sees the mark is all that is needed; no Triton option
changes, and kernels the pass declined (hand-managed ones) keep the user's choice.

The triton_ext loader has no per-extension Python hook yet, so :func:`install` adds a small
stages hook *below* triton_ext's (triton_ext's hook chains it): triton_ext wraps the ttir stage
with the plugin pass, and our inner wrapper reads the mark from the stage's output. What the loader
would need instead: after each wrapped stage, call :func:`apply_launch_metadata` (or, generically,
copy module attributes ``triton_ext.launch_<field>`` into ``metadata[<field>]`` for
``<field>`` in the backend's launch fields), then this module's hook can go.

Usage::

    from backends.nvidia.AutoPDL import launch   # or import by path, see check_gpu.py
    launch.install()
    with triton_ext.enabled("nvidia_auto_pdl"):
        kernel[grid](...)   # compiled with the wait, launched with PDL
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any, Protocol

__all__ = ["PDL_ATTRIBUTE", "requests_pdl", "apply_launch_metadata", "install", "uninstall", "installed"]

PDL_ATTRIBUTE = "triton_ext.launch_pdl"
_KEY = "nvidia_auto_pdl-launch-1"
_HASH = hashlib.sha256(_KEY.encode()).hexdigest()
_STAGES = ("ttir", "ttgir")  # stages whose output is an MLIR module that may carry the mark


class StageFn(Protocol):
    def __call__(self, src: Any, metadata: dict[str, Any]) -> Any: ...


class StagesHook(Protocol):
    def __call__(self, *args: Any) -> Any: ...


def requests_pdl(module: Any) -> bool:
    """True if ``module`` (a Triton ``ir.module``) carries the pass's mark."""
    get = getattr(module, "get_int_attr", None)
    return get is not None and get(PDL_ATTRIBUTE) == 1


def apply_launch_metadata(module: Any, metadata: dict[str, Any]) -> bool:
    """Set ``metadata["launch_pdl"]`` when ``module`` asks for it; return whether it did."""
    if not requests_pdl(module):
        return False
    metadata["launch_pdl"] = True
    return True


def _wrap(stage: StageFn) -> StageFn:
    def run(src: Any, metadata: dict[str, Any]) -> Any:
        result = stage(src, metadata)
        apply_launch_metadata(result, metadata)
        return result

    run.__wrapped__ = stage  # type: ignore[attr-defined]
    return run


_lock = threading.RLock()
_previous: StagesHook | None = None
_installed: StagesHook | None = None
_ext_was_installed = False  # triton_ext's hook state before install(), restored by uninstall()


def _hook(*args: Any, **kwargs: Any) -> Any:
    previous = _previous
    if not args and not kwargs:
        # The mark only changes metadata, but a kernel cached before install() must not be
        # reused with launch_pdl missing: join a constant to the key.
        if previous is None:
            return (_KEY, _HASH)
        key, digest = previous()
        return (f"{key}|{_KEY}", hashlib.sha256(f"{digest}|{_HASH}".encode()).hexdigest())
    if previous is not None:
        previous(*args, **kwargs)
    backend, stages = args[0], args[1]
    if getattr(backend.target, "backend", None) != "cuda":
        return None
    for name in _STAGES:
        if name in stages:
            stages[name] = _wrap(stages[name])
    return None


def install() -> None:
    """Install the launch hook under triton_ext's hook (which is (re)installed on top of it)."""
    global _previous, _installed, _ext_was_installed
    from triton import knobs
    from triton_ext import _stages

    with _lock:
        if _installed is not None:
            _stages.install()
            return
        _ext_was_installed = _stages.installed()
        # triton_ext chains whatever hook it finds when it installs; put ours first so that
        # triton_ext's wrapper (running the plugin pass) is the outer one and ours sees its output.
        if _stages.installed():
            _stages.uninstall()
        _previous = knobs.runtime.add_stages_inspection_hook
        _installed = _hook
        knobs.runtime.add_stages_inspection_hook = _hook
        _stages.install()


def uninstall() -> None:
    """Remove the launch hook; triton_ext's hook is left as it was before :func:`install`."""
    global _previous, _installed
    from triton import knobs
    from triton_ext import _stages

    with _lock:
        if _installed is None:
            return
        _stages.uninstall()
        if knobs.runtime.add_stages_inspection_hook is _installed:
            knobs.runtime.add_stages_inspection_hook = _previous
        _previous = None
        _installed = None
        if _ext_was_installed:
            _stages.install()


def installed() -> bool:
    return _installed is not None
