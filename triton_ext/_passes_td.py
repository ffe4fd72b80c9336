"""Pass options as ``Passes.td`` declares them: the one source of a pass's options.

An extension folder's ``Passes.td`` declares each pass (``def Rec : Pass<"triton-ext-<name>", ...>``)
and its options (``Option<"member", "flag", "type", /*default=*/"value", "help">``). The registry
names the pass (``loop_split`` is the pass whose flag is ``triton-ext-loop-split``) and says where
it runs; the options, their types, defaults and help come from here. Constraints a pass states in
its option help are honoured when a value is given: ``(2 or 3)`` (choices) and ``(at least N)``
(a minimum); an ``unsigned`` option is at least 0.

Only the subset of TableGen the passes use is read (string literals joined by juxtaposition,
comments); anything else in an ``Option<...>`` is an error naming the file and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._errors import ManifestError

__all__ = ["TdOption", "read_passes_td", "flag_of", "help_constraints"]

#: C++ option type -> registry type.
_TYPES = {"int": "int", "unsigned": "int", "int64_t": "int", "uint64_t": "int", "int32_t": "int",
          "uint32_t": "int", "size_t": "int", "bool": "bool", "std::string": "str", "double": "float",
          "float": "float"}
_DEF = re.compile(r"\bdef\s+(\w+)\s*:\s*Pass\s*<\s*\"([^\"]+)\"")
_OPTION = re.compile(r"\bOption\s*<")
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


@dataclass(frozen=True)
class TdOption:
    """One ``Option<...>`` of a pass, with the constraints its help states."""

    flag: str
    type: str
    default: Any
    help: str
    choices: tuple[Any, ...] = ()
    minimum: int | float | None = None
    line: int = 0


def flag_of(pass_name: str) -> str:
    """The flag of a registry pass: ``loop_split`` -> ``triton-ext-loop-split`` (CONTRIBUTING.md)."""
    return "triton-ext-" + pass_name.replace("_", "-")


def _default(text: str, type_: str, where: str) -> Any:
    if type_ == "str":
        inner = _STRING.fullmatch(text.strip())
        return bytes(inner.group(1), "utf-8").decode("unicode_escape") if inner else text
    if type_ == "bool":
        if text in ("true", "false"):
            return text == "true"
        raise ManifestError(f"{where}: expected a bool default true or false, found {text!r}")
    try:
        return int(text, 0) if type_ == "int" else float(text)
    except ValueError:
        raise ManifestError(f"{where}: expected a {type_} default, found {text!r}") from None


def help_constraints(help_: str, type_: str, cpp_type: str = "") -> tuple[tuple[Any, ...], int | float | None]:
    """``(choices, minimum)`` an option's help states: "(2 or 3)", "(at least 2)"; unsigned: >= 0."""
    number = r"-?\d+(?:\.\d+)?"
    convert = int if type_ == "int" else float
    choices: tuple[Any, ...] = ()
    minimum: int | float | None = 0 if cpp_type.startswith("u") or cpp_type == "size_t" else None
    if type_ in ("int", "float"):
        m = re.search(rf"\(({number}(?:, {number})* or {number})\)", help_)
        if m:
            choices = tuple(convert(x) for x in re.findall(number, m.group(1)))
        m = re.search(rf"\(at least ({number})\)", help_)
        if m:
            minimum = convert(m.group(1))
    return choices, minimum


def _split_args(body: str) -> list[str]:
    """The comma-separated arguments of ``Option<...>``; adjacent string literals are joined."""
    args, depth, current, in_string, i = [], 0, "", False, 0
    while i < len(body):
        ch = body[i]
        if in_string:
            current += ch
            if ch == "\\":
                current += body[i + 1]
                i += 1
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string, current = True, current + ch
        elif ch in "<([":
            depth, current = depth + 1, current + ch
        elif ch in ">)]":
            if depth == 0:
                break
            depth, current = depth - 1, current + ch
        elif ch == "," and depth == 0:
            args.append(current.strip())
            current = ""
        else:
            current += ch
        i += 1
    args.append(current.strip())
    return args


def _literal(arg: str, where: str) -> str:
    parts = _STRING.findall(arg)
    if not parts or _STRING.sub("", arg).strip():
        raise ManifestError(f"{where}: expected a string literal in Option<...>, found {arg!r}")
    return "".join(bytes(p, "utf-8").decode("unicode_escape") for p in parts)


def read_passes_td(path: Path) -> dict[str, list[TdOption]]:
    """Pass flag -> its options, for every ``def ... : Pass<...>`` of ``path``."""
    raw = path.read_text(encoding="utf-8")
    text = _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), raw)  # keep offsets and lines
    defs = [(m.start(), m.group(2)) for m in _DEF.finditer(text)]
    out: dict[str, list[TdOption]] = {flag: [] for _, flag in defs}
    for m in _OPTION.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        where = f"{path}:{line}"
        owner = [flag for start, flag in defs if start < m.start()]
        if not owner:
            raise ManifestError(f"{where}: Option<...> outside a pass definition", path=path)
        args = _split_args(text[m.end():])
        if len(args) != 5:
            raise ManifestError(f"{where}: expected Option<\"member\", \"flag\", \"type\", default, "
                                f"\"help\">, found {len(args)} arguments", path=path)
        flag, cpp_type = _literal(args[1], where), _literal(args[2], where)
        type_ = _TYPES.get(cpp_type)
        if type_ is None:
            raise ManifestError(f"{where}: option {flag}: type {cpp_type!r} is not one of "
                                f"{', '.join(_TYPES)}", path=path)
        help_ = _literal(args[4], where)
        choices, minimum = help_constraints(help_, type_, cpp_type)
        out[owner[-1]].append(TdOption(flag, type_, _default(_literal(args[3], where), type_, where),
                                       help_, choices, minimum, line))
    return out
