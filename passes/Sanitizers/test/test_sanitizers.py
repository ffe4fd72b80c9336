"""End-to-end CPU tests of the sanitizer passes: real kernels compiled through cubin.

No GPU is needed: triton.compile with a GPUTarget runs ttir -> ttgir -> llir -> ptx -> cubin
with the wheel's ptxas. Passes are enabled through triton_ext, so they run where registry.yaml
places them (nan_inf_check at the end of make_ttgir; the other two at the end of make_ttir).
Whether a planted bug is caught at run time is checked on a GPU by check_gpu.py.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

import triton_ext
from triton_ext.testing import import_file, require_built

kernels = import_file(__file__, "../kernels.py")
require_built("sanitizers")  # an unbuilt plugin fails, never skips
pytestmark = pytest.mark.usefixtures("fresh_cache")  # compile from scratch: the IR read back is this run's

TARGET = GPUTarget("cuda", 90, 32)
ASYNC_COPY = "ttg.async_copy_global_to_local"
ALL = ("nan_inf_check", "masked_load_poison", "offset_overflow_check")



def _compile(fn: Any, signature: dict[str, str], constexprs: dict[str, Any],
             passes: tuple[str, ...] = (), options: dict[str, Any] | None = None,
             **pass_options: Any) -> Any:
    src = ASTSource(fn, signature=signature, constexprs=constexprs,
                    attrs=kernels.divisible(signature))
    opts = options or {}
    if not passes:
        return triton.compile(src, target=TARGET, options=opts)
    with triton_ext.enabled(*passes, **pass_options):
        compiled = triton.compile(src, target=TARGET, options=opts)
    assert compiled.asm["cubin"], "compilation did not reach cubin"
    return compiled


def _matmul(passes: tuple[str, ...] = (), dtype: str = "fp16", relu: bool = False,
            **pass_options: Any) -> Any:
    return _compile(kernels.matmul_kernel, kernels.matmul_signature(dtype),
                    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "RELU": relu}, passes,
                    {"num_stages": 3, "num_warps": 4}, **pass_options)


def _reports(ir: str, pass_name: str) -> list[tuple[str, str, str]]:
    """(kernel, file:line, what) of every site the pass registered in the IR's site table (the
    module attribute the host reads the records by; the default print=none puts no tt.print)."""
    match = re.search(r'triton_ext\.sanitizer_sites = \[(.*?)\]', ir, re.S)
    if match is None:
        return []
    entries = [e.split("|") for e in re.findall(r'"([^"]*)"', match.group(1))]
    return [(kernel, site, what) for check, what, _, kernel, site in entries if check == pass_name]


def _site(name: str) -> str:
    return f"{kernels.SOURCE}:{kernels.site_line(name)}"


@pytest.fixture(scope="module")
def baseline_async_copies() -> int:
    count = _matmul().asm["ttgir"].count(ASYNC_COPY)
    assert count > 0, "the matmul loop is not pipelined without sanitizers; the test is moot"
    return count


@pytest.mark.parametrize("passes", [("nan_inf_check",), ("masked_load_poison",),
                                    ("offset_overflow_check",), ALL],
                         ids=["nan_inf_check", "masked_load_poison", "offset_overflow_check",
                              "all"])
def test_async_copies_unchanged(passes, baseline_async_copies):
    ttgir = _matmul(passes).asm["ttgir"]
    assert ttgir.count(ASYNC_COPY) == baseline_async_copies


@pytest.mark.parametrize("relu", [False, True], ids=["plain", "relu"])
def test_nan_inf_check_matmul_sites_outside_loop(relu):
    ttgir = _matmul(("nan_inf_check",), relu=relu).asm["ttgir"]
    reports = _reports(ttgir, "nan_inf_check")
    assert ("matmul_kernel", _site("matmul_store"), "store non-finite") in reports
    # The plain epilogue (truncf, convert_layout) keeps NaN/Inf, so the store check covers the
    # dot; a ReLU can hide -Inf, so the dot is checked too.
    assert any(what == "dot non-finite" for _, _, what in reports) == relu, reports
    # The checks sit after the pipelined loop: no print inside its body.
    loop = ttgir[ttgir.index("scf.for"):]
    body = loop[:loop.index("scf.yield")]
    assert "tt.print" not in body and "tt.reduce" not in body


def test_nan_inf_check_bf16_matmul_reaches_cubin():
    reports = _reports(_matmul(("nan_inf_check",), dtype="bf16", relu=True).asm["ttgir"],
                       "nan_inf_check")
    assert len(reports) == 2


def test_nan_inf_check_plain_matmul_one_reduction():
    # The dot check covered by the store check is left out: one non-finite compare (on the
    # stored fp16 value), no mask converted to the accumulator's layout.
    ttgir = _matmul(("nan_inf_check",)).asm["ttgir"]
    assert len(re.findall(r"= math\.absf", ttgir)) == 1
    assert not re.search(r"tensor<128x128xi1, #mma>", ttgir)


@pytest.mark.parametrize("mode", ["record", "abort"])
def test_nan_inf_check_ratio_store(mode):
    ttgir = _compile(kernels.ratio_kernel, kernels.RATIO_SIG, {"BLOCK": 1024},
                     ("nan_inf_check",), mode=mode).asm["ttgir"]
    assert _reports(ttgir, "nan_inf_check") == [
        ("ratio_kernel", _site("ratio_store"), "store non-finite")]
    assert ("tt.assert" in ttgir) == (mode == "abort")


def test_masked_load_poison_sets_nan_other():
    plain = _compile(kernels.window_sum_kernel, kernels.SUM_SIG, {"BLOCK": 1024}).asm["ttir"]
    ttir = _compile(kernels.window_sum_kernel, kernels.SUM_SIG, {"BLOCK": 1024},
                    ("masked_load_poison",)).asm["ttir"]
    assert "0x7FC00000" not in plain
    nan = re.search(r"(%\S+) = arith.constant dense<0x7FC00000> : tensor<1024xf32>", ttir)
    assert nan, ttir
    assert re.search(rf"tt\.load %\S+, %\S+, {re.escape(nan.group(1))} ", ttir), ttir


@pytest.mark.parametrize("mode", ["record", "abort"])
def test_offset_overflow_check_row_offset(mode):
    compiled = _compile(kernels.row_copy_kernel, kernels.ROW_SIG, {"BLOCK": 1024},
                        ("offset_overflow_check",), mode=mode)
    reports = _reports(compiled.asm["ttir"], "offset_overflow_check")
    assert ("row_copy_kernel", _site("row_offset"), "i32 offset overflow lanes") in reports
    assert ("tt.assert" in compiled.asm["ttir"]) == (mode == "abort")
    # The check survives to the LLVM IR (the record's atomics, assertfail in abort mode); the
    # default prints nothing on the device.
    llir = compiled.asm["llir"]
    assert _record_atomics(compiled) and "vprintf" not in llir
    assert ("__assertfail" in llir) == (mode == "abort")


def _record_atomics(compiled: Any) -> int:
    """Atomic updates of the sanitizer records in the PTX (64-bit add/max on global memory)."""
    return len(re.findall(r"(?:atom|red)\.global\.gpu\.relaxed\.(?:add\.u64|max\.s64)",
                          compiled.asm["ptx"]))


def _defs(ir: str) -> dict[str, str]:
    """SSA name (also `%x` for `%x#0`) -> the text of the line that defines it."""
    out: dict[str, str] = {}
    for line in ir.splitlines():
        m = re.match(r"\s*(%[\w.-]+)(?::\d+)? = (.*)", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


@pytest.mark.parametrize("passes", [("nan_inf_check",), ALL], ids=["nan_inf_check", "all"])
def test_dot_check_reads_waited_value_under_store_mask(passes):
    # Issue 7 on the H200: the clean GEMM reported "dot non-finite" for the accumulator lanes
    # outside M x N (undefined, NaN with masked_load_poison, never stored). The dot check must
    # read the result of the warp_group_dot_wait {pendings = 0} after the loop and count only
    # lanes under the store's mask (converted to the accumulator's #mma layout). The ReLU
    # epilogue keeps the dot check (the plain one is covered by the store check).
    ttgir = _matmul(passes, relu=True).asm["ttgir"]
    defs = _defs(ttgir)
    absf = re.findall(r"(%\S+) = math\.absf (%[\w.-]+)(?:#0)? : tensor<128x128xf32, #mma>", ttgir)
    assert len(absf) == 1, absf
    abs_name, checked = absf[0]
    assert defs[checked].startswith("ttng.warp_group_dot_wait") and "pendings = 0" in defs[checked], \
        defs[checked]
    cmp = re.search(rf"(%\S+) = arith\.cmpf ueq, {re.escape(abs_name)},", ttgir)
    assert cmp, "no non-finite compare on the accumulator"
    andi = re.search(rf"= arith\.andi {re.escape(cmp.group(1))}, (%[\w.-]+) : tensor<128x128xi1, #mma>",
                     ttgir)
    assert andi, "the dot check counts lanes that no store writes (no mask)"
    convert = re.match(r"ttg\.convert_layout (%[\w.-]+) : tensor<128x128xi1, #blocked\d*> -> "
                       r"tensor<128x128xi1, #mma>", defs[andi.group(1)])
    assert convert, defs[andi.group(1)]
    store = re.search(r"tt\.store %\S+, %\S+, (%[\w.-]+) :", ttgir)
    assert store and store.group(1) == convert.group(1), "the mask is not the store's"


def _loop_ops(ttgir: str) -> list[str]:
    """Op names in the body of the (only) scf.for, sorted."""
    body = ttgir[ttgir.index("scf.for"):]
    body = body[body.index("\n"):body.index("scf.yield")]
    return sorted(re.findall(r"^\s*(?:%\S+ = )?\"?([a-z_]+\.[a-z_.]+)", body, re.M))


@pytest.mark.parametrize("passes", [("masked_load_poison",), ("offset_overflow_check",), ALL],
                         ids=["masked_load_poison", "offset_overflow_check", "all"])
def test_pipelined_gemm_loop_unchanged(passes):
    # The H200 GEMM ran 80% slower with all sanitizers: a NaN `other` on the dot operands made
    # the pipeliner reload each tile into registers, select, write it back to shared memory and
    # wait for every wgmma. The loop body must stay op-for-op what it is without sanitizers.
    assert _loop_ops(_matmul(passes).asm["ttgir"]) == _loop_ops(_matmul().asm["ttgir"])


def test_offset_check_of_loop_increment_is_hoisted():
    # `b_ptrs += BLOCK_K * stride_bk` is computed in the loop body at ttir; its check goes in
    # front of the loop (every iteration computes the same value). Abort mode keeps the whole
    # report where the check is (record mode updates the records before the return).
    ttir = _matmul(("offset_overflow_check",), mode="abort").asm["ttir"]
    line = next(n for n, text in enumerate(kernels.SOURCE.read_text().splitlines(), 1)
                if "b_ptrs += BLOCK_K * stride_bk" in text)
    site = f"site={kernels.SOURCE}:{line} "
    assert site in ttir, "the loop increment is not checked"
    assert ttir.index(site) < ttir.index("scf.for")


def _attention(passes: tuple[str, ...] = ()) -> Any:
    return _compile(kernels.bench_kernel, kernels.bench_signature("fp16"),
                    {"WORKLOAD": kernels.ATTENTION, "BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64},
                    passes, {"num_stages": 3, "num_warps": 4})


@pytest.mark.parametrize("passes", [("nan_inf_check",), ("masked_load_poison",),
                                    ("offset_overflow_check",), ALL],
                         ids=["nan_inf_check", "masked_load_poison", "offset_overflow_check",
                              "all"])
def test_attention_async_copies_unchanged(passes):
    # `k_ptrs + start_n * stride_n` depends on the loop: its wrapped lanes are carried through
    # the loop and reported after it. A report inside the loop took attention from 6 async
    # copies to 0.
    base = _attention().asm["ttgir"].count(ASYNC_COPY)
    assert base > 0, "attention is not pipelined without sanitizers; the test is moot"
    ttgir = _attention(passes).asm["ttgir"]
    assert ttgir.count(ASYNC_COPY) == base
    body = ttgir[ttgir.index("scf.for"):]
    assert "tt.print" not in body[:body.index("scf.yield")]


def test_bench_spec_cpu_check():
    # What CI runs for the bench spec (triton-ext bench --cpu --quick sanitizers).
    import subprocess
    import os
    repo = Path(__file__).resolve().parents[3]
    proc = subprocess.run([sys.executable, "-m", "triton_ext", "bench", "--cpu", "--quick", "sanitizers"],
                          capture_output=True, text=True, cwd=repo, env=dict(os.environ), timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "15/15 kernel combination(s) ok" in proc.stdout, proc.stdout


# ----------------------------------------------------------------------------------------------
# Reporting (issue 18): one line per site, per-site records in the module, the Python API.

# The extension's own package (registry package: triton_ext_sanitizers), from its folder.
sanitizers = triton_ext.import_extension("sanitizers")


def _ptx_bytes(ptx: str, symbol: str) -> bytes:
    """Initializer bytes of a `.global .b8 symbol[N] = {...}` in PTX."""
    m = re.search(rf"\.global \.align \d+ \.b8 {symbol}\[(\d+)\] = \{{([^}}]*)\}}", ptx)
    assert m, f"{symbol} has no initializer in the PTX"
    data = bytes(int(b) for b in m.group(2).split(","))
    assert len(data) <= int(m.group(1))
    return data.ljust(int(m.group(1)), b"\0")  # PTX leaves out trailing zeros


def _print_guards(ttgir: str) -> list[str]:
    """For each tt.print: the text of the op defining the condition of its enclosing scf.if."""
    defs = _defs(ttgir)
    lines = ttgir.splitlines()
    guards = []
    for i, line in enumerate(lines):
        if "tt.print" in line:
            cond = re.match(r"\s*scf\.if (%[\w.-]+)", lines[i - 1])
            guards.append(defs.get(cond.group(1), "") if cond else "")
    return guards


def test_log_affine_one_print_per_site():
    # torch.compile's `log(x) * 2 + 1` (Inductor's kernel shape) with the opt-in device line
    # (print=first): one store site, so exactly one print, reached only by thread 0 of the first
    # program whose `programs` counter update read zero. Before issue 18 every thread of every
    # program with a NaN printed.
    compiled = _compile(kernels.log_affine_kernel, kernels.LOG_SIG, {"XBLOCK": 1024},
                        ("nan_inf_check",), print="first", fast_path="peak")
    ttgir = compiled.asm["ttgir"]
    assert ttgir.count("tt.print") == 1
    defs = _defs(ttgir)
    (guard,) = _print_guards(ttgir)
    first_program, thread_zero = re.match(r"arith\.andi (%[\w.-]+), (%[\w.-]+) : i1", guard).groups()
    # The records and the print sit right before the return, where the tile's registers are
    # dead (a vprintf call keeps everything live across it), under `count > 0`, the count being
    # what the reporting branch at the store hands out with the first lane.
    lines = ttgir.splitlines()
    at = next(i for i, line in enumerate(lines) if "tt.print" in line)
    assert [ln.strip()[:1] for ln in lines[at + 1:at + 3]] == ["}", "}"], lines[at - 1:at + 4]
    assert lines[at + 3].strip().startswith("tt.return"), lines[at - 1:at + 4]
    count = re.search(r": (%[\w.-]+)#0 : i32", lines[at])
    assert count, lines[at]
    branch = next(i for i, line in enumerate(lines)
                  if re.match(rf"\s*{re.escape(count.group(1))}:2 = scf\.if %\S+ -> \(i32, i32\)", line))
    # The branch at the store comes after it (record mode: the store's pointers are dead there).
    assert next(i for i, line in enumerate(lines) if "tt.store" in line) < branch < at
    old = re.match(r"arith\.cmpi eq, (%[\w.-]+), %\S+ : i64", defs[first_program]).group(1)
    assert defs[old].startswith("tt.atomic_rmw add"), defs[old]
    tid = re.match(r"arith\.cmpi eq, (%[\w.-]+), %\S+ : i32", defs[thread_zero]).group(1)
    assert "%tid.x" in defs[tid], defs[tid]
    # The record lives in the cubin's module: one site, three int64, updated atomically.
    ptx = compiled.asm["ptx"]
    assert re.search(r"\.visible \.global \.align 8 \.b8 triton_ext_sanitizer_counters\[24\];", ptx)
    assert len(re.findall(r"(?:atom|red)\.global\.gpu\.relaxed\.(?:add\.u64|max\.s64)", ptx)) == 3


def test_two_stores_share_one_fast_path():
    # Issue 18, "merge per tile": the two stores of one tile type in ratio_pair_kernel are
    # checked by one NaN-propagating reduction of their combined |values|; each site still gets
    # its own count and first lane (reporting branch) and record.
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "sum_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32",
           "BLOCK": "constexpr"}
    ttgir = _compile(kernels.ratio_pair_kernel, sig, {"BLOCK": 1024}, ("nan_inf_check",)).asm["ttgir"]
    fast = ttgir[:ttgir.index("scf.if")]
    assert fast.count('"tt.reduce"') == 1 and "arith.maximumf" in fast
    assert re.search(r"scf\.if %\S+ -> \(i32, i32, i32, i32\)", ttgir)
    assert [site for _, site, _ in _reports(ttgir, "nan_inf_check")] == [
        _site("pair_sum_store"), _site("pair_ratio_store")]


def test_site_table_from_real_kernel():
    compiled = _compile(kernels.log_affine_kernel, kernels.LOG_SIG, {"XBLOCK": 1024},
                        ("nan_inf_check",))
    sites = sanitizers.sites_of(compiled)
    assert sites == [sanitizers.Site("nan_inf_check", "store non-finite", 1024,
                                     "log_affine_kernel", _site("log_affine_store"))]
    # The table the host reads from the loaded module (a constant global) says the same.
    table = _ptx_bytes(compiled.asm["ptx"], sanitizers.SITES_SYMBOL).decode()
    assert sanitizers.parse_site_table(table) == sites
    # A kernel compiled without the sanitizers has no table.
    assert sanitizers.sites_of(_compile(kernels.log_affine_kernel, kernels.LOG_SIG,
                                        {"XBLOCK": 1024})) == []


def _line_of(text: str) -> str:
    line = next(n for n, t in enumerate(kernels.SOURCE.read_text().splitlines(), 1) if text in t)
    return f"{kernels.SOURCE}:{line}"


def test_ttir_and_ttgir_sites_share_one_record_array():
    # offset_overflow_check (end of make_ttir) and nan_inf_check (end of make_ttgir) append to
    # one table and one counters global: the row offset (a tile of 1024 lanes), the scalar
    # `row * ncols` of the store's pointer (one lane), the store's value; nine int64.
    compiled = _compile(kernels.row_copy_kernel, kernels.ROW_SIG, {"BLOCK": 1024}, ALL)
    sites = sanitizers.sites_of(compiled)
    store_line = _line_of("tl.store(out_ptr + row * ncols + cols")
    assert [(s.check, s.numel, s.kernel, s.location) for s in sites] == [
        ("offset_overflow_check", 1024, "row_copy_kernel", _site("row_offset")),
        ("offset_overflow_check", 1, "row_copy_kernel", store_line),
        ("nan_inf_check", 1024, "row_copy_kernel", store_line)]
    assert re.search(r"triton_ext_sanitizer_counters\[72\];", compiled.asm["ptx"])
    table = _ptx_bytes(compiled.asm["ptx"], sanitizers.SITES_SYMBOL).decode()
    assert sanitizers.parse_site_table(table) == sites


def test_sites_say_why_their_check_stays():
    # Issue 18: each site carries the passes' reason (Site.reason) -- which offset leaves have no
    # bound and what the check costs; where the stored value may become non-finite and which
    # fast path checks it -- so the overhead table says per kernel what is unproven.
    load_line = kernels.site_line("row_offset") + 1  # x = tl.load(x_ptr + offs, ...)
    row_copy = sanitizers.sites_of(_compile(kernels.row_copy_kernel, kernels.ROW_SIG,
                                            {"BLOCK": 1024}, ALL))
    assert [(s.check, s.reason) for s in row_copy] == [
        ("offset_overflow_check",
         "unbounded: arg `stride`; loose: program_id(0) <= 2^31-2; scalar bounds test"),
        ("offset_overflow_check",  # the scalar `row * ncols` of the store's pointer
         "unbounded: arg `ncols`; loose: program_id(0) <= 2^31-2; scalar i64 check"),
        ("nan_inf_check", f"loaded `x` (line {load_line}); reload path, 8/thread")]
    store = kernels.site_line("log_affine_store")
    (log_store,) = sanitizers.sites_of(_compile(kernels.log_affine_kernel, kernels.LOG_SIG,
                                                {"XBLOCK": 1024}, ("nan_inf_check",)))
    assert log_store.reason == (f"loaded `tmp0` (line {store - 4}), log (line {store - 3}); "
                                "reload path, 8/thread")


def test_site_reasons_parse_and_old_ir_still_parses():
    compiled = _compile(kernels.row_copy_kernel, kernels.ROW_SIG, {"BLOCK": 1024}, ALL)
    ttgir = compiled.asm["ttgir"]
    sites = sanitizers.sites_of_ir(ttgir)
    assert sites == sanitizers.sites_of(compiled) and all(s.reason for s in sites)
    # IR compiled before the passes gave reasons has no `triton_ext.sanitizer_sites_reason`:
    # the same sites, each with reason "". The reason is no part of a site's identity, so the
    # records read from the device table (which has none) still match the IR's sites.
    old = re.sub(r'triton_ext\.sanitizer_sites_reason = \[(?:\s*"(?:[^"\\]|\\.)*",?)*\s*\],?\s*', "",
                 ttgir)
    assert "sanitizer_sites_reason" not in old
    assert [s.reason for s in sanitizers.sites_of_ir(old)] == ["", "", ""]
    assert sanitizers.sites_of_ir(old) == sites
    # Reasons may hold `]` (a bound `in [-2^30, 2^30-1]`); a shorter reasons array pads with "".
    ir = ('module attributes {triton_ext.sanitizer_sites = ["offset_overflow_check|i32 offset '
          'overflow lanes|1|k|k.py:3", "nan_inf_check|store non-finite|128|k|k.py:4"], '
          'triton_ext.sanitizer_sites_reason = ["loose: x / 2 (line 2) in [-2^30, 2^30-1]; '
          'scalar i64 check"]} {')
    parsed = sanitizers.sites_of_ir(ir)
    assert [s.location for s in parsed] == ["k.py:3", "k.py:4"]
    assert [s.reason for s in parsed] == [
        "loose: x / 2 (line 2) in [-2^30, 2^30-1]; scalar i64 check", ""]


def test_decode_records_of_real_sites():
    compiled = _compile(kernels.row_copy_kernel, kernels.ROW_SIG, {"BLOCK": 1024}, ALL)
    sites = sanitizers.sites_of(compiled)
    offset = sites[0]
    # What the device leaves after programs 130 and 199 wrapped 1024 lanes each (the first
    # at lane 0 of program 130): lanes, programs, INT64_MAX - first index; the rest is clean.
    first = 130 * 1024
    counters = [2048, 2, sanitizers.INT64_MAX - first] + [0] * 6
    (record,) = sanitizers.decode(sites, counters)
    assert (record.site, record.lanes, record.programs) == (offset, 2048, 2)
    assert (record.first_index, record.first_program, record.first_lane) == (first, 130, 0)
    assert f"site={_site('row_offset')} i32 offset overflow lanes: lanes=2048" in record.line()
    assert sanitizers.decode(sites, [0] * 9) == []
    assert len(sanitizers.decode(sites, [0] * 9, all_sites=True)) == 3
    with pytest.raises(ValueError, match="need 9 counters"):
        sanitizers.decode(sites, [0] * 6)
    err = sanitizers.SanitizerError([record])
    assert "row_copy_kernel" in str(err) and _site("row_offset") in str(err)


def test_compiled_copies_report_one_record_per_site():
    # The H200 torch.compile run printed two lines and returned two records for its one store:
    # Inductor benchmarked two pointwise configs, two modules compiled from one source line, each
    # with its own record. report() merges copies of a site: lanes and programs add up, and the
    # first index is the copy's with the smallest (its site keeps the numbering: numel differs).
    copies = [sanitizers.sites_of(_compile(kernels.log_affine_kernel, kernels.LOG_SIG,
                                           {"XBLOCK": block}, ("nan_inf_check",)))
              for block in (1024, 512)]
    (big,), (small,) = copies
    assert (big.numel, small.numel) == (1024, 512) and big.location == small.location
    # 2044 NaN lanes per launch; the 512-lane copy found its first NaN at element 3 (program 0),
    # the 1024-lane copy at element 5.
    records = [*sanitizers.decode([big], [2044 * 106, 4 * 106, sanitizers.INT64_MAX - 5]),
               *sanitizers.decode([small], [2044 * 107, 8 * 107, sanitizers.INT64_MAX - 3])]
    (merged,) = sanitizers.merge(records)
    assert (merged.lanes, merged.programs, merged.copies) == (2044 * 213, 4 * 106 + 8 * 107, 2)
    assert (merged.site, merged.first_index, merged.first_program, merged.first_lane) == (small, 3, 0, 3)
    assert merged.line().endswith("(2 compiled copies)") and _site("log_affine_store") in merged.line()
    # Different sites (or kernels) stay apart; one copy is left as it is.
    other = sanitizers.Record(sanitizers.Site("offset_overflow_check", "i32 offset overflow lanes",
                                              512, small.kernel, small.location), 1, 1, 0)
    assert sanitizers.merge([records[0], other]) == [records[0], other]


def test_gpu_check_counts_report_lines_only():
    # The H200 check counted the SanitizerError text its child printed (`... store non-finite:
    # lanes=37 ...`) as a second report line of nan_check_raises. Report lines are the host's
    # (Record.line(), at the start of a line) and the opt-in device printf lines; the exception's
    # text (indented, or JSON after RAISED) is not.
    from passes.Sanitizers import check_gpu

    (record,) = sanitizers.decode(
        [sanitizers.Site("nan_inf_check", "store non-finite", 1024, "ratio_kernel", "k.py:42")],
        [37, 37, sanitizers.INT64_MAX - 5])
    err = sanitizers.SanitizerError([record])
    text = "\n".join([
        "pid (217, 0, 0) idx ()[triton-ext nan_inf_check] kernel=ratio_kernel site=k.py:42 store "
        "non-finite; first report of this site, lanes in this program=1",
        f"RAISED {json.dumps(str(err))}", str(err), record.line(),
        "pid (3, 0, 0) idx ()[triton-ext offset_overflow_check] kernel=row_copy_kernel site=k.py:72 "
        "i32 offset overflow lanes=1024"])
    found = [(m.group(2), m.group(4).strip()) for m in check_gpu.REPORT.finditer(text)]
    assert found == [("ratio_kernel", "store non-finite"), ("ratio_kernel", "store non-finite"),
                     ("row_copy_kernel", "i32 offset overflow lanes")]


def test_report_prints_one_host_line_per_collected_site(capsys):
    # Default print=none: the line per site is the host's (Record.line(); report() prints the
    # records it returns, check() raises them; GPU: check_gpu's scenarios). The exit summary,
    # for findings nobody collected, is armed by enabling a sanitizer pass, once per process.
    import atexit

    (record,) = sanitizers.decode(
        [sanitizers.Site("nan_inf_check", "store non-finite", 1024, "ratio_kernel", "k.py:42")],
        [37, 37, sanitizers.INT64_MAX - 5])
    assert record.line().startswith("[triton-ext nan_inf_check] kernel=ratio_kernel site=k.py:42 "
                                    "store non-finite: lanes=37 programs=37 first index=5")
    registered: list[Any] = []
    real = atexit.register
    atexit.register = lambda fn, *a, **k: registered.append(fn) or fn  # type: ignore[assignment]
    try:
        sanitizers._exit_summary_armed = False
        triton_ext.enable("nan_inf_check")
        triton_ext.enable("offset_overflow_check")
        with triton_ext.enabled("nan_inf_check"):
            pass
    finally:
        atexit.register = real  # type: ignore[assignment]
        triton_ext.disable()
    assert registered == [sanitizers._exit_summary]
    # Without a CUDA driver the exit summary has nothing to read and says nothing.
    try:
        ctypes_ok = bool(__import__("ctypes").CDLL("libcuda.so.1"))
    except OSError:
        ctypes_ok = False
    if not ctypes_ok:
        sanitizers._exit_summary()
        assert capsys.readouterr().err == ""


def test_overhead_table_names_what_is_left():
    # The "Done when" table: each kernel that misses its target lists the checks left in
    # it and why they cannot be proven away; targets per class (memory-bound / GEMM+attention).
    from tests.realworld import sanitizer_overhead as overhead_table

    def kernel(name: str, kind: str, speeds: dict[str, float], findings: dict | None = None):
        passes = {p: {"fires": True, "speedup": v, **({"findings": findings} if findings else {})}
                  for p, v in speeds.items()}
        return {"kernel": name, "package": "pkg", "kind": kind, "passes": passes}

    corpus = {"gpu": "H200", "commit": "abc", "date": "d", "rounds": 5, "kernels": [
        kernel("norm_ok", "norm", {"nan_inf_check": 0.99}),
        kernel("norm_slow", "norm", {"nan_inf_check": 0.80}),
        kernel("gemm_slow", "gemm", {"offset_overflow_check": 0.85}),
        kernel("rope", "rotary", {"nan_inf_check": 0.5}, {"store non-finite @ r.py:9": 7})]}
    sites = {"norm_slow": {"nan_inf_check": ["store non-finite @ n.py:3"]},
             "gemm_slow": {"offset_overflow_check": ["i32 offset overflow lanes @ g.py:5"]}}
    text, ok = overhead_table.render(corpus, None, sites)
    assert not ok
    rows = {ln.split(" | ")[0].strip("| "): ln for ln in text.splitlines() if ln.startswith("| ")}
    assert "| met |" in rows["norm_ok"]
    assert "**missed** (>= 0.870x)" in rows["norm_slow"] and "store non-finite @ n.py:3" in rows["norm_slow"]
    assert "loaded floating-point data" in rows["norm_slow"]
    assert "**missed** (>= 0.909x)" in rows["gemm_slow"] and "no range fact" in rows["gemm_slow"]
    assert "reporting path" in rows["rope"] and "r.py:9: 7 lanes" in rows["rope"]
    text, ok = overhead_table.render({**corpus, "kernels": corpus["kernels"][:1]}, None, sites)
    assert ok


def test_overhead_table_prints_machine_code_costs():
    # --costs (tests/realworld/sanitizer_costs.py): next to a missed kernel's reasons, what the
    # check adds to its machine code; measured here on a real cubin of the in-house GEMM.
    from tests.realworld import sanitizer_costs
    from tests.realworld import sanitizer_overhead as overhead_table

    off = sanitizer_costs.cost_of(_bench_kernel(1, 128).asm["cubin"])
    on = sanitizer_costs.cost_of(_bench_kernel(1, 128, ("nan_inf_check",)).asm["cubin"])
    assert off.registers > 100 and off.instructions > 200 and off.BAR >= 1
    assert on.instructions > off.instructions  # the check's own instructions
    costs = {"gemm_slow": {"off": vars(off), "nan_inf_check": vars(on)}}
    corpus = {"kernels": [{"kernel": "gemm_slow", "package": "pkg", "kind": "gemm",
                           "passes": {"nan_inf_check": {"fires": True, "speedup": 0.8}}}]}
    sites = {"gemm_slow": {"nan_inf_check": ["store non-finite @ g.py:5 -- a dot (g.py:4)"]}}
    text, _ = overhead_table.render(corpus, None, sites, costs)
    (row,) = [ln for ln in text.splitlines() if ln.startswith("| gemm_slow")]
    assert (f"CPU sm_90: registers {off.registers} -> {on.registers}" in row
            and f"SASS instructions {off.instructions} -> {on.instructions}" in row), row
    text, _ = overhead_table.render(corpus, None, sites)  # no --costs: reasons only
    assert "CPU sm_90" not in text


def test_overhead_table_prints_each_sites_reason():
    # The --sites entries carry the passes' reasons (`what @ file:line -- reason`): the table
    # prints them, sites with one reason once with all their lines; entries without a reason
    # (a sites file written before the passes gave them) keep the generic sentence.
    from tests.realworld import sanitizer_overhead as overhead_table

    site = sanitizers.Site("offset_overflow_check", "i32 offset overflow lanes", 1, "k",
                           "/src/pkg/g.py:5", reason="unbounded: arg `stride_am`; scalar i64 check")
    entry = overhead_table.site_entry(site)
    assert entry == "i32 offset overflow lanes @ g.py:5 -- unbounded: arg `stride_am`; scalar i64 check"
    corpus = {"kernels": [{"kernel": name, "package": "pkg", "kind": "gemm",
                           "passes": {"offset_overflow_check": {"fires": True, "speedup": 0.8}}}
                          for name in ("gemm_new", "gemm_old")]}
    sites = {"gemm_new": {"offset_overflow_check": [
                 entry, entry.replace("g.py:5", "g.py:9"),
                 "i32 offset overflow lanes @ g.py:7 -- unbounded: loaded `idx` (line 3); "
                 "lane-by-lane i64 check"]},
             "gemm_old": {"offset_overflow_check": ["i32 offset overflow lanes @ g.py:5"]}}
    text, _ = overhead_table.render(corpus, None, sites)
    rows = {ln.split(" | ")[0].strip("| "): ln for ln in text.splitlines() if ln.startswith("| ")}
    assert ("| g.py:5, g.py:9: unbounded: arg `stride_am`; scalar i64 check<br>"
            "g.py:7: unbounded: loaded `idx` (line 3); lane-by-lane i64 check |") in rows["gemm_new"]
    assert "no range fact" not in rows["gemm_new"]
    assert "i32 offset overflow lanes @ g.py:5. i32 offset overflow lanes:" in rows["gemm_old"]
    assert "no range fact" in rows["gemm_old"]
    # A cell that mixes kinds names each.
    sites["gemm_new"]["offset_overflow_check"].append("dot non-finite @ g.py:11 -- a dot (line 10)")
    text, _ = overhead_table.render(corpus, None, sites)
    assert ("| i32 offset overflow lanes @ g.py:5, g.py:9: unbounded: arg `stride_am`; scalar i64 "
            "check<br>") in text and "<br>dot non-finite @ g.py:11: a dot (line 10) |" in text


def test_malformed_site_table_is_an_error():
    with pytest.raises(ValueError, match="expected pass\\|what\\|numel\\|kernel\\|file:line"):
        sanitizers.parse_site_table("nan_inf_check|store non-finite|x|k|f.py:1\n")


def test_report_without_cuda_driver_says_what_is_missing():
    import ctypes

    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        pass
    else:
        pytest.skip("a CUDA driver is present; check_gpu.py tests report() on the GPU")
    with pytest.raises(RuntimeError, match="needs the CUDA driver"):
        sanitizers.report()


def test_every_planted_bug_keeps_its_check():
    # The elisions of issue 18 (provably finite values, offsets that fit i32) must leave the
    # checks that catch the planted bugs: 0/0 at ratio_store, the poisoned sum at window_store,
    # the i32 wrap of row * stride at row_offset.
    ratio = _compile(kernels.ratio_kernel, kernels.RATIO_SIG, {"BLOCK": 1024}, ("nan_inf_check",))
    window = _compile(kernels.window_sum_kernel, kernels.SUM_SIG, {"BLOCK": 1024},
                      ("masked_load_poison", "nan_inf_check"))
    rows = _compile(kernels.row_copy_kernel, kernels.ROW_SIG, {"BLOCK": 1024},
                    ("offset_overflow_check",))
    assert [s.location for s in sanitizers.sites_of(ratio)] == [_site("ratio_store")]
    assert [s.location for s in sanitizers.sites_of(window)] == [_site("window_store")]
    assert _site("row_offset") in [s.location for s in sanitizers.sites_of(rows)]


def test_dead_weakref_proxies_are_not_kernels():
    # report() scans the GC for compiled kernels; a dead weakref proxy there raised ReferenceError
    # on the H200 (after torch.compile) and report() failed.
    import weakref

    from triton.compiler.compiler import CompiledKernel

    class Thing:
        pass

    thing = Thing()
    proxy = weakref.proxy(thing)
    del thing
    with pytest.raises(ReferenceError):
        isinstance(proxy, CompiledKernel)
    assert sanitizers._is_kernel(proxy, CompiledKernel) is False


def _registers(compiled: Any) -> tuple[int, int]:
    """(registers, stack bytes) of the cubin, from the wheel's cuobjdump (no GPU needed)."""
    from tests.realworld.sanitizer_costs import cost_of

    cost = cost_of(compiled.asm["cubin"])
    return cost.registers, cost.stack


def _bench_kernel(workload: int, block_n: int, passes: tuple[str, ...] = (), **options: Any) -> Any:
    return _compile(kernels.bench_kernel, kernels.bench_signature("fp16"),
                    {"WORKLOAD": workload, "BLOCK_M": 128, "BLOCK_N": block_n, "BLOCK_K": 64},
                    passes, {"num_stages": 3, "num_warps": 4}, **options)


@pytest.mark.parametrize("check", ["nan_inf_check", "offset_overflow_check"])
@pytest.mark.parametrize("workload,block_n", [(1, 128), (2, 64)], ids=["gemm", "attention"])
def test_default_costs_gemm_and_attention_no_registers(check, workload, block_n):
    # Issue 18: the default once printed one device line per site; the never-executed vprintf
    # call changed the whole kernel's register allocation (in-house GEMM 198 registers -> 209 and
    # a 16-byte stack frame with nan_inf_check, 192 -> 214 + 64 B with offset_overflow_check;
    # H200 0.875x). The default prints from the host: no vprintf, no stack frame, and at most 2%
    # more registers than without the check (ptxas of the wheel, sm_90a, as on the H200).
    off = _registers(_bench_kernel(workload, block_n))
    compiled = _bench_kernel(workload, block_n, (check,))
    assert "vprintf" not in compiled.asm["llir"] and "tt.print" not in compiled.asm["ttgir"]
    assert _record_atomics(compiled), "the records are not updated"
    regs, stack = _registers(compiled)
    assert stack == 0 and regs <= off[0] * 1.02, (regs, stack, off)


def test_default_puts_no_device_print_in_planted_bug_kernels():
    # Every planted bug still has its site (and records: atomics), and none prints on the device;
    # print=first is the opt-in immediate line.
    cases = [(kernels.ratio_kernel, kernels.RATIO_SIG, ("nan_inf_check",)),
             (kernels.window_sum_kernel, kernels.SUM_SIG, ("masked_load_poison", "nan_inf_check")),
             (kernels.row_copy_kernel, kernels.ROW_SIG, ("offset_overflow_check",))]
    for fn, sig, passes in cases:
        default = _compile(fn, sig, {"BLOCK": 1024}, passes)
        assert sanitizers.sites_of(default), fn
        assert "vprintf" not in default.asm["llir"] and _record_atomics(default), fn
        first = _compile(fn, sig, {"BLOCK": 1024}, passes, print="first")
        assert "vprintf" in first.asm["llir"], fn


def test_gemm_epilogue_records_without_a_branch():
    # Issue 18, GEMM epilogues: with `scf.if (count > 0)` before the return, LLVM no longer sank
    # the epilogue's index arithmetic below the K loop and held it across the loop (torchao's
    # int8 GEMM 125 -> 134 registers, over the 128 of two 256-thread CTAs per SM: H200 0.78x).
    # After a loop the records are updated by atomics masked with count > 0 instead: no branch,
    # the same updates. In-house fp16 GEMM with 8 warps (64 lanes per thread, the count path):
    # 116 registers off, 118 with the branch, 115 masked (ptxas of the wheel, sm_90a).
    def compiled(*passes: str) -> Any:
        return _compile(kernels.matmul_kernel, kernels.matmul_signature("fp16"),
                        {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "RELU": False}, passes,
                        {"num_stages": 3, "num_warps": 8})

    off = _registers(compiled())
    checked = compiled("nan_inf_check")
    ttgir = checked.asm["ttgir"]
    tail = ttgir[ttgir.rindex("scf.yield"):]  # after the K loop
    assert "scf.if" not in tail, tail
    masks = re.findall(r"tt\.atomic_rmw \w+, relaxed, gpu, %\S+, %\S+, (%\S+) :", tail)
    assert len(masks) == 3 and len(set(masks)) == 1 and masks[0] != "%true", masks
    assert len(re.findall(r"@%p\d+ red\.global", checked.asm["ptx"])) == 3
    regs, stack = _registers(checked)
    assert stack == 0 and regs <= off[0], (regs, off)


@pytest.mark.parametrize("block,warps", [(8192, 8), (4096, 4)])
def test_count_row_kernel_keeps_no_tile_live(block, warps):
    # Issue 18, memory-bound row kernels: the peak fast path (max of |y|, then a branch that
    # recounts from |y|) keeps the stored tile live across the cross-warp reduction (Liger's
    # RMS-norm forward 39 -> 47 registers; 8-warp CTAs per SM 6 -> 5). fast-path=count reduces
    # (count, first lane) in one two-operand reduction after the store: no branch there, nothing
    # of the tile live after it (the default, reload, is tested below).
    def compiled(*passes: str, **options: Any) -> Any:
        return _compile(kernels.rms_norm_kernel, kernels.RMS_SIG, {"BLOCK": block}, passes,
                        {"num_warps": warps}, **options)

    off = _registers(compiled())
    default = compiled("nan_inf_check", fast_path="count")
    ttgir = default.asm["ttgir"]
    assert re.search(r'"tt\.reduce"\(%\S+, %\S+\) <\{axis = 0 : i32\}>', ttgir), "no (count, first) reduction"
    regs, stack = _registers(default)
    assert stack == 0 and regs <= off[0] + 2, (regs, stack, off)
    assert regs <= _registers(compiled("nan_inf_check", fast_path="peak"))[0]


@pytest.mark.parametrize("block,warps", [(8192, 8), (4096, 4)])
def test_reload_fast_path_keeps_no_tile_live(block, warps):
    # fast-path=reload: the peak clean path (one max of |y|), and the reporting branch reloads the
    # stored lanes instead of recounting from |y|, so no tile is live across the reduction: the
    # registers of the count path, not the peak path's (RMS norm 39 / 47 on Liger's kernel).
    def compiled(*passes: str, **options: Any) -> Any:
        return _compile(kernels.rms_norm_kernel, kernels.RMS_SIG, {"BLOCK": block}, passes,
                        {"num_warps": warps}, **options)

    off = _registers(compiled())
    reload = compiled("nan_inf_check")  # the default
    ttgir = reload.asm["ttgir"]
    assert "arith.maximumf" in ttgir and not re.search(r'"tt\.reduce"\(%\S+, %\S+\) <', ttgir)
    body = ttgir[ttgir.index("scf.if"):]
    assert "isVolatile = true" in body, "the reporting branch reloads the stored lanes"
    assert ttgir.count("isVolatile = true") == 1
    regs, stack = _registers(reload)
    assert stack == 0 and regs <= off[0] + 2, (regs, stack, off)
    # Not above the peak path's (8192/8 warps: 64 against 68; 4096/4: 64 and 64, where the row's
    # store shares its branch with the rstd store, a flag group, and the peak path's masked
    # maximum no longer takes the bf16 pairs apart).
    assert regs <= _registers(compiled("nan_inf_check", fast_path="peak"))[0]
    assert _site("rms_y_store") in [s.location for s in sanitizers.sites_of(reload)]


@pytest.mark.parametrize("fast_path", ["count", "peak"])
def test_2d_masked_store_fast_paths(fast_path):
    # check_gpu's nan_2d_count / nan_2d_peak scenarios: the same 2-D masked store through both
    # fast paths (16 lanes per thread), one site with the tile's 2048 lanes.
    compiled = _compile(kernels.ratio_2d_kernel, kernels.RATIO_2D_SIG, {"BLOCK_R": 16, "BLOCK_C": 128},
                        ("nan_inf_check",), {"num_warps": 4},
                        fast_path=fast_path)
    ttgir = compiled.asm["ttgir"]
    two_operand = re.findall(r'"tt\.reduce"\(%\S+, %\S+\)', ttgir)
    assert (len(two_operand) == 2) == (fast_path == "count"), two_operand  # one per dimension
    assert ("arith.maximumf" in ttgir) == (fast_path == "peak")
    assert [(s.numel, s.location) for s in sanitizers.sites_of(compiled)] == [
        (16 * 128, _site("ratio_2d_store"))]
    assert _record_atomics(compiled) == 3


@pytest.mark.parametrize("fast_path", ["count", "reload", "peak"])
def test_store_in_loop_reports_after_the_loop(fast_path):
    # check_gpu's nan_loop_count / nan_loop_reload scenarios (issue 32): the row loop stores to
    # other addresses each iteration, so the check carries (count, first lane) per thread
    # through the loop (no reduction across threads, no uniform branch, no atomic in the body)
    # and reduces and updates the record once after it. Before, every iteration paid a
    # cross-warp reduction and a branch (Liger's RMS-norm backward 0.88x on the H200). In the
    # body, one tt.map_elementwise whose pack is the thread's 4 elements: a per-thread peak of
    # |x| and the only scf.if, per thread, that counts only in a thread with a non-finite one.
    ttgir = _compile(kernels.ratio_rows_kernel, kernels.RATIO_ROWS_SIG,
                     {"ROWS_PER_PROG": 8, "BLOCK": 512}, ("nan_inf_check",),
                     fast_path=fast_path).asm["ttgir"]
    body, after = _loop_body_and_after(ttgir)
    assert "tt.atomic_rmw" not in body and "ttg.barrier" not in body
    region = body[body.index('"tt.map_elementwise"'):body.index("tt.map_elementwise.return")]
    assert "<{pack = 4 : i32}>" in region and "arith.maximumf" in region
    assert body.count("scf.if") == 1 and "scf.if" in region
    assert "tt.atomic_rmw max" in after and '"tt.reduce"' in after
    reasons = re.search(r"triton_ext\.sanitizer_sites_reason = \[(.*?)\]", ttgir, re.S).group(1)
    assert "loop path: counts carried" in reasons, reasons


def _loop_body_and_after(ttgir: str) -> tuple[str, str]:
    lines = ttgir.splitlines()
    start = next(i for i, line in enumerate(lines) if "scf.for" in line)
    indent = lines[start][:len(lines[start]) - len(lines[start].lstrip())]
    end = next(i for i in range(start + 1, len(lines))
               if re.match(rf"{indent}\}}(?: |$)", lines[i]))
    return "\n".join(lines[start:end]), "\n".join(lines[end:])


def test_kernel_scan_raises_no_warnings():
    # The H200 run printed torch's FutureWarning for `torch.distributed.reduce_op` from report():
    # isinstance() on every object the GC holds reads `__class__` of deprecated shims.
    import ctypes
    import warnings

    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        pass
    else:
        pytest.skip("a CUDA driver is present; the scan then goes on to read modules")

    class Shim:
        @property
        def __class__(self):  # type: ignore[override]
            warnings.warn("shim is deprecated", FutureWarning)
            return Shim

    shim = Shim()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="needs the CUDA driver"):
            sanitizers._loaded_modules(None)
    assert shim is not None and not caught, [str(w.message) for w in caught]


def test_probes_share_one_explore_file(tmp_path):
    # The folder layout allows one exploration file (results/explore-<gpu>.json): each probe
    # writes its own key and keeps the other's.
    from passes.Sanitizers import check_gpu

    out = tmp_path / "explore-h200.json"
    check_gpu._write_probe(out, "probe_print", {"cases": {"gemm": 1}})
    check_gpu._write_probe(out, "probe_fast_path", {"kernels": {"rms": 2}})
    check_gpu._write_probe(out, "probe_print", {"cases": {"gemm": 3}})
    assert json.loads(out.read_text()) == {"probe_print": {"cases": {"gemm": 3}},
                                           "probe_fast_path": {"kernels": {"rms": 2}}}


def test_count_fast_path_only_for_tiles_that_die_at_their_store():
    # The stored sum is reduced after its store (live across the check): peak path (max of |s|).
    # The normalized row dies at its store: count path (one two-operand reduction).
    ttgir = _compile(kernels.add_then_norm_kernel, kernels.ADD_NORM_SIG, {"BLOCK": 2048},
                     ("nan_inf_check",), {"num_warps": 8}, fast_path="count").asm["ttgir"]
    stores = [i for i, line in enumerate(ttgir.splitlines()) if "tt.store" in line]
    assert len(stores) == 2
    lines = ttgir.splitlines()
    between, after = "\n".join(lines[stores[0]:stores[1]]), "\n".join(lines[stores[1]:])
    assert "arith.maximumf" in between and not re.search(r'"tt\.reduce"\(%\S+, %\S+\)', between)
    assert re.search(r'"tt\.reduce"\(%\S+, %\S+\)', after) and "arith.maximumf" not in after


def _sass_counts(compiled: Any) -> dict[str, int]:
    """Barriers, shared-memory accesses and global reductions/atomics in the cubin's SASS (the
    wheel's nvdisasm; no GPU needed)."""
    import subprocess
    import tempfile

    tool = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "nvdisasm"
    with tempfile.TemporaryDirectory() as tmp:
        cubin = Path(tmp) / "k.cubin"
        cubin.write_bytes(compiled.asm["cubin"])
        sass = subprocess.run([str(tool), str(cubin)], capture_output=True, text=True,
                              check=True).stdout
    ops = [line.split(";")[0].split()[1:] for line in sass.splitlines()
           if re.search(r"/\*[0-9a-f]{4,}\*/", line)]
    ops = [o[1] if o and o[0].startswith("@") and len(o) > 1 else (o[0] if o else "") for o in ops]
    assert ops, sass[:2000]
    return {"bar": sum(o.startswith("BAR.") for o in ops),
            "shared": sum(o.split(".")[0] in ("STS", "LDS") for o in ops),
            "atomics": sum(o.split(".")[0] in ("RED", "REDG", "ATOM", "ATOMG") for o in ops)}


@pytest.mark.parametrize("block,warps", [(8192, 8), (4096, 4), (2048, 8)])
def test_warp_fast_path_adds_no_barrier_or_shared_memory(block, warps):
    # Issue 18, "one vote per warp": the count path still pays one cross-warp step per stored
    # tile (shared memory and a barrier) on the clean path. fast-path=warp reduces inside each
    # warp and updates the record with masked tensor atomics: the SASS has the barriers and
    # shared-memory accesses of the kernel without the check. Registers stay within 2 of the
    # count path (ptxas, sm_90a: 8192/8 warps 63 off / 64 count / 66 warp; 4096/4 62/63/64;
    # 2048/8 28/31/31).
    def compiled(*passes: str, **options: Any) -> Any:
        return _compile(kernels.rms_norm_kernel, kernels.RMS_SIG, {"BLOCK": block}, passes,
                        {"num_warps": warps}, **options)

    # The count path named: the default (reload) checks this kernel's rstd and row stores as
    # one flag group now (8192/8 warps: 62 registers, 63 without the check).
    off, count, warp = (compiled(), compiled("nan_inf_check", fast_path="count"),
                        compiled("nan_inf_check", fast_path="warp"))
    s_off, s_count, s_warp = _sass_counts(off), _sass_counts(count), _sass_counts(warp)
    assert s_count["bar"] > s_off["bar"], (s_count, s_off)  # else the test is moot
    assert (s_warp["bar"], s_warp["shared"]) == (s_off["bar"], s_off["shared"]), (s_warp, s_off)
    assert s_warp["atomics"] >= 3, s_warp  # the records are still updated
    regs, stack = _registers(warp)
    assert stack == 0 and regs <= _registers(count)[0] + 2, (regs, _registers(count))
    sites = sanitizers.sites_of(warp)
    assert [(s.numel, s.unit) for s in sites if s.numel == block] == [(block, "warps")]


def test_warp_sites_decode_as_warp_groups():
    compiled = _compile(kernels.rms_norm_kernel, kernels.RMS_SIG, {"BLOCK": 4096},
                        ("nan_inf_check",), {"num_warps": 4}, fast_path="warp")
    sites = sanitizers.sites_of(compiled)
    (row,) = [s for s in sites if s.numel == 4096]
    counters = [0] * (3 * len(sites))
    index = sites.index(row)
    # Two warps of program 7 found 5 lanes, the first at lane 300.
    counters[3 * index:3 * index + 3] = [5, 2, sanitizers.INT64_MAX - (7 * 4096 + 300)]
    (record,) = sanitizers.decode(sites, counters)
    assert (record.lanes, record.programs, record.first_program, record.first_lane) == (5, 2, 7, 300)
    assert "lanes=5 warps=2 first index=" in record.line()
    with pytest.raises(ValueError, match="digits:warps"):
        sanitizers.parse_site_table("nan_inf_check|store non-finite|4096:lanes|k|f.py:1\n")


@pytest.mark.parametrize("passes", [(), ("nan_inf_check",), ("masked_load_poison",),
                                    ("offset_overflow_check",), ALL],
                         ids=["none", "nan_inf_check", "masked_load_poison",
                              "offset_overflow_check", "all"])
@pytest.mark.parametrize("kernel", ["range_fuse", "range_fuse_data"])
def test_tl_range_flatten_gives_one_loop(kernel, passes):
    # Triton's test_core.py::test_tl_range_fuse (issue 32): `tl.range(0, ub, flatten=True)`
    # around `tl.range(0, ub)` must compile to one scf.for in the TTGIR with each check on.
    # offset_overflow_check's check of `i * ub` in front of the inner loop (with its report)
    # kept Triton's copy of the nest for an empty inner loop alive: two scf.for.
    fn = getattr(kernels, f"{kernel}_kernel")
    sig = kernels.RANGE_FUSE_SIG if kernel == "range_fuse" else kernels.RANGE_FUSE_DATA_SIG
    compiled = _compile(fn, sig, {}, passes)
    assert "tt.flatten" in compiled.asm["ttir"]
    assert compiled.asm["ttgir"].count("scf.for") == 1, compiled.asm["ttgir"]
    # Each check is there (the test is not moot): sites of both checks, the poisoned load.
    ttgir = compiled.asm["ttgir"]
    if "offset_overflow_check" in passes:
        assert any(k == f"{kernel}_kernel" and what == "i32 offset overflow lanes"
                   for k, _, what in _reports(ttgir, "offset_overflow_check")), ttgir
    if "nan_inf_check" in passes and kernel == "range_fuse_data":
        assert ("range_fuse_data_kernel", _site("range_fuse_store"), "store non-finite") in \
            _reports(ttgir, "nan_inf_check")
    if "masked_load_poison" in passes and kernel == "range_fuse_data":
        assert "0x7FC00000" in compiled.asm["ttir"]


def _loop_attributes(ir: str) -> list[str]:
    """The tt.* attribute dictionaries of the scf.for loops in ``ir``, in order."""
    return re.findall(r"\} \{(tt\.[^}]*)\}", ir)


@pytest.mark.parametrize("warp_specialize", [False, True], ids=["plain", "warp_specialize"])
@pytest.mark.parametrize("passes", [("nan_inf_check",), ("masked_load_poison",),
                                    ("offset_overflow_check",), ALL],
                         ids=["nan_inf_check", "masked_load_poison", "offset_overflow_check",
                              "all"])
def test_user_loop_attributes_survive(passes, warp_specialize):
    # num_stages, disallow_acc_multi_buffer, loop_unroll_factor and warp_specialize written by
    # the user stay on their loop in the TTIR and the TTGIR with each check on (issue 32),
    # although offset_overflow_check rebuilds the loop with a carried value and nan_inf_check
    # checks a store in it.
    constexprs = {"BLOCK": 16, "WARP_SPECIALIZE": warp_specialize}
    plain = _compile(kernels.range_attrs_kernel, kernels.RANGE_ATTRS_SIG, constexprs)
    checked = _compile(kernels.range_attrs_kernel, kernels.RANGE_ATTRS_SIG, constexprs, passes)
    for stage in ("ttir", "ttgir"):
        expected = _loop_attributes(plain.asm[stage])
        assert expected and "tt.disallow_acc_multi_buffer" in expected[0], expected
        assert ("tt.warp_specialize" in expected[0]) == warp_specialize, expected
        assert _loop_attributes(checked.asm[stage]) == expected, stage
    for check in passes:
        if check != "masked_load_poison":
            assert _reports(checked.asm["ttgir"], check), check


def test_masked_gather_offset_check_counts_touched_rows_only():
    # Issue 26 item 2 through the JIT: with masked_load_poison the masked-off indices are
    # INT_MIN; the offset check of `idx[:, None] * D` must AND its wrapped rows with the rows
    # the gather touches (`m[:, None]`), or every masked-off row reported an overflow.
    sig = {"w_ptr": "*fp32", "ids_ptr": "*i32", "out_ptr": "*fp32", "n": "i32",
           "D": "constexpr", "BLOCK": "constexpr"}
    ttir = _compile(kernels.gather_rows_kernel, sig, {"D": 128, "BLOCK": 64},
                    ("masked_load_poison", "offset_overflow_check")).asm["ttir"]
    assert ("gather_rows_kernel", _site("gather_offset"), "i32 offset overflow lanes") in \
        _reports(ttir, "offset_overflow_check")
    wrapped = re.search(r"(%\S+) = arith\.cmpi ne, %\S+, %\S+ : tensor<64x1xi64>", ttir)
    assert wrapped, ttir
    assert re.search(rf"arith\.andi {re.escape(wrapped.group(1))}, %\S+ : tensor<64x1xi1>", ttir), ttir


def test_unrolled_stores_of_one_line_reduce_once():
    # check_gpu's nan_unrolled_site_run scenario (issue 32): tl.static_range unrolls 8 stores of
    # one line (one element per thread, as Liger's MoE gather). Each store on its own paid a
    # two-operand reduction with a cross-warp step; as one site run they add their lanes up and
    # reduce once, into one record.
    compiled = _compile(kernels.ratio_unrolled_kernel, kernels.RATIO_UNROLLED_SIG,
                        {"BLOCK": 128, "UNROLL": 8}, ("nan_inf_check",), {"num_warps": 4})
    ttgir = compiled.asm["ttgir"]
    assert ttgir.count("tt.store") == 8, ttgir
    two_operand = re.findall(r'"tt\.reduce"\(%\S+, %\S+\)', ttgir)
    assert len(two_operand) == 1, two_operand
    assert [(s.numel, s.location) for s in sanitizers.sites_of(compiled)] == [
        (128, _site("ratio_unrolled_store"))]
    assert _record_atomics(compiled) == 3
    reasons = re.search(r"triton_ext\.sanitizer_sites_reason = \[(.*?)\]", ttgir, re.S).group(1)
    assert "one reduction for 8 stores of this line" in reasons, reasons


def test_row_stores_share_one_flag():
    # check_gpu's nan_flag_group scenario (issue 32): a layer-norm row kernel stores the row's
    # mean and rstd (scalars) and then the normalized row (1024 lanes, 4 per thread). Each on
    # its own paid a branch (the scalars) or the reload path's branch, and a record branch at
    # the end. As a flag group: the row's one maximum (its only reduction on the clean path),
    # the two scalar tests, one branch (the reload and the row's count and first lane in it),
    # and one records branch, with each site's own record.
    compiled = _compile(kernels.layer_norm_rows_kernel, kernels.LN_ROWS_SIG, {"BLOCK": 1024},
                        ("nan_inf_check",), {"num_warps": 8})
    ttgir = compiled.asm["ttgir"]
    body = ttgir[ttgir.index("tt.func"):]
    clean, branch = body.split("scf.if", 1)
    # The kernel's two sums and the check's one test: each thread's flag (the maximum of its 4
    # elements, tested) and their maximum; the count and first lane on the branch.
    assert clean.count('"tt.reduce"') == 3, clean
    assert clean.count('"tt.map_elementwise"') == 1 and "<{pack = 4 : i32}>" in clean, clean
    assert clean.count("arith.maximumf") == 3 and clean.count("arith.maxui") == 1, clean
    assert re.search(r"scf\.if %\S+ -> \(i32, i32, i32, i32, i32, i32\)", body), body
    assert "isVolatile = true" in branch.split("} else {")[0], branch
    assert body.count("scf.if") == 5, body  # the branch, the records' and one per site in it
    assert [(s.numel, s.location) for s in sanitizers.sites_of(compiled)] == [
        (1, _site("ln_mean_store")), (1, _site("ln_rstd_store")), (1024, _site("ln_y_store"))]
    assert _record_atomics(compiled) == 9
    reasons = re.search(r"triton_ext\.sanitizer_sites_reason = \[(.*?)\]", ttgir, re.S).group(1)
    assert reasons.count("flag path: one branch for 3 stores of this block") == 3, reasons
    # The count fast path keeps a check per store.
    count = _compile(kernels.layer_norm_rows_kernel, kernels.LN_ROWS_SIG, {"BLOCK": 1024},
                     ("nan_inf_check",), {"num_warps": 8}, fast_path="count").asm["ttgir"]
    assert "flag path" not in count and count.count("{triton_ext.sanitizer_records}") == 3


def test_any_lane_test_is_one_barrier_vote():
    # barrier_vote (brought by nan_inf_check): the flag group's test, a reduction across the 8
    # warps (a barrier in front of it, a shared-memory round trip and a barrier inside), is one
    # `barrier.red.or.pred` in the PTX; with cta-vote=false the maximum of |value| is reduced
    # as before. The planted-bug GPU scenarios (check_gpu nan_flag_group, nan_loop_*) check that
    # the vote's finding path reports exact lanes.
    def ptx(**options: Any) -> str:
        return _compile(kernels.layer_norm_rows_kernel, kernels.LN_ROWS_SIG, {"BLOCK": 1024},
                        ("nan_inf_check",), {"num_warps": 8}, **options).asm["ptx"]

    voted, reduced = ptx(), ptx(**{"cta-vote": False})
    assert voted.count("barrier.red.or.pred") == 1 and "barrier.red" not in reduced
    assert reduced.count("bar.sync") - voted.count("bar.sync") == 2, (
        reduced.count("bar.sync"), voted.count("bar.sync"))


def test_store_in_loop_carries_one_value_per_thread():
    # A row of 2048 floats in runs of 4 per thread, 4 repetitions of the 4-warp layout: the
    # per-thread map's pack is all 16 elements of a thread, its (count, first) results are
    # viewed as [4, 128, 4], both in-thread axes reduced in the loop, so the loop carries (count,
    # first lane) as two tensors of 128 values, one per thread (check_gpu's nan_loop_wide
    # scenario).
    ttgir = _compile(kernels.ratio_rows_kernel, kernels.RATIO_ROWS_SIG,
                     {"ROWS_PER_PROG": 8, "BLOCK": 2048}, ("nan_inf_check",)).asm["ttgir"]
    assert '"tt.map_elementwise"' in ttgir and "<{pack = 16 : i32}>" in ttgir, ttgir
    assert "tt.reshape %" in ttgir and "-> tensor<4x128x4xi32" in ttgir, ttgir
    carried = re.findall(r"scf\.for .*-> \(([^)]*)\)", ttgir)
    assert len(carried) == 1 and carried[0].count("tensor<128xi32") == 2, carried


TID_READ_ASM = 'asm sideeffect "mov.u32 $0, %tid.x;"'


def _small_matmul(passes: tuple[str, ...] = (), **pass_options: Any) -> Any:
    return _compile(kernels.matmul_kernel, kernels.matmul_signature("fp16"),
                    {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "RELU": False}, passes,
                    {"num_stages": 3, "num_warps": 4}, **pass_options)


def test_thread_ids_after_loops_recomputes_the_gemm_epilogues_indices():
    # The GEMM's store offsets and mask (after the K loop) come from the thread id; with the
    # pass they are recomputed after the loop from one unmergeable read instead of being kept
    # live across it (lit: thread-ids-after-loops.mlir). Alone and under nan_inf_check, whose
    # epilogue check indexes lanes the same way; both reach cubin.
    stock = _small_matmul()
    assert TID_READ_ASM not in stock.asm["llir"]
    # min-freed=0: this tile frees only 10 registers (below the default 16, see the next asserts).
    for passes in (("thread_ids_after_loops",), ("nan_inf_check", "thread_ids_after_loops")):
        compiled = _small_matmul(passes, min_freed=0)
        assert compiled.asm["llir"].count(TID_READ_ASM) == 1, passes
        assert compiled.asm["llir"].count("@llvm.nvvm.read.ptx.sreg.tid.x()") >= 1
    # Declined, and the module is the stock one: too few registers freed (the default min-freed),
    # a loop state above max-loop-state (by option; by default for the 128x128 tile, whose
    # accumulators are 259 registers of loop state).
    assert _small_matmul(("thread_ids_after_loops",)).asm["ptx"] == stock.asm["ptx"]
    assert _small_matmul(("thread_ids_after_loops",), max_loop_state=0, min_freed=0).asm["ptx"] == stock.asm["ptx"]
    assert _matmul(("thread_ids_after_loops",), min_freed=0).asm["ptx"] == _matmul().asm["ptx"]


def test_thread_ids_after_loops_leaves_loop_free_kernels_alone():
    signature = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "alpha": "fp32"}
    stock = _compile(kernels.scale_kernel, signature, {"BLOCK": 1024})
    with_pass = _compile(kernels.scale_kernel, signature, {"BLOCK": 1024}, ("thread_ids_after_loops",))
    assert with_pass.asm["ptx"] == stock.asm["ptx"]
