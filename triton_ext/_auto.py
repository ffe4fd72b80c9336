"""Transparent pass selection for kernels you cannot edit: ``TRITON_EXT_ENABLE=auto[:a,b]`` (issue 19.2).

With ``TRITON_EXT_ENABLE=auto`` (every registry pass that is an optimization: all but the
``sanitizers`` checks) or ``auto:grid_swizzle,loop_split`` (those passes), importing
``triton_ext`` wraps ``JITFunction.run`` (as the pipeline tap wraps Triton's pass bindings; put
back by :func:`deactivate`). At a kernel's first launch for a specialization (the JIT's own
specialization and options, on this device):

1. each variant (no pass, each candidate pass alone) is compiled with ``warmup=True``; a pass
   whose PTX equals the stock kernel's does not apply and is not timed;
2. the applicable variants are timed (:func:`triton_ext.testing.gpu_time_ms`: the median GPU
   time of the kernel, an L2 flush before each call as ``do_bench`` does, the calls queued behind
   a GPU sleep so the CPU's launch cost stays out of tiny kernels' times) in :data:`ROUNDS`
   interleaved rounds (:func:`triton_ext._timing.interleaved_rounds`: each round times every
   variant in order and then in reverse order, one L2-flush buffer for all), on the
   launch's own arguments, every tensor argument restored from a copy before each variant and
   after the last (as Triton's autotuner does with ``restore_value``);
3. :func:`winners`: a variant *wins* when it beats no pass by more than the noise. The noise is
   measured on paired ratios: per round, no pass's time over the variant's (interleaved rounds,
   so drift between rounds cancels). The variant wins when the median ratio is at least
   ``1 + MARGIN`` and the median gain exceeds the ratios' spread below the median (its lowest
   ratio is above 1: faster than no pass in every round). When two passes win,
   their combination (``a+b``, both passes in one pipeline) is compiled and becomes a finalist too;
4. confirmation: the best winner (and the combination) are timed again against no pass in
   :data:`CONFIRM_ROUNDS` fresh interleaved rounds and :func:`choose` applies the same rule to
   those timings only, so a variant that won the first rounds by chance (the best of several
   noisy draws) has to win again on new samples; otherwise no pass is kept;
5. the choice is remembered in memory and on disk (``$TRITON_EXT_AUTO_DIR``, default
   ``~/.cache/triton-ext/auto``) under a key of the kernel's source hash, specialization, options,
   GPU name and every variant's selection key (which holds the plugins' bytes);
6. the launch then runs with the chosen variant, and so does every later launch of that
   specialization (a dictionary lookup and a context-variable set per launch).

Refused (launched with no pass, recorded once in ``decisions`` with the reason): launches during
CUDA graph capture (nothing may be timed there; not remembered, a later plain launch may tune),
launches with an argument whose memory the mode cannot restore (anything with a ``data_ptr``
that is not a torch tensor: a raw pointer, a tensor descriptor), and launches whose tensor
arguments reach more memory than the backup may take (:mod:`triton_ext._backup`:
``TRITON_EXT_AUTO_BACKUP_MB``, default 1024 MiB, and half the GPU's free memory; an
out-of-memory error while copying refuses too). Backups are byte copies of the memory each
argument reaches, so expanded (stride-0) views, ``nn.Parameter`` arguments with grad mode on and
views sharing one storage are restored exactly, with no autograd involved. Any other failure
inside the mode (an exception while deciding, or a launch of the chosen variant that raises)
falls back to the stock launch and is recorded the same way: that specialization launches with no
pass from then on. The mode never fails a launch that works without it (issue 26.3).
Launches inside ``triton_ext.enabled`` blocks or ``triton_ext.Config`` configs,
``warmup`` calls and launches while another decision is being timed keep their explicit set.
First launch costs one compile per variant (one more for a combination) plus about
``(ROUNDS x variants + CONFIRM_ROUNDS x finalists) x 2 x 25 ms`` of timing; each later launch, one
extra binder call. Kernels with side effects outside their tensor arguments (device
printf, writes through pointers held in other tensors) are not detected: do not use this mode on
them. Only launches through ``JITFunction.run`` are seen: Inductor launches its compiled kernels
through its own launcher, so its generated kernels are not tuned.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import statistics
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from . import _hook, _selection
from ._backup import ArgumentBackup, BackupRefused, tensors_of
from ._choice import MARGIN, beats, spread
from ._selection import Selection

__all__ = ["MARGIN", "parse", "activate", "deactivate", "active", "Decision", "spread", "paired_ratios", "winners",
           "choose"]

#: Interleaved timing rounds over every applicable variant, then over the finalists again (each
#: round reads every variant twice, :func:`triton_ext._timing.interleaved_rounds`).
ROUNDS = 4
CONFIRM_ROUNDS = 3
#: GPU time per reading (two readings per variant and round).
REP_MS = 12.5
#: Extensions whose passes are checks (they print or abort), never candidates of bare ``auto``.
NOT_OPTIMIZATIONS = ("sanitizers",)


def paired_ratios(timings: Mapping[str, Sequence[float]], variant: str) -> list[float]:
    """Per round, no pass's time over ``variant``'s (> 1: the variant was faster in that round).

    Rounds are interleaved, so a drift of the GPU's clock or of a neighbour's load between rounds
    hits both timings of a round alike and cancels in their ratio."""
    return [b / t for b, t in zip(timings[""], timings[variant]) if t > 0]


def winners(timings: Mapping[str, Sequence[float]], margin: float = MARGIN) -> list[str]:
    """Variants that beat no pass (``""``) by more than the noise, fastest first.

    The noise is measured on the paired ratios ``r`` (:func:`paired_ratios`): ``v`` wins when
    ``median(r) >= 1 + margin`` and ``median(r) - 1 > median(r) - min(r)``, that is, its median
    gain exceeds the spread of its rounds below the median: it was faster than no pass in every
    round. A variant slower in any round, or faster by less than ``margin``, loses."""
    if "" not in timings:
        raise ValueError("winners: the timings must include no pass (key '')")
    found: dict[str, float] = {}
    for name, samples in timings.items():
        if name != "" and samples and beats(samples, timings[""], margin):
            found[name] = statistics.median(paired_ratios(timings, name))
    return sorted(found, key=lambda n: -found[n])


def choose(timings: Mapping[str, Sequence[float]], margin: float = MARGIN) -> str:
    """The fastest winner (:func:`winners`), or ``""`` (no pass) when none wins."""
    found = winners(timings, margin)
    return found[0] if found else ""


def parse(names: Sequence[str]) -> tuple[str, ...] | None:
    """``("auto",)`` -> ``()`` (default candidates); ``("auto:a", "b")`` -> ``("a", "b")``; else None."""
    if not names or not (names[0] == "auto" or names[0].startswith("auto:")):
        return None
    first = names[0][len("auto:"):] if names[0].startswith("auto:") else ""
    return tuple(n for n in (first, *names[1:]) if n)


@dataclass
class Decision:
    kernel: str
    choice: str  # "" = no pass
    timings_ms: dict[str, float] = field(default_factory=dict)  # first rounds, median per variant
    applicable: list[str] = field(default_factory=list)
    confirm_ms: dict[str, float] = field(default_factory=dict)  # confirmation rounds, median per finalist
    spreads: dict[str, float] = field(default_factory=dict)  # (max - min) / median, first rounds
    refused: str | None = None
    first_launch_s: float = 0.0
    from_disk: bool = False
    error: str | None = None  # the timing failed (no pass kept, not recorded on disk)


def _cache_dir() -> Path:
    from ._settings import settings

    return Path(os.environ.get("TRITON_EXT_AUTO_DIR") or settings.cache_dir.parent / "auto")


class _Auto:
    def __init__(self, candidates: Sequence[str]) -> None:
        from ._manifest import load_manifest

        manifest = load_manifest()
        if not candidates:
            candidates = [p.name for p in manifest.passes
                          if p.adds_pass and manifest.extension_of(p).name not in NOT_OPTIMIZATIONS
                          and manifest.extension_of(p).library_path().exists()]
        self.variants: list[tuple[str, Selection]] = [("", Selection())]
        for name in candidates:
            self.variants.append((name, Selection.of(_selection._build([name], None))))
        self.by_name = dict(self.variants)  # and combinations "a+b", added when first tried
        self.choices: dict[tuple[Any, ...], Selection] = {}
        self.decisions: list[Decision] = []
        self.refused: set[tuple[Any, ...]] = set()
        self.lock = threading.RLock()
        self.tls = threading.local()

    def selection(self, variant: str) -> Selection:
        """The selection of a variant: ``""``, a candidate, or a combination ``"a+b"``."""
        found = self.by_name.get(variant)
        if found is None:
            names = variant.split("+")
            if not all(n in self.by_name for n in names):
                raise KeyError(variant)
            found = self.by_name[variant] = Selection.of(_selection._build(names, None))
        return found

    # -- per launch ------------------------------------------------------------------------

    def launch(self, fn: Any, original: Callable[..., Any], args: tuple[Any, ...], grid: Any, warmup: bool,
               kwargs: dict[str, Any]) -> Any:
        if warmup or getattr(self.tls, "busy", False) or _selection.current().entries:
            return original(fn, *args, grid=grid, warmup=warmup, **kwargs)
        try:
            key = self._memory_key(fn, args, kwargs)
        except Exception:  # the stock launch binds the same arguments: let it raise (or run)
            return original(fn, *args, grid=grid, warmup=warmup, **kwargs)
        selection = self.choices.get(key)
        if selection is None:
            with self.lock:
                selection = self.choices.get(key)
                if selection is None:
                    try:
                        selection = self._decide(fn, original, key, args, grid, kwargs)
                    except Exception as exc:  # nothing inside the mode may fail a launch (issue 26.3)
                        selection = self._fall_back(fn, key, f"the mode failed while deciding: {_describe(exc)}")
        if not selection.entries:
            return original(fn, *args, grid=grid, warmup=warmup, **kwargs)
        try:
            with _selection.using(selection):
                return original(fn, *args, grid=grid, warmup=warmup, **kwargs)
        except Exception as exc:
            self._fall_back(fn, key, f"the launch with {'+'.join(selection.names())} failed: {_describe(exc)}")
            return original(fn, *args, grid=grid, warmup=warmup, **kwargs)

    def _fall_back(self, fn: Any, key: tuple[Any, ...], reason: str) -> Selection:
        """Launch this specialization with no pass from now on; record why, once."""
        with self.lock:
            self.choices[key] = Selection()
            if key not in self.refused:
                self.refused.add(key)
                self.decisions.append(Decision(getattr(fn, "__name__", "kernel"), "", refused=reason))
        return self.choices[key]

    @staticmethod
    def _memory_key(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        from triton.runtime.driver import driver

        device = driver.active.get_current_device()
        binder = fn.device_caches[device][4]
        _, specialization, options = binder(*args, **kwargs)
        return (id(fn), device, tuple(specialization), str(options))

    # -- first launch ----------------------------------------------------------------------

    def _disk_path(self, fn: Any, key: tuple[Any, ...]) -> Path:
        text = json.dumps([fn.cache_key, repr(key[2]), key[3], _device_name(key[1]),
                           [(n, s.key) for n, s in self.variants]], default=str)
        return _cache_dir() / f"{getattr(fn, '__name__', 'kernel')[:80]}-{hashlib.sha256(text.encode()).hexdigest()[:32]}.json"

    def _decide(self, fn: Any, original: Callable[..., Any], key: tuple[Any, ...], args: tuple[Any, ...], grid: Any,
                kwargs: dict[str, Any]) -> Selection:
        import torch

        start = time.perf_counter()
        name = getattr(fn, "__name__", "kernel")
        refused: str | None = None
        try:
            tensors = list(tensors_of((*args, *kwargs.values())))
        except BackupRefused as exc:
            refused = str(exc)
        if refused is None and torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():
            refused = "launched during CUDA graph capture"
        if refused is not None:
            if key not in self.refused:  # report once per specialization
                self.refused.add(key)
                self.decisions.append(Decision(name, "", refused=refused))
            if not refused.startswith("launched during"):
                self.choices[key] = Selection()  # the arguments' kinds are part of the specialization
            return Selection()  # during capture: not remembered, a later plain launch may tune
        path = self._disk_path(fn, key)
        if path.exists():
            try:
                saved = json.loads(path.read_text())
                selection = self.selection(saved["choice"])
                self.choices[key] = selection
                self.decisions.append(Decision(name, saved["choice"], saved.get("timings_ms", {}),
                                               saved.get("applicable", []), from_disk=True,
                                               first_launch_s=time.perf_counter() - start))
                return selection
            except (OSError, ValueError, KeyError):
                pass  # unreadable or from another candidate set: tune again
        try:
            backup = ArgumentBackup.of(tensors)
        except BackupRefused as exc:
            return self._fall_back(fn, key, str(exc))
        restore = backup.restore

        self.tls.busy = True
        error: str | None = None
        timings: dict[str, list[float]] = {}
        confirm: dict[str, list[float]] = {}
        try:
            ptx: dict[str, str] = {}

            def compile_variant(variant: str) -> None:
                try:
                    with _selection.using(self.selection(variant)):
                        kernel = original(fn, *args, grid=grid, warmup=True, **kwargs)
                    ptx[variant] = kernel.asm.get("ptx", "") if kernel is not None else ""
                except Exception:  # a variant that cannot compile is not a candidate
                    if variant == "":
                        raise

            def time_rounds(variants: list[str], rounds: int) -> dict[str, list[float]]:
                from ._timing import flush_buffer, gpu_time_ms, interleaved_rounds

                flush = flush_buffer()  # one buffer for every reading of the comparison

                def time_one(variant: str) -> float:
                    with _selection.using(self.selection(variant)):
                        return gpu_time_ms(lambda: original(fn, *args, grid=grid, warmup=False, **kwargs),
                                           rep_ms=REP_MS, flush=flush)

                return interleaved_rounds(variants, time_one, rounds, before=lambda _: restore())

            for variant, _ in self.variants:
                compile_variant(variant)
            applicable = [v for v, _ in self.variants[1:] if v in ptx and ptx[v] != ptx[""]]
            if applicable:
                try:
                    timings = time_rounds(["", *applicable], ROUNDS)
                    found = winners(timings)
                    finalists = found[:1]
                    if len(found) >= 2:  # two passes win alone: try them together
                        combo = "+".join(sorted(found[:2]))
                        compile_variant(combo)
                        if combo in ptx and ptx[combo] not in (ptx[found[0]], ptx[found[1]]):
                            finalists.append(combo)
                    if finalists:
                        confirm = time_rounds(["", *finalists], CONFIRM_ROUNDS)
                except Exception as exc:  # a variant that fails to launch: the user's launch runs with no pass
                    error = f"timing failed, no pass kept: {_describe(exc)}"
                    timings, confirm = {}, {}
        finally:
            self.tls.busy = False
            try:
                restore()  # the user's launch runs on the memory it started with
            finally:
                backup.release()
        medians = {v: statistics.median(t) for v, t in timings.items() if t}
        choice = choose(confirm) if confirm else ""
        decision = Decision(name, choice, medians, applicable, first_launch_s=time.perf_counter() - start,
                            confirm_ms={v: statistics.median(t) for v, t in confirm.items()},
                            spreads={v: spread(t) for v, t in timings.items() if t}, error=error)
        self.decisions.append(decision)
        selection = self.selection(choice)
        self.choices[key] = selection
        if error is not None:
            return selection  # not recorded on disk: another process may time it again
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"kernel": name, "choice": choice, "timings_ms": medians,
                                       "applicable": applicable, "confirm_ms": decision.confirm_ms,
                                       "spreads": decision.spreads}))
            tmp.replace(path)
        except OSError:
            pass  # the in-memory choice still holds for this process
        return selection

    @staticmethod
    def _refusal(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
        """Why the arguments cannot be saved and restored (None: they can)."""
        try:
            for _ in tensors_of((*args, *kwargs.values())):
                pass
        except BackupRefused as exc:
            return str(exc)
        return None


def _device_name(device: int) -> str:
    """The GPU's name (part of a decision's key on disk); the target where torch has no CUDA."""
    import torch
    from triton.runtime.driver import driver

    if torch.cuda.is_available():
        return torch.cuda.get_device_name(device)
    return repr(driver.active.get_current_target())


def _describe(exc: BaseException) -> str:
    first = (str(exc).strip().splitlines() or [""])[0]
    return f"{type(exc).__name__}: {first[:300]}"


_lock = threading.Lock()
_active: _Auto | None = None
_original_run: Callable[..., Any] | None = None


def activate(candidates: Sequence[str] = ()) -> _Auto:
    """Turn the mode on for this process (``TRITON_EXT_ENABLE=auto...`` calls this at import)."""
    global _active, _original_run
    from triton.runtime.jit import JITFunction

    auto = _Auto(candidates)
    _hook.install()
    with _lock:
        _active = auto
        if _original_run is None:
            original = JITFunction.run
            _original_run = original

            def run(self: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
                current = _active
                if current is None:
                    return original(self, *args, grid=grid, warmup=warmup, **kwargs)
                return current.launch(self, original, args, grid, warmup, kwargs)

            run.__wrapped__ = original  # type: ignore[attr-defined]
            JITFunction.run = run
    return auto


def deactivate() -> None:
    """Put ``JITFunction.run`` back."""
    global _active, _original_run
    from triton.runtime.jit import JITFunction

    with _lock:
        _active = None
        if _original_run is not None:
            JITFunction.run = _original_run
            _original_run = None


@contextlib.contextmanager
def auto_mode(*candidates: str) -> Iterator[_Auto]:
    """The transparent mode inside the block (``triton_ext.auto_mode("grid_swizzle")``); no names:
    every optimization pass, as ``TRITON_EXT_ENABLE=auto``. Yields the mode, whose ``decisions``
    list what each kernel's first launch chose."""
    auto = activate(candidates)
    try:
        yield auto
    finally:
        deactivate()


def active() -> _Auto | None:
    return _active
