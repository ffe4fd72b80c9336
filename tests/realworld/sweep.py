"""Compile one real-world kernel with no pass and with each registered pass, through cubin.

Runs in worker processes of test_realworld_passes.py (one task per kernel, so the baseline
is compiled once and every pass is compared with it). A pass *fires* on a kernel when any IR
stage (ttir, ttgir, llir, ptx) differs from the baseline's. Every compile runs in strict
mode: a pass that fails or cannot be placed raises; each stage's module text is parsed
again (the MLIR verifier), as tests/corpus does.

A pass whose own stage ends with the baseline's module text, exactly, stops there: the stages
after it are the same functions of the same module as the baseline's, which compiled through
cubin, so they would repeat it stage for stage (the pass does not fire). About two thirds of the
sweep's pass compiles stop so (most passes fire on few of these kernels), with the same
findings: a pass that fails or cannot be placed still raises in its stage, and one that changes
its stage's output is compiled on through cubin and verified as before.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass, field
from typing import Any, Iterator

STAGES = ("ttir", "ttgir", "llir", "ptx")


@dataclass
class Outcome:
    """One compile of one kernel: with ``pass_name`` (None: the baseline)."""

    kernel: str
    pass_name: str | None
    ok: bool
    seconds: float
    error: str = ""
    placed: list[str] = field(default_factory=list)
    fires: bool = False
    first_changed_stage: str | None = None
    #: Stopped after the pass's own stage (its output was the baseline's): later stages, and so
    #: any companion placed there (registry `with:`), did not run.
    stopped: bool = False


class StoppedAfter(Exception):
    """Raised right after stage ``stage`` by :func:`stage_texts` given no baseline: the caller
    needs that stage's output (``text``) and nothing after it."""

    def __init__(self, stage: str, text: str) -> None:
        super().__init__(stage)
        self.stage, self.text = stage, text


class SameAsBaseline(Exception):
    """Raised after a pass's stage when the module is the baseline's, character for character."""


@contextlib.contextmanager
def stage_texts(seen: dict[str, str], stop_at: str | None = None,
                 baseline: dict[str, str] | None = None) -> Iterator[None]:
    """Without ``stop_at``, record the text of each stage's output (STAGES) into ``seen``; with
    it, raise :class:`SameAsBaseline` right after that stage when its text equals
    ``baseline[stop_at]``, or, without a baseline, :class:`StoppedAfter` with its text.

    Wraps the stage functions as Triton's compile loop calls them (after every stages hook,
    triton_ext's included), so the text is the stage's whole output, plugin passes and all.
    """
    from triton.backends.nvidia.compiler import CUDABackend

    original = CUDABackend.add_stages

    def add_stages(self: Any, stages: dict[str, Any], options: Any, language: Any) -> None:
        original(self, stages, options, language)
        for name, fn in list(stages.items()):
            def run(src: Any, metadata: dict, _name: str = name, _fn: Any = fn) -> Any:
                out = _fn(src, metadata)
                if stop_at is None and _name in STAGES:
                    seen[_name] = str(out)
                elif _name == stop_at:
                    seen[_name] = str(out)
                    if baseline is None:
                        raise StoppedAfter(_name, seen[_name])
                    if seen[_name] == baseline.get(_name):
                        raise SameAsBaseline(_name)
                return out
            stages[name] = run

    CUDABackend.add_stages = add_stages  # type: ignore[method-assign]
    try:
        yield
    finally:
        CUDABackend.add_stages = original  # type: ignore[method-assign]


def _compile(kernel: Any, names: list[str]) -> tuple[Any, list[str]]:
    """Compile through cubin; returns the compiled kernel (None when a :class:`SameAsBaseline`
    stopped it) and the passes placed in its pipeline."""
    import triton
    from triton.compiler import ASTSource

    import triton_ext
    from triton_ext.testing import CUDA90

    from tests.realworld.realworld_kernels import Tensors, compile_args

    fn = kernel.fn()
    launch = kernel.build(Tensors("meta"))
    signature, constexprs, attrs = compile_args(fn, launch)
    src = ASTSource(fn, signature=signature, constexprs=constexprs, attrs=attrs)
    options = {"num_warps": launch.num_warps, "num_stages": launch.num_stages}
    compiled = None
    with triton_ext.settings.scope(strict=True), triton_ext.record_pipelines() as plans:
        try:
            if names:
                with triton_ext.enabled(*names):
                    compiled = triton.compile(src, target=CUDA90, options=options)
            else:
                compiled = triton.compile(src, target=CUDA90, options=options)
        except SameAsBaseline:
            pass
    placed = sorted({n for plan in plans for n in plan.placed_names()})
    return compiled, placed


def sweep_kernel(kernel_name: str, pass_names: list[str]) -> list[dict[str, Any]]:
    """Baseline plus one compile per pass; returns :class:`Outcome` dicts."""
    import triton

    from triton_ext.testing import CUDA90

    from tests.corpus.test_corpus_passes import _verify_text
    from tests.realworld.realworld_kernels import BY_NAME

    import triton_ext

    kernel = BY_NAME[kernel_name]
    # A pass that brings a later-stage companion (registry `with:`) stops early too: the
    # companion's own column shows what it does to the baseline.
    stage_of = {spec.name: spec.stage for spec in triton_ext.manifest().passes}
    triton.knobs.cache.dir = tempfile.mkdtemp(prefix=f"realworld-{kernel_name}-")
    outcomes: list[Outcome] = []
    baseline: dict[str, str] = {}
    baseline_stages: dict[str, str] = {}  # each stage's output text in the baseline compile
    for name in [None, *pass_names]:
        start = time.perf_counter()
        out = Outcome(kernel_name, name, ok=False, seconds=0.0)
        seen: dict[str, str] = {}
        # With a baseline to compare with, a pass compile stops after the pass's own stage
        # when that stage's output is the baseline's (see the module docstring).
        stop_at = stage_of.get(name) if name and baseline_stages else None
        try:
            with stage_texts(seen, stop_at, baseline_stages):
                compiled, out.placed = _compile(kernel, [name] if name else [])
            if compiled is None:  # stopped after its stage: the baseline's module, unchanged
                out.ok = out.stopped = True
                out.seconds = round(time.perf_counter() - start, 3)
                outcomes.append(out)
                continue
            if not compiled.asm.get("cubin"):
                raise RuntimeError("no cubin")
            for stage in ("ttir", "ttgir"):
                _verify_text(compiled.asm[stage], CUDA90)
            texts = {s: str(compiled.asm.get(s, "")) for s in STAGES}
            if name is None:
                baseline = texts
                baseline_stages = dict(seen)
            elif baseline:
                changed = [s for s in STAGES if texts[s] != baseline[s]]
                out.fires = bool(changed)
                out.first_changed_stage = changed[0] if changed else None
            out.ok = True
        except Exception as exc:  # noqa: BLE001  (recorded; the test fails on it)
            tail = traceback.format_exc().strip().splitlines()[-1]
            out.error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:600]} [{tail[:200]}]"
        out.seconds = round(time.perf_counter() - start, 3)
        outcomes.append(out)
    return [asdict(o) for o in outcomes]
