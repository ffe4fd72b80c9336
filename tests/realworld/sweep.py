"""Compile one real-world kernel with no pass and with each registered pass, through cubin.

Runs in worker processes of test_realworld_passes.py (one task per kernel, so the baseline
is compiled once and every pass is compared with it). A pass *fires* on a kernel when any IR
stage (ttir, ttgir, llir, ptx) differs from the baseline's. Every compile runs in strict
mode: a pass that fails or cannot be placed raises; each stage's module text is parsed
again (the MLIR verifier), as tests/corpus does.
"""

from __future__ import annotations

import tempfile
import time
import traceback
from dataclasses import asdict, dataclass, field
from typing import Any

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


def _compile(kernel: Any, names: list[str]) -> tuple[Any, list[str]]:
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
    with triton_ext.settings.scope(strict=True), triton_ext.record_pipelines() as plans:
        if names:
            with triton_ext.enabled(*names):
                compiled = triton.compile(src, target=CUDA90, options=options)
        else:
            compiled = triton.compile(src, target=CUDA90, options=options)
    placed = sorted({n for plan in plans for n in plan.placed_names()})
    return compiled, placed


def sweep_kernel(kernel_name: str, pass_names: list[str]) -> list[dict[str, Any]]:
    """Baseline plus one compile per pass; returns :class:`Outcome` dicts."""
    import triton

    from triton_ext.testing import CUDA90

    from tests.corpus.test_corpus_passes import _verify_text
    from tests.realworld.realworld_kernels import BY_NAME

    kernel = BY_NAME[kernel_name]
    triton.knobs.cache.dir = tempfile.mkdtemp(prefix=f"realworld-{kernel_name}-")
    outcomes: list[Outcome] = []
    baseline: dict[str, str] = {}
    for name in [None, *pass_names]:
        start = time.perf_counter()
        out = Outcome(kernel_name, name, ok=False, seconds=0.0)
        try:
            compiled, out.placed = _compile(kernel, [name] if name else [])
            if not compiled.asm.get("cubin"):
                raise RuntimeError("no cubin")
            for stage in ("ttir", "ttgir"):
                _verify_text(compiled.asm[stage], CUDA90)
            texts = {s: str(compiled.asm.get(s, "")) for s in STAGES}
            if name is None:
                baseline = texts
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
