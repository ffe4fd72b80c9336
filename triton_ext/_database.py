"""What a plugin's passes say about themselves, read from libTritonExtPassInfra's pass database.

The infra derives each pass's MLIR argument (its opt flag), summary and option defaults from the
MLIR pass object; the nanobind module ``_infra`` (built beside the plugins) exposes that. Reading
it loads the plugin, so it happens in the preflight child (:mod:`triton_ext._probe`), the one
process that loads a plugin to read it; the answer is part of the cached preflight verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ._errors import PreflightError
from ._preflight import preflight

__all__ = ["PassDescription", "describe_library"]


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


def describe_library(path: Path, extension: str | None = None) -> list[PassDescription]:
    """Describe the passes of the plugin at ``path`` (from its preflight verdict)."""
    report = preflight(Path(path), extension)
    if report.descriptions is None:
        raise PreflightError(f"{path}: cannot describe its passes: the _infra bindings are not built "
                             "beside it; run `triton-ext build`", extension=extension, path=path)
    return [PassDescription(**item) for item in report.descriptions]
