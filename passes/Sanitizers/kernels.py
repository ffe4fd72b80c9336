"""Kernels shared by test_sanitizers.py (CPU, through cubin) and check_gpu.py (H200).

Lines that a sanitizer must name are tagged with a ``# SITE: <name>`` comment; ``site_line``
finds them, so tests never hard-code line numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import triton
import triton.language as tl

SOURCE = Path(__file__).resolve()


def site_line(name: str) -> int:
    """Line number (1-based) of the line tagged ``# SITE: name`` in this file."""
    for number, line in enumerate(SOURCE.read_text().splitlines(), start=1):
        if line.rstrip().endswith(f"# SITE: {name}"):
            return number
    raise KeyError(f"no line tagged '# SITE: {name}' in {SOURCE}")


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    """Correct memory-bound kernel: y = alpha * x (masked tail, no `other`)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * alpha, mask=mask)  # SITE: scale_store


@triton.jit
def ratio_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Planted bug for nan_inf_check: out = x / y, and y holds zeros where x does (0/0)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = tl.load(y_ptr + offs, mask=mask, other=1.0)
    tl.store(out_ptr + offs, x / y, mask=mask)  # SITE: ratio_store


@triton.jit
def ratio_pair_kernel(x_ptr, y_ptr, sum_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Two stores of one tile type (issue 18: one shared fast path): a clean sum, then the
    planted 0/0 of ratio_kernel. Only the second site may report."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = tl.load(y_ptr + offs, mask=mask, other=1.0)
    tl.store(sum_ptr + offs, x + y, mask=mask)  # SITE: pair_sum_store
    tl.store(out_ptr + offs, x / y, mask=mask)  # SITE: pair_ratio_store


@triton.jit
def window_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Planted bug for masked_load_poison: sums the whole block, masked lanes included.

    Correct only while masked lanes happen to read as zero; with the poison they are NaN,
    and nan_inf_check reports the store.
    """
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + tl.program_id(0), tl.sum(x, axis=0))  # SITE: window_store


@triton.jit
def masked_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Correct counterpart: masked lanes are excluded with tl.where."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + tl.program_id(0), tl.sum(tl.where(mask, x, 0.0), axis=0))


@triton.jit
def row_copy_kernel(x_ptr, out_ptr, stride, ncols, BLOCK: tl.constexpr):
    """Planted bug for offset_overflow_check when rows * stride passes 2**31 (i32 math)."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < ncols
    offs = row * stride + cols  # SITE: row_offset
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + row * ncols + cols, x, mask=mask)


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, stride, out_stride, ncols, K, BLOCK: tl.constexpr):
    """row_copy_kernel around a loop (issue 32): the loaded row's offset, computed before the
    loop, and the stored row's, computed after it, wrap when rows * stride passes 2**31.
    offset_overflow_check reports both in front of the loop."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < ncols
    offs = row * stride + cols  # SITE: loop_load_offset
    acc = tl.zeros([BLOCK], dtype=tl.int8)
    for _ in range(K):
        acc += tl.load(x_ptr + offs, mask=mask)
    out_offs = row * out_stride + cols  # SITE: loop_store_offset
    tl.store(out_ptr + out_offs, acc, mask=mask)


@triton.jit
def log_affine_kernel(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    """What torch.compile (Inductor) generates for ``torch.log(x) * 2 + 1`` (issue 18): NaN
    where x < 0. One 4096-element run under nan_inf_check printed 61-69k lines before."""
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    tmp0 = tl.load(in_ptr0 + xindex, xmask)
    tmp1 = tl.log(tmp0)
    tmp2 = tmp1 * 2.0
    tmp3 = tmp2 + 1.0
    tl.store(out_ptr0 + xindex, tmp3, xmask)  # SITE: log_affine_store


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_bk, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  RELU: tl.constexpr = False):
    """Pipelined GEMM loop (num_stages=3 on sm_90 gives async copies); row-major, K % BLOCK_K == 0.

    RELU adds a ReLU epilogue, which can turn a -Inf dot result into 0 (nan_inf_check then
    keeps its dot check)."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_m[:, None] < M)
        b = tl.load(b_ptrs, mask=offs_n[None, :] < N)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    if RELU:
        acc = tl.maximum(acc, 0.0)
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask)  # SITE: matmul_store


@triton.jit
def attention_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, sm_scale, stride_h, stride_n, seq,
                         HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Non-causal attention forward (online softmax); one (row block, head) per program.

    q, k, v, o are (heads, seq, HEAD_DIM) with unit stride in the last dimension; seq is a
    multiple of BLOCK_M and BLOCK_N (no masks)."""
    start_m = tl.program_id(0) * BLOCK_M
    head = tl.program_id(1).to(tl.int64) * stride_h
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + head + offs_m[:, None] * stride_n + offs_d[None, :])
    k_ptrs = k_ptr + head + offs_n[None, :] * stride_n + offs_d[:, None]
    v_ptrs = v_ptr + head + offs_n[:, None] * stride_n + offs_d[None, :]
    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)
    qk_scale = sm_scale * 1.4426950408889634  # exp(x) = exp2(x * log2(e))
    for start_n in range(0, seq, BLOCK_N):
        k = tl.load(k_ptrs + start_n * stride_n)
        qk = tl.dot(q, k) * qk_scale
        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptrs + start_n * stride_n)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + head + offs_m[:, None] * stride_n + offs_d[None, :], out.to(o_ptr.dtype.element_ty))


VECTOR, GEMM, ATTENTION = 0, 1, 2  # bench_kernel's WORKLOAD


@triton.jit
def bench_kernel(x_ptr, y_ptr, z_ptr, out_ptr, M, N, K, stride_0, stride_1, scale,
                 WORKLOAD: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 BLOCK_K: tl.constexpr):
    """The three workloads of bench.py behind one signature (a bench spec has one per dtype).

    WORKLOAD 0: out = scale * x over M elements (memory-bound; BLOCK_M per program).
    WORKLOAD 1: out = x @ y, (M, K) @ (K, N), row-major, strides stride_0 = K, stride_1 = N.
    WORKLOAD 2: attention forward, q/k/v = x/y/z, M = seq, stride_0 = head stride,
    stride_1 = row stride, BLOCK_K = head dim. The constexpr branch compiles to the kernel alone.
    """
    if WORKLOAD == 0:
        scale_kernel(x_ptr, out_ptr, M, scale, BLOCK_M)
    elif WORKLOAD == 1:
        matmul_kernel(x_ptr, y_ptr, out_ptr, M, N, K, stride_0, stride_1, stride_1,
                      BLOCK_M, BLOCK_N, BLOCK_K)
    else:
        attention_fwd_kernel(x_ptr, y_ptr, z_ptr, out_ptr, scale, stride_0, stride_1, M,
                             BLOCK_K, BLOCK_M, BLOCK_N)


def bench_signature(dtype: str = "fp16") -> dict[str, str]:
    sig = {name: f"*{dtype}" for name in ("x_ptr", "y_ptr", "z_ptr", "out_ptr")}
    sig.update({name: "i32" for name in ("M", "N", "K", "stride_0", "stride_1")})
    sig["scale"] = "fp32"
    return sig


VECTOR_SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "alpha": "fp32"}
RATIO_SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
SUM_SIG = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
LOG_SIG = {"in_ptr0": "*fp32", "out_ptr0": "*fp32", "xnumel": "i32"}
ROW_SIG = {"x_ptr": "*fp32", "out_ptr": "*fp32", "stride": "i32", "ncols": "i32"}


def matmul_signature(dtype: str = "fp16") -> dict[str, str]:
    sig = {"a_ptr": f"*{dtype}", "b_ptr": f"*{dtype}", "c_ptr": f"*{dtype}"}
    sig.update({name: "i32" for name in ("M", "N", "K", "stride_am", "stride_bk", "stride_cm")})
    return sig


def divisible(signature: dict[str, str]) -> dict[tuple[int, ...], list[list[Any]]]:
    """ASTSource attrs marking every argument 16-divisible, as a launch with aligned tensors
    and multiple-of-16 sizes would specialize them (needed for vectorized async copies)."""
    return {(i,): [["tt.divisibility", 16]] for i, name in enumerate(signature)
            if signature[name].startswith("*") or signature[name] == "i32"}


@triton.jit
def ratio_2d_kernel(x_ptr, y_ptr, out_ptr, rows, cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """ratio_kernel on a (rows, cols) matrix, one BLOCK_R x BLOCK_C tile per program (cols <=
    BLOCK_C): a 2-D store under a row and column mask, for the records' first index (row-major
    lane of the tile) through both nan_inf_check fast paths."""
    r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    c = tl.arange(0, BLOCK_C)[None, :]
    mask = (r < rows) & (c < cols)
    x = tl.load(x_ptr + r * cols + c, mask=mask, other=1.0)
    y = tl.load(y_ptr + r * cols + c, mask=mask, other=1.0)
    tl.store(out_ptr + r * cols + c, x / y, mask=mask)  # SITE: ratio_2d_store


@triton.jit
def ratio_rows_kernel(x_ptr, y_ptr, out_ptr, rows, cols, ROWS_PER_PROG: tl.constexpr,
                      BLOCK: tl.constexpr):
    """ratio_kernel row by row in a loop (ROWS_PER_PROG rows per program, cols <= BLOCK): a store
    inside an scf.for, whose records nan_inf_check updates in the loop body."""
    c = tl.arange(0, BLOCK)
    for i in range(ROWS_PER_PROG):
        r = tl.program_id(0) * ROWS_PER_PROG + i
        mask = (c < cols) & (r < rows)
        x = tl.load(x_ptr + r * cols + c, mask=mask, other=1.0)
        y = tl.load(y_ptr + r * cols + c, mask=mask, other=1.0)
        tl.store(out_ptr + r * cols + c, x / y, mask=mask)  # SITE: ratio_rows_store


@triton.jit
def ratio_unrolled_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, UNROLL: tl.constexpr):
    """ratio_kernel over UNROLL blocks per program in a `tl.static_range` loop: UNROLL stores of
    one source line in the entry block (one element per thread with BLOCK = 128 and 4 warps, as
    Liger's MoE gather), which nan_inf_check reduces once, as one site run (issue 32)."""
    for i in tl.static_range(UNROLL):
        offs = (tl.program_id(0) * UNROLL + i) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=1.0)
        y = tl.load(y_ptr + offs, mask=mask, other=1.0)
        tl.store(out_ptr + offs, x / y, mask=mask)  # SITE: ratio_unrolled_store


RATIO_UNROLLED_SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32",
                      "BLOCK": "constexpr", "UNROLL": "constexpr"}


@triton.jit
def ratio_rows_nan_tail_kernel(x_ptr, y_ptr, out_ptr, rows, cols, ROWS_PER_PROG: tl.constexpr,
                               BLOCK: tl.constexpr):
    """ratio_rows_kernel with masked loads that read 0: the masked-off lanes of every row hold
    0/0 = NaN and are never stored. nan_inf_check's loop path tests a thread's peak without the
    mask, so the threads holding them take the per-thread branch in every iteration and must
    count nothing there (issue 32)."""
    c = tl.arange(0, BLOCK)
    for i in range(ROWS_PER_PROG):
        r = tl.program_id(0) * ROWS_PER_PROG + i
        mask = (c < cols) & (r < rows)
        x = tl.load(x_ptr + r * cols + c, mask=mask, other=0.0)
        y = tl.load(y_ptr + r * cols + c, mask=mask, other=0.0)
        tl.store(out_ptr + r * cols + c, x / y, mask=mask)  # SITE: ratio_rows_nan_tail_store


@triton.jit
def rms_norm_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, stride, n_cols, eps, BLOCK: tl.constexpr):
    """Correct row kernel shaped like Liger's RMS-norm forward (one bf16 row per program): the
    register cost of nan_inf_check's fast path on a memory-bound row kernel (issue 18)."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(rstd_ptr + row, rstd)  # SITE: rms_rstd_store
    tl.store(y_ptr + row * stride + cols, (x * rstd * w).to(tl.bfloat16), mask=mask)  # SITE: rms_y_store


@triton.jit
def layer_norm_rows_kernel(x_ptr, y_ptr, mean_ptr, rstd_ptr, n_cols, eps, BLOCK: tl.constexpr):
    """Row kernel shaped like Liger's layer-norm forward: the row's mean and rstd (scalar stores)
    and then the normalized row. nan_inf_check checks the three stores with one flag and one
    branch (flag group, issue 32). With eps = 0 a constant row has rstd = 1/0 = Inf and its
    normalized lanes 0 * Inf = NaN (the masked-off ones too, which are never stored)."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    xc = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, axis=0) / n_cols + eps)
    tl.store(mean_ptr + row, mean)  # SITE: ln_mean_store
    tl.store(rstd_ptr + row, rstd)  # SITE: ln_rstd_store
    tl.store(y_ptr + row * n_cols + cols, (xc * rstd).to(tl.float16), mask=mask)  # SITE: ln_y_store


LN_ROWS_SIG = {"x_ptr": "*fp32", "y_ptr": "*fp16", "mean_ptr": "*fp32", "rstd_ptr": "*fp32",
               "n_cols": "i32", "eps": "fp32", "BLOCK": "constexpr"}


RATIO_2D_SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "rows": "i32", "cols": "i32",
                "BLOCK_R": "constexpr", "BLOCK_C": "constexpr"}
RATIO_ROWS_SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "rows": "i32",
                  "cols": "i32", "ROWS_PER_PROG": "constexpr", "BLOCK": "constexpr"}
@triton.jit
def add_then_norm_kernel(x_ptr, r_ptr, s_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    """Liger's fused add + RMS-norm shape: s = x + r is stored and then used (its mean square),
    y = s * rstd is stored last. nan_inf_check's count fast path is for tiles that die at their
    store (y), the peak path for tiles used after it (s)."""
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    base = tl.program_id(0) * n_cols
    s = tl.load(x_ptr + base + cols, mask=mask, other=0.0) + tl.load(r_ptr + base + cols, mask=mask,
                                                                      other=0.0)
    tl.store(s_ptr + base + cols, s, mask=mask)  # SITE: add_store
    rstd = 1.0 / tl.sqrt(tl.sum(s * s, axis=0) / n_cols + 1e-6)
    tl.store(y_ptr + base + cols, s * rstd, mask=mask)  # SITE: norm_store


ADD_NORM_SIG = {"x_ptr": "*fp32", "r_ptr": "*fp32", "s_ptr": "*fp32", "y_ptr": "*fp32",
                "n_cols": "i32", "BLOCK": "constexpr"}
RMS_SIG = {"x_ptr": "*bf16", "w_ptr": "*bf16", "y_ptr": "*bf16", "rstd_ptr": "*fp32", "stride": "i32",
           "n_cols": "i32", "eps": "fp32", "BLOCK": "constexpr"}


@triton.jit
def range_fuse_kernel(ub, out_ptr):
    """Triton's test_core.py::test_tl_range_fuse: a nest the user asks to flatten; its TTGIR
    must hold one scf.for."""
    for i in tl.range(0, ub, flatten=True):
        for j in tl.range(0, ub):
            tl.store(out_ptr + i * ub + j, (i * ub + j).to(tl.float32))


@triton.jit
def range_fuse_data_kernel(ub, x_ptr, out_ptr):
    """The same nest with a masked float load and store, for nan_inf_check and
    masked_load_poison."""
    for i in tl.range(0, ub, flatten=True):
        for j in tl.range(0, ub):
            x = tl.load(x_ptr + i * ub + j, mask=j < ub - 1)
            tl.store(out_ptr + i * ub + j, x * 2.0)  # SITE: range_fuse_store


@triton.jit
def range_attrs_kernel(x_ptr, idx_ptr, out_ptr, n, stride, BLOCK: tl.constexpr,
                       WARP_SPECIALIZE: tl.constexpr):
    """A loop with the user's tl.range attributes; the offset of each iteration reads a loaded
    row index (checked lane by lane, carried by the loop), its store of a loaded sum is
    checked by nan_inf_check and the masked load poisoned."""
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for i in tl.range(0, n, num_stages=2, disallow_acc_multi_buffer=True, loop_unroll_factor=1,
                      warp_specialize=WARP_SPECIALIZE):
        j = tl.load(idx_ptr + i)
        acc += tl.load(x_ptr + j * stride + cols, mask=cols < n)  # SITE: range_attrs_offset
        tl.store(out_ptr + i * BLOCK + cols, acc)


RANGE_FUSE_SIG = {"ub": "i32", "out_ptr": "*fp32"}
RANGE_FUSE_DATA_SIG = {"ub": "i32", "x_ptr": "*fp32", "out_ptr": "*fp32"}
RANGE_ATTRS_SIG = {"x_ptr": "*fp32", "idx_ptr": "*i32", "out_ptr": "*fp32", "n": "i32",
                   "stride": "i32", "BLOCK": "constexpr", "WARP_SPECIALIZE": "constexpr"}


@triton.jit
def gather_rows_kernel(w_ptr, ids_ptr, out_ptr, n, D: tl.constexpr, BLOCK: tl.constexpr):
    """An embedding lookup (issue 26 item 2): row indices loaded under a mask without `other`,
    then the rows gathered and stored under the same mask. Correct; with masked_load_poison the
    masked-off indices are INT_MIN, and offset_overflow_check must not count their rows."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    idx = tl.load(ids_ptr + offs, mask=m)
    cols = tl.arange(0, D)
    rows = tl.load(w_ptr + idx[:, None] * D + cols[None, :], mask=m[:, None])  # SITE: gather_offset
    tl.store(out_ptr + offs[:, None] * D + cols[None, :], rows, mask=m[:, None])
