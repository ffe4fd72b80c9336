"""End-to-end tests of triton_ext_onchip: real kernels compiled through cubin on CPU with the
stock triton wheel (target cuda:90), the dialect and builder plugins loaded through triton_ext.
The IR each op produces is checked in the ttgir Triton hands to its LLVM lowering, and the
GEMM's synchronisation in its PTX."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton.compiler.errors import CompilationError

from triton_ext.testing import import_file, require_built

require_built("onchip_ir", "onchip")  # an unbuilt plugin fails, never skips
# The package as its wheel installs it (import name triton_ext_onchip), from this folder.
oc = import_file(__file__, "../triton_ext_onchip", name="triton_ext_onchip")
kernels = import_file(__file__, "../kernels.py", name="triton_ext_onchip_kernels")
_ptxas = import_file(__file__, "../triton_ext_onchip/ptxas.py", name="triton_ext_onchip.ptxas")
wgmma_serialization, ptxas_report = _ptxas.wgmma_serialization, _ptxas.ptxas_report

TARGET = GPUTarget("cuda", 90, 32)


@pytest.fixture(autouse=True)
def fresh_triton_cache(fresh_cache: Path) -> None:
    """Compile for real in every test: a cached kernel would skip the stages under test."""
    oc.load()  # every test starts from a clean triton_ext state (root conftest)


def compile_kernel(fn, signature: dict[str, str], constexprs: dict[str, object] | None = None,
                   num_warps: int = 4):
    # Pointers and ints divisible by 16, as the JIT specializes them at launch for aligned
    # tensors and sizes (cp.async needs pieces of >= 4 bytes, see README.md).
    attrs = {(i, ): [["tt.divisibility", 16]] for i, t in enumerate(signature.values()) if t != "constexpr"}
    src = ASTSource(fn, signature=signature, constexprs=constexprs or {}, attrs=attrs)
    return triton.compile(src, target=TARGET, options={"num_warps": num_warps})


def body(ttgir: str) -> str:
    """The ttgir without location info."""
    return "\n".join(re.sub(r" loc\(.*?\)$", "", line) for line in ttgir.splitlines() if not line.startswith("#loc"))


# ----------------------------------------------------------------------------------------------
# 1. Buffers


@triton.jit
def roundtrip(X, Y, BM: tl.constexpr, BN: tl.constexpr):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    ring = oc.alloc(tl.float16, [BM, BN], count=2)
    buf = oc.index(ring, 1)
    oc.write(buf, tl.load(X + offs))
    tl.store(Y + offs, oc.read(buf) * 2)


def test_buffers_lower_to_local_alloc_index_store_load() -> None:
    k = compile_kernel(roundtrip, {"X": "*fp16", "Y": "*fp16"}, {"BM": 64, "BN": 64})
    ir = body(k.asm["ttgir"])
    assert "triton_ext_onchip" not in ir
    assert re.search(r"ttg.local_alloc : \(\) -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>", ir)
    assert re.search(r"#shared = #ttg.nvmma_shared<\{swizzlingByteWidth = 128", ir)
    assert re.search(r"ttg.memdesc_index %\w+\[%c1_i32\] : !ttg.memdesc<2x64x64xf16.*-> "
                     r"!ttg.memdesc<64x64xf16", ir)
    store = ir.index("ttg.local_store")
    load = ir.index("ttg.local_load")
    assert store < load  # program order kept: written, then read
    assert "tt.store" in ir and ir.count("tt.store") == 1  # only the user's store to Y is left
    assert k.metadata.shared >= 2 * 64 * 64 * 2
    assert k.asm["cubin"]


# ----------------------------------------------------------------------------------------------
# 2. Asynchronous copies and mbarriers


@triton.jit
def copies(X, Y, n, BM: tl.constexpr, BN: tl.constexpr):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    ring = oc.alloc(tl.float16, [BM, BN], count=2)
    bars = oc.barriers(2, arrivals=128)
    oc.copy_async(oc.index(ring, 0), X + offs, mask=offs < n, other=0.0)
    oc.commit()
    oc.copy_async(oc.index(ring, 1), X + BM * BN + offs)
    oc.commit()
    oc.wait_copies(1)
    bar = oc.index(bars, 1)
    oc.expect(bar, 256)
    oc.arrive(bar, count=2, pred=n > 0)
    oc.wait(bar, 0)
    tl.store(Y + offs, oc.read(oc.index(ring, 0)))


def test_copies_and_barriers_lower_to_triton_ops() -> None:
    k = compile_kernel(copies, {"X": "*fp16", "Y": "*fp16", "n": "i32"}, {"BM": 64, "BN": 64})
    ir = body(k.asm["ttgir"])
    assert "triton_ext_onchip." not in ir.replace("triton_ext_onchip.pending", "")
    copies_ = re.findall(r"ttg.async_copy_global_to_local .*", ir)
    assert len(copies_) == 2
    assert "mask" in copies_[0] and "other" in copies_[0] and "mask" not in copies_[1]
    assert ir.count("ttg.async_commit_group") == 2
    assert re.search(r"ttg.async_wait \{num = 1 : i32", ir)  # the author's count, not Triton's
    assert len(re.findall(r"ttng.init_barrier %\w+, 128", ir)) == 2
    assert re.search(r"ttng.barrier_expect %\w+, 256", ir)
    assert re.search(r"ttng.arrive_barrier %\w+, 2, %\w+", ir)
    assert re.search(r"ttng.wait_barrier %\w+, %c0_i32", ir)
    ptx = k.asm["ptx"]
    assert ptx.count("cp.async.commit_group") == 2 and re.search(r"cp\.async\.wait_group\s+1;", ptx)
    assert "mbarrier.init" in ptx and "mbarrier.try_wait" in ptx
    # 16-byte cp.async: the copies took the coalesced layout of the pointers.
    assert re.search(r"cp\.async\.cg\.shared\.global \[.*\], \[.*\], 0x10", ptx)


# ----------------------------------------------------------------------------------------------
# 3. Warp-group dot


@triton.jit
def one_mma(A, B, C, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    ra = tl.arange(0, BM)[:, None] * BK + tl.arange(0, BK)[None, :]
    rb = tl.arange(0, BK)[:, None] * BN + tl.arange(0, BN)[None, :]
    a = oc.index(oc.alloc(tl.bfloat16, [BM, BK]), 0)
    b = oc.index(oc.alloc(tl.bfloat16, [BK, BN]), 0)
    oc.write(a, tl.load(A + ra))
    oc.write(b, tl.load(B + rb))
    acc = oc.mma(a, b, tl.zeros([BM, BN], tl.float32))
    tl.store(C + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :], acc)


def test_mma_is_an_async_wgmma_on_the_buffers_with_a_fence_and_a_wait() -> None:
    k = compile_kernel(one_mma, {"A": "*bf16", "B": "*bf16", "C": "*fp32"}, {"BM": 128, "BN": 128, "BK": 64})
    ir = body(k.asm["ttgir"])
    assert "tt.dot" not in ir and "triton_ext_onchip.mma_operand" not in ir
    m = re.search(r"ttng.warp_group_dot (%\w+), (%\w+), %\w+ \{.*isAsync = true.*\} : "
                  r"!ttg.memdesc<128x64xbf16.* \* !ttg.memdesc<64x128xbf16.* -> tensor<128x128xf32, #mma>", ir)
    assert m, ir
    assert re.search(r"ttng.warp_group_dot_wait %\w+ \{pendings = 0 : i32", ir)
    assert ir.index("ttng.fence_async_shared") < ir.index("ttng.warp_group_dot ")
    assert "nvidia_mma<{versionMajor = 3" in ir
    assert "wgmma.mma_async" in k.asm["ptx"] and "fence.proxy.async" in k.asm["ptx"]


# ----------------------------------------------------------------------------------------------
# 4. The pipelined GEMM


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_pipelined_gemm_keeps_the_authors_pipeline(dtype: str) -> None:
    cfg = dict(kernels.CONFIG)
    num_warps = cfg.pop("num_warps")
    sig = {"A": f"*{dtype}", "B": f"*{dtype}", "C": f"*{dtype}", "M": "i32", "N": "i32", "K": "i32",
           "stride_am": "i32", "stride_ak": "constexpr", "stride_bk": "i32", "stride_bn": "constexpr",
           "stride_cm": "i32", "stride_cn": "constexpr"}
    k = compile_kernel(kernels.matmul_kernel, sig, dict(cfg, stride_ak=1, stride_bn=1, stride_cn=1), num_warps)
    ir = body(k.asm["ttgir"])
    loop = ir[ir.index("scf.for %kt"):]
    loop = loop[:loop.index("scf.yield")]
    # Tile kt's copies complete while the next STAGES-2 groups stay in flight.
    assert re.search(rf"ttg.async_wait \{{num = {cfg['STAGES'] - 2} : i32", loop)
    # One wgmma left running across iterations: no wait-for-all inside the loop ...
    assert re.findall(r"ttng.warp_group_dot_wait .*pendings = (\d+)", loop) == ["1"]
    # ... and the accumulator never leaves its MMA layout inside the loop (that would read the
    # registers of the wgmma still running).
    assert not re.search(r"ttg.convert_layout %\S+ : tensor<\S+, #mma>", loop)
    assert re.search(r"scf.for %kt .* -> \(tensor<128x256xf32, #mma>\)", ir)
    # cp.async writes through the generic proxy: fenced before every wgmma.
    assert loop.index("ttng.fence_async_shared") < loop.index("ttng.warp_group_dot ")
    assert k.metadata.shared == 3 * (128 * 64 + 64 * 256) * 2
    ptx = k.asm["ptx"]
    assert "wgmma.mma_async.sync.aligned.m64n256k16.f32" in ptx
    assert re.search(r"wgmma\.wait_group\.sync\.aligned\s+1;", ptx)
    assert re.search(r"cp\.async\.wait_group\s+1;", ptx)
    assert k.asm["cubin"]


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_tma_gemm_copies_on_mbarriers(dtype: str) -> None:
    cfg = dict(kernels.TMA_CONFIG)
    num_warps = cfg.pop("num_warps")
    bm, bn, bk = cfg["BM"], cfg["BN"], cfg["BK"]
    sig = {"a_desc": f"tensordesc<{dtype}[{bm}, {bk}]>", "b_desc": f"tensordesc<{dtype}[{bk}, {bn}]>",
           "C": f"*{dtype}", "M": "i32", "N": "i32", "K": "i32", "stride_cm": "i32", "stride_cn": "constexpr"}
    k = compile_kernel(kernels.matmul_tma_kernel, sig, dict(cfg, stride_cn=1), num_warps)
    ir = body(k.asm["ttgir"])
    assert "triton_ext_onchip.tma_copy" not in ir
    # The descriptors took the buffers' NVMMA layout, and the host is told the matching swizzle.
    assert re.search(rf"%a_desc: !tt.tensordesc<{bm}x{bk}x\w+, #shared>", ir)
    assert [m["swizzle"] for m in k.metadata.tensordesc_meta] == [3, 3]  # 128-byte swizzle
    loop = ir[ir.index("scf.for %kt"):]
    loop = loop[:loop.index("scf.yield")]
    assert re.search(r"ttng.wait_barrier %\w+, %\w+, %true", loop)
    nbytes = (bm * bk + bk * bn) * 2
    assert re.search(rf"ttng.barrier_expect %\w+, {nbytes}, %\w+", loop)
    assert len(re.findall(r"ttng.async_tma_copy_global_to_local", loop)) == 2
    assert re.findall(r"ttng.warp_group_dot_wait .*pendings = (\d+)", loop) == ["1"]
    # TMA writes through the async proxy, as wgmma reads: no proxy fence is needed.
    assert "ttng.fence_async_shared" not in loop
    ptx = k.asm["ptx"]
    assert "cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes" in ptx
    assert "mbarrier.try_wait.parity" in ptx and "wgmma.mma_async" in ptx


# ----------------------------------------------------------------------------------------------
# Misuse is a compile error at the user's line


@triton.jit
def bad_write_shape(X):
    buf = oc.index(oc.alloc(tl.float16, [64, 64]), 0)
    oc.write(buf, tl.load(X + tl.arange(0, 64)))


@triton.jit
def bad_write_dtype(X):
    buf = oc.index(oc.alloc(tl.float16, [64, 64]), 0)
    oc.write(buf, tl.zeros([64, 64], tl.float32))


@triton.jit
def bad_ring_not_indexed(X):
    ring = oc.alloc(tl.float16, [64, 64], count=2)
    tl.store(X + tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :], oc.read(ring))


@triton.jit
def bad_index(X):
    ring = oc.alloc(tl.float16, [64, 64], count=2)
    oc.read(oc.index(ring, 2))


@triton.jit
def bad_mma_inner(X):
    a = oc.index(oc.alloc(tl.float16, [64, 64]), 0)
    b = oc.index(oc.alloc(tl.float16, [32, 64]), 0)
    oc.mma(a, b, tl.zeros([64, 64], tl.float32))


@triton.jit
def bad_mma_acc(X):
    a = oc.index(oc.alloc(tl.float16, [64, 64]), 0)
    b = oc.index(oc.alloc(tl.float16, [64, 64]), 0)
    oc.mma(a, b, tl.zeros([64, 64], tl.float16))


@triton.jit
def bad_mma_dtype(X):
    a = oc.index(oc.alloc(tl.float16, [64, 64]), 0)
    b = oc.index(oc.alloc(tl.bfloat16, [64, 64]), 0)
    oc.mma(a, b, tl.zeros([64, 64], tl.float32))


@triton.jit
def bad_copy_pointee(X):
    buf = oc.index(oc.alloc(tl.float16, [64, 64]), 0)
    oc.copy_async(buf, X + tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :])


@triton.jit
def bad_copy_other(X):
    buf = oc.index(oc.alloc(tl.float16, [64, 64]), 0)
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    oc.copy_async(buf, X + offs, mask=offs < 100, other=1.0)


@triton.jit
def bad_tma_block(X, desc):
    buf = oc.index(oc.alloc(tl.float16, [64, 64]), 0)
    oc.copy_tma(buf, desc, [0, 0], oc.index(oc.barriers(1), 0))


@triton.jit
def bad_wait_on_ring(X):
    bars = oc.barriers(2)
    oc.wait(bars, 0)


@triton.jit
def bad_too_big(X):
    oc.alloc(tl.float32, [256, 256], count=2)


@triton.jit
def bad_runtime_count(X, n):
    oc.wait_copies(n)


@triton.jit
def bad_named_barrier_id(X):
    oc.named_wait(2, 256)


@triton.jit
def bad_named_barrier_threads(X):
    oc.named_arrive(8, 200)


@pytest.mark.parametrize("fn, sig, line, message", [
    (bad_write_shape, "*fp16", "oc.write(buf, tl.load", "write: value has shape [64], the buffer [64, 64]"),
    (bad_write_dtype, "*fp16", "oc.write(buf, tl.zeros", "write: value has dtype fp32, the buffer fp16"),
    (bad_ring_not_indexed, "*fp16", "oc.read(ring)", "pick one with oc.index(buf, i)"),
    (bad_index, "*fp16", "oc.index(ring, 2)", "index 2 is out of range for a ring of 2"),
    (bad_mma_inner, "*fp16", "oc.mma(a, b", "inner dims differ: a is [64, 64], b is [32, 64]"),
    (bad_mma_acc, "*fp16", "oc.mma(a, b", "acc must be float32, got fp16"),
    (bad_mma_dtype, "*fp16", "oc.mma(a, b", "a and b must both be fp16 or bf16, got fp16 and bf16"),
    (bad_copy_pointee, "*fp32", "oc.copy_async(buf", "pointer points to fp32, the buffer holds fp16"),
    (bad_copy_other, "*fp16", "oc.copy_async(buf", "other must be 0 (or left out), got 1.0"),
    (bad_tma_block, "*fp16", "oc.copy_tma(buf, desc", "the descriptor's block is [128, 64], the buffer [64, 64]"),
    (bad_wait_on_ring, "*fp16", "oc.wait(bars, 0)", "pick one with oc.index(bar, i)"),
    (bad_too_big, "*fp16", "oc.alloc(tl.float32", "needs 524288 bytes of shared memory"),
    (bad_runtime_count, "*fp16", "oc.wait_copies(n)", "pending must be a compile-time int"),
    (bad_named_barrier_id, "*fp16", "oc.named_wait(2, 256)",
     "named_wait: barrier must be in 8..15 (0 .. 7 are Triton's own"),
    (bad_named_barrier_threads, "*fp16", "oc.named_arrive(8, 200)",
     "named_arrive: threads must be a multiple of 32 (whole warps) up to 1024, got 200"),
])
def test_misuse_is_a_compile_error_at_the_call(fn, sig: str, line: str, message: str) -> None:
    signature = {"X": sig}
    if fn is bad_runtime_count:
        signature["n"] = "i32"
    if fn is bad_tma_block:
        signature["desc"] = "tensordesc<fp16[128, 64]>"
    with pytest.raises(CompilationError) as info:
        compile_kernel(fn, signature)
    text = str(info.value)
    assert message in text, text
    # Triton prints the offending source line, then a caret under the call.
    lines = text.splitlines()
    caret = next(i for i, ln in enumerate(lines) if ln.strip() == "^")
    assert line in lines[caret - 1], text


# ----------------------------------------------------------------------------------------------
# Other kernels are left alone


@triton.jit
def plain_matmul(A, B, C, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(A + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(B + (k + rk)[:, None] * BN + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(C + rm[:, None] * BN + rn[None, :], acc)


def test_kernels_without_onchip_ops_compile_unchanged() -> None:
    import triton_ext

    sig = {"A": "*fp16", "B": "*fp16", "C": "*fp32", "K": "i32"}
    consts = {"BM": 128, "BN": 128, "BK": 64}
    with_passes = compile_kernel(plain_matmul, sig, consts).asm["ttgir"]
    assert set(oc.PASSES) <= set(triton_ext.enabled_passes())
    triton_ext.disable(*oc.PASSES)
    without = compile_kernel(plain_matmul, sig, consts).asm["ttgir"]
    assert "ttng.warp_group_dot" in without and "ttg.async_copy_global_to_local" in without
    assert with_passes == without


# ----------------------------------------------------------------------------------------------
# Buffers are values: passed to helpers, carried through loops


@triton.jit
def fill(buf, X, BM: tl.constexpr):
    offs = tl.arange(0, BM)[:, None] * BM + tl.arange(0, BM)[None, :]
    oc.write(buf, tl.load(X + offs))


@triton.jit
def helper_and_loop(X, Y, n, BM: tl.constexpr):
    ring = oc.alloc(tl.float16, [BM, BM], count=2)
    buf = oc.index(ring, 0)
    fill(buf, X, BM)
    acc = tl.zeros([BM, BM], tl.float32)
    for i in range(n):
        acc += oc.read(buf).to(tl.float32)
        buf = oc.index(ring, (i + 1) % 2)
    tl.store(Y + tl.arange(0, BM)[:, None] * BM + tl.arange(0, BM)[None, :], acc)


def test_buffers_pass_through_helpers_and_loops() -> None:
    k = compile_kernel(helper_and_loop, {"X": "*fp16", "Y": "*fp32", "n": "i32"}, {"BM": 64})
    ir = body(k.asm["ttgir"])
    assert re.search(r"scf.for .* -> \(!ttg.memdesc<64x64xf16, #shared, #smem, mutable>, tensor<64x64xf32", ir)
    assert "ttg.local_store" in ir and "tt.call" not in ir
    assert k.asm["cubin"]


# ----------------------------------------------------------------------------------------------
# A wait nothing can satisfy (statically visible) is a compile error at the wait


@triton.jit
def never_armed(X):
    bars = oc.barriers(2)
    oc.arrive(oc.index(bars, 0))
    oc.wait(oc.index(bars, 1), 0)


@triton.jit
def waits_before_arming(X):
    bar = oc.index(oc.barriers(1), 0)
    oc.wait(bar, 0)
    oc.arrive(bar)


@triton.jit
def waits_in_loop_before_arming(X, n):
    bar = oc.index(oc.barriers(1), 0)
    for i in range(n):
        oc.wait(bar, 0)
        oc.arrive(bar)


@triton.jit
def copy_without_expect(X, desc):
    # Issue 26: the TMA copy brings its bytes (complete_tx) but is no arrival, and nothing else
    # arrives: phase 0 never completes, the wait hangs.
    buf = oc.index(oc.alloc(tl.float16, [64, 64]), 0)
    bar = oc.index(oc.barriers(1), 0)
    oc.copy_tma(buf, desc, [0, 0], bar)
    oc.wait(bar, 0)
    tl.store(X + tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :], oc.read(buf))


@triton.jit
def copies_in_loop_without_expect(X, desc, n):
    ring = oc.alloc(tl.float16, [64, 64], count=2)
    ready = oc.barriers(2)
    acc = tl.zeros([64, 64], tl.float32)
    for j in range(n):
        oc.copy_tma(oc.index(ring, j % 2), desc, [j * 64, 0], oc.index(ready, j % 2))
        oc.wait(oc.index(ready, j % 2), 0)
        acc += oc.read(oc.index(ring, j % 2)).to(tl.float32)
    tl.store(X + tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :], acc.to(tl.float16))


DESC = "tensordesc<fp16[64, 64]>"


@pytest.mark.parametrize("fn, sig, line, slot", [
    (never_armed, {"X": "*fp16"}, "oc.wait(oc.index(bars, 1), 0)", "1"),
    (waits_before_arming, {"X": "*fp16"}, "oc.wait(bar, 0)", "0"),
    (waits_in_loop_before_arming, {"X": "*fp16", "n": "i32"}, "oc.wait(bar, 0)", "0"),
    (copy_without_expect, {"X": "*fp16", "desc": DESC}, "oc.wait(bar, 0)", "0"),
    (copies_in_loop_without_expect, {"X": "*fp16", "desc": DESC, "n": "i32"}, "oc.wait(oc.index(ready, j % 2), 0)",
     "ring"),
])
def test_wait_on_a_barrier_never_armed_is_a_compile_error_at_the_wait(fn, sig: dict[str, str], line: str,
                                                                       slot: str) -> None:
    with pytest.raises(CompilationError) as info:
        compile_kernel(fn, sig)
    text = str(info.value)
    assert f"wait: this wait never returns: nothing has arrived on barrier {slot} before it" in text, text
    lines = text.splitlines()
    caret = next(i for i, ln in enumerate(lines) if ln.strip() == "^")
    assert line in lines[caret - 1], text
    # The error is at the user's line of the wait ("at LINE:COL", counted from the def line).
    line_no = 1 + next(i for i, ln in enumerate(fn.src.splitlines()) if line in ln)
    assert text.startswith(f"at {line_no}:"), text


@triton.jit
def copy_without_expect_runtime_phase(X, desc, n):
    buf = oc.index(oc.alloc(tl.float16, [64, 64]), 0)
    bars = oc.barriers(1)
    for i in range(n):
        oc.copy_tma(buf, desc, [i * 64, 0], oc.index(bars, 0))
        oc.wait(oc.index(bars, 0), i & 1)
    tl.store(X + tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :], oc.read(buf))


def test_copy_without_expect_and_runtime_phase_is_an_error_at_the_wait(capfd: pytest.CaptureFixture[str]) -> None:
    # The phase is not known when the wait is built: the declare_barriers verifier reports it.
    with pytest.raises(RuntimeError):
        compile_kernel(copy_without_expect_runtime_phase, {"X": "*fp16", "desc": DESC, "n": "i32"})
    err = capfd.readouterr().err
    line = copy_without_expect_runtime_phase.fn.__code__.co_firstlineno + 6  # the decorator line is the first
    assert re.search(rf"test_onchip.py:{line}:\d+: error: triton_ext_onchip: this wait never returns: "
                     r"nothing arrives on barrier 0 \(no arrive or expect uses it; a copy_tma only brings bytes, "
                     r"it is no arrival\)", err), err


@triton.jit
def never_armed_runtime_phase(X, n):
    bars = oc.barriers(2)
    oc.arrive(oc.index(bars, 0))
    for i in range(n):
        oc.wait(oc.index(bars, 1), i & 1)


def test_wait_with_runtime_phase_on_a_barrier_nothing_arms_is_an_error_at_the_wait(
        capfd: pytest.CaptureFixture[str]) -> None:
    # The phase is not known when the wait is built, so the declare_barriers verifier reports it
    # once the kernel is complete: Triton raises RuntimeError and prints the diagnostic.
    with pytest.raises(RuntimeError):
        compile_kernel(never_armed_runtime_phase, {"X": "*fp16", "n": "i32"})
    err = capfd.readouterr().err
    line = never_armed_runtime_phase.fn.__code__.co_firstlineno + 5  # the decorator line is the first
    assert re.search(rf"test_onchip.py:{line}:\d+: error: triton_ext_onchip: this wait never returns: "
                     r"nothing arrives on barrier 1 \(no arrive or expect uses it; a copy_tma only brings bytes, "
                     r"it is no arrival\)", err), err
    assert f"test_onchip.py:{line - 3}:" in err  # the note: where the barriers were allocated


@triton.jit
def arm(bar):
    oc.arrive(bar)


@triton.jit
def armed_in_helper(X):
    bars = oc.barriers(2)
    arm(oc.index(bars, 1))
    oc.wait(oc.index(bars, 1), 0)


@triton.jit
def armed_dynamically(X, i):
    bars = oc.barriers(2)
    oc.expect(oc.index(bars, i % 2), 128)
    oc.wait(oc.index(bars, 1), 0)


@triton.jit
def waits_for_the_phase_before(X):
    # Parity 1 of a fresh barrier is the phase "before" phase 0: the wait returns at once.
    bar = oc.index(oc.barriers(1), 0)
    oc.wait(bar, 1)
    oc.arrive(bar)


@triton.jit
def armed_then_waited_in_loop(X, n):
    bar = oc.index(oc.barriers(1), 0)
    for i in range(n):
        oc.arrive(bar)
        oc.wait(bar, i & 1)


@pytest.mark.parametrize("fn, sig", [(armed_in_helper, {"X": "*fp16"}),
                                     (armed_dynamically, {"X": "*fp16", "i": "i32"}),
                                     (waits_for_the_phase_before, {"X": "*fp16"}),
                                     (armed_then_waited_in_loop, {"X": "*fp16", "n": "i32"})])
def test_barriers_that_may_be_armed_compile(fn, sig: dict[str, str]) -> None:
    k = compile_kernel(fn, sig)
    assert "ttng.wait_barrier" in k.asm["ttgir"] and "declare_barriers" not in k.asm["ttgir"]


# ----------------------------------------------------------------------------------------------
# onchip_prune: buffers nobody reads and barriers nobody waits on are removed


@triton.jit
def with_dead_memory(X, Y, BM: tl.constexpr):
    offs = tl.arange(0, BM)[:, None] * BM + tl.arange(0, BM)[None, :]
    used = oc.index(oc.alloc(tl.float16, [BM, BM]), 0)
    oc.write(used, tl.load(X + offs))
    dead = oc.alloc(tl.float32, [BM, BM], count=2)  # written, never read
    oc.write(oc.index(dead, 1), tl.zeros([BM, BM], tl.float32))
    bars = oc.barriers(2)  # arrived on, never waited on
    oc.arrive(oc.index(bars, 0))
    tl.store(Y + offs, oc.read(used))


def test_prune_removes_unread_buffers_and_unwaited_barriers() -> None:
    import triton_ext

    sig, consts = {"X": "*fp16", "Y": "*fp16"}, {"BM": 64}
    k = compile_kernel(with_dead_memory, sig, consts)
    ir = body(k.asm["ttgir"])
    allocs = re.findall(r"ttg.local_alloc : \(\) -> (!ttg.memdesc<[^>]*>)", ir)
    assert len(allocs) == 1 and "64x64xf16" in allocs[0], allocs
    assert "ttng.init_barrier" not in ir and "ttng.arrive_barrier" not in ir
    assert ir.count("ttg.local_store") == 1
    assert k.asm["cubin"]
    # Without the pass the dead ring (2 x 16 KiB of fp32) and the barriers stay.
    triton_ext.disable("onchip_prune")
    kept = compile_kernel(with_dead_memory, sig, consts)
    assert body(kept.asm["ttgir"]).count("ttg.local_alloc") == 3
    assert kept.metadata.shared >= k.metadata.shared + 2 * 64 * 64 * 4


def test_prune_warns_at_the_users_alloc_line_with_warn_unused(monkeypatch: pytest.MonkeyPatch,
                                                             capfd: pytest.CaptureFixture[str]) -> None:
    import triton_ext

    monkeypatch.setenv("MLIR_ENABLE_DIAGNOSTICS", "warnings")  # Triton prints MLIR warnings only then
    triton_ext.enable("onchip_prune", warn_unused=True)
    compile_kernel(with_dead_memory, {"X": "*fp16", "Y": "*fp16"}, {"BM": 64})
    err = capfd.readouterr().err
    first = with_dead_memory.fn.__code__.co_firstlineno  # the decorator line
    assert f"test_onchip.py:{first + 5}:12: warning: triton_ext_onchip: nothing reads these buffers; removed " \
           "with the 1 op(s) that write them" in err, err
    assert f"test_onchip.py:{first + 7}:12: warning: triton_ext_onchip: nothing waits on these barriers" in err, err


@pytest.mark.parametrize("kernel", ["attention", "warp_specialized"])
def test_prune_and_check_expect_leave_the_real_kernels_unchanged(kernel: str) -> None:
    # Nothing in them is dead, and every expect matches its copies: the same PTX either way.
    import triton_ext

    if kernel == "attention":
        fn, cfg = kernels.attn_fwd_kernel, kernels.ATTN_CONFIGS[64]
        num_warps, bm, bn = cfg["num_warps"], cfg["BLOCK_M"], cfg["BLOCK_N"]
        sig = {"q_desc": f"tensordesc<fp16[{bm}, 64]>", "k_desc": f"tensordesc<fp16[{bn}, 64]>",
               "v_desc": f"tensordesc<fp16[{bn}, 64]>", "Out": "*fp16", "sm_scale": "fp32", "N_CTX": "i32"}
        consts = {k: v for k, v in cfg.items() if k != "num_warps"} | dict(HEAD_DIM=64)
    else:
        fn, consts = kernels.matmul_ws_kernel, dict(kernels.WS_CONFIG)
        num_warps = consts.pop("num_warps")
        sig = {"a_desc": "tensordesc<fp16[128, 64]>", "b_desc": "tensordesc<fp16[64, 256]>", "C": "*fp16",
               "M": "i32", "N": "i32", "K": "i32", "stride_cm": "i32", "stride_cn": "i32"}
    with_checks = compile_kernel(fn, sig, consts, num_warps).asm["ptx"]
    triton_ext.disable("onchip_prune", "onchip_check_expect")
    assert compile_kernel(fn, sig, consts, num_warps).asm["ptx"] == with_checks


# ----------------------------------------------------------------------------------------------
# onchip_check_expect: expect must announce the bytes its TMA copies bring


@triton.jit
def expects_too_few_bytes(X, desc):
    a = oc.alloc(tl.float16, [64, 64], count=2)
    bar = oc.index(oc.barriers(1), 0)
    oc.expect(bar, 64 * 64 * 2)
    oc.copy_tma(oc.index(a, 0), desc, [0, 0], bar)
    oc.copy_tma(oc.index(a, 1), desc, [64, 0], bar)
    oc.wait(bar, 0)
    tl.store(X + tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :], oc.read(oc.index(a, 1)))


@triton.jit
def pipelined_expects_too_many_bytes(X, desc, n):
    # The pipelined pattern: stage (j + 1) % 2 is armed and filled while stage j % 2 is waited on.
    ring = oc.alloc(tl.float16, [64, 64], count=2)
    ready = oc.barriers(2)
    acc = tl.zeros([64, 64], tl.float32)
    for j in range(n):
        bar = oc.index(ready, (j + 1) % 2)
        oc.expect(bar, 2 * 64 * 64 * 2)
        oc.copy_tma(oc.index(ring, (j + 1) % 2), desc, [j * 64 + 64, 0], bar)
        oc.wait(oc.index(ready, j % 2), (j // 2) & 1)
        acc += oc.read(oc.index(ring, j % 2)).to(tl.float32)
    tl.store(X + tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :], acc.to(tl.float16))


@pytest.mark.parametrize("fn, sig, offset, message", [
    (expects_too_few_bytes, {"X": "*fp16", "desc": "tensordesc<fp16[64, 64]>"}, 4,
     "expect announces 8192 bytes on this barrier, but the copy_tma calls that complete on it before its wait "
     "bring 16384 bytes; the phase would complete while a copy is still landing"),
    (pipelined_expects_too_many_bytes, {"X": "*fp16", "desc": "tensordesc<fp16[64, 64]>", "n": "i32"}, 8,
     "expect announces 16384 bytes on this barrier, but the copy_tma calls that complete on it before its wait "
     "bring 8192 bytes; the phase would never complete"),
])
def test_expect_bytes_that_differ_from_the_copies_are_an_error_at_the_expect(
        fn, sig: dict[str, str], offset: int, message: str, capfd: pytest.CaptureFixture[str]) -> None:
    from triton_ext import PassFailedError

    # A check pass (registry role: check): the compile fails instead of dropping the pass.
    with pytest.raises(PassFailedError, match="pass onchip_check_expect is a check"):
        compile_kernel(fn, sig)
    err = capfd.readouterr().err
    line = fn.fn.__code__.co_firstlineno + offset  # the decorator line is the first
    assert re.search(rf"test_onchip.py:{line}:\d+: error: triton_ext_onchip: {re.escape(message)}", err), err
    assert f"test_onchip.py:{line + 1}:" in err  # the note at (the first) copy


# ----------------------------------------------------------------------------------------------
# Warp specialization


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_warp_specialized_gemm(dtype: str) -> None:
    cfg = dict(kernels.WS_CONFIG)
    num_warps = cfg.pop("num_warps")
    bm, bn, bk = cfg["BM"], cfg["BN"], cfg["BK"]
    sig = {"a_desc": f"tensordesc<{dtype}[{bm}, {bk}]>", "b_desc": f"tensordesc<{dtype}[{bk}, {bn}]>",
           "C": f"*{dtype}", "M": "i32", "N": "i32", "K": "i32", "stride_cm": "i32", "stride_cn": "constexpr"}
    k = compile_kernel(kernels.matmul_ws_kernel, sig, dict(cfg, stride_cn=1), num_warps)
    ir = body(k.asm["ttgir"])
    ws = ir[ir.index("ttg.warp_specialize("):]
    default, worker = ws[:ws.index("partition0(")], ws[ws.index("partition0("):]
    assert re.search(r"partition0\(.*\) num_warps\(1\)", worker)
    # The producer only copies and waits for free stages; the consumer only waits, multiplies
    # and frees stages.
    assert len(re.findall(r"ttng.async_tma_copy_global_to_local", worker)) == 2
    assert "warp_group_dot" not in worker and "arrive_barrier" not in worker
    assert "async_tma_copy" not in default
    assert re.findall(r"ttng.warp_group_dot_wait .*pendings = (\d+)", default) == ["1", "0"]
    assert re.search(r"ttng.arrive_barrier %\w+, 1, %\w+", default)
    # The descriptors, captured by the producer, took the buffers' layout all the way up.
    assert re.search(rf"%a_desc: !tt.tensordesc<{bm}x{bk}x\w+, #shared>", ir)
    assert re.search(rf"partition0\(%\w+: !tt.tensordesc<{bm}x{bk}x\w+, #shared>", worker)
    assert "ttng.fence_async_shared" not in ir  # TMA-only buffers
    assert k.metadata.num_warps >= num_warps + 1
    assert "cp.async.bulk.tensor" in k.asm["ptx"] and "wgmma.mma_async" in k.asm["ptx"]


@triton.jit
def _worker_with_tensor(x):
    pass


@triton.jit
def _default_nothing(X):
    pass


@triton.jit
def bad_split_tensor_arg(X):
    oc.split([(_default_nothing, (X, )), (_worker_with_tensor, (tl.arange(0, 64), ))], [1])


@triton.jit
def bad_split_warps(X):
    oc.split([(_default_nothing, (X, )), (_default_nothing, (X, ))], [3])


@pytest.mark.parametrize("fn, message", [
    (bad_split_tensor_arg, "workers take buffers, barriers, descriptors and scalars only"),
    (bad_split_warps, "worker warp counts must be powers of two, got [3]"),
])
def test_split_misuse_is_a_compile_error(fn, message: str) -> None:
    with pytest.raises(CompilationError) as info:
        compile_kernel(fn, {"X": "*fp16"})
    assert message in str(info.value), str(info.value)
    assert "oc.split(" in str(info.value)


@triton.jit
def register_a_mma(A, B, C, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    ra = tl.arange(0, BM)[:, None] * BK + tl.arange(0, BK)[None, :]
    rb = tl.arange(0, BK)[:, None] * BN + tl.arange(0, BN)[None, :]
    b = oc.index(oc.alloc(tl.float16, [BK, BN]), 0)
    oc.write(b, tl.load(B + rb))
    p = tl.load(A + ra) * 2  # computed in registers, as attention's P
    acc = oc.mma(p, b, tl.zeros([BM, BN], tl.float32))
    tl.store(C + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :], acc)


def test_mma_with_a_from_registers() -> None:
    k = compile_kernel(register_a_mma, {"A": "*fp16", "B": "*fp16", "C": "*fp32"}, {"BM": 64, "BN": 64, "BK": 64})
    ir = body(k.asm["ttgir"])
    assert re.search(r"ttng.warp_group_dot %\w+, %\w+, %\w+ \{.*isAsync = true.*\} : "
                     r"tensor<64x64xf16, #ttg.dot_op<\{opIdx = 0, parent = #mma, kWidth = 2\}>> \* "
                     r"!ttg.memdesc<64x64xf16", ir), ir
    assert "wgmma.mma_async" in k.asm["ptx"]


# ----------------------------------------------------------------------------------------------
# Causal attention forward


def _loops(ir: str, var: str) -> list[str]:
    """The bodies (up to their scf.yield) of the loops over ``var``, in order."""
    out = []
    for m in re.finditer(rf"scf.for %{var} ", ir):
        loop = ir[m.start():]
        out.append(loop[:loop.index("scf.yield")])
    return out


@pytest.mark.parametrize("head_dim, block_n, dtype, q_in_registers, bm",
                         [(64, 64, "fp16", True, 128), (64, 64, "fp16", False, 128), (64, 128, "fp16", True, 128),
                          (128, 64, "fp16", False, 128), (128, 64, "fp16", True, 128), (128, 128, "fp16", False, 128),
                          (64, 64, "bf16", True, 128), (128, 64, "bf16", False, 128),
                          (64, 128, "fp16", False, 64), (64, 128, "bf16", False, 64)])
def test_causal_attention_forward(head_dim: int, block_n: int, dtype: str, q_in_registers: bool, bm: int) -> None:
    sig = {"q_desc": f"tensordesc<{dtype}[{bm}, {head_dim}]>", "k_desc": f"tensordesc<{dtype}[{block_n}, {head_dim}]>",
           "v_desc": f"tensordesc<{dtype}[{block_n}, {head_dim}]>", "Out": f"*{dtype}", "sm_scale": "fp32",
           "N_CTX": "i32"}
    ty = {"fp16": "f16", "bf16": "bf16"}[dtype]
    k = compile_kernel(kernels.attn_fwd_kernel, sig, dict(HEAD_DIM=head_dim, BLOCK_M=bm, BLOCK_N=block_n,
                                                          Q_IN_REGISTERS=q_in_registers), bm // 16)
    ir = body(k.asm["ttgir"])
    assert "triton_ext_onchip.tma_copy" not in ir and "tt.dot " not in ir
    # Q once, K and V tiles double-buffered; the kernel is all TMA, so no proxy fence anywhere
    # (the transposed K view still counts as a TMA-only buffer).
    assert re.search(rf"ttg.local_alloc : \(\) -> !ttg.memdesc<2x{block_n}x{head_dim}x{ty}", ir)
    assert "ttng.fence_async_shared" not in ir
    off_diag, diag = _loops(ir, "j")  # the causal split: off-diagonal blocks, then the diagonal
    acc_type = rf"tensor<{bm}x{head_dim}xf32, #mma\d*>"
    nbytes = 2 * block_n * head_dim * 2
    for loop in (off_diag, diag):
        # Block j+1's K and V are copied on the other stage's barrier while block j is used ...
        assert re.search(rf"ttng.barrier_expect %\w+, {nbytes}, %\w+", loop)
        assert len(re.findall(r"ttng.async_tma_copy_global_to_local", loop)) == 2
        # ... after waiting for block j's barrier, with its phase parity.
        assert re.search(r"ttng.wait_barrier %\w+, %\w+, %true", loop)
        assert loop.index("ttng.wait_barrier") < loop.index("ttng.warp_group_dot ")
        # S = Q K^T: both operands in shared memory, K through a transposed view.
        assert re.search(rf"ttg.memdesc_trans %\w+ \{{order = array<i32: 1, 0>\}} : "
                         rf"!ttg.memdesc<{block_n}x{head_dim}x{ty}.* -> !ttg.memdesc<{head_dim}x{block_n}x{ty}", loop)
        dots = re.findall(r"ttng.warp_group_dot %.*", loop)
        assert len(dots) == 2, dots
        if q_in_registers:  # Q read from shared memory once, before the loops; wgmma's A from registers
            assert re.search(rf": tensor<{bm}x{head_dim}x{ty}, #ttg.dot_op<\{{opIdx = 0.* \* "
                             rf"!ttg.memdesc<{head_dim}x{block_n}x{ty}", dots[0]), dots[0]
            assert "ttg.local_load" not in loop
        else:
            assert re.search(rf"!ttg.memdesc<{bm}x{head_dim}x{ty}.* \* !ttg.memdesc<{head_dim}x{block_n}x{ty}",
                             dots[0])
        # O += P V with P from registers.
        assert re.search(rf": tensor<{bm}x{block_n}x{ty}, #ttg.dot_op<\{{opIdx = 0.* \* "
                         rf"!ttg.memdesc<{block_n}x{head_dim}x{ty}.* -> {acc_type}", dots[1]), dots[1]
        assert re.findall(r"ttng.warp_group_dot_wait .*pendings = (\d+)", loop) == ["0", "0"]
        # The output accumulator stays in its MMA layout across the loop.
        assert not re.search(rf"ttg.convert_layout %\S+ : {acc_type}", loop)
    assert re.search(rf"scf.for %j .* -> \(.*{acc_type}\)", ir)
    # Only the diagonal loop masks (a 2-D compare of query and key positions).
    assert not re.search(r"arith.cmpi \w+, .*: tensor<\d+x\d+xi32", off_diag)
    assert re.search(r"arith.cmpi \w+, .*: tensor<\d+x\d+xi32", diag)
    assert k.metadata.shared >= (bm * head_dim + 4 * block_n * head_dim) * 2
    ptx = k.asm["ptx"]
    assert f"wgmma.mma_async.sync.aligned.m64n{block_n}k16.f32.{ty}.{ty}" in ptx
    assert f"wgmma.mma_async.sync.aligned.m64n{head_dim}k16.f32.{ty}.{ty}" in ptx
    assert "cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes" in ptx
    assert "mbarrier.try_wait.parity" in ptx
    if q_in_registers:
        assert re.search(rf"ttg.local_load %\w+ : !ttg.memdesc<{bm}x{head_dim}x{ty}", ir[:ir.index("scf.for")])
        assert re.search(r"wgmma.mma_async.sync.aligned.m64n\d+k16.f32.\w+.\w+\s+\{[^}]*\},\s*\{", ptx)
    assert wgmma_serialization(ptx) is None
    assert k.asm["cubin"]


@triton.jit
def bad_trans_ring(X):
    oc.trans(oc.alloc(tl.float16, [64, 64], count=2))


def test_trans_of_a_ring_is_a_compile_error() -> None:
    with pytest.raises(CompilationError) as info:
        compile_kernel(bad_trans_ring, {"X": "*fp16"})
    assert "trans: buf must be buffer" in str(info.value), str(info.value)


# ----------------------------------------------------------------------------------------------
# Issue 31: a read before its wait and an overwrite of a buffer in flight are errors at the line


@triton.jit
def reads_before_tma_wait(X, desc):
    buf = oc.index(oc.alloc(tl.float16, [64, 64]), 0)
    bar = oc.index(oc.barriers(1), 0)
    oc.expect(bar, 64 * 64 * 2)
    oc.copy_tma(buf, desc, [0, 0], bar)
    x = oc.read(buf)  # the copy may not have landed
    oc.wait(bar, 0)
    tl.store(X + tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :], x)


@triton.jit
def reads_before_wait_copies(X, Y):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    buf = oc.index(oc.alloc(tl.float16, [64, 64]), 0)
    oc.copy_async(buf, Y + offs)
    oc.commit()
    x = oc.read(buf)  # no wait_copies covers the group
    oc.wait_copies(0)
    tl.store(X + offs, x)


@triton.jit
def refills_the_stage_in_flight(X, desc, n):
    # The classic pipelining slip: the refill targets the stage the mma (pending=1) still reads.
    a_ring = oc.alloc(tl.float16, [64, 64], 2)
    ready = oc.barriers(2)
    oc.expect(oc.index(ready, 0), 64 * 64 * 2)
    oc.copy_tma(oc.index(a_ring, 0), desc, [0, 0], oc.index(ready, 0))
    acc = tl.zeros([64, 64], tl.float32)
    for kt in range(n):
        slot = kt % 2
        oc.wait(oc.index(ready, slot), (kt // 2) & 1)
        acc = oc.mma(oc.index(a_ring, slot), oc.index(a_ring, slot), acc, pending=1)
        oc.expect(oc.index(ready, slot), 64 * 64 * 2)
        oc.copy_tma(oc.index(a_ring, slot), desc, [kt * 64 + 64, 0], oc.index(ready, slot))
    acc = oc.mma_wait(acc, 0)
    tl.store(X + tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :], acc.to(tl.float16))


@triton.jit
def rewrites_before_store_wait(desc, n):
    c = oc.index(oc.alloc(tl.float16, [64, 64]), 0)
    for i in range(n):
        oc.write(c, (tl.zeros([64, 64], tl.float32) + i).to(tl.float16))  # last iteration's store reads c
        oc.store_tma(desc, [i * 64, 0], c)
    oc.store_wait(0)


@pytest.mark.parametrize("fn, sig, offset, message", [
    (reads_before_tma_wait, {"X": "*fp16", "desc": DESC}, 6,
     "this reads a buffer before the wait for the copy_tma into it at line {copy}: it may read stale data; wait on "
     "its barrier first (oc.wait(bar, phase))"),
    (reads_before_wait_copies, {"X": "*fp16", "Y": "*fp16"}, 6,
     "this reads a buffer before the wait for the copy_async into it at line {copy}: it may read stale data; wait "
     "for its group first (oc.wait_copies(0) or fewer)"),
    (refills_the_stage_in_flight, {"X": "*fp16", "desc": DESC, "n": "i32"}, 13,
     "this overwrites a buffer that the mma at line {mma} may still be reading: it was issued with pending=1"),
    (rewrites_before_store_wait, {"desc": DESC, "n": "i32"}, 4,
     "this overwrites a buffer that the store_tma at line {store} (previous iteration) may still be reading; "
     "oc.store_wait(0) first"),
])
def test_read_before_wait_and_overwrite_in_flight_are_errors_at_the_line(
        fn, sig: dict[str, str], offset: int, message: str, capfd: pytest.CaptureFixture[str]) -> None:
    from triton_ext import PassFailedError

    first = fn.fn.__code__.co_firstlineno  # the decorator line
    line = first + offset
    message = message.format(copy=line - 1 if "copy_tma" in message else line - 2, mma=line - 2, store=line + 1)
    with pytest.raises(PassFailedError, match="pass onchip_check_expect is a check"):
        compile_kernel(fn, sig)
    err = capfd.readouterr().err
    assert re.search(rf"test_onchip.py:{line}:\d+: error: triton_ext_onchip: {re.escape(message)}", err), err


# ----------------------------------------------------------------------------------------------
# Issue 31: TMA-store epilogues, setmaxnreg, the persistent warp-specialized GEMM


@triton.jit
def stores_a_tile(desc, n):
    c = oc.index(oc.alloc(tl.float16, [64, 64]), 0)
    for i in range(n):
        oc.store_wait(0)
        oc.write(c, (tl.zeros([64, 64], tl.float32) + i).to(tl.float16))
        oc.store_tma(desc, [i * 64, 0], c)
    oc.store_wait(0)


def test_store_tma_lowers_to_a_fenced_tma_store_and_a_read_wait() -> None:
    k = compile_kernel(stores_a_tile, {"desc": DESC, "n": "i32"})
    ir = body(k.asm["ttgir"])
    loop = ir[ir.index("scf.for"):]
    # In the loop: wait for the previous store to read the buffer, write it, fence, store.
    assert re.search(r"ttng.async_tma_store_wait \{pendings = 0 : i32, read_only\}.*ttg.local_store.*"
                     r"ttng.fence_async_shared \{bCluster = false\}\n\s*ttng.async_tma_copy_local_to_global "
                     r"%desc\[", loop, re.S), loop
    assert re.search(r"%desc: !tt.tensordesc<64x64xf16, #shared>", ir)  # the buffer's layout
    ptx = k.asm["ptx"]
    # The writes, the proxy fence, the block barrier Triton adds, then one thread's TMA store.
    assert re.search(r"fence\.proxy\.async\.shared::cta;\s*bar\.sync\s+0;.*"
                     r"cp\.async\.bulk\.tensor\.2d\.global\.shared::cta\.bulk_group.*cp\.async\.bulk\.commit_group",
                     ptx, re.S), ptx
    assert re.search(r"cp\.async\.bulk\.wait_group\.read\s+0;", ptx)


def _persistent_signature(dtype: str, cfg: dict) -> dict[str, str]:
    bm, bn, bk = cfg["BM"], cfg["BN"], cfg["BK"]
    return {"a_desc": f"tensordesc<{dtype}[{bm}, {bk}]>", "b_desc": f"tensordesc<{dtype}[{bk}, {bn}]>",
            "c_desc": f"tensordesc<{dtype}[{bm}, {bn}]>", "M": "i32", "N": "i32", "K": "i32"}


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_persistent_gemm_with_tma_store_and_setmaxnreg(dtype: str) -> None:
    cfg = dict(kernels.PERSISTENT_CONFIG)
    num_warps = cfg.pop("num_warps")
    k = compile_kernel(kernels.matmul_persistent_kernel, _persistent_signature(dtype, cfg), cfg, num_warps)
    ir = body(k.asm["ttgir"])
    ws = ir[ir.index("ttg.warp_specialize("):]
    default, worker = ws[:ws.index("partition0(")], ws[ws.index("partition0("):]
    # setmaxnreg: the producer asked for 24 registers; Triton padded it to a warp group and gave
    # the consumers what is left (240 of the 168 each would have).
    assert re.search(r"ttg.warp_specialize\(.*\) attributes \{requestedRegisters = array<i32: 24>\}", ir)
    ptx = k.asm["ptx"]
    assert re.search(r"\.maxnreg 168", ptx)
    assert re.search(r"setmaxnreg\.inc\.sync\.aligned\.u32\s+240;", ptx), ptx
    assert re.search(r"setmaxnreg\.dec\.sync\.aligned\.u32\s+24;", ptx), ptx
    # Persistent: both partitions loop over tiles (an outer loop around the k loop).
    assert len(re.findall(r"scf.for", default)) == 2 and len(re.findall(r"scf.for", worker)) >= 2
    assert "tt.get_num_programs" in ir
    # The epilogue: a TMA store from the C tile after waiting for the previous one to read it.
    assert "ttng.async_tma_copy_local_to_global" in default and "async_tma_store_wait" in default
    assert len(re.findall(r"ttng.async_tma_copy_global_to_local", worker)) == 2
    assert "cp.async.bulk.tensor.2d.global.shared::cta" in ptx and "wgmma.mma_async" in ptx


def test_split_without_registers_emits_no_setmaxnreg() -> None:
    cfg = dict(kernels.PERSISTENT_CONFIG, PRODUCER_REGS=0)
    num_warps = cfg.pop("num_warps")
    k = compile_kernel(kernels.matmul_persistent_kernel, _persistent_signature("fp16", cfg), cfg, num_warps)
    assert "requestedRegisters" not in k.asm["ttgir"] and "setmaxnreg" not in k.asm["ptx"]


@triton.jit
def _nothing(X):
    pass


@triton.jit
def bad_split_regs(X):
    oc.split([(_nothing, (X, )), (_nothing, (X, ))], [1], [20])


def test_split_register_count_off_the_grid_is_an_error() -> None:
    with pytest.raises(CompilationError, match=r"register counts must be multiples of 8 in \[24, 256\]|"
                                               r"worker_num_regs must be >= 24"):
        compile_kernel(bad_split_regs, {"X": "*fp16"})


@triton.jit
def p_v_in_flight_at_the_back_edge(X, n, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    # The order attn_fwd_pipelined_kernel had until 5c69379: S_{j+1} issued before the softmax
    # of S_j (pending=2), P_j V_j still running when the iteration ends.
    q = oc.index(oc.alloc(tl.float16, [BM, D]), 0)
    k = oc.index(oc.alloc(tl.float16, [BN, D]), 0)
    v = oc.index(oc.alloc(tl.float16, [BN, D]), 0)
    s = tl.zeros([BM, BN], tl.float32)
    acc = tl.zeros([BM, D], tl.float32)
    for j in range(n):
        s_next = oc.mma(q, oc.trans(k), tl.zeros([BM, BN], tl.float32), pending=2)
        p = tl.math.exp2(s)
        acc = oc.mma_wait(acc, 1)
        acc = oc.mma(p.to(tl.float16), v, acc * 0.5, pending=1)
        s = s_next
    acc = oc.mma_wait(acc, 0)
    tl.store(X + tl.arange(0, BM)[:, None] * D + tl.arange(0, D)[None, :], acc)


def test_wgmma_serialization_reports_what_ptxas_says() -> None:
    # The check the attention tests below rely on, on the schedule ptxas serializes.
    k = compile_kernel(p_v_in_flight_at_the_back_edge, {"X": "*fp32", "n": "i32"}, dict(BM=128, BN=64, D=64), 8)
    message = wgmma_serialization(k.asm["ptx"])
    assert message is not None and "accumulator registers" in message, message


def _attention_signature(head_dim: int, rows: int, block_n: int, dtype: str = "fp16") -> dict[str, str]:
    kv = f"tensordesc<{dtype}[{block_n}, {head_dim}]>"
    return {"q_desc": f"tensordesc<{dtype}[{rows}, {head_dim}]>", "k_desc": kv, "v_desc": kv, "Out": f"*{dtype}",
            "sm_scale": "fp32", "N_CTX": "i32"}


@pytest.mark.parametrize("kernel, programs", [("attention64", 3), ("attention128", 2), ("kv_split128", 2),
                                             ("overlap128", 2), ("pingpong128", 1), ("persistent_gemm", 1)])
def test_the_default_tiles_compile_without_spills(kernel: str, programs: int) -> None:
    # ptxas's spills are as silent as its serialization (Triton drops its info lines). The tiles
    # bench.py --vendor runs by default fit their registers, and as many programs per SM as their
    # occupancy argument needs fit in the register file and in shared memory (228 KiB per SM, of
    # which 1 KiB per program is reserved).
    if kernel == "persistent_gemm":
        consts = dict(kernels.PERSISTENT_CONFIG)
        sig = {"a_desc": "tensordesc<fp16[128, 64]>", "b_desc": "tensordesc<fp16[64, 256]>",
               "c_desc": "tensordesc<fp16[128, 256]>", "M": "i32", "N": "i32", "K": "i32"}
        fn = kernels.matmul_persistent_kernel
    elif kernel == "pingpong128":
        consts = dict(kernels.PINGPONG_ATTN_CONFIG, HEAD_DIM=128)
        rows = _attention_signature(128, consts["BLOCK_Q"], consts["BLOCK_N"])
        sig = {name: ty for name, ty in rows.items() if name not in ("Out", "sm_scale", "N_CTX")}
        sig.update({"o_desc": rows["q_desc"], "sm_scale": "fp32", "N_CTX": "i32"})  # the rows go out by TMA
        fn = kernels.attn_fwd_pingpong_kernel
    else:
        head_dim = 64 if kernel == "attention64" else 128
        fn = {"kv_split128": kernels.attn_fwd_kv_split_kernel,
              "overlap128": kernels.attn_fwd_overlap_kernel}.get(kernel, kernels.attn_fwd_kernel)
        consts = dict(kernels.KV_SPLIT_CONFIG if fn is not kernels.attn_fwd_kernel else kernels.ATTN_CONFIGS[head_dim])
        sig = _attention_signature(head_dim, consts["BLOCK_M"], consts["BLOCK_N"])
        consts["HEAD_DIM"] = head_dim
    num_warps = consts.pop("num_warps")
    k = compile_kernel(fn, sig, consts, num_warps)
    report = ptxas_report(k.asm["ptx"])
    assert (report.spill_stores, report.spill_loads, report.serialized) == (0, 0, None), report
    if kernel not in ("persistent_gemm", "pingpong128"):  # (setmaxnreg hands their consumers more than the count)
        allocated = -(-report.registers // 8) * 8  # per thread, in steps of 8
        assert programs * 32 * num_warps * allocated <= 65536, report
    assert programs * (k.metadata.shared + 1024) <= 228 * 1024, k.metadata.shared


def test_ptxas_report_sees_spills() -> None:
    # attn_fwd_overlap_kernel needs 255 registers at head dim 128; held to 128 (Triton's maxnreg)
    # ptxas spills, and the report says so. (The spill trap of a hand compile without the launch's
    # divisibility hints, README.md, was in the ping-pong kernel's pointer epilogue, now a TMA store.)
    cfg = dict(kernels.KV_SPLIT_CONFIG, HEAD_DIM=128)
    num_warps = cfg.pop("num_warps")
    sig = _attention_signature(128, cfg["BLOCK_M"], cfg["BLOCK_N"])
    fits = ptxas_report(compile_kernel(kernels.attn_fwd_overlap_kernel, sig, cfg, num_warps).asm["ptx"])
    attrs = {(i, ): [["tt.divisibility", 16]] for i, t in enumerate(sig.values()) if t != "constexpr"}
    held = triton.compile(ASTSource(kernels.attn_fwd_overlap_kernel, signature=sig, constexprs=cfg, attrs=attrs),
                          target=TARGET, options={"num_warps": num_warps, "maxnreg": 128})
    spilled = ptxas_report(held.asm["ptx"])
    assert (fits.spill_stores, fits.spill_loads) == (0, 0), fits
    assert spilled.registers <= 128 and spilled.spill_stores > 0 and spilled.spill_loads > 0, spilled
    with pytest.raises(RuntimeError, match="ptxas failed on the kernel's PTX"):
        ptxas_report("this is not PTX")


def _one_warp_group_wait_order(loop: str, copies_before_p_v_wait: int = 0) -> None:
    """FlashAttention-3's intra-warpgroup order in one loop body: S_{j+1} issued (pending=1),
    P_j V_j issued (pending=1: S_{j+1} done), the softmax of S_{j+1} while P_j V_j runs, then
    P_j V_j waited for (pending=0). Stages are refilled after that wait, except
    ``copies_before_p_v_wait`` copies into buffers only S reads."""
    dots = [m.start() for m in re.finditer(r"ttng.warp_group_dot ", loop)]
    waits = re.findall(r"ttng.warp_group_dot_wait .*pendings = (\d+)", loop)
    assert len(dots) == 2 and waits == ["1", "1", "0"], (waits, loop)
    last_wait = loop.index("pendings = 0")
    assert dots[1] < loop.index("math.exp2") < last_wait
    assert loop[:last_wait].count("ttng.async_tma_copy_global_to_local") == copies_before_p_v_wait


@pytest.mark.parametrize("head_dim, block_n, dtype", [(64, 64, "fp16"), (128, 64, "fp16"), (128, 64, "bf16"),
                                                      (128, 128, "fp16")])
def test_pipelined_attention_overlaps_softmax_with_the_p_v_wgmma(head_dim: int, block_n: int, dtype: str) -> None:
    bm = 128
    sig = {"q_desc": f"tensordesc<{dtype}[{bm}, {head_dim}]>", "k_desc": f"tensordesc<{dtype}[{block_n}, {head_dim}]>",
           "v_desc": f"tensordesc<{dtype}[{block_n}, {head_dim}]>", "Out": f"*{dtype}", "sm_scale": "fp32",
           "N_CTX": "i32"}
    k = compile_kernel(kernels.attn_fwd_pipelined_kernel, sig, dict(HEAD_DIM=head_dim, BLOCK_M=bm, BLOCK_N=block_n),
                       8)
    ir = body(k.asm["ttgir"])
    ty = {"fp16": "f16", "bf16": "bf16"}[dtype]
    assert re.search(rf"ttg.local_alloc : \(\) -> !ttg.memdesc<3x{block_n}x{head_dim}x{ty}", ir)  # 3 K/V stages
    off_diag, diag = _loops(ir, "j")
    for loop in (off_diag, diag):
        _one_warp_group_wait_order(loop)
        # The refill of block j's stage (with block j+3) follows the wait for P_j V_j.
        assert loop.index("ttng.async_tma_copy_global_to_local") > loop.index("pendings = 0")
    assert "arith.select" not in off_diag and "arith.select" in diag  # the causal mask only on the diagonal
    assert wgmma_serialization(k.asm["ptx"]) is None
    assert k.asm["cubin"]


def _pingpong_partitions(ir: str) -> tuple[str, str, str]:
    """The default partition, the 4-warp second consumer and the 1-warp producer of a ping-pong
    kernel's ttgir, after checking their warp counts and registers (240 / 24 after setmaxnreg)."""
    ws = ir[ir.index("ttg.warp_specialize("):]
    first, second, producer = (ws[:ws.index("partition0(")], ws[ws.index("partition0("):ws.index("partition1(")],
                               ws[ws.index("partition1("):])
    assert re.search(r"requestedRegisters = array<i32: 240, 24>", ir)
    assert re.search(r"partition0\(.*\) num_warps\(4\)", second)
    assert re.search(r"partition1\(.*\) num_warps\(1\)", producer)
    return first, second, producer


def test_pingpong_gemm_has_two_consumer_warp_groups_taking_turns() -> None:
    # Ping-pong: a 4-warp worker holds tensors (its warp count is the kernel's) and multiplies
    # like the default partition; the two take turns through mbarriers.
    cfg = dict(kernels.PINGPONG_CONFIG)
    num_warps = cfg.pop("num_warps")
    k = compile_kernel(kernels.matmul_pingpong_kernel, _persistent_signature("bf16", cfg), cfg, num_warps)
    ir = body(k.asm["ttgir"])
    default, second, producer = _pingpong_partitions(ir)
    for consumer in (default, second):
        assert len(re.findall(r"ttng.warp_group_dot ", consumer)) == 1
        assert "ttng.async_tma_copy_local_to_global" in consumer
        assert len(re.findall(r"ttng.arrive_barrier", consumer)) == 3  # empty (loop, last) and turn
    assert "warp_group_dot" not in producer and len(re.findall(r"async_tma_copy_global_to_local", producer)) == 2
    ptx = k.asm["ptx"]
    assert re.search(r"setmaxnreg\.inc\.sync\.aligned\.u32\s+240;", ptx)
    assert re.search(r"setmaxnreg\.dec\.sync\.aligned\.u32\s+24;", ptx)
    assert k.metadata.shared >= (4 * (128 * 64 + 64 * 128) + 2 * 128 * 128) * 2


@pytest.mark.parametrize("head_dim, block_n, stages", [(64, 64, 3), (128, 64, 3), (64, 128, 3)])
def test_warp_specialized_attention_producer_and_setmaxnreg(head_dim: int, block_n: int, stages: int) -> None:
    bm, dtype = 128, "fp16"
    sig = {"q_desc": f"tensordesc<{dtype}[{bm}, {head_dim}]>", "k_desc": f"tensordesc<{dtype}[{block_n}, {head_dim}]>",
           "v_desc": f"tensordesc<{dtype}[{block_n}, {head_dim}]>", "Out": f"*{dtype}", "sm_scale": "fp32",
           "N_CTX": "i32"}
    k = compile_kernel(kernels.attn_fwd_ws_kernel, sig,
                       dict(HEAD_DIM=head_dim, BLOCK_M=bm, BLOCK_N=block_n, STAGES=stages, PRODUCER_REGS=24), 8)
    ir = body(k.asm["ttgir"])
    ws = ir[ir.index("ttg.warp_specialize("):]
    default, producer = ws[:ws.index("partition0(")], ws[ws.index("partition0("):]
    # The producer issues every copy (Q once, K and V per block); the consumers only wait,
    # multiply in FlashAttention-3's order and release each block's stage after its P V.
    assert len(re.findall(r"ttng.async_tma_copy_global_to_local", producer)) == 3
    assert "async_tma_copy" not in default and "warp_group_dot" not in producer
    off_diag, diag = _loops(default, "j")
    for loop in (off_diag, diag):
        _one_warp_group_wait_order(loop)
        assert loop.index("ttng.arrive_barrier") > loop.index("pendings = 0")
    assert re.search(r"requestedRegisters = array<i32: 24>", ir)
    ptx = k.asm["ptx"]
    assert re.search(r"setmaxnreg\.inc\.sync\.aligned\.u32\s+240;", ptx)
    assert k.metadata.shared <= 227 * 1024
    assert wgmma_serialization(ptx) is None


@pytest.mark.parametrize("sm_scale", [0.0, -0.125, float("inf"), float("nan")])
def test_attention_refuses_a_scale_its_softmax_does_not_hold_for(sm_scale: float) -> None:
    # The kernels take each row's max before scaling, the max of the scaled row only for a
    # positive finite scale; anything else is refused before a launch (CPU tensors suffice).
    import torch

    q = torch.zeros((1, 128, 64), dtype=torch.float16)
    with pytest.raises(ValueError, match="sm_scale must be positive and finite"):
        kernels.attn_fwd(q, q, q, sm_scale)


@pytest.mark.parametrize("head_dim, block_n, stages", [(64, 128, 3), (128, 64, 4), (128, 128, 3)])
def test_pingpong_attention_consumers_take_turns(head_dim: int, block_n: int, stages: int) -> None:
    # FlashAttention-3's full schedule: two 4-warp consumer warp groups, each with its own 64
    # query rows, issue their wgmmas in turns (named barriers) and overlap their softmax with
    # their own P V; one producer warp copies Q and every K/V block once for both.
    dtype = "fp16"
    cfg = dict(kernels.PINGPONG_ATTN_CONFIG, BLOCK_N=block_n, STAGES=stages)
    num_warps = cfg.pop("num_warps")
    sig = {"q_desc": f"tensordesc<{dtype}[{cfg['BLOCK_Q']}, {head_dim}]>",
           "k_desc": f"tensordesc<{dtype}[{block_n}, {head_dim}]>",
           "v_desc": f"tensordesc<{dtype}[{block_n}, {head_dim}]>",
           "o_desc": f"tensordesc<{dtype}[{cfg['BLOCK_Q']}, {head_dim}]>", "sm_scale": "fp32", "N_CTX": "i32"}
    k = compile_kernel(kernels.attn_fwd_pingpong_kernel, sig, dict(cfg, HEAD_DIM=head_dim), num_warps)
    ir = body(k.asm["ttgir"])
    first, second, producer = _pingpong_partitions(ir)
    assert "warp_group_dot" not in producer and len(re.findall(r"async_tma_copy_global_to_local", producer)) == 4
    for consumer in (first, second):
        assert "async_tma_copy_global_to_local" not in consumer
        # Its rows leave through its Q buffer and a TMA store: no shared scratch for a layout
        # conversion, which is what lets 128-key blocks take 3 stages at head dim 128.
        store = consumer.index("ttng.async_tma_copy_local_to_global")
        assert consumer.rindex("ttg.local_store", 0, store) > consumer.rindex("scf.for %j", 0, store)
        assert "ttng.async_tma_store_wait" in consumer[store:]
        for loop in _loops(consumer, "j"):
            _one_warp_group_wait_order(loop)
    # The turns: consumer c waits on named barrier 8 + c (both warp groups, 256 threads) before
    # its two wgmmas and arrives on the other's right after them, before its softmax. Consumer 1
    # arrives on 8 once before its loops (consumer 0 goes first) and consumer 0 waits on 8 once
    # after them (consumer 1's last arrival): per barrier, waits and arrivals pair up.
    for which, consumer in enumerate((first, second)):
        own, other = f"bar.sync {8 + which}, 256;", f"bar.arrive {9 - which}, 256;"
        loops = _loops(consumer, "j")
        for loop in loops:
            dots = [m.start() for m in re.finditer(r"ttng.warp_group_dot ", loop)]
            assert loop.count(own) == 1 and loop.count(other) == 1 and "bar." not in loop.replace(own, "").replace(
                other, "")
            assert loop.index("ttng.wait_barrier") < loop.index(own) < dots[0]
            assert dots[1] < loop.index(other) < loop.index("math.exp2")
            assert loop.count("ttng.arrive_barrier") == 1  # the stage's release, after P_j V_j
        before = consumer[:consumer.index(loops[0])]
        after = consumer[consumer.index(loops[-1]) + len(loops[-1]):]
        assert before.count("bar.arrive 8, 256;") == which and before.count("bar.sync") == 0
        assert after.count("bar.sync 8, 256;") == 1 - which and after.count("bar.arrive") == 0
    assert "bar.sync" not in producer and "bar.arrive" not in producer  # the producer takes no turns
    ptx = k.asm["ptx"]
    for line in ("bar.sync 8, 256;", "bar.sync 9, 256;", "bar.arrive 8, 256;", "bar.arrive 9, 256;"):
        assert line in ptx
    assert wgmma_serialization(ptx) is None
    assert k.metadata.shared <= 227 * 1024


@pytest.mark.parametrize("block_m, block_n", [(128, 64), (64, 128), (64, 64), (128, 128), (128, 32), (32, 128)])
def test_causal_key_blocks_cover_exactly_the_visible_keys(block_m: int, block_n: int) -> None:
    # Against the mask itself: key k is visible to query row r when k <= r.
    for start_m in range(4096 // block_m):
        rows = range(start_m * block_m, (start_m + 1) * block_m)
        blocks = range(4096 // block_n)
        unmasked = [b for b in blocks if all(k <= r for r in rows for k in (b * block_n, (b + 1) * block_n - 1))]
        visible = [b for b in blocks if b * block_n <= rows[-1]]
        n_off, n_blocks = kernels.causal_key_blocks.fn(start_m, block_m, block_n)
        assert (n_off, n_blocks) == (len(unmasked), len(visible)), (start_m, unmasked, visible)
        assert unmasked == list(range(n_off)) and visible == list(range(n_blocks))


def _one_warp_group_tile(kernel, head_dim: int, dtype: str, k_stages: int, v_stages: int):
    """Compile ``kernel`` at KV_SPLIT_CONFIG's tile (one warp group, 64 rows, 128-key blocks), check
    that it holds K in ``k_stages`` and V in ``v_stages`` buffers, and return it with its two key
    block loops (off-diagonal blocks, then those reaching the diagonal)."""
    cfg = kernels.KV_SPLIT_CONFIG
    bm, bn = cfg["BLOCK_M"], cfg["BLOCK_N"]
    ty = {"fp16": "f16", "bf16": "bf16"}[dtype]
    k = compile_kernel(kernel, _attention_signature(head_dim, bm, bn, dtype),
                       dict(HEAD_DIM=head_dim, BLOCK_M=bm, BLOCK_N=bn), cfg["num_warps"])
    ir = body(k.asm["ttgir"])
    for name, stages in (("k", k_stages), ("v", v_stages)):
        assert re.search(rf"%{name}_\w+ = ttg.local_alloc : \(\) -> !ttg.memdesc<{stages}x{bn}x{head_dim}x{ty}", ir)
    loops = _loops(ir, "j")
    assert len(loops) == 2
    return k, loops


@pytest.mark.parametrize("head_dim, dtype", [(128, "fp16"), (128, "bf16"), (64, "fp16")])
def test_attention_with_one_v_buffer(head_dim: int, dtype: str) -> None:
    bn, head_bytes = kernels.KV_SPLIT_CONFIG["BLOCK_N"], head_dim * 2
    k, loops = _one_warp_group_tile(kernels.attn_fwd_kv_split_kernel, head_dim, dtype, k_stages=2, v_stages=1)
    for loop in loops:
        copies = [m.start() for m in re.finditer(r"ttng.async_tma_copy_global_to_local", loop)]
        dots = [m.start() for m in re.finditer(r"ttng.warp_group_dot ", loop)]
        waits = [m.start() for m in re.finditer(r"ttng.wait_barrier", loop)]
        assert len(copies) == 2 and len(dots) == 2 and len(waits) == 2
        # K of block j+1 is copied first, then block j's K is waited for before S; V of block j
        # before P V; and block j+1's V is copied into the one buffer only after P V was waited
        # for (pendings = 0), since that wgmma reads it.
        assert copies[0] < waits[0] < dots[0] < waits[1] < dots[1] < copies[1]
        assert re.findall(r"ttng.warp_group_dot_wait .*pendings = (\d+)", loop) == ["0", "0"]
        assert len(re.findall(rf"ttng.barrier_expect %\w+, {bn * head_bytes}, %\w+", loop)) == 2
    assert k.metadata.shared <= 227 * 1024 // 2  # two programs per SM
    assert wgmma_serialization(k.asm["ptx"]) is None
    assert k.asm["cubin"]


@pytest.mark.parametrize("head_dim, dtype", [(128, "fp16"), (128, "bf16"), (64, "fp16")])
def test_overlapped_attention_with_one_k_buffer(head_dim: int, dtype: str) -> None:
    # attn_fwd_overlap_kernel: FlashAttention-3's intra-warpgroup order with K in one buffer and V
    # in two stages. Each loop issues S_{j+1} once K_{j+1} is in and P_j V_j once V_j is in; refills
    # the K buffer with block j+2 only after S_{j+1} retired (the first wait, pendings = 1) and
    # before the softmax; and refills P_j V_j's V stage only after that wgmma retired (pendings = 0).
    k, loops = _one_warp_group_tile(kernels.attn_fwd_overlap_kernel, head_dim, dtype, k_stages=1, v_stages=2)
    for loop in loops:
        _one_warp_group_wait_order(loop, copies_before_p_v_wait=1)  # K's buffer
        copies = [m.start() for m in re.finditer(r"ttng.async_tma_copy_global_to_local", loop)]
        dots = [m.start() for m in re.finditer(r"ttng.warp_group_dot ", loop)]
        barrier_waits = [m.start() for m in re.finditer(r"ttng.wait_barrier", loop)]
        dot_waits = [m.start() for m in re.finditer(r"ttng.warp_group_dot_wait", loop)]
        assert len(copies) == 2 and len(barrier_waits) == 2
        assert barrier_waits[0] < dots[0] < barrier_waits[1] < dots[1]
        assert dot_waits[1] < copies[0] < loop.index("math.exp2") < dot_waits[2] < copies[1]
    assert "arith.select" not in loops[0] and "arith.select" in loops[1]  # the mask only on the diagonal
    assert k.metadata.shared <= 227 * 1024 // 2  # two programs per SM
    assert wgmma_serialization(k.asm["ptx"]) is None
    assert k.asm["cubin"]


@pytest.mark.parametrize("fn, n_ctx, config, message", [
    (kernels.attn_fwd, 192, None, "must be a multiple of BLOCK_M=64 and of BLOCK_N=128"),
    (kernels.attn_fwd_kv_split, 320, None, "must be a multiple of BLOCK_M=64 and of BLOCK_N=128"),
    (kernels.attn_fwd_overlap, 320, None, "must be a multiple of BLOCK_M=64 and of BLOCK_N=128"),
    (kernels.attn_fwd_pipelined, 256, dict(BLOCK_M=64, BLOCK_N=128, num_warps=4), "itself of BLOCK_N=128"),
])
def test_attention_refuses_shapes_its_tiles_do_not_cover(fn: object, n_ctx: int, config: dict | None,
                                                         message: str) -> None:
    import torch

    q = torch.zeros((1, n_ctx, 64), dtype=torch.float16)
    with pytest.raises(ValueError, match=message):
        fn(q, q, q, 0.125, config)


@pytest.mark.parametrize("n_ctx, config, message", [
    (192, None, "must be a multiple of 2 \\* BLOCK_Q=128"),
    (256, dict(BLOCK_Q=64, BLOCK_N=256, STAGES=2, CONSUMER_REGS=240, PRODUCER_REGS=24, num_warps=4),
     "itself of BLOCK_N=256"),
])
def test_pingpong_attention_refuses_shapes_its_tiles_do_not_cover(n_ctx: int, config: dict | None,
                                                                  message: str) -> None:
    import torch

    q = torch.zeros((1, n_ctx, 64), dtype=torch.float16)
    with pytest.raises(ValueError, match=message):
        kernels.attn_fwd_pingpong(q, q, q, 0.125, config)
    with pytest.raises(ValueError, match="sm_scale must be positive and finite"):
        kernels.attn_fwd_pingpong(q, q, q, -1.0, config)


def test_wgmma_serialization_says_when_ptxas_rejects_the_ptx() -> None:
    with pytest.raises(RuntimeError, match="ptxas failed on the kernel's PTX"):
        wgmma_serialization("this is not PTX")
