"""``triton_ext.testing``: what extension tests, the corpus and the reliability suites share.

Public authoring API (documented in CONTRIBUTING.md). The pytest plugin
:mod:`triton_ext.testing.plugin` (loaded by the repository's root ``conftest.py``) isolates the
test session before Triton is imported and gives the fixtures ``fresh_cache`` (a private Triton
kernel cache per test, so IR read back is this run's) and ``clean_triton_ext`` (no pass, hook or
tap left behind). The helpers::

    from triton_ext.testing import CUDA90, compile_through_cubin, import_file, require_built

    kernels = import_file(__file__, "../kernels.py")      # a sibling module, no sys.path edit
    require_built("my_pass")                               # an unbuilt plugin FAILS, never skips
    compiled = compile_through_cubin(kernels.attn, signature, constexprs, passes=("my_pass",))

Only a missing GPU may skip a test (:func:`require_gpu`).
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from .._choice import beats, ratios, spread
from .._modules import import_file
from .._timing import ReadingPlan, back_to_back_ms, flush_buffer, gpu_time_ms, interleaved_rounds, launch_cost_us

__all__ = [
    "CUDA90",
    "gpu_time_ms",
    "ReadingPlan",
    "launch_cost_us",
    "back_to_back_ms",
    "flush_buffer",
    "interleaved_rounds",
    "ratios",
    "spread",
    "beats",
    "isolate_environment",
    "enabled_label",
    "use_fresh_cache",
    "compile_through_cubin",
    "compile_unless_stock",
    "start_stage_worker",
    "inductor_variants_to_the_end",
    "reset",
    "forget_compiled_kernels",
    "jit_kernel_caches",
    "require_built",
    "require_gpu",
    "strip_locations",
    "run_plugin_pass",
    "import_file",
    "repo_root",
    "build_dir",
]

#: ``(backend, arch, warp size)`` of the target every CPU test compiles for: sm_90 runs the whole
#: pipeline ttir -> ttgir -> llir -> ptx -> cubin with the wheel's ptxas, no GPU needed.
CUDA90_TUPLE = ("cuda", 90, 32)

#: Variables a test session must not inherit: they enable passes or change failures into errors.
_INHERITED = ("TRITON_EXT_ENABLE", "TRITON_EXT_STRICT", "TRITON_EXT_REMARKS")


def enabled_label(label: str) -> Any:
    """Context manager enabling a benchmark row's passes for this thread: ``a+b`` enables a and
    b together, each optionally with options in MLIR's syntax (``a{flag=value}+b``), so that
    option variants are rows of the same run as the defaults."""
    from .._selection import enabled_text

    return enabled_text(label.replace("+", ","), origin=f"row {label!r}")


def isolate_environment(tmp: Path | None = None) -> Path:
    """Before Triton is imported: private kernel and preflight caches for this process, FP fusion
    on, no pass enabled from the environment, no entry-point fragments.

    The caches are always new (a kernel cached by an earlier run, or by a child process of this
    one, would skip the stages under test). Returns the private folder. Called once by the pytest
    plugin; scripts may call it too.
    """
    tmp = Path(tmp) if tmp is not None else Path(tempfile.mkdtemp(prefix="triton-ext-tests-"))
    os.environ["TRITON_CACHE_DIR"] = str(tmp / "triton-cache")
    os.environ["TRITON_EXT_CACHE_DIR"] = str(tmp / "preflight")
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    for var in _INHERITED:
        os.environ.pop(var, None)
    os.environ["TRITON_EXT_ENTRY_POINTS"] = "0"
    return tmp


def use_fresh_cache(directory: Path, monkeypatch: Any) -> Path:
    """Point Triton's kernel cache at ``directory`` for one test (``monkeypatch`` undoes it)."""
    import triton

    monkeypatch.setenv("TRITON_CACHE_DIR", str(directory))
    monkeypatch.setattr(triton.knobs.cache, "dir", str(directory), raising=False)
    return directory


def __getattr__(name: str) -> Any:
    if name == "CUDA90":  # built on first use, so importing this module does not import triton
        from triton.backends.compiler import GPUTarget

        return GPUTarget(*CUDA90_TUPLE)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def compile_through_cubin(
    fn: Any,
    signature: Mapping[str, str],
    constexprs: Mapping[str, Any] | None = None,
    *,
    passes: Sequence[str] = (),
    pass_options: Mapping[str, Any] | None = None,
    target: Any = None,
    options: Mapping[str, Any] | None = None,
    attrs: Any = None,
) -> Any:
    """``triton.compile`` of a ``@triton.jit`` function for ``target`` (default sm_90) with
    ``passes`` enabled on this thread (``triton_ext.enabled``); fails unless a cubin came out.

    ``signature`` may leave the constexprs out: they are added as ``"constexpr"``.
    """
    import triton
    from triton.compiler import ASTSource

    import triton_ext

    constexprs = dict(constexprs or {})
    # Constexprs keyed by name join the signature; keyed by position (``(i,)``, as Triton's JIT
    # gives them) they are in it already.
    full = {**dict(signature), **{k: "constexpr" for k in constexprs if isinstance(k, str) and k not in signature}}
    kwargs: dict[str, Any] = {"signature": full, "constexprs": constexprs}
    if attrs is not None:
        kwargs["attrs"] = attrs
    src = ASTSource(fn, **kwargs)
    target = target if target is not None else __getattr__("CUDA90")
    opts = dict(options or {})
    if passes:
        with triton_ext.enabled(*passes, options=pass_options):
            compiled = triton.compile(src, target=target, options=opts)
    else:
        compiled = triton.compile(src, target=target, options=opts)
    if getattr(target, "backend", "") == "cuda":
        assert compiled.asm.get("cubin"), "compilation did not reach cubin"
    return compiled


def compile_unless_stock(
    fn: Any,
    signature: Mapping[str, str],
    constexprs: Mapping[str, Any] | None,
    *,
    passes: Sequence[str],
    stock: Any,
    stop_after: str | None = None,
    target: Any = None,
    options: Mapping[str, Any] | None = None,
    attrs: Any = None,
    isolate: bool = True,
) -> Any | None:
    """``passes``' variant of a kernel compiled as the transparent mode compiles it: ``None`` when
    the compile stopped because the variant is the no-pass kernel ``stock`` (its IR after
    ``stop_after``, by default the last stage with one of ``passes``, and after each later stage,
    equals ``stock``'s; ``triton_ext._variants``), else the compiled kernel; its stages with
    passes run in a worker first, as the mode's do, unless ``isolate`` is false
    (``triton_ext._triton.isolated``). Arguments as for :func:`compile_through_cubin`, which
    gives ``stock``."""
    from .. import _selection, _triton, _variants
    from .._triton import isolated

    last = stop_after or _variants.last_stage(_selection.Selection.of(_selection.build(list(passes), None)))
    token = _triton.stage_editor.set(_variants.stop_if_stock(stock.asm, stock.metadata, last))
    isolating = isolated.isolate.set(isolate)
    try:
        with _selection.lend_hook():  # as the mode's variant compiles: the stop runs with no pass too
            return compile_through_cubin(fn, signature, constexprs, passes=passes, target=target, options=options,
                                         attrs=attrs)
    except _variants.SameAsStock:
        return None
    finally:
        isolated.isolate.reset(isolating)
        _triton.stage_editor.reset(token)


def start_stage_worker() -> None:
    """Start this thread's isolated-stage worker (``triton_ext._triton.isolated``) now, so a
    timing of :func:`compile_unless_stock` does not include its start."""
    from .._triton import isolated

    isolated.start()


@contextlib.contextmanager
def inductor_variants_to_the_end() -> Iterator[None]:
    """Inside the block, the transparent mode's Inductor path compiles every pass variant to the end
    and compares its code, as before 754eeb5, instead of stopping it as soon as its IR is the
    no-pass kernel's (:func:`triton_ext._inductor_compile.compile_variant`): for benchmarks that
    measure what the stop saves."""
    from .. import _inductor_compile

    saved = _inductor_compile.stock_ir
    _inductor_compile.stock_ir = lambda result: None  # the no-pass IR unknown: no stop
    try:
        yield
    finally:
        _inductor_compile.stock_ir = saved


@contextlib.contextmanager
def ignoring_needs_ops() -> Iterator[None]:
    """Inside the block, the transparent mode compiles every candidate's variant whatever the
    kernel's operations, as before the registry's ``needs_ops`` (:func:`triton_ext._variants.may_change`):
    for benchmarks that measure what the declarations save."""
    from .. import _variants  # the JIT and Inductor paths both look it up there

    saved = _variants.may_change
    _variants.may_change = lambda selection, stock_ttir: True
    try:
        yield
    finally:
        _variants.may_change = saved


def reset() -> None:
    """Disable every pass, remove triton_ext's hook and tap, and leave Triton's hook slot empty."""
    import sys

    if "triton_ext._triton" in sys.modules:
        from .. import _selection, _triton

        _selection.disable()
        _triton.uninstall()
    if "triton" in sys.modules:
        from triton import knobs

        knobs.runtime.add_stages_inspection_hook = None


def forget_compiled_kernels() -> None:
    """Empty every JIT function's in-memory kernel cache, as activating the transparent mode does:
    the next launch of each kernel is a cache miss that recompiles from Triton's disk cache. A
    harness that compares launches with and without the mode gives both sides this same start."""
    from .._jit_caches import forget_compiled

    forget_compiled()


def jit_kernel_caches() -> list[dict[str, Any]]:
    """Every JIT function's in-memory kernel cache (one dict per function and device): what
    :func:`forget_compiled_kernels` empties, for a harness that saves and puts back their contents."""
    from .._jit_caches import kernel_caches

    return kernel_caches()


def require_built(*extensions: str) -> list[Path]:
    """The libraries of ``extensions``; FAILS the calling test (or module, at import) when one is
    not built: a broken build must not look green. Only a missing GPU may skip."""
    import pytest

    from .._manifest import load_manifest

    manifest = load_manifest()
    paths = [manifest.extension(name).library_path() for name in extensions]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        pytest.fail(f"plugin(s) not built: {', '.join(missing)}; run `triton-ext build {' '.join(extensions)}`",
                    pytrace=False)
    return paths


def require_gpu() -> Any:
    """``torch`` when a CUDA GPU is visible; otherwise skip (the one allowed reason to skip)."""
    import pytest

    torch = pytest.importorskip("torch", reason="needs a GPU (torch is not installed)")
    if not torch.cuda.is_available():
        pytest.skip("needs a GPU (no CUDA device visible)")
    return torch


def run_plugin_pass(ttir: str, pass_name: str, options: Sequence[str] = ()) -> None:
    """Run one loaded extension's pass on the module ``ttir`` through its plugin's own
    ``add_<pass>`` entry, with ``options`` in MLIR's ``name=value`` form, as Triton would: past
    triton_ext's checks of the declared options, so a test reaches the pass's own diagnostics.
    Raises ``RuntimeError`` when the pass fails; its diagnostics go to stderr."""
    from .._triton.runner import reparse
    from .._triton.tap import libtriton

    ir, passes = libtriton().ir, libtriton().passes
    context = ir.context()
    ir.load_dialects(context)
    module = reparse(ttir, context)
    pm = ir.pass_manager(context)
    getattr(passes.plugin, f"add_{pass_name}")(pm, list(options))
    pm.run(module, pass_name.replace("_", "-"))


_LOC = re.compile(r"\s*loc\((?:[^()]|\([^()]*\))*\)")


def strip_locations(ir: str) -> str:
    """IR text without ``loc(...)`` annotations."""
    return _LOC.sub("", ir)


def repo_root() -> Path:
    """The checkout that holds triton_ext (registry.yaml, extension folders, build/)."""
    from .._settings import repo_root as _root

    return _root()


def build_dir() -> Path:
    """The build tree (``$TRITON_EXT_BUILD_DIR`` or ``<checkout>/build``); plugins are in ``plugins/``."""
    from .._settings import settings

    return Path(settings.build_dir)
