"""Passes as autotuning dimensions.

A :class:`Config` is a ``triton.Config`` that also names a pass set with options::

    @triton_ext.autotune(
        configs=[
            triton_ext.Config({"BLOCK": 64}, passes={}, num_warps=4),            # stock pipeline
            triton_ext.Config({"BLOCK": 64}, passes={"grid_swizzle": {"group-size": 8}}, num_warps=4),
            triton_ext.Config({"BLOCK": 64}, passes=["loop_split"], num_warps=4),
        ],
        key=["M", "N"],
    )
    @triton.jit
    def kernel(...): ...

or, with Triton's own decorator, ``@triton.autotune(configs=[triton_ext.Config(...)], ...)``
over ``@triton_ext.tunable`` over ``@triton.jit``.

How it fits Triton's autotuner (``triton/runtime/autotuner.py``, 3.9.0): the autotuner hands
``config.all_kwargs()`` to ``fn.run`` for every benchmark and every launch, hashes and compares
configs by ``all_kwargs()``, keys its on-disk cache with ``str(config)`` and records configs as
``config.__dict__``, rebuilding them with ``triton.Config(**d)`` in a later process. So the pass set
lives *in the config's kwargs*, as one canonical JSON string under :data:`PASSES_KWARG`: it is part
of the config's hash, equality, ``str`` (the disk-cache key), the recorded JSON, and of what
``knobs.autotuning.listener`` receives; a config read back from disk still carries it. The
:class:`Tunable` wrapper between the autotuner and the ``JITFunction`` takes the string out of
the kwargs and runs the launch under exactly that pass set (a context-local scope, like
``triton_ext.enabled``, so concurrent threads tuning other configs do not interfere). The stages
hook then puts the pass set into the JIT's kernel key and Triton's compile cache key, so each
config compiles and caches its own kernel.

``str(config)`` also names the selection key (plugin library digests, options, positions), so a
rebuilt plugin invalidates the recorded choice. A config's pass set is the *whole* set for its
launches: ``passes={}`` means the stock pipeline even when other passes are enabled globally;
a config without ``passes`` leaves the enabled set as it is.
"""

from __future__ import annotations

import contextlib
import json
import threading
from typing import Any, Callable, Iterator, Mapping, Sequence, Union

import triton
from triton.runtime.jit import KernelInterface

from ._errors import UnknownPassError
from ._selection import Enabled, Selection, _build, using

__all__ = ["PASSES_KWARG", "Config", "Tunable", "tunable", "autotune", "passes_of", "selection_for", "canonical_passes",
           "gpu_time_benchmarker"]

#: The kwargs key that carries a config's pass set (a canonical JSON string).
PASSES_KWARG = "triton_ext_passes"

PassSet = Union[Mapping[str, Mapping[str, Any]], Sequence[str]]

_memo_lock = threading.Lock()
_memo: dict[str, Selection] = {}


def canonical_passes(passes: PassSet) -> str:
    """The canonical JSON of a pass set: ``{"pass": {"flag": value}}``, keys sorted, flags in
    kebab-case (``group_size`` is accepted for ``group-size``)."""
    if isinstance(passes, str):
        raise TypeError(f"passes: expected a mapping {{pass: {{option: value}}}} or a list of pass names, found {passes!r}")
    if isinstance(passes, Mapping):
        items = list(passes.items())
    else:
        items = [(name, {}) for name in passes]
    out: dict[str, dict[str, Any]] = {}
    for name, options in items:
        if not isinstance(name, str):
            raise TypeError(f"passes: expected pass names (str), found {name!r}")
        if options is None:
            options = {}
        if not isinstance(options, Mapping):
            raise TypeError(f"passes[{name!r}]: expected a mapping of options, found {options!r}")
        out[name] = {str(k).replace("_", "-"): v for k, v in options.items()}
    return json.dumps(out, sort_keys=True, separators=(",", ":"))


def selection_for(text: str) -> Selection:
    """The exact selection a canonical pass-set string names (built once per string; libraries
    are checked and loaded on first use)."""
    with _memo_lock:
        hit = _memo.get(text)
    if hit is not None:
        return hit
    try:
        passes = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UnknownPassError(f"{PASSES_KWARG}: expected the JSON written by triton_ext.Config, found {text!r} ({exc})") from None
    entries: list[Enabled] = []
    for name, options in passes.items():
        entries.extend(_build([name], options))
    selection = Selection.of(entries)
    with _memo_lock:
        _memo.setdefault(text, selection)
    return selection


def passes_of(config: Any) -> dict[str, dict[str, Any]] | None:
    """A config's pass set (``None`` when it names none); works on a plain ``triton.Config``
    rebuilt from Triton's autotuning disk cache and on the ``best_config`` a listener gets."""
    text = getattr(config, "kwargs", {}).get(PASSES_KWARG)
    return None if text is None else json.loads(text)


class Config(triton.Config):
    """``triton.Config`` with a pass set: ``Config({...}, passes={"grid_swizzle": {"group-size": 8}})``.

    ``passes`` is a mapping pass -> options or a list of pass names; ``{}`` or ``[]`` means no
    plugin pass at all. The set is validated (names, option names and types) on first use.
    """

    def __init__(self, kwargs: Mapping[str, Any], *args: Any, passes: PassSet | None = None, **rest: Any) -> None:
        kwargs = dict(kwargs)
        if PASSES_KWARG in kwargs and passes is not None:
            raise ValueError(f"give the pass set either as passes= or as kwargs[{PASSES_KWARG!r}], not both")
        if passes is not None:
            kwargs[PASSES_KWARG] = canonical_passes(passes)
        # Nothing else is stored on the instance: Triton records configs as __dict__ and
        # rebuilds them with triton.Config(**d).
        super().__init__(kwargs, *args, **rest)

    @property
    def passes(self) -> dict[str, dict[str, Any]] | None:
        return passes_of(self)

    def selection(self) -> Selection | None:
        text = self.kwargs.get(PASSES_KWARG)
        return None if text is None else selection_for(text)

    @contextlib.contextmanager
    def scope(self) -> Iterator[Selection | None]:
        """Compile under this config's pass set for the block (what :class:`Tunable` does)."""
        selection = self.selection()
        if selection is None:
            yield None
            return
        with using(selection):
            yield selection

    def __str__(self) -> str:
        text = super().__str__()
        selection = self.selection()
        if selection is None:
            return text
        # The selection key covers plugin digests, options and positions: a rebuilt plugin or a
        # moved pass must not reuse a choice Triton recorded on disk for the old one.
        return f"{text}, triton_ext: {selection.key or 'stock'}"


class Tunable(KernelInterface):
    """Sits between ``triton.autotune`` and a ``JITFunction``: runs each launch under the pass
    set its config names (see the module docstring)."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.arg_names = fn.arg_names

    def run(self, *args: Any, **kwargs: Any) -> Any:
        text = kwargs.pop(PASSES_KWARG, None)
        if text is None:
            return self.fn.run(*args, **kwargs)
        with using(selection_for(text)):
            return self.fn.run(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:  # cache_key, src, ... of the wrapped function
        if name == "fn":
            raise AttributeError(name)
        return getattr(self.fn, name)


def tunable(fn: Any) -> Tunable:
    """Let ``triton.autotune`` configs built with :class:`Config` choose passes for ``fn``."""
    return fn if isinstance(fn, Tunable) else Tunable(fn)


def gpu_time_benchmarker(kernel_call: Callable[[], Any], quantiles: Sequence[float] | None = None) -> Any:
    """Triton's autotuner benchmark protocol over :func:`triton_ext.testing.gpu_time_ms`: the
    kernel's GPU time with the CPU's launch cost kept out, so configs of a kernel shorter than its
    launch path (a 10 us norm behind the autotuner and the pass-set wrapper) are compared by what
    the GPU does, not by how long the GPU waited for Python."""
    from ._timing import gpu_time_ms

    t = gpu_time_ms(kernel_call, rep_ms=50)
    return [t] * len(quantiles) if quantiles else t


def autotune(configs: Sequence[triton.Config], key: Sequence[str], *, cache_results: bool = True,
             **kwargs: Any) -> Callable[[Any], Any]:
    """``triton.autotune`` over :func:`tunable`; by default the choice is recorded in Triton's
    cache (``cache_results=True``) and reused by later processes, and configs are timed with
    :func:`gpu_time_benchmarker` (pass ``do_bench=`` for another benchmarker)."""
    if not any(k in kwargs for k in ("do_bench", "warmup", "rep", "use_cuda_graph")):
        kwargs["do_bench"] = gpu_time_benchmarker

    def decorator(fn: Any) -> Any:
        return triton.autotune(configs, key, cache_results=cache_results, **kwargs)(tunable(fn))

    return decorator
