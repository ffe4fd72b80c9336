"""``triton-ext pipeline``: the pass pipeline a compile really runs, per stage (issue 19).

    triton-ext pipeline --target cuda:90 [--enable a,b] [--diff c,d] [--json]

The view is recorded, not reconstructed: a probe kernel (a dot in a loop, so every stage has
work) is compiled for the target with the pipeline tap recording every stage, with the given
passes enabled. Each run of a pass manager is listed in the order Triton added its passes, with
plugin passes at the positions where they were spliced in, ``then`` cleanups after them, and
built-ins removed by ``replaces``/``skips`` marked (they did not run). Next to each pass is its
MLIR argument from the pass manager's own textual pipeline (``PassManager::printAsTextualPipeline``
through ``pm.get_pipeline_str()``), which is what Triton then runs. ``--diff`` shows what changes
between two enabled sets.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

import triton
import triton.language as tl

from .._errors import TritonExtError

__all__ = ["PassRow", "RunView", "parse_target", "split_pipeline", "collect", "render", "main"]


@dataclass(frozen=True)
class PassRow:
    name: str  # binding (ttir.loop_unroll) or plugin pass name
    mark: str  # builtin | plugin | cleanup | skipped | replaced
    mlir: str | None  # the MLIR pass argument Triton's pass manager reports (None: did not run)
    by: str | None = None  # for skipped/replaced: the registry pass that removed it


@dataclass
class RunView:
    stage: str
    label: str
    passes: list[PassRow] = field(default_factory=list)
    pipeline: str = ""  # pm.get_pipeline_str() as Triton printed it


def parse_target(text: str) -> Any:
    """``cuda:90`` -> GPUTarget("cuda", 90, 32); ``hip:gfx942`` -> GPUTarget("hip", "gfx942", 64)."""
    from triton.backends.compiler import GPUTarget

    backend, _, arch = text.partition(":")
    if backend == "cuda" and arch.isdigit():
        return GPUTarget("cuda", int(arch), 32)
    if backend == "hip" and arch.startswith("gfx"):
        return GPUTarget("hip", arch, 64)
    raise TritonExtError(f"--target: expected cuda:<capability> (cuda:90) or hip:<gfx arch> (hip:gfx942), found {text!r}")


def split_pipeline(text: str) -> list[str]:
    """Top-level pass arguments of an MLIR textual pipeline: ``any(a{x=1},b)`` -> ``[a, b]``."""
    text = text.strip()
    if "(" in text and text.endswith(")"):
        text = text[text.index("(") + 1 : -1]
    names: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text + ","):
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        elif ch == "," and depth == 0:
            item = text[start:i].strip()
            if item:
                cut = min([p for p in (item.find("{"), item.find("(")) if p >= 0] or [len(item)])
                names.append(item[:cut].strip())
            start = i + 1
    return names


@triton.jit
def triton_ext_pipeline_probe(a, b, c, K, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK, BLOCK], dtype=tl.float32)
    for k in range(0, K, BLOCK):
        x = tl.load(a + offs[:, None] * K + (k + offs)[None, :])
        y = tl.load(b + (k + offs)[:, None] * BLOCK + offs[None, :])
        acc = tl.dot(x, y, acc)
    tl.store(c + offs[:, None] * BLOCK + offs[None, :], acc.to(tl.float16))


def _probe() -> Any:
    signature = {"a": "*fp16", "b": "*fp16", "c": "*fp16", "K": "i32", "BLOCK": "constexpr"}
    return triton.compiler.ASTSource(triton_ext_pipeline_probe, signature=signature, constexprs={"BLOCK": 64})


def collect(target: Any, names: Sequence[str] = (), source: Any = None) -> list[RunView]:
    """Compile ``source`` (default: the probe kernel) for ``target`` with ``names`` enabled and
    return every pass-manager run of the stages, as recorded by the pipeline tap."""
    from triton import knobs

    from .. import _selection, _triton

    _selection.install_hook()
    previous = knobs.compilation.always_compile
    knobs.compilation.always_compile = True  # a cache hit would run no stage
    try:
        scope = _selection.enabled(*names) if names else _selection.using(_selection.Selection())
        with scope, _triton.record(all_stages=True) as plans:
            triton.compile(source if source is not None else _probe(), target=target)
    finally:
        knobs.compilation.always_compile = previous
    views: list[RunView] = []
    for plan in plans:
        by_label: dict[str, RunView] = {}
        removed = list(plan.removed)
        for label, mark, name in plan.listing:
            view = by_label.get(label)
            if view is None:
                view = by_label[label] = RunView(plan.stage, label)
                views.append(view)
            by = None
            if mark in ("skipped", "replaced"):
                hit = next(r for r in removed if r[0] == name and r[1] == mark)
                removed.remove(hit)
                by = hit[2]
            view.passes.append(PassRow(name, mark, None, by))
        for label, text in plan.runs:
            view = by_label.get(label)
            if view is None:
                continue
            view.pipeline = text
            ran = [i for i, row in enumerate(view.passes) if row.mark not in ("skipped", "replaced")]
            args = split_pipeline(text)
            if len(args) == len(ran):  # one MLIR pass per add_* call: pair them up
                for i, arg in zip(ran, args):
                    row = view.passes[i]
                    view.passes[i] = PassRow(row.name, row.mark, arg, row.by)
    return views


_SIGN = {"builtin": " ", "plugin": "+", "cleanup": "+", "skipped": "-", "replaced": "-"}


def _line(row: PassRow) -> str:
    note = {"plugin": "plugin pass", "cleanup": "cleanup after plugin pass",
            "skipped": f"skipped by {row.by}", "replaced": f"replaced by {row.by}"}.get(row.mark, "")
    mlir = row.mlir or ""
    return f"{_SIGN[row.mark]} {row.name:44} {mlir:40} {note}".rstrip()


def render(views: list[RunView]) -> str:
    out: list[str] = []
    for view in views:
        out.append(f"stage {view.stage}: {view.label}")
        for i, row in enumerate(view.passes, 1):
            out.append(f"  {i:3} {_line(row)}")
    return "\n".join(out)


def _diff_lines(views: list[RunView]) -> list[str]:
    return [f"{v.stage}/{v.label}: {r.name}" + ("" if r.mark in ("builtin", "plugin", "cleanup") else f" ({r.mark})")
            for v in views for r in v.passes if r.mark not in ("skipped", "replaced")]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="triton-ext pipeline",
        description="Show the pass pipeline a compile really runs, per stage, with plugin passes "
                    "at the positions where they were spliced in (--diff: what changes between "
                    "two enabled sets).")
    parser.add_argument("--target", default="cuda:90", help="cuda:<capability> or hip:<gfx arch> (default cuda:90)")
    parser.add_argument("--enable", default="", metavar="A,B", help="passes or extensions to enable")
    parser.add_argument("--diff", default=None, metavar="C,D",
                        help="compare with this enabled set (empty string: the stock pipeline)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(list(argv) if argv is not None else None)
    try:
        target = parse_target(args.target)
        names = [n for n in args.enable.split(",") if n]
        views = collect(target, names)
        if args.diff is not None:
            other = collect(target, [n for n in args.diff.split(",") if n])
            if args.json:
                print(json.dumps({"a": [asdict(v) for v in views], "b": [asdict(v) for v in other]}, indent=2))
                return 0
            diff = difflib.unified_diff(_diff_lines(views), _diff_lines(other), fromfile=args.enable or "stock",
                                        tofile=args.diff or "stock", lineterm="", n=2)
            print("\n".join(diff) or "no difference")
            return 0
        print(json.dumps([asdict(v) for v in views], indent=2) if args.json else render(views))
        return 0
    except TritonExtError as exc:
        print(f"triton-ext: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
