"""GPU check: the transparent mode never fails a launch that works without it (issue 26.3).

    TRITON_EXT_BUILD_DIR=$PWD/build python -m benchmarks.auto_safety_gpu [--out auto-safety-h200.json] \
        [--candidates grid_swizzle,loop_split,nvidia_auto_pdl]

Each case launches a kernel stock and then under ``triton_ext.auto_mode`` (what
``TRITON_EXT_ENABLE=auto:...`` does at import) on fresh inputs with the same seed, and requires the
launch under the mode to succeed with outputs equal to stock (bit-identical, or within the
kernel's tolerance when the mode chose a pass), the arguments it only reads unchanged, and the
mode's argument backup actually exercised (a variant applied and was timed):

* ``addmm_expanded_bias``: FlagGems' ``addmm`` (``flag_gems.addmm`` when the package imports;
  otherwise the same kernel written here: ``beta * bias + alpha * a @ b`` with the bias passed as
  ``bias.broadcast_to((m, n))``, strides ``(0, 1)``, as FlagGems passes it), plain and under
  ``triton.autotune``; before issue 26.3 the mode's restore raised "more than one element of the
  written-to tensor refers to a single memory location";
* ``parameter_grad_mode``: the same kernel with ``nn.Parameter`` weights and grad mode on (was "a
  leaf Variable that requires grad is being used in an in-place operation");
* ``host_descriptors``: ``C += A @ B`` with all three as host TMA descriptors
  (``triton.tools.tensor_descriptor.TensorDescriptor``): the mode saves the strided view of each
  base a descriptor reaches (``triton_ext._backup.descriptor_reach``), so its extra launches must
  leave C as one launch does (once refused, as memory the mode could not find);
* ``wrong_pass``: a pass that computes a wrong result (tests/fixtures/WrongResult.cpp doubles every
  stored float) offered as an auto candidate beside ``nvidia_auto_pdl``, on the addmm kernel and
  an elementwise one: the mode must drop it (``Decision.changed_outputs``, the output check of
  triton_ext/_outputs.py) and the launches give stock's outputs bit for bit;
* ``memory_pressure`` (candidate ``nvidia_auto_pdl``, which applies to any kernel, so the mode
  must save the arguments): the GPU filled until less free memory is left than a 2 GiB argument's
  backup needs (as vLLM and SGLang preallocate ~90% for the KV cache), the backup cap raised so
  only the free-memory check and the allocator can refuse: the launch must run with no pass and
  the refusal be recorded with its reason; also the default cap (1024 MiB) refusing that argument;
* ``graph_capture``: a kernel's first launch under the mode inside ``torch.cuda.graph`` capture (as
  a server that captures before any eager launch would): nothing may be timed or copied there, so
  the mode must place the stock kernel and record why; the graph's replay and a later eager launch
  must give stock's outputs bit for bit.

Prints one JSON object (also written to ``--out`` and to ``$OUT/auto-safety.json`` when ``OUT``
is set); exit status 0 when every case passed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Callable

import torch
import triton
import triton.language as tl

import triton_ext
from triton_ext.bench.gpu import checkout_commit


@triton.jit
def addmm_kernel(a_ptr, b_ptr, i_ptr, c_ptr, alpha, beta, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                 stride_im, stride_in, stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 BLOCK_K: tl.constexpr):
    # Written after FlagGems' addmm kernel (src/flag_gems/ops/addmm.py), without its libentry and autotune.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc += tl.dot(a, b, allow_tf32=False)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    bias = tl.load(i_ptr + offs_cm[:, None] * stride_im + offs_cn[None, :] * stride_in, mask=c_mask, other=0.0)
    out = acc * alpha + bias * beta
    tl.store(c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn, out.to(c_ptr.dtype.element_ty),
             mask=c_mask)


addmm_autotuned = triton.autotune(
    configs=[triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=3),
             triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=3)],
    key=["M", "N", "K"])(addmm_kernel)


def addmm(bias: torch.Tensor, a: torch.Tensor, b: torch.Tensor, *, beta: float = 1.0, alpha: float = 1.0,
          autotuned: bool = False) -> torch.Tensor:
    m, k = a.shape
    n = b.shape[1]
    out = torch.empty((m, n), device=a.device, dtype=a.dtype)
    bias = bias.broadcast_to(out.shape)  # stride (0, 1) for a row bias: FlagGems does this
    if autotuned:
        grid: Any = lambda meta: (triton.cdiv(m, meta["BLOCK_M"]), triton.cdiv(n, meta["BLOCK_N"]))
        addmm_autotuned[grid](a, b, bias, out, alpha, beta, m, n, k, a.stride(0), a.stride(1), b.stride(0),
                              b.stride(1), bias.stride(0), bias.stride(1), out.stride(0), out.stride(1))
    else:
        grid = (triton.cdiv(m, 64), triton.cdiv(n, 64))
        addmm_kernel[grid](a, b, bias, out, alpha, beta, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                           bias.stride(0), bias.stride(1), out.stride(0), out.stride(1), BLOCK_M=64, BLOCK_N=64,
                           BLOCK_K=32)
    return out


def flag_gems_addmm() -> Callable[..., torch.Tensor] | None:
    try:
        import flag_gems  # noqa: F401
        from flag_gems.ops.addmm import addmm as gems_addmm
    except Exception:
        return None
    return gems_addmm


def compare(name: str, candidates: list[str], make: Callable[[], dict[str, torch.Tensor]],
            run: Callable[[dict[str, torch.Tensor]], torch.Tensor], seed: int = 0,
            reference: Callable[[dict[str, torch.Tensor]], torch.Tensor] | None = None) -> dict[str, Any]:
    """``reference`` computes the expected output where ``run`` must not be called before the mode
    is on: FlagGems' libentry keeps its own kernel cache, so a stock launch first would leave the mode
    no JIT cache miss to decide at."""
    torch.manual_seed(seed)
    inputs = make()
    stock = (reference or run)(inputs)
    torch.cuda.synchronize()
    torch.manual_seed(seed)
    inputs = make()
    before = {k: v.detach().clone() for k, v in inputs.items()}
    row: dict[str, Any] = {"case": name}
    with triton_ext.auto_mode(*candidates) as auto:
        start = time.perf_counter()
        try:
            out = run(inputs)
            out2 = run(inputs)  # the decided launch
            torch.cuda.synchronize()
            row["launch_error"] = None
        except Exception as exc:
            row["launch_error"] = f"{type(exc).__name__}: {exc}"
            row["traceback"] = traceback.format_exc()[-3000:]
            out = out2 = None
        row["first_launch_s"] = time.perf_counter() - start
        row["decisions"] = [{"kernel": d.kernel, "choice": d.choice, "refused": d.refused, "error": d.error,
                             "applicable": d.applicable, "changed_outputs": d.changed_outputs,
                             "timings_ms": d.timings_ms,
                             "back_to_back_ms": d.back_to_back_ms, "first_launch_s": d.first_launch_s}
                            for d in auto.decisions]
        # The arguments were saved and restored only if a variant applied and was timed.
        row["restore_exercised"] = any(d.applicable and d.timings_ms for d in auto.decisions)
    if out is not None and out2 is not None:
        row["outputs_identical"] = bool(torch.equal(out, stock) and torch.equal(out2, stock))
        row["max_abs_diff"] = float(max((out.float() - stock.float()).abs().max(), (out2.float() - stock.float()).abs().max()))
        row["outputs_ok"] = bool(torch.allclose(out.float(), stock.float(), atol=1e-2, rtol=1e-2)
                                 and torch.allclose(out2.float(), stock.float(), atol=1e-2, rtol=1e-2))
        row["inputs_unchanged"] = all(torch.equal(inputs[k].detach(), before[k]) for k in inputs)
    row["passed"] = (row["launch_error"] is None and bool(row.get("outputs_ok")) and bool(row.get("inputs_unchanged"))
                     and bool(row.get("restore_exercised")))
    return row


def addmm_inputs(requires_grad: bool = False, m: int = 1000, n: int = 768, k: int = 512) -> Callable[[], dict[str, torch.Tensor]]:
    def make() -> dict[str, torch.Tensor]:
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16) / k**0.5
        bias = torch.randn(n, device="cuda", dtype=torch.float16)
        if requires_grad:
            b, bias = torch.nn.Parameter(b), torch.nn.Parameter(bias)
        return {"a": a, "b": b, "bias": bias}
    return make


@triton.jit
def scale_kernel(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y + offs, tl.load(x + offs, mask=m) * 2, mask=m)


def wrong_pass() -> list[dict[str, Any]]:
    """The registry and plugins of this checkout plus the WrongResult fixture, in a scratch tree;
    the mode with it and ``nvidia_auto_pdl`` as candidates on two kernels."""
    repo = Path(__file__).resolve().parents[1]
    build = Path(os.environ.get("TRITON_EXT_BUILD_DIR") or repo / "build")
    root = Path(tempfile.mkdtemp(prefix="triton-ext-wrong-pass-"))
    plugins = root / "build" / "plugins"
    plugins.mkdir(parents=True)
    for library in [*(build / "plugins").iterdir(), build / "test-plugins" / "libTritonExtWrongResult.so"]:
        (plugins / library.name).symlink_to(library.resolve())
    from tests.reliability.fixture_plugins import WRONG_RESULT

    (root / "registry.yaml").write_text((repo / "registry.yaml").read_text() + WRONG_RESULT.yaml())
    saved = {k: os.environ.get(k) for k in ("TRITON_EXT_REGISTRY", "TRITON_EXT_BUILD_DIR")}
    os.environ.update(TRITON_EXT_REGISTRY=str(root / "registry.yaml"), TRITON_EXT_BUILD_DIR=str(root / "build"))
    candidates = ["fixture_double_stores", "nvidia_auto_pdl"]
    n = 1 << 20

    def scale(t: dict[str, torch.Tensor]) -> torch.Tensor:
        y = torch.empty_like(t["x"])
        scale_kernel[(triton.cdiv(n, 1024),)](t["x"], y, n, BLOCK=1024)
        return y

    try:
        rows = [compare("wrong_pass_addmm", candidates, addmm_inputs(),
                        lambda t: addmm(t["bias"], t["a"], t["b"], beta=0.5, alpha=2.0)),
                compare("wrong_pass_scale", candidates, lambda: {"x": torch.randn(n, device="cuda")}, scale)]
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    for row in rows:
        dropped = [d for d in row.get("decisions", []) if "fixture_double_stores" in (d.get("changed_outputs") or {})]
        row["passed"] = bool(row["passed"] and row.get("outputs_identical") and dropped
                             and all(d["choice"] != "fixture_double_stores" for d in row["decisions"]))
    return rows


def memory_pressure(candidates: list[str]) -> list[dict[str, Any]]:
    # The mode saves arguments only when a variant applies (it must time it): nvidia_auto_pdl
    # changes every kernel (the grid-dependency wait), so it makes this elementwise kernel a case.
    candidates = ["nvidia_auto_pdl"]
    rows = []
    n = 512 * 2**20  # 2 GiB of float32 in, 2 GiB out
    x = torch.randn(n, device="cuda")
    y = torch.empty_like(x)

    def run(inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        scale_kernel[(triton.cdiv(n, 1024),)](inputs["x"], y, n, BLOCK=1024)
        return y.clone()

    stock = run({"x": x})
    # The default cap: 4 GiB of arguments is above 1024 MiB.
    with triton_ext.auto_mode(*candidates) as auto:
        out = run({"x": x})
        rows.append({"case": "memory_default_cap", "outputs_identical": bool(torch.equal(out, stock)),
                     "decisions": [{"kernel": d.kernel, "refused": d.refused} for d in auto.decisions]})
    rows[-1]["passed"] = rows[-1]["outputs_identical"] and bool(auto.decisions) and "backup cap" in str(auto.decisions[0].refused)
    # The cap raised: fill the GPU so the backup does not fit in half the free memory.
    free, _ = torch.cuda.mem_get_info()
    fill = torch.empty(max(free - 3 * 2**30, 0), dtype=torch.uint8, device="cuda")
    os.environ["TRITON_EXT_AUTO_BACKUP_MB"] = str(10**7)
    try:
        with triton_ext.auto_mode(*candidates) as auto:
            start = time.perf_counter()
            try:
                out = run({"x": x})
                error = None
            except Exception as exc:
                out, error = None, f"{type(exc).__name__}: {exc}"
            rows.append({"case": "memory_nearly_full", "free_mib_after_fill": torch.cuda.mem_get_info()[0] / 2**20,
                         "launch_error": error, "seconds": time.perf_counter() - start,
                         "outputs_identical": out is not None and bool(torch.equal(out, stock)),
                         "decisions": [{"kernel": d.kernel, "refused": d.refused, "error": d.error}
                                       for d in auto.decisions]})
    finally:
        del os.environ["TRITON_EXT_AUTO_BACKUP_MB"]
        del fill
        torch.cuda.empty_cache()
    rows[-1]["passed"] = error is None and rows[-1]["outputs_identical"] and bool(auto.decisions) and bool(
        auto.decisions[0].refused)
    return rows


@triton.jit
def add_one_kernel(x, y, n, BLOCK: tl.constexpr):  # launched by graph_capture only: its first launch is captured
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y + offs, tl.load(x + offs, mask=m) + 1, mask=m)


def graph_capture() -> dict[str, Any]:
    n = 1 << 20
    x = torch.randn(n, device="cuda")
    y = torch.empty_like(x)

    def run() -> None:
        add_one_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)

    run()
    stock = y.clone()
    y.zero_()
    graph = torch.cuda.CUDAGraph()
    row: dict[str, Any] = {"case": "graph_capture"}
    with triton_ext.auto_mode("nvidia_auto_pdl") as auto:  # it changes every kernel: a decision would time
        # Turning the mode on emptied the JIT's in-memory cache, so this launch is a miss. Relaxed
        # capture: the stock kernel's binary is loaded inside the capture, as it would be without the mode.
        with torch.cuda.graph(graph, capture_error_mode="relaxed"):
            run()
        graph.replay()
        torch.cuda.synchronize()
        replayed = y.clone()
        y.zero_()
        run()  # eager, same specialization: the kernel placed during the capture
        torch.cuda.synchronize()
        row["decisions"] = [{"kernel": d.kernel, "choice": d.choice, "refused": d.refused} for d in auto.decisions]
    row["replay_identical"] = bool(torch.equal(replayed, stock))
    row["eager_identical"] = bool(torch.equal(y, stock))
    row["passed"] = (row["replay_identical"] and row["eager_identical"]
                     and [(d["kernel"], d["choice"]) for d in row["decisions"]] == [("add_one_kernel", "")]
                     and "CUDA graph capture" in str(row["decisions"][0]["refused"]))
    return row


@triton.jit
def accumulate_matmul_kernel(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # C += A @ B through host TMA descriptors: every extra launch the mode made without restoring C
    # would add A @ B once more.
    m, n = tl.program_id(0) * BM, tl.program_id(1) * BN
    acc = c_desc.load([m, n]).to(tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([m, k]), b_desc.load([k, n]), acc)
    c_desc.store([m, n], acc.to(c_desc.dtype))


def accumulate_through_descriptors(inputs: dict[str, torch.Tensor]) -> torch.Tensor:
    from triton.tools.tensor_descriptor import TensorDescriptor

    a, b, c = inputs["a"], inputs["b"], inputs["c"].clone()  # each call accumulates into its own C
    bm, bn, bk = 64, 64, 64
    accumulate_matmul_kernel[(c.shape[0] // bm, c.shape[1] // bn)](
        TensorDescriptor.from_tensor(a, [bm, bk]), TensorDescriptor.from_tensor(b, [bk, bn]),
        TensorDescriptor.from_tensor(c, [bm, bn]), a.shape[1], BM=bm, BN=bn, BK=bk)
    return c


def descriptor_inputs(m: int = 512, n: int = 512, k: int = 256) -> dict[str, torch.Tensor]:
    return {"a": torch.randn(m, k, device="cuda", dtype=torch.float16),
            "b": torch.randn(k, n, device="cuda", dtype=torch.float16) / k**0.5,
            "c": torch.randn(m, n, device="cuda", dtype=torch.float16)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="auto-safety-h200.json")
    parser.add_argument("--candidates", default="grid_swizzle,loop_split,nvidia_auto_pdl",
                        help="nvidia_auto_pdl applies to every kernel, so each case saves and restores its arguments")
    args = parser.parse_args()
    candidates = [c for c in args.candidates.split(",") if c]
    os.environ["TRITON_EXT_AUTO_DIR"] = tempfile.mkdtemp(prefix="triton-ext-auto-")
    # The cases are small kernels, launch-bound on a fast host: the mode would keep their no-pass kernel
    # without compiling a variant, and nothing here (the backup, the output check) would run.
    os.environ["TRITON_EXT_AUTO_LAUNCH_BOUND"] = "0"
    rows: list[dict[str, Any]] = []
    gems = flag_gems_addmm()

    def case(name: str, fn: Callable[[], Any]) -> None:
        try:
            got = fn()
            rows.extend(got if isinstance(got, list) else [got])
        except Exception as exc:
            rows.append({"case": name, "passed": False, "error": f"{type(exc).__name__}: {exc}",
                         "traceback": traceback.format_exc()[-3000:]})
        for r in rows[-1:]:
            print(f"{r['case']:28} passed={r.get('passed')} {r.get('launch_error') or r.get('error') or ''}",
                  file=sys.stderr, flush=True)

    if gems is not None:
        case("flag_gems_addmm", lambda: compare(
            "flag_gems_addmm", candidates, addmm_inputs(), lambda t: gems(t["bias"], t["a"], t["b"]),
            reference=lambda t: torch.addmm(t["bias"].double(), t["a"].double(), t["b"].double()).half()))
    case("addmm_expanded_bias", lambda: compare("addmm_expanded_bias", candidates, addmm_inputs(),
                                                lambda t: addmm(t["bias"], t["a"], t["b"], beta=0.5, alpha=2.0)))
    case("addmm_expanded_bias_autotune", lambda: compare(
        "addmm_expanded_bias_autotune", candidates, addmm_inputs(m=1024, n=1024, k=256),
        lambda t: addmm(t["bias"], t["a"], t["b"], autotuned=True)))
    case("parameter_grad_mode", lambda: compare("parameter_grad_mode", candidates, addmm_inputs(requires_grad=True, m=512),
                                                lambda t: addmm(t["bias"], t["a"], t["b"])))
    case("host_descriptors", lambda: compare("host_descriptors", candidates, descriptor_inputs,
                                             accumulate_through_descriptors))
    case("wrong_pass", wrong_pass)
    case("memory_pressure", lambda: memory_pressure(candidates))
    case("graph_capture", graph_capture)
    report = {"commit": checkout_commit(), "date": time.strftime("%Y-%m-%d"),
              "gpu": torch.cuda.get_device_name(), "triton": triton.__version__, "torch": torch.__version__,
              "flag_gems": gems is not None, "candidates": candidates, "rows": rows,
              "all_passed": all(r.get("passed") for r in rows)}
    text = json.dumps(report, indent=2, default=str)
    print(text)
    Path(args.out).write_text(text)
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "auto-safety.json").write_text(text)
    return 0 if report["all_passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
