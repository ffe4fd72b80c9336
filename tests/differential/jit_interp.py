"""Interpret the TTIR of a JIT-compiled kernel on the host, one program per argument set.

Used by ``check_gpu.py`` (to refuse launching a kernel that would run away on the GPU) and by
the CPU tests of the same kernels. Pointer argument k points at address ``(k + 1) << 40``;
``tables`` gives the int64 contents of the first pointer arguments (element offsets).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tests.differential.host_passes import print_ir
from tests.differential.interp import Machine, RunResult
from tests.differential.mlir_text import Func, parse_module

_SPAN = 1 << 40


def kernel_func(ttir: str) -> Func:
    """The one tt.func of a compiled kernel's TTIR (locations dropped by reprinting)."""
    funcs = parse_module(print_ir(ttir))
    if len(funcs) != 1:
        raise ValueError(f"expected one tt.func in the kernel's TTIR, found {len(funcs)}")
    return next(iter(funcs.values()))


def pointer(k: int) -> int:
    return (k + 1) << 40


def run_programs(func: Func, tables: Sequence[Sequence[int]], programs: int,
                 max_trips: int = 4096, scalar_args: dict[int, Any] | None = None) -> RunResult:
    """Run ``programs`` programs (program_id x = 0..programs-1) of ``func``; argument k is the
    pointer ``pointer(k)`` unless ``scalar_args`` gives a value for it."""
    data = [np.array([int(v) & ((1 << 64) - 1) for v in t], np.uint64).view(np.int64)
            for t in tables]

    def memory(addr: np.ndarray, ty: Any) -> np.ndarray:
        base, idx = addr // _SPAN - 1, addr % _SPAN
        out = np.zeros(addr.shape, np.int64)
        for b, col in enumerate(data):
            sel = base == b
            if sel.any():
                out[sel] = col[np.clip(idx[sel], 0, len(col) - 1)]
        return out

    pids = np.zeros((programs, 3), np.int64)
    pids[:, 0] = np.arange(programs)
    grid = np.tile(np.array([programs, 1, 1], np.int64), (programs, 1))
    m = Machine(programs, max_trips=max_trips, memory=memory, program_id=pids, num_programs=grid)
    args = []
    for k in range(len(func.args)):
        v = (scalar_args or {}).get(k, pointer(k))
        args.append(np.array(list(v), dtype=object) if isinstance(v, (list, tuple, np.ndarray))
                    else np.full(programs, v, dtype=object))
    return m.run(func, args)


def stored(result: RunResult, arg: int, per_program: int, by_program: bool = True) -> np.ndarray:
    """(programs, per_program) values each program stored through pointer argument ``arg``,
    at ``pointer(arg) + program * per_program + j`` (``by_program``) or at ``pointer(arg) + j``
    (last write of each program wins)."""
    from tests.differential.interp import final_memory

    lane, addr, val = final_memory(result.stores)
    base = pointer(arg)
    sel = (addr >= base) & (addr < base + _SPAN)
    lane, off, val = lane[sel], addr[sel] - base, val[sel]
    j = off - lane * per_program if by_program else off
    if ((j < 0) | (j >= per_program)).any():
        raise ValueError(f"a program stored outside its {per_program} elements of argument {arg}")
    out = np.zeros((result.trips.shape[0], per_program), np.int64)
    out[lane, j] = val
    return out
