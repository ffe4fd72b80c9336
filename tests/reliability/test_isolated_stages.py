"""Isolated stages (triton_ext/_triton/isolated.py): a pass that ends or hangs the process it runs
in costs a worker process, not the user's.

The CrashingPass fixture (tests/fixtures/CrashingPass.cpp) ends its process each way a broken
pass can (option ``mode``). Compiles run for real (stock triton, cuda:90, through cubin); the
unisolated cases run in a child process, which is the point: they show what isolation prevents,
and what MLIR's crash recovery already catches in process.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
import warnings
from pathlib import Path
from typing import Any

import pytest

import triton_ext
from tests.reliability.fixture_plugins import FIXTURE_A, REPO, Entry, fixture_library, standard_tree, write_tree, use_tree
from triton_ext._errors import PassCrashedError, TritonExtWarning
from triton_ext._triton import isolated

CRASHING = Entry("crashing", "TritonExtCrashingPass",
                 {"fixture_crash": 'mode: {default: segv, type: str, help: "How to end the process."}'})

COMPILE = textwrap.dedent("""
    import sys, warnings
    import triton_ext
    from tests.reliability.test_isolated_stages import compile_ttir
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with triton_ext.enabled("fixture_crash", mode=sys.argv[1]):
            compile_ttir()
    print("survived:", " | ".join(str(w.message) for w in seen if "fixture_crash" in str(w.message)))
""")


def compile_ttir(block: int = 64) -> str:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from tests.cpp.tests_kernels import add_one

    src = ASTSource(add_one, signature={"X": "*fp32", "N": "i32"}, constexprs={"BLOCK": block})
    compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32))
    assert compiled.asm["cubin"]
    return compiled.asm["ttir"]


@pytest.fixture
def crashing_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton-cache"))
    import triton

    monkeypatch.setattr(triton.knobs.cache, "dir", str(tmp_path / "triton-cache"), raising=False)
    standard_tree(tmp_path, monkeypatch, [CRASHING, FIXTURE_A])
    isolated.shutdown()  # workers that earlier tests in this process started (the mode's variants)
    yield tmp_path
    triton_ext.disable()
    isolated.shutdown()


def _child(mode: str, isolate: bool, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    import os

    env = dict(os.environ, TRITON_EXT_ISOLATE="1" if isolate else "0", PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-c", COMPILE, mode], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300)


@pytest.mark.parametrize("mode", ["segv", "abort", "fatal"])
def test_mlir_crash_recovery_catches_a_signal_in_a_pass_without_isolation(crashing_tree: Path, mode: str) -> None:
    # Triton 3.9 runs every pass manager with crash reproducers on ("reproducer generated at
    # std::errs"), so MLIR's crash recovery turns a signal in a pass into a failed run: the pass
    # is dropped like any failing pass. Isolation is not what saves the process here.
    result = _child(mode, isolate=False, tmp_path=crashing_tree)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "survived: triton-ext: pass fixture_crash (extension crashing) failed in make_ttir" in result.stdout


def test_a_pass_that_exits_ends_an_unisolated_process_and_only_the_worker_when_isolated(crashing_tree: Path) -> None:
    alone = _child("exit", isolate=False, tmp_path=crashing_tree)
    assert alone.returncode == 3 and "survived" not in alone.stdout  # the pass's exit(3) ended the process
    isolated_run = _child("exit", isolate=True, tmp_path=crashing_tree)
    assert isolated_run.returncode == 0, isolated_run.stderr[-2000:]
    assert ("survived: triton-ext: pass fixture_crash (extension crashing) crashed in stage ttir of a kernel, "
            "in an isolated worker (exited with status 3); compiling this kernel without it") in isolated_run.stdout


def test_an_isolated_pass_that_hangs_is_stopped_and_dropped(crashing_tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(isolated, "TIMEOUT_S", 5.0)
    stock = compile_ttir()
    with triton_ext.settings.scope(isolate=True), warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with triton_ext.enabled("fixture_crash", mode="hang"):
            ttir = compile_ttir()
    assert ttir == stock
    (warning,) = [w for w in seen if issubclass(w.category, TritonExtWarning)]
    assert "crashed in stage ttir" in str(warning.message) and "ran past 5 s (the worker was stopped)" in str(warning.message)


def test_strict_mode_raises_and_the_next_isolated_compile_gets_a_new_worker(crashing_tree: Path) -> None:
    with triton_ext.settings.scope(isolate=True, strict=True):
        with triton_ext.enabled("fixture_crash", mode="exit"), pytest.raises(PassCrashedError) as caught:
            compile_ttir()
        assert caught.value.pass_name == "fixture_crash" and "exited with status 3" in str(caught.value)
        # The worker that the pass ended is replaced: a sound pass still runs isolated, and applies.
        with triton_ext.enabled("fixture_tag_module"):
            assert "triton_ext.fixture_a" in compile_ttir()
    assert len(isolated._all) == 2 and not isolated._all[0].alive() and isolated._all[1].alive()


def test_a_worker_that_cannot_start_leaves_the_stage_to_this_process(crashing_tree: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    with triton_ext.enabled("fixture_tag_module"):
        pass  # its preflight (a child process too) done, with the real interpreter
    monkeypatch.setattr(sys, "executable", str(crashing_tree / "no-such-python"))
    with triton_ext.settings.scope(isolate=True), triton_ext.enabled("fixture_tag_module"):
        with warnings.catch_warnings():
            warnings.simplefilter("error", TritonExtWarning)
            assert "triton_ext.fixture_a" in compile_ttir()
        assert isolated._all == [] and "the worker could not start" in str(isolated._cannot_start)
        # Later compiles do not try again (a start that hangs would cost each of them a minute).
        monkeypatch.setattr(isolated, "_Worker", None)  # would raise TypeError if called
        assert "triton_ext.fixture_a" in compile_ttir(block=128)


def _registry_with_an_exiting_candidate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real registry and build, plus the CrashingPass fixture as an ``auto`` candidate whose
    pass calls exit(3)."""
    exiting = Entry("crashing", "TritonExtCrashingPass",
                    {"fixture_crash": 'mode: {default: exit, type: str, help: "How to end the process."}'}, auto=True)
    files = {lib.stem[3:]: lib for lib in (REPO / "build" / "plugins").glob("lib*.so")}
    files["TritonExtCrashingPass"] = fixture_library("CrashingPass")
    registry, tree = write_tree(tmp_path, [exiting], files)
    registry.write_text((REPO / "registry.yaml").read_text() + exiting.yaml())
    use_tree(monkeypatch, registry, tree)


def test_the_transparent_mode_drops_a_variant_whose_pass_exits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The mode's variants are always isolated: a candidate whose pass exits is recorded and
    # dropped, the other candidate is still compiled and tried, and the process goes on.
    import triton
    from triton.runtime.driver import driver

    from tests.python.test_auto_backup import _addmm, _inputs, _launch_without_gpu
    from tests.python.test_autotune import HostOnly
    from triton_ext import _auto

    _registry_with_an_exiting_candidate(tmp_path, monkeypatch)
    monkeypatch.setenv("TRITON_EXT_AUTO_DIR", str(tmp_path / "auto"))
    monkeypatch.setenv("TRITON_EXT_AUTO_WARPS", "0")  # the passes only
    monkeypatch.setenv("TRITON_EXT_AUTO_STAGES", "0")
    monkeypatch.setattr(triton.knobs.cache, "dir", str(tmp_path / "cache"), raising=False)
    monkeypatch.setattr(driver, "_active", HostOnly())
    auto = _auto.activate(["fixture_crash", "grid_swizzle"])
    try:
        _launch_without_gpu(lambda: _addmm(*_inputs()))
    finally:
        _auto.deactivate()
        isolated.shutdown()
    (decision,) = auto.decisions
    assert list(decision.failed) == ["fixture_crash"]
    assert "crashed in stage ttir" in decision.failed["fixture_crash"] and "exited with status 3" in decision.failed["fixture_crash"]
    assert decision.applicable == ["grid_swizzle"]  # tried, then stopped by the host-only driver's launch


def test_the_transparent_mode_drops_an_inductor_variant_whose_pass_exits(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # torch.compile's kernels get their variants in Inductor's autotuner (triton_ext._inductor),
    # isolated as the JIT path's: the exiting pass costs a worker, its variant is left out with why,
    # the non-applying candidate is dropped as the no-pass kernel, and Inductor gets one compile
    # per config, with no compile failure logged.
    pytest.importorskip("torch")
    import logging

    from torch._inductor.runtime import triton_helpers

    import triton
    from tests.realworld.inductor_kernels import autotuner

    _registry_with_an_exiting_candidate(tmp_path, monkeypatch)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(triton.knobs.cache, "dir", str(tmp_path / "cache"), raising=False)
    monkeypatch.setattr(triton_helpers, "set_driver_to_gpu", lambda: None)  # no GPU: the target is named
    failures: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = failures.append  # type: ignore[method-assign]
    inductor_log = logging.getLogger("torch._inductor.runtime.triton_heuristics")
    inductor_log.addHandler(handler)
    try:
        with triton_ext.auto_mode("fixture_crash", "grid_swizzle"):
            tuner = autotuner("pointwise", triton.Config({"XBLOCK": 1024}, num_warps=4))
            tuner.precompile(warm_cache_only=True)
    finally:
        inductor_log.removeHandler(handler)
        isolated.shutdown()
    assert [getattr(r.config, "_triton_ext_variant", None) for r in tuner.compile_results] == [(0, "")]
    seconds, same, left_out = tuner._triton_ext_compile
    assert same == ["grid_swizzle"] and list(left_out) == ["fixture_crash"]
    assert "crashed in stage ttir" in left_out["fixture_crash"] and "exited with status 3" in left_out["fixture_crash"]
    assert not [r for r in failures if r.levelno >= logging.ERROR], [r.getMessage() for r in failures]


# Workers that misbehave in ways no pass causes: each is no crash of the passes, so the stage
# runs in this process instead (StageNotIsolated), and nothing is dropped.
_SILENT = "import sys; sys.exit(0)"
_GARBAGE = textwrap.dedent("""
    import socket, sys
    from multiprocessing.connection import Connection
    c = Connection(socket.socket(fileno=int(sys.argv[1])).detach())
    c.send_bytes(b"ready")
    c.recv_bytes()
    c.send_bytes(b"not a pickle")
    c.recv_bytes()
""")


def test_a_worker_that_never_says_ready_is_not_a_crash() -> None:
    with pytest.raises(isolated.StageNotIsolated, match="the worker did not start"):
        isolated._Worker(("-c", _SILENT))


def test_an_unreadable_reply_or_an_unsendable_request_is_not_a_crash() -> None:
    worker = isolated._Worker(("-c", _GARBAGE))
    try:
        request = isolated.StageRequest("ttir", "module {}", {}, None, None, None, (), ())
        with pytest.raises(isolated.StageNotIsolated, match="unreadable reply from the worker: UnpicklingError"):
            worker.run(request)
        unsendable = isolated.StageRequest("ttir", "module {}", {}, lambda: None, None, None, (), ())
        with pytest.raises(isolated.StageNotIsolated, match="the request could not be sent"):
            worker.run(unsendable)
        assert worker.alive()
    finally:
        worker.close()


# Requests and workers at the edges of what the worker protocol carries: metadata the request
# cannot carry, and a worker that a signal ends (each a guard in isolated.py).
_KEEPS_A_LOCK = textwrap.dedent("""
    import sys, threading, warnings
    import triton_ext
    from triton_ext import _triton
    from tests.reliability.test_isolated_stages import compile_ttir

    def keep_a_lock(stages):  # another tool's stage keeps a value in the metadata while ttir runs
        inner = stages["ttir"]

        def ttir(src, metadata):
            metadata["another_tools_lock"] = threading.Lock()
            try:
                return inner(src, metadata)
            finally:
                del metadata["another_tools_lock"]  # Triton writes the metadata as JSON later

        stages["ttir"] = ttir

    _triton.stage_editor.set(keep_a_lock)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with triton_ext.enabled("fixture_crash", mode="exit"):
            compile_ttir()
    print("survived:", " | ".join(str(w.message) for w in seen if "fixture_crash" in str(w.message)))
""")


def test_metadata_that_cannot_be_pickled_is_left_out_and_the_stage_stays_isolated(crashing_tree: Path) -> None:
    # Guard isolated.py:_picklable: one unpicklable metadata value must not make the request
    # unsendable, which would run the stage unisolated (here: a pass's exit(3) would end the process).
    import os

    env = dict(os.environ, TRITON_EXT_ISOLATE="1", PYTHONPATH=str(REPO))
    result = subprocess.run([sys.executable, "-c", _KEEPS_A_LOCK], capture_output=True, text=True, env=env,
                            cwd=crashing_tree, timeout=300)
    assert result.returncode == 0, (result.returncode, result.stderr[-2000:])
    assert ("survived: triton-ext: pass fixture_crash (extension crashing) crashed in stage ttir of a kernel, "
            "in an isolated worker (exited with status 3); compiling this kernel without it") in result.stdout
    assert isolated._picklable({"name": "k", "lock": threading.Lock(), "shared": 0}) == {"name": "k", "shared": 0}


#: A worker that says ready, takes one request, and is ended by the signal in its first argument.
_ENDED_BY_SIGNAL = textwrap.dedent("""
    import os, socket, sys
    from multiprocessing.connection import Connection
    c = Connection(socket.socket(fileno=int(sys.argv[2])).detach())
    c.send_bytes(b"ready")
    c.recv_bytes()
    os.kill(os.getpid(), int(sys.argv[1]))
""")


@pytest.mark.parametrize("signum, described", [
    (int(signal.SIGSEGV), "killed by SIGSEGV"),
    (signal.SIGRTMIN + 1, f"killed by signal {signal.SIGRTMIN + 1}"),  # a number with no name in signal.Signals
])
def test_a_worker_ended_by_a_signal_is_a_crash_that_names_the_signal(signum: int, described: str) -> None:
    # Guard isolated.py:_describe_exit (negative exit codes, and numbers signal.Signals cannot name):
    # the crash a user is told about must say which signal ended the worker, never raise instead.
    worker = isolated._Worker(("-c", _ENDED_BY_SIGNAL, str(signum)))
    try:
        with pytest.raises(isolated.StageCrashed) as caught:
            worker.run(isolated.StageRequest("ttir", "module {}", {}, None, None, None, (), ()))
        assert str(caught.value) == described
        assert not worker.alive()
    finally:
        worker.close()
