"""Every registered pass on every real-world kernel (pinned PyPI packages), through cubin.

The kernels are imported from liger-kernel, fla-core and torchao (the ``realworld`` extra;
tools/setup.sh installs it with a CPU torch); realworld_kernels.py only describes how their
launchers call them. For each kernel one worker task compiles the baseline (no pass) and then
each registered pass alone, in strict mode, with the MLIR verifier on every stage's output
(see sweep.py). Two worker processes share the work. The outcome of every compile, and where
each pass fires (changes the IR), is written to ``build/realworld/cpu-reach.json``;
``tests/realworld/make_table.py`` renders it as tests/realworld/REACH.md.

A pass that turns a compiling kernel into a failing one fails its test (issue 16).
"""

from __future__ import annotations

import concurrent.futures
import datetime
import importlib.metadata
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import triton_ext
from triton_ext.bench.gpu import checkout_commit
from triton_ext.testing import CUDA90, repo_root

try:
    import torch  # noqa: F401
    from tests.realworld.realworld_kernels import REALWORLD, UPSTREAM_INCOMPATIBLE, Tensors, compile_args
except ImportError as exc:  # the extra is part of the test set-up: say how to get it
    raise ImportError(f"{exc}; the real-world corpus needs the 'realworld' extra and a CPU torch: "
                      "run `bash tools/setup.sh` (or see the realworld notes in pyproject.toml)") from exc
from tests.corpus.test_corpus_passes import _why_not
from tests.realworld.sweep import sweep_kernel

OUT = repo_root() / "build" / "realworld" / "cpu-reach.json"
PACKAGES = ("liger-kernel", "fla-core", "torchao", "sglang", "flag-gems", "sageattention")
#: vLLM is not installed: its kernel files come from the wheel pinned in vllm-requirements.txt.
VLLM_PIN = repo_root() / "tests" / "realworld" / "vllm-requirements.txt"
#: Pinned in tests/realworld/nodeps-requirements.txt (installed without dependencies), not in
#: pyproject.toml's realworld extra.
NODEPS = repo_root() / "tests" / "realworld" / "nodeps-requirements.txt"


def _passes() -> list[tuple[str, str | None]]:
    return [(spec.name, _why_not(spec)) for spec in triton_ext.manifest().passes]


PASSES = _passes()
RUNNABLE = [name for name, why in PASSES if why is None]


def _versions() -> dict[str, str]:
    out = {}
    for dist in ("triton", "torch", *PACKAGES):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[dist] = "missing"
    return out


def _selected_kernels(request: pytest.FixtureRequest) -> list[Any]:
    """The kernels whose tests this session runs (``-k``, node ids): only those are compiled."""
    names = set()
    for item in request.session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "kernel" in params:  # a RealKernel here, its name in other modules' tests
            names.add(getattr(params["kernel"], "name", params["kernel"]))
        if "kernel_name" in params:
            names.add(params["kernel_name"])
    return [k for k in REALWORLD if k.name in names]


@pytest.fixture(scope="module")
def sweep(request: pytest.FixtureRequest) -> dict[tuple[str, str | None], dict[str, Any]]:
    start = time.perf_counter()
    kernels = _selected_kernels(request)
    # A partial run (some kernels deselected) keeps the full table's file as it is.
    out_file = OUT if len(kernels) == len(REALWORLD) else OUT.with_name("cpu-reach-subset.json")
    workers = max(1, min(2, os.cpu_count() or 1))
    results: dict[tuple[str, str | None], dict[str, Any]] = {}
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=ctx) as pool:
        # Longest kernels first so the two workers finish together.
        order = sorted(kernels, key=lambda k: k.kind not in ("attention", "gemm", "moe"))
        futures = {pool.submit(sweep_kernel, k.name, RUNNABLE): k.name for k in order}
        for future in concurrent.futures.as_completed(futures):
            for outcome in future.result():
                results[(outcome["kernel"], outcome["pass_name"])] = outcome
    out_file.parent.mkdir(parents=True, exist_ok=True)
    out_file.write_text(json.dumps({
        "what": "real-world kernels x registered passes, compiled through cubin for cuda:90 on CPU",
        "commit": checkout_commit(short=True, allow_dirty=True), "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "target": f"{CUDA90.backend}:{CUDA90.arch}", "versions": _versions(), "workers": workers,
        "wall_seconds": round(time.perf_counter() - start, 1),
        "kernels": [{"name": k.name, "package": k.package, "module": k.module, "attr": k.attr, "kind": k.kind}
                    for k in kernels],
        "passes": [{"name": n, "skipped": why} for n, why in PASSES],
        "upstream_incompatible": {n: why for n, (_, why) in UPSTREAM_INCOMPATIBLE.items()},
        "outcomes": sorted(results.values(), key=lambda o: (o["kernel"], o["pass_name"] or "")),
    }, indent=1) + "\n", encoding="utf-8")
    return results


def test_corpus_is_large_and_pinned() -> None:
    packages = {k.package for k in REALWORLD}
    assert len(REALWORLD) >= 30 and len(packages) >= 3, (len(REALWORLD), packages)
    assert {"attention", "gemm", "norm", "softmax", "cross_entropy", "rotary", "moe", "embedding"} <= {
        k.kind for k in REALWORLD}
    pyproject = (repo_root() / "pyproject.toml").read_text(encoding="utf-8")
    nodeps = NODEPS.read_text(encoding="utf-8").splitlines()
    for dist, version in _versions().items():
        if dist in PACKAGES:
            assert f'"{dist}=={version}"' in pyproject or f"{dist}=={version}" in nodeps, \
                f"{dist} {version} is installed but not the pinned version"


@pytest.mark.parametrize("kernel", REALWORLD, ids=lambda k: k.name)
def test_signature_is_derived_from_the_launch(kernel: Any) -> None:
    signature, constexprs, _ = compile_args(kernel.fn(), kernel.build(Tensors("meta")))
    assert list(signature) == [p.name for p in kernel.fn().params]
    assert any(t.startswith("*") for t in signature.values()), signature


@pytest.mark.parametrize("kernel", REALWORLD, ids=lambda k: k.name)
def test_baseline_compiles(sweep: dict, kernel: Any) -> None:
    outcome = sweep[(kernel.name, None)]
    assert outcome["ok"], f"{kernel.name} does not compile without passes: {outcome['error']}"


def _pass_params() -> list[Any]:
    out = []
    for name, why in PASSES:
        marks = [pytest.mark.skip(reason=why)] if why else []
        for kernel in REALWORLD:
            out.append(pytest.param(name, kernel.name, id=f"{name}-{kernel.name}", marks=marks))
    return out


@pytest.mark.parametrize(("pass_name", "kernel_name"), _pass_params())
def test_pass_keeps_kernel_compiling(sweep: dict, pass_name: str, kernel_name: str) -> None:
    base = sweep[(kernel_name, None)]
    if not base["ok"]:
        pytest.fail(f"baseline of {kernel_name} failed: {base['error']}")
    outcome = sweep[(kernel_name, pass_name)]
    assert outcome["ok"], f"{pass_name} turns compiling {kernel_name} into a failing one: {outcome['error']}"
    # A compile stopped after the pass's stage never reached its companions' (registry `with:`).
    brought = [] if outcome["stopped"] else triton_ext.manifest().find_pass(pass_name).companions
    assert outcome["placed"] == sorted([pass_name, *brought]), outcome


@pytest.mark.parametrize("name", sorted(UPSTREAM_INCOMPATIBLE))
def test_upstream_incompatible_kernels_still_fail_without_passes(name: str) -> None:
    # Keeps the exclusion list honest: once a package release compiles again, move it back.
    import triton
    from triton.compiler import ASTSource
    from triton.compiler.errors import CompilationError

    kernel, _ = UPSTREAM_INCOMPATIBLE[name]
    fn = kernel.fn()
    signature, constexprs, attrs = compile_args(fn, kernel.build(Tensors("meta")))
    with pytest.raises(CompilationError):
        triton.compile(ASTSource(fn, signature, constexprs, attrs), target=CUDA90)
