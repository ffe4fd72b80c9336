"""Compatibility view of the runtime's stage machinery, split by job:

- :mod:`triton_ext._selection`: the enabled set (``enable``, ``disable``, ``enabled``, ``current``);
- :mod:`triton_ext._hook`: the stages hook and the cache key (``install``, ``uninstall``);
- :mod:`triton_ext._runner`: running a stage under a plan (``record``);
- :mod:`triton_ext._launch`: launch requests a pass marks on the module.
"""

from __future__ import annotations

from ._hook import StagesHook, install, installed, uninstall
from ._launch import LAUNCH_FIELDS
from ._runner import StageFn, record
from ._selection import KEY_VERSION, Enabled, Selection, current, disable, enable, enabled, spell_options, using

__all__ = [
    "Enabled", "Selection", "KEY_VERSION", "StagesHook", "StageFn", "LAUNCH_FIELDS",
    "enable", "disable", "enabled", "current", "using", "spell_options", "install", "uninstall", "installed", "record",
]
