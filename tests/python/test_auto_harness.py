"""The pairing of benchmarks/auto_mode_gpu.py, whose readings the transparent mode's documented
numbers come from: GPU-time rounds in ABBA order with the mode active in exactly its own slots;
back-to-back pairs that alternate the two states' kernels inside one activation. The readings
here report which state they ran (no GPU needed); the mode is the real one, activated and put
back by the harness."""

from __future__ import annotations

import pytest

from triton_ext import _auto


def test_rounds_are_abba_with_one_activation_per_mode_reading() -> None:
    from benchmarks.auto_mode_gpu import _paired

    seen: list[str] = []
    activations: list[object] = []

    def read() -> float:
        mode = _auto.active()
        if mode is not None:
            activations.append(mode)
        seen.append("A" if mode is not None else "S")
        return 10.0 if mode is not None else 11.0

    result = _paired(["loop_split"], read, rounds=2)
    assert "".join(seen) == "SAASASSA"
    assert len(set(map(id, activations))) == 4  # each mode reading in its own activation
    assert result["ratios"] == [pytest.approx(1.1), pytest.approx(1.1)]
    assert result["stock"] == [11.0] * 4 and result["auto"] == [10.0] * 4
    assert _auto.active() is None  # put back after every slot


def test_back_to_back_pairs_alternate_the_two_states_kernels_inside_one_activation(monkeypatch) -> None:
    # The pairs launch stock's kernels and the mode's in turn, each state what its own launch left
    # in the JIT's cache; the mode stays active for all of them, its kernel under the same key.
    import triton

    import benchmarks.auto_mode_gpu as harness

    @triton.jit
    def kernel(x):  # noqa: ANN001 - a Triton argument
        pass

    stock_kernel, mode_kernel = object(), object()
    kernel.device_caches[0] = ({}, None, None, None)
    cache = kernel.device_caches[0][0]

    def go() -> None:  # a launch: a cache miss compiles (here: the mode's kernel when it is on)
        if "spec" not in cache and _auto.active() is not None:
            cache["spec custom_pipeline"] = mode_kernel  # a variant's compile, under its own key
        cache.setdefault("spec", mode_kernel if _auto.active() is not None else stock_kernel)

    seen: list[str] = []
    modes: set[int] = set()

    def read() -> float:
        go()  # a reading launches: always a hit on the state put back before it
        assert _auto.active() is not None
        modes.add(id(_auto.active()))
        seen.append("S" if cache["spec"] is stock_kernel else "A")
        return 11.0 if seen[-1] == "S" else 10.0

    monkeypatch.setattr(harness.torch.cuda, "synchronize", lambda: None)  # no GPU here: nothing queued
    result = harness._interleaved(go, ["loop_split"], read, pairs=4)
    assert "".join(seen) == "SAASSAAS"
    assert len(modes) == 1  # one activation for every pair
    assert result["ratios"] == [pytest.approx(1.1)] * 4 and result["ratio"] == pytest.approx(1.1)
    assert result["stock_keys_kept"] and result["misses"] == 0
    assert _auto.active() is None


@pytest.mark.parametrize("spread", [0.0, 0.08, 0.5])
def test_back_to_back_pairs_go_on_in_blocks_until_the_median_is_known(monkeypatch, spread: float) -> None:
    # A quiet kernel: one block. A launch-bound one whose pairs spread as on the H200 host (an
    # interquartile range of 8%): blocks until the median is known within +-0.5%. One too noisy
    # for that: stops at the cap.
    import random

    import triton

    import benchmarks.auto_mode_gpu as harness

    @triton.jit
    def kernel(x):  # noqa: ANN001 - a Triton argument
        pass

    kernel.device_caches[0] = ({}, None, None, None)
    noise = random.Random(7)

    def read() -> float:
        return 20.0 * (1 + spread * (noise.random() - 0.5))

    monkeypatch.setattr(harness.torch.cuda, "synchronize", lambda: None)
    result = harness._interleaved(lambda: None, ["loop_split"], read, pairs=50, max_pairs=600, halfwidth=0.005)
    n = len(result["ratios"])
    assert n % 50 == 0 and len(result["stock"]) == len(result["auto"]) == n
    width = harness.median_halfwidth(result["ratios"])
    if spread == 0.0:
        assert n == 50 and width == 0.0
    elif spread == 0.08:
        assert 50 < n < 600 and width <= 0.005 < harness.median_halfwidth(result["ratios"][:n - 50])
    else:
        assert n == 600 and width > 0.005
    with pytest.raises(ValueError, match="pairs must be at least 1"):
        harness._interleaved(lambda: None, ["loop_split"], read, pairs=0)


def test_first_launch_over_stock_is_per_kernel() -> None:
    # Issue 27 bounds what the mode adds to each kernel's first launch: a slow-compiling kernel's
    # own cold launch does not count against it.
    from benchmarks.auto_mode_gpu import first_launch_over_stock

    rows = [{"kernel": "prefix_prefill", "first_launch_s": 12.9, "stock_first_s": 6.9},
            {"kernel": "extend", "first_launch_s": 6.4, "stock_first_s": 1.3},
            {"kernel": "decode", "first_launch_s": 1.5, "stock_first_s": 0.3}]
    summary = first_launch_over_stock(rows)
    assert summary["max"] == pytest.approx(6.0) and summary["max_kernel"] == "prefix_prefill"
    assert summary["median"] == pytest.approx(5.1) and summary["stock_cold_median"] == pytest.approx(1.3)
    assert first_launch_over_stock([])["max"] is None


def test_forget_compiled_kernels_empties_every_jit_functions_cache() -> None:
    # What every slot of the pairing starts with, stock ones included (what activating the mode does).
    import triton

    from triton_ext.testing import forget_compiled_kernels

    @triton.jit
    def kernel(x):  # noqa: ANN001 - a Triton argument
        pass

    compiled = object()
    kernel.device_caches[0] = ({"a specialization": compiled}, None, None, None)
    forget_compiled_kernels()
    assert kernel.device_caches[0][0] == {}


def test_torch_compile_children_alternate_and_their_kernels_are_compared(tmp_path) -> None:
    # benchmarks/auto_torch_compile.py: each configuration as often first as second, and the
    # claim "the auto children ran the stock kernels" read from the PTX their Triton caches hold,
    # whose debug sections name a path that differs in every process.
    from benchmarks.auto_torch_compile import alternating, kernel_code, same_kernels

    assert [c for c, _ in alternating(3, "auto")] == ["stock", "auto", "auto", "stock", "stock", "auto"]
    assert [e for _, e in alternating(1, "auto:loop_split")] == [None, "auto:loop_split"]

    def ptx(body: str, path: str) -> str:
        return (f"//\n// Generated by LLVM NVPTX Back-End\n.entry k() {{\n\t{body}\t// {path}:3:7\n}}\n"
                f'\t.file\t1 "{path}"\n\t.section\t.debug_info\n.b8 47 // DW_AT_comp_dir\n')

    for name, text in {"one/a/k.ptx": ptx("ld.global.b32 %r1, [%rd1];", "/tmp/x/k.py"),
                       "two/b/k.ptx": ptx("ld.global.b32 %r1, [%rd1];", "/tmp/y/k.py"),
                       "two/b/k.cubin": "not PTX",
                       "three/k.ptx": ptx("st.global.b32 [%rd1], %r1;", "/tmp/x/k.py")}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    one, two, three = (kernel_code(tmp_path / d) for d in ("one", "two", "three"))
    assert len(one) == 1 and one == two != three  # same code in other paths; other code
    stock = [{"kernels": one}, {"kernels": two}]
    assert same_kernels(stock, [{"kernels": one}])["auto_equals_stock"]
    extra = same_kernels(stock, [{"kernels": one}, {"kernels": one + three}])
    assert not extra["auto_equals_stock"] and extra["auto_only"] == three
    assert not same_kernels([{"kernels": []}], [{"kernels": []}])["auto_equals_stock"]  # nothing compiled proves nothing


def test_the_hold_out_set_is_its_own_and_runs_whole() -> None:
    # --set holdout runs exactly the hold-out kernels, and --set all (the tuned corpus) none of them.
    from benchmarks.auto_mode_gpu import cases
    from tests.realworld.holdout_kernels import HOLDOUT

    names = [k.name for k in HOLDOUT]
    assert list(cases(None, "holdout")) == names and len(set(names)) == len(names) >= 15
    assert not set(names) & set(cases(None, "all"))


def test_auto_gpu_checks_name_only_kernels_the_harness_has() -> None:
    """benchmarks/auto_gpu_checks.sh names kernels by hand for its GPU runs (the pipelining and
    unrolling checks); a kernel renamed or dropped from the corpus would make a run on scarce GPU
    time measure less than it says, silently (auto_mode_gpu keeps only the names it knows)."""
    import re
    from pathlib import Path

    from benchmarks.auto_mode_gpu import cases

    script = (Path(__file__).parents[2] / "benchmarks" / "auto_gpu_checks.sh").read_text()
    lists = re.findall(r'^\s*(?:half0|half1|holdout|key|sizes)="([^"]+)"', script, flags=re.M)
    lists += re.findall(r"--kernels ((?:[a-z0-9_]+ ?)+)", script)
    named = {word for words in lists for word in words.split()}
    assert len(lists) >= 8 and len(named) >= 30, lists
    known = set(cases(None, "all+holdout"))
    assert named - known == set()
