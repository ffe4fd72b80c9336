"""The transparent mode's CPU-testable parts (issues 19.2, 27): ``TRITON_EXT_ENABLE=auto[:a,b]``
parsing and activation at import; the decision at the JIT's cache miss (``JITFunction._do_compile``
wrapped, put back; warmup compiles left undecided); a decided launch running no code of the
mode, with no pass or a chosen pass (from disk); variants whose LLVM IR is the stock one stopped
before ptxas; the first-launch budget; logging and ``triton-ext auto report``; the decision
rules. Launches use the host-only driver (``HostOnly``): the JIT specializes and compiles through
cubin as on a GPU host, and the final ``kernel.run`` raises for want of a GPU. Timing variants
needs a GPU: ``benchmarks/auto_mode_gpu.py``, ``benchmarks/auto_overhead.py``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import triton
import triton.language as tl
from triton.runtime.driver import driver
from triton.runtime.jit import JITFunction, MockTensor

from tests.python.conftest import REPO
from tests.python.test_autotune import HostOnly
from triton_ext.testing import require_built

BUILD = Path(os.environ.get("TRITON_EXT_BUILD_DIR") or REPO / "build")
needs_build = pytest.mark.usefixtures("grid_swizzle_built")


@pytest.fixture
def grid_swizzle_built() -> None:
    require_built("grid_swizzle")  # an unbuilt plugin fails the test, never skips it


def test_parse() -> None:
    from triton_ext._auto import parse

    assert parse(("auto",)) == ()
    assert parse(("auto:grid_swizzle", "loop_split")) == ("grid_swizzle", "loop_split")
    assert parse(("grid_swizzle",)) is None and parse(()) is None


def _child(enable: str, code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TRITON_EXT_ENABLE": enable, "TRITON_EXT_REGISTRY": str(REPO / "registry.yaml"),
           "TRITON_EXT_BUILD_DIR": str(BUILD), "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)


@needs_build
def test_environment_activates_and_deactivate_restores() -> None:
    code = ("import triton_ext\nfrom triton.runtime.jit import JITFunction\nfrom triton_ext import _auto\n"
            "a = _auto.active()\nprint([n for n, _ in a.variants], hasattr(JITFunction._do_compile, '__wrapped__'))\n"
            "_auto.deactivate()\nprint(hasattr(JITFunction._do_compile, '__wrapped__'), _auto.active())\n")
    out = _child("auto:grid_swizzle,loop_split", code)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.splitlines() == ["['', 'grid_swizzle', 'loop_split', 'num_warps/2', 'num_warps*2', "
                                       "'num_stages_minus_1', 'num_stages_plus_1'] True", "False None"]
    # Bare auto: every built optimization pass, no sanitizer.
    out = _child("auto", code)
    assert out.returncode == 0, out.stderr[-3000:]
    names = eval(out.stdout.splitlines()[0].rsplit(" ", 1)[0])
    assert "grid_swizzle" in names and "loop_split" in names and "nan_inf_check" not in names
    # A misspelled candidate stops the import with the registry's message.
    out = _child("auto:grid_swizle", "import triton_ext")
    assert out.returncode != 0 and "unknown pass 'grid_swizle'" in out.stderr and "did you mean 'grid_swizzle'" in out.stderr


@triton.jit
def scale(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs, mask=offs < n) * 2, mask=offs < n)


@pytest.fixture
def host_mode(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    from triton_ext import _auto

    require_built("grid_swizzle")
    monkeypatch.setenv("TRITON_EXT_REGISTRY", str(REPO / "registry.yaml"))
    monkeypatch.setenv("TRITON_EXT_BUILD_DIR", str(BUILD))
    monkeypatch.setenv("TRITON_EXT_AUTO_DIR", str(tmp_path / "auto"))
    # The launch-option variants have their own tests (test_auto_warps.py, test_auto_stages.py);
    # these are the passes'.
    monkeypatch.setenv("TRITON_EXT_AUTO_WARPS", "0")
    monkeypatch.setenv("TRITON_EXT_AUTO_STAGES", "0")
    monkeypatch.setattr(triton.knobs.cache, "dir", str(tmp_path / "cache"), raising=False)
    monkeypatch.setattr(driver, "_active", HostOnly())
    original = (JITFunction.run, JITFunction._do_compile)
    from tests.python.test_auto_backup import addmm

    for fn in (scale, addmm):  # compiled kernels of earlier tests (in memory) would hide compiles
        fn.device_caches.clear()
    auto = _auto.activate(["grid_swizzle"])
    try:
        yield auto
    finally:
        _auto.deactivate()
    assert (JITFunction.run, JITFunction._do_compile) == original
    from triton_ext import _selection

    assert _selection.state.process.key_and_hash == ("", "")  # the marker leaves with the mode


def test_warmup_compiles_stock_and_leaves_the_decision_to_the_first_launch(host_mode: Any) -> None:
    # A warmup compile: the stock kernel, no decision, and not kept under the mode's key, so the
    # first real launch decides.
    kernel = scale.warmup(MockTensor(tl.float32), MockTensor(tl.float32), 1024, BLOCK=128, grid=(1,))
    assert "tt.func public @scale" in kernel.asm["ttir"] and host_mode.decisions == []
    assert dict(scale.device_caches[0][0]) == {}


# -- the decision rule (pure functions over per-round timings, ms) ---------------------------------


def test_spread_is_range_over_median() -> None:
    from triton_ext._auto import spread

    assert spread([1.0, 1.0, 1.0]) == 0.0
    assert spread([0.9, 1.0, 1.2]) == pytest.approx(0.3)
    with pytest.raises(ValueError, match="no timings"):
        spread([])


def test_a_win_smaller_than_the_spread_keeps_no_pass() -> None:
    from triton_ext._auto import MARGIN, choose, paired_ratios, winners

    # 3% faster by the medians, but slower than no pass in two of five rounds: the gain is inside
    # the rounds' spread, so no pass is kept (the first rule, "median 1% below no pass's median",
    # chose the pass here).
    noisy = {"": [1.00, 0.95, 1.02, 1.00, 0.97], "nvidia_auto_pdl": [0.97, 0.98, 0.96, 0.97, 0.99]}
    assert paired_ratios(noisy, "nvidia_auto_pdl")[1] < 1
    assert choose(noisy) == "" and winners(noisy) == []
    # The same 3% in every round, even with drift between rounds that a range over each
    # variant's own rounds would call noise, is a real win: the pairs cancel the drift.
    drifting = {"": [1.00, 1.06, 0.98, 1.03, 1.00], "nvidia_auto_pdl": [0.97, 1.03, 0.95, 1.0, 0.97]}
    assert choose(drifting) == "nvidia_auto_pdl"
    # One bad round loses, however large the other rounds' gains.
    assert choose({"": [1.0] * 5, "grid_swizzle": [0.80, 0.80, 1.02, 0.80, 0.80]}) == ""
    # Never less than MARGIN at the median, even when faster in every round.
    assert choose({"": [1.0] * 5, "loop_split": [1.0 - MARGIN / 2] * 5}) == ""
    assert choose({"": [1.0] * 5, "loop_split": [1.0 - 2 * MARGIN] * 5}) == "loop_split"


def test_winners_are_sorted_fastest_first_and_slower_passes_never_win() -> None:
    from triton_ext._auto import choose, winners

    timings = {"": [1.0] * 5, "a": [0.95] * 5, "b": [0.90] * 5, "c": [1.10] * 5, "d": [0.995] * 5}
    assert winners(timings) == ["b", "a"]
    assert choose(timings) == "b"
    assert choose({"": [1.0] * 3}) == ""
    with pytest.raises(ValueError, match="no pass"):
        winners({"a": [1.0]})


@needs_build
def test_a_combination_of_two_candidates_is_one_pass_set(monkeypatch: pytest.MonkeyPatch) -> None:
    from triton_ext import _auto

    monkeypatch.setenv("TRITON_EXT_REGISTRY", str(REPO / "registry.yaml"))
    monkeypatch.setenv("TRITON_EXT_BUILD_DIR", str(BUILD))
    auto = _auto.activate(["grid_swizzle", "loop_split"])
    try:
        pair = auto.selection("grid_swizzle+loop_split")
        assert sorted(e.spec.name for e in pair.entries) == ["grid_swizzle", "loop_split"]
        # Its own cache key, distinct from either pass alone and from no pass; built once.
        keys = {auto.selection(v).key for v in ("", "grid_swizzle", "loop_split", "grid_swizzle+loop_split")}
        assert len(keys) == 4 and auto.selection("grid_swizzle+loop_split") is pair
        with pytest.raises(KeyError):  # a choice on disk naming a pass that is no candidate: tune again
            auto.selection("grid_swizzle+nvidia_auto_pdl")
    finally:
        _auto.deactivate()


def _mode_calls(launch: Any) -> set[str]:
    """The triton_ext functions a launch calls (Python calls only; ``sys.setprofile``)."""
    seen: set[str] = set()
    package = str(REPO / "triton_ext")

    def profile(frame: Any, event: str, _: Any) -> None:
        if event == "call" and frame.f_code.co_filename.startswith(package):
            seen.add(f"{Path(frame.f_code.co_filename).stem}.{frame.f_code.co_name}")

    sys.setprofile(profile)
    try:
        launch()
    except AttributeError:  # the host-only driver cannot launch: everything before kernel.run ran
        pass
    finally:
        sys.setprofile(None)
    return seen


def test_a_decided_launch_runs_no_code_of_the_mode_whatever_was_chosen(host_mode: Any) -> None:
    from tests.python.test_auto_backup import _addmm, _inputs
    from triton_ext import _auto

    inputs = _inputs()
    first = _mode_calls(lambda: _addmm(*inputs))  # the cache miss: the mode decides (no GPU: no pass)
    assert "_auto.on_miss" in first and [d.choice for d in host_mode.decisions] == [""]
    # Later launches are Triton's own path: no code of ours at all, not even the stages hook,
    # whose slot stays empty (it was lent for the decision only), so the key is the stock one.
    assert triton.knobs.runtime.add_stages_inspection_hook is None
    assert _mode_calls(lambda: _addmm(*inputs)) == set()
    ref, device, key = host_mode.placed[-1]
    fn = ref()
    stock = fn.device_caches[device][0][key]
    assert "custom_pipeline" not in key and "tt.func public @addmm" in stock.asm["ttir"]
    # A decision on disk that chose grid_swizzle: the next activation puts that kernel under the
    # same key, behind the guard that runs it at launches of its size (test_auto_launch_size.py);
    # up to that guard's run(), which the host-only driver never reaches, no code of the mode runs.
    path = host_mode.decision_path(fn, key, device)
    path.parent.mkdir(parents=True)
    path.write_text('{"choice": "grid_swizzle"}')
    _auto.deactivate()
    assert key not in fn.device_caches[device][0]  # the mode's kernels leave with it
    auto = _auto.activate(["grid_swizzle"])
    assert _mode_calls(lambda: _addmm(*inputs)) >= {"_auto.on_miss", "_auto._decide"}
    assert [(d.choice, d.from_disk) for d in auto.decisions] == [("grid_swizzle", True)]
    chosen = fn.device_caches[device][0][key]
    assert chosen.asm["ttir"] != stock.asm["ttir"] and chosen is not stock
    assert chosen.stock.asm["ttir"] == stock.asm["ttir"] and chosen.side(2, 2) is chosen.chosen
    assert _mode_calls(lambda: _addmm(*inputs)) == set()
    assert fn.device_caches[device][0][key] is chosen and triton.knobs.runtime.add_stages_inspection_hook is None


def test_launches_while_a_background_compile_holds_the_hook_keep_the_decided_kernel(host_mode: Any) -> None:
    # A compile the budget left running in the background lends the stages hook for seconds, and
    # every launch meanwhile keys through it. A decided launch must still run its choice then
    # (2026-12-05 H200, c9a7c42: SGLang's extend attention ran stock while its combination
    # compiled), and an undecided one the stock kernel, with no decision until the hook is back.
    from tests.python.test_auto_backup import _addmm, _inputs, _launch_without_gpu
    from triton_ext import _auto, _selection, _triton

    import torch

    inputs = _inputs()
    _launch_without_gpu(lambda: _addmm(*inputs))
    ref, device, key = host_mode.placed[-1]
    fn = ref()
    path = host_mode.decision_path(fn, key, device)
    path.parent.mkdir(parents=True)
    path.write_text('{"choice": "grid_swizzle"}')
    _auto.deactivate()
    auto = _auto.activate(["grid_swizzle"])
    _launch_without_gpu(lambda: _addmm(*inputs))
    chosen = fn.device_caches[device][0][key]
    assert [d.choice for d in auto.decisions] == ["grid_swizzle"]
    cache = fn.device_caches[device][0]
    with _selection.lend_hook():  # what a pending variant compile holds
        assert triton.knobs.runtime.add_stages_inspection_hook is not None
        _launch_without_gpu(lambda: _addmm(*inputs))
        lent = [k for k in cache if auto.marker.hash in k]
        assert len(lent) == 1 and _triton.key_without_hook(lent[0], auto.marker.hash) == key
        assert cache[lent[0]] is chosen  # the decided kernel, not a stock compile
        x, y = torch.zeros(1024), torch.zeros(1024)
        _launch_without_gpu(lambda: scale[(8,)](x, y, 1024, BLOCK=128))  # never launched: stock, undecided
        lent_scale = [k for k in scale.device_caches[0][0] if auto.marker.hash in k]
        assert len(lent_scale) == 1 and "tt.func public @scale" in scale.device_caches[0][0][lent_scale[0]].asm["ttir"]
    assert [d.kernel for d in auto.decisions] == ["addmm"]
    _launch_without_gpu(lambda: scale[(8,)](x, y, 1024, BLOCK=128))  # the hook is back: now it is decided
    assert [d.kernel for d in auto.decisions] == ["addmm", "scale"]
    _auto.deactivate()
    assert not any(auto.marker.hash in k for k in (*cache, *scale.device_caches[0][0]))  # taken out too


def test_an_autotuned_kernel_is_decided_once_for_the_config_its_autotuner_picks(host_mode: Any) -> None:
    # Triton's autotuner times every config (Autotuner._bench): those launches get the stock
    # kernel, in the JIT's cache only while their config is timed, and no decision; the config it
    # picks is decided at its own launch right after. Before, every config was decided: an
    # autotuner of 45 configs compiled and timed every candidate pass 45 times in one launch.
    from triton.runtime.autotuner import Autotuner

    from tests.python.test_auto_backup import _inputs, addmm
    from triton_ext import _auto

    timed: list[tuple[int, int, bool]] = []  # per config: decisions so far, kernels cached, BLOCK 32

    def do_bench(kernel_call: Any, quantiles: Any) -> list[float]:
        with pytest.raises(AttributeError):  # compiled; the host-only driver cannot launch it
            kernel_call()
        kernels = list(addmm.device_caches[0][0].values())
        timed.append((len(host_mode.decisions), len(kernels), "end = 32 : i32" in kernels[0].asm["ttir"]))
        return [2.0 - len(timed)] * 3  # the second config (BLOCK=32) is the fastest

    tuned = triton.autotune([triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})], key=["M"],
                            do_bench=do_bench)(addmm)
    a, b, bias, out = _inputs()
    with pytest.raises(AttributeError):
        tuned[(2, 2)](a, b, bias, out, 32, 32, 32, *bias.stride())
    # Each config timed on its stock kernel, alone in the cache (the one before taken out), no decision.
    assert timed == [(0, 1, False), (0, 1, True)]
    assert tuned.best_config.kwargs == {"BLOCK": 32}
    (decision,) = host_mode.decisions  # the picked config, decided at its own launch
    ref, device, key = host_mode.placed[-1]
    # Under stock keys (the variants' compiles are cached under their own) only the picked config.
    stock_keys = [k for k in addmm.device_caches[0][0] if "custom_pipeline" not in k]
    assert ref() is addmm and stock_keys == [key]
    assert "end = 32 : i32" in addmm.device_caches[0][0][key].asm["ttir"]
    assert decision.kernel == "addmm" and decision.specialization == _auto._short(key)
    # Later launches of that specialization: Triton's autotuner (its cache) and the JIT's fast path.
    assert _mode_calls(lambda: tuned[(2, 2)](a, b, bias, out, 32, 32, 32, *bias.stride())) == set()
    _auto.deactivate()
    assert not hasattr(Autotuner._bench, "__wrapped__")  # put back with the mode


@pytest.fixture
def host_mode_two(host_mode: Any) -> Any:
    from triton_ext import _auto

    require_built("loop_split")
    _auto.deactivate()
    auto = _auto.activate(["grid_swizzle", "loop_split"])
    yield auto
    from concurrent.futures import wait

    wait(auto.pending)


def test_a_variant_whose_ttir_is_stock_stops_before_make_ttgir(host_mode_two: Any,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from triton.backends.nvidia.compiler import CUDABackend

    from tests.python.test_auto_backup import _addmm, _inputs

    seen: list[str] = []
    ttgir: list[str] = []
    make_ttgir = CUDABackend.make_ttgir

    def counted(mod: Any, metadata: dict, *rest: Any) -> Any:
        ttgir.append("make_ttgir")
        return make_ttgir(mod, metadata, *rest)

    monkeypatch.setattr(CUDABackend, "make_ttgir", staticmethod(counted))
    triton.knobs.compilation.listener = lambda src, metadata, **_: seen.append(metadata["hash"])
    try:
        _mode_calls(lambda: _addmm(*_inputs()))
    finally:
        triton.knobs.compilation.listener = None
    (decision,) = host_mode_two.decisions
    # loop_split (a make_ttir pass) leaves this kernel (no condition in its loop) as it was: its
    # TTIR is the no-pass kernel's, so its compile stopped there, before make_ttgir, make_llir,
    # PTX codegen and ptxas; grid_swizzle applies.
    assert decision.same_as_stock == ["loop_split"] and decision.applicable == ["grid_swizzle"]
    assert len(seen) == 2  # finished compiles: no pass and grid_swizzle (the listener runs at the end)
    assert len(ttgir) == 2  # no pass and grid_swizzle; loop_split never got there


def test_the_stop_compares_each_stage_from_the_last_with_a_pass() -> None:
    from types import SimpleNamespace

    from triton_ext import _variants

    stock = SimpleNamespace(num_warps=4, num_ctas=1, shared=0, launch_pdl=False, launch_cooperative_grid=False)
    asm = {"ttir": "TTIR", "ttgir": "TTGIR", "llir": "LLIR"}  # the no-pass kernel's IR of each stage
    ran: list[str] = []

    def stage(name: str) -> Any:  # a stage that outputs the stock IR of its stage
        return lambda src, metadata: ran.append(name) or name.upper()

    def run(last: str, ttir_out: str, metadata: dict) -> list[str]:
        ran.clear()
        stages = {name: stage(name) for name in ("ttgir", "llir", "ptx")}
        _variants.stop_if_stock(asm, stock, last)(stages)
        src = ttir_out
        try:
            for name in ("ttgir", "llir", "ptx"):
                src = stages[name](src, metadata)
        except _variants.SameAsStock:
            ran.append("stopped")
        return list(ran)

    plain = {"num_warps": 4, "num_ctas": 1, "shared": 0}
    # A make_ttir pass that changed nothing: stopped before make_ttgir.
    assert run("ttir", "TTIR", {}) == ["stopped"]
    # One that asked for PDL (launch metadata) is not the stock kernel, whatever its IR.
    assert run("ttir", "TTIR", {"launch_pdl": True}) == ["ttgir", "llir", "ptx"]
    # A change that make_ttgir undoes is caught at the next comparison.
    assert run("ttir", "changed", plain) == ["ttgir", "stopped"]
    # A make_ttgir pass: its TTIR says nothing, the TTGIR does.
    assert run("ttgir", "TTIR", plain) == ["ttgir", "stopped"]
    # A make_llir pass: the LLVM IR and the launch dimensions that make_llir computed.
    assert run("llir", "TTIR", plain) == ["ttgir", "llir", "stopped"]
    assert run("llir", "TTIR", {**plain, "shared": 1024}) == ["ttgir", "llir", "ptx"]


def test_compile_unless_stock_is_the_modes_stop_for_benchmarks() -> None:
    from triton_ext.testing import compile_through_cubin, compile_unless_stock

    require_built("loop_split", "nvidia_auto_pdl")
    signature = {"x": "*fp32", "y": "*fp32", "n": "i32"}
    stock = compile_through_cubin(scale, signature, {"BLOCK": 128})
    # loop_split finds no loop in this kernel: stopped as the stock kernel, after make_ttir.
    assert compile_unless_stock(scale, signature, {"BLOCK": 128}, passes=("loop_split",), stock=stock) is None
    # nvidia_auto_pdl adds its wait and asks for PDL: compiled through cubin.
    pdl = compile_unless_stock(scale, signature, {"BLOCK": 128}, passes=("nvidia_auto_pdl",), stock=stock)
    assert pdl is not None and pdl.metadata.launch_pdl and pdl.asm["cubin"]


def test_the_first_launch_budget_keeps_no_pass(host_mode_two: Any) -> None:
    from tests.python.test_auto_backup import _addmm, _inputs
    from triton_ext._settings import settings

    with settings.scope(auto_budget_s=0.0):
        _mode_calls(lambda: _addmm(*_inputs()))
    (decision,) = host_mode_two.decisions
    assert decision.choice == "" and decision.error == (
        "over the first-launch budget of 0 s (TRITON_EXT_AUTO_BUDGET_S) while compiling grid_swizzle, loop_split: "
        "no pass kept")
    ref, device, key = host_mode_two.placed[-1]
    assert not host_mode_two.decision_path(ref(), key, device).exists()  # not recorded: a later process tunes


@pytest.mark.parametrize("late", [None, "grid_swizzle+loop_split"])
def test_a_choice_made_while_the_combination_compiled_is_kept_on_disk_with_it(host_mode_two: Any,
                                                                              monkeypatch: pytest.MonkeyPatch,
                                                                              late: str | None) -> None:
    # The timing itself needs a GPU: here it only returns what a decision at the deadline returns.
    from tests.python.test_auto_backup import _addmm, _inputs
    from triton_ext import _auto

    def timed(auto: Any, run: Any, fn: Any, device: int, args: Any, kwargs: Any, grid: Any, kernels: Any,
              decision: Any, backup: Any, deadline: float) -> None:
        decision.choice, decision.late_combination = "grid_swizzle", late

    monkeypatch.setattr(_auto, "time_variants", timed)
    _mode_calls(lambda: _addmm(*_inputs()))
    (decision,) = host_mode_two.decisions
    assert decision.choice == "grid_swizzle" and decision.error is None
    ref, device, key = host_mode_two.placed[-1]
    # Kept for later processes, with the combination still to time against the winner (before,
    # not kept: the next process decided again from scratch and could lose the winner to noise).
    saved = json.loads(host_mode_two.decision_path(ref(), key, device).read_text())
    assert saved["choice"] == "grid_swizzle" and saved["late_combination"] == late


@pytest.mark.parametrize("follow_up", ["combination kept", "timing failed", "over budget", "backup refused"])
def test_the_next_activation_times_a_late_combination_and_keeps_what_it_found(host_mode_two: Any,
                                                                              monkeypatch: pytest.MonkeyPatch,
                                                                              follow_up: str) -> None:
    from tests.python.test_auto_backup import _addmm, _inputs
    from triton_ext import _auto
    from triton_ext._settings import settings

    combo = "grid_swizzle+loop_split"
    _mode_calls(lambda: _addmm(*_inputs()))  # a first decision places the kernel: its key and path
    ref, device, key = host_mode_two.placed[-1]
    path = host_mode_two.decision_path(ref(), key, device)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"choice": "grid_swizzle", "late_combination": combo, "applicable": ["grid_swizzle"]}))
    if follow_up not in ("over budget", "backup refused"):  # the timing needs a GPU: here it returns what it would find
        def timed(auto: Any, run: Any, fn: Any, device: int, args: Any, kwargs: Any, grid: Any, kernel: Any,
                  decision: Any, backup: Any, deadline: float) -> None:
            assert decision.choice == "grid_swizzle" and decision.late_combination == combo
            decision.late_combination = None
            if follow_up == "combination kept":
                decision.choice = combo
            else:
                decision.error = "timing failed, no pass kept: RuntimeError: x"

        monkeypatch.setattr(_auto, "time_combination", timed)
    _auto.deactivate()
    auto = _auto.activate(["grid_swizzle", "loop_split"])
    asked: list[str] = []  # the variants whose kernels this launch asked for, in order
    kernel_of = auto.variant_kernel

    def spied(fn: Any, variant: str, *rest: Any) -> Any:
        if threading.current_thread() is threading.main_thread():  # not the pool's compile
            asked.append(variant)
        return kernel_of(fn, variant, *rest)

    monkeypatch.setattr(auto, "variant_kernel", spied)
    try:
        # Over budget: the real follow-up, no time to wait. Backup refused: the arguments reach more
        # than the cap, so the combination cannot be timed; the winner from disk needs no backup.
        with settings.scope(auto_budget_s=0.0 if follow_up == "over budget" else 60.0,
                            auto_backup_mb=0.001 if follow_up == "backup refused" else 1024.0):
            _mode_calls(lambda: _addmm(*_inputs()))
        (decision,) = auto.decisions
        saved = json.loads(path.read_text())
        # The launch runs the follow-up's choice, and the file now holds it: later processes load it.
        expected = combo if follow_up == "combination kept" else "grid_swizzle"
        assert decision.choice == saved["choice"] == expected and not decision.from_disk
        # The winner from disk; then the combination's kernel only where it won (the winner's is at hand);
        # then no pass's, which the chosen kernel's guard runs at launches of the other size.
        assert asked == ["grid_swizzle"] + ([combo] if follow_up == "combination kept" else []) + [""]
        # Still compiling at the deadline, or not timed: the winner holds and the combination waits.
        assert saved["late_combination"] == (combo if follow_up in ("over budget", "backup refused") else None)
        if follow_up == "backup refused":
            assert "not timed" in decision.error and "TRITON_EXT_AUTO_BACKUP_MB" in decision.error
    finally:
        from concurrent.futures import wait

        wait(auto.pending)


def test_the_budget_starts_after_the_no_pass_compile(host_mode_two: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    from tests.python.test_auto_backup import _addmm, _inputs
    from triton_ext._settings import settings

    # A no-pass compile of 100 s (vLLM's prefix-prefill attention took 7.7 s on the H200 host):
    # the clock jumps while it runs. A stock launch pays it too, so the mode's budget of 60 s
    # starts after it and the variants are compiled and tried rather than given up.
    clock, jump = time.perf_counter, [0.0]
    monkeypatch.setattr(time, "perf_counter", lambda: clock() + jump[0])
    auto_type = type(host_mode_two)
    compile_variant = auto_type.variant_kernel

    def slow_no_pass(self: Any, fn: Any, variant: str, *rest: Any) -> Any:
        kernel = compile_variant(self, fn, variant, *rest)
        if variant == "":
            jump[0] += 100.0
        return kernel

    monkeypatch.setattr(auto_type, "variant_kernel", slow_no_pass)
    with settings.scope(auto_budget_s=60.0):
        _mode_calls(lambda: _addmm(*_inputs()))
    (decision,) = host_mode_two.decisions
    assert decision.applicable == ["grid_swizzle"] and decision.same_as_stock == ["loop_split"]
    assert "budget" not in (decision.error or ""), decision.error


def test_a_variant_whose_passes_need_operations_the_kernel_lacks_is_not_compiled(host_mode_two: Any,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    # grid_swizzle needs a dot and loop_split a loop (registry needs_ops): this kernel has
    # neither, so only its no-pass kernel compiles, and no variant is timed.
    asked: list[str] = []
    kernel_of = host_mode_two.variant_kernel
    monkeypatch.setattr(host_mode_two, "variant_kernel", lambda fn, variant, *rest: asked.append(variant)
                        or kernel_of(fn, variant, *rest))
    x, y = torch.zeros(1024), torch.zeros(1024)
    _mode_calls(lambda: scale[(8,)](x, y, 1024, BLOCK=128))
    (decision,) = host_mode_two.decisions
    assert asked == [""] and decision.same_as_stock == ["grid_swizzle", "loop_split"] and decision.choice == ""


def test_each_decision_is_logged_and_reported_from_disk(host_mode: Any, tmp_path: Path,
                                                        caplog: pytest.LogCaptureFixture,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    import logging

    import torch

    from triton_ext.dev import auto_report

    x, y = torch.zeros(1024), torch.zeros(1024)
    with caplog.at_level(logging.INFO, logger="triton_ext.auto"):
        _mode_calls(lambda: scale[(8,)](x, y, 1024, BLOCK=128))
    # grid_swizzle leaves a 1-D elementwise kernel as it was: no pass, decided without timing.
    (decision,) = host_mode.decisions
    assert decision.same_as_stock == ["grid_swizzle"] and decision.choice == "" and decision.error is None
    assert [r.getMessage().split(" in ")[0] for r in caplog.records] == [f"scale [{decision.specialization}]: no pass"]
    assert len(decision.specialization) == 12
    assert auto_report.main(["report", "--dir", str(tmp_path / "auto")]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"1 decision(s) in {tmp_path / 'auto'}\n  scale: no pass (first launch ")
    assert "same as no pass: grid_swizzle" in out


def test_the_report_lists_the_variants_it_dropped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from triton_ext.dev import auto_report

    record = {"kernel": "kl_div", "choice": "loop_split", "applicable": ["loop_split"],
              "timings_ms": {"": 0.0735, "loop_split": 0.0695}, "same_as_stock": [],
              "failed": {"nvidia_pipeline_streams": "OutOfResources: out of resource: shared memory"},
              "changed_outputs": {"grid_swizzle": "3 of 4096 bytes differ from the no-pass kernel's outputs"},
              "late_combination": "grid_swizzle+loop_split", "compile_s": 0.412,
              "phases_s": {"check": 0.021, "rounds": 0.8, "back_to_back": 0.1}, "launch_size": "waves"}
    (tmp_path / "kl_div.json").write_text(json.dumps(record))
    assert auto_report.main(["report", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "  kl_div: loop_split at launches waves, no pass at the others (first launch " in out
    assert "    could not compile or launch, dropped: nvidia_pipeline_streams: OutOfResources: out of resource" in out
    assert ("    changed the outputs, dropped: grid_swizzle: 3 of 4096 bytes differ from the no-pass kernel's "
            "outputs") in out
    assert ("    still compiling when chosen, timed against the choice at the next launch: "
            "grid_swizzle+loop_split") in out
    assert ("    first launch, seconds: compiling variants 0.41, check 0.02, rounds 0.80, back to back 0.10\n"
            in out)


def test_the_report_marks_and_removes_decisions_the_mode_no_longer_reads(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from triton_ext._auto import DECISION_FORMAT
    from triton_ext.dev import auto_report

    current = {"kernel": "topk", "choice": "", "launch_bound": True, "format": DECISION_FORMAT}
    (tmp_path / "topk-new.json").write_text(json.dumps(current))
    (tmp_path / "topk-old.json").write_text(json.dumps({"kernel": "topk", "choice": "num_warps/2"}))
    (tmp_path / "topk-v2.json").write_text(json.dumps({"kernel": "topk", "choice": "num_warps/2", "format": 2}))
    assert auto_report.main(["report", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"3 decision(s) in {tmp_path}, 2 stale (older rules: not read;")
    assert out.count("[stale: older rules, not read]") == 2
    assert "  topk: no pass (first launch 0.00 s, GPU ?)\n    launch-bound: " in out
    assert auto_report.main(["report", "--dir", str(tmp_path), "--remove-stale"]) == 0
    assert "removed (stale: older rules): " in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["topk-new.json"]
    assert auto_report.main(["report", "--dir", str(tmp_path), "--json"]) == 0
    (record,) = json.loads(capsys.readouterr().out)
    assert record["stale"] is False and record["launch_bound"] is True
    # A file edited by hand: its line says so, and the others are still listed.
    (tmp_path / "edited.json").write_text(json.dumps({"kernel": "k", "choice": "", "first_launch_s": "slow"}))
    assert auto_report.main(["report", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"  unreadable: {tmp_path / 'edited.json'}: a field holds what the mode never writes (ValueError: " in out
    assert "  topk: no pass (first launch 0.00 s, GPU ?)" in out


def test_a_decision_file_names_the_rules_it_was_timed_by(host_mode: Any, tmp_path: Path) -> None:
    import json

    import torch

    from triton_ext._auto import DECISION_FORMAT

    x, y = torch.zeros(1024), torch.zeros(1024)
    _mode_calls(lambda: scale[(8,)](x, y, 1024, BLOCK=128))
    (path,) = (tmp_path / "auto").glob("*.json")
    assert json.loads(path.read_text())["format"] == DECISION_FORMAT


def test_a_pass_must_win_back_to_back_too() -> None:
    from triton_ext._auto import choose_in_both

    # Issue 27's reduction: nvidia_occupancy_hint 1.2x faster in isolated GPU time, 2.4x slower per
    # launch back to back. It wins the GPU rounds and loses where the kernel runs: no pass.
    gpu = {"": [0.0236, 0.0237, 0.0235], "nvidia_occupancy_hint": [0.0197, 0.0198, 0.0196]}
    b2b = {"": [0.0236, 0.0240, 0.0238], "nvidia_occupancy_hint": [0.0586, 0.0590, 0.0581]}
    assert choose_in_both(gpu, b2b) == ""
    # A pass that wins both is kept; of two, the faster on GPU time among those winning back to back.
    gpu2 = {"": [1.0] * 3, "grid_swizzle": [0.8] * 3, "loop_split": [0.9] * 3}
    assert choose_in_both(gpu2, {"": [1.0] * 3, "grid_swizzle": [0.85] * 3, "loop_split": [0.95] * 3}) == "grid_swizzle"
    assert choose_in_both(gpu2, {"": [1.0] * 3, "grid_swizzle": [1.0] * 3, "loop_split": [0.95] * 3}) == "loop_split"
    # Back to back within the noise (faster in two rounds of three): not a win.
    assert choose_in_both(gpu2, {"": [1.0] * 3, "grid_swizzle": [0.9, 0.9, 1.01], "loop_split": [1.0] * 3}) == ""


class _SlowCombination:
    """A transparent mode (:class:`triton_ext._variants.Tuner`) whose two passes each won their
    rounds and whose combination compiles slowly: it blocks until ``release`` is set."""

    def __init__(self) -> None:
        import threading

        from triton_ext._selection import Selection

        self.variants = [("", Selection()), ("grid_swizzle", Selection()), ("loop_split", Selection())]
        self.pending: list[Any] = []
        self.release = threading.Event()
        self.compiled: list[str] = []

    def selection(self, variant: str) -> Any:
        from triton_ext._selection import Selection

        return Selection()

    def variant_kernel(self, fn: Any, variant: str, *_: Any) -> Any:
        self.release.wait(timeout=30)
        self.compiled.append(variant)
        return type("Kernel", (), {"asm": {"ptx": variant}})()

    def launch_kwargs(self, fn: Any, variant: str, kwargs: dict[str, Any]) -> dict[str, Any]:
        return kwargs


@pytest.mark.parametrize("budget_left_s", [2.0, 60.0])
def test_the_combination_of_two_winners_compiles_within_the_budget(monkeypatch: pytest.MonkeyPatch,
                                                                   budget_left_s: float) -> None:
    # Two passes that win alone are tried together, which needs one more full compile (about 6 s
    # for vLLM's prefix-prefill on the H200 host). It runs on the pool, bounded by the first-launch
    # budget: before, it ran inline and could add its whole compile on top of the budget.
    import time

    from triton_ext import _variants
    from triton_ext._backup import ArgumentBackup

    rounds = {"": [1.0] * 4, "grid_swizzle": [0.8] * 4, "loop_split": [0.9] * 4, "grid_swizzle+loop_split": [0.7] * 4}
    monkeypatch.setattr(_variants, "flush_buffer", lambda: None)  # no GPU here: the rounds are given
    monkeypatch.setattr(_variants, "interleaved_rounds",
                        lambda variants, *_, **__: {v: rounds[v] for v in variants})
    auto = _SlowCombination()
    kernels = {v: type("Kernel", (), {"asm": {"ptx": v}})() for v in ("", "grid_swizzle", "loop_split")}
    decision = _variants.Decision("k", "", applicable=["grid_swizzle", "loop_split"])
    backup = ArgumentBackup.of([])
    deadline = time.perf_counter() + budget_left_s
    if budget_left_s < 10:
        _variants.time_variants(auto, lambda *a, **k: None, object(), 0, (), {}, (1,), kernels, decision,
                                backup, deadline)
        # The combination still compiling (it finishes in the background) when only the time for
        # its own rounds against the winner is left: that winner is kept, within the budget.
        assert auto.compiled == [] and len(auto.pending) == 1 and not auto.pending[0].done()
        assert decision.error is None and decision.choice == "grid_swizzle"
        assert set(decision.confirm_ms) == {"", "grid_swizzle", "loop_split"}  # the two fastest winners
        assert time.perf_counter() < deadline
        # Kept on disk with the combination: the next activation times it against the winner.
        assert decision.late_combination == "grid_swizzle+loop_split" and decision.keep_on_disk
        auto.release.set()
        auto.pending[0].result(timeout=60)
        assert auto.compiled == ["grid_swizzle+loop_split"]
    else:
        auto.release.set()
        _variants.time_variants(auto, lambda *a, **k: None, object(), 0, (), {}, (1,), kernels, decision,
                                backup, deadline)
        assert auto.compiled == ["grid_swizzle+loop_split"] and auto.pending == []
        assert decision.error is None and decision.choice == "grid_swizzle+loop_split"
        assert decision.late_combination is None and decision.keep_on_disk
        # The winners' confirming rounds against no pass, then the combination's against the winner.
        assert set(decision.confirm_ms) == {"", "grid_swizzle", "loop_split", "grid_swizzle+loop_split"}


@pytest.mark.parametrize("winner", ["kept", "loses back to back", "second kept"])
def test_the_combination_compiles_only_after_the_winners_readings(monkeypatch: pytest.MonkeyPatch,
                                                                  winner: str) -> None:
    # A compile running beside the winner's readings made them read slower than the winner runs
    # (3da52cd lost vLLM's 3-D decode and SGLang's decode stage 1 so): the combination of two
    # winners compiles once the winner is confirmed, then is timed against it.
    import time

    from triton_ext import _variants
    from triton_ext._backup import ArgumentBackup

    combo = "grid_swizzle+loop_split"
    rounds = {"": [1.0] * 4, "grid_swizzle": [0.8] * 4, "loop_split": [0.9] * 4, combo: [0.7] * 4}
    events: list[tuple[str, ...]] = []

    def timed(variants: list[str], *_: Any, **__: Any) -> dict[str, list[float]]:
        events.append(("read", *variants))
        if winner != "kept" and len(events) == 3:  # back to back, the fastest loses; the second too, or wins
            second = 1.1 if winner == "loses back to back" else 0.9
            return {"": [1.0] * 3, "grid_swizzle": [1.2] * 3, "loop_split": [second] * 3}
        return {v: rounds[v] for v in variants}

    class _Recording(_SlowCombination):
        def variant_kernel(self, fn: Any, variant: str, *rest: Any) -> Any:
            events.append(("compile", variant))
            return super().variant_kernel(fn, variant, *rest)

    against: list[str] = []  # the kernel each combination is timed against (its PTX: the variant's name)
    time_combination = _variants.time_combination

    def spy(*args: Any, **kwargs: Any) -> None:
        against.append(args[7].asm["ptx"])
        time_combination(*args, **kwargs)

    monkeypatch.setattr(_variants, "flush_buffer", lambda: None)  # no GPU here: the rounds are given
    monkeypatch.setattr(_variants, "interleaved_rounds", timed)
    monkeypatch.setattr(_variants, "time_combination", spy)
    auto = _Recording()
    auto.release.set()
    kernels = {v: type("Kernel", (), {"asm": {"ptx": v}})() for v in ("", "grid_swizzle", "loop_split")}
    decision = _variants.Decision("k", "", applicable=["grid_swizzle", "loop_split"])
    _variants.time_variants(auto, lambda *a, **k: None, object(), 0, (), {}, (1,), kernels, decision,
                            ArgumentBackup.of([]), time.perf_counter() + 60.0)
    # Rounds over every variant, then the two fastest winners confirmed and read back to back, no
    # compile between.
    winners_readings = [("read", "", "grid_swizzle", "loop_split")] * 3
    if winner == "loses back to back":
        assert events == winners_readings and decision.choice == "" and auto.pending == []
        return
    assert events[:4] == [*winners_readings, ("compile", combo)]
    # Then the combination's rounds, confirmation and back to back, against the winner ("" here):
    # the fastest, or the second where the fastest lost back to back (a GEMM's grid_swizzle on the H100).
    assert events[4:] == [("read", "", combo)] * 3
    assert decision.choice == combo and decision.late_combination is None and decision.error is None
    # The first rounds' readings stay in the record; the combination's join them.
    assert decision.timings_ms == {"": 1.0, "grid_swizzle": 0.8, "loop_split": 0.9, combo: 0.7}
    assert set(decision.confirm_ms) == set(decision.back_to_back_ms) == {"", "grid_swizzle", "loop_split", combo}
    assert against == ["loop_split" if winner == "second kept" else "grid_swizzle"]
    assert decision.applicable == ["grid_swizzle", "loop_split"] and "combination" in decision.phases_s


class _Follower(_SlowCombination):
    """:class:`_SlowCombination` that also records which selections were asked for, and whose
    combination can fail to compile or compile to the winner's code."""

    def __init__(self, combination: str = "its own") -> None:
        super().__init__()
        self.combination = combination
        self.selected: list[str] = []

    def selection(self, variant: str) -> Any:
        self.selected.append(variant)
        return super().selection(variant)

    def variant_kernel(self, fn: Any, variant: str, *rest: Any) -> Any:
        if self.combination == "fails":
            raise RuntimeError("PassManager::run failed")
        kernel = super().variant_kernel(fn, variant, *rest)
        if self.combination == "the winner's":
            kernel.asm = {"ptx": "grid_swizzle"}
        return kernel


@pytest.mark.parametrize("case", ["faster", "within the noise", "still compiling", "too late for its rounds", "fails",
                                  "the winner's", "timing fails", "rounds past the budget"])
def test_a_late_combination_replaces_its_winner_only_if_it_beats_it(monkeypatch: pytest.MonkeyPatch,
                                                                     case: str) -> None:
    # A winner chosen while the combination of the two winners still compiled is kept on disk;
    # the next activation times the combination against that winner, not against no pass: a
    # decision made again from scratch lost vLLM's 3-D unified decode its 1.25x winner to one
    # noisy round (H100, e788147). Whatever happens to the combination, the winner stays.
    import time

    from triton_ext import _variants
    from triton_ext._backup import ArgumentBackup

    combo = "grid_swizzle+loop_split"
    rounds = {"": [1.0] * 4, combo: [0.8] * 4 if case != "within the noise" else [0.995] * 4}

    clock, jump = time.perf_counter, [0.0]

    def timed(variants: list[str], *_: Any, **__: Any) -> dict[str, list[float]]:
        if case == "timing fails":
            raise RuntimeError("an illegal memory access was encountered")
        if case == "rounds past the budget":  # a slow kernel's rounds: the clock jumps past the deadline
            jump[0] += 120.0
            _variants.check_budget(time.perf_counter() - 1.0, "timing")
        return {v: rounds[v] for v in variants}

    monkeypatch.setattr(time, "perf_counter", lambda: clock() + jump[0])
    monkeypatch.setattr(_variants, "flush_buffer", lambda: None)  # no GPU here: the rounds are given
    monkeypatch.setattr(_variants, "interleaved_rounds", timed)
    auto = _Follower({"fails": "fails", "the winner's": "the winner's"}.get(case, "its own"))
    budget_s = {"still compiling": 0.3, "too late for its rounds": 2.0}.get(case, 60.0)
    if case == "too late for its rounds":  # compiled within the budget, but past the rounds' share of it
        threading.Timer(0.3, auto.release.set).start()
    elif case != "still compiling":
        auto.release.set()
    winner_kernel = type("Kernel", (), {"asm": {"ptx": "grid_swizzle"}})()
    decision = _variants.Decision("k", "grid_swizzle", late_combination=combo)
    _variants.time_combination(auto, lambda *a, **k: None, object(), 0, (), {}, (1,), winner_kernel, decision,
                               ArgumentBackup.of([]), time.perf_counter() + budget_s)
    assert "" not in auto.selected  # the baseline launched is the winner, never no pass
    if case == "faster":
        assert decision.choice == combo and decision.late_combination is None and decision.error is None
        assert set(decision.timings_ms) == set(decision.back_to_back_ms) == {"grid_swizzle", combo}
        assert auto.selected and set(auto.selected) == {"grid_swizzle", combo}
        return
    assert decision.choice == "grid_swizzle"
    if case in ("still compiling", "too late for its rounds"):  # kept with the winner for the activation after
        assert decision.late_combination == combo and len(auto.pending) == 1 and decision.timings_ms == {}
        auto.release.set()
        auto.pending[0].result(timeout=60)
    elif case == "rounds past the budget":  # compiled, but its rounds did not fit: the activation after times it
        assert decision.late_combination == combo and auto.pending == [] and decision.error is None
        assert decision.failed == {combo: "over the first-launch budget of 6 s (TRITON_EXT_AUTO_BUDGET_S) before "
                                          "timing: grid_swizzle kept"}
    else:
        assert decision.late_combination is None and auto.pending == []
    if case == "fails":
        assert decision.failed == {combo: "it failed to compile: RuntimeError: PassManager::run failed"}
    if case == "the winner's":
        assert decision.timings_ms == {} and auto.selected == []
    if case == "within the noise":
        assert set(decision.confirm_ms) == set() and decision.timings_ms["grid_swizzle"] == 1.0
    if case == "timing fails":  # the winner's choice stands: no error, the combination dropped and why
        assert decision.error is None and decision.keep_on_disk
        assert decision.failed == {combo: "timing failed, grid_swizzle kept: RuntimeError: an illegal memory access "
                                          "was encountered"}


def test_the_combination_leaves_time_for_the_rounds_after_it() -> None:
    from triton_ext import _variants
    from triton_ext._settings import settings

    # Readings of 50 ms: 40 more readings follow a combination's compile (rounds, confirming and
    # back to back, the winner and the combination), with half again to spare.
    assert _variants.combination_reserve_s(0.05) == pytest.approx(1.5 * 40 * 0.05)
    # Instant readings still keep a tenth of the budget.
    with settings.scope(auto_budget_s=8.0):
        assert _variants.combination_reserve_s(0.0) == pytest.approx(0.8)


def test_the_budget_stops_the_timing_rounds_within_one_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    # Rounds of a slow kernel (each reading 10 s here: the clock jumps) stop at the first reading
    # past the budget, not after every round of every variant.
    import time

    from triton_ext import _variants
    from triton_ext._backup import ArgumentBackup
    from triton_ext._settings import settings

    clock, jump = time.perf_counter, [0.0]
    monkeypatch.setattr(time, "perf_counter", lambda: clock() + jump[0])
    readings: list[float] = []

    def reading(*_: Any, **__: Any) -> float:
        jump[0] += 10.0
        readings.append(jump[0])
        return 1.0

    monkeypatch.setattr(_variants, "flush_buffer", lambda: None)  # no GPU here: readings are given
    monkeypatch.setattr(_variants, "gpu_time_ms", reading)
    auto = _SlowCombination()
    kernels = {v: type("Kernel", (), {"asm": {"ptx": v}})() for v in ("", "grid_swizzle", "loop_split")}
    decision = _variants.Decision("k", "", applicable=["grid_swizzle", "loop_split"])
    backup = ArgumentBackup.of([])
    with settings.scope(auto_budget_s=8.0):
        _variants.time_variants(auto, lambda *a, **k: None, object(), 0, (), {}, (1,), kernels, decision, backup,
                                time.perf_counter() + 25.0)
    assert len(readings) == 3  # of 4 rounds x 3 variants x 2 readings
    assert decision.choice == "" and decision.error == (
        "over the first-launch budget of 8 s (TRITON_EXT_AUTO_BUDGET_S) before timing: no pass kept")


def test_a_variant_that_cannot_launch_is_dropped_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # Measured at f956164: nvidia_pipeline_streams' variant of Liger's KL divergence needs 262 KB of
    # shared memory; Triton raises OutOfResources when it loads the binary, at the variant's first
    # launch. That one failure made the whole decision "timing failed, no pass kept" and lost
    # loop_split's 1.058x on the kernel. Now only the failing variant is dropped.
    from triton.runtime.errors import OutOfResources

    from triton_ext import _selection, _variants
    from triton_ext._backup import ArgumentBackup

    auto = _SlowCombination()
    auto.release.set()
    selections = {v: _selection.Selection() for v in ("", "grid_swizzle", "loop_split")}
    auto.selection = lambda variant: selections[variant]  # type: ignore[method-assign]
    launched: list[str] = []

    def run(*_: Any, **__: Any) -> None:  # JITFunction.run: loads the binary of the current set
        variant = next(v for v, s in selections.items() if _selection.current() is s)
        launched.append(variant)
        if variant == "loop_split":
            raise OutOfResources(262208, 232448, "shared memory")

    def reading(go: Any, **_: Any) -> float:  # one real launch per reading, the time is given
        go()
        return {"": 1.0, "grid_swizzle": 0.8}[next(v for v, s in selections.items()
                                                   if _selection.current() is s)]

    monkeypatch.setattr(_variants, "flush_buffer", lambda: None)  # no GPU here
    monkeypatch.setattr(_variants, "gpu_time_ms", reading)
    monkeypatch.setattr(_variants, "back_to_back_ms", lambda go, calls, windows: reading(go))
    kernels = {v: type("Kernel", (), {"asm": {"ptx": v}})() for v in selections}
    decision = _variants.Decision("k", "", applicable=["grid_swizzle", "loop_split"])
    _variants.time_variants(auto, run, object(), 0, (), {}, (1,), kernels, decision,
                            ArgumentBackup.of([]), time.perf_counter() + 60.0)
    assert decision.failed == {"loop_split": "OutOfResources: out of resource: shared memory, Required: 262208, "
                                             "Hardware limit: 232448. Reducing block sizes or `num_stages` may help."}
    assert decision.error is None and decision.applicable == ["grid_swizzle"]
    assert decision.choice == "grid_swizzle"
    assert launched.count("loop_split") == 1 and set(decision.timings_ms) == {"", "grid_swizzle"}
    # Each step it went through is timed, and recorded with the decision (`triton-ext auto report`).
    assert set(decision.phases_s) == {"check", "rounds", "confirm", "back_to_back"}
    assert all(seconds >= 0 for seconds in decision.phases_s.values())
    assert decision.record()["phases_s"] == decision.phases_s


def test_explicit_sets_are_left_alone_and_kernels_compiled_before_the_mode_are_decided(host_mode: Any) -> None:
    import triton_ext
    from tests.python.test_auto_backup import _addmm, _inputs
    from triton_ext import _auto

    inputs = _inputs()
    # Inside enabled(): the explicit set compiles as without the mode; nothing is decided.
    with triton_ext.enabled("grid_swizzle"):
        assert "_auto._decide" not in _mode_calls(lambda: _addmm(*inputs))
    assert host_mode.decisions == []
    # A kernel compiled (and cached by the JIT) before the mode started is still decided at its
    # next launch under the mode: the mode's key differs from the stock one.
    _auto.deactivate()
    _mode_calls(lambda: _addmm(*inputs, block=32))
    auto = _auto.activate(["grid_swizzle"])
    assert "_auto._decide" in _mode_calls(lambda: _addmm(*inputs, block=32))
    assert [d.kernel for d in auto.decisions] == ["addmm"]


def test_launches_on_other_threads_during_a_decision_never_get_a_variant_under_a_stock_key(host_mode: Any) -> None:
    # The decision lends the stages hook (Triton's slot is otherwise empty): another thread
    # launching meanwhile may key its launch through it, but only variant compiles run passes,
    # and those are keyed by their own set, never by the stock key later launches compute.
    import threading
    import time

    from tests.python.test_auto_backup import _addmm, _inputs, addmm

    import torch

    inputs, other = _inputs(), _inputs()
    x, y = torch.zeros(1024), torch.zeros(1024)
    stop = threading.Event()
    errors: list[BaseException] = []
    launches = [0]

    def launch_other() -> None:
        while not stop.is_set():
            try:
                _addmm(*other, block=32) if launches[0] % 2 else scale[(8,)](x, y, 1024, BLOCK=128)
            except AttributeError:  # the host-only driver: everything before kernel.run ran
                pass
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)
                return
            launches[0] += 1

    thread = threading.Thread(target=launch_other)
    thread.start()
    try:
        while launches[0] < 4 and thread.is_alive():  # both decided: the thread's launches are hits
            time.sleep(0.01)
        before = launches[0]
        _mode_calls(lambda: _addmm(*inputs))  # decided while the other thread launches
        during = launches[0] - before
    finally:
        stop.set()
        thread.join()
    assert errors == [] and during > 2
    lent_keys = [k for fn in (scale, addmm) for k in fn.device_caches[0][0] if host_mode.marker.hash in k]
    assert lent_keys  # launches keyed through the lent hook happened (the case under test)
    assert triton.knobs.runtime.add_stages_inspection_hook is None
    assert {d.choice for d in host_mode.decisions} == {""}  # no GPU: no pass timed
    swizzle = host_mode.selection("grid_swizzle").hash
    cache = addmm.device_caches[0][0]
    variants = [k for k in cache if swizzle in k]
    others = [k for k in cache if swizzle not in k]
    assert len(variants) == 2 and any("custom_pipeline" not in k for k in others)
    variant_ttir = {cache[k].asm["ttir"] for k in variants}
    variant_hash = {cache[k].hash for k in variants}
    for key in others:  # the stock kernel (stock on-disk key and IR) wherever no variant is named
        assert cache[key].asm["ttir"] not in variant_ttir and cache[key].hash not in variant_hash, key


def test_a_foreign_hook_is_kept_and_an_explicit_set_installs_ours(host_mode: Any) -> None:
    import triton_ext
    from tests.python.test_auto_backup import _addmm, _inputs
    from triton_ext import _auto, _triton

    calls: list[int] = []

    def foreign(*args: Any) -> Any:
        calls.append(len(args))
        return ("", "") if not args else None

    _auto.deactivate()
    triton.knobs.runtime.add_stages_inspection_hook = foreign
    try:
        auto = _auto.activate(["grid_swizzle"])
        inputs = _inputs()
        _mode_calls(lambda: _addmm(*inputs))
        assert [d.choice for d in auto.decisions] == [""] and 5 in calls  # chained for the variants
        # After the decision the slot holds the other tool's hook exactly, and a launch calls it
        # and nothing of ours.
        assert triton.knobs.runtime.add_stages_inspection_hook is foreign
        calls.clear()
        assert _mode_calls(lambda: _addmm(*inputs)) == set() and calls == [0]
        # enable() while the mode is on: our hook is installed for good (chaining the other),
        # and stays after the mode's next decision.
        triton_ext.enable("grid_swizzle")
        assert _triton.permanent() and _triton.installed()
        _mode_calls(lambda: _addmm(*inputs, block=32))
        assert _triton.installed()
    finally:
        from triton_ext import _selection

        _selection.disable()
        _triton.uninstall()
        assert triton.knobs.runtime.add_stages_inspection_hook is foreign
        triton.knobs.runtime.add_stages_inspection_hook = None


def test_a_forgotten_decision_is_tuned_again_at_the_next_first_launch(host_mode: Any, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    import json

    import torch

    from triton_ext import _auto
    from triton_ext.dev import auto_report

    folder = tmp_path / "auto"
    x, y = torch.zeros(1024), torch.zeros(1024)

    def first_launch() -> Any:  # in a new activation with the JIT's memory cleared: as a new process
        _auto.deactivate()
        scale.device_caches.clear()
        mode = _auto.activate(["grid_swizzle"])
        _mode_calls(lambda: scale[(8,)](x, y, 1024, BLOCK=128))
        (decision,) = mode.decisions
        return decision

    _mode_calls(lambda: scale[(8,)](x, y, 1024, BLOCK=128))
    assert [d.from_disk for d in host_mode.decisions] == [False]
    assert first_launch().from_disk
    other = folder / "other-kernel.json"  # another kernel's decision stays
    other.write_text(json.dumps({"kernel": "other", "choice": "", "format": _auto.DECISION_FORMAT}))
    assert auto_report.main(["forget", "--dir", str(folder), "--kernel", "nope"]) == 1
    assert capsys.readouterr().err == f"no decisions of kernel 'nope' in {folder}; it holds: other, scale\n"
    assert auto_report.main(["forget", "--dir", str(folder), "--kernel", "scale"]) == 0
    out = capsys.readouterr().out
    assert out.count("removed: ") == 1 and f"forgot 1 decision(s) of scale in {folder}" in out
    assert sorted(p.name for p in folder.iterdir()) == ["other-kernel.json"]
    decision = first_launch()
    assert not decision.from_disk and decision.same_as_stock == ["grid_swizzle"]  # timed again
    (folder / "broken.json").write_text("{")
    assert auto_report.main(["forget", "--dir", str(folder), "--all"]) == 0
    assert "forgot 3 decision(s) in " in capsys.readouterr().out and list(folder.iterdir()) == []
    with pytest.raises(SystemExit):  # a kernel or --all: forgetting everything is never the default
        auto_report.main(["forget", "--dir", str(folder)])


def test_the_report_names_a_gpu_win_that_the_launch_path_hid(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from triton_ext._auto import DECISION_FORMAT
    from triton_ext.dev import auto_report

    # vLLM's 3-D decode attention's decision on an H100 at 114ac4b (auto-mode-all1-h100.json): no pass.
    decode = {"kernel": "kernel_unified_attention", "choice": "", "format": DECISION_FORMAT,
              "confirm_ms": {"": 0.0760, "nvidia_pipeline_deeper": 0.0618, "num_stages_minus_1": 0.0717},
              "back_to_back_ms": {"": 0.0708, "nvidia_pipeline_deeper": 0.0726, "num_stages_minus_1": 0.0720}}
    variant, gpu, b2b = auto_report.paced_by_the_cpu(decode)
    assert variant == "nvidia_pipeline_deeper" and gpu == pytest.approx(0.0760 / 0.0618)
    assert b2b == pytest.approx(0.0708 / 0.0726)
    assert auto_report.paced_by_the_cpu(decode | {"choice": "nvidia_pipeline_deeper"}) is None  # a pass was kept
    small = decode | {"confirm_ms": {"": 0.0760, "nvidia_pipeline_deeper": 0.0730}}  # within 5%: no claim
    assert auto_report.paced_by_the_cpu(small) is None
    assert auto_report.paced_by_the_cpu(decode | {"back_to_back_ms": {}}) is None  # not read back to back
    assert auto_report.paced_by_the_cpu(decode | {"back_to_back_ms": {"": "x", "nvidia_pipeline_deeper": 0}}) is None
    (tmp_path / "decode.json").write_text(json.dumps(decode))
    assert auto_report.main(["report", "--dir", str(tmp_path)]) == 0
    assert ("    no pass kept although nvidia_pipeline_deeper ran 1.23x faster on the GPU: back to back it read 0.98x,"
            " the launch path setting the pace (a busy host?); on a quieter one"
            " `triton-ext auto forget --kernel kernel_unified_attention` retimes it\n") in capsys.readouterr().out
