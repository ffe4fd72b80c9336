"""Build plugins from a source checkout: ``triton-ext build [NAME...]``.

Configures the root CMake project with the toolchain from :mod:`triton_ext.dev.toolchain`, builds
every extension (or the named ones) with Ninja, keeps going past a broken extension so the others
still build, and ends with a summary that names each extension that failed and why.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from .._errors import TritonExtError
from .._settings import repo_root, settings
from .toolchain import ToolchainError, ensure_toolchain

#: Ninja's build-edge paths for extension objects: <build>/ext/<extension folder>/...
_EXT_PATH = re.compile(r"ext/((?:passes|dialects|language)/[^/\s]+|backends/[^/\s]+/[^/\s]+)/")
_CMAKE_ERROR_AT = re.compile(
    r"CMake Error at ((?:passes|dialects|language)/[^/\s]+|backends/[^/\s]+/[^/\s]+)/")


class BuildError(TritonExtError):
    """The build could not run at all (no source tree, no toolchain, no cmake)."""


@dataclass
class BuildResult:
    built: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # extension folder -> reason

    @property
    def ok(self) -> bool:
        return not self.failed


def source_root() -> Path:
    """The checkout this package lives in (builds need the source tree, not a wheel)."""
    root = repo_root()
    if not (root / "CMakeLists.txt").exists() or not (root / "infra").is_dir():
        raise BuildError(f"{root} is not a triton-ext source checkout; `triton-ext build` works "
                         "in a clone of the repository (installed extensions come prebuilt)")
    return root


def default_build_dir() -> Path:
    """``$TRITON_EXT_BUILD_DIR`` or ``<checkout>/build`` (:data:`triton_ext.settings`)."""
    source_root()  # a build folder only makes sense next to a source checkout
    return Path(settings.build_dir)


def _tool(module: str, attr: str, name: str) -> str:
    """cmake/ninja from their PyPI packages when installed, else from PATH."""
    try:
        mod = __import__(module)
        candidate = Path(getattr(mod, attr)) / name
        if candidate.exists():
            return str(candidate)
    except (ImportError, AttributeError):
        pass
    found = shutil.which(name)
    if not found:
        raise BuildError(f"{name} not found; pip install {module}")
    return found


def cmake_exe() -> str:
    return _tool("cmake", "CMAKE_BIN_DIR", "cmake")


def ninja_exe() -> str:
    return _tool("ninja", "BIN_DIR", "ninja")


def extension_dirs(root: Path) -> list[str]:
    """Every extension folder (relative paths) the root CMake project will discover."""
    found = []
    for pattern in ("passes/*", "backends/*/*", "dialects/*", "language/*"):
        found += [str(p.parent.relative_to(root)) for p in root.glob(f"{pattern}/CMakeLists.txt")]
    return sorted(found)


def resolve_targets(root: Path, names: Sequence[str]) -> dict[str, str]:
    """Map names (registry extension names, folder names or folder paths) to CMake targets."""
    dirs = extension_dirs(root)
    by_leaf = {Path(d).name: d for d in dirs}
    by_registry: dict[str, str] = {}
    try:
        from .._manifest import load_manifest

        for ext in load_manifest().extensions:
            by_registry[ext.name] = str(Path(ext.directory))
    except Exception:  # a broken registry must not stop a build; `doctor` reports it
        pass
    targets = {}
    for name in names:
        folder = by_registry.get(name) or by_leaf.get(name) or (name if name in dirs else None)
        if folder is None:
            known = ", ".join(sorted(set(by_registry) | set(by_leaf)))
            raise BuildError(f"unknown extension '{name}'; known: {known}")
        targets[folder] = f"TritonExt{Path(folder).name}"
    return targets


def configure(root: Path, build_dir: Path, quiet: bool = False,
              defines: Sequence[str] = ()) -> None:
    try:
        ensure_toolchain(quiet=quiet)
    except ToolchainError as exc:
        raise BuildError(str(exc)) from exc
    from .toolchain import locate_triton

    triton_dir = locate_triton()[1]
    cmd = [cmake_exe(), "-G", "Ninja", "-S", str(root), "-B", str(build_dir),
           f"-DTRITON_EXT_TRITON_DIR={triton_dir}",
           f"-DCMAKE_MAKE_PROGRAM={ninja_exe()}", f"-DPython_EXECUTABLE={sys.executable}",
           *(f"-D{d}" for d in defines)]
    res = subprocess.run(cmd, text=True, capture_output=True)
    if res.returncode != 0:
        blamed = sorted(set(_CMAKE_ERROR_AT.findall(res.stderr)))
        who = f" in {', '.join(blamed)}" if blamed else ""
        raise BuildError(f"CMake configuration failed{who}:\n{res.stderr[-4000:]}")
    for line in res.stderr.splitlines():
        if "triton-ext:" in line and not quiet:
            print(line.strip(), file=sys.stderr)


def build(names: Sequence[str] = (), build_dir: Path | None = None, *, quiet: bool = False,
          jobs: int | None = None, root: Path | None = None,
          defines: Sequence[str] = ()) -> BuildResult:
    """Configure if needed and build; returns what was built and what failed (never raises for
    a C++ error in an extension: the other extensions still build)."""
    root = root or source_root()
    build_dir = build_dir or default_build_dir()
    configure(root, build_dir, quiet=quiet, defines=defines)
    targets = resolve_targets(root, names) if names else {}
    cmd = [cmake_exe(), "--build", str(build_dir)]
    if targets:
        cmd += ["--target", *targets.values()]
    if jobs:
        cmd += ["-j", str(jobs)]
    cmd += ["--", "-k", "0"]  # keep going: one broken extension must not hide the others
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    failed: dict[str, str] = {}
    log: list[str] = []
    tty = sys.stderr.isatty()
    for line in proc.stdout:
        log.append(line)
        if line.startswith("FAILED:"):
            m = _EXT_PATH.search(line)
            failed.setdefault(m.group(1) if m else "(core)", "C++ build failed (errors above)")
        if quiet:
            continue
        if line.startswith("[") and tty:
            # Ninja progress: "[3/12] Building CXX object ext/passes/LoopSplit/..."
            print(f"\r{line.rstrip()[:110]:<110}", end="", file=sys.stderr, flush=True)
        else:
            print(("\n" if tty and log[-2:-1] and log[-2].startswith("[") else "") + line,
                  end="", file=sys.stderr, flush=True)
    proc.wait()
    if not quiet:
        print(file=sys.stderr)
    broken = build_dir / "broken-extensions.txt"
    if broken.exists():
        for row in broken.read_text().splitlines():
            folder, _, why = row.partition("\t")
            if not targets or folder in targets:
                failed[folder] = f"not configured: {why.strip()}"
    if proc.returncode != 0 and not failed:
        failed["(build)"] = "".join(log[-30:])
    wanted = list(targets) if targets else extension_dirs(root)
    result = BuildResult(built=[d for d in wanted if d not in failed], failed=failed)
    record_triton_release(build_dir / "plugins",
                          ["TritonExtPassInfra", *(f"TritonExt{Path(d).name}" for d in result.built)])
    if not quiet:
        took = time.monotonic() - start
        print(f"triton-ext build: {len(result.built)} extension(s) built in {took:.0f}s "
              f"-> {build_dir / 'plugins'}", file=sys.stderr)
        for folder, why in sorted(result.failed.items()):
            print(f"triton-ext build: FAILED {folder}: {why}", file=sys.stderr)
    return result


def record_triton_release(plugins: Path, targets: Sequence[str]) -> None:
    """Write, beside each library just built, the Triton release it was built for (the one of
    this Python, which ``configure`` builds against); the loader refuses it under another."""
    from .._compat import write_record
    from .._preflight import installed_triton_version

    version = installed_triton_version()
    for target in targets:
        library = plugins / f"lib{target}.so"
        if library.exists():
            write_record(library, version)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="triton-ext build",
                                     description="Build every extension, or the named ones.")
    parser.add_argument("names", nargs="*", help="extension names or folders (default: all)")
    parser.add_argument("--build-dir", type=Path, default=None)
    parser.add_argument("-j", "--jobs", type=int, default=None)
    parser.add_argument("-q", "--quiet", action="store_true")
    args = parser.parse_args(argv)
    try:
        result = build(args.names, args.build_dir, quiet=args.quiet, jobs=args.jobs)
    except BuildError as exc:
        print(f"triton-ext build: error: {exc}", file=sys.stderr)
        return 2
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
