"""Run the real plugin passes on TTIR text in this process, the way ``triton-ext opt`` does.

The registry's pass spec decides what follows the pass (``then``: canonicalize, cse for the
ttir-stage passes), so the IR interpreted after the pass is the IR the JIT would hand on.
"""

from __future__ import annotations

import functools
import os
import tempfile
from dataclasses import dataclass

from triton._C import libtriton
from triton._C.libtriton import ir

from triton_ext._loader import load_extension
from triton_ext._manifest import load_manifest
from triton_ext._triton import resolve_builtin

from tests.differential.mlir_text import Func, parse_module


@dataclass(frozen=True)
class Programs:
    """One kernel before and after a pass, printed by MLIR and parsed for the interpreter."""

    before_text: str
    after_text: str
    before: dict[str, Func]
    after: dict[str, Func]

    @property
    def changed(self) -> bool:
        return self.before_text != self.after_text


@functools.lru_cache(maxsize=None)
def _context() -> object:
    # The range facts dialect (triton_ext_range.assume_range, read by loop_split) must be known
    # before the context loads its dialects; skipped when that plugin is not built.
    facts = load_manifest().extension("range_facts_ir")
    if facts.library_path().exists():
        load_extension(facts)
    ctx = ir.context()
    ir.load_dialects(ctx)
    for vendor in ("nvidia", "amd"):
        module = getattr(libtriton, vendor, None)
        if module is not None and hasattr(module, "load_dialects"):
            module.load_dialects(ctx)
    return ctx


@functools.lru_cache(maxsize=None)
def _plugin_pass(name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    manifest = load_manifest()
    spec = manifest.find_pass(name)
    load_extension(manifest.extension_of(spec))
    return tuple(o.render(o.default) for o in spec.options), tuple(spec.then)


def _print(text: str, pipeline: tuple[tuple[str, tuple[str, ...] | None], ...]) -> str:
    ctx = _context()
    fd, path = tempfile.mkstemp(suffix=".mlir")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        module = ir.parse_mlir_module(path, ctx)
    finally:
        os.unlink(path)
    module.context = ctx
    if pipeline:
        pm = ir.pass_manager(ctx)
        for name, args in pipeline:
            if args is None:
                resolve_builtin(name).fn(pm)
            else:
                getattr(libtriton.passes.plugin, f"add_{name}")(pm, list(args))
        pm.run(module, "triton-ext-differential")
    return module.str_nodebug()


def print_ir(text: str) -> str:
    """``text`` parsed and printed again by MLIR without locations."""
    return _print(text, ())


def pipeline_for(name: str, options: dict[str, str] | None = None
                 ) -> tuple[tuple[str, tuple[str, ...] | None], ...]:
    """The plugin pass ``name`` with its declared defaults (``options`` override some) and the
    passes the registry runs after it."""
    defaults, then = _plugin_pass(name)
    args = list(defaults)
    for flag, value in (options or {}).items():
        args = [a for a in args if not a.startswith(f"{flag}=")] + [f"{flag}={value}"]
    return ((name, tuple(args)),) + tuple((t, None) for t in then)


@functools.lru_cache(maxsize=4096)
def before_after(text: str, pass_name: str, options: tuple[tuple[str, str], ...] = (),
                 then: tuple[str, ...] = ()) -> Programs:
    """Parse ``text``, print it (before) and run ``pass_name`` and its follow-ups on it (after).

    The "before" side is also printed by MLIR, so both sides reach the interpreter in the same
    printed form, and it gets the same follow-up passes (canonicalize, cse) without the plugin
    pass: canonicalize folds a loop of one constant trip into straight-line code, so trip counts
    compare like with like only when both sides went through it (a kernel the pass declined was
    reported as "1 trip expected, 0 run"). Values are still checked against exact host models
    where a test has one. ``then`` names built-in passes both sides run last: Triton's
    ``loop_unroll`` for a pass that only writes the attribute that pass reads.
    """
    pipeline = pipeline_for(pass_name, dict(options)) + tuple((name, None) for name in then)
    before = _print(text, pipeline[1:])
    after = _print(text, pipeline)
    return Programs(before, after, parse_module(before), parse_module(after))
