"""Launch requests: settings a pass asks for by marking the module, carried into the compile
metadata (which Triton caches with the kernel, so the launch setting travels with the IR)."""

from __future__ import annotations

from typing import Any

__all__ = ["LAUNCH_FIELDS", "apply_launch_requests"]

#: Launch options a pass may ask for by marking the module ``triton_ext.<field> = 1 : i32``
#: (a pass whose kernels must be launched with programmatic dependent launch, for example).
#: The request goes into the compile metadata, which Triton caches with the kernel, so the
#: launch setting always travels with the IR that needs it.
LAUNCH_FIELDS = ("launch_pdl", "launch_cooperative_grid")


def apply_launch_requests(module: Any, metadata: dict[str, Any]) -> None:
    get = getattr(module, "get_int_attr", None)
    if get is None:
        return  # a stage that returned text (llir) carries no marks
    for field in LAUNCH_FIELDS:
        if get(f"triton_ext.{field}") == 1:
            metadata[field] = True
