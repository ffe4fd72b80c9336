"""A parser for the printed (pretty) form of the arith/scf/tt subset that the differential tests
interpret.

The input is always text that MLIR itself printed (``module.str_nodebug()``), so the grammar is
the printer's: one op per line, regions opened by a trailing ``{`` and closed by ``}``. Anything
outside the subset raises ``UnsupportedIR`` naming the line, so a pass that starts emitting a new
op makes the test fail loudly instead of being skipped.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field


class UnsupportedIR(ValueError):
    """The IR uses an op or a form the interpreter does not know; extend mlir_text/interp."""


@dataclass(frozen=True)
class Type:
    kind: str  # "int", "float", "ptr", "index"
    width: int  # bits of the element (pointers: 64)
    shape: tuple[int, ...] = ()

    @property
    def is_tensor(self) -> bool:
        return bool(self.shape)


@dataclass
class Block:
    args: list[str]
    arg_types: list[Type]
    ops: list["Op"] = field(default_factory=list)


@dataclass
class Op:
    name: str
    results: list[str]
    operands: list[str]
    types: list[Type]  # result types
    attrs: dict[str, object]
    regions: list[Block] = field(default_factory=list)
    text: str = ""


@dataclass
class Func:
    name: str
    args: list[str]
    arg_types: list[Type]
    body: Block


_NAME = r"%[A-Za-z0-9_.$\-]+(?:#\d+)?"
_NAME_RE = re.compile(_NAME)
_RESULTS_RE = re.compile(rf"^((?:{_NAME})(?:\s*,\s*{_NAME})*)(?::(\d+))?\s*=\s*(.*)$")


def _split_top(text: str, sep: str) -> list[str]:
    """Split at ``sep`` outside <>, (), [], {} and quotes."""
    out, depth, cur, i, quote = [], 0, [], 0, False
    while i < len(text):
        ch = text[i]
        if ch == '"' and (i == 0 or text[i - 1] != "\\"):
            quote = not quote
        if not quote:
            if ch in "<([{":
                depth += 1
            elif ch in ">)]}" and not (ch == ">" and i > 0 and text[i - 1] == "-"):
                depth -= 1
            elif depth == 0 and text.startswith(sep, i):
                out.append("".join(cur))
                cur = []
                i += len(sep)
                continue
        cur.append(ch)
        i += 1
    out.append("".join(cur))
    return out


def parse_type(text: str) -> Type:
    t = text.strip()
    if t.startswith("tensor<") and t.endswith(">"):
        inner = _split_top(t[len("tensor<"):-1], ",")[0].strip()  # drop an encoding
        dims: list[int] = []
        while True:
            m = re.match(r"^(\d+)x", inner)
            if not m:
                break
            dims.append(int(m.group(1)))
            inner = inner[m.end():]
        elem = parse_type(inner)
        return Type(elem.kind, elem.width, tuple(dims))
    if re.fullmatch(r"i\d+", t):
        return Type("int", int(t[1:]))
    if t == "index":
        return Type("int", 64)
    if t in ("f16", "bf16", "f32", "f64"):
        return Type("float", 64 if t == "f64" else 32)
    if t.startswith("!tt.ptr<"):
        return Type("ptr", 64)
    raise UnsupportedIR(f"type '{t}' is outside the interpreted subset")


def _strip_attr_dicts(text: str) -> tuple[str, str]:
    """Return (text without top-level {...}/<{...}>, the removed attribute text)."""
    out, attrs, depth, i = [], [], 0, 0
    while i < len(text):
        ch = text[i]
        if ch == "{":
            depth += 1
        if depth:
            attrs.append(ch)
        else:
            out.append(ch)
        if ch == "}":
            depth -= 1
        i += 1
    return "".join(out), "".join(attrs)


def _attr_int(attrs: str, key: str) -> int:
    m = re.search(rf"\b{key}\s*=\s*(-?\d+)", attrs)
    if not m:
        raise UnsupportedIR(f"attribute {key} not found in {attrs!r}")
    return int(m.group(1))


def _float_literal(tok: str, width: int) -> float:
    tok = tok.strip()
    if tok.startswith("0x"):
        bits = int(tok, 16)
        if width == 32:
            return struct.unpack("<f", struct.pack("<I", bits))[0]
        return struct.unpack("<d", struct.pack("<Q", bits))[0]
    return float(tok)


def _sig(rest: str) -> tuple[str, str]:
    """Split ``operands-and-attrs : signature`` at the last top-level ' : '."""
    parts = _split_top(rest, " : ")
    if len(parts) == 1:
        return rest, ""
    return " : ".join(parts[:-1]), parts[-1].strip()


class _Lines:
    def __init__(self, text: str):
        self.lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        self.i = 0

    def next(self) -> str:
        ln = self.lines[self.i]
        self.i += 1
        return ln

    def peek(self) -> str:
        return self.lines[self.i]


def parse_module(text: str) -> dict[str, Func]:
    """All ``tt.func``s of a printed module, by name."""
    lines = _Lines(text)
    funcs: dict[str, Func] = {}
    while lines.i < len(lines.lines):
        ln = lines.next()
        m = re.match(r"^tt\.func\s+(?:public\s+|private\s+)?@([\w.$]+)\(", ln)
        if not m or not ln.endswith("{"):
            continue
        depth, end = 1, m.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(ln[end], 0)
            end += 1
        arg_text = ln[m.end():end - 1]
        args, types = [], []
        if arg_text.strip():
            for a in _split_top(arg_text, ","):
                a, _ = _strip_attr_dicts(a)
                name, ty = a.split(":", 1)
                args.append(name.strip())
                types.append(parse_type(ty))
        body = Block(args, types)
        _parse_block_body(lines, body)
        funcs[m.group(1)] = Func(m.group(1), args, types, body)
    return funcs


def _parse_block_body(lines: _Lines, block: Block) -> str:
    """Parse ops until the closing '}' (or '} else {'); return that line."""
    while True:
        ln = lines.next()
        if ln.startswith("}"):
            return ln
        block.ops.append(_parse_op(ln, lines))


_FOR_RE = re.compile(
    rf"^scf\.for\s+(unsigned\s+)?({_NAME})\s*=\s*({_NAME})\s+to\s+({_NAME})\s+step\s+({_NAME})"
    r"(?:\s+iter_args\((.*?)\))?(?:\s*->\s*\((.*?)\))?\s*(?::\s*(\S+))?\s*\{$")


def _parse_op(ln: str, lines: _Lines) -> Op:
    results: list[str] = []
    m = _RESULTS_RE.match(ln)
    body = ln
    if m and ln.startswith("%"):
        head = [r.strip() for r in m.group(1).split(",")]
        if m.group(2):
            results = [f"{head[0]}#{k}" for k in range(int(m.group(2)))]
        else:
            results = head
        body = m.group(3)
    name = body.split()[0] if not body.startswith('"') else body.split('"')[1]
    rest = body[len(name):].strip() if not body.startswith('"') else body[len(name) + 2:].strip()

    if name == "scf.for":
        fm = _FOR_RE.match(body)
        if not fm:
            raise UnsupportedIR(f"cannot read scf.for: {ln}")
        iter_names, inits = [], []
        if fm.group(6):
            for pair in _split_top(fm.group(6), ","):
                a, b = pair.split("=")
                iter_names.append(a.strip())
                inits.append(b.strip())
        ivty = parse_type(fm.group(8) or "index")
        rtypes = [parse_type(t) for t in _split_top(fm.group(7), ",")] if fm.group(7) else []
        blk = Block([fm.group(2)] + iter_names, [ivty] + rtypes)
        closing = _parse_block_body(lines, blk)
        # `} {llvm.loop_annotation = ...}`: a loop the sanitizers built (their replays are
        # kept rolled) or one the kernel annotated.
        return Op(name, results, [fm.group(3), fm.group(4), fm.group(5)] + inits, rtypes,
                  {"unsigned": bool(fm.group(1)), "annotated": "llvm.loop_annotation" in closing},
                  [blk], ln)
    if name == "scf.if":
        im = re.match(rf"^scf\.if\s+({_NAME})(?:\s*->\s*\((.*?)\))?\s*\{{$", body)
        if not im:
            raise UnsupportedIR(f"cannot read scf.if: {ln}")
        rtypes = [parse_type(t) for t in _split_top(im.group(2), ",")] if im.group(2) else []
        then = Block([], [])
        closing = _parse_block_body(lines, then)
        els = Block([], [])
        if closing.startswith("} else {"):
            _parse_block_body(lines, els)
        return Op(name, results, [im.group(1)], rtypes, {}, [then, els], ln)
    if name == "tt.reduce":
        return _parse_reduce(ln, results, rest, lines)

    operand_text, sig = _sig(rest)
    plain, attr_text = _strip_attr_dicts(operand_text)
    operands = _NAME_RE.findall(plain)
    attrs: dict[str, object] = {}
    if attr_text:
        attrs["raw"] = attr_text
    rtypes: list[Type] = []
    if name == "arith.constant":
        lit = plain.strip()
        if lit in ("true", "false"):
            return Op(name, results, [], [Type("int", 1)], {"value": -1 if lit == "true" else 0}, [], ln)
        ty = parse_type(sig)
        dm = re.match(r"^dense<(.*)>$", lit)
        if dm:
            lit = dm.group(1)
        if lit in ("true", "false"):
            value: object = -1 if lit == "true" else 0
        elif ty.kind == "float":
            value = _float_literal(lit, ty.width)
        elif lit.startswith("["):
            raise UnsupportedIR(f"non-splat dense constant: {ln}")
        else:
            value = int(lit, 0)
        return Op(name, results, [], [ty], {"value": value}, [], ln)
    if name in ("arith.cmpi", "arith.cmpf"):
        pred = plain.strip().split(",")[0].strip()
        operands = _NAME_RE.findall(plain)
        src = parse_type(sig)
        attrs["predicate"] = pred
        attrs["operand_type"] = src
        return Op(name, results, operands, [Type("int", 1, src.shape)], attrs, [], ln)
    if name == "tt.make_range":
        ty = parse_type(sig)
        attrs.update(start=_attr_int(attr_text, "start"), end=_attr_int(attr_text, "end"))
        return Op(name, results, [], [ty], attrs, [], ln)
    if name == "triton_ext_range.assume_range":
        # `%x, LO, HI : T` (range_facts): returns %x; LO/HI are signed decimals.
        parts = [p.strip() for p in plain.split(",")]
        attrs.update(lo=int(parts[1]), hi=int(parts[2]))
        return Op(name, results, [parts[0]], [parse_type(sig)], attrs, [], ln)
    if name == "tt.expand_dims":
        attrs["axis"] = _attr_int(attr_text, "axis")
    if name in ("tt.get_program_id", "tt.get_num_programs"):
        axis = plain.strip()
        attrs["axis"] = {"x": 0, "y": 1, "z": 2}.get(axis, axis)
        if "axis" in attr_text:
            attrs["axis"] = _attr_int(attr_text, "axis")
    if name in ("tt.print", "tt.assert"):
        sm = re.search(r'"((?:[^"\\]|\\.)*)"', operand_text)
        attrs["message"] = sm.group(1) if sm else ""
        operands = _NAME_RE.findall(re.sub(r'"(?:[^"\\]|\\.)*"', "", plain))
        return Op(name, results, operands, [], attrs, [], ln)
    if name == "tt.elementwise_inline_asm":
        # `"asm" {constraints = ...} %a, %b : A, B -> R`: the interpreter knows a few strings.
        am = re.search(r'"((?:[^"\\]|\\.)*)"', operand_text)
        attrs["asm"] = am.group(1) if am else ""
        operands = _NAME_RE.findall(re.sub(r'"(?:[^"\\]|\\.)*"', "", plain))
    if results:
        if " -> " in sig:
            rtypes = [parse_type(_split_top(sig, " -> ")[-1])]
        elif " to " in sig:
            rtypes = [parse_type(sig.split(" to ")[-1])]
        else:
            if name == "tt.load":  # the signature names the pointer type: load its pointee
                sig = re.sub(r"!tt\.ptr<([^<>]+)>", r"\1", _split_top(sig, ",")[0])
            tys = [parse_type(t) for t in _split_top(sig, ",")]
            rtypes = [tys[0] if name in ("tt.addptr", "tt.load") else tys[-1]] * len(results)
    return Op(name, results, operands, rtypes, attrs, [], ln)


def _parse_reduce(ln: str, results: list[str], rest: str, lines: _Lines) -> Op:
    # "tt.reduce"(%x) <{axis = 0 : i32}> ({
    # ^bb0(%a: i32, %b: i32):
    #   ...
    #   tt.reduce.return %s : i32
    # }) : (tensor<128xi32>) -> i32
    operands = _NAME_RE.findall(rest.split(")")[0])
    axis = _attr_int(rest, "axis")
    hdr = lines.next()
    hm = re.match(r"^\^bb\d+\((.*)\):$", hdr)
    if not hm:
        raise UnsupportedIR(f"tt.reduce without a block header: {hdr}")
    args, types = [], []
    for a in _split_top(hm.group(1), ","):
        n, t = a.split(":", 1)
        args.append(n.strip())
        types.append(parse_type(t))
    blk = Block(args, types)
    closing = _parse_block_body(lines, blk)
    sig = closing.split(" -> ", 1)[-1].strip().strip("()")
    rtypes = [parse_type(t) for t in _split_top(sig, ",")]
    return Op("tt.reduce", results, operands, rtypes, {"axis": axis}, [blk], ln)
