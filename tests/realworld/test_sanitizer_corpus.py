"""masked_load_poison + offset_overflow_check together on the real-kernel corpus, on the CPU.

Each corpus kernel is compiled for sm_90 with both passes, to the end of make_ttir where both run
(the offset check prints its exact lane count per program: ``print=every``, ``records=false``), and
the TTIR is interpreted on the host (tests/differential/interp.py) with the corpus's own inputs
(``Tensors("cpu", 0)``) for three programs: the first, the middle and the last of its grid. Clean
kernels on clean inputs must report nothing (issue 26 item 2: the two passes together reported an
overflow on every masked-off row of a masked gather). The offset check reads only integers, so
floating-point ops outside the interpreter's subset (exp, sqrt, libdevice) are modelled as NaN;
kernels with integer ops or types outside it (atomics, fp8, unstructured control flow) are listed
as not checked, and the test requires at least MIN_CHECKED kernels with offset sites to be checked.

The kernels this session selects are compiled and interpreted in two worker processes (as
test_realworld_passes.py's sweep does), each with a fresh Triton cache per kernel; each test
then asserts its own kernel's outcome.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import tempfile
import traceback
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from triton.compiler.errors import CompilationError

import triton
from triton.compiler import ASTSource

import triton_ext
from triton_ext.testing import CUDA90, require_built

try:
    import torch
    from tests.realworld.realworld_kernels import REALWORLD, Tensors, compile_args
except ImportError as exc:  # the extra is part of the test set-up: say how to get it
    raise ImportError(f"{exc}; the real-world corpus needs the 'realworld' extra and a CPU torch: "
                      "run `bash tools/setup.sh`") from exc
from tests.differential.interp import Machine, RunResult
from tests.differential.jit_interp import kernel_func
from tests.differential.mlir_text import Type, UnsupportedIR
from tests.realworld.sweep import StoppedAfter, stage_texts

require_built("sanitizers")

SPAN = 1 << 40
TAG = "[triton-ext offset_overflow_check]"
#: Kernels with offset sites that the interpreter runs (12 at 0dd7581 + this change).
MIN_CHECKED = 10


@dataclass
class FloatOpaqueMachine(Machine):
    """The interpreter, with floating-point results of ops outside its subset set to NaN."""

    def _nan(self, ty: Type | None) -> np.ndarray | None:
        if ty is None or ty.kind != "float":
            return None
        return np.full((self.lanes,) + ty.shape, np.nan, np.float64 if ty.width == 64 else np.float32)

    def _arith(self, op: Any, ins: list[np.ndarray], ty: Type, active: np.ndarray) -> np.ndarray:
        try:
            return super()._arith(op, ins, ty, active)
        except UnsupportedIR:
            nan = self._nan(ty)
            if nan is None:
                raise
            return nan

    def _tt(self, op: Any, ins: list[np.ndarray], ty: Type | None, env: dict[str, np.ndarray],
            active: np.ndarray) -> list[np.ndarray]:
        try:
            return super()._tt(op, ins, ty, env, active)
        except UnsupportedIR:
            nan = self._nan(ty)
            if nan is None or len(op.results) != 1:
                raise
            return [nan]


def _compile_both(kernel: Any) -> tuple[str, Any, Any, dict[str, str]]:
    fn = kernel.fn()
    launch = kernel.build(Tensors("cpu", 0))
    signature, constexprs, attrs = compile_args(fn, launch)
    src = ASTSource(fn, signature, constexprs, attrs)
    # Both passes run in make_ttir and only the TTIR is interpreted: the compile stops there (the
    # real-world sweep compiles each pass through cubin).
    try:
        with stage_texts({}, stop_at="ttir"), triton_ext.enabled(
                "masked_load_poison", "offset_overflow_check", print="every", records=False):
            triton.compile(src, target=CUDA90, options={
                "num_warps": launch.num_warps, "num_stages": launch.num_stages})
    except StoppedAfter as stop:
        return stop.text, fn, launch, signature
    raise AssertionError("the compile ran past make_ttir")


def _interpret(ttir: str, fn: Any, launch: Any, signature: dict[str, str]) -> RunResult:
    """The first, middle and last program of the launch's grid on its inputs; raises
    UnsupportedIR for IR outside the interpreter's subset."""
    func = kernel_func(ttir)
    params = [p for p in fn.params if signature[p.name] != "constexpr"]
    assert len(params) == len(func.args), (fn.__name__, len(params), len(func.args))
    tables: dict[int, np.ndarray] = {}
    args: list[Any] = []
    for i, p in enumerate(params):
        value = launch.args.get(p.name, p.default)
        if isinstance(value, torch.Tensor):
            flat = value.detach().reshape(-1)
            tables[i] = flat.float().numpy() if flat.is_floating_point() else flat.to(torch.int64).numpy()
            args.append((i + 1) * SPAN)
        else:
            args.append(value)

    def memory(addr: np.ndarray, ty: Type) -> np.ndarray:
        base, idx = addr // SPAN - 1, addr % SPAN
        out = np.zeros(addr.shape, np.float64 if ty.kind == "float" else np.int64)
        for b, col in tables.items():
            sel = base == b
            if sel.any():
                out[sel] = col[np.clip(idx[sel], 0, len(col) - 1)]
        return out.astype(np.float32) if ty.kind == "float" and ty.width != 64 else out

    grid = list(launch.grid) + [1] * (3 - len(launch.grid))
    pids = np.array(sorted({(0, 0, 0), tuple(g // 2 for g in grid), tuple(g - 1 for g in grid)}),
                    np.int64)
    machine = FloatOpaqueMachine(len(pids), max_trips=1 << 17, memory=memory, program_id=pids,
                                 num_programs=np.tile(np.array(grid, np.int64), (len(pids), 1)))
    return machine.run(func, [np.full(len(pids), a, dtype=object) for a in args])


def check_kernel(name: str) -> tuple[str, list[str]]:
    """Compile one corpus kernel with both passes into a fresh cache and interpret its TTIR:
    (outcome, false reports). Runs in the worker processes of the ``outcomes`` fixture."""
    kernel = next(k for k in REALWORLD if k.name == name)
    triton.knobs.cache.dir = tempfile.mkdtemp(prefix=f"sanitizer-corpus-{name}-")
    try:
        ttir, fn, launch, signature = _compile_both(kernel)
    except CompilationError as exc:
        # flag-gems' reshape_and_cache references triton.next_power_of_2 from its module, which
        # this direct compile cannot resolve; recorded, and counted against MIN_CHECKED.
        return f"not compiled here: {str(exc).splitlines()[-1][:120]}", []
    if TAG not in ttir:
        return "no offset site", []
    try:
        result = _interpret(ttir, fn, launch, signature)
    except UnsupportedIR as exc:
        return f"not interpretable: {str(exc)[:120]}", []
    reports = [f"{ev.message} (programs {np.nonzero(ev.mask)[0].tolist()}, lanes "
               f"{ev.values[0][ev.mask].tolist() if ev.values else '?'})"
               for ev in result.prints if TAG in ev.message and ev.mask.any()]
    return "checked", reports


def _check_or_error(name: str) -> tuple[str, list[str]]:
    try:
        return check_kernel(name)
    except Exception:  # noqa: BLE001  (reported by the kernel's test)
        return "error", [traceback.format_exc()[-4000:]]


@pytest.fixture(scope="module")
def outcomes(request: pytest.FixtureRequest) -> dict[str, tuple[str, list[str]]]:
    """Kernel -> ("checked" | "no offset site" | why the interpreter could not run it | "error",
    false reports or the error), for the kernels whose tests this session runs."""
    names = {getattr(item.callspec.params["kernel"], "name", None) for item in request.session.items
             if item.module is request.module and hasattr(item, "callspec")
             and "kernel" in item.callspec.params}
    selected = [k.name for k in REALWORLD if k.name in names]
    if not selected:
        return {}
    workers = max(1, min(2, os.cpu_count() or 1))
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=ctx) as pool:
        return dict(zip(selected, pool.map(_check_or_error, selected)))


@pytest.mark.parametrize("kernel", REALWORLD, ids=lambda k: k.name)
def test_poison_and_offset_check_report_nothing_on_clean_corpus_kernels(outcomes, kernel):
    outcome, reports = outcomes[kernel.name]
    if outcome == "error":
        pytest.fail(f"{kernel.name}: {reports[0]}", pytrace=False)
    assert not reports, f"{kernel.name}: false reports on clean inputs: {reports}"


def test_enough_corpus_kernels_were_checked(outcomes):
    checked = sorted(k for k, (v, _) in outcomes.items() if v == "checked")
    if len(outcomes) < len(REALWORLD):
        pytest.skip("run with the per-kernel tests above (it reads their outcomes)")
    assert len(checked) >= MIN_CHECKED, {k: v for k, (v, _) in outcomes.items() if v != "no offset site"}
