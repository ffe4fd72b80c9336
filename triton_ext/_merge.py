"""Joining the registries of several sources (the repository's, installed extension packages')."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from ._errors import ManifestError
from ._model import Extension, Manifest, PassSpec


def check_unique_passes(errors: list[str], manifest: Manifest) -> None:
    """Appends to `errors` one line per pass name declared by two extensions."""
    seen: dict[str, PassSpec] = {}
    for ext in manifest.extensions:
        for spec in ext.passes:
            first = seen.get(spec.name)
            if first is not None:
                first_ext = manifest.extension(first.extension)
                errors.append(
                    f"{ext.source}:{spec.line}: extensions.{ext.name}.passes.{spec.name}: "
                    f"expected a pass name unique across extensions, found it also in "
                    f"extension {first.extension} ({first_ext.source}:{first.line}); rename one of them"
                )
            else:
                seen[spec.name] = spec


def merge(manifests: Iterable[Manifest]) -> Manifest:
    """Join manifests; the same extension or pass name from two sources is an error."""
    extensions: list[Extension] = []
    sources: list[Path] = []
    by_name: dict[str, Extension] = {}
    problems: list[str] = []
    for manifest in manifests:
        sources.extend(manifest.sources)
        for ext in manifest.extensions:
            other = by_name.get(ext.name)
            if other is not None:
                problems.append(
                    f"{ext.source}:{ext.line}: extensions.{ext.name}: expected a unique extension name, "
                    f"found it already declared at {other.source}:{other.line}; "
                    f"uninstall one package or rename the extension"
                )
                continue
            by_name[ext.name] = ext
            extensions.append(ext)
    merged = Manifest(tuple(extensions), tuple(sources))
    check_unique_passes(problems, merged)
    if problems:
        raise ManifestError(
            problems[0] if len(problems) == 1 else "conflicting registries:\n  " + "\n  ".join(problems),
            errors=tuple(problems),
        )
    return merged
