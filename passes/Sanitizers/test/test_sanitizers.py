"""End-to-end CPU tests of the sanitizer passes: real kernels compiled through cubin.

No GPU is needed: triton.compile with a GPUTarget runs ttir -> ttgir -> llir -> ptx -> cubin
with the wheel's ptxas. Passes are enabled through triton_ext, so they run where registry.yaml
places them (nan_inf_check at the end of make_ttgir; the other two at the end of make_ttir).
Whether a planted bug is caught at run time is checked on a GPU by check_gpu.py.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

import triton_ext
from triton_ext.testing import import_file, require_built

kernels = import_file(__file__, "../kernels.py")
require_built("sanitizers")  # an unbuilt plugin fails, never skips
pytestmark = pytest.mark.usefixtures("fresh_cache")  # compile from scratch: the IR read back is this run's

TARGET = GPUTarget("cuda", 90, 32)
ASYNC_COPY = "ttg.async_copy_global_to_local"
ALL = ("nan_inf_check", "masked_load_poison", "offset_overflow_check")



def _compile(fn: Any, signature: dict[str, str], constexprs: dict[str, Any],
             passes: tuple[str, ...] = (), options: dict[str, Any] | None = None,
             **pass_options: Any) -> Any:
    src = ASTSource(fn, signature=signature, constexprs=constexprs,
                    attrs=kernels.divisible(signature))
    opts = options or {}
    if not passes:
        return triton.compile(src, target=TARGET, options=opts)
    with triton_ext.enabled(*passes, **pass_options):
        compiled = triton.compile(src, target=TARGET, options=opts)
    assert compiled.asm["cubin"], "compilation did not reach cubin"
    return compiled


def _matmul(passes: tuple[str, ...] = (), dtype: str = "fp16", relu: bool = False,
            **pass_options: Any) -> Any:
    return _compile(kernels.matmul_kernel, kernels.matmul_signature(dtype),
                    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "RELU": relu}, passes,
                    {"num_stages": 3, "num_warps": 4}, **pass_options)


def _reports(ir: str, pass_name: str) -> list[tuple[str, str, str]]:
    """(kernel, file:line, what) of every report the pass put into the IR."""
    return re.findall(rf'tt\.print "\[triton-ext {pass_name}\] kernel=(\S+) site=(\S+) ([^"=]+)=',
                      ir)


def _site(name: str) -> str:
    return f"{kernels.SOURCE}:{kernels.site_line(name)}"


@pytest.fixture(scope="module")
def baseline_async_copies() -> int:
    count = _matmul().asm["ttgir"].count(ASYNC_COPY)
    assert count > 0, "the matmul loop is not pipelined without sanitizers; the test is moot"
    return count


@pytest.mark.parametrize("passes", [("nan_inf_check",), ("masked_load_poison",),
                                    ("offset_overflow_check",), ALL],
                         ids=["nan_inf_check", "masked_load_poison", "offset_overflow_check",
                              "all"])
def test_async_copies_unchanged(passes, baseline_async_copies):
    ttgir = _matmul(passes).asm["ttgir"]
    assert ttgir.count(ASYNC_COPY) == baseline_async_copies


@pytest.mark.parametrize("relu", [False, True], ids=["plain", "relu"])
def test_nan_inf_check_matmul_sites_outside_loop(relu):
    ttgir = _matmul(("nan_inf_check",), relu=relu).asm["ttgir"]
    reports = _reports(ttgir, "nan_inf_check")
    assert ("matmul_kernel", _site("matmul_store"), "store non-finite") in reports
    # The plain epilogue (truncf, convert_layout) keeps NaN/Inf, so the store check covers the
    # dot; a ReLU can hide -Inf, so the dot is checked too.
    assert any(what == "dot non-finite" for _, _, what in reports) == relu, reports
    # The checks sit after the pipelined loop: no print inside its body.
    loop = ttgir[ttgir.index("scf.for"):]
    body = loop[:loop.index("scf.yield")]
    assert "tt.print" not in body and "tt.reduce" not in body


def test_nan_inf_check_bf16_matmul_reaches_cubin():
    reports = _reports(_matmul(("nan_inf_check",), dtype="bf16", relu=True).asm["ttgir"],
                       "nan_inf_check")
    assert len(reports) == 2


def test_nan_inf_check_plain_matmul_one_reduction():
    # The dot check covered by the store check is left out: one non-finite compare (on the
    # stored fp16 value), no mask converted to the accumulator's layout.
    ttgir = _matmul(("nan_inf_check",)).asm["ttgir"]
    assert len(re.findall(r"= math\.absf", ttgir)) == 1
    assert not re.search(r"tensor<128x128xi1, #mma>", ttgir)


@pytest.mark.parametrize("mode", ["record", "abort"])
def test_nan_inf_check_ratio_store(mode):
    ttgir = _compile(kernels.ratio_kernel, kernels.RATIO_SIG, {"BLOCK": 1024},
                     ("nan_inf_check",), mode=mode).asm["ttgir"]
    assert _reports(ttgir, "nan_inf_check") == [
        ("ratio_kernel", _site("ratio_store"), "store non-finite")]
    assert ("tt.assert" in ttgir) == (mode == "abort")


def test_masked_load_poison_sets_nan_other():
    plain = _compile(kernels.window_sum_kernel, kernels.SUM_SIG, {"BLOCK": 1024}).asm["ttir"]
    ttir = _compile(kernels.window_sum_kernel, kernels.SUM_SIG, {"BLOCK": 1024},
                    ("masked_load_poison",)).asm["ttir"]
    assert "0x7FC00000" not in plain
    nan = re.search(r"(%\S+) = arith.constant dense<0x7FC00000> : tensor<1024xf32>", ttir)
    assert nan, ttir
    assert re.search(rf"tt\.load %\S+, %\S+, {re.escape(nan.group(1))} ", ttir), ttir


@pytest.mark.parametrize("mode", ["record", "abort"])
def test_offset_overflow_check_row_offset(mode):
    compiled = _compile(kernels.row_copy_kernel, kernels.ROW_SIG, {"BLOCK": 1024},
                        ("offset_overflow_check",), mode=mode)
    reports = _reports(compiled.asm["ttir"], "offset_overflow_check")
    assert ("row_copy_kernel", _site("row_offset"), "i32 offset overflow lanes") in reports
    assert ("tt.assert" in compiled.asm["ttir"]) == (mode == "abort")
    # The check survives to the LLVM IR (printf of the report, assertfail in abort mode).
    llir = compiled.asm["llir"]
    assert "vprintf" in llir
    assert ("__assertfail" in llir) == (mode == "abort")


def _defs(ir: str) -> dict[str, str]:
    """SSA name (also `%x` for `%x#0`) -> the text of the line that defines it."""
    out: dict[str, str] = {}
    for line in ir.splitlines():
        m = re.match(r"\s*(%[\w.-]+)(?::\d+)? = (.*)", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


@pytest.mark.parametrize("passes", [("nan_inf_check",), ALL], ids=["nan_inf_check", "all"])
def test_dot_check_reads_waited_value_under_store_mask(passes):
    # Issue 7 on the H200: the clean GEMM reported "dot non-finite" for the accumulator lanes
    # outside M x N (undefined, NaN with masked_load_poison, never stored). The dot check must
    # read the result of the warp_group_dot_wait {pendings = 0} after the loop and count only
    # lanes under the store's mask (converted to the accumulator's #mma layout). The ReLU
    # epilogue keeps the dot check (the plain one is covered by the store check).
    ttgir = _matmul(passes, relu=True).asm["ttgir"]
    defs = _defs(ttgir)
    absf = re.findall(r"(%\S+) = math\.absf (%[\w.-]+)(?:#0)? : tensor<128x128xf32, #mma>", ttgir)
    assert len(absf) == 1, absf
    abs_name, checked = absf[0]
    assert defs[checked].startswith("ttng.warp_group_dot_wait") and "pendings = 0" in defs[checked], \
        defs[checked]
    cmp = re.search(rf"(%\S+) = arith\.cmpf ueq, {re.escape(abs_name)},", ttgir)
    assert cmp, "no non-finite compare on the accumulator"
    andi = re.search(rf"= arith\.andi {re.escape(cmp.group(1))}, (%[\w.-]+) : tensor<128x128xi1, #mma>",
                     ttgir)
    assert andi, "the dot check counts lanes that no store writes (no mask)"
    convert = re.match(r"ttg\.convert_layout (%[\w.-]+) : tensor<128x128xi1, #blocked\d*> -> "
                       r"tensor<128x128xi1, #mma>", defs[andi.group(1)])
    assert convert, defs[andi.group(1)]
    store = re.search(r"tt\.store %\S+, %\S+, (%[\w.-]+) :", ttgir)
    assert store and store.group(1) == convert.group(1), "the mask is not the store's"


def _loop_ops(ttgir: str) -> list[str]:
    """Op names in the body of the (only) scf.for, sorted."""
    body = ttgir[ttgir.index("scf.for"):]
    body = body[body.index("\n"):body.index("scf.yield")]
    return sorted(re.findall(r"^\s*(?:%\S+ = )?\"?([a-z_]+\.[a-z_.]+)", body, re.M))


@pytest.mark.parametrize("passes", [("masked_load_poison",), ("offset_overflow_check",), ALL],
                         ids=["masked_load_poison", "offset_overflow_check", "all"])
def test_pipelined_gemm_loop_unchanged(passes):
    # The H200 GEMM ran 80% slower with all sanitizers: a NaN `other` on the dot operands made
    # the pipeliner reload each tile into registers, select, write it back to shared memory and
    # wait for every wgmma. The loop body must stay op-for-op what it is without sanitizers.
    assert _loop_ops(_matmul(passes).asm["ttgir"]) == _loop_ops(_matmul().asm["ttgir"])


def test_offset_check_of_loop_increment_is_hoisted():
    # `b_ptrs += BLOCK_K * stride_bk` is computed in the loop body at ttir; its check goes in
    # front of the loop (every iteration computes the same value).
    ttir = _matmul(("offset_overflow_check",)).asm["ttir"]
    line = next(n for n, text in enumerate(kernels.SOURCE.read_text().splitlines(), 1)
                if "b_ptrs += BLOCK_K * stride_bk" in text)
    site = f"site={kernels.SOURCE}:{line} "
    assert site in ttir, "the loop increment is not checked"
    assert ttir.index(site) < ttir.index("scf.for")


def _attention(passes: tuple[str, ...] = ()) -> Any:
    return _compile(kernels.bench_kernel, kernels.bench_signature("fp16"),
                    {"WORKLOAD": kernels.ATTENTION, "BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64},
                    passes, {"num_stages": 3, "num_warps": 4})


@pytest.mark.parametrize("passes", [("nan_inf_check",), ("masked_load_poison",),
                                    ("offset_overflow_check",), ALL],
                         ids=["nan_inf_check", "masked_load_poison", "offset_overflow_check",
                              "all"])
def test_attention_async_copies_unchanged(passes):
    # `k_ptrs + start_n * stride_n` depends on the loop: its wrapped lanes are carried through
    # the loop and reported after it. A report inside the loop took attention from 6 async
    # copies to 0.
    base = _attention().asm["ttgir"].count(ASYNC_COPY)
    assert base > 0, "attention is not pipelined without sanitizers; the test is moot"
    ttgir = _attention(passes).asm["ttgir"]
    assert ttgir.count(ASYNC_COPY) == base
    body = ttgir[ttgir.index("scf.for"):]
    assert "tt.print" not in body[:body.index("scf.yield")]


def test_bench_spec_cpu_check():
    # What CI runs for the bench spec (triton-ext bench --cpu --quick sanitizers).
    import subprocess
    import os
    repo = Path(__file__).resolve().parents[3]
    proc = subprocess.run([sys.executable, "-m", "triton_ext", "bench", "--cpu", "--quick", "sanitizers"],
                          capture_output=True, text=True, cwd=repo, env=dict(os.environ), timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "15/15 kernel combination(s) ok" in proc.stdout, proc.stdout
