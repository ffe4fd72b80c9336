"""Child-process checker: ``python -m triton_ext._probe PATH`` prints one JSON object.

Runs the plugin's static initializers and entry point, reads ``PluginInfo`` with
ctypes, and (when that looks sound) lets Triton itself load it with
``passes.plugin.extend_with``; then reads what its passes say about themselves from
libTritonExtPassInfra's pass database (the ``_infra`` bindings: flag, summary, option
defaults). This is the one process that loads a plugin to read it. Anything that crashes
here crashes only this child; :mod:`triton_ext._preflight` turns the outcome into a
verdict, cached by the library's sha256.

Output: ``{"ok": bool, "error": str|null, "stage": str, "api_version": int|null,
"plugin_name", "plugin_version", "triton_version", "passes": [...],
"dialects": [...], "ops": [...], "descriptions": [...] | null}`` (null: no ``_infra``).
"""

from __future__ import annotations

import ctypes
import importlib.machinery
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

from ._compat import API_VERSION, PROBE_VERSION
from ._settings import settings

ENTRY_POINT = "tritonGetPluginInfo"


class _PassInfo(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("version", ctypes.c_char_p),
        ("addPass", ctypes.c_void_p),
        ("registerPass", ctypes.c_void_p),
    ]


class _DialectInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("version", ctypes.c_char_p), ("registerDialect", ctypes.c_void_p)]


class _OpInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("addOp", ctypes.c_void_p)]


class _PluginInfo(ctypes.Structure):
    _fields_ = [
        ("apiVersion", ctypes.c_uint32),
        ("pluginName", ctypes.c_char_p),
        ("pluginVersion", ctypes.c_char_p),
        ("passes", ctypes.POINTER(_PassInfo)),
        ("numPasses", ctypes.c_size_t),
        ("dialects", ctypes.POINTER(_DialectInfo)),
        ("numDialects", ctypes.c_size_t),
        ("ops", ctypes.POINTER(_OpInfo)),
        ("numOps", ctypes.c_size_t),
        ("tritonVersion", ctypes.c_char_p),
    ]


def _text(value: bytes | None) -> str | None:
    return value.decode("utf-8", "replace") if value is not None else None


def _emit(result: dict[str, Any]) -> int:
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
    return 0


def probe(path: str) -> dict[str, Any]:
    """Load ``path`` in this process and describe it (may crash the process)."""
    result: dict[str, Any] = {
        "ok": False,
        "error": None,
        "stage": "import",
        "probe_version": PROBE_VERSION,
        "api_version": None,
        "plugin_name": None,
        "plugin_version": None,
        "triton_version": None,
        "passes": [],
        "dialects": [],
        "ops": [],
    }
    import triton  # on first use: importing triton_ext must not import Triton
    import triton._C.libtriton as libtriton  # plugins resolve MLIR symbols from it

    installed = triton.__version__
    result["installed_triton"] = installed
    result["stage"] = "dlopen"
    try:
        lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError as exc:
        result["error"] = f"cannot load the library: {exc}"
        return result
    result["stage"] = "entry point"
    try:
        entry = getattr(lib, ENTRY_POINT)
    except AttributeError:
        result["error"] = f"no entry point {ENTRY_POINT}"
        return result
    entry.restype = ctypes.POINTER(_PluginInfo)
    entry.argtypes = []
    info_ptr = entry()
    if not info_ptr:
        result["error"] = f"{ENTRY_POINT} returned NULL"
        return result
    info = info_ptr.contents
    result["api_version"] = int(info.apiVersion)
    if info.apiVersion != API_VERSION:
        result["error"] = f"wrong plugin API version: expected {API_VERSION}, found {info.apiVersion}"
        return result
    result["plugin_name"] = _text(info.pluginName)
    result["plugin_version"] = _text(info.pluginVersion)
    result["triton_version"] = _text(info.tritonVersion)
    if result["triton_version"] != installed:
        result["error"] = f"built for Triton {result['triton_version']}, {installed} installed"
        return result
    for table, count, kind in (("passes", "numPasses", "pass"), ("dialects", "numDialects", "dialect"), ("ops", "numOps", "op")):
        n = int(getattr(info, count))
        pointer = getattr(info, table)
        if n and not pointer:
            result["error"] = f"{kind} table is NULL but {count} is {n}"
            return result
        names = []
        for i in range(n):
            name = _text(pointer[i].name)
            if not name:
                result["error"] = f"{kind} #{i} has no name"
                return result
            names.append(name)
        result[table] = names
    for name in result["passes"]:
        if not name.isidentifier():
            result["error"] = f"pass name {name!r} is not a Python identifier, so Triton cannot bind add_{name}"
            return result
    result["stage"] = "extend_with"
    try:
        libtriton.passes.plugin.extend_with(path)
        if result["dialects"]:
            libtriton.ir.extend_dialects_with(path)
        if result["ops"]:
            libtriton.ir.builder.extend_with(path)
    except Exception as exc:
        result["error"] = f"Triton refused it: {exc}"
        return result
    missing = [n for n in result["passes"] if not hasattr(libtriton.passes.plugin, f"add_{n}")]
    if missing:
        result["error"] = f"Triton loaded it but bound no add_{missing[0]}"
        return result
    result["stage"] = "describe"
    try:
        result["descriptions"] = _describe(path)
    except Exception as exc:  # the bindings are a convenience: a broken one must not block loading
        result["descriptions"] = None
        result["describe_error"] = f"{type(exc).__name__}: {exc}"
    result["stage"] = "done"
    result["ok"] = True
    return result


def infra_module_dirs(path: str) -> list[Path]:
    """Where the ``_infra`` bindings may be: beside the plugin, in the build's plugins/ folder, or
    in this package (a wheel install)."""
    return [Path(path).resolve().parent, Path(settings.build_dir) / "plugins", Path(__file__).resolve().parent]


def infra_bindings(path: str) -> Path | None:
    """The ``_infra`` bindings the probe of the plugin at ``path`` would load (the first of
    :func:`infra_module_dirs` that has a build for this interpreter), or None."""
    # Only a build for this interpreter: the bindings are a CPython extension, and one built for
    # another Python (plugins built on a 3.11 machine, run on a 3.12 GPU host) crashes the
    # process that loads it, so that its passes could never be described or enabled there.
    names = {"_infra" + suffix for suffix in importlib.machinery.EXTENSION_SUFFIXES}
    found = [f for d in infra_module_dirs(path) if d.is_dir() for f in sorted(d.glob("_infra*")) if f.name in names]
    return found[0] if found else None


def _describe(path: str) -> list[dict[str, Any]] | None:
    """The plugin's passes as its pass database describes them; None without the bindings."""
    bindings = infra_bindings(path)
    if bindings is None:
        return None
    loader = importlib.machinery.ExtensionFileLoader("_infra", str(bindings))
    spec = importlib.util.spec_from_file_location("_infra", bindings, loader=loader)
    assert spec is not None
    infra = importlib.util.module_from_spec(spec)
    loader.exec_module(infra)
    return [dict(item) for item in infra.describe(str(Path(path).resolve()))]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.stderr.write("usage: python -m triton_ext._probe LIBRARY\n")
        return 2
    return _emit(probe(args[0]))


if __name__ == "__main__":
    sys.exit(main())
