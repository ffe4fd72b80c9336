"""Run extensions' tests: ``triton-ext test [NAME...]``.

For each named extension (registry name, pass name or folder name; every extension when none is
named): its lit tests (``*.mlir`` in its folder, through the root ``lit.cfg.py``: ``%opt`` and
FileCheck) and its pytest files (``test_*.py`` in its folder). The extension must be built first
(``triton-ext build NAME``): a missing library is reported with that command, not as a pile of
failing tests. Exit status 0 only when every test ran and passed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .._errors import TritonExtError
from .._manifest import Extension, load_manifest

__all__ = ["TestPlan", "plan", "main"]


@dataclass(frozen=True)
class TestPlan:
    """What runs for one extension."""

    extension: Extension
    folder: Path
    lit_files: tuple[Path, ...]
    pytest_files: tuple[Path, ...]


def _root(registry: Path) -> Path:
    return registry.resolve().parent


def plan(names: Sequence[str], registry: Path | None = None) -> list[TestPlan]:
    """Resolve names to extensions and their test files; raises TritonExtError with the fix."""
    from .._settings import settings

    registry = Path(registry or settings.registry)
    manifest = load_manifest(registry, entry_points=False)
    root = _root(registry)
    by_folder = {Path(e.directory).name: e for e in manifest.extensions}
    chosen: list[Extension] = []
    for name in names or [e.name for e in manifest.extensions]:
        ext = None
        try:
            ext = manifest.extension(name)
        except TritonExtError:
            try:
                ext = manifest.extension_of(manifest.find_pass(name))
            except TritonExtError:
                ext = by_folder.get(name)
        if ext is None:
            known = ", ".join(e.name for e in manifest.extensions) or "none"
            raise TritonExtError(f"unknown extension '{name}'; expected one of: {known}")
        if ext not in chosen:
            chosen.append(ext)
    plans = []
    for ext in chosen:
        folder = root / ext.directory
        if not folder.is_dir():
            raise TritonExtError(f"{ext.name}: folder {folder} not found (registry {ext.source}:"
                                 f"{ext.line}); `triton-ext test` needs a source checkout")
        if not ext.library_path().exists():
            raise TritonExtError(f"{ext.name}: nothing built yet ({ext.library_path()} missing); "
                                 f"run `triton-ext build {ext.name}` first")
        lit_files = tuple(sorted(p for p in folder.rglob("*.mlir") if "Inputs" not in p.parts))
        pytest_files = tuple(sorted(folder.rglob("test_*.py")))
        plans.append(TestPlan(ext, folder, lit_files, pytest_files))
    return plans


def _lit_command() -> list[str]:
    beside = Path(sys.executable).with_name("lit")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("lit")
    if found:
        return [found]
    raise TritonExtError("lit not found; pip install lit (or the test extra: pip install -e .[test])")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="triton-ext test",
        description="Run the lit and pytest tests of the named extensions (default: all).")
    parser.add_argument("names", nargs="*", help="extension, pass or folder names")
    parser.add_argument("--registry", type=Path, default=None,
                        help="registry.yaml (default $TRITON_EXT_REGISTRY or <repo>/registry.yaml)")
    parser.add_argument("--no-lit", action="store_true", help="skip the FileCheck tests")
    parser.add_argument("--no-pytest", action="store_true", help="skip the pytest files")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only the summary")
    args = parser.parse_args(argv)
    try:
        plans = plan(args.names, args.registry)
        lit = _lit_command() if not args.no_lit else []
    except TritonExtError as exc:
        print(f"triton-ext test: error: {exc}", file=sys.stderr)
        return 1
    env = dict(os.environ)
    if args.registry is not None:
        env["TRITON_EXT_REGISTRY"] = str(args.registry.resolve())
    failures: list[str] = []
    out = subprocess.DEVNULL if args.quiet else None
    for p in plans:
        root = _root(Path(env.get("TRITON_EXT_REGISTRY") or p.extension.source))
        steps: list[tuple[str, list[str]]] = []
        if not args.no_lit and p.lit_files:
            steps.append(("lit", [*lit, "-v", *map(str, p.lit_files)]))
        if not args.no_pytest and p.pytest_files:
            # The testing plugin gives the fixtures (fresh_cache, clean_triton_ext) in any checkout.
            steps.append(("pytest", [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                     "-p", "triton_ext.testing.plugin",
                                     *map(str, p.pytest_files)]))
        if not steps:
            failures.append(f"{p.extension.name}: no tests found in {p.folder}")
            print(f"triton-ext test: {p.extension.name}: NO TESTS in {p.folder}", file=sys.stderr)
            continue
        for kind, cmd in steps:
            print(f"triton-ext test: {p.extension.name}: {kind} ...", file=sys.stderr, flush=True)
            rc = subprocess.run(cmd, cwd=root, env=env, stdout=out, stderr=out).returncode
            verdict = "ok" if rc == 0 else f"FAILED (exit {rc})"
            print(f"triton-ext test: {p.extension.name}: {kind} {verdict}", file=sys.stderr)
            if rc != 0:
                failures.append(f"{p.extension.name}: {kind}")
    if failures:
        print(f"triton-ext test: {len(failures)} failure(s): {'; '.join(failures)}", file=sys.stderr)
        return 1
    print(f"triton-ext test: all passed ({len(plans)} extension(s))", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
