"""What a plugin's passes say about themselves, read from libTritonExtPassInfra's pass database.

The infra derives each pass's MLIR argument (its opt flag), summary and option defaults from the
MLIR pass object; the nanobind module ``_infra`` (built beside the plugins) exposes that. Reading
it loads the plugin, which runs the plugin's code, so :func:`describe_library` does it in a child
process: a broken plugin cannot take the caller down, and nothing is compiled.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ._errors import PreflightError
from ._settings import settings


@dataclass(frozen=True)
class PassDescription:
    plugin: str
    name: str  # the name Triton binds: passes.plugin.add_<name>
    argument: str  # MLIR pass argument (opt flag)
    summary: str
    pass_name: str
    anchor: str  # op the pass runs on, or "any"
    pipeline: str  # textual pipeline with every option at its default

    @property
    def option_defaults(self) -> dict[str, str]:
        """``{flag: default}`` parsed from the pipeline text ``arg{a=1 b=x}``."""
        inner = self.pipeline.partition("{")[2].rpartition("}")[0]
        pairs = (item.partition("=") for item in inner.split())
        return {k: v for k, _, v in pairs}


def infra_module_dirs() -> list[Path]:
    """Where the ``_infra`` bindings may live: the build folder, or this package (wheels)."""
    return [Path(settings.build_dir) / "plugins", Path(__file__).resolve().parent]


def describe_library(path: Path, timeout: float = 120.0) -> list[PassDescription]:
    """Describe the passes of the plugin at ``path`` (loaded in a child process)."""
    cmd = [sys.executable, "-m", "triton_ext._database", str(path),
           *map(str, infra_module_dirs())]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if res.returncode != 0:
        tail = (res.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise PreflightError(f"{path}: cannot describe its passes: {tail}", path=path)
    return [PassDescription(**item) for item in json.loads(res.stdout)]


def _child(argv: list[str]) -> int:
    path, search = argv[0], argv[1:]
    import triton._C.libtriton  # noqa: F401  (plugins resolve MLIR symbols from it)

    # The bindings are an extension module beside the plugins: load it from its file.
    import importlib.machinery
    import importlib.util

    found = [f for d in search if Path(d).is_dir() for f in sorted(Path(d).glob("_infra*.so"))]
    if not found:
        print(f"the _infra bindings are not built (no _infra*.so in {', '.join(search)}); "
              "run `triton-ext build`", file=sys.stderr)
        return 2
    loader = importlib.machinery.ExtensionFileLoader("_infra", str(found[0]))
    spec = importlib.util.spec_from_file_location("_infra", found[0], loader=loader)
    assert spec is not None
    _infra = importlib.util.module_from_spec(spec)
    loader.exec_module(_infra)
    print(json.dumps(_infra.describe(str(Path(path).resolve()))))
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1:]))
