"""Measure the worked example of docs/overriding-passes.md on CPU (no GPU needed).

    .venv/bin/python docs/examples/overrides/measure.py [--out FILE.json]

Compiles two kernels for sm_90 through cubin, stock and with each override of registry.yaml here
enabled (appended to the repository's registry in a temporary file), and prints what changed:
TTIR/TTGIR size, loads and loops in the TTIR, PTX lines, cubin bytes, and the pass list Triton ran
(``triton-ext pipeline`` records it the same way).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]


def combined_registry() -> Path:
    """The repository's registry with this folder's entries appended (a temporary file)."""
    text = (REPO / "registry.yaml").read_text().rstrip("\n") + "\n"
    extra = "".join(l for l in (HERE / "registry.yaml").read_text().splitlines(True) if not l.startswith("#"))
    fd, path = tempfile.mkstemp(suffix=".yaml", prefix="triton-ext-overrides-")
    with os.fdopen(fd, "w") as f:
        f.write(text + extra)
    return Path(path)


os.environ["TRITON_EXT_REGISTRY"] = str(combined_registry())
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402

import triton_ext  # noqa: E402


@triton.jit
def scaled_rows(x, y, w, n_rows, stride, BLOCK: tl.constexpr):
    # Sums n_rows rows of x, each scaled by w[col]; the loop asks for 4x unrolling.
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for r in tl.range(0, n_rows, loop_unroll_factor=4):
        acc += tl.load(x + r * stride + cols) * tl.load(w + cols)
    tl.store(y + cols, acc)


@triton.jit
def gemm(a, b, c, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    rn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        x = tl.load(a + rm[:, None] * K + (k * BLOCK_K + rk)[None, :])
        y = tl.load(b + (k * BLOCK_K + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(x, y, acc)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


KERNELS = {
    "scaled_rows": (scaled_rows, {"x": "*fp32", "y": "*fp32", "w": "*fp32", "n_rows": "i32", "stride": "i32"},
                    {"BLOCK": 256}),
    "gemm": (gemm, {"a": "*fp16", "b": "*fp16", "c": "*fp16", "M": "i32", "N": "i32", "K": "i32"},
             {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}),
}
VARIANTS = {"stock": (), "skip_loop_unroll": ("skip_loop_unroll",), "skip_licm": ("skip_licm",)}


def measure(kernel: Any) -> dict[str, Any]:
    ttir, ttgir = kernel.asm["ttir"], kernel.asm["ttgir"]
    return {"ttir_bytes": len(ttir), "ttir_loads": ttir.count("tt.load"), "ttir_loops": ttir.count("scf.for"),
            "ttgir_bytes": len(ttgir), "ptx_lines": kernel.asm["ptx"].count("\n"), "cubin_bytes": len(kernel.asm["cubin"]),
            "registers": kernel.n_regs if hasattr(kernel, "n_regs") else None}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    triton.knobs.compilation.always_compile = True
    target = GPUTarget("cuda", 90, 32)
    results: dict[str, Any] = {}
    for name, (fn, signature, constexprs) in KERNELS.items():
        source = triton.compiler.ASTSource(fn, {**signature, **{k: "constexpr" for k in constexprs}}, constexprs)
        results[name] = {}
        for variant, names in VARIANTS.items():
            if names:
                with triton_ext.enabled(*names):
                    results[name][variant] = measure(triton.compile(source, target=target))
            else:
                results[name][variant] = measure(triton.compile(source, target=target))
    for name, rows in results.items():
        print(name)
        for variant, row in rows.items():
            print(f"  {variant:18} " + "  ".join(f"{k}={v}" for k, v in row.items() if v is not None))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
