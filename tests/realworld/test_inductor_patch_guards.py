"""The transparent mode's hold on torch.compile (triton_ext/_inductor.py) when Inductor is not the
Inductor it expects: a ``CachingAutotuner`` without the methods the mode wraps is left alone and
``why_not()`` says so; a wrap that raises while torch imports Inductor's module through the mode's
import loader (``_Loader``) never fails that import, and ``why_not()`` says the wrap failed.

Each case runs in a child process whose ``torch`` is a small stand-in package written to the
test's folder (only ``torch._inductor.runtime.triton_heuristics``, the module the mode wraps):
the mode installs its import hook (``_inductor.install``), the child imports the stand-in for real
through Python's import system, and the mode's global state (the hook in ``sys.meta_path``,
``why_not``) stays in the child.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from triton_ext.testing import repo_root

REPO = repo_root()
MODULE = "torch._inductor.runtime.triton_heuristics"

#: The child: install the mode's hook (with no mode active), import the stand-in Inductor module
#: as torch would, and report what the mode did and what the module's class holds afterwards.
CHILD = textwrap.dedent("""
    import json, sys
    from triton_ext import _inductor
    _inductor.install(lambda: None)
    import torch._inductor.runtime.triton_heuristics as th
    cls = getattr(th, "CachingAutotuner", None)
    print(json.dumps({
        "loader": type(th.__spec__.loader).__qualname__,
        "installed": _inductor.installed(),
        "why_not": _inductor.why_not(),
        "untouched": cls is None or all(getattr(cls, m).__module__ == th.__name__
                                        for m in ("_precompile_worker", "_precompile_config",
                                                  "benchmark_all_configs", "bench") if hasattr(cls, m)),
        "marker": th.MARKER,
    }))
""")

#: An Inductor whose autotuner renamed two of the methods the mode wraps.
RENAMED = textwrap.dedent("""
    MARKER = "stand-in"

    class CachingAutotuner:
        def precompile_worker(self): return None
        def precompile_config(self, cfg): return None
        def benchmark_all_configs(self, *args, **kwargs): return None
        def bench(self, *args, **kwargs): return 0.0
""")

#: An Inductor whose autotuner has every method but refuses new attributes (as an extension
#: type does): ``_patch`` raises at its first assignment.
IMMUTABLE = textwrap.dedent("""
    MARKER = "stand-in"

    class _Immutable(type):
        def __setattr__(cls, name, value):
            raise TypeError(f"cannot set {name!r} attribute of immutable type {cls.__name__!r}")

    class CachingAutotuner(metaclass=_Immutable):
        def _precompile_worker(self): return None
        def _precompile_config(self, cfg): return None
        def benchmark_all_configs(self, *args, **kwargs): return None
        def bench(self, *args, **kwargs): return 0.0
""")


def _stand_in_torch(root: Path, heuristics: str) -> Path:
    """A ``torch`` package under ``root`` holding only Inductor's ``triton_heuristics`` module."""
    package = root / "torch" / "_inductor" / "runtime"
    package.mkdir(parents=True)
    for folder in (root / "torch", root / "torch" / "_inductor", package):
        (folder / "__init__.py").write_text("")
    (package / "triton_heuristics.py").write_text(heuristics)
    return root


def _import_in_child(tmp_path: Path, heuristics: str) -> tuple[dict[str, Any], str]:
    """Run :data:`CHILD` with the stand-in ``torch`` first on its path; its report and its stderr."""
    root = _stand_in_torch(tmp_path / "stand-in", heuristics)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_EXT_ENABLE"}
    env["PYTHONPATH"] = os.pathsep.join([str(root), str(REPO)])
    result = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env,
                            cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1]), result.stderr


def test_an_autotuner_without_the_wrapped_methods_is_left_alone_and_why_not_says_so(tmp_path: Path) -> None:
    # Guard _inductor.py:238-242 (missing methods): an Inductor that renamed them must keep its
    # own class untouched and the mode must say why torch.compile's kernels are not tuned.
    report, stderr = _import_in_child(tmp_path, RENAMED)
    assert report["marker"] == "stand-in" and report["loader"] == "_Loader"  # the hook saw the import
    assert report["installed"] is False and report["untouched"] is True
    expected = f"{MODULE}.CachingAutotuner has no _precompile_worker, _precompile_config: Inductor's kernels are not tuned"
    assert report["why_not"] == expected
    assert f"triton-ext auto: {expected}" in stderr  # logged as a warning, where a user sees it


def test_a_wrap_that_raises_during_the_import_never_fails_the_import(tmp_path: Path) -> None:
    # Guard _inductor.py:456-463 (_Loader.exec_module's catch-all): a failing wrap must never break
    # torch's import of Inductor; the mode stays off for it and why_not names the failure.
    report, stderr = _import_in_child(tmp_path, IMMUTABLE)
    assert report["marker"] == "stand-in" and report["loader"] == "_Loader"
    assert report["installed"] is False and report["untouched"] is True
    expected = (f"wrapping {MODULE} failed: TypeError: cannot set '_precompile_worker' attribute of "
                "immutable type 'CachingAutotuner'")
    assert report["why_not"] == expected
    assert f"triton-ext auto: {expected}" in stderr


#: An Inductor whose autotuner takes its first wrapped method and refuses the second: a wrap that
#: fails half way.
HALF_WRITABLE = IMMUTABLE.replace("    def __setattr__(cls, name, value):\n",
                                  "    def __setattr__(cls, name, value):\n"
                                  "        if name == '_precompile_worker':\n"
                                  "            return type.__setattr__(cls, name, value)\n")


def test_a_wrap_that_fails_half_way_leaves_no_method_wrapped(tmp_path: Path) -> None:
    # Guard: _patch sets all three methods or none. Half a wrap (variants compiled per config by the
    # wrapped worker, never timed or pruned by the unwrapped rest) would only cost compile time.
    assert HALF_WRITABLE != IMMUTABLE
    report, _ = _import_in_child(tmp_path, HALF_WRITABLE)
    assert report["installed"] is False and report["untouched"] is True
    assert report["why_not"] == (f"wrapping {MODULE} failed: TypeError: cannot set '_precompile_config' attribute of "
                                 "immutable type 'CachingAutotuner'")
