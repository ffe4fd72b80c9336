"""Benchmark spec of the sanitizers: overhead of each, and of all three, versus none.

``triton-ext bench sanitizers`` (GPU) or ``triton-ext bench --cpu sanitizers``. Workloads (issue 7's
targets: under 5% on memory-bound kernels, under 10% on GEMM and attention):

- ``workload=0``: ``scale_kernel`` (out = 1.5 * x, fp16, masked loads and stores), ``size`` elements;
- ``workload=1``: ``matmul_kernel`` (fp16, 128x128x64 tiles, 3 stages), ``size`` = M = N = K;
- ``workload=2``: ``attention_fwd_kernel`` (non-causal, head dim 64), ``size`` = seq, 16k tokens.

All three run through ``kernels.bench_kernel`` (one signature, a constexpr ``WORKLOAD`` picks the
body), because a spec has one signature per dtype.

Each pass variant enables only its own sanitizer (``Variant.passes``); ``all`` enables the three.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import triton

from triton_ext.bench import BenchSpec, Case, Metric, Target, Variant, import_file

kernels = import_file(__file__, "kernels.py")

ALL = ("nan_inf_check", "masked_load_poison", "offset_overflow_check")
ASYNC_COPY = "ttg.async_copy_global_to_local"
VECTOR_BLOCK = 1024
GEMM_BLOCKS = (128, 128, 64)
ATTN_BLOCKS = (128, 64)
HEAD_DIM = 64
TOKENS = 16384  # attention: heads = TOKENS * 2048 / HEAD_DIM / seq (hidden size 2048)

# Variant name -> the sanitizers it enables (``Variant.passes``).
SANITIZERS: dict[str, tuple[str, ...]] = {name: (name,) for name in ALL} | {"all": ALL}


def _workload(case: Case) -> int:
    return case.params["workload"]


def _constexprs(case: Case) -> dict[str, Any]:
    w = _workload(case)
    if w == kernels.VECTOR:
        blocks = (VECTOR_BLOCK, 1, 1)
    elif w == kernels.GEMM:
        blocks = GEMM_BLOCKS
    else:
        blocks = (*ATTN_BLOCKS, HEAD_DIM)
    return {"WORKLOAD": w, **dict(zip(("BLOCK_M", "BLOCK_N", "BLOCK_K"), blocks))}


def _compile_options(case: Case) -> dict[str, Any]:
    return {"num_warps": 4, "num_stages": 3 if _workload(case) != kernels.VECTOR else 2}


def _heads(seq: int) -> int:
    return TOKENS * (2048 // HEAD_DIM) // seq


def _make_inputs(case: Case, device: Any, generator: Any) -> dict[str, Any]:
    import torch

    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[case.dtype]
    size, w = case.params["size"], _workload(case)

    def randn(*shape: int, scale: float = 1.0) -> Any:
        return (torch.randn(shape, device=device, generator=generator) * scale).to(dtype)

    if w == kernels.VECTOR:
        x = randn(size)
        return {"x": x, "out": torch.empty_like(x)}
    if w == kernels.GEMM:
        # Entries of scale K^-1/4, so that each output has about unit variance.
        a, b = randn(size, size, scale=size ** -0.25), randn(size, size, scale=size ** -0.25)
        return {"x": a, "y": b, "out": torch.empty_like(a)}
    q, k, v = (randn(_heads(size), size, HEAD_DIM) for _ in range(3))
    return {"x": q, "y": k, "z": v, "out": torch.empty_like(q)}


def _launch(kernel: Any, t: Mapping[str, Any], case: Case) -> Any:
    size, w = case.params["size"], _workload(case)
    consts, opts = _constexprs(case), _compile_options(case)
    if w == kernels.VECTOR:
        x = t["x"]
        return kernel[(triton.cdiv(size, VECTOR_BLOCK),)](
            x, x, x, t["out"], size, 0, 0, 0, 0, 1.5, **consts, **opts)
    if w == kernels.GEMM:
        a = t["x"]
        grid = (triton.cdiv(size, GEMM_BLOCKS[0]), triton.cdiv(size, GEMM_BLOCKS[1]))
        return kernel[grid](a, t["y"], a, t["out"], size, size, size, size, size, 1.0,
                            **consts, **opts)
    q = t["x"]
    heads = q.shape[0]
    return kernel[(size // ATTN_BLOCKS[0], heads)](
        q, t["y"], t["z"], t["out"], size, 0, 0, q.stride(0), q.stride(1),
        1.0 / math.sqrt(HEAD_DIM), **consts, **opts)


def _attention_heads(case: Case) -> list[int]:
    return sorted({0, _heads(case.params["size"]) - 1})


def _reference(t: Mapping[str, Any], case: Case) -> Any:
    import torch

    w = _workload(case)
    if w == kernels.VECTOR:
        return t["x"].double() * 1.5
    if w == kernels.GEMM:
        return t["x"].double() @ t["y"].double()
    idx = _attention_heads(case)
    q, k, v = (t[n][idx].double() for n in ("x", "y", "z"))
    s = (q @ k.transpose(-1, -2)) / math.sqrt(HEAD_DIM)
    return torch.softmax(s, dim=-1) @ v


def _checked(t: Mapping[str, Any], case: Case) -> Any:
    if _workload(case) == kernels.ATTENTION:
        return t["out"][_attention_heads(case)]
    return t["out"]


def _ir_check(variant: Variant, off: str, on: str) -> str | None:
    """The variant's sanitizers registered their sites in the TTGIR (the site table the host
    reads the records by: `triton_ext.sanitizer_sites`, entries `pass|what|...`), and the
    pipelined loops kept their async copies."""
    names = SANITIZERS.get(variant.name, ())
    for name in ("nan_inf_check", "offset_overflow_check"):
        if name in names and f'"{name}|' not in on:
            return f"no {name} site in the TTGIR"
    if on.count(ASYNC_COPY) != off.count(ASYNC_COPY):
        return f"async copies {off.count(ASYNC_COPY)} -> {on.count(ASYNC_COPY)}"
    return None


def _memory_bound(case: Case) -> bool:
    return _workload(case) == kernels.VECTOR


def _compute_bound(case: Case) -> bool:
    return not _memory_bound(case)


def _targets() -> tuple[Target, ...]:
    out = []
    for name in SANITIZERS:
        out.append(Target(f"{name}: overhead < 5% on the memory-bound kernel", name, "off",
                          1 / 1.05, where=_memory_bound))
        out.append(Target(f"{name}: overhead < 10% on GEMM and attention", name, "off",
                          1 / 1.10, where=_compute_bound))
    return tuple(out)


def _shape(workload: int, size: int) -> dict[str, int]:
    return {"workload": workload, "size": size}


SPEC = BenchSpec(
    name="sanitizers",
    passes=ALL,
    title="sanitizers: overhead on a memory-bound kernel, GEMM and attention",
    variants=(
        Variant("off", kernels.bench_kernel, "baseline"),
        *(Variant(name, kernels.bench_kernel, "pass", passes=names) for name, names in SANITIZERS.items()),
    ),
    shapes=(_shape(kernels.VECTOR, 1 << 24), _shape(kernels.VECTOR, 1 << 27),
            _shape(kernels.GEMM, 2048), _shape(kernels.GEMM, 4096),
            _shape(kernels.ATTENTION, 2048), _shape(kernels.ATTENTION, 8192)),
    quick_shapes=(_shape(kernels.VECTOR, 1 << 24), _shape(kernels.GEMM, 2048),
                  _shape(kernels.ATTENTION, 2048)),
    dtypes=("fp16",),
    signature=kernels.bench_signature,
    constexprs=_constexprs,
    compile_options=_compile_options,
    make_inputs=_make_inputs,
    outputs=("out",),
    launch=_launch,
    reference=_reference,
    checked=_checked,
    # Max abs error against float64: fp16 outputs of unit size (P rounded to fp16 in attention).
    tolerance={"fp16": 2e-2},
    metric=Metric("ms"),
    x_axis="size",
    ir_stage="ttgir",
    ir_check=_ir_check,
    targets=_targets(),
    notes="Overhead = variant time / off time - 1 (a speedup of 0.95x is 5% overhead). "
          "workload 0: out = 1.5 * x, fp16, `size` elements, BLOCK 1024; workload 1: fp16 GEMM "
          "size^3, 128x128x64 tiles, 3 stages, 4 warps; workload 2: non-causal attention forward, "
          f"head dim {HEAD_DIM}, seq = size, heads = {TOKENS} * {2048 // HEAD_DIM} / seq, "
          "128x64 tiles. Each sanitizer variant enables only its own pass; `all` enables the three.",
)
