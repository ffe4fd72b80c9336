"""The one module that touches Triton's compiler: the pipeline tap, the stage runner and the
stages hook, in that order (each part uses only those before it).

Three submodules, each importing only those before it:

* :mod:`.tap`: the pipeline tap (Triton's ``add_*`` bindings and ``pass_manager.run`` wrapped), the
  plan of one stage run, built-in pass names and the ``replaces``/``skips`` overrides;
* :mod:`.runner`: running a stage under a plan, dropping a failing pass (or raising for a check);
* :mod:`.hook`: the stages hook, Triton's cache key and the stage edit; it receives the enabled
  set's state at :func:`install` (this package imports nothing of :mod:`triton_ext._selection`).

Triton itself is imported on first use (installing the hook, running a stage), never at import:
importing ``triton_ext`` must stay cheap and must not import Triton.
"""

from __future__ import annotations

from .hook import (
    HookState, SelectionState, SelectionView, StagesHook, ensure_installed, install, installed, key_without_hook, lend,
    permanent, restore, save, stage_editor, uninstall,
)
from .runner import EnabledPass, StageFn, record, records_all_stages, reparse, wrap_stage
from .tap import (
    Builtin, Insertion, Plan, activate, builtin_names, canonical_builtin, check_overrides, current_plan, install_tap,
    resolve_builtin, uninstall_tap,
)

__all__ = [
    "EnabledPass", "SelectionView", "SelectionState",
    "builtin_names", "resolve_builtin", "canonical_builtin", "check_overrides",
    "Builtin", "Insertion", "Plan", "install_tap", "uninstall_tap", "activate", "current_plan",
    "StageFn", "wrap_stage", "reparse", "record", "records_all_stages",
    "StagesHook", "HookState", "stage_editor", "install", "ensure_installed", "uninstall", "installed", "save", "restore",
    "lend", "permanent", "key_without_hook",
]
