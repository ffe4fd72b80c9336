"""The stages hook and the pipeline tap, on real compiles of real kernels."""

from __future__ import annotations

import os
import re
import shutil
import threading
import warnings
from pathlib import Path
from typing import Any

import pytest
import triton
from triton import knobs
from triton.backends.compiler import GPUTarget

import triton_ext
from tests.python.conftest import CUDA90, add_one, add_one_with_helper, compile_kernel, renamed, write_registry
from triton_ext import _triton
from triton_ext._errors import PassFailedError, TritonExtWarning, UnknownPassError


def key() -> tuple[str, str]:
    return knobs.runtime.add_stages_inspection_hook()


def test_nothing_enabled_leaves_kernels_alone(registry: Path) -> None:
    assert not renamed(compile_kernel())
    assert knobs.runtime.add_stages_inspection_hook is None  # importing triton_ext installs nothing


def test_enable_runs_the_pass_after_its_anchor(registry: Path) -> None:
    triton_ext.enable("plugin")
    with triton_ext.record_pipelines() as plans:
        kernel = compile_kernel()
    assert renamed(kernel)
    (plan,) = [p for p in plans if p.stage == "ttir"]
    order = plan.order
    at = order.index("plugin.plugin")
    assert order[at - 1] == "ttir.loop_unroll" and order[at + 1] == "common.canonicalizer"  # then: [canonicalize]
    label, pipeline = plan.runs[0]
    assert label == "make_ttir"
    assert re.search(r"triton-loop-unroll,tritongpu-plugin\{[^}]*\},canonicalize\{", pipeline), pipeline
    assert triton_ext.enabled_passes()["plugin"]["position"] == "ttir after loop_unroll (first)"


@pytest.mark.parametrize(
    "position, before, after",
    [
        ("before: cse", None, "common.cse"),
        ("after: ttir.combine", "ttir.combine", "ttir.reorder_broadcast"),
        ("", "ttir.loop_unroll", None),  # end of stage: plugin + its cleanup come last
        ("before: canonicalize\n        occurrence: last", "common.inliner", "common.canonicalizer"),
    ],
)
def test_positions(tmp_path: Path, build_dir: Path, monkeypatch: pytest.MonkeyPatch, position: str, before: Any, after: Any) -> None:
    monkeypatch.setenv("TRITON_EXT_REGISTRY", str(write_registry(tmp_path, position=position)))
    monkeypatch.setenv("TRITON_EXT_BUILD_DIR", str(build_dir))
    with triton_ext.enabled("plugin"), triton_ext.record_pipelines() as plans:
        compile_kernel()
    order = next(p for p in plans if p.stage == "ttir").order
    at = order.index("plugin.plugin")
    if before is not None:
        assert order[at - 1] == before, order
    assert order[at + 1] == "common.canonicalizer"  # its then: [canonicalize]
    if after is not None:
        assert order[at + 2] == after, order
    if not position:
        assert order[-2:] == ["plugin.plugin", "common.canonicalizer"]


@pytest.mark.parametrize("occurrence", ["first", "last"])
def test_occurrence_in_ttgir(tmp_path: Path, build_dir: Path, monkeypatch: pytest.MonkeyPatch, occurrence: str) -> None:
    # make_ttgir adds canonicalize several times; occurrence picks the first or the last.
    position = f"after: canonicalize\n        occurrence: {occurrence}"
    monkeypatch.setenv("TRITON_EXT_REGISTRY", str(write_registry(tmp_path, stage="ttgir", position=position)))
    monkeypatch.setenv("TRITON_EXT_BUILD_DIR", str(build_dir))
    with triton_ext.enabled("plugin"), triton_ext.record_pipelines() as plans:
        compile_kernel(block=32 if occurrence == "first" else 16)
    order = next(p for p in plans if p.stage == "ttgir").order
    at = order.index("plugin.plugin")
    builtins = [name for i, name in enumerate(order) if i not in (at, at + 1)]
    anchors = [i for i, name in enumerate(order) if name == "common.canonicalizer" and i != at + 1]
    assert len(anchors) >= 2, order
    assert order[at - 1] == "common.canonicalizer"
    assert (at - 1) == (anchors[0] if occurrence == "first" else anchors[-1]), order
    assert len(builtins) == len(order) - 2


def test_ttgir_and_llir_stages(tmp_path: Path, build_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRITON_EXT_BUILD_DIR", str(build_dir))
    for stage, anchor, label in (("ttgir", "after: coalesce", "make_ttgir"), ("llir", "", "make_llir")):
        directory = tmp_path / stage
        directory.mkdir()
        monkeypatch.setenv("TRITON_EXT_REGISTRY", str(write_registry(directory, stage=stage, position=anchor)))
        with triton_ext.enabled("plugin"), triton_ext.record_pipelines() as plans:
            kernel = compile_kernel()
        (plan,) = [p for p in plans if p.stage == stage]
        assert "plugin.plugin" in plan.order
        assert any(lbl == label and "tritongpu-plugin" in pipe for lbl, pipe in plan.runs)
        if stage == "ttgir":
            assert plan.order[plan.order.index("plugin.plugin") - 1] == "ttgpuir.coalesce"
            assert "@foo" in kernel.asm["ttgir"] and "@foo" not in kernel.asm["ttir"]


def test_key_and_hash_follow_the_enabled_set_and_options(registry: Path) -> None:
    triton_ext.enable("plugin")
    on = key()
    assert on[0] and on[1]
    assert key() is key() or key() == on  # precomputed: cheap per launch
    triton_ext.enable("plugin", options={"num-warps": 8})
    with_option = key()
    assert with_option != on
    with triton_ext.enabled("plugin", num_warps=2):
        assert key() not in (on, with_option)
    assert key() == with_option
    triton_ext.disable("plugin")
    assert key() == ("", "")


def test_unknown_names_and_options(registry: Path) -> None:
    with pytest.raises(UnknownPassError, match=r"unknown pass 'plugn'; known passes: plugin; did you mean 'plugin'\?"):
        triton_ext.enable("plugn")
    with pytest.raises(UnknownPassError, match="option 'num-warp' is declared by none of plugin.*did you mean 'num-warps'"):
        triton_ext.enable("plugin", options={"num-warp": 2})
    with pytest.raises(UnknownPassError, match="option num-warps: expected an int, found 'x'"):
        triton_ext.enable("plugin", options={"num-warps": "x"})


def test_no_stale_kernel_from_the_cache(registry: Path) -> None:
    # Same kernel, same on-disk cache: the enabled set must change the key.
    assert not renamed(compile_kernel(block=64))
    triton_ext.enable("plugin")
    assert renamed(compile_kernel(block=64))
    triton_ext.disable()
    assert not renamed(compile_kernel(block=64))
    with triton_ext.enabled("plugin"):
        assert renamed(compile_kernel(block=64))


def test_jit_in_memory_cache_key_changes(registry: Path) -> None:
    # runtime/jit.py appends the hook's hash to the in-memory kernel key on every launch.
    hashes = set()
    hashes.add(key() if knobs.runtime.add_stages_inspection_hook else ("", ""))
    triton_ext.enable("plugin")
    hashes.add(key())
    triton_ext.enable("plugin", options={"num-warps": 16})
    hashes.add(key())
    assert len({h for _, h in hashes}) == 3


def test_earlier_hook_is_chained_and_restored(registry: Path) -> None:
    calls: list[str] = []

    def earlier(*args: Any) -> Any:
        if not args:
            calls.append("key")
            return ("earlier-key", "earlier-hash")
        calls.append("stages")
        backend, stages, *_ = args
        original = stages["ttir"]

        def ttir(src: Any, metadata: dict[str, Any]) -> Any:
            calls.append("earlier-ttir")
            return original(src, metadata)

        stages["ttir"] = ttir
        return None

    knobs.runtime.add_stages_inspection_hook = earlier
    triton_ext.enable("plugin")
    k, h = key()
    assert k.startswith("earlier-key|triton_ext-") and h not in ("earlier-hash", "")
    kernel = compile_kernel(block=256)
    assert renamed(kernel)
    assert {"key", "stages", "earlier-ttir"} <= set(calls)
    triton_ext.uninstall()
    assert knobs.runtime.add_stages_inspection_hook is earlier


def test_uninstall_restores_none_and_the_bindings(registry: Path) -> None:
    from triton._C.libtriton import ir, passes

    original_add, original_run = passes.ttir.add_loop_unroll, ir.pass_manager.run
    triton_ext.enable("plugin")
    assert passes.ttir.add_loop_unroll is not original_add
    triton_ext.uninstall()
    assert knobs.runtime.add_stages_inspection_hook is None
    assert passes.ttir.add_loop_unroll is original_add and ir.pass_manager.run is original_run


def test_install_adopts_its_own_hook_put_back_by_a_saver(registry: Path) -> None:
    # Issue 26 item 7: code that saved the slot while ours was in it (a test fixture, an extension
    # package), uninstalled triton_ext, then put the saved hook back. The next enable() must not
    # chain our hook to itself (it raised RecursionError at the next key query).
    triton_ext.enable("plugin")
    saved = knobs.runtime.add_stages_inspection_hook
    triton_ext.disable()
    triton_ext.uninstall()
    knobs.runtime.add_stages_inspection_hook = saved
    triton_ext.enable("plugin")
    assert _triton.installed()
    k, h = key()
    assert k.startswith("triton_ext-") and "|" not in k and h
    assert renamed(compile_kernel(block=256))
    triton_ext.uninstall()
    assert knobs.runtime.add_stages_inspection_hook is None


def test_install_recognises_its_hook_inside_a_chaining_hook(registry: Path) -> None:
    # A hook installed over ours that chains ours (a closure over it); triton_ext is then
    # uninstalled and enabled again: ours is inside the slot's hook, so install() adopts it.
    triton_ext.enable("plugin")
    ours = knobs.runtime.add_stages_inspection_hook
    calls: list[str] = []

    def outer(*args: Any) -> Any:
        calls.append("key" if not args else "stages")
        result = ours(*args)
        return ("outer|" + result[0], result[1]) if not args else result

    knobs.runtime.add_stages_inspection_hook = outer
    triton_ext.uninstall()  # the slot holds outer, not ours: left in place
    assert knobs.runtime.add_stages_inspection_hook is outer
    triton_ext.enable("plugin")
    assert knobs.runtime.add_stages_inspection_hook is outer
    k, h = key()
    assert k.startswith("outer|triton_ext-") and k.count("triton_ext-") == 1 and h
    assert renamed(compile_kernel(block=256)) and calls.count("stages") == 1


def test_a_hook_calling_back_into_ours_ends_the_chain(registry: Path) -> None:
    # The backstop when install() cannot see inside a hook: ours chains `opaque`, which calls ours
    # again through a route no walk finds (a registry lookup). The call-back gets an empty answer.
    routes: dict[str, Any] = {}

    class Opaque:
        __slots__ = ()

        def __call__(self, *args: Any) -> Any:
            return routes["ours"](*args)

    knobs.runtime.add_stages_inspection_hook = Opaque()
    triton_ext.enable("plugin")
    routes["ours"] = knobs.runtime.add_stages_inspection_hook
    k, h = key()
    assert k.count("triton_ext-") == 1 and h
    assert renamed(compile_kernel(block=256))


CHAINED_SUITE = """
import pytest
import triton_ext
from triton import knobs
from triton_ext import _triton

triton_ext.enable("plugin")  # at collection, as a package that loads plugins at import did


@pytest.fixture(autouse=True)
def _clean(clean_triton_ext):
    yield


def test_first():
    pass  # the fixture saved our installed hook, reset, and must put back exactly that


def test_second():
    assert _triton.installed()  # as the fixture found it before test_first
    triton_ext.enable("plugin")
    key, digest = knobs.runtime.add_stages_inspection_hook()
    assert key.count("triton_ext-") == 1 and digest
"""


def test_clean_triton_ext_restores_what_it_saved(registry: Path, tmp_path: Path) -> None:
    # Issue 26 item 7 as the suite met it (`pytest tests/python language/OnChip/test`): a hook
    # installed at collection, the fixture around one test, then enable() in the next test.
    import subprocess
    import sys

    from tests.python.conftest import REPO

    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_chained.py").write_text(CHAINED_SUITE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_EXT_ENABLE")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "triton_ext.testing.plugin",
                          "-p", "no:cacheprovider", "-p", "no:randomly", str(suite)],
                         env=env, capture_output=True, text=True, cwd=suite, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "2 passed" in out.stdout


def test_hip_target_outside_targets_is_untouched(registry: Path) -> None:
    triton_ext.enable("plugin")  # registry: cuda only (min_arch 80)
    with triton_ext.record_pipelines() as plans:
        hip = compile_kernel(target=GPUTarget("hip", "gfx942", 64))
        old_cuda = compile_kernel(target=GPUTarget("cuda", 75, 32))
    assert not renamed(hip) and "hsaco" in hip.asm
    assert not renamed(old_cuda)
    assert plans == []


def test_gluon_kernel_has_no_ttir_stage(registry: Path) -> None:
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon._runtime import GluonASTSource

    @gluon.jit
    def gluon_add_one(x, BLOCK: gl.constexpr):
        layout: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
        offsets = gl.arange(0, BLOCK, layout=layout)
        gl.store(x + offsets, gl.load(x + offsets) + 1)

    triton_ext.enable("plugin")
    with triton_ext.record_pipelines() as plans:
        kernel = triton.compile(GluonASTSource(gluon_add_one, {"x": "*fp32"}, {"BLOCK": 128}), target=CUDA90)
    assert "cubin" in kernel.asm and "@foo" not in kernel.asm["ttgir"]
    assert plans == []


def test_a_check_that_cannot_run_on_a_gluon_kernel_says_so(tmp_path: Path, build_dir: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # A check (role: check) at ttir cannot run on a Gluon kernel (no ttir stage): never silently.
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon._runtime import GluonASTSource

    @gluon.jit
    def gluon_copy(x, BLOCK: gl.constexpr):
        layout: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
        offsets = gl.arange(0, BLOCK, layout=layout)
        gl.store(x + offsets, gl.load(x + offsets) * 2)

    monkeypatch.setenv("TRITON_EXT_REGISTRY", str(write_registry(tmp_path, position="after: loop_unroll\n        role: check")))
    monkeypatch.setenv("TRITON_EXT_BUILD_DIR", str(build_dir))
    triton_ext.enable("plugin")
    with pytest.warns(TritonExtWarning, match=r"check plugin \(extension test_plugin\) does not run on this kernel: "
                                              r"this compile has no ttir stage \(a Gluon kernel starts at ttgir\); it "
                                              r"compiles without the check"):
        triton.compile(GluonASTSource(gluon_copy, {"x": "*fp32"}, {"BLOCK": 128}), target=CUDA90)


def test_failing_pass_warns_and_compiles_without_it(registry: Path) -> None:
    triton_ext.enable("plugin")
    with pytest.warns(TritonExtWarning, match=r"pass plugin \(extension test_plugin\) failed in make_ttir .*compiling this kernel without it"):
        kernel = compile_kernel(add_one_with_helper)
    assert "@add_one_with_helper" in kernel.asm["ttir"] and "cubin" in kernel.asm
    # The kernel in the cache is the sound one.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = compile_kernel(add_one_with_helper)
    assert again.asm["ttir"] == kernel.asm["ttir"]


def test_failing_pass_raises_in_strict_mode(registry: Path) -> None:
    triton_ext.enable("plugin")
    with triton_ext.settings.scope(strict=True):
        with pytest.raises(PassFailedError, match="pass plugin .*extension test_plugin.* failed in make_ttir") as info:
            compile_kernel(add_one_with_helper, block=32)
    assert info.value.extension == "test_plugin" and info.value.pass_name == "plugin"
    # Nothing broken was cached: a non-strict compile of the same kernel works.
    with pytest.warns(TritonExtWarning):
        kernel = compile_kernel(add_one_with_helper, block=32)
    assert "cubin" in kernel.asm


def test_failing_check_pass_raises_without_strict_mode(tmp_path: Path, build_dir: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # on_failure: error (a check): compiling without the pass would hide what it reported.
    position = "after: loop_unroll\n        on_failure: error"
    monkeypatch.setenv("TRITON_EXT_REGISTRY", str(write_registry(tmp_path, position=position)))
    monkeypatch.setenv("TRITON_EXT_BUILD_DIR", str(build_dir))
    triton_ext.enable("plugin")
    with pytest.raises(PassFailedError, match=r"pass plugin .* failed in make_ttir .*is a check \(role: optimization, "
                                              r"on_failure: error\)"):
        compile_kernel(add_one_with_helper, block=64)


@pytest.mark.parametrize("where", ["pass", "extension"])
def test_check_role_fails_the_compile_when_the_pass_fails(tmp_path: Path, build_dir: Path,
                                                          monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    # Issue 26 item 5: a check (role: check, on the pass or its extension) that cannot run fails
    # the compile by default; it used to warn and compile the kernel without the check.
    path = write_registry(tmp_path, position="after: loop_unroll" + ("\n        role: check" if where == "pass" else ""))
    if where == "extension":
        path.write_text(path.read_text().replace("    passes:\n", "    role: check\n    passes:\n", 1))
    monkeypatch.setenv("TRITON_EXT_REGISTRY", str(path))
    monkeypatch.setenv("TRITON_EXT_BUILD_DIR", str(build_dir))
    assert triton_ext.manifest().find_pass("plugin").on_failure == "error"
    triton_ext.enable("plugin")
    with warnings.catch_warnings():
        warnings.simplefilter("error", TritonExtWarning)
        with pytest.raises(PassFailedError, match=r"is a check \(role: check, on_failure: error\), so the kernel is not "
                                                  r"compiled without it"):
            compile_kernel(add_one_with_helper, block=64)


def test_check_role_fails_the_compile_when_its_anchor_is_missing(tmp_path: Path, build_dir: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRITON_EXT_REGISTRY", str(write_registry(tmp_path, position="after: coalesce\n        role: check")))
    monkeypatch.setenv("TRITON_EXT_BUILD_DIR", str(build_dir))
    triton_ext.enable("plugin")
    with pytest.raises(PassFailedError, match=r"anchor 'coalesce' \(after\) never appeared in stage ttir .*is a check"):
        compile_kernel(block=512)


def test_missing_anchor_warns_or_raises(tmp_path: Path, build_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # coalesce is a real built-in, but make_ttir never adds it.
    monkeypatch.setenv("TRITON_EXT_REGISTRY", str(write_registry(tmp_path, position="after: coalesce")))
    monkeypatch.setenv("TRITON_EXT_BUILD_DIR", str(build_dir))
    triton_ext.enable("plugin")
    with pytest.warns(TritonExtWarning, match="pass plugin .* was not run: anchor 'coalesce' \\(after\\) never appeared in stage ttir"):
        kernel = compile_kernel(block=512)
    assert not renamed(kernel)
    with triton_ext.settings.scope(strict=True), pytest.raises(PassFailedError, match="anchor 'coalesce'"):
        compile_kernel(block=1024)


def test_unknown_anchor_is_refused_at_enable(tmp_path: Path, build_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRITON_EXT_REGISTRY", str(write_registry(tmp_path, position="after: loop_unrol")))
    monkeypatch.setenv("TRITON_EXT_BUILD_DIR", str(build_dir))
    with pytest.raises(UnknownPassError, match="unknown built-in pass 'loop_unrol'; did you mean 'loop_unroll'"):
        triton_ext.enable("plugin")


def test_threads_with_different_enabled_sets(registry: Path) -> None:
    triton_ext.enable("plugin")  # installs the hook; the global set is then cleared
    triton_ext.disable()
    results: dict[str, bool] = {}
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def work(name: str, block: int, use: bool) -> None:
        try:
            barrier.wait()
            if use:
                with triton_ext.enabled("plugin"):
                    results[name] = renamed(compile_kernel(block=block))
            else:
                results[name] = renamed(compile_kernel(block=block))
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=("with", 2048, True)), threading.Thread(target=work, args=("without", 4096, False))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert results == {"with": True, "without": False}


def test_enabled_by_default_and_extension_names(tmp_path: Path, build_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_registry(tmp_path)
    path.write_text(path.read_text().replace("then: [canonicalize]", "then: [canonicalize]\n        enabled_by_default: true"))
    monkeypatch.setenv("TRITON_EXT_REGISTRY", str(path))
    monkeypatch.setenv("TRITON_EXT_BUILD_DIR", str(build_dir))
    triton_ext.enable("default")
    assert list(triton_ext.enabled_passes()) == ["plugin"]
    triton_ext.disable("test_plugin")  # an extension name covers its passes
    assert triton_ext.enabled_passes() == {}
    triton_ext.enable("test_plugin", options={"num-warps": 2})
    assert triton_ext.enabled_passes()["plugin"]["options"] == {"num-warps": 2}


def _submit_like_the_jit(mode: Any, block: int) -> Any:
    """What runtime/jit.py does for one launch under AsyncCompileMode: ask the hook for its hash on
    the launching thread, then hand ``compiler.compile`` to the mode's executor."""
    from triton.runtime._async_compile import FutureKernel  # noqa: F401  (the class the mode returns)

    knobs.runtime.add_stages_inspection_hook()
    src = triton.compiler.ASTSource(add_one, signature={"x": "*fp32", "n": "i32"}, constexprs={"BLOCK": block})
    return mode.submit(f"add_one-{block}", lambda: triton.compile(src, target=CUDA90), lambda kernel: None, lambda fk: None)


def test_async_compile_workers_see_the_scoped_selection(registry: Path) -> None:
    # Triton's AsyncCompileMode runs compiler.compile on an executor thread, which does not see the
    # launching thread's enabled() block; the kernel must still compile with its passes.
    from concurrent.futures import ThreadPoolExecutor

    from triton.runtime._async_compile import AsyncCompileMode

    triton_ext.enable("plugin")  # installs the hook
    triton_ext.disable()
    with ThreadPoolExecutor(max_workers=2) as pool:
        with AsyncCompileMode(pool) as mode:
            with triton_ext.enabled("plugin"):
                on = _submit_like_the_jit(mode, 256)
            off = _submit_like_the_jit(mode, 512)
            # Same source and options, other selection: not de-duplicated into the first compile.
            with triton_ext.enabled("plugin"):
                on_again = _submit_like_the_jit(mode, 512)
        assert renamed(on.result())
        assert not renamed(off.result())
        assert renamed(on_again.result())


def test_async_compile_keeps_the_set_of_submission_time(registry: Path) -> None:
    # A global enable() between submit and the worker's compile must not reach that compile.
    import threading as _threading
    from concurrent.futures import ThreadPoolExecutor

    from triton.runtime._async_compile import AsyncCompileMode

    triton_ext.enable("plugin")
    triton_ext.disable()
    gate = _threading.Event()
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(gate.wait)  # hold the only worker until the set has changed
        with AsyncCompileMode(pool) as mode:
            future = _submit_like_the_jit(mode, 1024)
            triton_ext.enable("plugin")
            gate.set()
            assert not renamed(future.result())
    triton_ext.disable()


def test_cache_key_covers_the_pass_infra_library(tmp_path: Path) -> None:
    # Two build trees whose plugin is byte-identical but whose libTritonExtPassInfra.so differs must
    # give different keys: the infra parses options and nests passes.
    import subprocess
    import sys

    from tests.python.conftest import BUILD_PLUGINS, REPO

    plugin = BUILD_PLUGINS / "libTritonExtLoopSplit.so"
    infra = BUILD_PLUGINS / "libTritonExtPassInfra.so"
    assert plugin.exists() and infra.exists(), f"build the plugins first ({BUILD_PLUGINS})"
    trees = []
    for i in range(2):
        root = tmp_path / f"build{i}"
        (root / "plugins").mkdir(parents=True)
        shutil.copy2(plugin, root / "plugins" / plugin.name)
        data = infra.read_bytes() + (b"\0" * (i + 1))  # trailing bytes: same code, other digest
        (root / "plugins" / infra.name).write_bytes(data)
        trees.append(root)
    script = (
        "import triton_ext\nfrom triton import knobs\n"
        "triton_ext.enable('loop_split')\nprint(knobs.runtime.add_stages_inspection_hook()[1])\n"
    )
    keys = []
    for root in trees:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_EXT_ENABLE")}
        env.update(TRITON_EXT_BUILD_DIR=str(root), TRITON_EXT_REGISTRY=str(REPO / "registry.yaml"),
                   TRITON_EXT_CACHE_DIR=str(tmp_path / "preflight"))
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, cwd=REPO)
        assert out.returncode == 0, out.stderr
        keys.append(out.stdout.strip().splitlines()[-1])
    assert keys[0] and keys[1] and keys[0] != keys[1]


_WITHOUT_ASYNC_COMPILE = """
import sys
import triton.runtime

# A Triton without async compiles: no triton.runtime._async_compile to import.
del triton.runtime._async_compile
sys.modules["triton.runtime._async_compile"] = None
import triton_ext
from triton_ext._triton import hook
from tests.python.conftest import compile_kernel, renamed

with triton_ext.enabled("plugin"):
    on = compile_kernel()
off = compile_kernel()
print("async mode:", hook._async_mode, "| on:", renamed(on), "| off:", renamed(off))
"""


def test_the_hook_works_in_a_triton_without_async_compiles(registry: Path) -> None:
    # Guard: hook._put's ImportError branch. The hook looks up Triton's AsyncCompileMode at install
    # only to carry a scoped selection into its workers; where Triton has none, it must install and
    # select passes as usual. In a child: the module is removed for the life of the process.
    import subprocess
    import sys

    from tests.python.conftest import REPO

    env = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_EXT_ENABLE")}
    out = subprocess.run([sys.executable, "-c", _WITHOUT_ASYNC_COMPILE], env=env, capture_output=True, text=True,
                         cwd=REPO, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "async mode: None | on: True | off: False" in out.stdout, out.stdout
