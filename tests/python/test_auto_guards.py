"""The transparent mode's fallbacks, each failure path executed by a real launch (host-only driver:
the JIT specializes and compiles through cubin as on a GPU host, and the final ``kernel.run``
raises for want of a GPU, after the mode has decided). Each fallback must leave the launch to the
stock kernel, say why where a user would want to know, and never fail the launch itself.
The GPU-only ones (a first launch inside CUDA graph capture, a full GPU) are cases of
``benchmarks/auto_safety_gpu.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

import triton
from triton.runtime.driver import driver

from tests.python.conftest import add_one_with_helper, build_dir, write_registry  # noqa: F401  (fixture)
from tests.python.test_auto import host_mode, scale  # noqa: F401  (fixture)
from tests.python.test_autotune import HostOnly


def _launch_scale() -> None:
    x, y = torch.zeros(1024), torch.zeros(1024)
    with pytest.raises(AttributeError, match="launcher_cls"):  # the mode decided; no GPU to launch on
        scale[(8,)](x, y, 1024, BLOCK=128)


def test_a_failure_inside_the_decision_gives_the_stock_kernel_once(host_mode: Any,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # A setting read only inside the decision (after the no-pass compile) that cannot be parsed:
    # the mode itself fails there, and the launch still goes on with the stock kernel.
    monkeypatch.setenv("TRITON_EXT_AUTO_BUDGET_S", "soon")
    for _ in range(2):
        _launch_scale()
    (decision,) = host_mode.decisions  # recorded once for the specialization
    assert decision.choice == ""
    assert (decision.refused or "").startswith("the mode failed while deciding: ValueError: TRITON_EXT_AUTO_BUDGET_S")


def test_an_unreadable_decision_file_is_decided_again_and_rewritten(host_mode: Any, tmp_path: Path) -> None:
    from triton_ext import _auto

    _launch_scale()
    (path,) = (tmp_path / "auto").glob("*.json")
    path.write_text("{not json")  # a truncated write, a disk error, an older format
    again = _auto.activate(["grid_swizzle"])  # a new process's view: nothing decided in memory
    _launch_scale()
    (decision,) = again.decisions
    assert not decision.from_disk and decision.error is None and decision.refused is None
    assert json.loads(path.read_text())["choice"] == ""


def test_a_decision_folder_that_cannot_be_written_keeps_the_choice(host_mode: Any, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("TRITON_EXT_AUTO_DIR", str(blocker / "auto"))  # mkdir fails: a file is in the way
    _launch_scale()
    (decision,) = host_mode.decisions
    assert decision.choice == "" and decision.error is None and decision.refused is None


def test_a_candidate_that_fails_to_compile_is_dropped_and_named(tmp_path: Path, build_dir: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # Triton's test plugin renames the kernel to @foo; with two functions left after inlining that
    # is a symbol redefinition, a real failing pass. Under TRITON_EXT_STRICT=1 the variant's compile
    # raises instead of dropping the pass, and the decision must name it among the failed variants.
    from triton_ext import _auto

    monkeypatch.setenv("TRITON_EXT_STRICT", "1")
    monkeypatch.setenv("TRITON_EXT_REGISTRY", str(write_registry(tmp_path)))
    monkeypatch.setenv("TRITON_EXT_BUILD_DIR", str(build_dir))
    monkeypatch.setenv("TRITON_EXT_AUTO_DIR", str(tmp_path / "auto"))
    monkeypatch.setenv("TRITON_EXT_AUTO_WARPS", "0")  # the passes' test: warp counts in test_auto_warps.py
    monkeypatch.setenv("TRITON_EXT_AUTO_STAGES", "0")  # and depths in test_auto_stages.py
    monkeypatch.setattr(triton.knobs.cache, "dir", str(tmp_path / "cache"), raising=False)
    monkeypatch.setattr(driver, "_active", HostOnly())
    add_one_with_helper.device_caches.clear()
    auto = _auto.activate(["plugin"])
    try:
        with pytest.raises(AttributeError, match="launcher_cls"):
            add_one_with_helper[(2,)](torch.zeros(256), 256, BLOCK=128)
    finally:
        _auto.deactivate()
    (decision,) = auto.decisions
    assert decision.choice == "" and decision.applicable == [] and decision.same_as_stock == []
    assert list(decision.failed) == ["plugin"]
    assert decision.failed["plugin"].startswith("it failed to compile: ")


def test_a_hook_another_tool_installs_during_a_lend_is_left_in_place() -> None:
    # The mode lends its stages hook around a decision and then puts the slot back; a tool that
    # installed its own hook meanwhile must keep it (putting ours "back" would silently unhook it).
    from triton_ext import _selection, _triton

    before = triton.knobs.runtime.add_stages_inspection_hook

    def other(*args: Any) -> Any:
        return ("", "") if not args else None

    try:
        with _selection.lend_hook():
            assert triton.knobs.runtime.add_stages_inspection_hook not in (before, None)  # ours, lent
            triton.knobs.runtime.add_stages_inspection_hook = other
        assert triton.knobs.runtime.add_stages_inspection_hook is other
        assert not _triton.installed()
    finally:
        triton.knobs.runtime.add_stages_inspection_hook = before


def test_a_stage_the_stock_kernel_lacks_is_not_compared_and_the_mode_still_decides(host_mode: Any) -> None:
    # Guard _variants.py:stop_if_stock (a stage missing from the stock kernel's asm is skipped): a
    # Gluon kernel starts at ttgir, so a ttir candidate has no ttir to compare; the mode must
    # still decide, stopping the variant at the next stage it does have as the stock kernel.
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl

    @gluon.jit
    def gluon_copy(x, BLOCK: gl.constexpr):
        layout: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
        offsets = gl.arange(0, BLOCK, layout=layout)
        gl.store(x + offsets, gl.load(x + offsets) * 2)

    with pytest.raises(AttributeError, match="launcher_cls"):  # the mode decided; no GPU to launch on
        gluon_copy[(1,)](torch.zeros(128), BLOCK=128)
    kernels = list(gluon_copy.device_caches[0][0].values())  # compiled for the launch: no ttir
    assert kernels and all("ttir" not in k.asm.keys() and "ttgir" in k.asm.keys() for k in kernels)
    (decision,) = host_mode.decisions
    assert decision.kernel == "gluon_copy"
    assert decision.refused is None and decision.error is None and decision.failed == {}
    # grid_swizzle runs in make_ttir, which a Gluon compile has not: stopped at ttgir as the stock kernel.
    assert decision.same_as_stock == ["grid_swizzle"] and decision.choice == "" and decision.applicable == []


def test_threads_that_miss_the_same_specialization_together_decide_it_once(host_mode: Any) -> None:
    # Guard: on_miss looks in the JIT's cache again once it holds the mode's lock. Two threads that
    # both missed the same specialization (a server's workers at start-up) must not decide it twice
    # (twice the first-launch cost, and two kernels placed for one key). The test holds the lock
    # while both threads reach it, so both have missed before either decides.
    import threading
    import time

    errors: list[BaseException] = []

    def launch() -> None:
        try:
            _launch_scale()
        except BaseException as exc:  # noqa: BLE001  (reported below, not lost in the thread)
            errors.append(exc)

    with host_mode.lock:
        threads = [threading.Thread(target=launch) for _ in range(2)]
        for thread in threads:
            thread.start()
        time.sleep(1.0)  # both threads reach the lock: their launches have missed the JIT's cache
    for thread in threads:
        thread.join(timeout=300)
    assert not errors, errors
    assert [(d.kernel, d.from_disk) for d in host_mode.decisions] == [("scale", False)]
