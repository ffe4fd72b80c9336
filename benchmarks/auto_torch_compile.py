"""torch.compile'd decoder block with and without ``TRITON_EXT_ENABLE=auto`` (issue 27.5), end to end (GPU).

    TRITON_EXT_BUILD_DIR=$PWD/build python -m benchmarks.auto_torch_compile [--out auto-torch-compile-h200.json] \
        [--candidates grid_swizzle,loop_split,...] [--mode default|max-autotune-no-cudagraphs] [--repeats 1]

A Llama-3-8B-like decoder block (RMS norms, grouped-query attention with rotary embeddings and a
KV cache, SwiGLU MLP; random bf16 weights, fixed seed) is compiled with ``torch.compile`` in a
fresh interpreter per configuration, each with its own empty Triton, Inductor and decision caches
and ``TORCHINDUCTOR_FORCE_DISABLE_CACHES=1``:

* ``stock``: ``TRITON_EXT_ENABLE`` unset;
* ``auto``: ``TRITON_EXT_ENABLE=auto`` (or ``auto:<candidates>``). The children import nothing of
  the project: triton_ext comes in through the start-up ``.pth`` in a user site made for the run
  (as tests/realworld/check_torch_compile.py does), so Inductor's compile workers have it too, and
  :mod:`triton_ext._inductor` makes the pass set a dimension of Inductor's autotuning.

Each child runs two shapes, decode (batch 8, one new token over a 1024-token cache) and prefill
(batch 1, 1024 tokens, causal): the first call's wall time (compile, autotune, run), then the
steady state (calls back to back, CPU launch path included, as an application runs the block):
the median over rounds of the wall time per call. Outputs of the first call are compared between
the children (bit-identical, and within bf16 tolerance). With ``--repeats N`` there are N children of
each configuration in alternating pairs (stock, auto, auto, stock, stock, auto, ...) and the medians
of each configuration's runs are compared: the host's speed differs from one process to the next
(seen: one stock process 0.36 ms per decode call, the next 0.67), so one pair proves nothing.

Each child's kernels (the PTX its Triton cache holds when it exits: every config Inductor compiled,
in its workers too; code only, without the debug sections that name per-process paths) are
fingerprinted; ``kernels`` says whether the auto children compiled, and so ran, exactly the stock
children's kernels, which is what makes a steady-state difference the host's.

Prints JSON (also ``--out`` and ``$OUT/<name>``): per configuration and shape the first-call
seconds and per-call milliseconds, the speedups stock / auto, the output comparison, and the
auto child's decisions (Inductor kernel, applicable passes, choice, GPU and back-to-back times).
Exits non-zero when a child fails or outputs differ beyond tolerance.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

#: Llama-3-8B's block.
HIDDEN, HEADS, KV_HEADS, HEAD_DIM, INTER = 4096, 32, 8, 128, 14336
SHAPES = {"decode": {"batch": 8, "tokens": 1, "past": 1024}, "prefill": {"batch": 1, "tokens": 1024, "past": 0}}


# --------------------------------------------------------------------------- #
# the child: a user's script (no import of triton_ext)
# --------------------------------------------------------------------------- #


def _block_and_inputs(seed: int) -> tuple[Any, dict[str, tuple[Any, ...]]]:
    import torch
    from torch import nn

    class RMSNorm(nn.Module):
        def __init__(self, dim: int, eps: float = 1e-5) -> None:
            super().__init__()
            self.weight = nn.Parameter(torch.ones(dim))
            self.eps = eps

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            xf = x.float()
            return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight).to(x.dtype)

    def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x1, x2 = x[..., : HEAD_DIM // 2], x[..., HEAD_DIM // 2:]
        return x * cos + torch.cat((-x2, x1), dim=-1) * sin

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.attn_norm, self.mlp_norm = RMSNorm(HIDDEN), RMSNorm(HIDDEN)
            self.wq = nn.Linear(HIDDEN, HEADS * HEAD_DIM, bias=False)
            self.wk = nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM, bias=False)
            self.wv = nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM, bias=False)
            self.wo = nn.Linear(HEADS * HEAD_DIM, HIDDEN, bias=False)
            self.gate = nn.Linear(HIDDEN, INTER, bias=False)
            self.up = nn.Linear(HIDDEN, INTER, bias=False)
            self.down = nn.Linear(INTER, HIDDEN, bias=False)

        def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, k_cache: torch.Tensor,
                    v_cache: torch.Tensor) -> torch.Tensor:
            b, t, _ = x.shape
            past = k_cache.shape[2]
            h = self.attn_norm(x)
            q = self.wq(h).view(b, t, HEADS, HEAD_DIM).transpose(1, 2)
            k = self.wk(h).view(b, t, KV_HEADS, HEAD_DIM).transpose(1, 2)
            v = self.wv(h).view(b, t, KV_HEADS, HEAD_DIM).transpose(1, 2)
            q, k = rotate(q, cos, sin), rotate(k, cos, sin)
            k = torch.cat((k_cache, k), dim=2).repeat_interleave(HEADS // KV_HEADS, dim=1)
            v = torch.cat((v_cache, v), dim=2).repeat_interleave(HEADS // KV_HEADS, dim=1)
            scores = (q @ k.transpose(-1, -2)).float() * HEAD_DIM ** -0.5
            if t > 1:
                rows = torch.arange(t, device=x.device)[:, None] + past
                cols = torch.arange(past + t, device=x.device)[None, :]
                scores = scores.masked_fill(cols > rows, float("-inf"))
            o = (torch.softmax(scores, dim=-1).to(x.dtype) @ v).transpose(1, 2).reshape(b, t, HEADS * HEAD_DIM)
            x = x + self.wo(o)
            h = self.mlp_norm(x)
            return x + self.down(torch.nn.functional.silu(self.gate(h)) * self.up(h))

    torch.manual_seed(seed)
    block = Block().to(device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        for p in block.parameters():
            if p.dim() == 2:
                p.normal_(0.0, p.shape[1] ** -0.5)
            else:
                p.normal_(1.0, 0.1)
    inputs = {}
    for name, s in SHAPES.items():
        b, t, past = s["batch"], s["tokens"], s["past"]
        pos = torch.arange(past, past + t, device="cuda", dtype=torch.float32)
        freq = 500000.0 ** (-torch.arange(0, HEAD_DIM, 2, device="cuda", dtype=torch.float32) / HEAD_DIM)
        angle = torch.cat((pos[:, None] * freq[None, :],) * 2, dim=-1)
        inputs[name] = (torch.randn(b, t, HIDDEN, device="cuda", dtype=torch.bfloat16),
                        angle.cos().to(torch.bfloat16), angle.sin().to(torch.bfloat16),
                        torch.randn(b, KV_HEADS, past, HEAD_DIM, device="cuda", dtype=torch.bfloat16),
                        torch.randn(b, KV_HEADS, past, HEAD_DIM, device="cuda", dtype=torch.bfloat16))
    return block, inputs


class _Records(logging.Handler):
    """Keeps the records of the ``triton_ext.auto`` logger: the mode's decisions, as a user sees them."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def _decision(record: logging.LogRecord) -> dict[str, Any]:
    """One decision from its log record (``kernel [config]: choice (from disk) in s; GPU ms {...};
    back to back ms {...}; error``, or ``kernel [key]: no pass (reason)``)."""
    args = record.args if isinstance(record.args, tuple) else ()
    if len(args) >= 8:
        return {"kernel": args[0], "config": args[1], "choice": "" if args[2] == "no pass" else args[2],
                "tune_s": args[4], "gpu_ms": args[5], "back_to_back_ms": args[6],
                "error": str(args[7]).removeprefix("; ") or None}
    return {"kernel": args[0] if args else None, "choice": "", "message": record.getMessage()}


def _launch_paths() -> dict[str, Any]:
    """How Inductor launches each of its kernels in this process, counted: the names its launchers
    call (a static launcher and Triton's own differ), how many launchers each kernel kept, whether
    the fast path is cached. It explains a steady-state difference where no pass was kept."""
    import gc
    from collections import Counter

    import torch
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner

    paths: Counter[str] = Counter()
    for obj in gc.get_objects():
        try:
            if not isinstance(obj, CachingAutotuner):
                continue
        except ReferenceError:  # a weakref proxy whose object is gone (seen in the stock process)
            continue
        launchers = list(getattr(obj, "launchers", None) or [])
        calls = sorted({name for launcher in launchers for name in getattr(getattr(launcher, "__code__", None),
                                                                           "co_names", ())})
        results = sorted({type(r).__name__ for r in (getattr(obj, "compile_results", None) or [])})
        static = sorted({str(getattr(launcher, "_is_static", None)) for launcher in launchers})
        paths[f"configs={len(getattr(obj, 'configs', None) or [])} launchers={len(launchers)} "
              f"results={results} static={static} cached_fast={getattr(obj, '_cached_launcher', None) is not None} "
              f"calls={calls}"] += 1
    config = torch._inductor.config
    return {"kernels": dict(paths), "static_launcher": {name: getattr(config, name, None) for name in
                                                        ("use_static_cuda_launcher", "use_static_triton_launcher")}}


def child(mode: str, rounds: int, outputs: Path, seed: int) -> dict[str, Any]:
    import torch

    log = _Records()
    auto_log = logging.getLogger("triton_ext.auto")
    auto_log.addHandler(log)
    auto_log.setLevel(logging.INFO)
    block, inputs = _block_and_inputs(seed)
    compiled = torch.compile(block, mode=None if mode == "default" else mode, dynamic=False)
    rec: dict[str, Any] = {"shapes": {}}
    saved = {}
    with torch.no_grad():
        for name, args in inputs.items():
            torch.cuda.synchronize()
            start = time.perf_counter()
            out = compiled(*args)
            torch.cuda.synchronize()
            first_s = time.perf_counter() - start
            saved[name] = out.float().cpu()
            calls = 200 if name == "decode" else 20
            for _ in range(3):
                compiled(*args)
            per_call = []
            for _ in range(rounds):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                for _ in range(calls):
                    compiled(*args)
                torch.cuda.synchronize()
                per_call.append((time.perf_counter() - t0) * 1e3 / calls)
            rec["shapes"][name] = {"first_call_s": round(first_s, 3), "ms_per_call": statistics.median(per_call),
                                   "rounds_ms": [round(v, 5) for v in per_call], "calls_per_round": calls,
                                   "shape": SHAPES[name]}
    torch.save(saved, outputs)
    rec["triton_ext_imported"] = "triton_ext" in sys.modules
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner

    # The mode wraps Inductor's autotuner in place (triton_ext._inductor): seen from outside.
    rec["inductor_wrapped"] = getattr(CachingAutotuner._precompile_worker, "__module__", "") == "triton_ext._inductor"
    # Variants the mode compiled but left out before timing (they would change Inductor's launcher),
    # logged where Inductor compiled them: here, or lost in a compile worker's process.
    left_out = [r for r in log.records if " left out (" in r.getMessage()]
    rec["decisions"] = [_decision(r) for r in log.records if r not in left_out]
    rec["left_out"] = [r.getMessage() for r in left_out]
    rec["launch_paths"] = _launch_paths()
    import triton

    rec["versions"] = {"torch": torch.__version__, "triton": triton.__version__, "python": sys.version.split()[0]}
    rec["gpu"] = torch.cuda.get_device_name(0)
    return rec


# --------------------------------------------------------------------------- #
# the parent
# --------------------------------------------------------------------------- #


def _user_site(base: Path) -> tuple[Path, list[Path]]:
    """A user site with the start-up .pth and this checkout (or, where user sites are off, the
    two files put into site-packages for the run: returned for removal)."""
    from tests.realworld.check_torch_compile import make_user_site, user_site_works

    site = make_user_site(base)
    added: list[Path] = []
    if not user_site_works(base):
        target = Path(sysconfig.get_paths()["purelib"])
        for pth in site.glob("*.pth"):
            dest = target / pth.name
            dest.write_text(pth.read_text(encoding="utf-8"), encoding="utf-8")
            added.append(dest)
    return site, added


def run_child(config: str, enable: str | None, args: argparse.Namespace, tmp: Path, index: int) -> dict[str, Any]:
    root = tmp / f"{index}-{config}"
    root.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TRITON_EXT_ENABLE", "TORCHINDUCTOR_", "TORCH_COMPILE_CACHE_KEY_TAG", "TRITON_CACHE"))}
    env.update({
        "PYTHONUSERBASE": str(tmp / "userbase"),
        "TRITON_CACHE_DIR": str(root / "triton"),
        "TORCHINDUCTOR_CACHE_DIR": str(root / "inductor"),
        "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1",
        "TRITON_EXT_AUTO_DIR": str(root / "decisions"),
        "TRITON_EXT_BUILD_DIR": os.environ.get("TRITON_EXT_BUILD_DIR", str(REPO / "build")),
        "TRITON_EXT_ENTRY_POINTS": "0",
        "PYTHONUNBUFFERED": "1",
    })
    if enable:
        env["TRITON_EXT_ENABLE"] = enable
    outputs = root / "outputs.pt"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "--mode", args.mode, "--rounds", str(args.rounds),
           "--seed", str(args.seed), "--outputs", str(outputs)]
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.timeout, cwd=tmp)
        rc, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, stdout, stderr = -1, str(exc.stdout or ""), f"timed out after {args.timeout}s\n{exc.stderr or ''}"
    rec: dict[str, Any] = {}
    for line in reversed(stdout.splitlines()):
        if line.startswith("{"):
            try:
                rec = json.loads(line)
                break
            except json.JSONDecodeError:
                pass
    rec.update({"config": config, "TRITON_EXT_ENABLE": enable, "returncode": rc,
                "wall_s": round(time.perf_counter() - start, 1), "outputs": str(outputs) if outputs.exists() else None})
    # Under TORCHINDUCTOR_FORCE_DISABLE_CACHES Inductor compiles into a fresh Triton cache below
    # its own cache directory, not TRITON_CACHE_DIR: search the child's whole directory.
    rec["kernels"] = kernel_code(root)
    if rc != 0 or "shapes" not in rec:
        rec["stderr_tail"] = str(stderr)[-3000:]
    print(f"{config}: rc={rc} wall {rec['wall_s']} s " + " ".join(
        f"{n} first {s['first_call_s']} s, {s['ms_per_call']:.4f} ms/call;" for n, s in rec.get("shapes", {}).items()),
        flush=True)
    return rec


def kernel_code(directory: Path) -> list[str]:
    """Fingerprints (sha256, 16 hex digits) of the PTX below ``directory``, sorted: each file's code
    only, without its comments and debug sections, which name the source file's path (Inductor's
    fresh cache directory, different in every process, so the cubins' bytes always differ)."""
    def code(ptx: str) -> bytes:
        ptx = ptx.split("\t.file", 1)[0]
        return "\n".join(line.split("//", 1)[0].rstrip() for line in ptx.splitlines()).encode()

    return sorted(hashlib.sha256(code(p.read_text(errors="replace"))).hexdigest()[:16]
                  for p in directory.rglob("*.ptx"))


def same_kernels(stock_runs: list[dict[str, Any]], auto_runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Whether every child compiled the same set of kernels (PTX code), and the auto children's extra ones."""
    stock = [set(r.get("kernels", [])) for r in stock_runs]
    auto = [set(r.get("kernels", [])) for r in auto_runs]
    reference = stock[0] if stock else set()
    return {"stock_kernels": len(reference),
            "stock_children_agree": all(s == reference for s in stock),
            "auto_equals_stock": bool(reference) and all(a == reference for a in auto),
            "auto_only": sorted(set().union(*auto) - set().union(*stock)) if auto else [],
            "stock_only": sorted(set().union(*stock) - set().union(*auto)) if auto else []}


def alternating(repeats: int, enable: str) -> list[tuple[str, str | None]]:
    """stock, auto, auto, stock, stock, auto, ...: each configuration as often first as second."""
    pair = [("stock", None), ("auto", enable)]
    return [c for i in range(repeats) for c in (pair if i % 2 == 0 else pair[::-1])]


def compare(stock: dict[str, Any], auto: dict[str, Any]) -> dict[str, Any]:
    import torch

    if not stock.get("outputs") or not auto.get("outputs"):
        return {"error": "a child wrote no outputs"}
    a, b = torch.load(stock["outputs"]), torch.load(auto["outputs"])
    out = {}
    for name in a:
        diff = (a[name] - b[name]).abs()
        out[name] = {"identical": bool(torch.equal(a[name], b[name])), "max_abs_diff": float(diff.max()),
                     "within_bf16_tolerance": bool(torch.allclose(b[name], a[name], atol=2e-2, rtol=2e-2))}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="auto-torch-compile-h200.json")
    parser.add_argument("--candidates", default="", help="comma-separated passes (default: the registry's auto: true)")
    parser.add_argument("--mode", default="default", help="torch.compile mode (default, max-autotune-no-cudagraphs...)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="children per configuration, in alternating pairs: 1: stock, auto; 2: stock, auto, auto, stock")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=int, default=240, help="seconds per child")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--outputs", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        try:
            rec = child(args.mode, args.rounds, args.outputs, args.seed)
        except Exception as exc:  # reported to the parent as JSON
            import traceback

            rec = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-3000:]}
        print(json.dumps(rec, default=str), flush=True)
        return 0 if "error" not in rec else 1

    enable = "auto" + (f":{args.candidates}" if args.candidates else "")
    order = alternating(max(1, args.repeats), enable)
    runs = []
    with tempfile.TemporaryDirectory(prefix="triton-ext-auto-torch-compile-") as tmp_name:
        tmp = Path(tmp_name)
        site, added = _user_site(tmp / "userbase")
        try:
            for i, (config, env_value) in enumerate(order):
                runs.append(run_child(config, env_value, args, tmp, i))
        finally:
            for dest in added:
                dest.unlink(missing_ok=True)
        stock_runs = [r for r in runs if r["config"] == "stock"]
        auto_runs = [r for r in runs if r["config"] == "auto"]
        outputs = compare(stock_runs[0], auto_runs[0])
        # Inductor picks among its own configs by timing them, in each process anew: two stock
        # processes may differ too. Their difference is the yardstick for the mode's.
        run_to_run = ({"stock_vs_stock": compare(stock_runs[0], stock_runs[1]),
                       "auto_vs_auto": compare(auto_runs[0], auto_runs[1])} if args.repeats >= 2 else {})
    failures = [f"{r['config']} child exited {r['returncode']}: {r.get('error', '')}" for r in runs
                if r["returncode"] != 0 or "shapes" not in r]
    speedups: dict[str, Any] = {}
    if not failures:
        for shape in SHAPES:
            s = statistics.median(r["shapes"][shape]["ms_per_call"] for r in stock_runs)
            a = statistics.median(r["shapes"][shape]["ms_per_call"] for r in auto_runs)
            speedups[shape] = {"stock_ms_per_call": s, "auto_ms_per_call": a, "speedup": s / a,
                               "stock_first_call_s": statistics.median(r["shapes"][shape]["first_call_s"] for r in stock_runs),
                               "auto_first_call_s": statistics.median(r["shapes"][shape]["first_call_s"] for r in auto_runs)}
        if not all(r.get("triton_ext_imported") and r.get("inductor_wrapped") for r in auto_runs):
            failures.append("the auto child did not import triton_ext at start-up or did not wrap Inductor's "
                            "autotuner (see its stderr for triton-ext's warning)")
        for shape, cmp in outputs.items() if isinstance(outputs, dict) and "error" not in outputs else []:
            if not cmp["within_bf16_tolerance"]:
                failures.append(f"{shape}: outputs differ beyond tolerance (max abs diff {cmp['max_abs_diff']})")
    decisions = auto_runs[0].get("decisions", []) if auto_runs else []
    chosen = [d for d in decisions if d.get("choice")]
    try:
        from triton_ext.bench.gpu import checkout_commit

        commit = checkout_commit(short=True)
    except Exception:  # noqa: BLE001
        commit = "unknown"
    report = {
        "what": "torch.compile'd Llama-3-8B-like decoder block (bf16), TRITON_EXT_ENABLE unset vs "
                f"{enable}; fresh caches per child, TORCHINDUCTOR_FORCE_DISABLE_CACHES=1; steady state = "
                "wall time per call, calls back to back",
        "commit": commit, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "mode": args.mode,
        "gpu": runs[0].get("gpu"), "versions": runs[0].get("versions"), "order": [c for c, _ in order],
        "speedups": speedups, "outputs": outputs, "run_to_run": run_to_run,
        "kernels": same_kernels(stock_runs, auto_runs),
        "inductor_kernels_tuned": len(decisions), "kernels_with_a_pass_kept": len(chosen),
        "variants_left_out": len(auto_runs[0].get("left_out", [])) if auto_runs else 0,
        "chosen": [{k: d.get(k) for k in ("kernel", "choice", "gpu_ms", "back_to_back_ms")} for d in chosen],
        "failures": failures, "runs": runs,
    }
    text = json.dumps(report, indent=1, default=str)
    Path(args.out).write_text(text + "\n", encoding="utf-8")
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], Path(args.out).name).write_text(text + "\n", encoding="utf-8")
    print(json.dumps({"speedups": speedups, "outputs": outputs, "run_to_run": run_to_run,
                      "kernels": report["kernels"], "inductor_kernels_tuned": len(decisions),
                      "kernels_with_a_pass_kept": len(chosen), "failures": failures}, indent=1, default=str))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
