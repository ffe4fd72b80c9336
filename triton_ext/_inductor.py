"""torch.compile's kernels under the transparent mode (issue 27.5): the pass set as one more
dimension of Inductor's own autotuning.

Inductor compiles its generated kernels with ``triton.compile`` in
``CachingAutotuner._precompile_config`` (in its compile workers or in the process) and launches
them through its own launchers, never through ``JITFunction.run``, so the mode's hook on the JIT's
cache miss (:mod:`triton_ext._auto`) never sees them. With the mode on, :func:`install` wraps
three methods of ``torch._inductor.runtime.triton_heuristics.CachingAutotuner`` (when that
module is imported, so importing triton_ext does not import torch):

* ``_precompile_worker``: each of the kernel's configs is compiled once with no pass and once per
  candidate pass (a copy of the config tagged with the pass: :mod:`triton_ext._inductor_compile`).
  A variant stops compiling as soon as its IR is its config's no-pass kernel's, and is dropped:
  the pass does not apply. So is one that asks for a launch attribute (``launch_pdl``) where
  Inductor launches the no-pass kernel with its static launcher, which refuses such kernels:
  kept, it would change the kernel's launcher; a pass that declares the request (registry
  ``launch_requests``) is not even compiled there. This runs wherever Inductor compiles (its
  compile workers inherit ``TRITON_EXT_ENABLE`` and import triton_ext through the start-up
  ``.pth``), so the variants compile concurrently there.
* ``_precompile_config``: a tagged config compiles under its pass (the mode's own selection of
  that variant: Triton's on-disk key holds it); an untagged one as Inductor compiles it.
* ``benchmark_all_configs``: when some launcher is a pass variant (Inductor's autotuning runs at
  the kernel's first launch whenever it has more than one launcher, so a kernel with a single
  config is now tuned too), Inductor first reads its configs with its own
  ``benchmark_all_configs`` over the no-pass launchers, before the mode runs anything on the GPU,
  so it picks the config it picks without the mode. Only that config's variants are then timed
  with the mode's rule: interleaved rounds of GPU time (:func:`triton_ext._timing.gpu_time_ms`),
  the variants that beat the no-pass kernel (:func:`triton_ext._choice.winners`) again on fresh
  rounds and launched back to back, where they must win too
  (:func:`triton_ext._choice.choose_in_both`). A kept pass replaces that config's launcher (it
  reads the config's reading times its measured gain); every other variant reads an infinite
  time. Each kernel's outcome is a :class:`triton_ext._variants.Decision` (``auto.decisions``,
  the ``triton_ext.auto`` logger); the decision is not written to disk.

Budget (``TRITON_EXT_AUTO_BUDGET_S``, as for a JIT kernel's first launch): once a kernel's precompile
has spent it, its remaining variants are left out uncompiled; once its timing has, it keeps its
no-pass launcher.

Limits: Inductor's autotune cache and FX graph cache keep a winning config's parameters but not its
pass, so a kernel served from them runs with no pass (the benchmark disables the caches); kernels
launched with one pre-chosen launcher (CUDA graphs, ``max-autotune``'s templates) keep their choice.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import logging
import math
import statistics
import sys
import threading
import time
import types
from typing import Any, Callable

from . import _launch_options, _selection
from ._backup import ArgumentBackup, relaunch_hazard, tensors_of
from ._choice import choose_in_both, spread, winners
from ._inductor_compile import (TAG, NoPass, compile_variant, declared_off_launcher, expand, left_out, prune,
                               quiet_variant_compiles)
from ._outputs import OutputCheck, OutputsUnverifiable
from ._timing import ReadingPlan, back_to_back_ms, flush_buffer, gpu_time_ms, interleaved_rounds
from ._settings import settings
from ._variants import (CONFIRM_ROUNDS, REP_MS, ROUNDS, Decision, OverBudget, back_to_back_reading, check_budget,
                        describe_error, screen_variants)

__all__ = ["MODULE", "install", "installed", "why_not"]

#: The module holding Inductor's ``CachingAutotuner``.
MODULE = "torch._inductor.runtime.triton_heuristics"

_log = logging.getLogger("triton_ext.auto")
_lock = threading.Lock()
_patched: dict[str, Any] = {}
_why_not: str | None = None
#: The transparent mode's ``active()``, received at :func:`install` (this module does not import
#: :mod:`triton_ext._auto`, which installs it).
_active: Callable[[], Any] | None = None
#: The L2 flush buffer of every timing (one per process).
_flush: Any = None


def installed() -> bool:
    """Whether ``CachingAutotuner`` is wrapped in this process."""
    return bool(_patched)


def why_not() -> str | None:
    """Why the wrap could not be installed (an Inductor without the expected methods), or None."""
    return _why_not


def _auto() -> Any:
    """The transparent mode now active, or None."""
    return _active() if _active is not None else None


def _log_left_out(autotuner: Any, left_out: dict[str, str]) -> None:
    for variant, why in left_out.items():
        _log.info("%s: %s left out (%s)", getattr(autotuner.fn, "__name__", "inductor kernel"), variant, why)


def _patch(module: types.ModuleType) -> None:
    global _why_not
    autotuner = getattr(module, "CachingAutotuner", None)
    needed = ("_precompile_worker", "_precompile_config", "benchmark_all_configs", "bench")
    missing = [m for m in needed if autotuner is None or not hasattr(autotuner, m)]
    if missing:
        _why_not = f"{MODULE}.CachingAutotuner has no {', '.join(missing)}: Inductor's kernels are not tuned"
        _log.warning("triton-ext auto: %s", _why_not)
        return
    with _lock:
        if _patched:
            return
        original_worker = autotuner._precompile_worker
        original_config = autotuner._precompile_config
        original_benchmark = autotuner.benchmark_all_configs

        def _precompile_worker(self: Any) -> Any:
            auto = _auto()
            configs = getattr(self, "configs", None)
            if auto is None or not configs or getattr(self, "compile_results", None) \
                    or getattr(self, TAG, False):
                return original_worker(self)
            declared = declared_off_launcher(auto.variants)
            # Inductor's configs already choose num_warps and num_stages: its variants are the passes only.
            candidates = [name for name, _ in auto.variants
                          if name and name not in declared and not _launch_options.is_option(name)]
            if not candidates:
                self._triton_ext_compile = (0.0, [], declared)
                _log_left_out(self, declared)
                return original_worker(self)
            setattr(self, TAG, True)
            self.configs = expand(list(configs), candidates)
            self._triton_ext_stock = {}  # config index -> its no-pass compile (NoPass)
            start = time.perf_counter()
            self._triton_ext_deadline = start + settings.auto_budget_s
            try:
                out = original_worker(self)
            finally:
                del self._triton_ext_stock, self._triton_ext_deadline
            kept, dropped, off_launcher = prune(list(self.compile_results or []))
            off_launcher = {**declared, **off_launcher}
            if kept:
                self.compile_results = kept
            self._triton_ext_compile = (time.perf_counter() - start, dropped, off_launcher)
            _log_left_out(self, off_launcher)
            return out

        def _precompile_config(self: Any, cfg: Any) -> Any:
            tag = getattr(cfg, TAG, None)
            auto = _auto()
            if auto is None or tag is None:
                return original_config(self, cfg)
            stock = getattr(self, "_triton_ext_stock", None)  # set while _precompile_worker runs
            if not tag[1]:
                result = original_config(self, cfg)
                if stock is not None:
                    stock[tag[0]] = NoPass.of(result)
                return result
            base = (stock or {}).get(tag[0])
            if base is not None and time.perf_counter() > self._triton_ext_deadline:
                return left_out(base.result, cfg, f"over the budget of {settings.auto_budget_s:g} s "
                                                  "(TRITON_EXT_AUTO_BUDGET_S) for this kernel's variants: not compiled")
            selection = auto.selection(tag[1])
            with _selection.lend_hook(), _selection.using(selection):
                return compile_variant(lambda c: original_config(self, c), cfg, base, selection)

        def benchmark_all_configs(self: Any, *args: Any, **kwargs: Any) -> Any:
            auto = _auto()
            launchers = list(getattr(self, "launchers", []) or [])
            tags = [getattr(getattr(launcher, "config", None), TAG, None) for launcher in launchers]
            if auto is None or not any(t is not None and t[1] for t in tags):
                return original_benchmark(self, *args, **kwargs)
            return _benchmark(self, auto, launchers, tags, args, kwargs, original_benchmark)

        wrappers = {"_precompile_worker": _precompile_worker, "_precompile_config": _precompile_config,
                    "benchmark_all_configs": benchmark_all_configs}
        originals = dict(zip(wrappers, (original_worker, original_config, original_benchmark)))
        try:
            for name, wrapper in wrappers.items():
                setattr(autotuner, name, wrapper)
        except Exception:  # all three or none: half a wrap would compile variants nobody times
            for name in [n for n, wrapper in wrappers.items() if getattr(autotuner, n, None) is wrapper]:
                setattr(autotuner, name, originals[name])
            raise
        _patched.update(worker=original_worker, config=original_config, benchmark=original_benchmark,
                        cls=autotuner)
        logging.getLogger(module.__name__).addFilter(quiet_variant_compiles)


def _best_config(groups: dict[Any, dict[str, Any]], readings: dict[Any, float]) -> Any:
    """The config whose no-pass launcher Inductor's reading puts first (the one it would pick
    without the mode; the first in its order on a tie, as ``min`` does), or None."""
    read = [(readings[variants[""]], order) for order, (index, variants) in enumerate(groups.items())
            if "" in variants and variants[""] in readings]
    if not read:
        return None
    order = min(read)[1]
    return list(groups)[order]


def _final_timings(groups: dict[Any, dict[str, Any]], readings: dict[Any, float], best: Any,
                   chosen: Decision | None) -> dict[Any, float]:
    """What ``benchmark_all_configs`` returns: Inductor's own readings for the no-pass launchers,
    an infinite time for every pass variant except the one kept on ``best`` (``chosen``), which
    reads its config's reading scaled by its measured gain (< 1: Inductor's ``min`` takes it)."""
    timings: dict[Any, float] = {}
    for variants in groups.values():
        for variant, launcher in variants.items():
            timings[launcher] = readings.get(launcher, float("inf")) if variant == "" else float("inf")
    if chosen is not None and chosen.choice and best in groups:
        base = groups[best][""]
        gain = chosen.timings_ms[chosen.choice] / chosen.timings_ms[""]
        timings[groups[best][chosen.choice]] = readings[base] * min(gain, 1.0 - 1e-9)
    return timings


def _benchmark(self: Any, auto: Any, launchers: list[Any], tags: list[Any], args: tuple[Any, ...],
               kwargs: dict[str, Any], original_benchmark: Callable[..., dict[Any, float]]) -> dict[Any, float]:
    """Inductor's ``benchmark_all_configs`` with the pass set as one more dimension.

    Inductor first reads its configs with its own ``benchmark_all_configs`` over the no-pass
    launchers, before the mode runs anything on the GPU, so it picks the config it picks without
    the mode (an H200 run that read the configs after the variants' timings picked differently
    from the stock processes: outputs 1 bf16 ulp apart with no pass kept). Only that config's
    pass variants are then timed with the mode's rule; a kept pass replaces its config's
    launcher, never changes which config runs."""
    name = str(getattr(self, "inductor_meta", {}).get("kernel_name") or getattr(self.fn, "__name__", "inductor"))
    start = time.perf_counter()
    groups: dict[Any, dict[str, Any]] = {}
    for launcher, tag in zip(launchers, tags):
        index, variant = tag if tag is not None else (("untagged", id(launcher)), "")
        groups.setdefault(index, {})[variant] = launcher
    saved = self.launchers
    # A variant whose config has no no-pass launcher stands for that config in the reading.
    self.launchers = [launcher for launcher, tag in zip(launchers, tags)
                      if tag is None or not tag[1] or "" not in groups[tag[0]]]
    try:
        readings = original_benchmark(self, *args, **kwargs)
    finally:
        self.launchers = saved
    best = _best_config(groups, readings)
    compile_s, dropped, off_launcher = getattr(self, "_triton_ext_compile", (0.0, [], {}))
    variants = groups.get(best, {}) if best is not None else {}
    decision = Decision(kernel=name, choice="", applicable=[v for v in variants if v],
                        compile_s=round(compile_s, 3), same_as_stock=sorted(set(dropped)),
                        specialization=f"inductor config {best}", failed=dict(off_launcher))
    if decision.applicable:
        decision.error = _relaunch_hazard(variants.get(""))  # if any, nothing launches: no pass
        if decision.error is None:
            _time_variants(self, decision, variants, args, kwargs, time.perf_counter() + settings.auto_budget_s)
    timings = _final_timings(groups, readings, best, decision)
    decision.first_launch_s = round(time.perf_counter() - start + compile_s, 3)
    if decision.applicable:
        auto._record(decision)
    tuner = getattr(self, "coordesc_tuner", None)
    if tuner is not None and hasattr(tuner, "cache_benchmark_result"):
        for launcher, timing in timings.items():
            tuner.cache_benchmark_result(launcher.config, timing)
    self.reset_to_zero_args(*args, **kwargs)
    return timings


def _relaunch_hazard(launcher: Any) -> str | None:
    """:func:`triton_ext._backup.relaunch_hazard` for the kernel behind an Inductor
    launcher, where Inductor exposes its IR. A static launcher exposes none; Inductor's generated
    kernels only index their arguments, and a user's kernel keeps Triton's launcher unless
    ``static_launch_user_defined_triton_kernels`` is set."""
    return relaunch_hazard(getattr(launcher, "bin", None), refuse_without_ir=False)


def _time_variants(self: Any, decision: Decision, variants: dict[str, Any], args: tuple[Any, ...],
                   kwargs: dict[str, Any], deadline: float = math.inf) -> None:
    """The mode's rule on one config's launchers (a variant that cannot launch, or whose outputs
    differ from no pass's, is dropped alone: :func:`triton_ext._variants.screen_variants`): interleaved GPU-time rounds, the winners again
    on fresh rounds, then back to back, where they must win too; sets ``decision``'s timings and
    choice (none on any error, or past ``deadline``, checked before each reading: the config keeps
    its no-pass kernel)."""
    global _flush
    backup: ArgumentBackup | None = None
    check: OutputCheck | None = None
    try:  # everything, the flush buffer and the argument clones included, may fail: no pass then
        if "" not in variants:
            raise RuntimeError("no launcher without a pass for this config")
        if _flush is None:
            _flush = flush_buffer()
        flush = _flush
        device = self.get_device_interface()
        stream = device.get_raw_stream(device.current_device())
        cloned_args, cloned_kwargs = self.clone_args(*args, **kwargs)

        def go(variant: str) -> Any:
            return variants[variant](*cloned_args, **cloned_kwargs, stream=stream)

        plans: dict[str, ReadingPlan] = {}

        def gpu_one(variant: str) -> float:
            check_budget(deadline, "timing")
            self.reset_to_zero_args(*cloned_args, **cloned_kwargs)
            return gpu_time_ms(lambda: go(variant), rep_ms=REP_MS, flush=flush,
                               plan=plans.setdefault(variant, ReadingPlan()))

        tensors = list(tensors_of((*cloned_args, *cloned_kwargs.values())))
        backup = ArgumentBackup.of(tensors, copies=2)

        def launch(variant: str) -> None:
            backup.restore()
            self.reset_to_zero_args(*cloned_args, **cloned_kwargs)
            go(variant)

        check = OutputCheck.of(backup, tensors, lambda: launch(""))
        check_budget(deadline, "checking outputs")
        decision.applicable = screen_variants(decision, decision.applicable, launch, check.differs)
        if not decision.applicable:
            return
        variants = {v: launcher for v, launcher in variants.items() if v == "" or v in decision.applicable}
        rounds = interleaved_rounds(list(variants), gpu_one, ROUNDS)
        decision.timings_ms = {v: statistics.median(t) for v, t in rounds.items()}
        decision.spreads = {v: spread(t) for v, t in rounds.items()}
        found = winners(rounds)
        if found:
            confirm = interleaved_rounds(["", *found], gpu_one, CONFIRM_ROUNDS)
            decision.confirm_ms = {v: statistics.median(t) for v, t in confirm.items()}
            kept = winners(confirm)
            if kept:
                calls, windows = back_to_back_reading(decision.timings_ms[""])
                b2b = interleaved_rounds(["", *kept], lambda v: back_to_back_ms(lambda: go(v), calls, windows),
                                         CONFIRM_ROUNDS, before=lambda _: check_budget(deadline, "timing back to back"))
                decision.back_to_back_ms = {v: statistics.median(t) for v, t in b2b.items()}
                decision.choice = choose_in_both(confirm, b2b)
    except (OverBudget, OutputsUnverifiable) as exc:  # each says why no pass is kept
        decision.error = str(exc)
        decision.choice = ""
    except Exception as exc:  # the config keeps its no-pass kernel
        decision.error = f"timing failed, no pass kept: {describe_error(exc)}"
        decision.choice = ""
    finally:
        if check is not None:
            check.release()
        if backup is not None:
            backup.release()


class _Loader(importlib.abc.Loader):
    """The module's own loader, then :func:`_patch`."""

    def __init__(self, inner: importlib.abc.Loader) -> None:
        self.inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self.inner.create_module(spec)

    def __getattr__(self, name: str) -> Any:  # get_source, get_code, is_package...: the module's own
        return getattr(self.inner, name)

    def exec_module(self, module: types.ModuleType) -> None:
        self.inner.exec_module(module)
        try:
            _patch(module)
        except Exception as exc:  # never break torch's import
            global _why_not
            _why_not = f"wrapping {MODULE} failed: {type(exc).__name__}: {exc}"
            _log.warning("triton-ext auto: %s", _why_not)


class _Finder(importlib.abc.MetaPathFinder):
    """Wraps the loader of :data:`MODULE` when it is first imported."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != MODULE:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Loader(spec.loader)
                return spec
        return None


_finder = _Finder()


def install(active: Callable[[], Any]) -> None:
    """Wrap ``CachingAutotuner`` now if Inductor's module is imported, else when it is; ``active``
    returns the transparent mode whose candidates the wrapped autotuner times (or None)."""
    global _active
    _active = active
    module = sys.modules.get(MODULE)
    if module is not None:
        _patch(module)
    elif _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
