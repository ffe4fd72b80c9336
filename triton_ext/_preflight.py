"""Check a plugin library before Triton is allowed to load it.

Cheap checks run in this process (the file exists, is readable, is an ELF shared
object). Everything that runs plugin code (static initializers, the entry point,
Triton's own ``extend_with``) runs in a child process, ``python -m
triton_ext._probe``, so that a crash or abort costs the child and becomes a
:class:`~triton_ext._errors.PreflightError` here. Verdicts are cached on disk,
keyed by the library's sha256, the Triton version, the environment (Python, Triton's
folder, platform, the infra library beside the plugin, the _infra bindings) and the probe version, so a second
run pays only for hashing the file. Before any of that, a library whose build record names
another Triton release is refused in one line (:mod:`triton_ext._compat`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ._compat import API_VERSION, PROBE_VERSION, check_triton_release
from ._errors import PreflightError
from ._log import get as _get_logger
from ._probe import infra_bindings
from ._settings import repo_root, settings

_logger = _get_logger("preflight")

__all__ = ["LibraryReport", "preflight", "sha256_file", "check_file"]

_ELF_MAGIC = b"\x7fELF"
_ET_DYN = 3


@dataclass(frozen=True)
class LibraryReport:
    """What a library that passed preflight declares."""

    path: str
    sha256: str
    plugin_name: str
    plugin_version: str
    triton_version: str
    api_version: int
    passes: tuple[str, ...]
    dialects: tuple[str, ...] = ()
    ops: tuple[str, ...] = ()
    cached: bool = False
    #: What the passes say about themselves (pass database); None when _infra is not built.
    descriptions: tuple[dict[str, Any], ...] | None = None


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def installed_triton_version() -> str:
    """The version of the triton that is imported, which the plugins load into. The
    distribution metadata can name another one: a copy on PYTHONPATH ahead of an installed
    triton (seen on a GPU host: metadata 3.6.0, imported 3.9.0)."""
    import triton  # on first use: importing triton_ext must not import Triton

    return triton.__version__


def _fix(extension: str | None) -> str:
    root = repo_root()
    if extension and not ((root / "CMakeLists.txt").is_file() and (root / "infra").is_dir()):
        # An installed core: nothing to build here; the extension's wheel brings the library.
        dist = "triton-ext-" + extension.replace("_", "-")
        return (f"reinstall it: pip install --force-reinstall --no-deps {dist} (from the wheel "
                "index of your Triton release)")
    return f"rebuild with `triton-ext build {extension}`" if extension else "rebuild the library"


def check_file(path: Path, extension: str | None = None) -> None:
    """In-process checks that run no plugin code."""
    if not path.exists():
        raise PreflightError(
            f"{path}: library not found; expected a built plugin there: {_fix(extension).replace('rebuild', 'build', 1)}",
            extension=extension,
            path=path,
        )
    if not path.is_file():
        raise PreflightError(f"{path}: expected a shared library file, found a directory or device", extension=extension, path=path)
    try:
        with open(path, "rb") as f:
            head = f.read(18)
    except OSError as exc:
        raise PreflightError(
            f"{path}: cannot read the library ({exc.strerror}); fix its permissions or {_fix(extension)}",
            extension=extension,
            path=path,
        ) from None
    if head[:4] != _ELF_MAGIC:
        raise PreflightError(
            f"{path}: not a shared library: expected ELF magic 7f 45 4c 46, found {head[:4].hex(' ') or 'an empty file'}; {_fix(extension)}",
            extension=extension,
            path=path,
        )
    order = "little" if head[5:6] == b"\x01" else "big"
    if len(head) < 18 or int.from_bytes(head[16:18], order) != _ET_DYN:
        raise PreflightError(
            f"{path}: not a shared library: expected ELF type ET_DYN, found an executable, object file or a truncated header; {_fix(extension)}",
            extension=extension,
            path=path,
        )


def environment_key(library: Path) -> str:
    """What besides the library's bytes decides a verdict: the Python (interpreter, version), the
    Triton package (version and folder), the platform, and the pass-infra library the plugin would
    link (the one beside it). A verdict from another environment must not answer for this one:
    a plugin that loads in a checkout can fail in a venv whose core wheel lacks the infra library;
    and where the ``_infra`` bindings that describe its passes are."""
    triton_dir = ""
    try:
        spec = importlib.util.find_spec("triton")
        triton_dir = str(Path(spec.origin).parent) if spec and spec.origin else ""
    except (ImportError, ValueError):
        pass
    infra = library.parent / "libTritonExtPassInfra.so"
    try:
        st = infra.stat()
        infra_id = f"{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        infra_id = "none"
    # Where the pass descriptions come from: a verdict made where no _infra bindings were found
    # (no descriptions) must not answer where they are.
    bindings = infra_bindings(str(library))
    parts = [sys.executable, sys.version, installed_triton_version(), triton_dir, platform.platform(),
             str(infra), infra_id, str(bindings)]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def _cache_path(digest: str, triton_version: str, environment: str = "") -> Path:
    env = f"-env{environment}" if environment else ""
    return Path(settings.cache_dir) / f"{digest}-triton{triton_version}{env}-probe{PROBE_VERSION}.json"


def _read_cache(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _write_cache(path: Path, verdict: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump(verdict, f)
        os.replace(tmp, path)
    except OSError:
        pass  # caching is an optimisation; a read-only home must not break loading


def _tail(text: str, lines: int = 15) -> str:
    kept = [line for line in text.strip().splitlines() if "warn_once" not in line and "FP_FUSION" not in line]
    return "\n".join(kept[-lines:])


def _run_probe(path: Path) -> dict[str, Any]:
    """Run the child; return its verdict dict (always with 'ok' and 'error')."""
    cmd = [sys.executable, "-m", "triton_ext._probe", str(path)]
    env = dict(os.environ)
    env.pop("TRITON_EXT_ENABLE", None)  # the child must not enable anything itself
    package_root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = package_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=settings.probe_timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"the check did not finish within {settings.probe_timeout:g} s (hang in a static initializer?)"}
    if proc.returncode < 0:
        try:
            name = signal.Signals(-proc.returncode).name
        except ValueError:
            name = f"signal {-proc.returncode}"
        tail = _tail(proc.stderr)
        return {
            "ok": False,
            "error": f"loading it killed the checking process with {name}"
            + (f"; stderr ends:\n{tail}" if tail else ""),
            "signal": name,
        }
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = _tail(proc.stderr)
        return {
            "ok": False,
            "error": f"the checking process exited with status {proc.returncode}"
            + (f"; stderr ends:\n{tail}" if tail else ""),
        }
    return json.loads(lines[-1])


def preflight(path: str | Path, extension: str | None = None, *, use_cache: bool = True) -> LibraryReport:
    """Check ``path``; return its report or raise :class:`PreflightError`."""
    path = Path(path).resolve() if Path(path).exists() else Path(path)
    check_file(path, extension)
    installed = installed_triton_version()
    check_triton_release(path, installed, extension)
    digest = sha256_file(path)
    cache_file = _cache_path(digest, installed, environment_key(path))
    verdict = _read_cache(cache_file) if use_cache else None
    cached = verdict is not None
    if verdict is None:
        started = time.monotonic()
        verdict = _run_probe(path)
        _logger.info("preflight %s: checked in a child process in %.2f s: %s", path.name, time.monotonic() - started,
                     "ok" if verdict.get("ok") else f"failed ({verdict.get('error') or 'unknown failure'})")
        # Cache what the bytes alone decide. A failed dlopen or a crash may come from
        # the surroundings (a missing libTritonExtPassInfra.so), so it is checked again.
        if verdict.get("ok") or verdict.get("stage") == "entry point":
            _write_cache(cache_file, verdict)
    else:
        _logger.debug("preflight %s: cached verdict (%s)", path.name, cache_file)
    if not verdict.get("ok"):
        error = verdict.get("error") or "unknown failure"
        if verdict.get("api_version") not in (None, API_VERSION):
            step = _fix(extension)
        elif verdict.get("triton_version") and verdict.get("triton_version") != installed:
            step = _fix(extension)
            error = f"built for Triton {verdict['triton_version']}, {installed} installed"
        else:
            step = f"run `triton-ext doctor`, then {_fix(extension)}"
        raise PreflightError(
            f"{path}: preflight failed: {error}; {step}", extension=extension, path=path
        )
    return LibraryReport(
        path=str(path),
        sha256=digest,
        plugin_name=verdict["plugin_name"],
        plugin_version=verdict["plugin_version"],
        triton_version=verdict["triton_version"],
        api_version=verdict["api_version"],
        passes=tuple(verdict["passes"]),
        dialects=tuple(verdict.get("dialects", ())),
        ops=tuple(verdict.get("ops", ())),
        cached=cached,
        descriptions=None if verdict.get("descriptions") is None else tuple(verdict["descriptions"]),
    )


def report_dict(report: LibraryReport) -> dict[str, Any]:
    return asdict(report)
