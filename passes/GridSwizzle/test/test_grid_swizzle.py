"""End-to-end CPU test of grid_swizzle: real kernels compiled through cubin for sm_90.

The pass runs where registry.yaml places it (end of make_ttir) through the triton_ext stages hook.
The checks read the TTIR and PTX the wheel's backend produced, and evaluate the integer ops the
pass put at the top of the kernel on many grid sizes: the new program coordinates must be a
permutation of the grid, in the grouped order.
"""

from __future__ import annotations

import re
from typing import Callable

import pytest

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

import triton_ext
from triton_ext.testing import import_file, require_built, run_plugin_pass

kernels = import_file(__file__, "../kernels.py")
require_built("grid_swizzle")  # an unbuilt plugin fails, never skips
pytestmark = pytest.mark.usefixtures("fresh_cache")  # compile from scratch: the IR read back is this run's


HOPPER = GPUTarget("cuda", 90, 32)
MI300 = GPUTarget("hip", "gfx942", 64)
GEMM_SIGNATURE = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
                  "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32"}
GEMM_CONSTEXPRS = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}
SOURCES = {
    "naive": (kernels.matmul_naive_kernel, GEMM_SIGNATURE, GEMM_CONSTEXPRS),
    "hand_grouped": (kernels.matmul_grouped_kernel, GEMM_SIGNATURE, GEMM_CONSTEXPRS),
    "split_k": (kernels.matmul_split_k_kernel, {**GEMM_SIGNATURE, "c_ptr": "*fp32"}, GEMM_CONSTEXPRS),
    "self_mapped": (kernels.matmul_self_mapped_kernel, GEMM_SIGNATURE, GEMM_CONSTEXPRS),
    "add_2d": (kernels.add_2d_kernel,
               {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n_cols": "i32", "stride": "i32"},
               {"BLOCK": 1024}),
}
GRIDS = [(1, 1), (1, 9), (7, 1), (8, 8), (13, 7), (16, 5), (17, 3), (64, 64), (3, 100), (100, 3)]



def _compile(name: str, enabled: bool, target: GPUTarget = HOPPER, **options):
    fn, signature, constexprs = SOURCES[name]
    source = ASTSource(fn, signature={**signature, **{k: "constexpr" for k in constexprs}}, constexprs=constexprs)
    opts = {"num_warps": 8, "num_stages": 3} if target is HOPPER else {}
    if not enabled:
        return triton.compile(source, target=target, options=opts)
    with triton_ext.enabled("grid_swizzle", **options):
        return triton.compile(source, target=target, options=opts)


def _strip(ir: str) -> str:
    return re.sub(r"\s*loc\((?:[^()]|\([^()]*\))*\)", "", ir)


def _body(ir: str) -> str:
    return "\n".join(line for line in _strip(ir).splitlines()
                     if "module attributes" not in line and not line.startswith("#loc"))


_SCALAR = re.compile(r"^\s*(%\S+) = (tt\.get_program_id|tt\.get_num_programs|arith\.\w+) (.*?) : (i32|i64)(?: to (i32|i64))?$")


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


BINARY: dict[str, Callable[[int, int], int]] = {
    "arith.muli": lambda a, b: a * b, "arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b,
    "arith.minsi": min, "arith.divsi": _trunc_div,
    "arith.remsi": lambda a, b: a - _trunc_div(a, b) * b,
}


def _evaluate_prelude(ttir: str, px: int, py: int, nx: int, ny: int) -> dict[str, int]:
    """Values of the scalar i32/i64 ops at the top of the kernel for one program of an nx x ny grid
    (each result checked against its type's range: the math must not wrap)."""
    lines = _strip(ttir).splitlines()
    start = next(i for i, line in enumerate(lines) if "tt.func public" in line) + 1
    env: dict[str, int] = {}
    for line in lines[start:]:
        m = _SCALAR.match(line)
        if not m:
            break
        name, op, rest, width, to = m.groups()
        bits = int((to or width)[1:])
        if op == "tt.get_program_id":
            env[name] = {"x": px, "y": py, "z": 0}[rest]
        elif op == "tt.get_num_programs":
            env[name] = {"x": nx, "y": ny, "z": 1}[rest]
        elif op == "arith.constant":
            env[name] = int(rest)
        elif op == "arith.extsi":
            env[name] = env[rest.strip()]
        elif op == "arith.trunci":
            env[name] = env[rest.strip()]
            assert -(1 << 31) <= env[name] < (1 << 31), f"{line}: truncation changes the value"
        elif op in BINARY:
            lhs, rhs = (env[v.strip()] for v in rest.split(","))
            env[name] = BINARY[op](lhs, rhs)
            assert -(1 << (bits - 1)) <= env[name] < (1 << (bits - 1)), f"{line}: i{bits} overflow"
        else:
            break
    return env


def _grouped(px: int, py: int, nx: int, ny: int, group: int) -> tuple[int, int]:
    # The Triton tutorial's grouped order on the launch index L = py * nx + px.
    lin, per = py * nx + px, group * ny
    first = lin // per * group
    size = min(nx - first, group)
    return first + lin % per % size, lin % per // size


def _tile_coords(ttir: str) -> tuple[str, str]:
    """The values the naive GEMM now multiplies by BLOCK_M and BLOCK_N (its tile coordinates)."""
    body = _strip(ttir)
    rm = re.search(r"%rm = arith\.muli (%\S+), %c128_i32", body)
    rn = re.search(r"%rn = arith\.muli (%\S+), %c128_i32", body)
    assert rm and rn, body[:3000]
    return rm.group(1), rn.group(1)


def _check_swizzle(ttir: str, group: int) -> None:
    new_x, new_y = _tile_coords(ttir)
    for nx, ny in GRIDS:
        seen = set()
        for py in range(ny):
            for px in range(nx):
                env = _evaluate_prelude(ttir, px, py, nx, ny)
                got = (env[new_x], env[new_y])
                assert got == _grouped(px, py, nx, ny, group), (nx, ny, px, py, got)
                seen.add(got)
        assert seen == {(x, y) for x in range(nx) for y in range(ny)}, (nx, ny)  # every tile once


def test_naive_gemm_swizzled():
    on = _compile("naive", enabled=True)
    ttir = on.asm["ttir"]
    assert "triton_ext.grid_swizzled" in ttir
    # One read of each program id and of each grid size: the swizzle's, at the top.
    for axis in ("x", "y"):
        assert len(re.findall(rf"tt\.get_program_id {axis}\b", ttir)) == 1
        assert len(re.findall(rf"tt\.get_num_programs {axis}\b", ttir)) == 1
    _check_swizzle(ttir, group=8)
    ptx = on.asm["ptx"]
    assert "%nctaid.x" in ptx and "%nctaid.y" in ptx
    assert "wgmma" in ptx  # still the Hopper GEMM
    assert on.asm["cubin"]


@pytest.mark.parametrize("nx, ny", [((1 << 31) - 1, 2), ((1 << 31) - 1, 65535), (1 << 16, 1 << 15), (3, 65535)])
def test_grids_of_2_31_programs_and_more(nx, ny):
    # A legal launch can hold 2^31 programs or more; the launch index must not wrap (it did in i32:
    # grid (2^31 - 1, 2) sent program (6567516, 1) to tile x = -1070458069).
    ttir = _compile("naive", enabled=True).asm["ttir"]
    new_x, new_y = _tile_coords(ttir)
    for px, py in [(0, 0), (nx - 1, ny - 1), (6567516 % nx, 1 % ny), (nx // 2, ny - 1), (nx - 1, 0)]:
        env = _evaluate_prelude(ttir, px, py, nx, ny)
        got = (env[new_x], env[new_y])
        assert got == _grouped(px, py, nx, ny, 8), (nx, ny, px, py, got)
        assert 0 <= got[0] < nx and 0 <= got[1] < ny


def test_without_the_pass_program_ids_untouched():
    off = _compile("naive", enabled=False)
    assert "grid_swizzled" not in off.asm["ttir"]
    assert "tt.get_num_programs" not in off.asm["ttir"]
    assert "%nctaid" not in off.asm["ptx"]
    # The tiles are indexed by the program ids themselves.
    x, y = _tile_coords(off.asm["ttir"])
    body = _strip(off.asm["ttir"])
    assert f"{x} = tt.get_program_id x : i32" in body and f"{y} = tt.get_program_id y : i32" in body


@pytest.mark.parametrize("group", [2, 4, 16])
def test_group_size_option(group):
    ttir = _compile("naive", enabled=True, group_size=group).asm["ttir"]
    assert f"arith.constant {group} : i64" in _strip(ttir)
    _check_swizzle(ttir, group=group)


@pytest.mark.parametrize("group", [1, 0, -3])
def test_bad_group_size_is_refused_at_enable(group):
    # Passes.td declares it a MinOption of 2: triton_ext refuses the value before anything compiles.
    with pytest.raises(triton_ext.OptionError, match=f"option group-size: expected an int >= 2, found {group}"):
        _compile("naive", enabled=True, group_size=group)
    assert triton_ext.enabled_passes() == {}


@pytest.mark.parametrize("group", [1, 0, -3])
def test_bad_group_size_reaching_the_pass_is_an_error(group, capfd):
    # Handed to the plugin directly (not through triton_ext), the pass still refuses it with a
    # diagnostic and leaves the kernel alone.
    triton_ext.load_extension("grid_swizzle")
    with pytest.raises(RuntimeError):
        run_plugin_pass(_compile("naive", enabled=False).asm["ttir"], "grid_swizzle", [f"group-size={group}"])
    assert f"group-size must be at least 2, got {group}" in capfd.readouterr().err


def test_target_neutral_on_hip():
    ttir = _compile("naive", enabled=True, target=MI300).asm["ttir"]
    assert "triton_ext.grid_swizzled" in ttir
    _check_swizzle(ttir, group=8)


@pytest.mark.parametrize("name", ["hand_grouped", "split_k", "self_mapped", "add_2d"])
def test_declined_kernels_unchanged(name):
    # 1-D grid (groups itself), atomics (order may matter), reads num_programs (maps itself),
    # no dot (nothing shared).
    on, off = _compile(name, enabled=True), _compile(name, enabled=False)
    assert "grid_swizzled" not in on.asm["ttir"]
    assert _body(on.asm["ttir"]) == _body(off.asm["ttir"])
    assert on.asm["cubin"]


def test_bench_spec_cpu_check():
    # What `triton-ext bench --cpu grid_swizzle` runs: every variant compiles through cubin and
    # the pass variant's TTIR is swizzled.
    from pathlib import Path

    from triton_ext import bench as _bench

    spec = _bench.load_spec(Path(__file__).resolve().parents[1] / "bench.py")
    checks = _bench.check_cpu(spec, log=lambda s: None)
    assert [(c.variant, c.ok, c.problem) for c in checks] == [
        ("naive", True, None), ("naive+grid_swizzle", True, None), ("naive+grid_swizzle_g3", True, None),
        ("hand_grouped", True, None)]
