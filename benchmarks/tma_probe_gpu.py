"""How much would turning a dot loop's pointer loads into on-device TMA descriptor loads win on Hopper?

A probe for the transparent mode's next candidate transformation, not a pass benchmark: the same
kernels written two ways (pointer tensors advanced each iteration, as most third-party kernels
do; `tl.make_tensor_descriptor` built on the device, the only form a pass could produce because it
cannot add kernel arguments; Triton 3.9 has no block pointers any more), timed with
`triton.testing.do_bench` (L2 flushed) and back to back (launches queued, as users run them).

Run on the GPU host (docs/gpu-runs.md): python -m benchmarks.tma_probe_gpu --out $RESULTS/tma-probe.json
Result: benchmarks/results/tma-probe-h100.json; what it means: docs/transparent-mode-history.md.
"""

from __future__ import annotations

import argparse
import json
import time

import torch
import triton
import triton.language as tl


@triton.jit
def matmul_pointers(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
                    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, ACC: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = (pid_m * BM + tl.arange(0, BM)) % M
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    ap = a + rm[:, None] * sam + rk[None, :] * sak
    bp = b + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=ACC)
    for k in range(0, tl.cdiv(K, BK)):
        x = tl.load(ap, mask=rk[None, :] < K - k * BK, other=0)
        y = tl.load(bp, mask=rk[:, None] < K - k * BK, other=0)
        acc = tl.dot(x, y, acc)
        ap += BK * sak
        bp += BK * sbk
    om = pid_m * BM + tl.arange(0, BM)
    on = pid_n * BN + tl.arange(0, BN)
    tl.store(c + om[:, None] * scm + on[None, :] * scn, acc.to(c.dtype.element_ty),
             mask=(om[:, None] < M) & (on[None, :] < N))


@triton.jit
def matmul_descriptors(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
                       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, ACC: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    ad = tl.make_tensor_descriptor(a, [M, K], [sam, sak], [BM, BK])
    bd = tl.make_tensor_descriptor(b, [K, N], [sbk, sbn], [BK, BN])
    acc = tl.zeros((BM, BN), dtype=ACC)
    for k in range(0, tl.cdiv(K, BK)):
        x = ad.load([pid_m * BM, k * BK])
        y = bd.load([k * BK, pid_n * BN])
        acc = tl.dot(x, y, acc)
    om = pid_m * BM + tl.arange(0, BM)
    on = pid_n * BN + tl.arange(0, BN)
    tl.store(c + om[:, None] * scm + on[None, :] * scn, acc.to(c.dtype.element_ty),
             mask=(om[:, None] < M) & (on[None, :] < N))


@triton.jit
def attention_pointers(q, k, v, o, S, sm_scale, H: tl.constexpr, D: tl.constexpr,
                       BM: tl.constexpr, BN: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    base = bh * S * D
    rm = start_m * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rd = tl.arange(0, D)
    qt = tl.load(q + base + rm[:, None] * D + rd[None, :])
    kp = k + base + rn[None, :] * D + rd[:, None]
    vp = v + base + rn[:, None] * D + rd[None, :]
    m_i = tl.full((BM,), float("-inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    for _ in range(0, S, BN):
        kt = tl.load(kp)
        s = tl.dot(qt, kt) * sm_scale
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), tl.load(vp))
        m_i = m_new
        kp += BN * D
        vp += BN * D
    tl.store(o + base + rm[:, None] * D + rd[None, :], (acc / l_i[:, None]).to(tl.float16))


@triton.jit
def attention_descriptors(q, k, v, o, S, sm_scale, H: tl.constexpr, D: tl.constexpr,
                          BM: tl.constexpr, BN: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    base = bh * S * D
    rm = start_m * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    qt = tl.load(q + base + rm[:, None] * D + rd[None, :])
    kd = tl.make_tensor_descriptor(k + base, [S, D], [D, 1], [BN, D])
    vd = tl.make_tensor_descriptor(v + base, [S, D], [D, 1], [BN, D])
    m_i = tl.full((BM,), float("-inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    for n in range(0, S, BN):
        s = tl.dot(qt, kd.load([n, 0]).T) * sm_scale
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), vd.load([n, 0]))
        m_i = m_new
    tl.store(o + base + rm[:, None] * D + rd[None, :], (acc / l_i[:, None]).to(tl.float16))


def back_to_back_us(fn, seconds: float = 0.4) -> float:
    fn()
    torch.cuda.synchronize()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < 0.05:
        fn()
        n += 1
    torch.cuda.synchronize()
    per = (time.perf_counter() - t0) / n
    reps = max(10, int(seconds / per))
    best = float("inf")
    for _ in range(3):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / reps * 1e6)
    return best


def matmul_cases():
    for dtype, acc in ((torch.float16, tl.float32), (torch.int8, tl.int32)):
        for size, (bm, bn, bk, warps, stages) in (
            (2048, (128, 128, 64, 4, 3)),
            (4096, (128, 128, 64, 4, 3)),
            (4096, (128, 256, 64, 8, 3)),
            (8192, (128, 256, 64, 8, 3)),
            (4096, (64, 64, 32, 4, 2)),
        ):
            if dtype is torch.int8:
                bk *= 2
            m = n = k = size
            if dtype is torch.int8:
                a = torch.randint(-8, 8, (m, k), device="cuda", dtype=dtype)
                b = torch.randint(-8, 8, (k, n), device="cuda", dtype=dtype)
                c = torch.empty(m, n, device="cuda", dtype=torch.int32)
                ref = (a.double() @ b.double())
            else:
                a = torch.randn(m, k, device="cuda", dtype=dtype)
                b = torch.randn(k, n, device="cuda", dtype=dtype)
                c = torch.empty(m, n, device="cuda", dtype=dtype)
                ref = a.double() @ b.double()
            grid = (triton.cdiv(m, bm), triton.cdiv(n, bn))
            name = f"matmul {str(dtype).split('.')[-1]} {size}^3 {bm}x{bn}x{bk} w{warps} s{stages}"

            def run(kernel, a=a, b=b, c=c, m=m, n=n, k=k, grid=grid, bm=bm, bn=bn, bk=bk, acc=acc,
                    warps=warps, stages=stages):
                return lambda: kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0),
                                            b.stride(1), c.stride(0), c.stride(1), BM=bm, BN=bn, BK=bk,
                                            ACC=acc, num_warps=warps, num_stages=stages)

            yield name, {"pointers": run(matmul_pointers),
                         "descriptors": run(matmul_descriptors)}, c, ref


def attention_cases():
    for s, bh, bm, bn, warps, stages in ((4096, 32, 128, 64, 8, 3), (1024, 64, 128, 64, 8, 3),
                                        (4096, 32, 64, 64, 4, 3)):
        d = 128
        q, k, v = (torch.randn(bh, s, d, device="cuda", dtype=torch.float16) for _ in range(3))
        o = torch.empty_like(q)
        scale = d ** -0.5
        ref = torch.softmax((q.double() @ k.double().transpose(1, 2)) * scale, -1) @ v.double()
        grid = (s // bm, bh)

        def run(kernel, q=q, k=k, v=v, o=o, s=s, bh=bh, bm=bm, bn=bn, warps=warps, stages=stages, grid=grid):
            return lambda: kernel[grid](q, k, v, o, s, scale, H=bh, D=d, BM=bm, BN=bn,
                                        num_warps=warps, num_stages=stages)

        yield (f"attention fwd S={s} BH={bh} D={d} {bm}x{bn} w{warps} s{stages}",
               {"pointers": run(attention_pointers), "descriptors": run(attention_descriptors)}, o, ref)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    rows = []
    for name, variants, out, ref in list(matmul_cases()) + list(attention_cases()):
        row = {"case": name}
        for label, fn in variants.items():
            out.zero_()
            fn()
            torch.cuda.synchronize()
            err = (out.double() - ref).abs().max().item() / max(ref.abs().max().item(), 1e-9)
            row[label] = {"gpu_us": triton.testing.do_bench(fn, warmup=50, rep=300) * 1e3,
                          "b2b_us": back_to_back_us(fn), "max_rel_err": err}
        for label in variants:
            if label != "pointers":
                row[f"{label}_gpu_speedup"] = row["pointers"]["gpu_us"] / row[label]["gpu_us"]
                row[f"{label}_b2b_speedup"] = row["pointers"]["b2b_us"] / row[label]["b2b_us"]
        print(json.dumps(row), flush=True)
        rows.append(row)
    from triton_ext.bench.gpu import checkout_commit

    result = {"commit": checkout_commit(), "date": time.strftime("%Y-%m-%d"), "gpu": torch.cuda.get_device_name(),
              "triton": triton.__version__, "rows": rows}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
