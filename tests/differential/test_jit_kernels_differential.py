"""The GPU check's kernels (gpu_kernels.py), compiled by the stock JIT pipeline on the CPU with
and without loop_split (through triton_ext's stages hook, as on the GPU), interpreted on the host
one program per argument set: stored values and trip counts must agree with each other and with
the exact host model. This also exercises check_gpu.py's host side (argument generation, the
runaway guard) without a GPU."""

from __future__ import annotations


import pytest


import numpy as np  # noqa: E402
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

from tests.differential import gpu_kernels as gk  # noqa: E402
import triton_ext  # noqa: E402

pytestmark = pytest.mark.usefixtures("fresh_cache")  # compile from scratch
from tests.differential.jit_interp import kernel_func, run_programs, stored  # noqa: E402

TARGET = GPUTarget("cuda", 90, 32)
CONSTEXPRS = ("STEP", "IV_OFF", "INV_OFF", "PRED", "UNSIGNED", "TENSOR", "R")



def _ttir(fn, signature: dict[str, str], constexprs: dict[str, object], split: bool) -> str:
    src = ASTSource(fn, signature, constexprs=constexprs)
    if split:
        with triton_ext.enabled("loop_split"):
            return triton.compile(src, target=TARGET).asm["ttir"]
    return triton.compile(src, target=TARGET).asm["ttir"]


def _cases_for(config, count):
    # check_gpu.py imports torch at module level; its generator is small enough to mirror here.
    import random

    from tests.differential.loop_kernels import LoopKernel, loop_args, trips

    kernel = LoopKernel("tensor" if config["TENSOR"] else "scalar", config["width"], False, "slt",
                        step=config["STEP"], iv_off=config["IV_OFF"], inv_off=config["INV_OFF"],
                        rows=config["R"], cols=config["R"])
    limit = (1 << (config["width"] - 1)) - 1
    cases = loop_args(random.Random(str(sorted(config.items()))), kernel, count)
    return [c for c in cases
            if c[0] + trips(c[0], c[1], config["STEP"], config["width"], False) * config["STEP"] <= limit]


@pytest.mark.parametrize("name,width,args", [
    ("issue14", 64, [(0, 10, 5), (2**61, 2**61 + 10, 2**61 + 5), (2**62, 2**62 + 10, 2**62 + 3)]),
    ("issue14_n_plus_one", 32, [(0, 8, 2**31 - 1), (0, 8, 5), (-3, 8, 2**31 - 2)]),
], ids=["issue14", "n_plus_one"])
def test_issue14_kernels_through_the_jit_pipeline(name, width, args):
    t = f"i{width}"
    sig = {"out": "*i64", "lb": t, "ub": t, "n": t}
    results = []
    for split in (False, True):
        func = kernel_func(_ttir(getattr(gk, name), sig, {}, split))
        lanes = list(zip(*args))
        res = run_programs(func, [], len(args), scalar_args={1: lanes[0], 2: lanes[1], 3: lanes[2]})
        results.append((stored(res, 0, 1, by_program=False)[:, 0].tolist(), res.trips.tolist()))
    expected = [gk.reference(lb, ub, n, width=width, step=1, iv_off=0,
                             inv_off=1 if name.endswith("one") else 0, pred="lt", unsigned=False)
                for lb, ub, n in args]
    # The issue's kernel adds 1 or 2 only (no + i): recompute its accumulator.
    exact = []
    for lb, ub, n in args:
        acc, bound = 0, gk._wrap(n + (1 if name.endswith("one") else 0), width)
        for i in range(lb, ub):
            acc = gk._wrap(acc * 3 + (1 if i < bound else 2), width)
        exact.append(acc)
    assert results[0][0] == exact, "interpreter disagrees with the exact model"
    assert results[1] == results[0], f"{name}: with loop_split {results[1]} != without {results[0]}"
    assert [e[1] for e in expected] == results[0][1]


CONFIGS = [
    {"width": 64, "UNSIGNED": False, "TENSOR": False, "PRED": 0, "STEP": 1, "IV_OFF": 0, "INV_OFF": 1, "R": 4},
    {"width": 32, "UNSIGNED": True, "TENSOR": False, "PRED": 3, "STEP": 3, "IV_OFF": 1, "INV_OFF": -2, "R": 4},
    {"width": 32, "UNSIGNED": False, "TENSOR": True, "PRED": 1, "STEP": 64, "IV_OFF": 1, "INV_OFF": 1, "R": 4},
    {"width": 64, "UNSIGNED": True, "TENSOR": True, "PRED": 2, "STEP": 3, "IV_OFF": 0, "INV_OFF": -2, "R": 4},
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(f"{k}{v}" for k, v in c.items()))
def test_batch_kernel_through_the_jit_pipeline(config):
    t = f"i{config['width']}"
    sig = {"lbs": f"*{t}", "ubs": f"*{t}", "ns": f"*{t}", "out": f"*{t}", "trips": "*i32"}
    sig.update({k: "constexpr" for k in CONSTEXPRS})
    cx = {k: config[k] for k in CONSTEXPRS}
    cases = _cases_for(config, 3000)
    per = config["R"] ** 2 if config["TENSOR"] else 1
    runs = []
    for split in (False, True):
        func = kernel_func(_ttir(gk.batch, sig, cx, split))
        res = run_programs(func, [[c[k] for c in cases] for k in range(3)], len(cases))
        assert not res.runaway.any() and not res.undefined.any()
        runs.append((stored(res, 3, per), stored(res, 4, 1)[:, 0], res.trips))
    (acc0, cnt0, trips0), (acc1, cnt1, trips1) = runs
    bad = np.nonzero((acc0 != acc1).any(axis=1) | (cnt0 != cnt1) | (trips0 != trips1))[0]
    assert bad.size == 0, [(cases[i], acc0[i][:4].tolist(), acc1[i][:4].tolist(),
                            int(cnt0[i]), int(cnt1[i])) for i in bad[:5]]
    for lane in range(0, len(cases), 97):
        acc, count = gk.reference(*cases[lane], width=config["width"], step=config["STEP"],
                                  iv_off=config["IV_OFF"], inv_off=config["INV_OFF"],
                                  pred=gk.PREDS[config["PRED"]], unsigned=config["UNSIGNED"],
                                  rows=config["R"] if config["TENSOR"] else 0)
        assert (acc0[lane].tolist(), int(cnt0[lane])) == (acc, count), cases[lane]


@pytest.mark.parametrize("name", ["issue26_unsigned", "issue26_signed"])
def test_issue26_kernels_through_the_jit_pipeline(name):
    # Issue 26: the reproducers as written there, compiled by the stock pipeline with and without
    # loop_split and interpreted for the issue's divisors; both must store the exact tile
    # (acc[0, 0] = 44). With the comparing loop dropped, the launches whose guard fails stored 0.
    signed = name == "issue26_signed"
    sig = {"out": "*i32", ("nq" if signed else "d"): "i32" if signed else "u32"}
    divisors = [d for k, d in gk.ISSUE26_LAUNCHES if k == name]
    if signed:
        divisors += [1, 7, 2**31 - 1, -(2**31)]
    tiles = []
    for split in (False, True):
        ttir = _ttir(getattr(gk, name), sig, {}, split)
        if split:
            assert ttir.count("scf.for") >= 2, "loop_split left the reproducer alone"
        func = kernel_func(ttir)
        bits = [d - (1 << 32) if d >= 1 << 31 else d for d in divisors]  # the i32 argument bits
        res = run_programs(func, [], len(divisors), scalar_args={1: bits})
        assert not res.undefined.any() and not res.runaway.any()
        tiles.append(stored(res, 0, 256, by_program=False).tolist())
    expected = [gk.issue26_reference(d, signed) for d in divisors]
    assert tiles[0] == expected, "interpreter disagrees with the exact model"
    bad = [(d, tiles[1][i][0]) for i, d in enumerate(divisors) if tiles[1][i] != expected[i]]
    assert not bad, f"{name}: with loop_split (divisor, acc[0, 0]) = {bad}, expected 44 each"
