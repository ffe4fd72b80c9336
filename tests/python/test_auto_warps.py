"""The transparent mode's warp-count variants (:mod:`triton_ext._launch_options`): the legality
check on real TTGIR compiled for sm_90 at several warp counts; the variants compiled beside the passes
with the counts they name, left out where the count is out of range or the kernel is Gluon's; a
choice of them from disk placed under the launch's own key with its count in the kernel's launch
metadata; their launches timed with that count; a late one dropped alone. Timing on a GPU:
benchmarks/auto_mode_gpu.py (the corpus), benchmarks/launch_option_probe_gpu.py (the lever alone)."""

from __future__ import annotations

import time
from typing import Any, Iterator

import pytest

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from tests.python.test_auto import _mode_calls, host_mode  # noqa: F401 - the fixture
from tests.python.test_auto_outputs import _Mode as _OutputsMode
from triton_ext import _launch_options, _selection, _variants


#: What the mode names a warp-count variant of a kernel with a tt.dot: compiled with the pass that joins it.
JOINED = "nvidia_integer_mma_wrap+"


@triton.jit
def reduce_2d(x, y, AXIS: tl.constexpr, INTEGER: tl.constexpr, ASM: tl.constexpr):
    rows = tl.arange(0, 64)[:, None]
    cols = tl.arange(0, 64)[None, :]
    v = tl.load(x + rows * 64 + cols)
    if INTEGER:
        v = v.to(tl.int32)
    if ASM:
        v = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [v], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(y + tl.arange(0, 64), tl.sum(v, axis=AXIS).to(tl.float32))


def _compiled(fn: Any, signature: dict[str, str], constexprs: dict[str, Any], num_warps: int) -> str:
    """``fn``'s TTGIR for sm_90 at ``num_warps`` (the count in its launch metadata too)."""
    kernel = triton.compile(ASTSource(fn, signature, constexprs), target=GPUTarget("cuda", 90, 32),
                            options={"num_warps": num_warps})
    assert kernel.metadata.num_warps == num_warps
    return kernel.asm["ttgir"]


def ttgir(num_warps: int, axis: int, integer: bool = False, asm: bool = False) -> str:
    signature = {"x": "*fp32", "y": "*fp32", "AXIS": "constexpr", "INTEGER": "constexpr", "ASM": "constexpr"}
    return _compiled(reduce_2d, signature, {"AXIS": axis, "INTEGER": integer, "ASM": asm}, num_warps)


def test_a_float_sum_keeps_its_order_only_where_the_warps_along_its_axis_do_not_change() -> None:
    # At 4 warps Triton lays 64x64 out as warpsPerCTA = [2, 2]; at 8 as [4, 2], at 2 as [1, 2]:
    # the warps along axis 1 stay two (same tree per row), those along axis 0 do not.
    along_rows = ttgir(4, axis=1)
    assert "warpsPerCTA = [2, 2]" in along_rows
    assert _launch_options.reorders(along_rows, ttgir(8, axis=1)) is None
    assert _launch_options.reorders(along_rows, ttgir(2, axis=1)) is None
    why = _launch_options.reorders(ttgir(4, axis=0), ttgir(8, axis=0))
    assert why is not None and why.startswith("a tt.reduce along axis 0 would combine in another order")
    assert "warpsPerCTA[0] = 2" in why and "warpsPerCTA[0] = 4" in why


def test_an_integer_sum_is_exact_in_any_order_and_inline_assembly_is_refused() -> None:
    assert _launch_options.reorders(ttgir(4, axis=0, integer=True), ttgir(8, axis=0, integer=True)) is None
    assert _launch_options.reorders(ttgir(4, axis=1, asm=True), ttgir(8, axis=1, asm=True)) == (
        "the kernel has inline assembly, which may depend on the lanes it runs on")
    # A kernel whose reductions do not match one for one (another compile path) is refused too.
    assert _launch_options.reorders(ttgir(4, axis=1), ttgir(8, axis=1).replace('"tt.reduce"', '"tt.reduce_x"')) == (
        "0 reductions and scans against 1 with the launch's own options")


@triton.jit
def tile_product(a, b, c, IN_DTYPE: tl.constexpr):
    rows = tl.arange(0, 64)[:, None]
    cols = tl.arange(0, 64)[None, :]
    x = tl.load(a + rows * 64 + cols).to(IN_DTYPE)
    y = tl.load(b + rows * 64 + cols).to(IN_DTYPE)
    tl.store(c + rows * 64 + cols, tl.dot(x, y).to(tl.float32))


@triton.jit
def rotate_rows(x, c, s, HALF: tl.constexpr):
    # RoPE's shape: a row of cos/sin broadcast over a tile of rows, updated in place.
    cols = tl.arange(0, HALF)
    rows = tl.arange(0, 32)[:, None] * (2 * HALF) + cols[None, :]
    cos, sin = tl.load(c + cols), tl.load(s + cols)
    a = tl.load(x + rows).to(tl.float32)
    b = tl.load(x + rows + HALF).to(tl.float32)
    tl.store(x + rows, (a * cos - b * sin).to(tl.float16))
    tl.store(x + rows + HALF, (b * cos + a * sin).to(tl.float16))


def test_a_product_that_changes_instruction_is_refused() -> None:
    # Hopper's warp-group MMA needs 4 warps; at 2 Triton uses Ampere's mma.sync, which rounds
    # float sums otherwise (seen on an H100: torchao's HQQ GEMM, fla's gated-delta backward) and
    # saturates int8 sums (.satfinite) that wgmma wraps: equal only until a sum leaves int32.
    def product(dtype: Any, num_warps: int) -> str:
        return _compiled(tile_product, {"a": "*fp32", "b": "*fp32", "c": "*fp32", "IN_DTYPE": "constexpr"},
                         {"IN_DTYPE": dtype}, num_warps)

    fp16 = product(tl.float16, 4)
    assert "ttng.warp_group_dot" in fp16
    why = _launch_options.reorders(fp16, product(tl.float16, 2))
    assert why is not None and why.startswith("its matrix multiplies change instruction")
    assert _launch_options.reorders(fp16, product(tl.float16, 8)) is None  # warp-group MMA both ways
    int8 = _launch_options.reorders(product(tl.int8, 4), product(tl.int8, 2))
    assert int8 is not None and int8.startswith("its matrix multiplies change instruction")
    assert _launch_options.reorders(product(tl.int8, 4), product(tl.int8, 8)) is None


def _int8_product(num_warps: int, wrap: bool = False) -> dict[str, str]:
    """``tile_product`` over int8 for sm_90 at ``num_warps``: its TTGIR and PTX, with the pass that makes
    integer MMA sums wrap (registry ``joins: [num_warps]``) where ``wrap``."""
    import triton_ext

    src = ASTSource(tile_product, {"a": "*fp32", "b": "*fp32", "c": "*fp32", "IN_DTYPE": "constexpr"},
                    {"IN_DTYPE": tl.int8})
    with triton_ext.enabled(*(["nvidia_integer_mma_wrap"] if wrap else [])):
        asm = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": num_warps}).asm
    return {"ttgir": asm["ttgir"], "ptx": asm["ptx"]}


def test_an_integer_product_may_change_instruction_where_both_kernels_sums_wrap() -> None:
    # 4 warps: wgmma (wraps); 2 and 1: mma.sync, which Triton writes with .satfinite (saturates).
    def why(stock: dict[str, str], variant: dict[str, str], ptx: bool = True) -> str | None:
        return _launch_options.reorders(stock["ttgir"], variant["ttgir"], *((stock["ptx"], variant["ptx"]) if ptx else ()))

    four, two, two_wrapping = _int8_product(4), _int8_product(2), _int8_product(2, wrap=True)
    assert ".satfinite.s32" in two["ptx"] and ".satfinite" not in two_wrapping["ptx"]
    assert why(four, two_wrapping) is None  # sums modulo 2^32: equal in any order, on any instruction
    assert why(four, two).startswith("one kernel's integer products saturate a sum that the other's wrap")
    assert why(four, two_wrapping, ptx=False).startswith("its matrix multiplies change instruction")  # unseen: refused
    # The launch's own kernel saturates (2 warps): a wrapping variant differs from it past int32,
    # whether its instruction changes (4 warps) or not (1 warp).
    assert why(two, _int8_product(4)) == "one kernel's integer products saturate a sum that the other's wrap"
    assert why(two, _int8_product(1, wrap=True)) == "one kernel's integer products saturate a sum that the other's wrap"
    assert why(two, _int8_product(1)) is None  # both saturate, per element in the same order
    # Float sums round differently on another instruction, PTX or not.
    fp16 = [_compiled(tile_product, {"a": "*fp32", "b": "*fp32", "c": "*fp32", "IN_DTYPE": "constexpr"},
                      {"IN_DTYPE": tl.float16}, w) for w in (4, 2)]
    assert _launch_options.reorders(*fp16, four["ptx"].replace("s8", "f16"), two_wrapping["ptx"]).startswith(
        "its matrix multiplies change instruction")


def test_a_warp_variant_is_named_with_the_passes_that_join_it(warps_mode: Any) -> None:
    auto = warps_mode
    assert auto.joining["num_warps"] == ["nvidia_integer_mma_wrap"] and auto.joining["num_stages"] == []
    with_dot, without = "%2 = tt.dot %0, %1, %c", "%2 = arith.addi %0, %1"
    assert auto.joined("num_warps/2", with_dot) == "nvidia_integer_mma_wrap+num_warps/2"
    assert auto.joined("num_warps/2", without) == "num_warps/2"  # needs_ops: [tt.dot]
    assert auto.joined("num_stages_plus_1", with_dot) == "num_stages_plus_1"
    assert auto.joined("grid_swizzle", with_dot) == "grid_swizzle"
    assert auto.selection("nvidia_integer_mma_wrap+num_warps/2").names() == ("nvidia_integer_mma_wrap",)
    assert auto.selection("grid_swizzle+nvidia_integer_mma_wrap+num_warps*2").names() == (
        "grid_swizzle", "nvidia_integer_mma_wrap")
    with pytest.raises(KeyError):
        auto.selection("nvidia_occupancy_hint+num_warps/2")  # neither a candidate nor a joining pass


def test_a_variant_that_converts_layouts_more_than_the_kernel_is_refused() -> None:
    def rotated(num_warps: int) -> str:
        return _compiled(rotate_rows, {"x": "*fp16", "c": "*fp32", "s": "*fp32", "HALF": "constexpr"},
                         {"HALF": 64}, num_warps)

    four = rotated(4)
    assert _launch_options.reorders(four, rotated(2)) == (
        "it converts layouts 2 times where the no-pass kernel does 0 times")
    assert _launch_options.reorders(four, rotated(8)) is None


def test_names_counts_and_combinations(monkeypatch: pytest.MonkeyPatch) -> None:
    from triton.runtime.driver import driver

    from tests.python.test_autotune import HostOnly

    monkeypatch.setattr(driver, "_active", HostOnly())  # the backend's default count: sm_90's
    assert _launch_options.split("loop_split+num_warps*2") == (["loop_split"], "num_warps*2")
    with pytest.raises(KeyError):
        _launch_options.split("num_warps*2+num_warps/2")
    assert [_launch_options.warps_for(v, 4) for v in ("", "num_warps/2", "num_warps*2")] == [4, 2, 8]
    assert _launch_options.warps_for("num_warps/2", 1) is None and _launch_options.warps_for("num_warps*2", 16) is None
    assert _launch_options.launch_kwargs(None, "grid_swizzle+num_warps/2", {"num_warps": 8, "BLOCK": 64}) == {
        "num_warps": 4, "BLOCK": 64}
    assert _launch_options.launch_kwargs(None, "num_warps*2", {})["num_warps"] == 2 * _launch_options.default_warps()
    # Two warp counts never run together: the combination takes the best pass instead.
    assert _launch_options.combinable(["num_warps*2", "num_warps/2", "grid_swizzle"]) == ["num_warps*2", "grid_swizzle"]
    assert _launch_options.combinable(["num_warps*2", "num_warps/2"]) == ["num_warps*2"]
    assert _launch_options.combinable(["grid_swizzle", "num_warps*2"]) == ["grid_swizzle", "num_warps*2"]


def test_a_gluon_kernel_gets_no_warp_count_variant() -> None:
    from tests.corpus.corpus_kernels import BY_NAME

    gluon = BY_NAME["gluon_axpy"].fn
    assert gluon.is_gluon()
    assert _launch_options.warps_for("num_warps*2", 4, gluon) is None
    assert _launch_options.launch_kwargs(gluon, "num_warps/2", {"num_warps": 4}) is None
    assert _launch_options.launch_kwargs(gluon, "", {"num_warps": 4}) == {"num_warps": 4}


def mode_with_options(monkeypatch: pytest.MonkeyPatch, warps: bool, stages: bool) -> Iterator[Any]:
    """The host mode (fixture ``host_mode``) started again with the launch-option variants asked for."""
    from concurrent.futures import wait

    from triton_ext import _auto

    monkeypatch.setenv("TRITON_EXT_AUTO_WARPS", str(int(warps)))
    monkeypatch.setenv("TRITON_EXT_AUTO_STAGES", str(int(stages)))
    # These tests count what compiles; on a loaded host the no-pass compile can take over a
    # quarter of the default 6 s budget, and the warp counts are then rightly left out (seen with
    # 8 test workers on 2 cores). The budget's own rules are tested with `settings.scope`.
    monkeypatch.setenv("TRITON_EXT_AUTO_BUDGET_S", "120")
    _auto.deactivate()
    auto = _auto.activate(["grid_swizzle"])
    yield auto
    wait(auto.pending)


@pytest.fixture
def warps_mode(host_mode: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:  # noqa: F811
    yield from mode_with_options(monkeypatch, warps=True, stages=False)


def compiled_option(launch: Any, option: str) -> list[int]:
    """The ``option`` (``num_warps``, ``num_stages``) of every kernel compiled while ``launch`` runs, sorted."""
    seen: list[int] = []
    triton.knobs.compilation.listener = lambda src, metadata, **_: seen.append(metadata[option])
    try:
        _mode_calls(launch)
    finally:
        triton.knobs.compilation.listener = None
    return sorted(seen)


def compiled_addmm(option: str, **launch_options: int) -> list[int]:
    """:func:`compiled_option` for a launch of ``test_auto_backup``'s ``addmm`` (a dot loop)."""
    from tests.python.test_auto_backup import _inputs, addmm

    a, b, bias, out = _inputs()
    return compiled_option(lambda: addmm[(2, 2)](a, b, bias, out, 32, 32, 32, *bias.stride(), BLOCK=16,
                                                 **launch_options), option)


@pytest.mark.parametrize("num_warps", [None, 1, 16])
def test_the_mode_compiles_half_and_twice_the_launchs_warps(warps_mode: Any, num_warps: int | None) -> None:
    compiled = compiled_addmm("num_warps", **({} if num_warps is None else {"num_warps": num_warps}))
    (decision,) = warps_mode.decisions
    base = num_warps or _launch_options.default_warps()
    # no pass, grid_swizzle, and each count within 1..16 (none past it: compiled counts only)
    expected = {1: [1, 1, 2], 16: [8, 16, 16]}.get(num_warps, [base // 2, base, base, base * 2])
    assert compiled == expected
    in_range = [v for v in _launch_options.WARP_VARIANTS if _launch_options.warps_for(v, base) is not None]
    # addmm has a tt.dot: its warp counts are compiled with the pass that joins them (registry `joins`).
    assert decision.applicable == ["grid_swizzle", *(JOINED + v for v in in_range)]
    assert sorted(decision.same_as_stock) == sorted(JOINED + v for v in set(_launch_options.WARP_VARIANTS) - set(in_range))
    # No GPU: the timing fails and no variant is kept, as for the passes.
    assert decision.choice == "" and decision.error.startswith("timing failed, no pass kept")


def choice_from_disk(mode: Any, choice: str, **saved: Any) -> tuple[Any, Any]:
    """Launch ``addmm`` under ``mode``, write ``choice`` (and ``saved``) as its decision on disk, start
    the mode again and launch again: the kernels under the launch's own JIT key before and after
    (the second from disk; a third launch must stay on Triton's own path)."""
    import json

    from tests.python.test_auto_backup import _addmm, _inputs
    from triton_ext import _auto

    inputs = _inputs()
    _mode_calls(lambda: _addmm(*inputs))
    ref, device, key = mode.placed[-1]
    fn = ref()
    stock = fn.device_caches[device][0][key]
    path = mode.decision_path(fn, key, device)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"choice": choice, **saved}))
    _auto.deactivate()
    auto = _auto.activate(["grid_swizzle"])
    assert _mode_calls(lambda: _addmm(*inputs)) >= {"_auto.on_miss", "_auto._decide"}
    assert [(d.choice, d.from_disk) for d in auto.decisions] == [(choice, True)]
    chosen = fn.device_caches[device][0][key]
    assert _mode_calls(lambda: _addmm(*inputs)) == set()  # later launches: Triton's own path
    return stock, chosen


def test_a_warp_count_chosen_on_disk_is_placed_under_the_launchs_own_key(warps_mode: Any) -> None:
    stock, chosen = choice_from_disk(warps_mode, "grid_swizzle+num_warps*2")
    assert stock.metadata.num_warps == _launch_options.default_warps()
    # the launch's key, the variant's launch metadata
    assert chosen.metadata.num_warps == 2 * _launch_options.default_warps()
    assert "ttg.num-warps\" = 8" in chosen.asm["ttgir"]


def test_a_warp_count_still_compiling_at_the_budget_is_dropped_alone(warps_mode: Any,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.python.test_auto_backup import _addmm, _inputs
    from triton_ext._settings import settings

    # However long the no-pass compile took, the warp counts compile (the rule tested below is off).
    monkeypatch.setattr(_variants, "WARPS_COMPILE_SHARE", float("inf"))
    with settings.scope(auto_budget_s=0.0):
        _mode_calls(lambda: _addmm(*_inputs()))
    (decision,) = warps_mode.decisions
    # The pass's lateness keeps no pass, as before; the warp counts are only reported.
    assert decision.error == ("over the first-launch budget of 0 s (TRITON_EXT_AUTO_BUDGET_S) while compiling "
                              "grid_swizzle: no pass kept")
    late = "still compiling when the first-launch budget of 0 s ran out"
    assert decision.failed == {JOINED + v: late for v in _launch_options.WARP_VARIANTS}


def test_a_kernel_slow_to_compile_gets_no_warp_count(warps_mode: Any) -> None:
    from tests.python.test_auto_backup import _addmm, _inputs
    from triton_ext._settings import settings

    # A budget whose quarter the no-pass compile (about 0.1-1 s here, from an empty cache) exceeds.
    with settings.scope(auto_budget_s=0.04):
        _mode_calls(lambda: _addmm(*_inputs()))
    (decision,) = warps_mode.decisions
    for variant in (JOINED + v for v in _launch_options.WARP_VARIANTS):
        assert decision.failed[variant].startswith("not compiled: the kernel took ")
        assert decision.failed[variant].endswith("s to compile, over a quarter of the first-launch budget of 0.04 s")


class _Mode(_OutputsMode):
    """The mode as :func:`triton_ext._variants.time_variants` sees it, with real warp-count kwargs."""

    def launch_kwargs(self, fn: Any, variant: str, kwargs: dict[str, Any]) -> dict[str, Any] | None:
        return _launch_options.launch_kwargs(fn, variant, kwargs)


def test_warp_counts_are_timed_with_their_count_and_one_that_reorders_is_never_launched(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from triton_ext._backup import ArgumentBackup

    mode = _Mode(["", "num_warps/2", "num_warps*2"])
    launched: list[tuple[str, int]] = []

    def run(*_: Any, num_warps: int, **__: Any) -> None:  # JITFunction.run, with the launch's count
        launched.append((next(v for v, s in mode.selections.items() if _selection.current() is s), num_warps))

    def reading(go: Any, **_: Any) -> float:
        go()
        return {4: 1.0, 2: 0.5, 8: 0.8}[launched[-1][1]]

    monkeypatch.setattr(_variants, "flush_buffer", lambda: None)  # no GPU here
    monkeypatch.setattr(_variants, "gpu_time_ms", reading)
    monkeypatch.setattr(_variants, "back_to_back_ms", lambda go, calls, windows: reading(go))
    stock, halved = ttgir(4, axis=0), ttgir(2, axis=0)  # a column sum: 2 warps regroup it
    kernels = {"": type("K", (), {"asm": {"ttgir": stock}})(),
               "num_warps/2": type("K", (), {"asm": {"ttgir": halved}})(),
               "num_warps*2": type("K", (), {"asm": {"ttgir": stock}})()}
    decision = _variants.Decision("k", "", applicable=["num_warps/2", "num_warps*2"])
    _variants.time_variants(mode, run, object(), 0, (), {"num_warps": 4}, (1,), kernels, decision,
                            ArgumentBackup.of([]),
                            time.perf_counter() + 60.0)
    # The faster num_warps/2 would sum the columns in another order: dropped before any launch.
    assert list(decision.changed_outputs) == ["num_warps/2"]
    assert ("num_warps/2", 2) not in launched
    assert decision.choice == "num_warps*2" and ("num_warps*2", 8) in launched and ("", 4) in launched
    assert set(launched) == {("", 4), ("num_warps*2", 8)}


@pytest.mark.parametrize("pass_alone", ["same conversions", "fewer conversions"])
def test_a_combination_with_a_winning_count_is_checked_against_its_passes_alone(monkeypatch: pytest.MonkeyPatch,
                                                                                 pass_alone: str) -> None:
    # num_warps/2 wins, then grid_swizzle: their combination is checked against grid_swizzle's
    # kernel, which it must match layout for layout, not only against the winner (whose count it
    # shares by construction). Here the combination converts layouts twice where grid_swizzle
    # alone, in the second case, converts once.
    from triton_ext._backup import ArgumentBackup

    combo = "grid_swizzle+num_warps/2"
    times = {"": 1.0, "num_warps/2": 0.7, "grid_swizzle": 0.8, combo: 0.5}
    conversions = {"": 2, "num_warps/2": 2, "grid_swizzle": 2 if pass_alone == "same conversions" else 1, combo: 2}

    class Mode(_Mode):
        def variant_kernel(self, fn: Any, variant: str, *_: Any) -> Any:
            return type("K", (), {"asm": {"ptx": variant, "ttgir": "ttg.convert_layout " * conversions[variant]}})()

    mode = Mode(["", "grid_swizzle", "num_warps/2", combo])

    def reading(go: Any, **_: Any) -> float:
        go()
        return times[mode.current()]

    monkeypatch.setattr(_variants, "flush_buffer", lambda: None)  # no GPU here
    monkeypatch.setattr(_variants, "gpu_time_ms", reading)
    monkeypatch.setattr(_variants, "back_to_back_ms", lambda go, calls, windows: reading(go))
    kernels = {v: mode.variant_kernel(None, v) for v in ("", "grid_swizzle", "num_warps/2")}
    decision = _variants.Decision("k", "", applicable=["grid_swizzle", "num_warps/2"])
    _variants.time_variants(mode, lambda *a, **k: None, object(), 0, (), {"num_warps": 4}, (1,), kernels, decision,
                            ArgumentBackup.of([]), time.perf_counter() + 60.0)
    if pass_alone == "same conversions":
        assert decision.choice == combo and decision.changed_outputs == {}
    else:
        assert decision.choice == "num_warps/2" and combo not in decision.timings_ms
        assert decision.changed_outputs == {combo: "it converts layouts 2 times where the no-pass kernel does 1 times"}


def test_the_setting_leaves_them_out(host_mode: Any) -> None:  # noqa: F811
    # TRITON_EXT_AUTO_WARPS=0 (the host_mode fixture): the passes only, and decisions on disk
    # are keyed apart from those made with the warp counts (the variants' names are in the key).
    assert [n for n, _ in host_mode.variants] == ["", "grid_swizzle"]
