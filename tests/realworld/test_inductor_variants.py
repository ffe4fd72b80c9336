"""The transparent mode reaches torch.compile's kernels through Inductor's autotuner (issue 27.5).

On the CPU: Inductor's own ``CachingAutotuner`` around a kernel written as Inductor generates
them (a fused pointwise kernel), compiled for cuda:90 through ``precompile(warm_cache_only=True)``,
the call Inductor's compile workers make. Under ``auto_mode`` each config must compile once with no
pass and once per candidate pass that changes the kernel, a candidate that leaves the code as it
is must be dropped before timing, and the variant tags must survive the pickling that carries
compile results from a compile worker back to the process. The timing half
(``benchmark_all_configs``) needs a GPU: benchmarks/auto_torch_compile.py.
"""

from __future__ import annotations

import pickle
import time
from pathlib import Path
import types
from typing import Any

import pytest

torch = pytest.importorskip("torch")

import triton  # noqa: E402

import triton_ext  # noqa: E402
from triton_ext import _inductor, _inductor_compile  # noqa: E402
from triton_ext.testing import require_built  # noqa: E402

from tests.realworld import inductor_kernels  # noqa: E402

require_built("grid_swizzle", "nvidia_auto_pdl")


@pytest.fixture
def autotuner(monkeypatch: pytest.MonkeyPatch, fresh_cache: Any) -> Any:
    # fresh_cache points Triton's cache and TRITON_CACHE_DIR, where Inductor's static launcher
    # looks for the cubin, at one folder: after other tests in the process the two may differ,
    # and Inductor then falls back to Triton's launcher for every kernel.
    from torch._inductor.runtime import triton_helpers

    # No GPU here: Inductor would activate Triton's CUDA driver before compiling; the compile
    # itself is target-explicit (cuda:90) and needs none.
    monkeypatch.setattr(triton_helpers, "set_driver_to_gpu", lambda: None)

    def make(*configs: Any) -> Any:
        return inductor_kernels.autotuner("pointwise", *configs)
    return make


def _tags(results: list[Any]) -> list[Any]:
    return [getattr(r.config, _inductor.TAG, None) for r in results]


def test_without_the_mode_inductor_compiles_each_config_once(autotuner: Any) -> None:
    tuner = autotuner(triton.Config({"XBLOCK": 1024}, num_warps=4))
    tuner.precompile(warm_cache_only=True)
    assert _tags(tuner.compile_results) == [None]


def test_the_mode_adds_one_variant_per_applicable_pass(autotuner: Any) -> None:
    # Triton's launcher for the no-pass kernels too: a launch_pdl variant launches as they do.
    from torch._inductor import config

    with config.patch(use_static_cuda_launcher=False), triton_ext.auto_mode("grid_swizzle", "nvidia_auto_pdl"):
        assert _inductor.installed(), _inductor.why_not()
        tuner = autotuner(triton.Config({"XBLOCK": 1024}, num_warps=4), triton.Config({"XBLOCK": 256}, num_warps=2))
        tuner.precompile(warm_cache_only=True)
    # grid_swizzle renumbers naive 2-D dot kernels: not this one, so its variant is dropped
    # before timing; nvidia_auto_pdl inserts the grid-dependency wait into every kernel.
    assert _tags(tuner.compile_results) == [(0, ""), (0, "nvidia_auto_pdl"), (1, ""), (1, "nvidia_auto_pdl")]
    assert sorted(tuner._triton_ext_compile[1]) == ["grid_swizzle", "grid_swizzle"]
    base, pdl = (_inductor_compile.fingerprint(r) for r in tuner.compile_results[:2])
    assert base is not None and pdl is not None and base != pdl
    # A compile worker sends its results back pickled; the variant must stay known.
    # (triton.Config.__setstate__ keeps only the fields it knows).
    assert [getattr(pickle.loads(pickle.dumps(r.config)), _inductor.TAG, None) for r in tuner.compile_results] \
        == _tags(tuner.compile_results)
    kwargs = [r.config.kwargs for r in tuner.compile_results]
    assert kwargs == [{"XBLOCK": 1024}] * 2 + [{"XBLOCK": 256}] * 2


def test_a_pass_declaring_a_launch_request_is_not_compiled_where_inductor_launches_statically(autotuner: Any) -> None:
    # Inductor launches the no-pass kernel with its static CUDA launcher, which refuses kernels
    # with launch attributes; nvidia_auto_pdl declares launch_pdl (registry launch_requests), so
    # its variant would put the kernel on Triton's launcher: it is left out before it compiles,
    # with why, and Inductor sees one launcher per config, as without the mode.
    from torch._inductor import config

    assert config.use_static_cuda_launcher
    with triton_ext.auto_mode("nvidia_auto_pdl"):
        tuner = autotuner(triton.Config({"XBLOCK": 1024}, num_warps=4), triton.Config({"XBLOCK": 256}, num_warps=2))
        tuner.precompile(warm_cache_only=True)
    assert _tags(tuner.compile_results) == [None, None]
    assert all(type(r).__name__ == "StaticTritonCompileResult" for r in tuner.compile_results)
    seconds, same, left_out = tuner._triton_ext_compile
    assert list(left_out) == ["nvidia_auto_pdl"] and "launch_pdl" in left_out["nvidia_auto_pdl"]
    assert "not compiled" in left_out["nvidia_auto_pdl"]


def test_an_undeclared_launch_request_is_caught_in_the_compiled_kernel(autotuner: Any,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # A pass that marks its kernels for PDL without declaring it: its variant compiles, and the
    # compiled kernel's launch_pdl leaves it out before timing.
    monkeypatch.setattr(_inductor, "declared_off_launcher", lambda variants: {})
    with triton_ext.auto_mode("nvidia_auto_pdl"):
        tuner = autotuner(triton.Config({"XBLOCK": 1024}, num_warps=4), triton.Config({"XBLOCK": 256}, num_warps=2))
        tuner.precompile(warm_cache_only=True)
    assert _tags(tuner.compile_results) == [(0, ""), (1, "")]
    seconds, same, left_out = tuner._triton_ext_compile
    assert same == [] and list(left_out) == ["nvidia_auto_pdl"]
    assert "launch_pdl" in left_out["nvidia_auto_pdl"] and "not timed" in left_out["nvidia_auto_pdl"]


def _cubins(cache: Any) -> int:
    return len(list(Path(cache).rglob("*.cubin")))


@pytest.mark.parametrize("static", [True, False], ids=["static launcher", "Triton's launcher"])
def test_a_variant_that_does_not_apply_stops_before_ptxas(static: bool, autotuner: Any, fresh_cache: Any,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    # nvidia_stream_eviction marks the streamed loads of gathering kernels only: on this pointwise
    # kernel its IR after make_ttir is the no-pass kernel's, so the variant stops there (as the JIT
    # path's variants do) instead of running make_ttgir, LLVM and ptxas to find the same code: one
    # cubin per config, not two. The no-pass IR comes from Triton's CompiledKernel, or, under the
    # static launcher (which keeps only the kernel's hash and name), from Triton's cache.
    from torch._inductor import config

    require_built("nvidia_stream_eviction")
    with config.patch(use_static_cuda_launcher=static), triton_ext.auto_mode("nvidia_stream_eviction"):
        tuner = autotuner(triton.Config({"XBLOCK": 1024}, num_warps=4), triton.Config({"XBLOCK": 256}, num_warps=2))
        tuner.precompile(warm_cache_only=True)
    assert all(type(r).__name__.startswith("Static") == static for r in tuner.compile_results)
    assert _tags(tuner.compile_results) == [(0, ""), (1, "")]
    assert sorted(tuner._triton_ext_compile[1]) == ["nvidia_stream_eviction", "nvidia_stream_eviction"]
    assert _cubins(fresh_cache) == 2, "a variant that does not apply must not reach ptxas"
    # Inductor logs every exception of triton.compile as a failed compile: not this stop.
    assert not [r for r in caplog.records if "compilation failed" in r.getMessage()], caplog.text


def test_a_variant_whose_passes_need_operations_the_kernel_lacks_is_not_compiled(
        autotuner: Any, fresh_cache: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # grid_swizzle declares needs_ops [tt.dot, tt.dot_scaled] (registry): this pointwise kernel's
    # no-pass TTIR has neither, so its variant is not compiled at all, not even to make_ttir.
    compiled: list[Any] = []
    stop = _inductor_compile.stop_if_stock
    monkeypatch.setattr(_inductor_compile, "stop_if_stock", lambda *a: compiled.append(a) or stop(*a))
    with triton_ext.auto_mode("grid_swizzle"):
        tuner = autotuner(triton.Config({"XBLOCK": 1024}, num_warps=4), triton.Config({"XBLOCK": 256}, num_warps=2))
        tuner.precompile(warm_cache_only=True)
    assert _tags(tuner.compile_results) == [(0, ""), (1, "")]
    assert sorted(tuner._triton_ext_compile[1]) == ["grid_swizzle", "grid_swizzle"] and compiled == []
    assert _cubins(fresh_cache) == 2


def test_past_the_budget_a_kernels_variants_are_not_compiled(autotuner: Any, fresh_cache: Any) -> None:
    # The compile side of TRITON_EXT_AUTO_BUDGET_S: once a kernel's precompile has spent it, its
    # remaining variants are left out, with why, before they compile (here at once: budget 0).
    from triton_ext._settings import settings

    with settings.scope(auto_budget_s=0.0), triton_ext.auto_mode("grid_swizzle"):
        tuner = autotuner(triton.Config({"XBLOCK": 1024}, num_warps=4), triton.Config({"XBLOCK": 256}, num_warps=2))
        tuner.precompile(warm_cache_only=True)
    assert _tags(tuner.compile_results) == [(0, ""), (1, "")]
    seconds, same, left_out = tuner._triton_ext_compile
    assert same == [] and list(left_out) == ["grid_swizzle"]
    assert "over the budget of 0 s (TRITON_EXT_AUTO_BUDGET_S)" in left_out["grid_swizzle"]
    assert len(list(Path(fresh_cache).rglob("*.ttir"))) == 2, "only the two no-pass kernels may have compiled"


def test_where_the_no_pass_ir_is_unknown_the_variant_compiles_and_its_code_is_compared(
        autotuner: Any, fresh_cache: Any) -> None:
    # The fallback of compile_variant: no IR to compare with (a Triton cache without the kernel's
    # group, an Inductor result exposing neither), so the variant compiles to the end and prune
    # drops it for its code. (inductor_variants_to_the_end reports the no-pass IR unknown.)
    from triton_ext.testing import inductor_variants_to_the_end

    with inductor_variants_to_the_end(), triton_ext.auto_mode("grid_swizzle"):
        tuner = autotuner(triton.Config({"XBLOCK": 1024}, num_warps=4))
        tuner.precompile(warm_cache_only=True)
    assert _tags(tuner.compile_results) == [(0, "")]
    assert tuner._triton_ext_compile[1] == ["grid_swizzle"]
    assert _cubins(fresh_cache) == 2


def test_the_code_of_a_static_result_is_read_from_its_cubin_and_unknown_when_that_is_gone(tmp_path: Path) -> None:
    # Inductor's static launcher keeps only the cubin's path (cubin_raw after a reload): a path that
    # cannot be read leaves the code unknown, so prune cannot call a variant the same as its no-pass
    # kernel on that ground, rather than failing the kernel's compile.
    cubin = tmp_path / "k.cubin"
    cubin.write_bytes(b"\x7fELF cubin")
    assert _inductor_compile.fingerprint(types.SimpleNamespace(kernel=types.SimpleNamespace(cubin_path=str(cubin)))) \
        == b"\x7fELF cubin"
    gone = types.SimpleNamespace(kernel=types.SimpleNamespace(cubin_path=str(tmp_path / "gone.cubin")))
    assert _inductor_compile.fingerprint(gone) is None


def test_the_no_pass_ir_of_a_result_that_shows_none_is_unknown() -> None:
    assert _inductor_compile.stock_ir(types.SimpleNamespace()) is None
    kernel = types.SimpleNamespace(hash="0" * 64, name="not_in_the_cache")  # a static kernel whose files are gone
    assert _inductor_compile.stock_ir(types.SimpleNamespace(kernel=kernel)) is None


def test_inductor_imported_after_the_mode_is_wrapped_too() -> None:
    # TRITON_EXT_ENABLE=auto activates the mode at start-up, before the user's script imports
    # torch: the wrap must happen when Inductor's module is first imported.
    import subprocess
    import sys

    code = ("import sys, triton_ext\n"
            "assert 'torch' not in sys.modules\n"
            "with triton_ext.auto_mode('grid_swizzle'):\n"
            "    from torch._inductor.runtime.triton_heuristics import CachingAutotuner\n"
            "    print(CachingAutotuner._precompile_worker.__module__, CachingAutotuner.benchmark_all_configs.__module__)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["triton_ext._inductor", "triton_ext._inductor"], proc.stdout


def _groups() -> dict[Any, dict[str, str]]:
    # Three configs, each with its no-pass launcher and one variant (launchers stand as names).
    return {i: {"": f"c{i}", "grid_swizzle": f"c{i}+gs"} for i in range(3)}


def test_the_config_is_the_one_inductor_reads_first_without_the_passes() -> None:
    groups = _groups()
    readings = {"c0": 0.030, "c1": 0.020, "c2": 0.020}
    # Inductor's min over its readings: the first of equal readings in its order; variants unread.
    assert _inductor._best_config(groups, readings) == 1
    assert _inductor._best_config(groups, {}) is None


def test_no_pass_kept_returns_inductors_own_readings() -> None:
    groups = _groups()
    readings = {"c0": 0.030, "c1": 0.020, "c2": 0.025}
    decision = _inductor.Decision(kernel="k", choice="", timings_ms={"": 0.02, "grid_swizzle": 0.021})
    timings = _inductor._final_timings(groups, readings, 1, decision)
    assert {k: v for k, v in timings.items() if "+" not in k} == readings
    assert all(v == float("inf") for k, v in timings.items() if "+" in k)
    assert min(timings, key=timings.get) == "c1"  # the launcher Inductor picks without the mode


def test_a_kept_pass_replaces_its_configs_launcher_and_no_other() -> None:
    groups = _groups()
    readings = {"c0": 0.030, "c1": 0.020, "c2": 0.025}
    # Even a measured gain of exactly 1 (a tie that choose_in_both would not keep) must not make
    # the variant lose the min to its own base launcher if it was chosen.
    for gain_ms in (0.018, 0.020):
        decision = _inductor.Decision(kernel="k", choice="grid_swizzle",
                                      timings_ms={"": 0.020, "grid_swizzle": gain_ms})
        timings = _inductor._final_timings(groups, readings, 1, decision)
        assert min(timings, key=timings.get) == "c1+gs"
        assert timings["c0"] == 0.030 and timings["c2"] == 0.025
        assert timings["c0+gs"] == timings["c2+gs"] == float("inf")


def _timed_tuner(monkeypatch: pytest.MonkeyPatch, times: dict[str, float], launched: list[str]) -> Any:
    """What ``_inductor._time_variants`` needs of Inductor's autotuner, with the GPU-time reading
    of a launch given by ``times`` for the variant launched last (no GPU here)."""

    def reading(fn: Any, **_: Any) -> float:  # one launch per reading, the time is given
        fn()
        return times[launched[-1]]

    monkeypatch.setattr(_inductor, "flush_buffer", lambda: None)
    monkeypatch.setattr(_inductor, "_flush", None)
    monkeypatch.setattr(_inductor, "gpu_time_ms", reading)
    monkeypatch.setattr(_inductor, "back_to_back_ms", lambda fn, calls, windows: reading(fn))
    return types.SimpleNamespace(
        get_device_interface=lambda: types.SimpleNamespace(current_device=lambda: 0, get_raw_stream=lambda d: 0),
        clone_args=lambda *a, **k: (a, k), reset_to_zero_args=lambda *a, **k: None)


def _race(monkeypatch: pytest.MonkeyPatch, launcher: Any, times: dict[str, float], launched: list[str],
          args: tuple[Any, ...] = (), names: tuple[str, ...] = ("", "grid_swizzle", "loop_split"),
          deadline: float = float("inf")) -> Any:
    """``_inductor._time_variants`` on the launchers ``launcher(variant)`` for ``names`` (no pass,
    grid_swizzle and loop_split), with given GPU-time readings (no GPU here); returns the decision."""
    tuner = _timed_tuner(monkeypatch, times, launched)
    variants = {v: launcher(v) for v in names}
    decision = _inductor.Decision(kernel="k", choice="", applicable=[v for v in names if v])
    _inductor._time_variants(tuner, decision, variants, args, {}, deadline)
    return decision


def _recording(launched: list[str], seconds: float = 0.0) -> Any:
    def launcher(variant: str) -> Any:
        def run(*_: Any, stream: Any = None) -> None:
            launched.append(variant)
            time.sleep(seconds)
        return run
    return launcher


def test_past_the_budget_a_kernel_keeps_its_no_pass_launcher(monkeypatch: pytest.MonkeyPatch) -> None:
    # TRITON_EXT_AUTO_BUDGET_S bounds the timing of a torch.compile'd kernel's variants as it does
    # a JIT kernel's first launch: checked before the output check and before every reading.
    launched: list[str] = []
    decision = _race(monkeypatch, _recording(launched), {"": 1.0, "grid_swizzle": 0.8, "loop_split": 0.9}, launched,
                     deadline=time.perf_counter() - 1.0)
    assert decision.choice == "" and "before checking outputs: no pass kept" in decision.error, decision.error
    assert "TRITON_EXT_AUTO_BUDGET_S" in decision.error and set(launched) <= {""}
    launched.clear()  # the budget runs out among the timing rounds (each reading takes 20 ms here)
    decision = _race(monkeypatch, _recording(launched, 0.02), {"": 1.0, "grid_swizzle": 0.8, "loop_split": 0.9},
                     launched, deadline=time.perf_counter() + 0.2)
    assert decision.choice == "" and "before timing: no pass kept" in decision.error, decision.error
    assert decision.timings_ms == {}


def test_a_config_variant_that_cannot_launch_is_dropped_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # The Inductor path applies the same rule as JITFunction's: a pass variant whose binary does
    # not fit the GPU (OutOfResources at its first launch) is dropped, and the others still race.
    from triton.runtime.errors import OutOfResources

    launched: list[str] = []

    def launcher(variant: str) -> Any:
        def run(*_: Any, stream: Any = None) -> None:
            launched.append(variant)
            if variant == "loop_split":
                raise OutOfResources(262208, 232448, "shared memory")
        return run

    decision = _race(monkeypatch, launcher, {"": 1.0, "grid_swizzle": 0.8}, launched)
    assert decision.error is None and decision.applicable == ["grid_swizzle"]
    assert decision.failed == {"loop_split": "OutOfResources: out of resource: shared memory, Required: 262208, "
                                             "Hardware limit: 232448. Reducing block sizes or `num_stages` may help."}
    assert decision.choice == "grid_swizzle" and launched.count("loop_split") == 1


def test_a_config_variant_that_changes_the_outputs_is_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    # The output check (triton_ext/_outputs.py) on Inductor's path: the launchers run on the
    # autotuner's cloned arguments, restored from the mode's backup before each check.
    import torch

    x, out = torch.arange(64, dtype=torch.float32), torch.zeros(64)
    launched: list[str] = []

    def launcher(variant: str) -> Any:
        def run(x: torch.Tensor, out: torch.Tensor, stream: Any = None) -> None:
            launched.append(variant)
            out.copy_(x * 3)
            if variant == "loop_split":  # faster, and wrong in its first element
                out[0] = 1.0
        return run

    decision = _race(monkeypatch, launcher, {"": 1.0, "grid_swizzle": 0.8, "loop_split": 0.5}, launched, (x, out))
    assert decision.changed_outputs == {"loop_split": "2 of 256 bytes differ from the no-pass kernel's outputs"}
    assert decision.error is None and decision.choice == "grid_swizzle"
    assert launched[:2] == ["", ""] and launched.count("loop_split") == 1


def test_a_config_without_its_no_pass_launcher_keeps_no_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    # Guard: _inductor._time_variants' "no launcher without a pass" check. Nothing to compare a
    # variant with (its outputs nor its time): no variant is launched, and the error says why.
    launched: list[str] = []

    def launcher(variant: str) -> Any:
        return lambda *_, stream=None: launched.append(variant)

    decision = _race(monkeypatch, launcher, {"grid_swizzle": 0.8, "loop_split": 0.9}, launched,
                     names=("grid_swizzle", "loop_split"))
    assert decision.choice == "" and decision.timings_ms == {} and launched == []
    assert decision.error == "timing failed, no pass kept: RuntimeError: no launcher without a pass for this config"


def test_a_config_whose_every_variant_is_screened_out_is_not_timed(monkeypatch: pytest.MonkeyPatch) -> None:
    # Guard: _inductor._time_variants' "if not decision.applicable: return" after the screening.
    # One variant cannot launch, the other changes the outputs: no pass, and no rounds timing no
    # pass alone on the kernel's first launch.
    import torch
    from triton.runtime.errors import OutOfResources

    x, out = torch.arange(64, dtype=torch.float32), torch.zeros(64)
    launched: list[str] = []

    def launcher(variant: str) -> Any:
        def run(x: torch.Tensor, out: torch.Tensor, stream: Any = None) -> None:
            launched.append(variant)
            if variant == "grid_swizzle":
                raise OutOfResources(262208, 232448, "shared memory")
            out.copy_(x * 3)
            if variant == "loop_split":
                out[0] = 1.0
        return run

    decision = _race(monkeypatch, launcher, {"": 1.0, "grid_swizzle": 0.8, "loop_split": 0.5}, launched, (x, out))
    assert decision.applicable == [] and decision.choice == "" and decision.error is None
    assert list(decision.failed) == ["grid_swizzle"] and list(decision.changed_outputs) == ["loop_split"]
    assert decision.timings_ms == {} and decision.spreads == {} and decision.confirm_ms == {}
    assert launched == ["", "", "grid_swizzle", "loop_split"]


def test_a_config_whose_no_pass_kernel_writes_run_dependent_integers_keeps_no_pass(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Guard: _inductor._time_variants' "except OutputsUnverifiable". A no-pass launcher that
    # writes a per-call counter (integers that differ between two runs): no variant can be
    # checked against it, so none is launched, and the decision says why in the check's words.
    import torch

    counter = torch.zeros(4, dtype=torch.int32)
    launched: list[str] = []

    def launcher(variant: str) -> Any:
        def run(counter: torch.Tensor, stream: Any = None) -> None:
            launched.append(variant)
            counter.fill_(len(launched))
        return run

    decision = _race(monkeypatch, launcher, {"": 1.0, "grid_swizzle": 0.8, "loop_split": 0.5}, launched, (counter,))
    assert decision.choice == "" and decision.timings_ms == {} and launched == ["", ""]
    assert decision.error == ("no pass kept: the no-pass kernel's outputs differ between two runs outside its "
                              "floating arguments (integers or other data written in a run-dependent order)")


def test_a_config_whose_timing_fails_keeps_its_no_pass_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    # Guard: _inductor._time_variants' catch-all. The no-pass launcher fails in the timing rounds
    # (after the output check's two launches): Inductor's benchmark goes on with its own reading
    # of the no-pass launcher, not failing the kernel's first launch because the mode timed it.
    launched: list[str] = []

    def launcher(variant: str) -> Any:
        def run(*_: Any, stream: Any = None) -> None:
            launched.append(variant)
            if variant == "" and launched.count("") == 3:
                raise RuntimeError("CUDA error: an illegal memory access was encountered\nmore")
        return run

    tuner = _timed_tuner(monkeypatch, {"": 1.0, "grid_swizzle": 0.8}, launched)
    launchers = [launcher(""), launcher("grid_swizzle")]
    records: list[Any] = []
    tuner.launchers, tuner.inductor_meta = launchers, {"kernel_name": "k"}
    timings = _inductor._benchmark(tuner, types.SimpleNamespace(_record=records.append), launchers,
                                   [(0, ""), (0, "grid_swizzle")], (), {}, lambda self: {launchers[0]: 0.02})
    (decision,) = records
    assert decision.choice == "" and decision.applicable == ["grid_swizzle"]
    assert decision.error == ("timing failed, no pass kept: RuntimeError: CUDA error: an illegal memory access was "
                              "encountered")
    assert launched == ["", "", "grid_swizzle", ""]  # the check, the screening, the first reading
    assert timings == {launchers[0]: 0.02, launchers[1]: float("inf")}  # Inductor's min: no pass


def test_a_config_whose_arguments_cannot_be_cloned_keeps_no_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    # Guard: everything _time_variants does before timing (the flush buffer, Inductor's stream and
    # argument clones) is inside its catch-all: an out-of-memory there must leave the config its
    # no-pass kernel, not fail the torch.compile'd kernel's first launch because the mode timed it.
    launched: list[str] = []
    tuner = _timed_tuner(monkeypatch, {"": 1.0, "grid_swizzle": 0.8}, launched)

    def no_memory(*_: Any, **__: Any) -> Any:
        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB\nmore")

    tuner.clone_args = no_memory
    variants = {v: (lambda *_, stream=None, v=v: launched.append(v)) for v in ("", "grid_swizzle")}
    decision = _inductor.Decision(kernel="k", choice="", applicable=["grid_swizzle"])
    _inductor._time_variants(tuner, decision, variants, (), {})
    assert decision.choice == "" and decision.timings_ms == {} and launched == []
    assert decision.error == "timing failed, no pass kept: RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"


def test_a_config_whose_kernel_builds_pointers_from_data_is_not_timed() -> None:
    # A user's kernel under torch.compile that reads a table of pointers: the mode's extra launches
    # could write where no clone or backup reaches, so its variants are not launched at all.
    import types

    from tests.python.test_auto_pointer_tables import REASON, scale_through_table
    from triton_ext.testing import compile_through_cubin

    compiled = compile_through_cubin(scale_through_table, {"table_ptr": "*u64", "n": "i32"}, {"BLOCK": 64})
    launched: list[str] = []

    def launcher(variant: str) -> Any:
        def run(*_: Any, stream: Any = None) -> None:
            launched.append(variant)
        run.bin = compiled  # type: ignore[attr-defined]  # as Inductor's launchers carry their kernel
        return run

    launchers = [launcher(""), launcher("grid_swizzle")]
    records: list[Any] = []
    tuner = types.SimpleNamespace(launchers=launchers, inductor_meta={"kernel_name": "k"},
                                  reset_to_zero_args=lambda *a, **k: None)
    timings = _inductor._benchmark(tuner, types.SimpleNamespace(_record=records.append), launchers,
                                   [(0, ""), (0, "grid_swizzle")], (), {},
                                   lambda self: {launchers[0]: 0.02})
    (decision,) = records
    assert decision.choice == "" and decision.applicable == ["grid_swizzle"] and REASON in (decision.error or "")
    assert launched == [] and timings == {launchers[0]: 0.02, launchers[1]: float("inf")}
