"""Benchmark spec of grid_swizzle: a GEMM on a naive 2-D grid (``triton-ext bench grid_swizzle``).

``C = A @ B`` in fp16 with fp32 accumulation, ``M = N = K`` from 2048 to 8192, 128x128x64 tiles.
Variants: the kernel as written (``pid_m = program_id(0)``, ``pid_n = program_id(1)``, launched
column of C after column), the same kernel with the pass (grouped order, group size 8), and the
grouped order written by hand on a 1-D grid (the Triton tutorial's way). The IR check requires
the naive kernel swizzled: marked, reading the grid size, each program id read once.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

import triton

from triton_ext.bench import GEMM_TFLOPS, BenchSpec, Case, Target, Variant, gemm_inputs, import_file

kernels = import_file(__file__, "kernels.py")
matmul_grouped_kernel, matmul_naive_kernel = kernels.matmul_grouped_kernel, kernels.matmul_naive_kernel

BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 64
SIZES = (2048, 4096, 6144, 8192)


def _signature(dtype: str) -> dict[str, str]:
    ptr = {"fp16": "*fp16"}[dtype]
    return {"a_ptr": ptr, "b_ptr": ptr, "c_ptr": ptr, "M": "i32", "N": "i32", "K": "i32",
            "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32"}


def _constexprs(case: Case) -> dict[str, Any]:
    return {"BLOCK_M": BLOCK_M, "BLOCK_N": BLOCK_N, "BLOCK_K": BLOCK_K}


def _compile_options(case: Case) -> dict[str, Any]:
    return {"num_warps": 8, "num_stages": 3}


def _make_inputs(case: Case, device: Any, generator: Any) -> dict[str, Any]:
    import torch

    p = case.params
    return gemm_inputs(p["M"], p["N"], p["K"], torch.float16, device, generator)


def _launch(kernel: Any, t: Mapping[str, Any], case: Case) -> Any:
    a, b, c = t["a"], t["b"], t["c"]
    m, k = a.shape
    n = b.shape[1]
    tiles = (triton.cdiv(m, BLOCK_M), triton.cdiv(n, BLOCK_N))
    grid = (tiles[0] * tiles[1],) if kernel is matmul_grouped_kernel else tiles
    return kernel[grid](a, b, c, m, n, k, a.stride(0), b.stride(0), c.stride(0),
                        **_constexprs(case), **_compile_options(case))


def _reference(t: Mapping[str, Any], case: Case) -> Any:
    # The whole C: a tile the new order skipped would stay NaN (outputs are NaN-filled).
    return t["a"].double() @ t["b"].double()


def _checked(t: Mapping[str, Any], case: Case) -> Any:
    return t["c"]


def _ir_check(variant: Variant, off: str, on: str) -> str | None:
    if "tt.get_num_programs" in off:
        return "the naive kernel already reads the grid size"
    if "triton_ext.grid_swizzled" not in on:
        return "the kernel is not marked triton_ext.grid_swizzled"
    for axis in ("x", "y"):
        reads = len(re.findall(rf"tt\.get_program_id {axis}\b", on))
        if reads != 1:
            return f"expected program id {axis} read once (by the swizzle), found {reads}"
        if not re.search(rf"tt\.get_num_programs {axis}\b", on):
            return f"the swizzle does not read the grid size along {axis}"
    return None


def _large(case: Case) -> bool:
    return 4096 <= case.params["M"] <= 8192


SPEC = BenchSpec(
    name="grid_swizzle",
    passes=("grid_swizzle",),
    title="grid_swizzle: fp16 GEMM (M = N = K) on a naive 2-D grid",
    variants=(
        Variant("naive", matmul_naive_kernel, "baseline"),
        Variant("naive+grid_swizzle", matmul_naive_kernel, "pass"),
        Variant("naive+grid_swizzle_g3", matmul_naive_kernel, "pass", options={"group-size": 3}),
        Variant("hand_grouped", matmul_grouped_kernel, "handwritten"),
    ),
    shapes=tuple({"M": s, "N": s, "K": s} for s in SIZES),
    quick_shapes=({"M": 4096, "N": 4096, "K": 4096},),
    # --check: M / BLOCK_M tiles = 15, 23, 3 (short last groups) and N, K off the block sizes.
    check_shapes=({"M": 1920, "N": 2176, "K": 1000}, {"M": 2944, "N": 384, "K": 512},
                  {"M": 300, "N": 4000, "K": 256}, {"M": 4096, "N": 4096, "K": 4096}),
    bit_identical=True,
    dtypes=("fp16",),
    signature=_signature,
    constexprs=_constexprs,
    compile_options=_compile_options,
    make_inputs=_make_inputs,
    outputs=("c",),
    launch=_launch,
    reference=_reference,
    checked=_checked,
    # fp16 output of a unit-variance C: rounding <= 4e-3 below |C| = 8; fp32 accumulation adds
    # far less.
    tolerance={"fp16": 1e-2},
    metric=GEMM_TFLOPS,
    x_axis="M",
    ir_check=_ir_check,
    targets=(
        # GitHub issue 8: +4.5% measured on 4096-8192 GEMMs.
        Target(">= 3% faster at 4096-8192", "naive+grid_swizzle", "naive", 1.03, where=_large),
        Target("within 2% of hand grouped", "naive+grid_swizzle", "hand_grouped", 0.98),
    ),
    notes=f"BLOCK {BLOCK_M}x{BLOCK_N}x{BLOCK_K}, 8 warps, 3 stages, fp16 in and out, fp32 accumulation; "
          "group size 8 in both the pass and the hand-written kernel.",
)
