"""A user's torch.compile script: never imports triton_ext (check_torch_compile.py runs it).

Compiles two small models with Inductor and runs them on inputs holding one NaN/Inf, so every
kernel that carries ``nan_inf_check`` records a finding, printed as one line per site at exit
(stderr; the parent counts them). Prints one JSON line last: what the process saw (whether triton_ext was imported by the
start-up .pth, compile threads, FX graph cache hits and misses, non-finite outputs).
"""

from __future__ import annotations

import json
import sys

import torch
import torch._dynamo.utils
import torch.compiler.config
import torch._inductor.config as inductor_config


def softmax_model(x: torch.Tensor) -> torch.Tensor:
    # A pointwise + reduction Inductor kernel (or two).
    return torch.softmax(x * 2.0 + 1.0, dim=-1)


def gemm_model(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    # With max-autotune and the TRITON GEMM backend: Inductor's Triton mm template.
    return torch.relu(a @ b) + 1.0


def main() -> int:
    torch.manual_seed(0)
    x = torch.randn(64, 1000, device="cuda")
    x[3, 7] = float("inf")
    a = torch.randn(256, 256, device="cuda", dtype=torch.float16)
    b = torch.randn(256, 256, device="cuda", dtype=torch.float16)
    a[5, 9] = float("nan")
    y = torch.compile(softmax_model)(x)
    z = torch.compile(gemm_model, mode="max-autotune-no-cudagraphs")(a, b)
    torch.cuda.synchronize()
    sys.stdout.flush()
    counters = torch._dynamo.utils.counters["inductor"]
    print(json.dumps({
        "triton_ext_in_sys_modules": "triton_ext" in sys.modules,
        "compile_threads": inductor_config.compile_threads,
        "fx_graph_cache": bool(inductor_config.fx_graph_cache),
        "fxgraph_cache_hit": int(counters.get("fxgraph_cache_hit", 0)),
        "fxgraph_cache_miss": int(counters.get("fxgraph_cache_miss", 0)),
        "softmax_nonfinite": int((~torch.isfinite(y)).sum()),
        "gemm_nonfinite": int((~torch.isfinite(z)).sum()),
        "cache_key_tag": getattr(torch.compiler.config, "cache_key_tag", None),
        "torch": torch.__version__,
    }), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
