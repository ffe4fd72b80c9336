"""Passes as autotuning dimensions (issue 19.1), on CPU with real compiles.

A CPU cannot launch kernels, so the tests drive the parts of ``triton.autotune`` that do not
launch: ``Autotuner.warmup`` (which hands each config's kwargs to ``fn.run(..., warmup=True)``:
the JIT specializes, asks the stages hook for its key, compiles through cubin and caches the
kernel, and returns it unlaunched) and ``Autotuner.check_disk_cache`` (Triton's record of a
tuning choice on disk). ``HostOnly`` stands in for the absent GPU driver: it names the target,
device 0 and stream 0, and nothing else; every compile and cache path is Triton's own.
Timing needs a GPU (``benchmarks/autotune_passes_gpu.py``); here the "benchmark" recorded on
disk is the cubin size of each config's kernel, a real measurement that differs by pass set.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.runtime.driver import driver
from triton.runtime.jit import MockTensor

from tests.python.conftest import REPO
from triton_ext.testing import require_built

BUILD = Path(os.environ.get("TRITON_EXT_BUILD_DIR") or REPO / "build")
@pytest.fixture(autouse=True)
def _grid_swizzle_built() -> None:
    require_built("grid_swizzle")  # an unbuilt plugin fails the test, never skips it


class HostOnly:
    """The driver answers the JIT needs before it compiles: which GPU, device and stream.
    Nothing here launches; ``get_benchmarker`` refuses, so a test that tried to time fails."""

    def get_current_target(self) -> GPUTarget:
        return GPUTarget("cuda", 90, 32)

    def get_current_device(self) -> int:
        return 0

    def get_current_stream(self, device: Any = None) -> int:
        return 0

    def get_benchmarker(self) -> Any:
        raise RuntimeError("no GPU here: nothing may be timed in this test")

    class utils:  # noqa: N801 (Triton's driver.active.utils)
        #: The H100 SXM's, what the transparent mode reads to classify a launch's size.
        SMS = 132

        @classmethod
        def get_device_properties(cls, device: int) -> dict[str, int]:
            return {"multiprocessor_count": cls.SMS}


@triton.jit
def naive_dot_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK: tl.constexpr):
    # A 2-D grid with pid_m = program_id(0), pid_n = program_id(1) and a dot: grid_swizzle's case.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = (pid_m * BLOCK + tl.arange(0, BLOCK)) % M
    rn = (pid_n * BLOCK + tl.arange(0, BLOCK)) % N
    rk = tl.arange(0, 32)
    acc = tl.zeros([BLOCK, BLOCK], dtype=tl.float32)
    for k in range(0, tl.cdiv(K, 32)):
        a = tl.load(a_ptr + rm[:, None] * K + (k * 32 + rk)[None, :])
        b = tl.load(b_ptr + (k * 32 + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


ARGS = (MockTensor(tl.float16), MockTensor(tl.float16), MockTensor(tl.float16), 512, 512, 512)


@pytest.fixture
def host_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    cache = tmp_path / "triton-cache"
    monkeypatch.setenv("TRITON_CACHE_DIR", str(cache))
    monkeypatch.setattr(triton.knobs.cache, "dir", str(cache), raising=False)
    monkeypatch.setenv("TRITON_EXT_REGISTRY", str(REPO / "registry.yaml"))
    monkeypatch.setenv("TRITON_EXT_BUILD_DIR", str(BUILD))
    monkeypatch.setattr(driver, "_active", HostOnly())
    yield cache


def _configs() -> list[Any]:
    import triton_ext

    return [
        triton_ext.Config({"BLOCK": 64}, passes={}, num_warps=4, num_stages=2),
        triton_ext.Config({"BLOCK": 64}, passes={"grid_swizzle": {"group-size": 4}}, num_warps=4, num_stages=2),
        triton_ext.Config({"BLOCK": 64}, passes={"grid_swizzle": {"group_size": 8}}, num_warps=4, num_stages=2),
    ]


def test_configs_differing_only_in_passes_compile_to_different_kernels(host_only: Path) -> None:
    import triton_ext

    tuner = triton_ext.autotune(configs=_configs(), key=["M", "N", "K"])(naive_dot_kernel)
    configs = tuner.configs
    # The pass set is part of the config's identity for Triton's autotuner.
    assert len({hash(c) for c in configs}) == 3 and len(set(configs)) == 3
    assert len({str(c) for c in configs}) == 3
    assert [triton_ext.passes_of(c) for c in configs] == [
        {}, {"grid_swizzle": {"group-size": 4}}, {"grid_swizzle": {"group-size": 8}}]

    # Autotuner.warmup compiles every config through the Tunable wrapper and the JIT; the three
    # compiles run on three threads at once, each under its own config's pass set.
    kernels: dict[int, Any] = {}

    def warm(i: int) -> None:
        single = triton.autotune(configs=[configs[i]], key=["M"])(triton_ext.tunable(naive_dot_kernel))
        kernels[i] = single.warmup(*ARGS, grid=(1,))[0]

    # Triton's JIT creates its per-device cache lazily in a defaultdict, which two threads can
    # race on (one thread's kernel cache is then dropped): create it once, as a first launch would.
    naive_dot_kernel.device_caches[0]
    threads = [threading.Thread(target=warm, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stock, group4, group8 = (kernels[i] for i in range(3))
    # Three kernels under three compile-cache keys, and three entries in the JIT's kernel cache.
    assert len({stock.hash, group4.hash, group8.hash}) == 3
    kernel_cache = naive_dot_kernel.device_caches[0][0]
    assert len(kernel_cache) == 3
    # The stock config ran no plugin pass; the others swizzled with their own group size.
    assert "arith.minsi" not in stock.asm["ttir"]
    for kernel, group in ((group4, 4), (group8, 8)):
        assert "arith.minsi" in kernel.asm["ttir"], kernel.asm["ttir"]
        assert re.search(rf"arith\.constant {group} : i(32|64)\b", kernel.asm["ttir"])  # the group size
    assert len({stock.asm["ttir"], group4.asm["ttir"], group8.asm["ttir"]}) == 3
    assert len({stock.asm["cubin"], group4.asm["cubin"], group8.asm["cubin"]}) == 3

    # The whole autotuner's warmup gives the same three kernels from the JIT cache.
    again = tuner.warmup(*ARGS, grid=(1,))
    assert [k.hash for k in again] == [stock.hash, group4.hash, group8.hash]
    # Outside any config, nothing is enabled.
    assert triton_ext.enabled_passes() == {}


def test_pass_set_errors_are_clear(host_only: Path) -> None:
    import triton_ext
    from triton_ext import UnknownPassError

    with pytest.raises(UnknownPassError, match="grid_swizle.*did you mean 'grid_swizzle'"):
        str(triton_ext.Config({"BLOCK": 64}, passes={"grid_swizle": {}}))
    with pytest.raises(UnknownPassError, match="option 'group-sise'.*did you mean 'group-size'"):
        str(triton_ext.Config({"BLOCK": 64}, passes={"grid_swizzle": {"group-sise": 4}}))
    with pytest.raises(TypeError, match="passes: expected a mapping"):
        triton_ext.Config({"BLOCK": 64}, passes="grid_swizzle")


# One process records a choice through Triton's own autotuning disk cache; a second process finds
# it there (no benchmark) and gets back the pass set with the config.
_CHILD = r"""
import json, sys
import triton
import os
import tests.python.test_autotune as t  # run from the checkout (cwd)
os.environ["TRITON_CACHE_DIR"] = {cache!r}  # conftest (imported by the test module) set its own
import triton_ext
from triton.runtime.driver import driver
driver.set_active(t.HostOnly())
tuner = triton_ext.autotune(configs=t._configs(), key=["M", "N", "K"])(t.naive_dot_kernel)
benched = []

def bench():
    # What Autotuner.run's benchmark() does, measuring cubin bytes instead of GPU time.
    timings = {{}}
    for config in tuner.configs:
        kernel = tuner.fn.run(*t.ARGS, grid=(1,), warmup=True, **config.all_kwargs())
        timings[config] = [float(len(kernel.asm["cubin"]))] * 3
    benched.append(True)
    tuner.cache[(512, 512, 512)] = min(timings, key=timings.get)
    tuner.configs_timings = timings

hit = tuner.check_disk_cache((512, 512, 512), tuner.configs, bench)
best = tuner.cache[(512, 512, 512)]
kernel = tuner.fn.run(*t.ARGS, grid=(1,), warmup=True, **best.all_kwargs())
sizes = {{str(triton_ext.passes_of(c)): v[0] for c, v in tuner.configs_timings.items()}}
print(json.dumps({{"hit": hit, "benched": bool(benched), "best": triton_ext.passes_of(best),
                   "best_type": type(best).__name__, "kernel": kernel.hash, "sizes": sizes}}))
"""


def _child(cache: Path) -> dict[str, Any]:
    env = {**os.environ, "TRITON_CACHE_DIR": str(cache), "TRITON_EXT_REGISTRY": str(REPO / "registry.yaml"),
           "TRITON_EXT_BUILD_DIR": str(BUILD)}
    out = subprocess.run([sys.executable, "-c", _CHILD.format(cache=str(cache))], env=env, capture_output=True,
                         text=True, timeout=600, cwd=REPO)
    assert out.returncode == 0, out.stderr[-4000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_recorded_choice_is_reused_by_a_second_process(host_only: Path) -> None:
    first = _child(host_only)
    assert first["hit"] is False and first["benched"] is True
    # The measured winner (smallest cubin) is a config with its pass set.
    winner = min(first["sizes"], key=first["sizes"].get)
    assert str(first["best"]) == winner
    assert len(set(first["sizes"].values())) > 1  # the passes changed what was measured
    second = _child(host_only)
    assert second["hit"] is True and second["benched"] is False
    # Rebuilt from Triton's JSON as a plain triton.Config, the choice still names its passes
    # and compiles to the same kernel.
    assert second["best_type"] == "Config" and second["best"] == first["best"]
    assert second["kernel"] == first["kernel"]
    assert second["sizes"] == first["sizes"]
    records = list(host_only.rglob("*.autotune.json"))
    assert len(records) == 1
    recorded = json.loads(records[0].read_text())["configs_timings"]
    assert sorted(c["kwargs"].get("triton_ext_passes") for c, _ in recorded) == sorted(
        ['{}', '{"grid_swizzle":{"group-size":4}}', '{"grid_swizzle":{"group-size":8}}'])


def test_autotune_times_configs_by_gpu_time_unless_told(host_only: Path) -> None:
    import triton_ext
    from triton.runtime.autotuner import Autotuner

    from triton_ext._autotune import PassAutotuner, time_rounds

    # Triton's default benchmarker (do_bench) counts the GPU's wait for a long Python launch path
    # and times each config once; triton_ext.autotune's autotuner times every config by GPU time
    # in interleaved rounds (triton_ext._timing.interleaved_rounds) unless told how to time.
    tuner = triton_ext.autotune(configs=_configs(), key=["M"])(naive_dot_kernel)
    assert isinstance(tuner, PassAutotuner) and tuner.timer is time_rounds

    def mine(kernel_call: Any, quantiles: Any) -> list[float]:
        return [1.0, 1.0, 1.0]

    told = triton_ext.autotune(configs=_configs(), key=["M"], do_bench=mine)(naive_dot_kernel)
    assert type(told) is Autotuner and told.do_bench is mine
    with pytest.raises(TypeError, match="unexpected argument.*'warmpu'"):
        triton_ext.autotune(configs=_configs(), key=["M"], warmpu=5)
