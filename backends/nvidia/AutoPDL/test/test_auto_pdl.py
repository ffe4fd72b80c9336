"""End-to-end CPU test of nvidia_auto_pdl: real kernels compiled through cubin for sm_90.

No GPU is needed: triton.compile with a GPUTarget runs ttir -> ttgir -> llir -> ptx -> cubin with
the wheel's ptxas. The pass is enabled through triton_ext (the stages hook) and runs where
registry.yaml places it (end of make_ttir); the loader turns its mark into ``launch_pdl`` in the compile metadata.
"""

from __future__ import annotations

import re

import pytest

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton.language.extra.cuda import gdc_wait

import triton_ext
from triton_ext.testing import require_built

require_built("nvidia_auto_pdl")  # an unbuilt plugin fails, never skips
pytestmark = pytest.mark.usefixtures("fresh_cache")  # compile from scratch: the IR read back is this run's

HOPPER = GPUTarget("cuda", 90, 32)
AMPERE = GPUTarget("cuda", 80, 32)
MI300 = GPUTarget("hip", "gfx942", 64)


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * alpha, mask=mask)


@triton.jit
def row_sum_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    # A pipelined loop of loads, a branch with an atomic, and a store.
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    total = tl.sum(acc, axis=0)
    if row % 2 == 0:
        tl.atomic_add(y_ptr + row, total)
    else:
        tl.store(y_ptr + row, total)


@triton.jit
def hand_managed_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    gdc_wait()
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x + 1.0, mask=offs < n)


@triton.jit
def read_then_loop_kernel(x_ptr, w_ptr, y_ptr, n, K, BLOCK: tl.constexpr):
    # A first read, then a loop of reads, then compute and a store: the last read is the loop.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.load(x_ptr + offs, mask=mask, other=0.0) * 2.0
    for k in range(0, K):
        acc += tl.load(w_ptr + k * n + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.sqrt(tl.abs(acc)) + 1.0, mask=mask)


def _source(name: str) -> ASTSource:
    if name == "read_then_loop":
        return ASTSource(read_then_loop_kernel,
                         signature={"x_ptr": "*fp32", "w_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32",
                                    "K": "i32"},
                         constexprs={"BLOCK": 256})
    if name == "scale":
        return ASTSource(scale_kernel, signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "alpha": "fp32"},
                         constexprs={"BLOCK": 1024})
    if name == "row_sum":
        return ASTSource(row_sum_kernel,
                         signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "n_cols": "i32", "stride": "i32"},
                         constexprs={"BLOCK": 256})
    return ASTSource(hand_managed_kernel, signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"},
                     constexprs={"BLOCK": 512})


def _compile(name: str, enabled: bool, target: GPUTarget = HOPPER, **options):
    if not enabled:
        return triton.compile(_source(name), target=target)
    with triton_ext.enabled("nvidia_auto_pdl", **options):
        return triton.compile(_source(name), target=target)


def _first_line(text: str, pattern: str) -> int:
    for i, line in enumerate(text.splitlines()):
        if re.search(pattern, line):
            return i
    return -1


def _body(ir: str) -> str:
    """The kernel's lines, without the module header (which may carry the mark)."""
    return "\n".join(line for line in ir.splitlines() if "module attributes" not in line)


def test_scale_kernel_waits_before_loading_and_launches_with_pdl():
    k = _compile("scale", enabled=True)
    ttir, ptx = k.asm["ttir"], k.asm["ptx"]
    assert ttir.count("tt.grid_dependency_wait") == 1
    assert ttir.count("tt.grid_dependency_launch_dependents") == 1
    assert _first_line(ttir, r"grid_dependency_wait") < _first_line(ttir, r"tt\.load")
    assert _first_line(ttir, r"tt\.load") < _first_line(ttir, r"launch_dependents") < _first_line(ttir, r"tt\.store")
    assert "griddepcontrol.wait" in ptx and "griddepcontrol.launch_dependents" in ptx
    assert _first_line(ptx, r"griddepcontrol\.wait") < _first_line(ptx, r"ld\.global")
    assert k.asm["cubin"], "compilation did not reach cubin"
    assert k.metadata.launch_pdl is True


def test_without_the_pass_nothing_changes():
    k = _compile("scale", enabled=False)
    assert "griddepcontrol" not in k.asm["ptx"]
    assert "grid_dependency" not in k.asm["ttir"]
    assert k.metadata.launch_pdl is False


def test_wait_precedes_every_global_access_through_pipelining():
    k = _compile("row_sum", enabled=True)
    ttgir, ptx = k.asm["ttgir"], k.asm["ptx"]
    wait = _first_line(ttgir, r"tt\.grid_dependency_wait")
    # The pipeliner's prologue loads and the async copies all come after the wait.
    accesses = [i for i, line in enumerate(ttgir.splitlines())
                if re.search(r"tt\.load|async_copy_global_to_local|tt\.atomic_rmw|tt\.store", line)]
    assert accesses and wait >= 0 and wait < min(accesses), ttgir
    ptx_wait = _first_line(ptx, r"griddepcontrol\.wait")
    ptx_access = [i for i, line in enumerate(ptx.splitlines())
                  if re.search(r"\b(ld|st|atom|red|cp\.async)\.global", line)]
    assert ptx_access and 0 <= ptx_wait < min(ptx_access)
    assert k.metadata.launch_pdl is True


def test_trigger_follows_the_last_read_even_inside_a_loop():
    # The default placement (after-loads) puts launch_dependents after the last op that reads:
    # here the loop, not the first load before it; and before the store.
    k = _compile("read_then_loop", enabled=True)
    lines = k.asm["ttir"].splitlines()
    loads = [i for i, line in enumerate(lines) if re.search(r"= tt\.load ", line)]
    loop = _first_line(k.asm["ttir"], r"scf\.for ")
    indent = len(lines[loop]) - len(lines[loop].lstrip())
    loop_end = next(i for i in range(loop + 1, len(lines)) if lines[i].startswith(" " * indent + "}"))
    trigger = _first_line(k.asm["ttir"], r"tt\.grid_dependency_launch_dependents")
    store = _first_line(k.asm["ttir"], r"tt\.store ")
    assert len(loads) == 2 and loop < loads[1] < loop_end, k.asm["ttir"]
    assert loop_end < trigger < store, k.asm["ttir"]
    ptx = k.asm["ptx"].splitlines()
    ptx_trigger = _first_line(k.asm["ptx"], r"griddepcontrol\.launch_dependents")
    ptx_loads = [i for i, line in enumerate(ptx) if re.search(r"\bld\.global", line)]
    ptx_stores = [i for i, line in enumerate(ptx) if re.search(r"\bst\.global", line)]
    assert ptx_loads and ptx_stores and max(ptx_loads) < ptx_trigger < min(ptx_stores)


@pytest.mark.parametrize("where,expected", [("after-wait", 1), ("none", 0)])
def test_launch_dependents_option(where, expected):
    k = _compile("scale", enabled=True, launch_dependents=where)
    assert k.asm["ptx"].count("griddepcontrol.launch_dependents") == expected
    assert k.asm["ptx"].count("griddepcontrol.wait") == 1
    if where == "after-wait":
        ttir = k.asm["ttir"]
        assert _first_line(ttir, "launch_dependents") == _first_line(ttir, "grid_dependency_wait") + 1


def test_hand_managed_kernel_is_left_alone():
    k = _compile("hand_managed", enabled=True)
    assert k.asm["ptx"].count("griddepcontrol.wait") == 1
    assert "launch_dependents" not in k.asm["ptx"]
    assert "triton_ext.launch_pdl" not in k.asm["ttir"]
    assert k.metadata.launch_pdl is False  # the author's launch choice stands


@pytest.mark.parametrize("target", [AMPERE, MI300], ids=["sm80", "gfx942"])
def test_other_targets_untouched(target):
    on = _compile("scale", enabled=True, target=target)
    off = _compile("scale", enabled=False, target=target)
    assert _body(on.asm["ttir"]) == _body(off.asm["ttir"])
    assert "grid_dependency" not in on.asm["ttgir"]
    assert not getattr(on.metadata, "launch_pdl", False)
