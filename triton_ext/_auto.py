"""Transparent pass selection for kernels you cannot edit: ``TRITON_EXT_ENABLE=auto[:a,b]`` (issues 19.2, 26.3, 27).

With ``TRITON_EXT_ENABLE=auto`` (the registry's passes marked ``auto: true`` whose plugins are built) or ``auto:a,b``
(the passes a and b), importing ``triton_ext`` wraps ``JITFunction._do_compile``, which Triton's JIT calls only on a
cache miss (put back by :func:`deactivate`). With nothing enabled explicitly, Triton's stages-hook slot stays empty
(Triton calls a hook there on every launch): launches key as stock ones, the JITs' in-memory caches are emptied at
activation (kernels compiled before are decided at their next launch), and the hook is lent
(:func:`triton_ext._triton.lend`) only around each decision's compiles and timings. The enabled set is a *marker* (no
pass, the stock on-disk key, its own hash): while the hook is lent, another thread's launch keys with that hash and
gets the stock kernel under a key no later launch computes; once ``enable``/``enabled`` install the hook for good, the
mode's specializations key with the marker as before. At a kernel's first launch for a specialization (the JIT's own
key: specialization, options, marker; on this device), inside that cache miss:

1. the launch's arguments and grid are read from Triton's ``run`` frame (:func:`_is_launch`);
2. a decision on disk (``$TRITON_EXT_AUTO_DIR``, default ``~/.cache/triton-ext/auto``, keyed by the decision format,
   the kernel's source hash, the JIT's key, the GPU name and every variant's selection key, which holds the plugins'
   bytes) is taken as is: only the chosen variant is compiled (and a late combination timed against it:
   :func:`triton_ext._variants.time_combination`);
3. otherwise no pass is compiled and read once, and a launch-bound launch keeps it with no variant compiled
   (:mod:`triton_ext._regime`); else every candidate pass alone and the launch at half and twice its warp count and
   with one pipeline stage less and one more (:mod:`triton_ext._launch_options`), concurrently on a thread pool
   (:func:`_pool`; a launch option's variants are compiled with the passes that join it, registry ``joins``:
   :meth:`_Auto.joined`); a variant that does not apply stops once its IR equals no pass's
   (:func:`triton_ext._variants.stop_if_stock`), one whose PTX does is not timed;
4. no pass runs twice and each applicable variant once, from the saved inputs: one that cannot launch here
   (``OutOfResources``: more shared memory than the GPU has, found only when Triton loads the binary) is dropped alone
   (``Decision.failed``), and so is one whose launch leaves other outputs than no pass's, bit for bit
   (:mod:`triton_ext._outputs`, ``Decision.changed_outputs``; :func:`triton_ext._variants.screen_variants`); the others
   are timed (:func:`triton_ext._timing.gpu_time_ms`: the median GPU time, an L2 flush before each call, the calls
   queued behind a GPU sleep so the CPU's launch cost stays out of tiny kernels' times) in :data:`ROUNDS` interleaved
   rounds (:func:`triton_ext._timing.interleaved_rounds`: every variant in order, then in reverse), on the launch's own
   arguments, whose memory is saved first and restored before each reading and after the last
   (:mod:`triton_ext._backup`);
5. :func:`winners`: a variant *wins* when it beats no pass by more than the noise: per round, no pass's time over the
   variant's (interleaved, so drift cancels); median at least ``1 + MARGIN`` and faster in every round. The two fastest
   winners are timed again on :data:`CONFIRM_ROUNDS` fresh rounds and must win again, and then **launched back to
   back** (:func:`triton_ext._timing.back_to_back_ms`: as applications launch) in :data:`CONFIRM_ROUNDS` rounds, where
   they must win by the same rule (issue 27.3); else no pass. When the one kept and another winner can run together,
   their combination (``a+b``) is then timed against it (:func:`triton_ext._variants.time_combination`; the next
   activation's, if it compiles too late);
6. the kernel goes into the JIT's own cache under the JIT's own key, and the decision on disk. Every later launch of
   that specialization is Triton's own fast path (a hit in its kernel cache): with no pass, no code of the mode runs
   per launch; a chosen variant holds only for launches of the size class it was timed at
   (:mod:`triton_ext._launch_size`: fewer programs than SMs, or not), so it is placed behind a guard whose one call per
   launch picks it or the no-pass kernel by the grid (``benchmarks/auto_overhead.py`` measures both). Decisions are
   logged on the ``triton_ext.auto`` logger and kept in :attr:`_Auto.decisions`; ``triton-ext auto report`` prints
   those on disk.

An autotuned kernel (``@triton.autotune``) is decided once, for the config the autotuner picks: while
``Autotuner._bench`` times a config (wrapped while the mode is on), its launches get the stock kernel, kept in the
JIT's cache until that config is timed (:meth:`_Auto.benchmarking`).

The first launch is bounded by ``TRITON_EXT_AUTO_BUDGET_S`` (default 6 s), counted from the end of the no-pass compile
(which a stock launch pays too): past it no pass is kept, the decision is not written to disk, and compiles still
running finish in the background, filling Triton's on-disk cache, so the next process decides quicker.

Refused (the stock kernel, recorded once in ``decisions`` with the reason): launches during CUDA graph capture (nothing
may be timed there), launches under Triton's ``AsyncCompileMode``, launches with an argument whose memory the mode
cannot save (a ``data_ptr`` that is not a torch tensor's; a host tensor descriptor is saved as the view of its base it
reaches), kernels that make pointers from data or print (:func:`triton_ext._backup.relaunch_hazard`), and launches
whose tensor arguments reach more memory than the backup may take (``TRITON_EXT_AUTO_BACKUP_MB``, default 1024 MiB, and
for its two copies half the GPU's free memory; an out-of-memory error refuses too). Backups are byte copies of the
memory each argument reaches (:mod:`triton_ext._backup`: expanded views, parameters and shared storages restore
exactly). Any other failure inside the mode falls back to the stock kernel and is recorded the same way; the
specialization keeps it. The mode never fails a launch that works without it (issue 26.3). Launches inside
``triton_ext.enabled`` blocks or ``triton_ext.Config`` configs compile as without the mode; ``warmup`` compiles the
stock kernel without keeping it, so the first real launch decides. Kernels with side effects outside their tensor
arguments (device printf, writes through pointers held in other tensors, or through a view past its last element) are
not detected: do not use this mode on them. Inductor compiles and launches its generated kernels through its own
``CachingAutotuner``, never through ``JITFunction.run``: :mod:`triton_ext._inductor` makes the pass set one more
dimension of that autotuner's configs instead (issue 27.5). With a stages hook of another tool installed before
triton_ext's, the marker's key is not visible to the JIT (the chained key ignores an empty set): the mode still decides
at cache misses, under the stock keys, and :func:`deactivate` takes its kernels out again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sys
import threading
import time
import weakref
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from . import _inductor, _launch_options, _selection, _triton
from ._backup import BackupRefused, refuse_relaunch_hazard, tensors_of
from ._manifest import load_manifest
from ._model import JOINABLE
from ._regime import launch_bound_decision
from ._jit_caches import forget_compiled, uncache as _uncache
from ._launch_size import SIZES, SizeGuardedKernel, launch_size, sm_count
from ._choice import MARGIN, choose, choose_in_both, paired_ratios, spread, winners
from ._selection import KEY_VERSION, Selection
from ._settings import settings
from ._variants import (CONFIRM_ROUNDS, REP_MS, ROUNDS, Decision, compile_variants, describe_error, may_change,
                        on_saved_arguments, time_combination, time_variants)

__all__ = ["MARGIN", "ROUNDS", "CONFIRM_ROUNDS", "REP_MS", "parse", "activate", "deactivate", "active", "auto_mode",
           "Decision", "spread", "paired_ratios", "winners", "choose", "choose_in_both"]

#: Part of every decision's file name: decisions timed by older rules are tuned again (2: the
#: back-to-back readings run behind the launch-size guard; 3: no pass on a launch-bound kernel;
#: 4: warp-count variants compiled with their joining passes).
DECISION_FORMAT = 4


def parse(names: Sequence[str]) -> tuple[str, ...] | None:
    """``("auto",)`` -> ``()`` (default candidates); ``("auto:a", "b")`` -> ``("a", "b")``; else None."""
    if not names or not (names[0] == "auto" or names[0].startswith("auto:")):
        return None
    return tuple(n for n in (names[0][len("auto:"):], *names[1:]) if n)


def cache_dir() -> Path:
    """Where decisions are kept: ``$TRITON_EXT_AUTO_DIR``, default ``~/.cache/triton-ext/auto``."""
    return Path(os.environ.get("TRITON_EXT_AUTO_DIR") or settings.cache_dir.parent / "auto")


class _Auto:
    def __init__(self, candidates: Sequence[str]) -> None:
        manifest = load_manifest()
        if not candidates:
            candidates = [p.name for p in manifest.passes
                          if p.adds_pass and p.auto and manifest.extension_of(p).library_path().exists()]
        self.variants: list[tuple[str, Selection]] = [("", Selection())]
        for name in candidates:
            self.variants.append((name, Selection.of(_selection.build([name], None))))
        options = (*(_launch_options.WARP_VARIANTS if settings.auto_warps else ()),
                   *(_launch_options.STAGE_VARIANTS if settings.auto_stages else ()))
        self.variants.extend((name, Selection()) for name in options)
        self.by_name = dict(self.variants)  # and combinations "a+b", added when first tried
        #: Per launch option, the passes its variants are compiled with (registry ``joins``; :meth:`joined`).
        self.joining = {option: [p.name for p in manifest.passes if option in p.joins
                                 and manifest.extension_of(p).library_path().exists()] for option in JOINABLE}
        self.decisions: list[Decision] = []
        self.refused: set[tuple[int, int, str]] = set()
        #: Every kernel the mode put in a JIT's cache: ``(function, device, key)``, taken out again by :func:`deactivate`.
        self.placed: list[tuple[weakref.ref[Any], int, str]] = []
        self.lock = threading.RLock()
        self.tls = threading.local()
        #: Variant compiles still running after a first launch ran out of budget.
        self.pending: list[Any] = []
        digest = hashlib.sha256(json.dumps([KEY_VERSION, [(n, s.key) for n, s in self.variants]]).encode()).hexdigest()
        #: The enabled set while the mode is on and nothing is enabled explicitly: no pass, and the stock on-disk key
        #: (``key`` ""), but its own ``hash``, which the JIT puts in its in-memory cache key: the mode's
        #: specializations are cache misses until it placed their kernels.
        self.marker = Selection((), "", digest, ("", digest))

    def selection(self, variant: str) -> Selection:
        """The selection of a variant: ``""``, a candidate, or a combination ``"a+b"``."""
        found = self.by_name.get(variant)
        if found is None:
            passes, _ = _launch_options.split(variant)  # a warp count or a depth is a launch option
            if not all(n in self.by_name or any(n in j for j in self.joining.values()) for n in variant.split("+")):
                raise KeyError(variant)
            found = self.by_name[variant] = Selection.of(_selection.build(passes, None))
        return found

    def joined(self, variant: str, stock_ttir: Any) -> str:
        """``variant`` named with the passes that join its launch option (registry ``joins``) and
        may change the kernel (``needs_ops``): ``"p+num_warps/2"``, compiled with ``p``."""
        option = _launch_options.split(variant)[1]
        joining = self.joining[_launch_options.option_name(option)] if option else []
        return "+".join([n for n in joining if may_change(self.selection(n), stock_ttir)] + [variant])

    def launch_kwargs(self, fn: Any, variant: str, kwargs: dict[str, Any]) -> dict[str, Any] | None:
        return _launch_options.launch_kwargs(fn, variant, kwargs)

    # -- the JIT's cache miss --------------------------------------------------------------

    def on_miss(self, fn: Any, compile_stock: Callable[[], Any], caller: Any, key: str, device: int,
                warmup: bool) -> Any:
        """The kernel for a specialization the JIT has not compiled: decided here, then placed in the JIT's own cache
        under the JIT's key, so every later launch is Triton's own fast path."""
        if getattr(self.tls, "busy", False) or _selection.current().entries:
            return compile_stock()  # an explicit set, or a variant being compiled for a decision
        if self.marker.hash in key and not _triton.permanent():
            # Keyed by the hook a decision or a background compile lent (:func:`_triton.lend`): the kernel placed
            # under the no-hook key (a decided launch keeps its choice meanwhile), else the stock one, undecided
            # (both listed for :func:`deactivate` to take out).
            placed = fn.device_caches[device][0].get(_triton.key_without_hook(key, self.marker.hash))
            return self._place(fn, device, key, placed if placed is not None else compile_stock())
        launch = caller.f_locals if _is_launch(caller) else None
        if warmup or launch is None:
            kernel = compile_stock()
            if launch is not None:  # warmup(): not kept, so the first launch decides
                _uncache(fn, device, key, kernel)
            return kernel
        benchmarked = getattr(self.tls, "benchmarked", None)
        if benchmarked is not None:  # Triton's autotuner is timing a config: see benchmarking()
            kernel = compile_stock()
            benchmarked.append((weakref.ref(fn), device, key, kernel))
            return kernel
        from triton.runtime import _async_compile  # on first use: importing triton_ext must not import Triton

        if _async_compile.active_mode.get() is not None:
            return self._place(fn, device, key, compile_stock(),
                               refused="compiled under Triton's AsyncCompileMode (nothing may be timed there)")
        with self.lock:
            placed = fn.device_caches[device][0].get(key)
            if placed is not None:  # another thread decided it meanwhile
                return placed
            args, kwargs, grid = launch["args"], dict(launch["kwargs"]), launch["grid"]
            try:
                size = launch_size(grid, launch["bound_args"], device)
                with _selection.lend_hook():  # the slot stays empty between decisions (no call per launch)
                    kernel = self._decide(fn, key, device, args, kwargs, grid, size)
            except BackupRefused as exc:
                return self._place(fn, device, key, compile_stock(), refused=str(exc))
            except Exception as exc:  # nothing inside the mode may fail a launch (issue 26.3)
                return self._place(fn, device, key, compile_stock(),
                                   refused=f"the mode failed while deciding: {describe_error(exc)}")
            return self._place(fn, device, key, kernel)

    def benchmarking(self, bench: Callable[[], Any]) -> Any:
        """One config timed by Triton's autotuner (``Autotuner._bench``). Its launches get the stock
        kernel, kept in the JIT's cache while the config is timed and taken out when it is done, so
        the autotuner times what it times without the mode, and only the config it picks is
        decided, at its own launch right after: one decision per autotuned specialization, not
        one per config (an autotuner of 45 configs would otherwise compile and time every pass
        45 times in the first launch)."""
        outer = getattr(self.tls, "benchmarked", None)
        self.tls.benchmarked = benchmarked = []
        try:
            return bench()
        finally:
            self.tls.benchmarked = outer
            for ref, device, key, kernel in benchmarked:
                fn = ref()
                if fn is not None:
                    _uncache(fn, device, key, kernel)

    def _place(self, fn: Any, device: int, key: str, kernel: Any, refused: str | None = None) -> Any:
        fn.device_caches[device][0][key] = kernel
        self.placed.append((weakref.ref(fn), device, key))
        if refused is not None and (id(fn), device, key) not in self.refused:  # recorded once
            self.refused.add((id(fn), device, key))
            self._record(Decision(getattr(fn, "__name__", "kernel"), "", refused=refused,
                                  specialization=_short(key)))
        return kernel

    def _record(self, decision: Decision) -> None:
        self.decisions.append(decision)
        decision.log(_log)

    def variant_kernel(self, fn: Any, variant: str, args: tuple[Any, ...], kwargs: dict[str, Any], grid: Any) -> Any:
        """The compiled kernel of ``variant`` for this launch (compiled and cached under its own key, on disk too)."""
        assert _original_run is not None
        launch_kwargs = self.launch_kwargs(fn, variant, kwargs)
        if launch_kwargs is None:
            raise KeyError(f"{variant} does not apply to this launch")
        with _selection.using(self.selection(variant)):
            return _original_run(fn, *args, grid=grid, warmup=True, **launch_kwargs)

    def decision_path(self, fn: Any, key: str, device: int) -> Path:
        text = json.dumps([DECISION_FORMAT, fn.cache_key, key, _device_name(device), [(n, s.key) for n, s in self.variants],
                           [(n, self.selection(n).key) for names in self.joining.values() for n in names]], default=str)
        return cache_dir() / f"{getattr(fn, '__name__', 'kernel')[:80]}-{hashlib.sha256(text.encode()).hexdigest()[:32]}.json"

    def _decide(self, fn: Any, key: str, device: int, args: tuple[Any, ...], kwargs: dict[str, Any],
                grid: Any, size: str) -> Any:
        """The kernel to place: no pass's, or the chosen variant's behind a :class:`SizeGuardedKernel`
        for launches of ``size`` (:mod:`triton_ext._launch_size`); :class:`BackupRefused` if the
        arguments cannot be saved (no pass, recorded)."""
        import torch  # on first use: importing triton_ext must not import torch

        start = time.perf_counter()
        name = getattr(fn, "__name__", "kernel")
        tensors = list(tensors_of((*args, *kwargs.values())))
        if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():
            raise BackupRefused("launched during CUDA graph capture")
        self.tls.busy = True
        try:
            path = self.decision_path(fn, key, device)
            saved: dict[str, Any] = {}
            if path.exists():
                try:
                    saved = json.loads(path.read_text())
                    # The size the choice was timed at; older files: this launch's, as then.
                    saved_size = saved.get("launch_size") or size
                    if saved_size not in SIZES:
                        raise ValueError(f"launch_size {saved_size!r}")
                    kernel = self.variant_kernel(fn, saved["choice"], args, kwargs, grid)
                    if saved["choice"]:  # maybe decided by a version that did not check this
                        refuse_relaunch_hazard(kernel)
                    if not (saved["choice"] and saved.get("late_combination")):
                        self._record(Decision(name, saved["choice"], saved.get("timings_ms", {}), saved.get("applicable", []),
                                              back_to_back_ms=saved.get("back_to_back_ms", {}), from_disk=True,
                                              specialization=_short(key), launch_size=saved_size,
                                              first_launch_s=time.perf_counter() - start))
                        return self._guard(fn, saved["choice"], kernel, args, kwargs, grid, saved_size, device)
                except (OSError, ValueError, KeyError):
                    saved = {}  # unreadable or from another candidate set: tune again
            if saved:  # a winner chosen while its combination compiled: the combination's turn
                decision = Decision(name, saved["choice"], specialization=_short(key), launch_size=saved_size,
                                    late_combination=saved["late_combination"])
                try:
                    on_saved_arguments(tensors, lambda backup: time_combination(
                        self, _original_run, fn, device, args, kwargs, grid, kernel, decision, backup,
                        time.perf_counter() + settings.auto_budget_s))
                except BackupRefused as exc:  # the winner needs none; the combination waits
                    decision.error = f"{decision.late_combination} not timed: {exc}"
                self._finish(path, decision, start, saved.get("applicable", []), device, key)
                kept = decision.choice == saved["choice"]  # the winner held: its kernel is at hand
                chosen = kernel if kept else self.variant_kernel(fn, decision.choice, args, kwargs, grid)
                return self._guard(fn, decision.choice, chosen, args, kwargs, grid, saved_size, device)
            stock_start = time.perf_counter()
            kernels = {"": self.variant_kernel(fn, "", args, kwargs, grid)}
            stock_s = time.perf_counter() - stock_start  # the no-pass compile alone
            refuse_relaunch_hazard(kernels[""])  # before any variant compiles or any launch
            compile_start = time.perf_counter()
            bound = launch_bound_decision(self, _original_run, fn, args, kwargs, grid, tensors, name, _short(key), size)
            if bound is not None:  # no variant could be kept: none is compiled
                self._finish(path, bound, start, [], device, key)
                return kernels[""]
            # The budget is what the mode adds to the first launch: the no-pass compile, which a stock launch pays too,
            # does not count (vLLM's prefix-prefill attention takes 7.7 s alone on the H200 host, which left a budget
            # from `start` no time for its variants).
            deadline = compile_start + settings.auto_budget_s
            same: list[str] = []
            crashed: dict[str, str] = {}
            late = compile_variants(self, fn, device, args, kwargs, grid, kernels, same, deadline, crashed, stock_s)
            ptx = {v: k.asm.get("ptx", "") for v, k in kernels.items()}
            applicable = [v for v in ptx if v and ptx[v] != ptx[""]]
            decision = Decision(name, "", applicable=applicable, compile_s=time.perf_counter() - compile_start,
                                specialization=_short(key), same_as_stock=same, failed=crashed, launch_size=size)
            if late:
                decision.error = (f"over the first-launch budget of {settings.auto_budget_s:g} s "
                                  f"(TRITON_EXT_AUTO_BUDGET_S) while compiling {', '.join(late)}: no pass kept")
            elif applicable:
                on_saved_arguments(tensors, lambda backup: time_variants(
                    self, _original_run, fn, device, args, kwargs, grid, kernels, decision, backup, deadline))
            self._finish(path, decision, start, applicable, device, key)
            return self._guard(fn, decision.choice, kernels[decision.choice], args, kwargs, grid, size, device,
                               stock=kernels[""])
        finally:
            self.tls.busy = False

    def _guard(self, fn: Any, choice: str, kernel: Any, args: tuple[Any, ...], kwargs: dict[str, Any], grid: Any,
               size: str, device: int, stock: Any = None) -> Any:
        """``kernel`` itself for no pass; a chosen variant's behind a guard that runs it only at
        launches of ``size``, the no-pass kernel at the others (:mod:`triton_ext._launch_size`)."""
        if not choice:
            return kernel
        if stock is None:
            stock = self.variant_kernel(fn, "", args, kwargs, grid)
        return SizeGuardedKernel(kernel, stock, size, sm_count(device))

    def _finish(self, path: Path, decision: Decision, start: float, applicable: list[str], device: int, key: str) -> None:
        """Record ``decision`` (its first launch ends now); on disk unless it failed with no pass."""
        decision.first_launch_s = time.perf_counter() - start
        self._record(decision)
        if decision.keep_on_disk or decision.choice:  # a follow-up's failure keeps its proven winner
            decision.save(path, applicable=applicable, gpu=_device_name(device), specialization=key,
                          candidates=[v for v, _ in self.variants[1:]], decided_at=time.time(), format=DECISION_FORMAT)


def _short(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def _device_name(device: int) -> str:
    """The GPU's name (part of a decision's key on disk); the target where torch has no CUDA."""
    import torch  # on first use: importing triton_ext must not import torch
    from triton.runtime.driver import driver  # on first use: importing triton_ext must not import Triton

    if torch.cuda.is_available():
        return torch.cuda.get_device_name(device)
    return repr(driver.active.get_current_target())


_log = logging.getLogger("triton_ext.auto")
_lock = threading.Lock()
_active: _Auto | None = None
_original_run: Callable[..., Any] | None = None
_original_compile: Callable[..., Any] | None = None
_original_bench: Callable[..., Any] | None = None


def _is_launch(frame: Any) -> bool:
    """Whether ``frame`` runs Triton's ``JITFunction.run`` (module ``triton.runtime.jit``): a cache miss called from
    there is a launch, whose arguments and grid the mode reads from that frame's ``args``, ``kwargs`` and ``grid``
    (3.9.0's names; another caller, such as ``preload``, or names, compile the stock kernel with no decision)."""
    if frame is None:
        return False
    code = frame.f_code
    return (code.co_name == "run" and frame.f_globals.get("__name__") == "triton.runtime.jit"
            and all(name in code.co_varnames for name in ("args", "kwargs", "grid", "bound_args")))


def activate(candidates: Sequence[str] = ()) -> _Auto:
    """Turn the mode on for this process (``TRITON_EXT_ENABLE=auto...`` calls this at import).

    Wraps ``JITFunction._do_compile``, which the JIT calls only on a cache miss; no launch of a
    kernel already in the JIT's cache runs any code of the mode."""
    global _active, _original_run, _original_compile, _original_bench
    from triton.runtime.jit import JITFunction  # on first use: importing triton_ext must not import Triton

    auto = _Auto(candidates)
    if not _triton.permanent():
        # Nothing enabled explicitly: Triton's hook slot stays empty (Triton calls a hook there on every launch), lent
        # only around each decision; launches key as stock ones do, so kernels the JITs compiled before the mode are
        # forgotten (their next launch is a miss, decided).
        _triton.install_tap()
        forget_compiled()
    _inductor.install(active)  # torch.compile's kernels: the pass set in Inductor's autotuning (issue 27.5)
    with _lock:
        previous = _active
        _active = auto
        with _selection.state.lock:
            if not _selection.state.process.entries:
                _selection.state.process = auto.marker
        if previous is not None:
            _evict(previous)
        if _original_compile is None:
            original = JITFunction._do_compile
            _original_compile = original
            _original_run = JITFunction.run

            def _do_compile(self: Any, key: Any, signature: Any, device: Any, constexprs: Any, options: Any,
                            attrs: Any, warmup: Any) -> Any:
                current = _active
                if current is None:
                    return original(self, key, signature, device, constexprs, options, attrs, warmup)

                def compile_stock() -> Any:
                    # An explicit set compiles as without the mode; else no pass, under the stock
                    # on-disk key (the hook, if in the slot, answers the marker's empty key).
                    return original(self, key, signature, device, constexprs, options, attrs, warmup)

                return current.on_miss(self, compile_stock, sys._getframe(1), key, device, warmup)

            _do_compile.__wrapped__ = original  # type: ignore[attr-defined]
            JITFunction._do_compile = _do_compile
        if _original_bench is None:
            from triton.runtime.autotuner import Autotuner  # on first use: importing triton_ext must not import Triton

            bench = Autotuner._bench
            _original_bench = bench

            def _bench(self: Any, *args: Any, **kwargs: Any) -> Any:
                current = _active
                if current is None:
                    return bench(self, *args, **kwargs)
                return current.benchmarking(lambda: bench(self, *args, **kwargs))

            _bench.__wrapped__ = bench  # type: ignore[attr-defined]
            Autotuner._bench = _bench
    return auto


def _evict(auto: _Auto) -> None:
    """Take the kernels ``auto`` placed out of the JITs' caches (stock ones compile again)."""
    for ref, device, key in auto.placed:
        fn = ref()
        if fn is not None:
            fn.device_caches[device][0].pop(key, None)
    auto.placed.clear()


def deactivate() -> None:
    """Put ``JITFunction._do_compile`` and ``Autotuner._bench`` back and take the mode's kernels out
    of the JITs' caches."""
    global _active, _original_compile, _original_bench
    from triton.runtime.autotuner import Autotuner  # on first use: importing triton_ext must not import Triton
    from triton.runtime.jit import JITFunction

    with _lock:
        auto, _active = _active, None
        if auto is not None:
            with _selection.state.lock:
                if _selection.state.process is auto.marker:
                    _selection.state.process = Selection()
            _evict(auto)
        if _original_compile is not None:
            JITFunction._do_compile = _original_compile
            _original_compile = None
        if _original_bench is not None:
            Autotuner._bench = _original_bench
            _original_bench = None


@contextlib.contextmanager
def auto_mode(*candidates: str) -> Iterator[_Auto]:
    """The transparent mode inside the block (``triton_ext.auto_mode("my_pass")``); no names: every optimization
    pass, as ``TRITON_EXT_ENABLE=auto``. Yields the mode, whose ``decisions`` list what each first launch chose."""
    auto = activate(candidates)
    try:
        yield auto
    finally:
        deactivate()


def active() -> _Auto | None:
    return _active
