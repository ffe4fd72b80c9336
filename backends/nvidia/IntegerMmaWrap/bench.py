"""Benchmark spec of nvidia_integer_mma_wrap: an int8 GEMM (``triton-ext bench nvidia_integer_mma_wrap``).

The pass changes no instruction's speed (it drops a qualifier); what it buys is the right to run an
int8 GEMM at fewer warps where Triton switches from wgmma to mma.sync, as the transparent mode does
(``joins: [num_warps]``). So the table shows the kernel at 2 and 4 warps with and without the pass,
on inputs whose sums fit int32 (every variant then equals the exact product), and the spec's own
check (:func:`overflow_check`, also run by the GPU test) feeds sums that leave int32: the 4-warp
kernel and the 2-warp kernel with the pass must both equal the product modulo 2^32, and the 2-warp
kernel without it must not (else the inputs did not overflow and the check proves nothing).
"""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping

import triton

import triton_ext
from triton_ext.bench import BenchSpec, Case, Metric, Target, Variant, import_file

int8_gemm = import_file(__file__, "kernels.py").int8_gemm

BLOCK = {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64}


def _signature(dtype: str) -> dict[str, str]:
    return {"a_ptr": "*i8", "b_ptr": "*i8", "c_ptr": "*i32", "M": "i32", "N": "i32", "K": "i32"}


def _constexprs(case: Case) -> dict[str, Any]:
    return dict(BLOCK)


def _compile_options(case: Case) -> dict[str, Any]:
    return {"num_warps": case.params["warps"]}


def _make_inputs(case: Case, device: Any, generator: Any) -> dict[str, Any]:
    import torch

    m, n, k = case.params["m"], case.params["n"], case.params["k"]
    a = torch.randint(-128, 128, (m, k), device=device, dtype=torch.int8, generator=generator)
    b = torch.randint(-128, 128, (k, n), device=device, dtype=torch.int8, generator=generator)
    return {"a": a, "b": b, "c": torch.empty(m, n, device=device, dtype=torch.int32)}


def _launch(kernel: Any, t: Mapping[str, Any], case: Case, num_warps: int | None = None) -> Any:
    a, b, c = t["a"], t["b"], t["c"]
    m, k = a.shape
    n = b.shape[1]
    grid = (triton.cdiv(m, BLOCK["BLOCK_M"]), triton.cdiv(n, BLOCK["BLOCK_N"]))
    return kernel[grid](a, b, c, m, n, k, **BLOCK, num_warps=num_warps or case.params["warps"])


def wrapped_product(a: Any, b: Any) -> Any:
    """``a @ b`` summed exactly in int64 (on the CPU: CUDA has no int64 matmul), then taken modulo 2^32
    into int32's range, as a wrapping int32 accumulator holds it."""
    import torch

    exact = a.cpu().to(torch.int64) @ b.cpu().to(torch.int64)
    return (((exact + 2**31) % 2**32) - 2**31).to(a.device)


def _reference(t: Mapping[str, Any], case: Case) -> Any:
    import torch

    return wrapped_product(t["a"], t["b"]).to(torch.float64)


def _checked(t: Mapping[str, Any], case: Case) -> Any:
    return t["c"]


def _ir_check(variant: Variant, off: str, on: str) -> str | None:
    if ".satfinite.s32" in on:
        return "an integer MMA still saturates"
    if ".satfinite.s32" not in off and on != off:
        return "the pass changed a kernel with no saturating integer MMA"
    return None


def _ops(case: Case) -> float:
    return 2.0 * case.params["m"] * case.params["n"] * case.params["k"]


def overflow_check(log: Callable[[str], None]) -> Mapping[str, Any]:
    """Sums that leave int32: 127 * b over K = 2^18 with b in [64, 127] on half the columns (about 3.2e9,
    past int32's 2.1e9: every such sum overflows) and in [-128, 127] on the others (none does). The 4-warp kernel (wgmma) and the
    2-warp kernel with the pass must equal the product modulo 2^32 bit for bit; the 2-warp kernel
    without it must differ (it saturates), or the inputs overflowed nothing."""
    import torch

    m, n, k = 64, 256, 2**18
    gen = torch.Generator(device="cuda").manual_seed(0x1A7)
    a = torch.full((m, k), 127, device="cuda", dtype=torch.int8)
    b = torch.randint(-128, 128, (k, n), device="cuda", dtype=torch.int8, generator=gen)
    b[:, : n // 2] = torch.randint(64, 128, (k, n // 2), device="cuda", dtype=torch.int8, generator=gen)
    expected = wrapped_product(a, b)
    rows = {}
    for label, warps, wrap in (("4 warps", 4, False), ("2 warps", 2, False), ("2 warps + pass", 2, True),
                               ("8 warps + pass", 8, True)):
        t = {"a": a, "b": b, "c": torch.full((m, n), -1, device="cuda", dtype=torch.int32)}
        if wrap:
            with triton_ext.enabled("nvidia_integer_mma_wrap"):
                kernel = _launch(int8_gemm, t, Case("int8", {}), warps)
        else:
            kernel = _launch(int8_gemm, t, Case("int8", {}), warps)
        torch.cuda.synchronize()
        mma = sorted(set(re.findall(r"(?:wgmma\.mma_async|mma\.sync)[\w.]*", kernel.asm["ptx"])))
        rows[label] = {"warps": warps, "pass": wrap, "mma": mma,
                       "elements_off": int((t["c"] != expected).sum().item()), "elements": m * n}
        log(f"{label}: {rows[label]['elements_off']} of {m * n} elements differ from the product modulo 2^32 ({mma})")
    ok = (rows["4 warps"]["elements_off"] == 0 and rows["2 warps + pass"]["elements_off"] == 0
          and rows["8 warps + pass"]["elements_off"] == 0 and rows["2 warps"]["elements_off"] > 0)
    return {"ok": ok, "m": m, "n": n, "k": k, "rows": rows}


SPEC = BenchSpec(
    name="nvidia_integer_mma_wrap",
    passes=("nvidia_integer_mma_wrap",),
    title="nvidia_integer_mma_wrap: int8 GEMM at 2 and 4 warps",
    variants=(
        Variant("int8_gemm", int8_gemm, "baseline"),
        Variant("int8_gemm+wrap", int8_gemm, "pass"),
    ),
    shapes=tuple({"m": s, "n": s, "k": s, "warps": w} for w in (2, 4) for s in (1024, 2048, 4096)),
    quick_shapes=({"m": 1024, "n": 1024, "k": 1024, "warps": 2},),
    bit_identical=True,
    dtypes=("int8",),
    signature=_signature,
    constexprs=_constexprs,
    compile_options=_compile_options,
    make_inputs=_make_inputs,
    outputs=("c",),
    launch=_launch,
    reference=_reference,
    checked=_checked,
    tolerance={"int8": 0.0},
    metric=Metric("TFLOP/s", _ops, "2 * m * n * k / time (int8 ops)"),
    x_axis="m",
    ir_stage="llir",
    ir_check=_ir_check,
    targets=(
        Target("at equal warps the pass costs nothing (beyond the run-to-run spread)", "int8_gemm+wrap", "int8_gemm",
               1.0, allow_spread=True),
    ),
    check=overflow_check,
    notes="int8 x int8 -> int32, row-major, 64x128x64 tiles, num_warps 2 (mma.sync) and 4 (wgmma), M = N = K.",
)
