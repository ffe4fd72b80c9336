"""End-to-end CPU test of unroll_dot_loops: a real GEMM tile loop compiled through cubin for sm_90.

The pass runs where registry.yaml places it (in make_ttir, before Triton's loop_unroll) through the
triton_ext stages hook; the checks read the TTIR and TTGIR the wheel produced: the dot loop is
versioned, Triton unrolled the guarded copy (a main loop of two dots stepping two k-blocks, and a
remainder loop it leaves unpipelined), the original loop stayed as it was, and the pipeliner still
pipelined the unrolled loop. The bounds guard's exact admitted range is tested by the
interpreter (tests/differential/test_unroll_dot_loops_differential.py) and on a GPU by
``triton-ext bench --check unroll_dot_loops``.
"""

from __future__ import annotations

import re

import pytest

import triton
import triton_ext
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton_ext.testing import import_file, require_built, run_plugin_pass

kernels = import_file(__file__, "../kernels.py")
require_built("unroll_dot_loops")  # an unbuilt plugin fails, never skips
pytestmark = pytest.mark.usefixtures("fresh_cache")  # compile from scratch: the IR read back is this run's

HOPPER = GPUTarget("cuda", 90, 32)
MI300 = GPUTarget("hip", "gfx942", 64)
GEMM = {**{name: "*fp16" for name in ("a_ptr", "b_ptr", "c_ptr")},
        **{name: "i32" for name in ("M", "N", "K", "k_start", "k_end", "stride_am", "stride_bk", "stride_cm")}}
ALIGNED = ("M", "N", "K", "stride_am", "stride_bk", "stride_cm")


def _compile(kernel, signature: dict[str, str], constexprs: dict[str, int], enabled: bool,
             target: GPUTarget = HOPPER, **options):
    # As the JIT specializes torch tensors and 16-multiple sizes: the pipeliner skips loads of less
    # than 32 bits per thread, which unaligned fp16 loads are.
    names = list(signature)
    aligned = [i for i, n in enumerate(names) if signature[n].startswith("*") or n in ALIGNED]
    source = ASTSource(kernel, {**signature, **{k: "constexpr" for k in constexprs}}, constexprs=constexprs,
                       attrs={(i,): [["tt.divisibility", 16]] for i in aligned})
    compile_options = {"num_warps": 8, "num_stages": 3} if target is HOPPER else {}
    if not enabled:
        return triton.compile(source, target=target, options=compile_options)
    with triton_ext.enabled("unroll_dot_loops", **options):
        return triton.compile(source, target=target, options=compile_options)


def _gemm(enabled: bool, target: GPUTarget = HOPPER, **options):
    return _compile(kernels.matmul_kernel, GEMM, {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, enabled,
                    target, **options)


def _loops(ttir: str) -> list[str]:
    """Each scf.for of the TTIR, from its line to its closing line (its attributes)."""
    lines = ttir.splitlines()
    out = []
    for i, line in enumerate(lines):
        if " scf.for " in line:
            indent = len(line) - len(line.lstrip())
            end = next(j for j in range(i + 1, len(lines))
                       if lines[j].lstrip().startswith("}") and len(lines[j]) - len(lines[j].lstrip()) == indent)
            out.append("\n".join(lines[i:end + 1]))
    return out


def test_the_dot_loop_is_versioned_and_triton_unrolls_the_guarded_copy():
    on, off = _gemm(True), _gemm(False)
    assert "scf.if" in on.asm["ttir"] and "scf.if" not in off.asm["ttir"]
    loops = _loops(on.asm["ttir"])
    assert [loop.count("tt.dot ") for loop in loops] == [2, 1, 1], loops
    main, remainder, original = loops
    # Triton's loop_unroll consumed the pass's attribute: the main loop steps two k-blocks and
    # carries no attribute, the remainder is left unpipelined, the original is marked decided.
    assert "tt.loop_unroll_factor" not in main and "tt.num_stages" not in main.splitlines()[-1]
    assert "{tt.num_stages = 1 : i32}" in remainder.splitlines()[-1]
    assert "{tt.loop_unroll_factor = 1 : i32}" in original.splitlines()[-1]
    assert _loops(off.asm["ttir"])[0].count("tt.dot ") == 1
    assert on.asm["cubin"] and off.asm["cubin"]


def test_the_unrolled_loop_is_still_software_pipelined():
    # sm_90 dots read shared memory: the pipeliner's async copies fill it. The unrolled main loop
    # prefetches both of its k-blocks (twice the stock loop's copies), the original loop its own.
    on, off = _gemm(True), _gemm(False)
    copies = lambda ir: ir.count("ttg.async_copy_global_to_local")  # noqa: E731
    assert copies(off.asm["ttgir"]) > 0
    assert copies(on.asm["ttgir"]) >= 3 * copies(off.asm["ttgir"])
    assert "cp.async" in on.asm["ptx"]


def test_the_factor_option_sets_the_copies():
    loops = _loops(_gemm(True, factor=4).asm["ttir"])
    assert [loop.count("tt.dot ") for loop in loops] == [4, 1, 1]


def test_a_loop_without_a_dot_is_left_alone():
    signature, constexprs = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 1024}
    on = _compile(kernels.row_sum_kernel, signature, constexprs, True)
    off = _compile(kernels.row_sum_kernel, signature, constexprs, False)
    strip = lambda ir: re.sub(r"\s*loc\((?:[^()]|\([^()]*\))*\)", "", ir)  # noqa: E731
    assert strip(on.asm["ttir"]) == strip(off.asm["ttir"])


def test_amd_unrolls_the_guarded_copy_too():
    # registry.yaml lists hip: AMD's make_ttir ends with the same loop_unroll.
    loops = _loops(_gemm(True, target=MI300).asm["ttir"])
    assert [loop.count("tt.dot ") for loop in loops] == [2, 1, 1], loops


@pytest.mark.parametrize("factor", [1, 0, 9])
def test_a_factor_outside_2_to_8_reaching_the_pass_is_an_error(factor, capfd):
    # Handed to the plugin directly (not through triton_ext, which checks the declared range first),
    # the pass still refuses it with a diagnostic instead of unrolling by it.
    triton_ext.load_extension("unroll_dot_loops")
    with pytest.raises(RuntimeError):
        run_plugin_pass(_gemm(False).asm["ttir"], "unroll_dot_loops", [f"factor={factor}"])
    assert f"factor must be in [2, 8], got {factor}" in capfd.readouterr().err
