"""A user script that never imports triton_ext: compiles a loop kernel through cubin (cuda:90).

Prints one JSON line: how many ``scf.for`` loops the kernel's TTIR has, whether triton_ext was
imported by the time the script ran (only the start-up .pth can have done it), and the same
for a ``multiprocessing`` spawn child when ``--spawn`` is given. Used by test_startup_hook.py.
"""

from __future__ import annotations

import json
import multiprocessing
import sys
import tempfile

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def prefix_loop(x_ptr, out_ptr, n, split, BLOCK: tl.constexpr):
    # The condition flips at `split`: loop_split cuts the loop there (scalar form).
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(0, n):
        x = tl.load(x_ptr + i * BLOCK + offs)
        if i < split:
            acc += x
        else:
            acc -= x
    tl.store(out_ptr + offs, acc)


def observe() -> dict[str, object]:
    triton.knobs.cache.dir = tempfile.mkdtemp(prefix="startup-hook-cache-")
    src = ASTSource(prefix_loop, signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32",
                                            "split": "i32", "BLOCK": "constexpr"},
                    constexprs={"BLOCK": 128})
    compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32))
    return {"loops": compiled.asm["ttir"].count("scf.for"), "cubin": bool(compiled.asm.get("cubin")),
            "triton_ext_imported": "triton_ext" in sys.modules}


def _child(queue: "multiprocessing.Queue[dict[str, object]]") -> None:
    queue.put(observe())


if __name__ == "__main__":
    result: dict[str, object] = {"parent": observe()}
    if "--spawn" in sys.argv:
        ctx = multiprocessing.get_context("spawn")
        queue = ctx.Queue()
        proc = ctx.Process(target=_child, args=(queue,))
        proc.start()
        result["child"] = queue.get(timeout=300)
        proc.join(60)
    print(json.dumps(result))
