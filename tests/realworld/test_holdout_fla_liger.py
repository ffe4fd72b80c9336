"""The fla/liger hold-out set (holdout_fla_liger.py) compiles stock and stays out of the corpus.

Each kernel is compiled without any pass through cubin for sm_90 on meta tensors, as
test_realworld_passes.py compiles the corpus (``compile_args`` -> ``ASTSource`` ->
``triton.compile``), so the GPU run later starts from launches known to compile. The second test
keeps the set a hold-out: no name of it, and no (module, attribute, launch size) of it, may
already be in the corpus the passes were tuned on.
"""

from __future__ import annotations

from typing import Any

import pytest

try:
    import torch
    from tests.realworld.holdout_fla_liger import HOLDOUT_FLA_LIGER
    from tests.realworld.more_kernels import MORE
    from tests.realworld.realworld_kernels import (REALWORLD, UPSTREAM_INCOMPATIBLE, RealKernel, Tensors,
                                                   compile_args)
except ImportError as exc:  # the extra is part of the test set-up: say how to get it
    raise ImportError(f"{exc}; the hold-out set needs the 'realworld' extra and a CPU torch: "
                      "run `bash tools/setup.sh` (or see the realworld notes in pyproject.toml)") from exc
from triton_ext.testing import CUDA90


def _corpus() -> list[RealKernel]:
    # MORE too: its "gpu_only" entries are measured on the GPU without being in REALWORLD.
    seen: dict[str, RealKernel] = {}
    for kernel in [*REALWORLD, *MORE, *(k for k, _ in UPSTREAM_INCOMPATIBLE.values())]:
        seen.setdefault(kernel.name, kernel)
    return list(seen.values())


def _size(kernel: RealKernel) -> tuple[Any, ...]:
    """What makes two launches of one kernel the same measurement: shapes, dtypes and scalars."""
    launch = kernel.build(Tensors("meta"))
    out = []
    for name, value in sorted(launch.args.items()):
        if isinstance(value, torch.Tensor):
            out.append((name, tuple(value.shape), str(value.dtype)))
        else:
            out.append((name, repr(value)))
    return tuple(out), launch.grid, launch.num_warps, launch.num_stages


@pytest.mark.parametrize("kernel", HOLDOUT_FLA_LIGER, ids=lambda k: k.name)
def test_holdout_compiles_stock_to_cubin(kernel: RealKernel) -> None:
    import triton
    from triton.compiler import ASTSource

    fn = kernel.fn()
    launch = kernel.build(Tensors("meta"))
    signature, constexprs, attrs = compile_args(fn, launch)
    assert list(signature) == [p.name for p in fn.params]
    compiled = triton.compile(ASTSource(fn, signature=signature, constexprs=constexprs, attrs=attrs),
                              target=CUDA90, options={"num_warps": launch.num_warps, "num_stages": launch.num_stages})
    assert compiled.asm.get("cubin"), f"{kernel.name}: no cubin"


def test_holdout_is_disjoint_from_the_corpus() -> None:
    corpus = _corpus()
    assert 10 <= len(HOLDOUT_FLA_LIGER) <= 12
    assert all(k.name.startswith("ho_") for k in HOLDOUT_FLA_LIGER)
    names = [k.name for k in HOLDOUT_FLA_LIGER]
    assert len(set(names)) == len(names), "duplicate hold-out names"
    assert not set(names) & {k.name for k in corpus}, "a hold-out name is in the corpus"
    assert {k.package for k in HOLDOUT_FLA_LIGER} == {"fla-core", "liger-kernel"}
    # Only corpus entries of the same kernel are built (building every vLLM/sglang entry is slow).
    for kernel in HOLDOUT_FLA_LIGER:
        same_fn = [c for c in corpus if (c.module, c.attr) == (kernel.module, kernel.attr)]
        for other in same_fn:
            assert _size(other) != _size(kernel), f"{kernel.name} repeats the corpus entry {other.name}"
    sizes = [(k.module, k.attr, _size(k)) for k in HOLDOUT_FLA_LIGER]
    assert len(set(map(repr, sizes))) == len(sizes), "two hold-out entries are the same launch"
