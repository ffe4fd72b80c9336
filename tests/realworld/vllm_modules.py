"""Import vLLM's Triton attention modules from the pinned vllm wheel's files, without vllm.

vLLM's package ``__init__`` (and ``vllm.platforms``, ``vllm.envs``...) pull in its own CUDA torch
and compiled extensions, which cannot live next to triton==3.9.0 and a CPU torch; its wheel is
337 MB (837 MB unpacked). The attention kernels need only torch, triton and a few small helpers.
So the corpus uses the wheel's own files, unchanged:

* :func:`fetch` downloads the wheel pinned in ``vllm-requirements.txt`` (``pip download
  --no-deps``, pip's cache) and unpacks only :data:`FILES` into ``~/.cache/triton-ext/vllm-<ver>``
  (about 150 KB); ``tools/setup.sh`` runs it once (a stamp file makes it a no-op afterwards).
  ``python -m tests.realworld.vllm_modules fetch`` does the same; ``TRITON_EXT_VLLM_DIR`` points
  elsewhere (a folder holding ``vllm/``); ``build/vllm-<ver>`` in the repository is looked at too, so a
  copy made by ``fetch build/vllm-<ver>`` travels with ``build/`` to a GPU host without a package index.
* :func:`import_kernel_module` imports ``vllm.v1.attention.ops.<name>`` from those files under its
  own name, with vLLM's parent packages as bare namespace modules (their ``__init__`` not run) and
  the modules below standing in for the runtime ones they import: ``vllm.envs`` (defaults:
  no batch invariance), ``vllm.logger`` (``logging``), ``vllm.platforms`` (``current_platform``
  answering from ``torch.cuda`` or, without a GPU, as an sm_90 CUDA device), ``vllm.triton_utils``
  (``triton``, ``tl``), ``vllm.platforms.rocm`` (no ROCm custom kernel) and
``vllm.v1.kv_cache_interface`` (``KVQuantMode``, the wheel's own
  class definition, taken from its file with ``ast``). ``vllm._custom_ops`` raises if a launcher
  reaches it (only ROCm paths do).

An installed vllm (``find_spec``, not imported) is used when there is no cached copy.
"""

from __future__ import annotations

import ast
import enum
import importlib
import importlib.util
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import types
import zipfile
from pathlib import Path
from typing import Any

__all__ = ["VERSION", "FILES", "fetch", "source_root", "import_kernel_module", "VllmUnavailable"]

_PIN = Path(__file__).with_name("vllm-requirements.txt")


def _pinned_version() -> str:
    for line in _PIN.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("vllm=="):
            return line.split("==", 1)[1]
    raise ValueError(f"{_PIN} pins no vllm==<version>")


VERSION = _pinned_version()
#: The wheel's files the corpus imports (kernel modules and their Triton helpers) or reads.
FILES = (
    "vllm/v1/attention/ops/triton_unified_attention.py",
    "vllm/v1/attention/ops/triton_attention_helpers.py",
    "vllm/v1/attention/ops/prefix_prefill.py",
    "vllm/v1/attention/ops/chunked_prefill_paged_decode.py",
    "vllm/v1/attention/ops/triton_decode_attention.py",
    "vllm/v1/kv_cache_interface.py",
    "vllm/utils/math_utils.py",
    "vllm/v1/worker/gpu/sample/gumbel.py",
)
_PARENTS = ("vllm", "vllm.v1", "vllm.v1.attention", "vllm.v1.attention.ops", "vllm.utils")


class VllmUnavailable(ImportError):
    """Neither a cached copy of the wheel's files nor an installed vllm was found."""


def cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "triton-ext" / f"vllm-{VERSION}"


def repo_copy() -> Path:
    """``build/vllm-<version>`` in the repository: a copy that travels with build/ to a GPU host."""
    return Path(__file__).resolve().parents[2] / "build" / f"vllm-{VERSION}"


def _has_files(root: Path) -> bool:
    return all((root / f).is_file() for f in FILES)


def source_root() -> Path:
    """The folder holding ``vllm/`` with :data:`FILES`."""
    env = os.environ.get("TRITON_EXT_VLLM_DIR")
    if env:
        if not _has_files(Path(env)):
            missing = [f for f in FILES if not (Path(env) / f).is_file()]
            raise VllmUnavailable(f"TRITON_EXT_VLLM_DIR={env} lacks {missing}")
        return Path(env)
    for root in (cache_dir(), repo_copy()):
        if _has_files(root):
            return root
    spec = importlib.util.find_spec("vllm") if "vllm" not in sys.modules else None
    if spec is not None and spec.submodule_search_locations:
        root = Path(list(spec.submodule_search_locations)[0]).parent
        if _has_files(root):
            return root
    raise VllmUnavailable(
        f"vLLM {VERSION}'s kernel files are not in {cache_dir()}: run "
        "`python -m tests.realworld.vllm_modules fetch` (tools/setup.sh does), or set TRITON_EXT_VLLM_DIR")


def fetch(dest: Path | None = None) -> Path:
    """Download the pinned wheel (pip's cache) and unpack :data:`FILES` into ``dest``."""
    dest = dest or cache_dir()
    if _has_files(dest):
        return dest
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                        "-r", str(_PIN), "-d", tmp], check=True)
        wheels = sorted(Path(tmp).glob(f"vllm-{VERSION}-*.whl"))
        if not wheels:
            raise VllmUnavailable(f"pip download gave no vllm-{VERSION} wheel in {tmp}")
        with zipfile.ZipFile(wheels[0]) as zf:
            part = dest.with_name(dest.name + ".part")
            shutil.rmtree(part, ignore_errors=True)  # left by an interrupted fetch
            for name in FILES:
                target = part / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(zf.read(name))
            # A copy made before FILES grew lacks the new files: replaced whole, as the wheel has them.
            shutil.rmtree(dest, ignore_errors=True)
            part.rename(dest)
    return dest


# --------------------------------------------------------------------------- #
# The stand-ins for vLLM's runtime modules
# --------------------------------------------------------------------------- #


class _Logger(logging.LoggerAdapter):
    def _once(self, level: int, msg: str, *args: Any) -> None:
        key = (level, msg)
        if key not in _SEEN:
            _SEEN.add(key)
            self.log(level, msg, *args)

    def debug_once(self, msg: str, *args: Any, **_: Any) -> None:
        self._once(logging.DEBUG, msg, *args)

    def info_once(self, msg: str, *args: Any, **_: Any) -> None:
        self._once(logging.INFO, msg, *args)

    def warning_once(self, msg: str, *args: Any, **_: Any) -> None:
        self._once(logging.WARNING, msg, *args)


_SEEN: set[tuple[int, str]] = set()


class _Platform:
    """``vllm.platforms.current_platform`` for an NVIDIA GPU (sm_90 when none is visible)."""

    def _capability(self) -> tuple[int, int]:
        import torch

        if torch.cuda.is_available():
            return tuple(torch.cuda.get_device_capability())  # type: ignore[return-value]
        return (9, 0)

    def get_device_capability(self, device_id: int = 0) -> tuple[int, int]:
        return self._capability()

    def has_device_capability(self, capability: int | tuple[int, int], device_id: int = 0) -> bool:
        major, minor = self._capability()
        if isinstance(capability, tuple):
            return (major, minor) >= capability
        return major * 10 + minor >= capability

    def is_device_capability_family(self, capability: int, device_id: int = 0) -> bool:
        major, minor = self._capability()
        return (major * 10 + minor) // 10 == capability // 10

    def is_device_capability(self, capability: int | tuple[int, int], device_id: int = 0) -> bool:
        major, minor = self._capability()
        if isinstance(capability, tuple):
            return (major, minor) == capability
        return major * 10 + minor == capability

    def fp8_dtype(self) -> Any:
        import torch

        return torch.float8_e4m3fn

    def is_rocm(self) -> bool:
        return False

    def is_cuda(self) -> bool:
        return True

    def is_xpu(self) -> bool:
        return False

    def is_cpu(self) -> bool:
        return False


def _kv_quant_mode(root: Path) -> type[enum.IntEnum]:
    """The wheel's ``KVQuantMode`` class, executed alone from its file."""
    path = root / "vllm/v1/kv_cache_interface.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "KVQuantMode":
            namespace: dict[str, Any] = {"IntEnum": enum.IntEnum, "Enum": enum.Enum}
            exec(compile(ast.Module([node], []), str(path), "exec"), namespace)  # noqa: S102
            return namespace["KVQuantMode"]
    raise VllmUnavailable(f"{path} defines no KVQuantMode")


def _custom_ops_unavailable(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    raise VllmUnavailable(f"vllm._custom_ops.{name} is a compiled extension, not available here")


def _install_stand_ins(root: Path) -> None:
    import torch  # noqa: F401  (before the stand-ins: torch's import inspects every module)
    import triton
    import triton.language as tl

    for name in [m for m in sys.modules if m == "vllm" or m.startswith("vllm.")]:
        del sys.modules[name]
    for name in _PARENTS:
        mod = types.ModuleType(name)
        mod.__path__ = [str(root.joinpath(*name.split(".")))]
        sys.modules[name] = mod
    envs = types.ModuleType("vllm.envs")
    envs.VLLM_BATCH_INVARIANT = False  # type: ignore[attr-defined]
    envs.VLLM_TRITON_FORCE_FIRST_CONFIG = False  # type: ignore[attr-defined]
    logger = types.ModuleType("vllm.logger")
    logger.init_logger = lambda name: _Logger(logging.getLogger(name), {})  # type: ignore[attr-defined]
    platforms = types.ModuleType("vllm.platforms")
    platforms.current_platform = _Platform()  # type: ignore[attr-defined]
    platforms.__path__ = []  # type: ignore[attr-defined]
    rocm = types.ModuleType("vllm.platforms.rocm")
    rocm.use_rocm_custom_paged_attention = lambda *a, **k: False  # type: ignore[attr-defined]
    triton_utils = types.ModuleType("vllm.triton_utils")
    triton_utils.triton, triton_utils.tl = triton, tl  # type: ignore[attr-defined]
    triton_utils.HAS_TRITON = True  # type: ignore[attr-defined]
    kv = types.ModuleType("vllm.v1.kv_cache_interface")
    kv.KVQuantMode = _kv_quant_mode(root)  # type: ignore[attr-defined]
    ops = types.ModuleType("vllm._custom_ops")
    ops.__getattr__ = _custom_ops_unavailable  # type: ignore[attr-defined]
    for mod in (envs, logger, platforms, rocm, triton_utils, kv, ops):
        sys.modules[mod.__name__] = mod
    sys.modules["vllm"].envs = envs  # type: ignore[attr-defined]


def loaded_without_package_init() -> bool:
    root = sys.modules.get("vllm")
    return root is not None and getattr(root, "__file__", None) is None


def import_kernel_module(name: str) -> types.ModuleType:
    """``vllm.v1.attention.ops.<name>``, e.g. ``triton_unified_attention``."""
    full = f"vllm.v1.attention.ops.{name}"
    if full in sys.modules:
        return sys.modules[full]
    if not loaded_without_package_init():
        _install_stand_ins(source_root())
    return importlib.import_module(full)


if __name__ == "__main__":
    if not sys.argv[1:] or sys.argv[1] != "fetch" or len(sys.argv) > 3:
        raise SystemExit("usage: python -m tests.realworld.vllm_modules fetch [DEST]  "
                         "(DEST: default ~/.cache/triton-ext/vllm-<version>; build/vllm-<version> travels to a GPU host)")
    print(fetch(Path(sys.argv[2]) if len(sys.argv) == 3 else None))
