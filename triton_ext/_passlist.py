"""Pass lists in MLIR's textual-pipeline syntax: ``a,b{flag=1 other=x},c``.

One parser for every place a user writes passes as text: ``TRITON_EXT_ENABLE`` and
``triton-ext opt --pass``. Options go inside braces after the pass name, as ``flag=value`` pairs
separated by spaces, as in ``mlir-opt -pass-pipeline``; a value may be quoted (``'a b'`` or
``"a b"``). Values stay text here: each pass's declared options (from its pass records) parse
and check them (:func:`triton_ext._selection.check_options` with ``text=True``).
"""

from __future__ import annotations

import re

from ._errors import UnknownPassError

__all__ = ["PassItem", "parse_pass_list", "split_items"]

PassItem = tuple[str, dict[str, str]]

_NAME = re.compile(r"[A-Za-z0-9_.:-]+")
_OPTION = re.compile(r"""\s*([A-Za-z0-9_-]+)=("[^"]*"|'[^']*'|[^\s"']+)""")


def split_items(text: str) -> list[str]:
    """``text`` split at the commas outside braces, items stripped, empty ones dropped."""
    items, depth, current = [], 0, ""
    for ch in text:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            items.append(current)
            current = ""
        else:
            current += ch
    items.append(current)
    return [item.strip() for item in items if item.strip()]


def parse_pass_list(text: str, where: str) -> list[PassItem]:
    """``[(name, {flag: text})]`` for ``text``; ``where`` names the source in errors
    (``TRITON_EXT_ENABLE``, ``--pass``). Raises :class:`UnknownPassError` in one line."""
    out: list[PassItem] = []
    for item in split_items(text):
        m = _NAME.match(item)
        if m is None:
            raise UnknownPassError(f"{where}: expected a pass name like my_pass or my_pass{{some-flag=2}}, "
                                   f"found {item!r}")
        name, rest = m.group(0), item[m.end():].strip()
        options: dict[str, str] = {}
        if rest:
            if not (rest.startswith("{") and rest.endswith("}")):
                raise UnknownPassError(f"{where}: expected {name}{{flag=value ...}} (options in braces after the "
                                       f"name, MLIR's syntax), found {item!r}")
            body, pos = rest[1:-1], 0
            while body[pos:].strip():
                o = _OPTION.match(body, pos)
                if o is None:
                    raise UnknownPassError(f"{where}: {name}{{...}}: expected flag=value pairs separated by spaces, "
                                           f"found {body[pos:].strip()!r}")
                value = o.group(2)
                if value[:1] in "\"'" and len(value) >= 2:
                    value = value[1:-1]
                if o.group(1) in options:
                    raise UnknownPassError(f"{where}: {name}{{...}}: option {o.group(1)!r} given twice")
                options[o.group(1)] = value
                pos = o.end()
        out.append((name, options))
    return out
