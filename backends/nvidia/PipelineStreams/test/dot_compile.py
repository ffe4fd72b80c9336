"""What the dot-loop tests of nvidia_pipeline_dots and nvidia_pipeline_deeper share: compiling
kernels.py's dot loop for sm_90 through cubin with or without one pass, and reading the stages back."""

from __future__ import annotations

import re
from typing import Any

from triton.backends.compiler import GPUTarget
from triton_ext.testing import compile_through_cubin, import_file

kernels = import_file(__file__, "../kernels.py")

HOPPER = GPUTarget("cuda", 90, 32)
AMPERE = GPUTarget("cuda", 80, 32)
ASYNC_COPY = "ttg.async_copy_global_to_local"
DOT_SIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "n_tiles": "i32"}
#: 16-byte aligned pointers, as the JIT specializes torch tensors: the pipeliner skips loads of
#: less than 32 bits per thread, which unaligned fp16 loads are.
ALIGNED = {(i,): [["tt.divisibility", 16]] for i in range(3)}


def compile_dot_loop(pass_name: str, enabled: bool, kernel_stages: int, fn: Any = None,
                     target: GPUTarget = HOPPER, **options: Any) -> Any:
    """``kernel_stages``: Triton's num_stages for the kernel; ``fn``: kernels.dot_loop_kernel unless
    given; ``options``: the pass's (``extra_stages=2`` is its ``extra-stages``)."""
    return compile_through_cubin(fn or kernels.dot_loop_kernel, DOT_SIG, {"TILE": 64}, target=target,
                                 attrs=ALIGNED, options={"num_stages": kernel_stages},
                                 pass_options={k.replace("_", "-"): v for k, v in options.items()},
                                 passes=[pass_name] if enabled else [])


def body(ir: str) -> str:
    """The IR without its module attributes (which name the plugins the compile loaded)."""
    return "\n".join(line for line in ir.splitlines() if "module attributes" not in line)


def stages(ir: str) -> list[str]:
    """Every ``tt.num_stages`` the IR's loops carry."""
    return re.findall(r"tt\.num_stages = (\d+)", ir)
