"""Start-up activation of triton-ext, imported by ``triton_ext_startup.pth``.

Python runs the one line of ``triton_ext_startup.pth`` (installed into site-packages by
the core wheel, or by ``triton-ext startup-hook install`` for an editable checkout) at every
interpreter start. That line reads ``os.environ`` and imports this module only when
``TRITON_EXT_ENABLE`` is set, so a process without the variable pays one dictionary look-up.
Here ``import triton_ext`` enables the named passes (see ``triton_ext.settings``), before the
user's script runs and without any change to it. Child processes inherit the variable, so a
``multiprocessing`` spawn child or an Inductor compile worker is activated the same way.

A bad value must not break every Python process of the environment: instead of a traceback
from ``site``, one line names the variable and the fix, and the process goes on without
triton-ext passes; with ``TRITON_EXT_STRICT=1`` the same line is printed and the process
exits with status 2.
"""

from __future__ import annotations

import os
import sys

__all__ = ["activate", "tag_torch_caches", "EXIT_STATUS", "TAG_PREFIX"]

#: Exit status of a process whose start-up activation failed under TRITON_EXT_STRICT=1.
EXIT_STATUS = 2

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
#: Prefix of triton-ext's part of TORCH_COMPILE_CACHE_KEY_TAG.
TAG_PREFIX = "triton-ext-"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def activate() -> None:
    """Import triton_ext (which enables ``TRITON_EXT_ENABLE``); report a failure in one line."""
    value = os.environ.get("TRITON_EXT_ENABLE", "")
    if not value.strip():
        return
    try:
        import triton_ext  # noqa: F401  (enables the passes named by TRITON_EXT_ENABLE)
    except Exception as exc:  # noqa: BLE001  (any failure must stay one line, not a site traceback)
        strict = os.environ.get("TRITON_EXT_STRICT", "").strip().lower() in _TRUE
        reason = _one_line(f"{type(exc).__name__}: {exc}")
        tail = ("TRITON_EXT_STRICT=1, so the process exits" if strict else
                "continuing without triton-ext passes (TRITON_EXT_STRICT=1 makes this fatal)")
        fix = ("set TRITON_EXT_ENABLE to registered pass names (`triton-ext list`) or unset it"
               if type(exc).__name__ == "UnknownPassError" else
               "fix the cause above (`triton-ext doctor` checks the install) or unset TRITON_EXT_ENABLE")
        sys.stderr.write(f"triton-ext: TRITON_EXT_ENABLE={value!r} not applied at start-up: "
                         f"{reason}; fix: {fix}; {tail}\n")
        sys.stderr.flush()
        if strict:
            os._exit(EXIT_STATUS)  # SystemExit inside site would print a second, fatal traceback
        return
    tag_torch_caches()


def tag_torch_caches() -> None:
    """Put the enabled set into torch.compile's cache keys (``TORCH_COMPILE_CACHE_KEY_TAG``).

    Inductor's FX graph cache and autotune cache store compiled Triton kernels; their keys do
    not cover Triton's stages hook, so a run with other passes enabled could be served kernels
    compiled with the old set. torch reads the variable when ``torch.compiler.config`` is first
    imported, which a start-up hook precedes; compile workers inherit it. triton-ext's part is
    the hash its stages hook returns (passes, options, positions, plugin bytes), replacing any
    part inherited from a parent with another set. ``TRITON_EXT_TORCH_CACHE_TAG=0`` turns it off.
    """
    if os.environ.get("TRITON_EXT_TORCH_CACHE_TAG", "1").strip().lower() in _FALSE:
        return
    from triton import knobs

    hook = knobs.runtime.add_stages_inspection_hook
    if hook is None:
        return
    _, digest = hook()
    parts = [p for p in os.environ.get("TORCH_COMPILE_CACHE_KEY_TAG", "").split(",")
             if p and not p.startswith(TAG_PREFIX)]
    tag = ",".join(parts + [TAG_PREFIX + str(digest)[:16]])
    os.environ["TORCH_COMPILE_CACHE_KEY_TAG"] = tag
    config = sys.modules.get("torch.compiler.config")
    if config is not None:  # torch already imported (not at start-up): set the live value too
        config.cache_key_tag = tag


activate()
