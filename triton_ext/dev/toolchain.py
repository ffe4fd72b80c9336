"""Assemble what is needed to compile plugins against the stock triton wheel.

The PyPI ``triton==3.9.0`` wheel ships Triton's own headers and ``libtriton.so`` (which exports
MLIR and LLVM), but no MLIR/LLVM headers and no ``mlir-tblgen``. The closest match reachable from
a package registry is Debian sid's LLVM 23 (see ``shared/docs/triton-plugin-facts.md``). This
module gathers, in a cache folder outside the repository:

* the MLIR and LLVM headers from ``libmlir-23-dev`` and ``llvm-23-dev``;
* an ``llvm/Config/abi-breaking.h`` override that says ``1``, because ``libtriton.so`` was built
  with ABI-breaking checks and Debian's headers say ``0`` (a plugin built with ``0`` fails to link);
* a runnable ``mlir-tblgen``: sid's binary needs glibc 2.38, so it runs through sid's own loader;
* a C++ compiler: clang 19 (GCC breaks MLIR's fallback trait TypeIDs inside plugins).

It never touches the system's apt configuration: sid's package lists live in the cache. Everything
is assembled in a temporary folder and renamed into place only when complete, so an interrupted
run leaves no half-written toolchain. A second run with the cache warm only validates and returns.
What was used is recorded in ``toolchain.json``, read by CMake and ``triton-ext doctor``.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

from .._errors import TritonExtError

#: Bump when the layout of the toolchain folder or of ``toolchain.json`` changes.
TOOLCHAIN_SCHEMA = 1
#: LLVM major version whose headers we accept from sid; libtriton 3.9.0 is at a 24.0.0git
#: snapshot branched shortly after 23.x, and 23.x is the closest packaged match.
LLVM_MAJOR = 23
#: The exact version the recipe was verified with; other 23.x releases are accepted with a note.
VERIFIED_LLVM_VERSION = "1:23.1.4-2"
SID_MIRROR = os.environ.get("TRITON_EXT_DEBIAN_MIRROR", "http://deb.debian.org/debian")

#: Header packages and the runtime libraries sid's ``mlir-tblgen`` needs under sid's own loader.
HEADER_PACKAGES = (f"libmlir-{LLVM_MAJOR}-dev", f"llvm-{LLVM_MAJOR}-dev")
TOOL_PACKAGES = (f"mlir-{LLVM_MAJOR}-tools",)
RUNTIME_PACKAGES = ("libc6", "libstdc++6", "libgcc-s1", "libz3-4", "zlib1g", "libzstd1")
CLANG_PACKAGE = "clang-19"
CLANG_CANDIDATES = ("clang++-19",)


class ToolchainError(TritonExtError):
    """The toolchain could not be assembled; the message says what to do."""


@dataclass(frozen=True)
class Toolchain:
    """What ``toolchain.json`` records; paths are absolute."""

    schema: int
    root: str
    created: str
    cxx: str
    cxx_version: str
    mlir_tblgen: str
    mlir_include: str
    llvm_include: str
    abi_override_include: str
    triton_version: str
    triton_dir: str
    libtriton: str
    triton_include: str
    llvm_version: str
    packages: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def default_cache_dir() -> Path:
    """Where downloads, sid's package lists and the toolchain live.

    ``$TRITON_EXT_TOOLCHAIN_CACHE`` overrides it. Deliberately not ``$TRITON_EXT_CACHE_DIR``
    (the preflight verdicts): tests point that at a scratch folder, and the toolchain should
    still be found.
    """
    base = os.environ.get("TRITON_EXT_TOOLCHAIN_CACHE")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "triton-ext"


def toolchain_dir(cache_dir: Path | None = None) -> Path:
    return (cache_dir or default_cache_dir()) / "toolchain"


def manifest_path(cache_dir: Path | None = None) -> Path:
    return toolchain_dir(cache_dir) / "toolchain.json"


def read_toolchain(cache_dir: Path | None = None) -> Toolchain | None:
    """Return the recorded toolchain if it exists and every file of its own is still there.

    Its triton paths are not its own: they name the triton install that last ran `triton-ext
    toolchain`, which another checkout's may have been (one cache serves them all), and may be
    gone since. They are not checked here; :func:`ensure_toolchain` points them at the running
    triton (no download), and a build uses the triton of the Python that drives it."""
    path = manifest_path(cache_dir)
    try:
        data = json.loads(path.read_text())
        tc = Toolchain(**data)
    except (OSError, ValueError, TypeError):
        return None
    if tc.schema != TOOLCHAIN_SCHEMA:
        return None
    needed = (tc.cxx, tc.mlir_tblgen, tc.mlir_include, tc.llvm_include, tc.abi_override_include)
    if not all(Path(p).exists() for p in needed):
        return None
    return tc


# --------------------------------------------------------------------------------------------
# Triton
# --------------------------------------------------------------------------------------------


def locate_triton() -> tuple[str, Path]:
    """Version and package folder of the installed triton, without importing it."""
    spec = importlib.util.find_spec("triton")
    if spec is None or not spec.submodule_search_locations:
        raise ToolchainError("triton is not installed in this Python; run: "
                             f"{sys.executable} -m pip install triton==3.9.0")
    triton_dir = Path(list(spec.submodule_search_locations)[0])
    from importlib.metadata import version

    tv = version("triton")
    if not (triton_dir / "include" / "triton" / "Tools" / "PluginUtils.h").exists():
        raise ToolchainError(
            f"triton {tv} at {triton_dir} ships no plugin headers (triton/include/triton/Tools/"
            "PluginUtils.h); triton-ext needs triton==3.9.0: pip install triton==3.9.0")
    if not (triton_dir / "_C" / "libtriton.so").exists():
        raise ToolchainError(f"{triton_dir}/_C/libtriton.so is missing; reinstall triton==3.9.0")
    return tv, triton_dir


# --------------------------------------------------------------------------------------------
# Compiler
# --------------------------------------------------------------------------------------------


def _run(cmd: Sequence[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(cmd), check=False, text=True, capture_output=True, **kw)  # type: ignore[call-overload]


def find_clang(install: bool, log: "Log") -> tuple[str, str]:
    """Path and version line of clang 19, installing it from Debian when allowed."""
    override = os.environ.get("TRITON_EXT_CXX")
    candidates = [override] if override else list(CLANG_CANDIDATES)
    for name in candidates:
        path = shutil.which(name)
        if path:
            first = _run([path, "--version"]).stdout.splitlines()[:1]
            return path, (first[0] if first else "unknown")
    if override:
        raise ToolchainError(f"TRITON_EXT_CXX={override} was not found on PATH")
    if not install:
        raise ToolchainError(f"{CLANG_PACKAGE} is not installed; run as root: apt-get install -y "
                             f"{CLANG_PACKAGE}")
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise ToolchainError(
            f"clang++-19 not found. Plugins must be compiled with clang (GCC breaks MLIR trait "
            f"TypeIDs). Install it, e.g. as root on Debian 12: apt-get install -y {CLANG_PACKAGE}; "
            "or point TRITON_EXT_CXX at a clang++ 19.")
    log(f"installing {CLANG_PACKAGE} from Debian (apt-get)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    res = _run(["apt-get", "install", "-y", "-q", "--no-install-recommends", CLANG_PACKAGE], env=env)
    if res.returncode != 0:
        _run(["apt-get", "update", "-q"], env=env)
        res = _run(["apt-get", "install", "-y", "-q", "--no-install-recommends", CLANG_PACKAGE],
                   env=env)
    if res.returncode != 0:
        raise ToolchainError(f"apt-get install {CLANG_PACKAGE} failed:\n{res.stderr[-2000:]}")
    return find_clang(install=False, log=log)


# --------------------------------------------------------------------------------------------
# Debian sid packages, fetched with a private apt configuration
# --------------------------------------------------------------------------------------------


class SidArchive:
    """apt-get against sid with lists and downloads kept under ``state``; system config untouched."""

    def __init__(self, state: Path) -> None:
        self.state = state
        (state / "lists" / "partial").mkdir(parents=True, exist_ok=True)
        (state / "cache" / "archives" / "partial").mkdir(parents=True, exist_ok=True)
        self.sources = state / "sources.list"
        self.sources.write_text(f"deb {SID_MIRROR} sid main\n")

    def _opts(self) -> list[str]:
        s = self.state
        return [
            f"-oDir::Etc::SourceList={self.sources}", "-oDir::Etc::SourceParts=/dev/null",
            f"-oDir::State::Lists={s / 'lists'}", f"-oDir::Cache={s / 'cache'}",
            f"-oDir::State::status={s / 'status'}", "-oDebug::NoLocking=1",
            "-oAPT::Sandbox::User=root", "-oAcquire::Retries=3",
        ]

    def update(self) -> None:
        (self.state / "status").touch()
        res = _run(["apt-get", *self._opts(), "update"])
        if res.returncode != 0 or "Err:" in res.stdout:
            raise ToolchainError(
                f"could not fetch Debian sid package lists from {SID_MIRROR}:\n"
                f"{(res.stdout + res.stderr)[-2000:]}\nCheck network access to the Debian mirror "
                "(or set TRITON_EXT_DEBIAN_MIRROR).")

    def candidate(self, package: str) -> str:
        res = _run(["apt-cache", *self._opts(), "policy", package])
        m = re.search(r"Candidate:\s*(\S+)", res.stdout)
        if not m or m.group(1) == "(none)":
            raise ToolchainError(f"Debian sid has no package {package}; sid may have moved past "
                                 f"LLVM {LLVM_MAJOR}. Found nothing to accept.")
        return m.group(1)

    def download(self, packages: Sequence[str], dest: Path) -> list[Path]:
        dest.mkdir(parents=True, exist_ok=True)
        res = _run(["apt-get", *self._opts(), "download", *packages], cwd=dest)
        if res.returncode != 0:
            raise ToolchainError(f"apt-get download {' '.join(packages)} failed:\n"
                                 f"{res.stderr[-2000:]}")
        return sorted(dest.glob("*.deb"))


def _accept_llvm_version(found: str, notes: list[str], log: "Log") -> None:
    """Accept any sid LLVM 23.x; say so when it is not the verified release."""
    m = re.match(r"(?:\d+:)?(\d+)\.(\d+)\.(\d+)", found)
    if not m or int(m.group(1)) != LLVM_MAJOR:
        raise ToolchainError(
            f"Debian sid offers LLVM {found}; triton-ext needs LLVM {LLVM_MAJOR}.x headers (closest "
            f"to libtriton's LLVM pin). Not accepted. Use -DMLIR_DIR=... with an LLVM build at "
            "Triton's pin instead (see README).")
    if found == VERIFIED_LLVM_VERSION:
        log(f"LLVM headers: sid {found} (the verified release)")
    else:
        note = (f"sid offers LLVM {found}; verified with {VERIFIED_LLVM_VERSION}. Accepted "
                f"(same major); the ABI probe test checks that it still matches libtriton.")
        notes.append(note)
        log(note)


def _extract(debs: Sequence[Path], root: Path) -> None:
    for deb in debs:
        res = _run(["dpkg-deb", "-x", str(deb), str(root)])
        if res.returncode != 0:
            raise ToolchainError(f"dpkg-deb -x {deb.name} failed: {res.stderr.strip()}")


def _write_abi_override(llvm_include: Path, out_dir: Path) -> Path:
    """Copy Debian's abi-breaking.h with the ABI-breaking checks switched on, as libtriton has."""
    source = (llvm_include / "llvm" / "Config" / "abi-breaking.h").read_text()
    pattern = re.compile(r"^#define LLVM_ENABLE_ABI_BREAKING_CHECKS \d+$", re.M)
    if not pattern.search(source):
        raise ToolchainError("llvm/Config/abi-breaking.h has no LLVM_ENABLE_ABI_BREAKING_CHECKS "
                             "define; the header layout changed and the override needs updating")
    target = out_dir / "llvm" / "Config" / "abi-breaking.h"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(pattern.sub("#define LLVM_ENABLE_ABI_BREAKING_CHECKS 1", source))
    return out_dir


def _write_tblgen_wrapper(sysroot: Path, out: Path) -> Path:
    """sid's mlir-tblgen needs glibc 2.38; run it through sid's loader and libraries."""
    libdir = sysroot / "usr" / "lib" / "x86_64-linux-gnu"
    binary = sysroot / "usr" / "lib" / f"llvm-{LLVM_MAJOR}" / "bin" / "mlir-tblgen"
    if not binary.exists():
        raise ToolchainError(f"mlir-tblgen missing from mlir-{LLVM_MAJOR}-tools ({binary})")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        "#!/bin/sh\n# Generated by triton_ext.dev.toolchain: runs sid's mlir-tblgen under sid's glibc.\n"
        f'exec "{libdir}/ld-linux-x86-64.so.2" --library-path "{libdir}" "{binary}" "$@"\n')
    out.chmod(0o755)
    res = _run([str(out), "--version"])
    if res.returncode != 0:
        raise ToolchainError(f"mlir-tblgen does not run: {res.stderr.strip()[-500:]}")
    return out


def _prune(sysroot: Path) -> None:
    """Drop what plugins never use (shared libraries, static archives) to keep the cache small."""
    llvm = sysroot / "usr" / "lib" / f"llvm-{LLVM_MAJOR}"
    for p in (llvm / "lib").glob("*"):
        if p.name != "cmake":
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink()
    for d in ("share/doc", "share/man", "share/lintian"):
        shutil.rmtree(sysroot / "usr" / d, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# Assembly
# --------------------------------------------------------------------------------------------


class Log:
    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.start = time.monotonic()

    def __call__(self, msg: str) -> None:
        if not self.quiet:
            print(f"[toolchain {time.monotonic() - self.start:5.1f}s] {msg}", file=sys.stderr,
                  flush=True)


@contextlib.contextmanager
def _locked(cache_dir: Path) -> Iterator[None]:
    cache_dir.mkdir(parents=True, exist_ok=True)
    with open(cache_dir / ".toolchain.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def ensure_toolchain(cache_dir: Path | None = None, *, force: bool = False,
                     install_clang: bool = True, quiet: bool = False) -> Toolchain:
    """Return a complete toolchain, assembling it first if the cache lacks one."""
    cache_dir = cache_dir or default_cache_dir()
    log = Log(quiet)
    triton_version, triton_dir = locate_triton()
    with _locked(cache_dir):
        current = read_toolchain(cache_dir)
        if current and not force:
            if current.triton_dir != str(triton_dir) or current.triton_version != triton_version:
                # Headers and tools do not depend on which triton install uses them.
                current = _retarget(current, triton_version, triton_dir, cache_dir)
                log(f"toolchain now points at triton {triton_version} in {triton_dir}")
            log(f"cached toolchain is complete: {manifest_path(cache_dir)}")
            return current
        cxx, cxx_version = find_clang(install_clang, log)
        log(f"compiler: {cxx} ({cxx_version})")
        notes: list[str] = []
        downloads = cache_dir / "downloads"
        archive = SidArchive(cache_dir / "apt-sid")
        log(f"fetching Debian sid package lists ({SID_MIRROR})")
        archive.update()
        packages = [*HEADER_PACKAGES, *TOOL_PACKAGES, *RUNTIME_PACKAGES]
        versions = {p: archive.candidate(p) for p in packages}
        _accept_llvm_version(versions[HEADER_PACKAGES[0]], notes, log)
        staging = Path(tempfile.mkdtemp(prefix="toolchain.tmp.", dir=cache_dir))
        try:
            debs = _download_cached(archive, packages, versions, downloads, log)
            sysroot = staging / "sid"
            log(f"extracting {len(debs)} packages")
            _extract(debs, sysroot)
            final = toolchain_dir(cache_dir)
            final_sysroot = final / "sid"
            llvm_include = sysroot / "usr" / "lib" / f"llvm-{LLVM_MAJOR}" / "include"
            _write_abi_override(llvm_include, staging / "abi-override")
            # The wrapper names final paths: it is only used after the rename below.
            _prune(sysroot)
            tc = Toolchain(
                schema=TOOLCHAIN_SCHEMA, root=str(final),
                created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                cxx=cxx, cxx_version=cxx_version,
                mlir_tblgen=str(final / "bin" / "mlir-tblgen"),
                mlir_include=str(final_sysroot / "usr" / "lib" / f"llvm-{LLVM_MAJOR}" / "include"),
                llvm_include=str(final_sysroot / "usr" / "lib" / f"llvm-{LLVM_MAJOR}" / "include"),
                abi_override_include=str(final / "abi-override"),
                triton_version=triton_version, triton_dir=str(triton_dir),
                libtriton=str(triton_dir / "_C" / "libtriton.so"),
                triton_include=str(triton_dir / "include"),
                llvm_version=versions[HEADER_PACKAGES[0]], packages=versions, notes=notes)
            (staging / "toolchain.json").write_text(json.dumps(asdict(tc), indent=2) + "\n")
            old = None
            if final.exists():
                old = cache_dir / f"toolchain.old.{os.getpid()}"
                final.rename(old)
            staging.rename(final)
            if old:
                shutil.rmtree(old, ignore_errors=True)
            staging = final
            _write_tblgen_wrapper(final_sysroot, final / "bin" / "mlir-tblgen")
        except BaseException:
            if staging != toolchain_dir(cache_dir):
                shutil.rmtree(staging, ignore_errors=True)
            else:
                # The rename happened but the last check failed: do not leave a toolchain that
                # claims to be complete.
                (staging / "toolchain.json").unlink(missing_ok=True)
            raise
        log(f"toolchain ready: {manifest_path(cache_dir)}")
        return tc


def _retarget(tc: Toolchain, triton_version: str, triton_dir: Path, cache_dir: Path) -> Toolchain:
    data = asdict(tc)
    data.update(triton_version=triton_version, triton_dir=str(triton_dir),
                libtriton=str(triton_dir / "_C" / "libtriton.so"),
                triton_include=str(triton_dir / "include"))
    path = manifest_path(cache_dir)
    tmp = path.with_suffix(f".tmp.{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    tmp.replace(path)
    return Toolchain(**data)


def _download_cached(archive: SidArchive, packages: Sequence[str], versions: dict[str, str],
                     downloads: Path, log: Log) -> list[Path]:
    """Reuse .deb files already downloaded at the same versions; fetch the rest."""
    downloads.mkdir(parents=True, exist_ok=True)

    def cached(pkg: str) -> Path | None:
        ver = versions[pkg].split(":", 1)[-1]
        hits = [p for p in downloads.glob(f"{pkg}_*.deb")
                if p.name.split("_")[1].replace("%3a", ":").split(":", 1)[-1] == ver]
        return hits[0] if hits else None

    missing = [p for p in packages if cached(p) is None]
    if missing:
        log(f"downloading {', '.join(missing)}")
        tmp = Path(tempfile.mkdtemp(prefix="dl.", dir=downloads))
        try:
            for deb in archive.download(missing, tmp):
                deb.rename(downloads / deb.name)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    result = []
    for p in packages:
        hit = cached(p)
        if hit is None:
            raise ToolchainError(f"download of {p} {versions[p]} produced no file")
        result.append(hit)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="triton-ext toolchain",
                                     description="Assemble headers, mlir-tblgen and clang for "
                                     "building plugins (cached; safe to re-run).")
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help="cache folder (default: $TRITON_EXT_TOOLCHAIN_CACHE or ~/.cache/triton-ext)")
    parser.add_argument("--force", action="store_true", help="rebuild even if the cache is valid")
    parser.add_argument("--no-install", action="store_true",
                        help="never run apt-get install for clang; fail with instructions")
    parser.add_argument("--print", dest="print_json", action="store_true",
                        help="print toolchain.json to stdout")
    parser.add_argument("-q", "--quiet", action="store_true")
    args = parser.parse_args(argv)
    try:
        tc = ensure_toolchain(args.cache_dir, force=args.force,
                              install_clang=not args.no_install, quiet=args.quiet)
    except ToolchainError as exc:
        print(f"triton-ext toolchain: error: {exc}", file=sys.stderr)
        return 1
    if args.print_json:
        print(json.dumps(asdict(tc), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
