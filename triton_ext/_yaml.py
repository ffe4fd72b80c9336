"""Reading a registry document into YAML nodes, safely: no aliases, bounded nesting.

Registries come from the checkout and from installed wheels' fragments; anyone who can put one on
a user's path must not be able to stall or crash the interpreter that reads it. Every problem is a
:class:`~triton_ext._errors.ManifestError` naming the file and line and what to change.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from ._errors import ManifestError

__all__ = ["MAX_DEPTH", "compose_registry"]

MAX_DEPTH = 32


class _AliasRefused(Exception):
    """An alias (``*name``) in a registry; carries its line (1-based) and name."""

    def __init__(self, line: int, name: str) -> None:
        super().__init__(name)
        self.line, self.name = line, name


class _NoAliasLoader(yaml.SafeLoader):
    """A SafeLoader whose composer refuses aliases at the first one.

    A registry needs no aliases, and each alias can stand for a whole subtree: nested ones
    ("billion laughs") make any walk over the composed tree exponential in the file's length.
    Refusing them while composing keeps the tree a tree, so every later walk is linear."""

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node | None:  # type: ignore[override]
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise _AliasRefused(event.start_mark.line + 1, event.anchor)
        return super().compose_node(parent, index)  # type: ignore[no-any-return]


def _depth(root: yaml.Node) -> int:
    """Nesting depth of a composed document, without recursion (inputs may be hostile)."""
    deepest, stack = 0, [(root, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            return deepest
        if isinstance(node, yaml.MappingNode):
            stack.extend((n, depth + 1) for pair in node.value for n in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((n, depth + 1) for n in node.value)
    return deepest


def compose_registry(text: str, path: Path) -> yaml.Node:
    """The node tree of one registry document, or :class:`ManifestError` (``FILE:LINE: ...``)."""
    try:
        root = yaml.compose(text, Loader=_NoAliasLoader)
    except _AliasRefused as exc:
        raise ManifestError(f"{path}:{exc.line}: YAML alias '*{exc.name}' is not allowed in a registry; "
                            f"write the value out in full where the alias stands (and drop its "
                            f"'&{exc.name}' anchor)", path=path) from None
    except RecursionError:
        raise ManifestError(f"{path}:1: nested too deeply for a registry; a registry needs at most "
                            "6 levels (extensions.<name>.passes.<pass>.options.<flag>)",
                            path=path) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc)
        raise ManifestError(f"{path}:{line}: not valid YAML: {problem}", path=path) from None
    if root is None:
        raise ManifestError(f"{path}:1: expected a mapping with 'schema' and 'extensions', found an empty file", path=path)
    if _depth(root) > MAX_DEPTH:
        raise ManifestError(f"{path}:1: nested more than {MAX_DEPTH} levels deep; a registry needs "
                            "at most 6 (extensions.<name>.passes.<pass>.options.<flag>)", path=path)
    return root
