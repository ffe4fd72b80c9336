"""The hold-out set (holdout_serving_gems.py): every kernel compiles stock for sm_90 through cubin
on the CPU, and none of them is, or duplicates, a corpus entry the transparent mode was tuned on."""

from __future__ import annotations

from typing import Any

import pytest

from tests.realworld.holdout_serving_gems import HOLDOUT_SERVING_GEMS
from tests.realworld.more_kernels import MORE
from tests.realworld.realworld_kernels import REALWORLD, UPSTREAM_INCOMPATIBLE, Tensors, compile_args
from triton_ext.testing import CUDA90


@pytest.mark.parametrize("kernel", HOLDOUT_SERVING_GEMS, ids=lambda k: k.name)
def test_holdout_kernel_compiles_stock_to_cubin(kernel: Any) -> None:
    import triton
    from triton.compiler import ASTSource

    fn = kernel.fn()
    launch = kernel.build(Tensors("meta"))
    signature, constexprs, attrs = compile_args(fn, launch)
    assert list(signature) == [p.name for p in fn.params]
    # No pass enabled: the stock pipeline, as the GPU harness's baseline runs it.
    compiled = triton.compile(ASTSource(fn, signature, constexprs, attrs), target=CUDA90,
                              options={"num_warps": launch.num_warps, "num_stages": launch.num_stages})
    assert compiled.asm.get("cubin"), f"{kernel.name}: no cubin"
    assert compiled.metadata.num_warps == launch.num_warps


def test_holdout_is_disjoint_from_the_corpus() -> None:
    corpus = [*REALWORLD, *MORE, *(k for k, _ in UPSTREAM_INCOMPATIBLE.values())]
    names = [k.name for k in HOLDOUT_SERVING_GEMS]
    assert len(set(names)) == len(names) and all(n.startswith("ho_") for n in names), names
    assert 10 <= len(names) <= 12, names
    assert not set(names) & {k.name for k in corpus}
    # Not only the names: no hold-out entry launches a corpus kernel (same module and attribute),
    # so none of them is a corpus kernel at another size; nor shares a builder with one.
    same_kernel = {(k.module, k.attr) for k in HOLDOUT_SERVING_GEMS} & {(k.module, k.attr) for k in corpus}
    assert not same_kernel, same_kernel
    assert not {id(k.build) for k in HOLDOUT_SERVING_GEMS} & {id(k.build) for k in corpus}
    # Kept out of the tuned corpus: importing it registers nothing.
    assert not set(names) & {k.name for k in REALWORLD}
    assert {"flag-gems", "sglang", "vllm"} <= {k.package for k in HOLDOUT_SERVING_GEMS}
