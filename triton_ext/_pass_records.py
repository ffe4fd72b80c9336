"""Pass options as TableGen resolved them: the records the build writes beside each plugin.

The build runs ``mlir-tblgen --print-records`` over an extension's ``Passes.td``
(``cmake/TritonExt.cmake``: ``lib<Target>.passes.records`` in the plugins folder). Every record
comes out with its fields evaluated, so options declared through shared classes, the values of
an ``EnumOption`` and the bounds of a ``RangeOption``/``MinOption``
(``infra/include/triton-ext/PassOptions.td``) are plain fields here; nothing is read from the
``.td`` source or from help text. This module reads that dump: each ``def`` whose classes include
``PassBase``, its ``argument`` (the pass flag) and the ``Option`` records its ``options`` list
names.

The dump prints a record as ``def NAME {\\t// Class1 Class2``, one ``  type field = value;`` line per
field and a closing ``}``; string values are printed between quotes without escaping, code values
between ``[{`` and ``}]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._errors import ManifestError

__all__ = ["DeclaredOption", "flag_of", "read_pass_records", "records_path"]

#: C++ option type -> registry type (an EnumOption's C++ enum is a ``str`` with allowed values).
CPP_TYPES = {"int": "int", "unsigned": "int", "int64_t": "int", "uint64_t": "int", "int32_t": "int",
             "uint32_t": "int", "size_t": "int", "bool": "bool", "std::string": "str", "double": "float",
             "float": "float"}
_UNSIGNED = ("unsigned", "uint64_t", "uint32_t", "size_t")

_DEF = re.compile(r"^def (\S+) \{(?:\t// (.*))?$")
_FIELD = re.compile(r"^  (?:field )?([A-Za-z_][\w:]*(?:<[^=]*>)?) (\w+) = (.*)$")
_STRING_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True)
class DeclaredOption:
    """One option of a pass, as TableGen resolved it."""

    flag: str
    type: str
    default: Any
    help: str
    #: An EnumOption's spellings (in declaration order); empty for other options.
    allowed: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    #: The option's C++ type (``unsigned``, ``std::string``, an enum's name).
    cpp_type: str = ""


@dataclass(frozen=True)
class _Record:
    name: str
    classes: tuple[str, ...]
    fields: dict[str, tuple[str, str]]  # field -> (type, raw value)


def flag_of(pass_name: str) -> str:
    """The flag of a registry pass: ``my_pass`` -> ``triton-ext-my-pass`` (CONTRIBUTING.md)."""
    return "triton-ext-" + pass_name.replace("_", "-")


def records_path(library: Path) -> Path:
    """Where the build writes the records of ``library`` (``libX.so`` -> ``libX.passes.records``)."""
    return library.with_name(library.name.removesuffix(".so") + ".passes.records")


def _records(text: str, path: Path) -> dict[str, _Record]:
    records: dict[str, _Record] = {}
    lines = text.splitlines()
    try:
        i = lines.index("------------- Defs -----------------") + 1
    except ValueError:
        raise ManifestError(f"{path}: not a `mlir-tblgen --print-records` dump (no Defs section); "
                            "rebuild the extension (`triton-ext build`)", path=path) from None
    while i < len(lines):
        m = _DEF.match(lines[i])
        i += 1
        if m is None:
            continue
        fields: dict[str, tuple[str, str]] = {}
        last: str | None = None
        while i < len(lines) and lines[i] != "}":
            f = _FIELD.match(lines[i])
            if f is not None:
                last = f.group(2)
                fields[last] = (f.group(1), f.group(3))
            elif last is not None:  # a multi-line value (code, or a string with a newline)
                kind, value = fields[last]
                fields[last] = (kind, value + "\n" + lines[i])
            i += 1
        i += 1
        records[m.group(1)] = _Record(m.group(1), tuple((m.group(2) or "").split()),
                                      {k: (t, v.removesuffix(";")) for k, (t, v) in fields.items()})
    return records


def _text(record: _Record, field: str, path: Path) -> str:
    kind, value = record.fields.get(field, ("", "?"))
    if value.startswith("[{") and value.endswith("}]"):
        return value[2:-2]
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1]
    raise ManifestError(f"{path}: record {record.name}: expected a string in field {field!r}, found "
                        f"{value!r}", path=path)


def _int(record: _Record, field: str) -> int | None:
    value = record.fields.get(field, ("", "?"))[1]
    return None if value == "?" else int(value)


def _strings(record: _Record, field: str) -> tuple[str, ...]:
    value = record.fields.get(field, ("", "[]"))[1]
    return tuple(re.findall(r'"([^"]*)"', value))


def _default(text: str, type_: str, where: str, path: Path) -> Any:
    """The Python value of an option's C++ default (``3``, ``true``, ``"record"``)."""
    text = text.strip()
    if type_ == "str":
        inner = _STRING_LITERAL.fullmatch(text)
        return bytes(inner.group(1), "utf-8").decode("unicode_escape") if inner else text
    if type_ == "bool":
        if text in ("true", "false"):
            return text == "true"
    else:
        try:
            return int(text.rstrip("uUlL"), 0) if type_ == "int" else float(text.rstrip("fF"))
        except ValueError:
            pass
    raise ManifestError(f"{where}: expected a {type_} default, found {text!r}", path=path)


def _option(record: _Record, path: Path) -> DeclaredOption:
    flag = _text(record, "argument", path)
    cpp_type = _text(record, "type", path)
    where = f"{path}: option {flag} (record {record.name})"
    allowed = _strings(record, "allowedValues") if "EnumOption" in record.classes else ()
    if allowed:
        # The values' own help follows the option's: "What a finding does. record: ...; abort: ...".
        helps = _strings(record, "allowedHelp")
        described = "; ".join(f"{v}: {h}" for v, h in zip(allowed, helps) if h)
        help_ = _text(record, "description", path) + (f" {described}." if described else "")
        return DeclaredOption(flag, "str", _text(record, "defaultName", path), help_, allowed=allowed,
                              cpp_type=cpp_type)
    type_ = CPP_TYPES.get(cpp_type)
    if type_ is None:
        raise ManifestError(f"{where}: C++ type {cpp_type!r} is not one of {', '.join(CPP_TYPES)}; use one "
                            "of them, or an EnumOption (infra/include/triton-ext/PassOptions.td)", path=path)
    minimum = _int(record, "minValue")
    if minimum is None and cpp_type in _UNSIGNED:
        minimum = 0
    return DeclaredOption(flag, type_, _default(_text(record, "defaultValue", path), type_, where, path),
                          _text(record, "description", path), minimum=minimum,
                          maximum=_int(record, "maxValue"), cpp_type=cpp_type)


def read_pass_records(path: Path) -> dict[str, tuple[DeclaredOption, ...]]:
    """Pass flag -> its options, for every pass in the records file at ``path``."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ManifestError(f"{path}: cannot read the pass records: {exc.strerror}; rebuild the "
                            "extension (`triton-ext build`)", path=path) from None
    records = _records(text, path)
    out: dict[str, tuple[DeclaredOption, ...]] = {}
    for record in records.values():
        if "PassBase" not in record.classes:
            continue
        names = re.findall(r"[\w.]+", record.fields.get("options", ("", "[]"))[1])
        missing = [n for n in names if n not in records]
        if missing:
            raise ManifestError(f"{path}: pass {record.name} names option record {missing[0]}, which the "
                                "dump lacks; rebuild the extension (`triton-ext build`)", path=path)
        out[_text(record, "argument", path)] = tuple(_option(records[n], path) for n in names)
    return out
