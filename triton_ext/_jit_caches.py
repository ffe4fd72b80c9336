"""The JIT functions' in-memory kernel caches (``JITFunction.device_caches``), which the transparent
mode fills with its decisions and empties again."""

from __future__ import annotations

from typing import Any

__all__ = ["forget_compiled", "kernel_caches", "uncache"]


def forget_compiled() -> None:
    """Empty every JIT function's in-memory kernel cache (they recompile from Triton's disk cache)."""
    for cache in kernel_caches():
        cache.clear()


def kernel_caches() -> list[dict[str, Any]]:
    """Every JIT function's in-memory kernel cache (one dict per function and device), found by a
    walk over every Python object."""
    import gc

    from triton.runtime.jit import JITFunction  # on first use: importing triton_ext must not import Triton

    return [caches[0] for obj in gc.get_objects()
            if issubclass(type(obj), JITFunction)  # type(): no __class__ lookup (lazy modules warn)
            for caches in list(obj.device_caches.values())]


def uncache(fn: Any, device: int, key: str, kernel: Any) -> None:
    """Take ``kernel`` out of ``fn``'s JIT cache under ``key`` (not another thread's kernel placed since)."""
    cache = fn.device_caches[device][0]
    if cache.get(key) is kernel:
        del cache[key]
