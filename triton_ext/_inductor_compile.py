"""Which pass variants of an Inductor kernel compile, and which of them Inductor gets to time.

:mod:`triton_ext._inductor` makes each config of a ``CachingAutotuner`` compile once with no pass
and once per candidate pass, each copy of the config tagged with its pass (:func:`expand`; the tag
survives the pickling that carries compile results back from Inductor's compile workers). This
module holds what decides, before any timing, which of those variants are worth a launch:

* :func:`declared_off_launcher`: a pass that declares a launch request (registry
  ``launch_requests``) is not compiled at all where Inductor launches statically.
* :func:`compile_variant`: a variant compiles after its config's no-pass kernel and stops, as the
  JIT path's variants do (:func:`triton_ext._variants.stop_if_stock`), as soon as its IR is that
  kernel's: a pass that does not apply then costs its own stage, not LLVM and ptxas.
* :func:`prune`: what compiled to the no-pass code, or asks for a launch attribute Inductor's
  static launcher refuses, is dropped.
"""

from __future__ import annotations

import contextvars
import copy
import json
import logging
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from . import _triton, _variants
from ._launch import LAUNCH_FIELDS
from ._triton import isolated
from ._variants import PASS_STAGES, SameAsStock, compile_failure, last_stage, stop_if_stock

__all__ = ["TAG", "NoPass", "expand", "fingerprint", "stock_ir", "compile_variant", "left_out",
           "declared_off_launcher", "prune", "quiet_variant_compiles"]

#: Attribute set on a config copy: ``(index of the original config, variant name)``.
TAG = "_triton_ext_variant"
#: Attribute set on a variant's compile result that stopped as its config's no-pass kernel.
_SAME = "_triton_ext_same_as_stock"
#: Attribute set on a variant's compile result whose compile failed: why.
_FAILED = "_triton_ext_failed"
#: True while a variant compiles (:func:`quiet_variant_compiles`).
_in_variant: contextvars.ContextVar[bool] = contextvars.ContextVar("triton_ext_inductor_variant", default=False)

_classes: dict[type, type] = {}


def _tagged_class(base: type) -> type:
    """A subclass of ``base`` (``triton.Config`` or Inductor's) whose instances keep their tag
    through pickling: ``triton.Config.__setstate__`` keeps only the fields it knows, and Inductor's
    compile workers send their compile results, configs included, back pickled."""
    cls = _classes.get(base)
    if cls is None:
        def __reduce__(self: Any) -> tuple[Any, ...]:
            return (_rebuild, (base, dict(self.__dict__)))

        cls = _classes[base] = type(base.__name__, (base,), {"__reduce__": __reduce__,
                                                              "__module__": base.__module__})
    return cls


def _rebuild(base: type, state: dict[str, Any]) -> Any:
    obj = base.__new__(base)
    obj.__dict__.update(state)
    obj.__class__ = _tagged_class(base)
    return obj


def _tag(cfg: Any, index: int, variant: str) -> Any:
    """A copy of ``cfg`` tagged ``(index, variant)`` (a copy: one config object may be shared by
    several kernels' autotuners)."""
    base = type(cfg) if type(cfg) not in _classes.values() else type(cfg).__mro__[1]
    out = copy.copy(cfg)
    out.__class__ = _tagged_class(base)
    setattr(out, TAG, (index, variant))
    return out


def expand(configs: Sequence[Any], candidates: Sequence[str]) -> list[Any]:
    """Each config, then a tagged copy of it per candidate pass (the no-pass kernel compiles
    first: :func:`compile_variant` compares its variants with it)."""
    out = []
    for i, cfg in enumerate(configs):
        out.append(_tag(cfg, i, ""))
        out.extend(_tag(cfg, i, name) for name in candidates)
    return out


def fingerprint(result: Any) -> bytes | str | None:
    """The compiled code of an Inductor compile result (PTX, else cubin), or None if not exposed."""
    kernel = getattr(result, "kernel", None)
    asm = getattr(kernel, "asm", None)
    if isinstance(asm, dict) and asm.get("ptx"):
        return str(asm["ptx"])
    for attr in ("cubin_raw", "cubin"):
        raw = getattr(kernel, attr, None)
        if isinstance(raw, (bytes, str)) and raw:
            return raw
    path = getattr(kernel, "cubin_path", None)
    if isinstance(path, str):
        try:
            with open(path, "rb") as f:
                return f.read()
        except OSError:
            return None
    return None


def stock_ir(result: Any) -> tuple[dict[str, Any], Any] | None:
    """The IR leaving each stage, and the metadata, of a no-pass compile result; None where
    neither the result nor Triton's cache shows them."""
    kernel = getattr(result, "kernel", None)
    asm, metadata = getattr(kernel, "asm", None), getattr(kernel, "metadata", None)
    if isinstance(asm, dict) and metadata is not None:
        return asm, metadata  # Triton's CompiledKernel (Inductor launches it with Triton's launcher)
    # Inductor's static launcher keeps the kernel's name and Triton's hash of its compile, under
    # which Triton's cache holds every stage's IR and the metadata.
    digest, name = getattr(kernel, "hash", None), getattr(kernel, "name", None)
    if not isinstance(digest, str) or not isinstance(name, str):
        return None
    try:
        from triton.runtime.cache import get_cache_manager

        group = get_cache_manager(digest).get_group(f"{name}.json") or {}
        text = {stage: Path(group[f"{name}.{stage}"]).read_text() for stage in PASS_STAGES
                if f"{name}.{stage}" in group}
        return text, types.SimpleNamespace(**json.loads(Path(group[f"{name}.json"]).read_text()))
    except (ImportError, OSError, KeyError, TypeError, ValueError):
        return None


@dataclass(frozen=True)
class NoPass:
    """A config's no-pass compile result and its IR (:func:`stock_ir`, read once for all of the
    config's variants)."""

    result: Any
    ir: tuple[dict[str, Any], Any] | None

    @classmethod
    def of(cls, result: Any) -> NoPass:
        return cls(result, stock_ir(result))


def compile_variant(compile_config: Callable[[Any], Any], cfg: Any, stock: NoPass | None, selection: Any) -> Any:
    """``compile_config(cfg)`` (Inductor's own compile of a config, under the variant's pass set),
    stopped as soon as the IR leaving a stage from the variant's last pass on is the no-pass
    kernel's ``stock`` (every later stage would then rebuild that kernel). A stopped variant
    returns a copy of ``stock``'s result carrying ``cfg``, which :func:`prune` drops; where
    ``stock``'s IR is unknown the variant compiles to the end and :func:`prune` compares the code.

    Its passes run on a kernel nobody tested them on, so, as the JIT path's variants, each stage
    with one of them runs in a worker process first (:mod:`triton_ext._triton.isolated`): a pass
    that crashes, exits or hangs costs the worker, and the variant is dropped with why, as is one
    that fails to compile; the kernel keeps its no-pass compile (with no ``stock`` to fall back
    on, the error is Inductor's, as without the mode)."""
    seen = stock.ir if stock is not None else None
    if seen is not None and not _variants.may_change(selection, seen[0].get("ttir")):
        return _stands_for(stock.result, cfg, _SAME, True)  # its passes need operations the kernel lacks
    editor = stop_if_stock(seen[0], seen[1], last_stage(selection)) if seen is not None else None
    tokens = (_triton.stage_editor.set(editor), isolated.isolate.set(True), _in_variant.set(True))
    try:
        return compile_config(cfg)
    except SameAsStock:
        return _stands_for(stock.result, cfg, _SAME, True)  # stopped: there was a no-pass IR
    except Exception as exc:
        if stock is None:
            raise
        return left_out(stock.result, cfg, compile_failure(exc))
    finally:
        _in_variant.reset(tokens[2])
        isolated.isolate.reset(tokens[1])
        _triton.stage_editor.reset(tokens[0])


def _stands_for(stock: Any, cfg: Any, mark: str, value: Any) -> Any:
    """A copy of the no-pass result standing for a variant that has no kernel of its own (for
    :func:`prune` to drop)."""
    out = copy.copy(stock)
    out.config = cfg
    setattr(out, mark, value)
    return out


def left_out(stock: Any, cfg: Any, why: str) -> Any:
    """What stands for a variant of ``cfg`` that has no kernel (not compiled, or its compile
    failed): :func:`prune` leaves it out, with ``why``."""
    return _stands_for(stock, cfg, _FAILED, why)


def quiet_variant_compiles(record: logging.LogRecord) -> bool:
    """A logging filter for Inductor's module: its ``_precompile_config`` logs every exception of
    ``triton.compile`` as a failed compile before re-raising it. A variant's stop as the no-pass
    kernel is no failure, and a variant that fails is dropped with why (:func:`compile_variant`):
    the kernel's own compile did not fail."""
    return not (record.exc_info and _in_variant.get())


def _launch_requests(result: Any) -> list[str]:
    """The launch attributes (:data:`triton_ext._launch.LAUNCH_FIELDS`) a compile result's kernel
    asks for."""
    metadata = getattr(getattr(result, "kernel", None), "metadata", None)
    return [f for f in LAUNCH_FIELDS if getattr(metadata, f, False)]


def _statically_launched(result: Any) -> bool:
    """Whether Inductor launches ``result`` with its static CUDA launcher (``StaticTritonCompileResult``),
    which refuses kernels with launch attributes."""
    return type(result).__name__.startswith("Static")


def _inductor_launches_statically() -> bool:
    """Whether Inductor launches its kernels with its static launcher where it can (its config)."""
    try:
        from torch._inductor import config
    except ImportError:
        return False
    return bool(getattr(config, "use_static_cuda_launcher", False))


def declared_off_launcher(variants: Sequence[tuple[str, Any]]) -> dict[str, str]:
    """The candidates whose passes declare a launch request (registry ``launch_requests``) while
    Inductor launches statically: left out before they compile (see :func:`prune` for why)."""
    if not _inductor_launches_statically():
        return {}
    out = {}
    for name, selection in variants:
        asks = sorted({r for entry in getattr(selection, "entries", ()) for r in entry.spec.launch_requests})
        if name and asks:
            out[name] = (f"its passes declare {', '.join(asks)}, which Inductor's static launcher refuses: "
                         "not compiled")
    return out


def prune(results: list[Any]) -> tuple[list[Any], list[str], dict[str, str]]:
    """Drop variants that compiled to their config's no-pass kernel (the pass does not apply:
    stopped as that kernel, or the same code), variants that failed to compile
    (:func:`compile_variant`), and variants Inductor could not launch the way it launches that
    kernel; returns the kept results, the first kind's names, and the others' with why.

    The second kind: Inductor's static launcher refuses a kernel with launch attributes
    (``launch_pdl``: ``CannotStaticallyLaunchKernel``), so a variant of a statically launched
    kernel that asks for one would run through Triton's own launcher, whatever it wins on the GPU:
    each launch would then cost what that launcher costs, not what Inductor's launch of the
    kernel costs (issue 27.1). Leaving it out before timing also spares the kernel's first
    launch the rounds (seen: the PDL pass was the only variant of every kernel of the
    torch.compile'd block, timed at about a second per kernel, and never kept)."""
    base = {tag[0]: r for r in results
            if (tag := getattr(getattr(r, "config", None), TAG, None)) is not None and tag[1] == ""}
    codes: dict[int, bytes | str | None] = {}  # each no-pass kernel's code, read once if needed

    def same_code(index: int, r: Any) -> bool:
        if index not in codes:
            codes[index] = fingerprint(base[index])
        return codes[index] is not None and fingerprint(r) == codes[index]

    kept, dropped, off_launcher = [], [], {}
    for r in results:
        tag = getattr(getattr(r, "config", None), TAG, None)
        stock = base.get(tag[0]) if tag is not None and tag[1] else None
        if getattr(r, _FAILED, None):
            off_launcher[tag[1]] = getattr(r, _FAILED)
            continue
        if getattr(r, _SAME, False) or (stock is not None and same_code(tag[0], r)):
            dropped.append(tag[1])
            continue
        if stock is not None:
            asks = [f for f in _launch_requests(r) if f not in _launch_requests(stock)]
            if asks and _statically_launched(stock):
                off_launcher[tag[1]] = (f"it asks for {', '.join(asks)}, which Inductor's static launcher, "
                                        "the kernel's launcher without the pass, refuses: not timed")
                continue
        kept.append(r)
    return kept, dropped, off_launcher
