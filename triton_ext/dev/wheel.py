"""Build wheels: ``triton-ext wheel [NAME...] [--core]``.

Two kinds of wheel, both built by scikit-build-core on top of the root CMake project (the same
project and build tree ``triton-ext build`` uses, so an up-to-date build is not compiled again):

* ``triton-ext`` (``--core``): the ``triton_ext`` package (loader, stages hook, CLI) plus
  ``triton_ext/plugins/libTritonExtPassInfra.so``.
* ``triton-ext-<name>`` per extension (``my_pass`` -> ``triton-ext-my-pass``): its plugin,
  written to ``triton_ext/plugins/`` beside the infra library, and a small package
  ``triton_ext_<name>`` holding the extension's registry fragment. The wheel declares the entry
  point ``triton_ext.extensions: <name> = triton_ext_<name>:fragment``, which returns
  ``{"registry": PATH, "library_dir": PATH}``; the loader merges it with any registry.yaml.
  An extension whose registry entry names its own Python package (``package:
  triton_ext_sanitizers``, a folder in the extension's directory) ships that package too; the
  fragment holder is then ``triton_ext_<name>_fragment`` when the names would collide.

Why the plugin goes into ``triton_ext/plugins/`` and not into its own package: every plugin is
linked with ``RUNPATH=$ORIGIN`` and ``NEEDED libTritonExtPassInfra.so`` (see
``cmake/TritonExt.cmake``), so it must sit in the same folder as the infra library, as it does
in ``<build>/plugins``. pip tracks each file in the RECORD of the wheel that brought it, so
uninstalling an extension removes exactly its own plugin.

For each wheel a project folder (``pyproject.toml`` + package) is generated under
``<build>/wheel-projects/<dist>/`` and handed to scikit-build-core's PEP 517 ``build_wheel``
in a child process; nothing is copied by hand into a zip, so METADATA, RECORD (with hashes)
and entry_points.txt are the backend's.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import yaml

from .._errors import TritonExtError
from .build import cmake_exe, default_build_dir, ninja_exe, source_root

__all__ = ["WheelError", "WheelSpec", "core_spec", "extension_spec", "build_wheel", "main"]

ENTRY_POINT_GROUP = "triton_ext.extensions"
PLUGIN_SUBDIR = "triton_ext/plugins"


class WheelError(TritonExtError):
    """A wheel could not be built; the message names the next step."""


@dataclass(frozen=True)
class WheelSpec:
    """What one wheel holds."""

    dist: str                      # distribution name, e.g. triton-ext-loop-split
    version: str
    target: str                    # CMake target the wheel needs built
    library: str                   # file name in <build>/plugins copied into triton_ext/plugins
    dependencies: tuple[str, ...]
    package: str | None = None     # python package generated for an extension (fragment holder)
    #: The extension's own Python package (registry ``package``) and its folder, shipped as is.
    own_package: tuple[str, Path] | None = None
    extension: str | None = None   # registry name of the extension
    fragment: dict[str, Any] | None = None
    triton_version: str = ""       # the Triton release the library is built for (exact pin)


def _project_meta(root: Path) -> dict[str, Any]:
    return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def dist_name(extension: str) -> str:
    """``my_pass`` -> ``triton-ext-my-pass``."""
    return "triton-ext-" + extension.replace("_", "-")


def built_triton_version() -> str:
    """The Triton release wheels are built for: the one installed for this Python (the build
    configures against it, see ``triton_ext.dev.build.configure``)."""
    from .._preflight import installed_triton_version

    return installed_triton_version()


def _pinned(dependencies: Sequence[str], triton_version: str) -> tuple[str, ...]:
    """The dependencies with Triton pinned to exactly ``triton_version``."""
    out = [d for d in dependencies if not re.match(r"triton\s*([=<>!~;\[]|$)", d)]
    return (f"triton=={triton_version}", *out)


def core_spec(root: Path, triton_version: str | None = None) -> WheelSpec:
    meta = _project_meta(root)
    triton_version = triton_version or built_triton_version()
    return WheelSpec(dist=meta["name"], version=meta["version"], target="TritonExtPassInfra",
                     library="libTritonExtPassInfra.so",
                     dependencies=_pinned(meta.get("dependencies", ()), triton_version),
                     triton_version=triton_version)


def _with_td_options(entry: dict[str, Any], folder: Path) -> dict[str, Any]:
    """The registry entry with each pass's options copied from the build's pass records (what
    TableGen made of the folder's Passes.td): an installed extension has no source folder, so its
    fragment carries the options, their defaults and constraints."""
    from .._pass_records import flag_of, read_pass_records, records_path

    td = folder / "Passes.td"
    passes = entry.get("passes")
    if not td.is_file() or not isinstance(passes, dict):
        return entry
    records = records_path(default_build_dir() / "plugins" / f"lib{entry['library']}.so")
    if not records.is_file():
        raise WheelError(f"{records}: missing; build the extension first (`triton-ext build "
                         f"{folder.name}`): the wheel's registry fragment carries the options it declares")
    table = read_pass_records(records)
    out = dict(entry, passes={})
    for name, spec in passes.items():
        spec = dict(spec or {})
        declared = table.get(flag_of(name))
        if declared:
            spec["options"] = {}
            for o in declared:
                option: dict[str, Any] = {"default": o.default, "type": o.type, "help": o.help}
                if o.allowed:
                    option["allowed"] = list(o.allowed)
                if o.minimum is not None:
                    option["min"] = o.minimum
                if o.maximum is not None:
                    option["max"] = o.maximum
                spec["options"][o.flag] = option
        out["passes"][name] = spec
    return out


def extension_spec(root: Path, name: str, registry: Path | None = None,
                   triton_version: str | None = None) -> WheelSpec:
    """The wheel of one registry extension (by extension name or folder name): it depends on the
    core wheel of the same version and on exactly the Triton release it is built for."""
    from .._settings import settings

    triton_version = triton_version or built_triton_version()
    registry = registry or Path(settings.registry)
    try:
        data = yaml.safe_load(registry.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise WheelError(f"{registry}: cannot read the registry: {exc}; fix it (`triton-ext doctor` "
                         "names the problem)") from exc
    if not isinstance(data, dict):
        raise WheelError(f"{registry}: expected a mapping with 'schema' and 'extensions', found "
                         f"{type(data).__name__}; fix the registry")
    extensions = data.get("extensions") or {}
    if not isinstance(extensions, dict):
        raise WheelError(f"{registry}: 'extensions' is not a mapping; fix the registry")
    by_folder = {Path(str(e.get("directory", ""))).name: n for n, e in extensions.items()
                 if isinstance(e, dict)}
    key = name if name in extensions else by_folder.get(name)
    if key is None:
        known = ", ".join(sorted(extensions)) or "none"
        raise WheelError(f"unknown extension '{name}'; expected one of the registry's: {known}")
    entry = extensions[key]
    if not isinstance(entry, dict) or "library" not in entry:
        raise WheelError(f"{registry}: extensions.{key} has no 'library'; fix the registry")
    entry = _with_td_options(entry, registry.parent / str(entry.get("directory", "")))
    meta = _project_meta(root)
    core = f"{meta['name']}=={meta['version']}"
    deps = (core, f"triton=={triton_version}")
    own = None
    if entry.get("package"):
        folder = registry.parent / str(entry.get("directory", "")) / str(entry["package"])
        if not (folder / "__init__.py").is_file():
            raise WheelError(f"{registry}: extensions.{key}.package is {entry['package']}, but {folder} has no "
                             "__init__.py; add the package or fix the registry")
        own = (str(entry["package"]), folder)
    # The fragment holder takes the extension's package name unless the extension's own package has it.
    holder = f"triton_ext_{key}" if own is None or own[0] != f"triton_ext_{key}" else f"triton_ext_{key}_fragment"
    return WheelSpec(
        dist=dist_name(key), version=meta["version"], target=str(entry["library"]),
        library=f"lib{entry['library']}.so", dependencies=deps,
        package=holder, own_package=own, extension=key,
        fragment={"schema": data.get("schema", 1), "extensions": {key: entry}},
        triton_version=triton_version)


def _toml_str(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def _toml_list(values: Sequence[str]) -> str:
    return "[" + ", ".join(_toml_str(v) for v in values) + "]"


_FRAGMENT_MODULE = '''\
"""Registry fragment of the triton-ext extension {ext!r} (generated by `triton-ext wheel`).

triton_ext reads it through the entry point group {group!r}.
"""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent


def fragment() -> dict[str, str]:
    """Where this extension's registry entry and plugin library are."""
    return {{
        "registry": str(_HERE / "registry.yaml"),
        "library_dir": str(_HERE.parent / "triton_ext" / "plugins"),
    }}
'''


def write_project(spec: WheelSpec, root: Path, build_dir: Path) -> Path:
    """Generate the pyproject.toml (and fragment package) scikit-build-core builds from."""
    project = build_dir / "wheel-projects" / spec.dist
    if project.exists():
        shutil.rmtree(project)
    project.mkdir(parents=True)
    library = build_dir / "plugins" / spec.library
    defines = {
        # The same cache the build driver writes; only the wanted target is built.
        "CMAKE_MAKE_PROGRAM": ninja_exe(),
        "Python_EXECUTABLE": sys.executable,
    }
    packages: dict[str, str] = {}
    entry_points = ""
    description = "triton-ext: out-of-tree MLIR pass plugins for the stock Triton wheel"
    extra_files: dict[str, str] = {}
    if spec.package is None:
        packages["triton_ext"] = str(root / "triton_ext")
        # Start-up activation (TRITON_EXT_ENABLE without an import): the .pth and the module
        # it imports go to the root of site-packages.
        from .startup_hook import PTH_LINE, PTH_NAME

        (project / PTH_NAME).write_text(PTH_LINE, encoding="utf-8")
        extra_files[str(project / PTH_NAME)] = PTH_NAME
        extra_files[str(root / "_triton_ext_startup.py")] = "_triton_ext_startup.py"
        scripts = '[project.scripts]\n"triton-ext" = "triton_ext.dev.cli:main"\n'
    else:
        scripts = ""
        pkg = project / spec.package
        pkg.mkdir()
        (pkg / "__init__.py").write_text(
            _FRAGMENT_MODULE.format(ext=spec.extension, group=ENTRY_POINT_GROUP), encoding="utf-8")
        (pkg / "registry.yaml").write_text(
            f"# Registry fragment of {spec.extension}, from the triton-ext registry.yaml.\n"
            + yaml.safe_dump(spec.fragment, sort_keys=False), encoding="utf-8")
        packages[spec.package] = spec.package
        if spec.own_package is not None:  # the extension's own Python package (registry package)
            packages[spec.own_package[0]] = str(spec.own_package[1])
        entry_points = (f'[project.entry-points.{_toml_str(ENTRY_POINT_GROUP)}]\n'
                        f'{spec.extension} = "{spec.package}:fragment"\n')
        assert spec.fragment is not None
        summary = spec.fragment["extensions"][spec.extension].get("summary")
        if summary:
            description = f"triton-ext extension {spec.extension}: {summary}"
    # The Triton release the library is built for, beside it (checked at load: triton_ext._compat).
    from .._compat import record_path, write_record

    record = project / record_path(Path(spec.library)).name
    write_record(library, spec.triton_version or built_triton_version(), destination=record)
    extra_files[str(record)] = f"{PLUGIN_SUBDIR}/{record.name}"
    define_lines = "\n".join(f"{k} = {_toml_str(v)}" for k, v in defines.items())
    extra_lines = "".join(f"{_toml_str(k)} = {_toml_str(v)}\n" for k, v in extra_files.items())
    package_lines = "\n".join(f"{_toml_str(k)} = {_toml_str(v)}" for k, v in packages.items())
    text = f"""\
# Generated by `triton-ext wheel`; edit triton_ext/dev/wheel.py instead.
[build-system]
requires = ["scikit-build-core>=0.10"]
build-backend = "scikit_build_core.build"

[project]
name = {_toml_str(spec.dist)}
version = {_toml_str(spec.version)}
description = {_toml_str(description[:200])}
requires-python = ">=3.11"
license = {{ text = "Apache-2.0" }}
dependencies = {_toml_list(spec.dependencies)}

{scripts}
{entry_points}
[tool.scikit-build]
cmake.source-dir = {_toml_str(str(root))}
build-dir = {_toml_str(str(build_dir))}
build.targets = [{_toml_str(spec.target)}]
# Plugins do not use the Python C API: one wheel serves every CPython 3.
wheel.py-api = "py3"
wheel.exclude = ["**/__pycache__/**", "**/*.pyc"]
install.strip = false

[tool.scikit-build.cmake.define]
{define_lines}

[tool.scikit-build.wheel.packages]
{package_lines}

[tool.scikit-build.wheel.force-include]
{_toml_str(str(library))} = {_toml_str(f"{PLUGIN_SUBDIR}/{spec.library}")}
{extra_lines}"""
    (project / "pyproject.toml").write_text(text, encoding="utf-8")
    return project


_HOOK = ("import sys, scikit_build_core.build as b; "
         "print('WHEEL=' + b.build_wheel(sys.argv[1]))")


def build_wheel(spec: WheelSpec, out_dir: Path, *, root: Path | None = None,
                build_dir: Path | None = None, quiet: bool = False) -> Path:
    """Build one wheel into ``out_dir`` and return its path."""
    root = root or source_root()
    build_dir = (build_dir or default_build_dir()).resolve()
    if not (build_dir / "CMakeCache.txt").exists():
        raise WheelError(f"{build_dir}: nothing built yet; run `triton-ext build "
                         f"{spec.extension or ''}`".rstrip() + " first (or pass --build-dir)")
    try:
        import scikit_build_core  # noqa: F401
    except ImportError as exc:
        raise WheelError("scikit-build-core is not installed; pip install scikit-build-core") from exc
    project = write_project(spec, root, build_dir)
    out_dir = out_dir.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.setdefault("CMAKE_GENERATOR", "Ninja")
    # The cmake scikit-build-core runs must be the one that configured the build tree.
    env["PATH"] = os.pathsep.join([str(Path(cmake_exe()).parent), env.get("PATH", "")])
    res = subprocess.run([sys.executable, "-c", _HOOK, str(out_dir)], cwd=project, env=env,
                         capture_output=True, text=True)
    found = re.search(r"^WHEEL=(.+)$", res.stdout, re.M)
    if res.returncode != 0 or not found:
        log = (res.stdout + res.stderr)[-6000:]
        raise WheelError(f"scikit-build-core failed to build {spec.dist} "
                         f"(project {project}):\n{log}")
    wheel = out_dir / found.group(1).strip()
    if not quiet:
        print(f"triton-ext wheel: {wheel}", file=sys.stderr)
    return wheel
