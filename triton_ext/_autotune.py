"""Passes as autotuning dimensions.

A :class:`Config` is a ``triton.Config`` that also names a pass set with options::

    @triton_ext.autotune(
        configs=[
            triton_ext.Config({"BLOCK": 64}, passes={}, num_warps=4),            # stock pipeline
            triton_ext.Config({"BLOCK": 64}, passes={"my_pass": {"some-flag": 8}}, num_warps=4),
            triton_ext.Config({"BLOCK": 64}, passes=["other_pass"], num_warps=4),
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
import hashlib
import json
import math
import statistics
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Sequence, Union

import triton
from triton.runtime.autotuner import Autotuner
from triton.runtime.cache import get_cache_manager, triton_key
from triton.runtime.jit import JITFunction, KernelInterface

from ._choice import confirm, pick
from ._errors import UnknownPassError
from ._selection import Selection, build_each, check_options, using
from ._timing import ReadingPlan, flush_buffer, gpu_time_ms, interleaved_rounds

__all__ = ["PASSES_KWARG", "Config", "Tunable", "tunable", "autotune", "passes_of", "selection_for", "canonical_passes",
           "PassAutotuner", "Tuning", "time_rounds", "pass_count"]

#: The kwargs key that carries a config's pass set (a canonical JSON string).
PASSES_KWARG = "triton_ext_passes"
#: Where a config's option values come from, in error messages.
CONFIG_ORIGIN = "Config(passes=...)"

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
    selection = Selection.of(build_each(list(passes.items()), origin=CONFIG_ORIGIN))
    with _memo_lock:
        _memo.setdefault(text, selection)
    return selection


def passes_of(config: Any) -> dict[str, dict[str, Any]] | None:
    """A config's pass set (``None`` when it names none); works on a plain ``triton.Config``
    rebuilt from Triton's autotuning disk cache and on the ``best_config`` a listener gets."""
    text = getattr(config, "kwargs", {}).get(PASSES_KWARG)
    return None if text is None else json.loads(text)


class Config(triton.Config):
    """``triton.Config`` with a pass set: ``Config({...}, passes={"my_pass": {"some-flag": 8}})``.

    ``passes`` is a mapping pass -> options or a list of pass names; ``{}`` or ``[]`` means no
    plugin pass at all. The set is validated (names, option names and types) on first use.
    """

    def __init__(self, kwargs: Mapping[str, Any], *args: Any, passes: PassSet | None = None, **rest: Any) -> None:
        kwargs = dict(kwargs)
        if PASSES_KWARG in kwargs and passes is not None:
            raise ValueError(f"give the pass set either as passes= or as kwargs[{PASSES_KWARG!r}], not both")
        if passes is not None:
            kwargs[PASSES_KWARG] = canonical_passes(passes)
            # Names and option values are checked now, before any compile (nothing is loaded).
            for name, options in json.loads(kwargs[PASSES_KWARG]).items():
                check_options([name], options, origin=CONFIG_ORIGIN)
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


#: Interleaved rounds over every config, then over the candidate and its baseline again.
ROUNDS = 4
CONFIRM_ROUNDS = 3
#: GPU time per reading (each round reads every config twice).
REP_MS = 12.5
#: How much faster (median of the per-round ratios) a config with more passes must be, on top of
#: being faster in every round. 0: any consistent gain counts, so the choice is never slower than
#: a simpler config by more than the rounds' noise (the transparent mode asks 1% more).
AUTOTUNE_MARGIN = 0.0

Timer = Callable[[Mapping[Any, Callable[[], Any]], int], Mapping[Any, Sequence[float]]]


def time_rounds(calls: Mapping[Any, Callable[[], Any]], rounds: int) -> dict[Any, list[float]]:
    """Per config, its GPU time (ms) in each of ``rounds`` interleaved rounds
    (:func:`triton_ext._timing.interleaved_rounds`, one L2-flush buffer for every reading)."""
    keys = list(calls)
    labels = [str(i) for i in range(len(keys))]
    flush = flush_buffer()
    plans = {label: ReadingPlan() for label in labels}
    out = interleaved_rounds(labels, lambda label: gpu_time_ms(calls[keys[int(label)]], rep_ms=REP_MS, flush=flush,
                                                               plan=plans[label]), rounds)
    return {keys[int(label)]: v for label, v in out.items()}


def pass_count(config: Any) -> int:
    """How many plugin passes a config names (none: 0)."""
    return len(passes_of(config) or {})


class _DecidedCache(dict):  # type: ignore[type-arg]
    """``Autotuner.cache``: Triton's ``benchmark()`` stores ``min(timings)`` here; the one store that
    follows a :class:`PassAutotuner` decision stores the decided config instead."""

    def __init__(self) -> None:
        super().__init__()
        self.decided: Any = None

    def __setitem__(self, key: Any, value: Any) -> None:
        if self.decided is not None:
            value, self.decided = self.decided, None
        super().__setitem__(key, value)


@dataclass
class Tuning:
    """One tuning of a :class:`PassAutotuner` (``tuner.tunings``): what was timed and decided."""

    configs: list[Any]
    calls: dict[Any, Callable[[], Any]] = field(default_factory=dict)
    results: dict[Any, list[float]] = field(default_factory=dict)
    failed: list[Any] = field(default_factory=list)
    first: dict[Any, list[float]] = field(default_factory=dict)  # per config, ms per round
    confirm: dict[Any, list[float]] = field(default_factory=dict)
    candidate: Any = None
    baseline: Any = None
    choice: Any = None
    done: bool = False


class PassAutotuner(Autotuner):
    """``triton.autotune``'s ``Autotuner`` that decides among configs as the transparent mode does.

    Triton times each config once, one after the other, and keeps the smallest time: between
    configs whose difference is noise (a pass that changes a kernel by 0.3%), that is a coin flip,
    and it can land on a config slower than no pass. Here every config's benchmark call is
    collected first (each compiled and run once, so configs that fail to compile are dropped by
    Triton's own handler); then all are timed in :data:`ROUNDS` interleaved rounds and
    :func:`triton_ext._choice.pick` takes the config with the fewest passes among those the
    fastest does not beat (faster in every round, :data:`AUTOTUNE_MARGIN`); when a config with fewer passes exists, the candidate must beat the
    fastest such one again in :data:`CONFIRM_ROUNDS` fresh rounds (:func:`~triton_ext._choice.confirm`).

    ``configs_timings`` (what the listener gets and Triton records on disk) holds every config's
    ``[median, 20th, 80th percentile]`` over the first rounds, which the decision may overrule;
    the decision itself is recorded beside Triton's record and reused with it.
    """

    def __init__(self, *args: Any, timer: Timer | None = None, margin: float = AUTOTUNE_MARGIN, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.margin = margin
        self.cache = _DecidedCache()
        self._do_bench = self._collect
        self.timer: Timer = timer or time_rounds
        self.tunings: list[Tuning] = []

    def prune_configs(self, kwargs: dict[str, Any]) -> list[Any]:
        pruned = super().prune_configs(kwargs)
        self.tunings.append(Tuning(list(pruned)))
        return pruned

    def _bench(self, *args: Any, config: Any, **meta: Any) -> Any:
        tuning = self.tunings[-1]
        self._current = config
        result = super()._bench(*args, config=config, **meta)
        if config not in tuning.calls:  # Triton's handler caught a failed compile: inf
            tuning.failed.append(config)
        if not tuning.done and all(c in tuning.calls or c in tuning.failed for c in tuning.configs):
            self._decide(tuning)
        return result

    def _collect(self, kernel_call: Callable[[], Any], quantiles: Sequence[float] | None = None) -> list[float]:
        kernel_call()  # compiles (errors reach Triton's handler in _bench) and launches once
        tuning = self.tunings[-1]
        tuning.calls[self._current] = kernel_call
        result = tuning.results[self._current] = [math.inf] * len(quantiles or (0.5,))
        return result  # filled in place by _decide, before Triton compares the results

    def _decide(self, tuning: Tuning) -> None:
        tuning.done = True
        if not tuning.calls:
            return
        tuning.first = {c: list(v) for c, v in self.timer(tuning.calls, ROUNDS).items()}
        for config, samples in tuning.first.items():
            ordered = sorted(samples)
            result = tuning.results[config]
            for i, q in enumerate((0.5, 0.2, 0.8)[:len(result)]):
                result[i] = statistics.median(samples) if q == 0.5 else ordered[round(q * (len(ordered) - 1))]
        counts = {c: pass_count(c) for c in tuning.first}
        tuning.candidate, tuning.baseline = pick(tuning.first, counts, self.margin)
        tuning.choice = tuning.candidate
        if tuning.baseline is not None:
            pair = {tuning.candidate: tuning.calls[tuning.candidate], tuning.baseline: tuning.calls[tuning.baseline]}
            tuning.confirm = {c: list(v) for c, v in self.timer(pair, CONFIRM_ROUNDS).items()}
            tuning.choice = confirm(tuning.confirm, tuning.candidate, tuning.baseline, self.margin)
        self.cache.decided = tuning.choice

    # -- the decision on disk, beside Triton's record of the timings ---------------------------

    def check_disk_cache(self, tuning_key: Any, configs: list[Any], bench_fn: Callable[[], None]) -> bool:
        hit = super().check_disk_cache(tuning_key, configs, bench_fn)
        if not tuning_key or any(c.pre_hook for c in configs):
            return hit  # Triton neither records nor reads these
        cache, name = self._decision_file(tuning_key, configs)
        if hit:
            path = cache.get_file(name)
            if path:
                with open(path, encoding="utf-8") as f:
                    chosen = json.load(f)["choice"]
                found = [c for c in configs if str(c) == chosen]  # str names the pass set's selection key
                if found:
                    dict.__setitem__(self.cache, tuning_key, found[0])
        elif self.tunings and self.tunings[-1].choice is not None:
            cache.put(json.dumps({"key": list(tuning_key), "choice": str(self.tunings[-1].choice)}, default=str), name,
                      binary=False)
        return hit

    def _decision_file(self, tuning_key: Any, configs: list[Any]) -> tuple[Any, str]:
        fn = self.fn
        while not isinstance(fn, JITFunction):
            fn = fn.fn
        text = "-".join([triton_key(), fn.cache_key, str(tuning_key), *(str(c) for c in configs), "triton-ext-decision"])
        return get_cache_manager(hashlib.sha256(text.encode()).hexdigest()), f"{fn.__name__[:150]}.decision.json"


def autotune(configs: Sequence[triton.Config], key: Sequence[str], *, cache_results: bool = True,
             **kwargs: Any) -> Callable[[Any], Any]:
    """``triton.autotune`` over :func:`tunable`; by default the choice is recorded in Triton's
    cache (``cache_results=True``) and reused by later processes. Unless told how to time
    (``do_bench=``, ``warmup``, ``rep``, ``use_cuda_graph``), the autotuner is a
    :class:`PassAutotuner`: GPU time (:func:`triton_ext.testing.gpu_time_ms`), interleaved rounds,
    and a config with more passes must beat simpler ones by more than the noise."""
    if any(k in kwargs for k in ("do_bench", "warmup", "rep", "use_cuda_graph")):
        def plain(fn: Any) -> Any:
            return triton.autotune(configs, key, cache_results=cache_results, **kwargs)(tunable(fn))

        return plain
    allowed = {"prune_configs_by", "reset_to_zero", "restore_value", "pre_hook", "post_hook"}
    unknown = set(kwargs) - allowed
    if unknown:
        raise TypeError(f"triton_ext.autotune: unexpected argument(s) {sorted(unknown)}; "
                        f"it takes configs, key, cache_results and {sorted(allowed | {'do_bench', 'warmup', 'rep', 'use_cuda_graph'})}")

    def decorator(fn: Any) -> Any:
        wrapped = tunable(fn)
        return PassAutotuner(wrapped, wrapped.arg_names, list(configs), key, kwargs.get("reset_to_zero"),
                             kwargs.get("restore_value"), pre_hook=kwargs.get("pre_hook"),
                             post_hook=kwargs.get("post_hook"), prune_configs_by=kwargs.get("prune_configs_by"),
                             cache_results=cache_results)

    return decorator
