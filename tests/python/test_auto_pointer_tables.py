"""Kernels that build pointers from data reach memory outside their arguments (a grouped GEMM's
table of pointers): the transparent mode can neither restore what its extra launches write there
nor compare it, so it refuses them before anything compiles or launches, as it refuses kernels
that print (``triton_ext._backup.relaunch_hazard``). On the host-only driver: the decision runs, the
launch stops at ``kernel.run``."""

from __future__ import annotations

import json
import types
from typing import Any

import torch

import triton
import triton.language as tl

from tests.python.test_auto_backup import _addmm, _inputs, _launch_without_gpu, addmm, host_mode  # noqa: F401
from triton_ext._backup import relaunch_hazard
from triton_ext.testing import compile_through_cubin

REASON = "makes a pointer from an integer (tt.int_to_ptr)"


@triton.jit
def scale_through_table(table_ptr, n, BLOCK: tl.constexpr):
    # Program i doubles, in place, the tensor whose address the table holds at i: a second launch
    # doubles it again, in memory no argument covers.
    x_ptr = tl.load(table_ptr + tl.program_id(0)).to(tl.pointer_type(tl.float32))
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


@triton.jit
def scale_through_bitcast_table(table_ptr, n, BLOCK: tl.constexpr):
    # The same with the integer reinterpreted (bitcast=True): the same tt.int_to_ptr.
    x_ptr = tl.load(table_ptr + tl.program_id(0)).to(tl.pointer_type(tl.float32), bitcast=True)
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


def test_a_table_of_pointers_is_seen_in_the_compiled_kernel() -> None:
    table = compile_through_cubin(scale_through_table, {"table_ptr": "*u64", "n": "i32"}, {"BLOCK": 64})
    assert "tt.int_to_ptr" in table.asm["ttir"]
    assert REASON in (relaunch_hazard(table) or "")
    bitcast = compile_through_cubin(scale_through_bitcast_table, {"table_ptr": "*u64", "n": "i32"}, {"BLOCK": 64})
    assert REASON in (relaunch_hazard(bitcast) or "")


def test_a_kernel_that_indexes_its_arguments_only_is_not_refused() -> None:
    signature = {"a": "*fp32", "b": "*fp32", "bias": "*fp32", "out": "*fp32", "M": "i32", "N": "i32", "K": "i32",
                 "stride_bias_m": "i32", "stride_bias_n": "i32"}
    assert relaunch_hazard(compile_through_cubin(addmm, signature, {"BLOCK": 16})) is None


@triton.jit
def scale_and_print(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.device_print("x", x)
    tl.store(x_ptr + offs, x * 2, mask=mask)


def test_a_kernel_that_prints_is_refused() -> None:
    # Every launch the mode adds would print again, in the user's output.
    compiled = compile_through_cubin(scale_and_print, {"x_ptr": "*fp32", "n": "i32"}, {"BLOCK": 64})
    assert "it prints (tt.print)" in (relaunch_hazard(compiled) or "")


def test_a_kernel_whose_ir_is_not_available_is_refused() -> None:
    assert "not available" in (relaunch_hazard(types.SimpleNamespace(asm={"cubin": b""})) or "")


def test_the_mode_refuses_a_pointer_table_before_compiling_any_variant(host_mode: Any) -> None:  # noqa: F811
    from tests.python.test_auto import _mode_calls

    x = torch.arange(64, dtype=torch.float32)
    table = torch.tensor([x.data_ptr()], dtype=torch.int64)
    calls = _mode_calls(lambda: scale_through_table[(1,)](table, 64, BLOCK=64))
    assert "_variants.compile_variants" not in calls and "_backup.ArgumentBackup.of" not in calls
    (decision,) = host_mode.decisions
    assert decision.kernel == "scale_through_table" and decision.choice == ""
    assert REASON in (decision.refused or "")
    assert torch.equal(x, torch.arange(64, dtype=torch.float32))  # nothing launched
    _launch_without_gpu(lambda: _addmm(*_inputs()))  # other kernels are still decided
    assert host_mode.decisions[-1].kernel == "addmm" and host_mode.decisions[-1].refused is None


def test_a_choice_on_disk_is_not_applied_to_a_pointer_table(host_mode: Any) -> None:  # noqa: F811
    from tests.python.test_auto import _mode_calls

    table = torch.tensor([0], dtype=torch.int64)
    _mode_calls(lambda: scale_through_table[(1,)](table, 64, BLOCK=64))
    ref, device, key = host_mode.placed[-1]
    path = host_mode.decision_path(ref(), key, device)
    # As a version of the mode without this check could have left it.
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"choice": "grid_swizzle", "timings_ms": {}, "applicable": ["grid_swizzle"]}))
    scale_through_table.device_caches.clear()
    _mode_calls(lambda: scale_through_table[(1,)](table, 64, BLOCK=64))
    last = host_mode.decisions[-1]
    assert last.choice == "" and REASON in (last.refused or "") and not last.from_disk


def test_inductor_launchers_are_checked_where_their_ir_is_exposed() -> None:
    from triton_ext._inductor import _relaunch_hazard

    table = compile_through_cubin(scale_through_table, {"table_ptr": "*u64", "n": "i32"}, {"BLOCK": 64})
    # Inductor's launchers are functions carrying the compiled kernel as ``bin``.
    launcher = types.SimpleNamespace(bin=table)
    assert REASON in (_relaunch_hazard(launcher) or "")
    assert _relaunch_hazard(types.SimpleNamespace(bin=types.SimpleNamespace(asm={}))) is None  # static
    assert _relaunch_hazard(None) is None
