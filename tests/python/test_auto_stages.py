"""The transparent mode's pipeline-depth variants (``num_stages_minus_1``, ``num_stages_plus_1``;
:mod:`triton_ext._launch_options`, off with ``TRITON_EXT_AUTO_STAGES=0``): their names and depths;
the legality check on real sm_90 TTGIR of loops with a matrix multiply, alone and feeding a float
sum, compiled at several depths (pipelining moves loads, never arithmetic, so the check must accept
them); the mode compiling them beside the passes, each with the depth it names; a choice of one
from disk placed under the launch's own key. Timing on a GPU: benchmarks/auto_mode_gpu.py, and
the lever alone benchmarks/launch_option_probe_gpu.py --option num_stages."""

from __future__ import annotations

from typing import Any, Iterator

import pytest

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from tests.python.test_auto import host_mode  # noqa: F401 - the fixture
from tests.python.test_auto_warps import choice_from_disk, compiled_addmm, compiled_option, mode_with_options
from triton_ext import _launch_options as options


@triton.jit
def looped_product(a, b, c, K, BLOCK: tl.constexpr):
    rows = tl.arange(0, BLOCK)[:, None]
    cols = tl.arange(0, BLOCK)[None, :]
    acc = tl.zeros((BLOCK, BLOCK), tl.float32)
    for k in range(0, K, BLOCK):
        x = tl.load(a + rows * K + k + cols)
        y = tl.load(b + (k + rows) * BLOCK + cols)
        acc += tl.dot(x, y)
    tl.store(c + rows * BLOCK + cols, acc)


@triton.jit
def looped_product_and_sum(a, b, c, s, K, BLOCK: tl.constexpr):
    rows = tl.arange(0, BLOCK)[:, None]
    cols = tl.arange(0, BLOCK)[None, :]
    acc = tl.zeros((BLOCK, BLOCK), tl.float32)
    total = tl.zeros((BLOCK,), tl.float32)
    for k in range(0, K, BLOCK):
        x = tl.load(a + rows * K + k + cols)
        y = tl.load(b + (k + rows) * BLOCK + cols)
        product = tl.dot(x, y)
        total += tl.sum(product, axis=1)  # a float sum over the product's layout, as attention's
        acc += product
    tl.store(c + rows * BLOCK + cols, acc)
    tl.store(s + tl.arange(0, BLOCK), total)


@triton.jit
def looped_rounded_product(a, b, c, K, BLOCK: tl.constexpr, PURE: tl.constexpr):
    # The correctly rounded multiply LoopSplit puts in attention loops (its text, as inline PTX).
    rows = tl.arange(0, BLOCK)[:, None]
    cols = tl.arange(0, BLOCK)[None, :]
    acc = tl.zeros((BLOCK, BLOCK), tl.float32)
    for k in range(0, K, BLOCK):
        x = tl.load(a + rows * K + k + cols)
        y = tl.load(b + (k + rows) * BLOCK + cols)
        product = tl.dot(x, y)
        acc += tl.inline_asm_elementwise("mul.rn.f32 $0, $1, $2;", "=f,f,f", [product, product], dtype=tl.float32,
                                         is_pure=PURE, pack=1)
    tl.store(c + rows * BLOCK + cols, acc)


@triton.jit
def looped_sum(x, y, K, BLOCK: tl.constexpr):
    # A loop of plain loads: Triton 3.9 pipelines loads that feed a matrix multiply, not these.
    acc = tl.zeros((BLOCK,), tl.float32)
    for k in range(0, K, BLOCK):
        acc += tl.load(x + k + tl.arange(0, BLOCK))
    tl.store(y + tl.arange(0, BLOCK), acc)


def _ttgir(fn: Any, signature: dict[str, str], num_stages: int) -> str:
    # Pointers and sizes 16-divisible, as the JIT specializes them for aligned tensors: only then
    # are the loads wide enough to copy asynchronously, which pipelining needs.
    divisible = {(i,): [["tt.divisibility", 16]] for i, kind in enumerate(signature.values()) if kind != "constexpr"}
    kernel = triton.compile(ASTSource(fn, signature, {"BLOCK": 64}, divisible), target=GPUTarget("cuda", 90, 32),
                            options={"num_warps": 4, "num_stages": num_stages})
    return kernel.asm["ttgir"]


def test_names_depths_and_combinations(monkeypatch: pytest.MonkeyPatch) -> None:
    from triton.runtime.driver import driver

    from tests.python.test_autotune import HostOnly

    monkeypatch.setattr(driver, "_active", HostOnly())  # the backend's default depth: sm_90's
    assert options.STAGE_VARIANTS == ("num_stages_minus_1", "num_stages_plus_1")
    assert all("+" not in name for name in options.STAGE_VARIANTS)  # "+" joins a combination's parts
    assert options.split("loop_split+num_stages_plus_1") == (["loop_split"], "num_stages_plus_1")
    with pytest.raises(KeyError, match="at most one launch-option variant"):
        options.split("num_warps*2+num_stages_minus_1")
    assert [options.stages_for(v, 3) for v in ("", "num_stages_minus_1", "num_stages_plus_1")] == [3, 2, 4]
    assert options.stages_for("num_stages_minus_1", 1) is None
    assert options.stages_for("num_stages_plus_1", options.MAX_STAGES) is None
    assert options.stages_for("num_warps*2", 3) == 3 and options.warps_for("num_stages_plus_1", 4) == 4
    assert options.launch_kwargs(None, "grid_swizzle+num_stages_minus_1", {"num_stages": 4, "BLOCK": 64}) == {
        "num_stages": 3, "BLOCK": 64}
    assert options.launch_kwargs(None, "num_stages_plus_1", {})["num_stages"] == options.default_stages() + 1
    # A depth and a warp count never run together: the combination takes the best pass instead.
    assert options.combinable(["num_stages_plus_1", "num_warps/2", "grid_swizzle"]) == ["num_stages_plus_1",
                                                                                         "grid_swizzle"]
    gluon = type("GluonKernel", (), {"is_gluon": lambda self: True})()
    assert options.launch_kwargs(gluon, "num_stages_plus_1", {"num_stages": 3}) is None


@pytest.mark.parametrize("kernel, signature", [
    (looped_product, {"a": "*fp16", "b": "*fp16", "c": "*fp32", "K": "i32", "BLOCK": "constexpr"}),
    (looped_product_and_sum, {"a": "*fp16", "b": "*fp16", "c": "*fp32", "s": "*fp32", "K": "i32",
                              "BLOCK": "constexpr"}),
])
def test_the_check_accepts_other_pipeline_depths(kernel: Any, signature: dict[str, str]) -> None:
    # Pipelining prefetches a loop's loads into shared memory (Triton 3.9 pipelines loops that
    # feed a matrix multiply; others compile alike at every depth, so their variants are never
    # timed); the products and the float sum combine in the same order at every depth, so the
    # check must refuse none.
    by_depth = {stages: _ttgir(kernel, signature, stages) for stages in (1, 2, 3, 4)}
    assert len({by_depth[2], by_depth[3], by_depth[4]}) == 3  # each depth changes the kernel
    for stages in (1, 2, 4):
        assert options.reorders(by_depth[3], by_depth[stages]) is None, stages


def test_inline_assembly_passes_the_check_only_where_a_depth_leaves_it_as_it_was() -> None:
    # Inline assembly may read its lane: a depth keeps every layout, so the same pure text runs on
    # the same elements at the same lanes (loop_split with one stage more on SGLang's extend
    # attention was refused before for its rounded multiply alone); other warps move elements to
    # other lanes, and an impure one may depend on where the schedule puts it.
    signature = {"a": "*fp16", "b": "*fp16", "c": "*fp32", "K": "i32", "BLOCK": "constexpr", "PURE": "constexpr"}
    divisible = {(i,): [["tt.divisibility", 16]] for i in range(4)}

    def compiled(num_stages: int, num_warps: int = 4, pure: bool = True) -> str:
        source = ASTSource(looped_rounded_product, signature, {"BLOCK": 64, "PURE": pure}, divisible)
        kernel = triton.compile(source, target=GPUTarget("cuda", 90, 32),
                                options={"num_warps": num_warps, "num_stages": num_stages})
        return kernel.asm["ttgir"]

    by_depth = {stages: compiled(stages) for stages in (2, 3, 4)}
    assert len(set(by_depth.values())) == 3 and all("mul.rn.f32" in t for t in by_depth.values())
    assert options.reorders(by_depth[3], by_depth[2]) is None and options.reorders(by_depth[3], by_depth[4]) is None
    refused = "the kernel has inline assembly, which may depend on the lanes it runs on"
    assert options.reorders(by_depth[3], compiled(3, num_warps=8)) == refused
    assert options.reorders(compiled(3, pure=False), compiled(4, pure=False)) == refused
    # Assembly the no-pass kernel does not have (another text) is refused too.
    assert options.reorders(by_depth[3], by_depth[4].replace("mul.rn.f32", "mul.rz.f32")) == refused


@pytest.fixture
def stages_mode(host_mode: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:  # noqa: F811
    yield from mode_with_options(monkeypatch, warps=False, stages=True)


def test_on_unless_turned_off(host_mode: Any, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    from triton_ext._settings import settings

    assert not any(options.split(n)[1] for n, _ in host_mode.variants)  # TRITON_EXT_AUTO_STAGES=0 there
    monkeypatch.delenv("TRITON_EXT_AUTO_STAGES")
    assert settings.auto_stages


@pytest.mark.parametrize("num_stages", [None, 1])
def test_the_mode_compiles_one_stage_less_and_one_more(stages_mode: Any, num_stages: int | None) -> None:
    compiled = compiled_addmm("num_stages", **({} if num_stages is None else {"num_stages": num_stages}))
    (decision,) = stages_mode.decisions
    base = num_stages or options.default_stages()
    in_range = [v for v in options.STAGE_VARIANTS if options.stages_for(v, base) is not None]
    # no pass, grid_swizzle (no pass's depth), and each depth within 1..MAX_STAGES
    assert compiled == sorted([base, base, *(options.stages_for(v, base) for v in in_range)])
    assert set(decision.same_as_stock) >= set(options.STAGE_VARIANTS) - set(in_range)
    # No GPU: the timing fails and no variant is kept, as for the passes.
    assert decision.choice == "" and decision.error.startswith("timing failed, no pass kept")


def test_a_kernel_without_a_loop_gets_no_depth_compiled(stages_mode: Any) -> None:
    import torch

    from tests.python.test_auto import scale  # one load, one multiply, one store: nothing to pipeline

    assert options.may_change("num_stages_plus_1", "scf.for %i = ...") and options.may_change("num_warps/2", "")
    assert not options.may_change("num_stages_plus_1", "tt.func @k() { tt.return }")
    x, y = torch.zeros(1024), torch.zeros(1024)
    compiled = compiled_option(lambda: scale[(8,)](x, y, 1024, BLOCK=128), "num_stages")
    (decision,) = stages_mode.decisions
    assert compiled == [options.default_stages()]  # no pass only (grid_swizzle needs a dot)
    assert set(options.STAGE_VARIANTS) <= set(decision.same_as_stock) and decision.applicable == []


def test_a_depth_that_leaves_the_ttgir_as_it_was_stops_before_llvm(stages_mode: Any,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # Only make_ttgir reads num_stages, so a depth whose TTGIR is the no-pass kernel's can only
    # rebuild that kernel: its compile stops there, before make_llir, LLVM and ptxas.
    import torch
    from triton.backends.nvidia.compiler import CUDABackend

    lowered: list[int] = []
    make_llir = CUDABackend.make_llir

    def counting(self: Any, src: Any, metadata: Any, opt: Any, capability: Any) -> Any:
        lowered.append(opt.num_stages)
        return make_llir(self, src, metadata, opt, capability)

    monkeypatch.setattr(CUDABackend, "make_llir", counting)
    assert options.settled_stage("num_stages_plus_1") == "ttgir" and options.settled_stage("num_warps*2") is None
    x, y = torch.zeros(4096), torch.zeros(128)
    compiled = compiled_option(lambda: looped_sum[(1,)](x, y, 4096, BLOCK=128), "num_stages")
    (decision,) = stages_mode.decisions
    base = options.default_stages()
    assert compiled == [base] and lowered == [base]  # the no-pass kernel alone reached make_llir
    assert set(options.STAGE_VARIANTS) <= set(decision.same_as_stock) and decision.applicable == []


def test_a_depth_chosen_on_disk_is_placed_under_the_launchs_own_key(stages_mode: Any) -> None:
    stock, chosen = choice_from_disk(stages_mode, "num_stages_plus_1")
    assert chosen is not stock and chosen.asm["ttgir"] != stock.asm["ttgir"]  # the deeper kernel
    assert chosen.metadata.num_stages == stock.metadata.num_stages + 1
