"""``TRITON_EXT_REMARKS`` (issue 30 Deliver 4): why a pass left a kernel alone, without a debug build.

Every optimization pass that declines declares the shared ``remarks`` option (``RemarksOption`` in
``infra/include/triton-ext/PassOptions.td``) and, with it on, emits ``<pass>: not applied:
<reason>`` as an MLIR remark on the op it leaves alone. ``TRITON_EXT_REMARKS=1`` sets the option
on every enabled pass that declares it (unless the user set it) and adds ``remarks`` to
``MLIR_ENABLE_DIAGNOSTICS``, which libtriton reads whenever it runs a pass manager (so after
``import triton`` too) and without which Triton drops diagnostics below errors. Triton prints
the remark on stderr as ``<kernel file>:<line>:<col>: remark: ...``. Real kernels, compiled
through cubin for sm_90 on the CPU.
"""

from __future__ import annotations

import os

import pytest

import triton
import triton.language as tl

import triton_ext
from triton_ext.testing import compile_through_cubin, require_built

require_built("grid_swizzle")
require_built("nvidia_stream_eviction")
pytestmark = pytest.mark.usefixtures("fresh_cache", "clean_triton_ext")


@triton.jit
def add_2d(x_ptr, y_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    # A 2-D grid and no dot: grid_swizzle declines ("no dot"); a pure stream, so
    # nvidia_stream_eviction declines too ("does not gather").
    row = tl.program_id(0)
    col = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = col < n_cols
    x = tl.load(x_ptr + row * stride + col, mask=mask)
    y = tl.load(y_ptr + row * stride + col, mask=mask)
    tl.store(out_ptr + row * stride + col, x + y, mask=mask)


SIGNATURE = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n_cols": "i32", "stride": "i32"}
CONSTEXPRS = {"BLOCK": 128}
REASONS = {
    "grid_swizzle": "remark: grid_swizzle: not applied: no dot",
    "nvidia_stream_eviction": "remark: nvidia_stream_eviction: not applied: the kernel does not gather",
}


@pytest.fixture
def remarks_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """TRITON_EXT_REMARKS=1, with MLIR_ENABLE_DIAGNOSTICS unset before and restored after the test
    (the loader sets it for the rest of the process)."""
    monkeypatch.setenv("TRITON_EXT_REMARKS", "1")
    monkeypatch.delenv("MLIR_ENABLE_DIAGNOSTICS", raising=False)


@pytest.mark.parametrize("name", sorted(REASONS))
def test_decline_reason_printed(name: str, remarks_env: None, capfd: pytest.CaptureFixture[str]) -> None:
    compile_through_cubin(add_2d, SIGNATURE, CONSTEXPRS, passes=(name,))
    err = capfd.readouterr().err
    lines = [line for line in err.splitlines() if REASONS[name] in line]
    assert lines, f"no {REASONS[name]!r} on stderr:\n{err}"
    # At the kernel's source, as Triton prints MLIR locations.
    assert lines[0].startswith(f"{__file__}:"), lines[0]


def test_no_remark_without_the_switch(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("TRITON_EXT_REMARKS", raising=False)
    monkeypatch.delenv("MLIR_ENABLE_DIAGNOSTICS", raising=False)
    compile_through_cubin(add_2d, SIGNATURE, CONSTEXPRS, passes=("grid_swizzle",))
    assert "not applied" not in capfd.readouterr().err
    assert "MLIR_ENABLE_DIAGNOSTICS" not in os.environ


def test_option_set_and_part_of_the_key(remarks_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    with triton_ext.enabled("grid_swizzle") as on:
        (entry,) = on.entries
        assert "remarks=true" in entry.args
    assert os.environ["MLIR_ENABLE_DIAGNOSTICS"] == "remarks"
    monkeypatch.setenv("TRITON_EXT_REMARKS", "0")
    with triton_ext.enabled("grid_swizzle") as off:
        assert "remarks=false" in off.entries[0].args
    assert on.key != off.key  # a kernel compiled with remarks is cached apart


def test_user_option_wins(remarks_env: None) -> None:
    with triton_ext.enabled("grid_swizzle", options={"remarks": False}) as sel:
        assert "remarks=false" in sel.entries[0].args
    with triton_ext.enabled("grid_swizzle", options={"group-size": 4}) as sel:
        assert {"group-size=4", "remarks=true"} <= set(sel.entries[0].args)


def test_other_diagnostics_kept(remarks_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLIR_ENABLE_DIAGNOSTICS", "warnings,operations")
    with triton_ext.enabled("grid_swizzle"):
        pass
    assert os.environ["MLIR_ENABLE_DIAGNOSTICS"] == "warnings,operations,remarks"


def test_bad_value_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRITON_EXT_REMARKS", "maybe")
    with pytest.raises(ValueError, match="TRITON_EXT_REMARKS: expected one of 1, 0"):
        with triton_ext.enabled("grid_swizzle"):
            pass
