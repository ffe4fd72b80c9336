"""Templates of ``triton-ext new``: real files under ``templates/<kind>/`` (package data).

One placeholder syntax everywhere, ``@@key@@``, in file contents and in file names (C++, ODS,
MLIR and YAML use every kind of brace, so braces are never placeholders). ``templates/<kind>/``
is the extension folder; ``templates/<kind>.registry.yaml`` is its registry entry.
"""

from __future__ import annotations

import re
from importlib import resources
from importlib.resources.abc import Traversable

__all__ = ["render", "render_tree", "render_entry", "TEMPLATES"]

_PLACEHOLDER = re.compile(r"@@([a-z_]+)@@")

#: The template folder inside the installed package.
TEMPLATES = resources.files(__package__) / "templates"


def render(template: str, values: dict[str, str]) -> str:
    """Substitute ``@@key@@``; a key without a value is a bug in the template, not a user error."""

    def one(m: re.Match[str]) -> str:
        if m.group(1) not in values:
            raise KeyError(f"template placeholder @@{m.group(1)}@@ has no value")
        return values[m.group(1)]

    return _PLACEHOLDER.sub(one, template)


def _walk(folder: Traversable, prefix: str = "") -> list[tuple[str, Traversable]]:
    out: list[tuple[str, Traversable]] = []
    for item in sorted(folder.iterdir(), key=lambda t: t.name):
        if item.name == "__pycache__":
            continue
        rel = f"{prefix}{item.name}"
        out.extend(_walk(item, rel + "/") if item.is_dir() else [(rel, item)])
    return out


def render_tree(kind: str, values: dict[str, str]) -> dict[str, str]:
    """Relative path -> text of the folder ``templates/<kind>/``, names and contents rendered."""
    folder = TEMPLATES / kind
    if not folder.is_dir():
        raise KeyError(f"no scaffold templates for kind {kind!r}")
    return {render(rel, values): render(item.read_text(encoding="utf-8"), values)
            for rel, item in _walk(folder)}


def render_entry(kind: str, values: dict[str, str]) -> str:
    """The registry.yaml entry of a scaffolded extension of ``kind``."""
    return render((TEMPLATES / f"{kind}.registry.yaml").read_text(encoding="utf-8"), values)
