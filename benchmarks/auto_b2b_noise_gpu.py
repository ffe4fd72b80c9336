"""Where the back-to-back noise of launch-bound kernels came from (the diagnostic behind the
pairing of benchmarks/auto_mode_gpu.py since b8db942), kept as it ran at 8c5b543:

    python benchmarks/auto_b2b_noise_gpu.py OUT.json vector_add,fg_group_quant_fp8_decode,...

Per kernel, mode on/off as that harness then paired it, 8 ABBA rounds of whole activation slots
of 5 readings each, every reading kept (``M1_current``: ``slots_stock``, ``slots_auto``); the same
with Python's garbage collector off during the readings (``M2_gc_off``); and alternating the two
states' kernels in the JIT's cache inside one activation (``M3_swap``), which this version skipped
on every kernel: its check asked for the same cache keys in both states, and the mode's caches
also hold its variants' compiles under their own keys. On the H200 host (result:
benchmarks/results/auto-b2b-noise-h200.json) whole slots of the same binary read about 17 or 27 µs
per launch (``sage_quant_q_prefill``, ``fg_group_quant_fp8_decode``), switching every few slots,
so round ratios spread by up to 25% (interquartile); readings within a slot agree to about 3%.
The harness now pairs single readings a few milliseconds apart (``_interleaved`` there)."""
import gc, json, os, statistics as st, sys, tempfile, time
import torch, triton
import triton_ext
from triton.runtime.jit import JITFunction
from benchmarks.auto_mode_gpu import cases, B2B_READING_MS
from triton_ext.testing import back_to_back_ms, forget_compiled_kernels

os.environ["TRITON_EXT_AUTO_DIR"] = tempfile.mkdtemp()
triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
names = sys.argv[2].split(",")
out = {}

def entries():
    found = []
    for obj in gc.get_objects():
        if issubclass(type(obj), JITFunction):
            for dev, caches in obj.device_caches.items():
                for k, v in caches[0].items():
                    found.append((obj, dev, k, v))
    return found

def slotted(read, rounds, readings, gcoff):
    res = {"stock": [], "auto": [], "ratios": [], "act_s": []}
    for r in range(rounds):
        pair = {"stock": [], "auto": []}
        for which in (("stock", "auto", "auto", "stock") if r % 2 == 0 else ("auto", "stock", "stock", "auto")):
            t0 = time.perf_counter()
            if which == "auto":
                with triton_ext.auto_mode():
                    res["act_s"].append(time.perf_counter() - t0)
                    if gcoff: gc.disable()
                    vals = [read() for _ in range(readings)]
                    gc.enable()
            else:
                forget_compiled_kernels()
                res["act_s"].append(time.perf_counter() - t0)
                if gcoff: gc.disable()
                vals = [read() for _ in range(readings)]
                gc.enable()
            pair[which].append(vals)
            res[which].append(vals)
        s = sum(st.median(v) for v in pair["stock"]); a = sum(st.median(v) for v in pair["auto"])
        res["ratios"].append(s / a)
    return res

def summ(ratios):
    q = st.quantiles(ratios, n=4)
    return {"median": st.median(ratios), "iqr": q[2] - q[0], "n": len(ratios)}

for name, build in cases(names, "all").items():
    torch.manual_seed(0)
    go, *_ = build()
    go(); torch.cuda.synchronize()
    gpu = triton.testing.do_bench(go)
    calls = max(5, min(200, int(B2B_READING_MS / max(gpu, 1e-3))))
    read = lambda: back_to_back_ms(go, calls) * 1e3
    row = {"gpu_ms": gpu, "calls": calls}
    t0 = time.perf_counter()
    m1 = slotted(read, 8, 5, False)
    row["M1_current"] = {**summ(m1["ratios"]), "act_s_median": st.median(m1["act_s"]), "wall_s": time.perf_counter() - t0,
                         "within_slot_rel_iqr": st.median([(st.quantiles(v, n=4)[2]-st.quantiles(v, n=4)[0])/st.median(v) for v in m1["stock"]+m1["auto"]]),
                         "slots_stock": [[round(x, 2) for x in v] for v in m1["stock"]],
                         "slots_auto": [[round(x, 2) for x in v] for v in m1["auto"]]}
    t0 = time.perf_counter()
    m2 = slotted(read, 8, 5, True)
    row["M2_gc_off"] = {**summ(m2["ratios"]), "wall_s": time.perf_counter() - t0}
    # M3: swap the JIT cache entry between the stock kernel and the mode's, mode on throughout
    forget_compiled_kernels(); go(); torch.cuda.synchronize()
    stock_entries = entries()
    with triton_ext.auto_mode() as mode:
        go(); torch.cuda.synchronize()
        mode_entries = entries()
        t0 = time.perf_counter()
        ratios = []
        if len(stock_entries) == 1 and len(mode_entries) == 1 and stock_entries[0][2] == mode_entries[0][2]:
            fn, dev, key, sk = stock_entries[0]; mk = mode_entries[0][3]
            cache = fn.device_caches[dev][0]
            for i in range(60):
                vals = {}
                for which in (("s", "a") if i % 2 == 0 else ("a", "s")):
                    cache[key] = sk if which == "s" else mk
                    vals[which] = read()
                ratios.append(vals["s"] / vals["a"])
            cache[key] = mk
            row["M3_swap"] = {**summ(ratios), "wall_s": time.perf_counter() - t0, "choice": [d.choice for d in mode.decisions]}
        else:
            row["M3_swap"] = {"skipped": [len(stock_entries), len(mode_entries)]}
    out[name] = row
    print(name, json.dumps({k: (v if not isinstance(v, dict) else {kk: vv for kk, vv in v.items() if not kk.startswith("slots")}) for k, v in row.items()}), flush=True)
open(sys.argv[1], "w").write(json.dumps(out, indent=1))
