"""``triton-ext startup-hook install|remove|status``: the ``.pth`` file that activates
triton-ext at interpreter start-up when ``TRITON_EXT_ENABLE`` is set.

The core wheel ships ``triton_ext_startup.pth`` (see ``triton_ext.dev.wheel``); an editable install
(``pip install -e .``, as tools/setup.sh does) cannot place a file in site-packages, so
tools/setup.sh runs ``triton-ext startup-hook install`` after it. The line only reads
``os.environ`` (``os`` is already imported by ``site``) and imports ``_triton_ext_startup``
when the variable is set; see that module for what happens then.
"""

from __future__ import annotations

import argparse
import sys
import sysconfig
from pathlib import Path
from typing import Sequence

__all__ = ["PTH_NAME", "PTH_LINE", "site_dir", "install", "remove", "main"]

PTH_NAME = "triton_ext_startup.pth"
# One line: site.py executes lines that start with "import". It must stay cheap when the
# variable is unset (measured: benchmarks/results/startup-pth.json).
PTH_LINE = ('import os; os.environ.get("TRITON_EXT_ENABLE", "").strip() '
            'and __import__("_triton_ext_startup")\n')


def site_dir() -> Path:
    """The site-packages folder of the running interpreter (where pip installs)."""
    return Path(sysconfig.get_paths()["purelib"])


def install(directory: Path | None = None) -> Path:
    """Write the .pth file (idempotent) and return its path."""
    path = (directory or site_dir()) / PTH_NAME
    if not path.exists() or path.read_text(encoding="utf-8") != PTH_LINE:
        path.write_text(PTH_LINE, encoding="utf-8")
    return path


def remove(directory: Path | None = None) -> bool:
    """Delete the .pth file; True when there was one."""
    path = (directory or site_dir()) / PTH_NAME
    if path.exists():
        path.unlink()
        return True
    return False


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="triton-ext startup-hook",
        description=f"Install, remove or show {PTH_NAME}, which makes TRITON_EXT_ENABLE work "
                    "without `import triton_ext` (also in child processes).")
    parser.add_argument("action", choices=("install", "remove", "status"))
    parser.add_argument("--site-dir", type=Path, default=None,
                        help="folder to write to (default: this interpreter's site-packages)")
    args = parser.parse_args(argv)
    directory = args.site_dir or site_dir()
    if args.action == "install":
        print(install(directory))
    elif args.action == "remove":
        print(f"removed {directory / PTH_NAME}" if remove(directory) else f"no {PTH_NAME} in {directory}")
    else:
        path = directory / PTH_NAME
        state = ("installed" if path.exists() and path.read_text(encoding="utf-8") == PTH_LINE
                 else "different content" if path.exists() else "not installed")
        print(f"{path}: {state}")
        import importlib.util

        if importlib.util.find_spec("_triton_ext_startup") is None:
            print("warning: module _triton_ext_startup is not importable; reinstall triton-ext",
                  file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
