"""Exploration (not a test): do load eviction hints change time on this GPU, and where?"""
import json, os, sys
import torch, triton, triton.language as tl
from triton.testing import do_bench

dev = "cuda"
res = {}

@triton.jit
def gather_kernel(x_ptr, idx_ptr, table_ptr, out_ptr, n, BLOCK: tl.constexpr,
                  EV_STREAM: tl.constexpr, EV_TABLE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, eviction_policy=EV_STREAM)
    i = tl.load(idx_ptr + offs, mask=m, eviction_policy=EV_STREAM)
    t = tl.load(table_ptr + i, mask=m, eviction_policy=EV_TABLE)
    tl.store(out_ptr + offs, x * t, mask=m)

def run_gather(table_mb, n=1 << 27):
    g = torch.Generator(device=dev).manual_seed(0)
    tn = table_mb * (1 << 20) // 4
    table = torch.randn(tn, device=dev, generator=g)
    x = torch.randn(n, device=dev, generator=g)
    idx = torch.randint(0, tn, (n,), device=dev, generator=g, dtype=torch.int32)
    out = torch.empty_like(x)
    ref = (x.double() * table.double()[idx.long()]).float()
    grid = (triton.cdiv(n, 1024),)
    r = {}
    for ev_s in ("", "evict_first"):
        for ev_t in ("", "evict_last"):
            f = lambda: gather_kernel[grid](x, idx, table, out, n, BLOCK=1024, EV_STREAM=ev_s, EV_TABLE=ev_t)
            f(); torch.cuda.synchronize()
            assert torch.allclose(out, ref, rtol=1e-5, atol=1e-6)
            r[f"stream={ev_s or 'normal'},table={ev_t or 'normal'}"] = do_bench(f, warmup=50, rep=300)
    return r

@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, EV: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m, eviction_policy=EV) + tl.load(y_ptr + offs, mask=m, eviction_policy=EV), mask=m)

@triton.jit
def bias_kernel(x_ptr, w_ptr, out_ptr, rows, D: tl.constexpr, BLOCK_R: tl.constexpr, EV: tl.constexpr):
    r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    c = tl.arange(0, D)[None, :]
    m = r < rows
    x = tl.load(x_ptr + r * D + c, mask=m, eviction_policy=EV)
    w = tl.load(w_ptr + c)
    tl.store(out_ptr + r * D + c, x * w, mask=m)

def run_chain(n_mb_small=24, n_big=1 << 28):
    # k1 streams a big tensor, k2 then re-reads a small tensor written before k1: does evict_first in
    # k1 keep the small one in L2?
    g = torch.Generator(device=dev).manual_seed(1)
    big = torch.randn(n_big, device=dev, generator=g); big2 = torch.randn(n_big, device=dev, generator=g)
    outb = torch.empty_like(big)
    ns = n_mb_small * (1 << 20) // 4
    s = torch.randn(ns, device=dev, generator=g); s2 = torch.randn(ns, device=dev, generator=g)
    outs = torch.empty_like(s)
    r = {}
    for ev in ("", "evict_first"):
        def f():
            add_kernel[(triton.cdiv(ns, 1024),)](s, s2, outs, ns, BLOCK=1024, EV="")
            add_kernel[(triton.cdiv(n_big, 1024),)](big, big2, outb, n_big, BLOCK=1024, EV=ev)
            add_kernel[(triton.cdiv(ns, 1024),)](s, s2, outs, ns, BLOCK=1024, EV="")
        r[f"chain big={ev or 'normal'}"] = do_bench(f, warmup=20, rep=300)
    return r

def run_stream(n=1 << 28):
    g = torch.Generator(device=dev).manual_seed(2)
    x = torch.randn(n, device=dev, generator=g); y = torch.randn(n, device=dev, generator=g); o = torch.empty_like(x)
    r = {}
    for ev in ("", "evict_first", "evict_last"):
        r[f"add {ev or 'normal'}"] = do_bench(lambda: add_kernel[(triton.cdiv(n, 1024),)](x, y, o, n, BLOCK=1024, EV=ev), warmup=20, rep=300)
    rows, D = 1 << 18, 1024
    xb = torch.randn(rows * D, device=dev, generator=g); w = torch.randn(D, device=dev, generator=g); ob = torch.empty_like(xb)
    for ev in ("", "evict_first"):
        r[f"bias {ev or 'normal'}"] = do_bench(lambda: bias_kernel[(rows // 8,)](xb, w, ob, rows, D=D, BLOCK_R=8, EV=ev), warmup=20, rep=300)
    return r

for mb in (8, 24, 40, 64):
    res[f"gather table={mb}MB"] = run_gather(mb)
    print(mb, json.dumps(res[f"gather table={mb}MB"], indent=1), flush=True)
res["chain"] = run_chain(); print(res["chain"], flush=True)
res["stream"] = run_stream(); print(res["stream"], flush=True)
out = os.environ.get("RESULTS", "/tmp")
json.dump(res, open(os.path.join(out, "eviction_explore.json"), "w"), indent=1)
