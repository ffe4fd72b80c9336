"""The real-world corpus: ``@triton.jit`` kernels of pinned PyPI packages (issue 16).

No kernel code lives here: every function is imported from an installed package (the
``realworld`` extra in pyproject.toml: liger-kernel, fla-core, torchao). This module only
describes how each kernel is launched, the way the package's own Python launcher does it:

* ``build(t)`` returns a :class:`Launch`: every parameter by name (tensors, scalars and
  constexprs, ``None`` where the launcher passes ``None``), the grid, ``num_warps`` and
  ``num_stages``. ``t`` makes tensors on one device: ``meta`` for the CPU test (shapes and
  dtypes only, no memory), ``cuda`` for ``check_gpu.py``.
* :func:`compile_args` turns a Launch into what ``triton.compile`` takes on a CPU-only
  machine: the signature (``*fp16``, ``i32``, ``constexpr``...), the constexprs and the
  specialization attributes, derived as Triton's JIT derives them at a launch (an int equal
  to 1 becomes a constexpr, 16-divisible ints and tensor pointers get ``tt.divisibility``).
* ``reference`` (optional) computes some outputs with torch, for the GPU check.

Sizes are the ones a real model uses at a small batch (hidden 4096, vocab 32000, head dim
128...), so the constexprs (block sizes, warps) are the ones the launchers pick for them.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

os.environ.setdefault("GEMS_VENDOR", "nvidia")
warnings.filterwarnings("ignore", module=r"fla\..*")
warnings.filterwarnings("ignore", message=r".*Triton is not supported on current platform.*")

import torch  # noqa: E402
import triton  # noqa: E402
from triton.runtime import JITFunction  # noqa: E402

__all__ = ["Launch", "RealKernel", "REALWORLD", "BY_NAME", "compile_args", "unwrap", "Tensors"]


def unwrap(obj: Any) -> JITFunction:
    """The JITFunction under ``@triton.autotune`` / ``@triton.heuristics`` / ``libentry``."""
    fn = obj
    while not isinstance(fn, JITFunction):
        inner = getattr(fn, "fn", None)
        if inner is None:
            raise TypeError(f"{obj!r} is not a @triton.jit function (nor a wrapper of one)")
        fn = inner
    return fn


class Tensors:
    """Tensor factory for one device (``meta``: no memory, shapes and dtypes only)."""

    def __init__(self, device: str, seed: int = 0) -> None:
        self.device = device
        self.gen = None
        if device != "meta":
            self.gen = torch.Generator(device=device)
            self.gen.manual_seed(seed)

    def randn(self, *shape: int, dtype: torch.dtype = torch.float16, scale: float = 1.0) -> torch.Tensor:
        x = torch.randn(*shape, device=self.device, dtype=torch.float32, generator=self.gen)
        return (x * scale).to(dtype)

    def rand(self, *shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        return torch.rand(*shape, device=self.device, dtype=torch.float32, generator=self.gen).to(dtype)

    def randint(self, low: int, high: int, *shape: int, dtype: torch.dtype = torch.int64) -> torch.Tensor:
        return torch.randint(low, high, shape, device=self.device, dtype=dtype, generator=self.gen)

    def zeros(self, *shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        return torch.zeros(*shape, device=self.device, dtype=dtype)

    def full(self, shape: tuple[int, ...], value: float, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        return torch.full(shape, value, device=self.device, dtype=dtype)

    def arange(self, start: int, end: int, step: int = 1, dtype: torch.dtype = torch.int32) -> torch.Tensor:
        return torch.arange(start, end, step, device=self.device, dtype=dtype)

    def log_softmax(self, *shape: int) -> torch.Tensor:
        x = self.randn(*shape, dtype=torch.float32)
        return x if self.device == "meta" else torch.log_softmax(x, dim=-1)


@dataclass
class Launch:
    """One launch: every parameter by name, the grid and the launch options."""

    args: dict[str, Any]
    grid: tuple[int, ...]
    num_warps: int = 4
    num_stages: int = 3
    #: outputs -> torch reference (computed from the inputs before the launch), for the GPU.
    reference: Callable[[dict[str, Any]], dict[str, torch.Tensor]] | None = None
    atol: float = 1e-2
    rtol: float = 1e-2


@dataclass(frozen=True)
class RealKernel:
    """A third-party kernel: where it comes from and how its launcher calls it."""

    name: str
    package: str            # PyPI distribution name
    module: str             # module holding the kernel
    attr: str               # attribute name in that module (possibly an autotune/heuristics wrapper)
    kind: str               # attention, gemm, norm, softmax, cross_entropy, rotary, moe, embedding, ...
    build: Callable[[Tensors], Launch]
    #: atomics or split reductions: outputs may differ in the last bits between runs.
    nondeterministic: bool = False
    tags: tuple[str, ...] = field(default_factory=tuple)

    def fn(self) -> JITFunction:
        import importlib

        if self.package == "sglang":
            # without sglang's serving stack if need be (sglang_modules.py)
            from tests.realworld.sglang_modules import import_kernel_module

            module = import_kernel_module(self.module.rsplit(".", 1)[1])
        elif self.package == "vllm":
            # from the pinned wheel's files, without vllm's package __init__ (vllm_modules.py)
            from tests.realworld.vllm_modules import import_kernel_module as import_vllm

            module = import_vllm(self.module.rsplit(".", 1)[1])
        else:
            module = importlib.import_module(self.module)
        return unwrap(getattr(module, self.attr))


_TT_DTYPE = {
    torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32", torch.float64: "fp64",
    torch.int8: "i8", torch.int16: "i16", torch.int32: "i32", torch.int64: "i64",
    torch.uint8: "u8", torch.bool: "i1", torch.float8_e4m3fn: "fp8e4nv", torch.float8_e5m2: "fp8e5",
}


def _bind(fn: JITFunction, launch: Launch) -> dict[str, Any]:
    names = [p.name for p in fn.params]
    unknown = sorted(set(launch.args) - set(names))
    if unknown:
        raise TypeError(f"{fn.__name__}: no parameters {unknown}; it has {names}")
    out: dict[str, Any] = {}
    for p in fn.params:
        if p.name in launch.args:
            out[p.name] = launch.args[p.name]
        elif p.has_default:
            out[p.name] = p.default
        else:
            raise TypeError(f"{fn.__name__}: the launch gives no value for parameter {p.name!r}")
    return out


def compile_args(fn: JITFunction, launch: Launch) -> tuple[dict[str, str], dict[Any, Any], dict[Any, Any]]:
    """(signature, constexprs, attrs) for ``ASTSource``, as the JIT derives them at a launch."""
    bound = _bind(fn, launch)
    signature: dict[str, str] = {}
    constexprs: dict[Any, Any] = {}
    attrs: dict[Any, Any] = {}
    for i, p in enumerate(fn.params):
        value = bound[p.name]
        if p.is_constexpr or value is None:
            signature[p.name] = "constexpr"
            constexprs[(i,)] = value
            continue
        if isinstance(value, torch.Tensor):
            signature[p.name] = "*" + _TT_DTYPE[value.dtype]
            # torch's caching allocator aligns every block to >= 256 bytes.
            attrs[(i,)] = [["tt.divisibility", 16]]
        elif isinstance(value, bool):
            signature[p.name] = "i1"
        elif isinstance(value, int):
            if value == 1 and not p.do_not_specialize:
                signature[p.name] = "constexpr"
                constexprs[(i,)] = 1
                continue
            signature[p.name] = "i32" if -2**31 <= value < 2**31 else "i64"
            if value % 16 == 0 and not p.do_not_specialize and not p.do_not_specialize_on_alignment:
                attrs[(i,)] = [["tt.divisibility", 16]]
        elif isinstance(value, float):
            signature[p.name] = "fp32"
        else:
            raise TypeError(f"{fn.__name__}.{p.name}: cannot derive a Triton type from {type(value).__name__}")
    return signature, constexprs, attrs


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _np2(n: int) -> int:
    return triton.next_power_of_2(n)


def _liger_settings(n: int) -> tuple[int, int]:
    """liger_kernel.ops.utils.calculate_settings, for an NVIDIA GPU."""
    block = _np2(n)
    warps = 32 if block >= 32768 else 16 if block >= 8192 else 8 if block >= 2048 else 4
    return block, warps


SM_COUNT = 132  # H200: the launchers size persistent grids by it
ROWS, HIDDEN, VOCAB = 2048, 4096, 32000


# --------------------------------------------------------------------------- #
# liger-kernel
# --------------------------------------------------------------------------- #


def _rms_ref(a: dict[str, Any]) -> dict[str, torch.Tensor]:
    x = a["X_ptr"].float()
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + a["eps"]) * (a["offset"] + a["W_ptr"].float())
    return {"Y_ptr": y}


def liger_rms_norm_fwd(t: Tensors) -> Launch:
    block, warps = _liger_settings(HIDDEN)
    x = t.randn(ROWS, HIDDEN, dtype=torch.bfloat16)
    return Launch(dict(Y_ptr=t.zeros(ROWS, HIDDEN, dtype=torch.bfloat16), Y_row_stride=HIDDEN, X_ptr=x,
                       X_row_stride=HIDDEN, W_ptr=t.randn(HIDDEN, dtype=torch.bfloat16), W_row_stride=1,
                       RSTD_ptr=t.zeros(ROWS), RSTD_row_stride=1, n_cols=HIDDEN, eps=1e-6, offset=0.0,
                       casting_mode=0, elementwise_affine=True, BLOCK_SIZE=block),
                  (ROWS,), warps, reference=_rms_ref, atol=5e-2)


def liger_rms_norm_bwd(t: Tensors) -> Launch:
    block, warps = _liger_settings(HIDDEN)
    return Launch(dict(dY_ptr=t.randn(ROWS, HIDDEN, dtype=torch.bfloat16), dY_row_stride=HIDDEN,
                       dX_ptr=t.zeros(ROWS, HIDDEN, dtype=torch.bfloat16), dX_row_stride=HIDDEN,
                       X_ptr=t.randn(ROWS, HIDDEN, dtype=torch.bfloat16), X_row_stride=HIDDEN,
                       X_dtype=triton.language.bfloat16, W_ptr=t.randn(HIDDEN, dtype=torch.bfloat16),
                       W_row_stride=1, RSTD_ptr=t.rand(ROWS), RSTD_row_stride=1,
                       dW_ptr=t.zeros(SM_COUNT, HIDDEN), dW_row_stride=HIDDEN, n_rows=ROWS, n_cols=HIDDEN,
                       offset=0.0, rows_per_program=_cdiv(ROWS, SM_COUNT), casting_mode=0,
                       elementwise_affine=True, BLOCK_SIZE=block, COMPUTE_DW=True),
                  (SM_COUNT,), warps)


def _ln_ref(a: dict[str, Any]) -> dict[str, torch.Tensor]:
    x = a["X_ptr"].float()
    y = torch.nn.functional.layer_norm(x, (x.shape[-1],), a["W_ptr"].float(), a["B_ptr"].float(), a["eps"])
    return {"Y_ptr": y}


def liger_layer_norm_fwd(t: Tensors) -> Launch:
    block, warps = _liger_settings(HIDDEN)
    return Launch(dict(Y_ptr=t.zeros(ROWS, HIDDEN, dtype=torch.float16), Y_row_stride=HIDDEN,
                       X_ptr=t.randn(ROWS, HIDDEN), X_row_stride=HIDDEN, W_ptr=t.randn(HIDDEN),
                       W_row_stride=1, B_ptr=t.randn(HIDDEN), B_row_stride=1, Mean_ptr=t.zeros(ROWS),
                       Mean_row_stride=1, RSTD_ptr=t.zeros(ROWS), RSTD_row_stride=1, n_cols=HIDDEN,
                       eps=1e-5, BLOCK_SIZE=block),
                  (ROWS,), warps, reference=_ln_ref)


def liger_layer_norm_bwd(t: Tensors) -> Launch:
    block, warps = _liger_settings(HIDDEN)
    return Launch(dict(X_ptr=t.randn(ROWS, HIDDEN), stride_x=HIDDEN, W_ptr=t.randn(HIDDEN),
                       Mean_ptr=t.randn(ROWS, dtype=torch.float32), stride_mean=1,
                       RSTD_ptr=t.rand(ROWS), stride_rstd=1, DX_ptr=t.zeros(ROWS, HIDDEN), stride_dx=HIDDEN,
                       DW_ptr=t.zeros(SM_COUNT, HIDDEN), stride_dw=HIDDEN,
                       DB_ptr=t.zeros(SM_COUNT, HIDDEN), stride_db=HIDDEN,
                       DY_ptr=t.randn(ROWS, HIDDEN), stride_dy=HIDDEN, n_rows=ROWS, n_cols=HIDDEN,
                       rows_per_program=_cdiv(ROWS, SM_COUNT), BLOCK_SIZE=block, COMPUTE_DW=True,
                       COMPUTE_DB=True),
                  (SM_COUNT,), warps)


def liger_cross_entropy(t: Tensors) -> Launch:
    n = 512
    block = min(65536 // 2, _np2(VOCAB))
    return Launch(dict(X_ptr=t.randn(n, VOCAB, dtype=torch.bfloat16), X_stride=VOCAB,
                       Y_ptr=t.randint(0, VOCAB, n), Y_stride=1, weight_ptr=t.zeros(1),
                       loss_ptr=t.zeros(n), z_loss_ptr=t.zeros(n), loss_stride=1,
                       token_accuracy_ptr=None, token_accuracy_stride=0, predicted_tokens_ptr=None,
                       predicted_tokens_stride=0, n_cols=VOCAB, n_non_ignore=float(n),
                       sum_non_ignore_weight=float(n), weight_sum=0.0, ignore_index=-100,
                       lse_square_scale=0.0, label_smoothing=0.0, reduction="mean", softcap=None,
                       RETURN_Z_LOSS=False, RETURN_TOKEN_ACCURACY=False, RETURN_PREDICTED_TOKENS=False,
                       BLOCK_SIZE=block, HAS_WEIGHT=False, HAS_SOFTCAPPING=False, HAS_GRADIENTS=True),
                  (n,), 32)


def liger_rope(t: Tensors) -> Launch:
    bs, sl, nq, nk, hd = 2, 1024, 32, 8, 128
    # A real rotation (cos and sin of one angle): the kernel updates q and k in place, and the
    # timing relaunches it hundreds of times; random cos/sin grew them to Inf (then the
    # sanitizers' reporting path was what got timed).
    angle = t.randn(1, sl, hd, dtype=torch.float32)
    return Launch(dict(q_ptr=t.randn(bs, sl, nq, hd), q_row_stride=nq * hd,
                       k_ptr=t.randn(bs, sl, nk, hd), k_row_stride=nk * hd,
                       cos=angle.cos(), cos_row_stride=hd, sin=angle.sin(), sin_row_stride=hd, sl=sl, bs=bs,
                       cos_bs=1, n_qh=nq, n_kh=nk, hd=hd, pad_n_qh=nq, pad_n_kh=nk, pad_hd=hd,
                       pad_rd=hd, rd=hd, BLOCK_SIZE=max(nq, nk), BACKWARD_PASS=False),
                  (bs * sl,), 4)


def _softmax_ref(a: dict[str, Any]) -> dict[str, torch.Tensor]:
    return {"Y_ptr": torch.softmax(a["X_ptr"].float(), dim=-1)}


def liger_softmax_single(t: Tensors) -> Launch:
    n, cols = 4096, 2048
    block, warps = _liger_settings(cols)
    return Launch(dict(Y_ptr=t.zeros(n, cols, dtype=torch.float16), Y_row_stride=cols,
                       X_ptr=t.randn(n, cols), X_row_stride=cols, n_cols=cols, BLOCK_SIZE=block),
                  (n,), warps, reference=_softmax_ref, atol=2e-3)


def liger_softmax_multi(t: Tensors) -> Launch:
    n, cols = 256, 100_000
    return Launch(dict(Y_ptr=t.zeros(n, cols), Y_row_stride=cols, X_ptr=t.randn(n, cols),
                       X_row_stride=cols, n_cols=cols, BLOCK_SIZE=65536),
                  (n,), 32, reference=_softmax_ref, atol=1e-5)


def _swiglu_ref(a: dict[str, Any]) -> dict[str, torch.Tensor]:
    x, g = a["a_ptr"].float(), a["b_ptr"].float()
    return {"c_ptr": torch.nn.functional.silu(x) * g}


def liger_swiglu_fwd(t: Tensors) -> Launch:
    n, cols = 2048, 11008
    block, warps = _liger_settings(cols)
    return Launch(dict(a_ptr=t.randn(n, cols, dtype=torch.bfloat16), b_ptr=t.randn(n, cols, dtype=torch.bfloat16),
                       c_ptr=t.zeros(n, cols, dtype=torch.bfloat16), stride=cols, gate_multiplier=1.0,
                       n_cols=cols, BLOCK_SIZE=block),
                  (n,), warps, reference=_swiglu_ref, atol=5e-2)


def liger_geglu_fwd(t: Tensors) -> Launch:
    n, cols = 2048, 11008
    block, warps = _liger_settings(cols)
    return Launch(dict(a=t.randn(n, cols), b=t.randn(n, cols), c=t.zeros(n, cols), stride=cols,
                       n_cols=cols, BLOCK_SIZE=block),
                  (n,), warps)


def _embedding_ref(a: dict[str, Any]) -> dict[str, torch.Tensor]:
    return {"output_ptr": a["embeddings_ptr"][a["indices_ptr"]]}


def liger_embedding_fwd(t: Tensors) -> Launch:
    n, dim = 8192, 4096
    bm = bn = _np2(min(128, dim))
    return Launch(dict(embeddings_ptr=t.randn(VOCAB, dim), indices_ptr=t.randint(0, VOCAB, n),
                       output_ptr=t.zeros(n, dim), n_elements=n, embedding_dim=dim, BLOCK_SIZE_M=bm,
                       BLOCK_SIZE_N=bn),
                  (_cdiv(n, bm), _cdiv(dim, bn)), 4, reference=_embedding_ref, atol=0.0, rtol=0.0)


def liger_kl_div_fwd(t: Tensors) -> Launch:
    n = 1024
    block = min(65536 // 4, _np2(VOCAB))
    return Launch(dict(y_ptr=t.log_softmax(n, VOCAB), y_stride=VOCAB, gt_ptr=t.log_softmax(n, VOCAB),
                       gt_stride=VOCAB, loss_ptr=t.zeros(n), loss_stride=1, n_cols=VOCAB, eps=1e-10,
                       BLOCK_SIZE=block, log_target=True, reduction=1),
                  (n,), 16)  # kl_div.get_num_warps(16384); reduction 1 = "sum"


def liger_jsd(t: Tensors) -> Launch:
    n = 1024
    block = min(65536 // 4, _np2(VOCAB))
    return Launch(dict(X_ptr=t.log_softmax(n, VOCAB), X_stride=VOCAB, Y_ptr=t.log_softmax(n, VOCAB),
                       Y_stride=VOCAB, loss_ptr=t.zeros(n, VOCAB), loss_stride=VOCAB,
                       dX_ptr=t.zeros(n, VOCAB), dX_stride=VOCAB, label_ptr=None, n_non_ignore=n,
                       n_cols=VOCAB, beta=0.5, ignore_index=-100, BLOCK_SIZE=block, HAS_LABEL=False),
                  (n,), 32)


def liger_group_norm_fwd(t: Tensors) -> Launch:
    batch, channels, groups, spatial = 16, 256, 32, 256  # a 16x16 feature map: 2048 per group
    cpg = channels // groups
    hidden = cpg * spatial
    return Launch(dict(Y_ptr=t.zeros(batch, groups, hidden), Y_row_stride=groups * hidden, Y_col_stride=hidden,
                       X_ptr=t.randn(batch, groups, hidden, dtype=torch.float32), X_row_stride=groups * hidden,
                       X_col_stride=hidden, Mean_ptr=t.zeros(batch, groups), Mean_row_stride=groups,
                       Mean_col_stride=1, RSTD_ptr=t.zeros(batch, groups), RSTD_row_stride=groups,
                       RSTD_col_stride=1, W_ptr=t.randn(channels, dtype=torch.float32),
                       B_ptr=t.randn(channels, dtype=torch.float32), hidden_size=hidden,
                       channels_per_group=cpg, eps=1e-6, BLOCK_SIZE=min(65536, _np2(hidden))),
                  (batch, groups), 4)


def liger_fused_add_rms_norm_fwd(t: Tensors) -> Launch:
    block, warps = _liger_settings(HIDDEN)
    return Launch(dict(Y_ptr=t.zeros(ROWS, HIDDEN, dtype=torch.bfloat16), Y_row_stride=HIDDEN,
                       S_ptr=t.zeros(ROWS, HIDDEN, dtype=torch.bfloat16), S_row_stride=HIDDEN,
                       X_ptr=t.randn(ROWS, HIDDEN, dtype=torch.bfloat16), X_row_stride=HIDDEN,
                       R_ptr=t.randn(ROWS, HIDDEN, dtype=torch.bfloat16), R_row_stride=HIDDEN,
                       W_ptr=t.randn(HIDDEN, dtype=torch.bfloat16), W_row_stride=1, RSTD_ptr=t.zeros(ROWS),
                       RSTD_row_stride=1, n_cols=HIDDEN, eps=1e-6, offset=0.0, casting_mode=0,
                       BLOCK_SIZE=block),
                  (ROWS,), warps, 2)


def liger_mm_int8int2(t: Tensors) -> Launch:
    # int8 activations x 2-bit packed weights (4 per int8 byte along K), int32 accumulation.
    # One of the kernel's autotune configs (64x128x32, 4 warps, 4 stages).
    m, n, k = 1024, 4096, 4096
    bm, bn, bk, gm = 64, 128, 32, 8
    return Launch(dict(a_ptr=t.randint(-8, 8, m, k, dtype=torch.int8), b_ptr=t.randint(-128, 127, k // 4, n, dtype=torch.int8),
                       c_ptr=t.zeros(m, n, dtype=torch.int32), M=m, N=n, K=k, stride_am=k, stride_ak=1,
                       stride_bk=n, stride_bn=1, stride_cm=n, stride_cn=1, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn,
                       BLOCK_SIZE_K=bk, GROUP_SIZE_M=gm),
                  (_cdiv(m, bm) * _cdiv(n, bn),), 4, 4)


# --- MoE (liger_kernel.ops.fused_moe_kernels) ---------------------------------------------

_MOE_T, _MOE_E, _MOE_K, _MOE_H, _MOE_I = 512, 8, 2, 1024, 1024


def liger_moe_router_histogram(t: Tensors) -> Launch:
    tokens_per_tile = 128
    n_tiles = _cdiv(_MOE_T, tokens_per_tile)
    return Launch(dict(topk_indices_ptr=t.randint(0, _MOE_E, _MOE_T, _MOE_K, dtype=torch.int32),
                       partial_sum_ptr=t.zeros(_MOE_E, n_tiles, dtype=torch.int32), T=_MOE_T, n_tiles=n_tiles,
                       E=_MOE_E, TOKENS_PER_TILE=tokens_per_tile, K_POW2=_np2(_MOE_K), K=_MOE_K,
                       E_POW2=_np2(_MOE_E)),
                  (n_tiles,), 4)


def _moe_tiles(t: Tensors, block_m: int) -> dict[str, torch.Tensor]:
    # Routing metadata as liger's router kernels produce it: tokens sorted by expert, every
    # expert holding TK/E rows, tiles of BLOCK_M rows never crossing an expert boundary.
    tk = _MOE_T * _MOE_K
    per_expert = tk // _MOE_E
    tiles_per_expert = _cdiv(per_expert, block_m)
    expert_start = t.arange(0, (_MOE_E + 1) * per_expert, per_expert)
    tile_expert = t.arange(0, _MOE_E).repeat_interleave(tiles_per_expert) if t.device != "meta" else \
        t.zeros(_MOE_E * tiles_per_expert, dtype=torch.int32)
    within = t.arange(0, tiles_per_expert * block_m, block_m)
    tile_row_start = (expert_start[:-1, None] + within[None, :]).reshape(-1).to(torch.int32) if t.device != "meta" \
        else t.zeros(_MOE_E * tiles_per_expert, dtype=torch.int32)
    gather = (t.arange(0, tk) // _MOE_K).to(torch.int32) if t.device != "meta" else t.zeros(tk, dtype=torch.int32)
    return dict(expert_start=expert_start, tile_expert=tile_expert, tile_row_start=tile_row_start, gather=gather,
                n_tiles=_MOE_E * tiles_per_expert)


def liger_moe_up_proj_swiglu(t: Tensors) -> Launch:
    bm, bn, bk = 64, 64, 64
    md = _moe_tiles(t, bm)
    tk = _MOE_T * _MOE_K
    x = t.randn(_MOE_T, _MOE_H, dtype=torch.bfloat16, scale=0.1)
    w = t.randn(_MOE_E, 2 * _MOE_I, _MOE_H, dtype=torch.bfloat16, scale=0.05)
    return Launch(dict(x_ptr=x, gate_up_proj_ptr=w, x_gather_idx_ptr=md["gather"],
                       expert_start_ptr=md["expert_start"], tile_row_start_ptr=md["tile_row_start"],
                       tile_expert_ptr=md["tile_expert"], pre_act_ptr=t.zeros(tk, 2 * _MOE_I, dtype=torch.bfloat16),
                       post_act_ptr=t.zeros(tk, _MOE_I, dtype=torch.bfloat16), stride_x_T=_MOE_H,
                       stride_w_E=2 * _MOE_I * _MOE_H, stride_w_N=_MOE_H, stride_pre_TK=2 * _MOE_I,
                       stride_post_TK=_MOE_I, H_dim=_MOE_H, I_dim=_MOE_I, stride_x_H=1, stride_w_K=1,
                       stride_pre_N=1, stride_post_N=1, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk),
                  (md["n_tiles"], _cdiv(_MOE_I, bn)), 4, 3)


def liger_moe_gather_weighted_sum(t: Tensors) -> Launch:
    tk = _MOE_T * _MOE_K
    bh = 128
    return Launch(dict(Y_ptr=t.randn(tk, _MOE_H, dtype=torch.bfloat16), w_ptr=t.rand(_MOE_T, _MOE_K),
                       s_rev_ptr=t.arange(0, tk), out_ptr=t.zeros(_MOE_T, _MOE_H, dtype=torch.bfloat16),
                       stride_Y_TK=_MOE_H, stride_out_T=_MOE_H, H_dim=_MOE_H, K_dim=_MOE_K, stride_Y_H=1,
                       stride_out_H=1, BLOCK_H=bh, BLOCK_K=_np2(_MOE_K), w_is_None=False),
                  (_MOE_T,), 4, 4)  # one program per token; it walks H in BLOCK_H tiles


# --------------------------------------------------------------------------- #
# fla-core (flash-linear-attention)
# --------------------------------------------------------------------------- #

_B, _T, _H, _HQ, _D = 2, 2048, 8, 32, 128


def fla_parallel_attn_fwd(t: Tensors) -> Launch:
    bt, bs, bk, bv = 128, 64, 128, 128
    return Launch(dict(q=t.randn(_B, _T, _HQ, _D, dtype=torch.bfloat16), k=t.randn(_B, _T, _H, _D, dtype=torch.bfloat16),
                       v=t.randn(_B, _T, _H, _D, dtype=torch.bfloat16),
                       o=t.zeros(_B, _T, _HQ, _D, dtype=torch.bfloat16), g_cumsum=None, sink_bias=None,
                       lse=t.zeros(_B, _T, _HQ), scale=_D ** -0.5, cu_seqlens=None, chunk_indices=None, T=_T,
                       W=None, B=_B, H=_H, HQ=_HQ, G=_HQ // _H, K=_D, V=_D, BT=bt, BS=bs, BK=bk, BV=bv,
                       USE_G=False, USE_SINK_BIAS=False, USE_WINDOW=False, IS_VARLEN=False),
                  (_cdiv(_D, bv) * _cdiv(_T, bt), _B * _HQ), 8)


def _fla_attn_bwd_args(t: Tensors) -> dict[str, Any]:
    return dict(q=t.randn(_B, _T, _HQ, _D, dtype=torch.bfloat16), k=t.randn(_B, _T, _H, _D, dtype=torch.bfloat16),
                v=t.randn(_B, _T, _H, _D, dtype=torch.bfloat16), g_cumsum=None,
                lse=t.randn(_B, _T, _HQ, dtype=torch.float32), delta=t.randn(_B, _T, _HQ, dtype=torch.float32),
                do=t.randn(_B, _T, _HQ, _D, dtype=torch.bfloat16), scale=_D ** -0.5, cu_seqlens=None,
                chunk_indices=None, T=_T, W=None, B=_B, H=_H, HQ=_HQ, G=_HQ // _H, K=_D, V=_D,
                USE_G=False, USE_WINDOW=False, IS_VARLEN=False)


def fla_parallel_attn_bwd_dq(t: Tensors) -> Launch:
    bt, bs, bk, bv = 128, 64, 128, 128
    args = _fla_attn_bwd_args(t)
    args.update(dq=t.zeros(_B, _T, _HQ, _D), dg_cumsum=None, BT=bt, BS=bs, BK=bk, BV=bv)
    return Launch(args, (_cdiv(_T, bt), _B * _HQ), 8)


def fla_parallel_attn_bwd_dkv(t: Tensors) -> Launch:
    bt, bs, bk, bv = 128, 64, 128, 128  # the launcher's Hopper config, shared with dq
    args = _fla_attn_bwd_args(t)
    args.update(dk=t.zeros(_B, _T, _HQ, _D), dv=t.zeros(_B, _T, _HQ, _D), dg_cumsum=None, BT=bt, BS=bs, BK=bk, BV=bv)
    return Launch(args, (_cdiv(_T, bt), _B * _HQ), 8)


def fla_attn_decoding(t: Tensors) -> Launch:
    n, seq = 16, 4096
    bs, bk, bv = 64, _D, _D
    return Launch(dict(q=t.randn(1, n, _HQ, _D, dtype=torch.bfloat16),
                       k=t.randn(1, n * seq, _H, _D, dtype=torch.bfloat16),
                       v=t.randn(1, n * seq, _H, _D, dtype=torch.bfloat16),
                       o=t.zeros(1, n, _HQ, _D, dtype=torch.bfloat16), g_cumsum=None, sink_bias=None,
                       scale=_D ** -0.5, cu_seqlens=t.arange(0, (n + 1) * seq, seq, dtype=torch.int64),
                       T=n * seq, B=1, H=_H, HQ=_HQ, G=_HQ // _H, K=_D, V=_D, W=None, BS=bs, BK=bk, BV=bv,
                       USE_G=False, USE_SINK_BIAS=False),
                  (_cdiv(_D, bv) * n * _HQ,), 4, 3)


def fla_rotary(t: Tensors) -> Launch:
    b, seq, h, d = 2, 2048, 32, 128
    r = d // 2
    bt = min(128, _np2(_cdiv(seq, SM_COUNT)))
    return Launch(dict(x=t.randn(b, seq, h, d, dtype=torch.bfloat16), cos=t.randn(seq, r, dtype=torch.float32),
                       sin=t.randn(seq, r, dtype=torch.float32), y=t.zeros(b, seq, h, d, dtype=torch.bfloat16),
                       cu_seqlens=None, chunk_indices=None, seq_offsets=0, T=seq, B=b, H=h, D=d, R=r,
                       TR=seq, BT=bt, BD=_np2(2 * r), IS_SEQLEN_OFFSETS_TENSOR=False, IS_VARLEN=False,
                       INTERLEAVED=False, CONJUGATE=False),
                  (_cdiv(seq, bt), b, h), 4, 2)


def fla_layer_norm_fwd(t: Tensors) -> Launch:
    # The blocked kernel, which the launcher uses for D <= 512 (a head-wise norm).
    rows, d, bt = 16384, 512, 16
    return Launch(dict(x=t.randn(rows, d, dtype=torch.bfloat16), y=t.zeros(rows, d, dtype=torch.bfloat16),
                       w=t.randn(d, dtype=torch.float32), b=t.randn(d, dtype=torch.float32), res=None,
                       res_out=None, mean=t.zeros(rows), rstd=t.zeros(rows), eps=1e-5, T=rows, G=1, D=d,
                       BT=bt, BD=_np2(d), NB=_cdiv(rows, 2048), IS_RMS_NORM=False, HAS_RESIDUAL=False,
                       STORE_RESIDUAL_OUT=False, HAS_WEIGHT=True, HAS_BIAS=True),
                  (_cdiv(rows, bt),), 8)


def fla_l2norm_fwd(t: Tensors) -> Launch:
    rows, d, bt = 16384, 128, 32
    return Launch(dict(x=t.randn(rows, d, dtype=torch.bfloat16), y=t.zeros(rows, d, dtype=torch.bfloat16),
                       rstd=t.zeros(rows), eps=1e-6, T=rows, D=d, BD=_np2(d), NB=_cdiv(rows, 2048 * 32), BT=bt),
                  (_cdiv(rows, bt),), 4)


def fla_cross_entropy_fwd(t: Tensors) -> Launch:
    n = 512
    bv = min(64 * 1024, _np2(VOCAB))
    return Launch(dict(logits=t.randn(n, VOCAB, dtype=torch.bfloat16), target=t.randint(0, VOCAB, n),
                       loss=t.zeros(n), z_loss=t.zeros(n), lse=t.zeros(n), s_logits=VOCAB, N=n,
                       label_smoothing=0.0, logit_scale=1.0, lse_square_scale=0.0, logit_softcapping=None,
                       ignore_index=-100, V=VOCAB, V_TOTAL=VOCAB, V_START=0, BV=bv, SPLIT=False),
                  (n, 1), 16)


def fla_softmax_fwd(t: Tensors) -> Launch:
    rows, d = 16384, 1024
    return Launch(dict(x=t.randn(rows, d), p=t.zeros(rows, d), D=d, B=_np2(d)),
                  (rows,), 8, reference=lambda a: {"p": torch.softmax(a["x"].float(), -1)}, atol=1e-5)


def _fla_matmul(t: Tensors, bm: int, bn: int, bk: int, warps: int, stages: int) -> Launch:
    # fla.ops.utils.matmul.matmul on 2-D inputs: a batch of one, grid (B, M tiles, N tiles).
    m = n = k = 2048
    return Launch(dict(a=t.randn(1, m, k), b=t.randn(k, n), c=t.zeros(1, m, n), input=None, alpha=None,
                       beta=None, M=m, N=n, K=k, stride_ab=m * k, stride_am=k, stride_ak=1, stride_bk=n,
                       stride_bn=1, stride_cb=m * n, stride_cm=n, stride_cn=1, BM=bm, BK=bk, BN=bn, G=4,
                       ACTIVATION="", HAS_INPUT=False, HAS_ALPHA=False, HAS_BETA=False, ALLOW_TF32=False,
                       X_DIM=2),
                  (1, _cdiv(m, bm), _cdiv(n, bn)), warps, stages,
                  reference=lambda a: {"c": (a["a"].double() @ a["b"].double()).to(a["c"].dtype)}, atol=1e-1)


def fla_matmul_fp16_128x256x64(t: Tensors) -> Launch:
    # fla's first autotune config (128x256x64, 8 warps) with 2 stages instead of 3, as when
    # shared memory is short: issue 16's ptxas failure with nvidia_occupancy_hint ("Insufficient
    # registers (128) ... register target of 154"). With 3 stages the pass declines on shared
    # memory anyway.
    launch = _fla_matmul(t, 128, 256, 64, 8, 2)
    for name in ("a", "b", "c"):
        launch.args[name] = launch.args[name].to(torch.float16)
    launch.args["ALLOW_TF32"] = True  # as the launcher sets it for non-fp32 inputs
    launch.atol = 2.0
    return launch


def fla_matmul_fp32_64x64x32(t: Tensors) -> Launch:
    return _fla_matmul(t, 64, 64, 32, 4, 4)


def fla_chunk_local_cumsum(t: Tensors) -> Launch:
    b, seq, h, bt = 4, 4096, 16, 64
    return Launch(dict(s=t.randn(b, seq, h, dtype=torch.float32), o=t.zeros(b, seq, h), scale=None,
                       cu_seqlens=None, chunk_indices=None, T=seq, B=b, H=h, BT=bt, REVERSE=False,
                       HAS_SCALE=False, IS_VARLEN=False, USE_GRAPH=False),
                  (_cdiv(seq, bt), b * h), 4)


def fla_logsumexp_fwd(t: Tensors) -> Launch:
    rows, d, blk = 4096, 32000, 32768
    return Launch(dict(x=t.randn(rows, d), z=t.zeros(rows, _cdiv(d, blk)), scale=None, D=d, B=blk,
                       HAS_SCALE=False),
                  (rows, _cdiv(d, blk)), 32,
                  reference=lambda a: {"z": torch.logsumexp(a["x"].float(), -1, keepdim=True)}, atol=1e-4)


# --------------------------------------------------------------------------- #
# sglang (0.5.9, installed without its dependencies: these modules import triton and torch only)
# --------------------------------------------------------------------------- #

_SG_BATCH, _SG_SEQ, _SG_HQ, _SG_HKV, _SG_D = 2, 2048, 32, 8, 128


def _sg_varlen(t: Tensors, batch: int, seq: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(start offsets, lengths) of ``batch`` packed sequences of ``seq`` tokens, int32."""
    return t.arange(0, batch * seq, seq), t.full((batch,), seq, dtype=torch.int32)


def _sg_causal_ref(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, batch: int, seq: int) -> torch.Tensor:
    """Causal attention over packed [batch * seq, heads, d] tensors, grouped-query heads."""
    hq, hkv, d = q.shape[1], k.shape[1], q.shape[2]
    qf = q.float().view(batch, seq, hq, d).transpose(1, 2)
    kf = k.float().view(batch, seq, hkv, d).transpose(1, 2).repeat_interleave(hq // hkv, 1)
    vf = v.float().view(batch, seq, hkv, d).transpose(1, 2).repeat_interleave(hq // hkv, 1)
    o = torch.nn.functional.scaled_dot_product_attention(qf, kf, vf, is_causal=True)
    return o.transpose(1, 2).reshape(batch * seq, hq, d)


def sglang_prefill_attention(t: Tensors, batch: int = _SG_BATCH, seq: int = _SG_SEQ) -> Launch:
    # sglang.srt.layers.attention.triton_ops.prefill_attention.context_attention_fwd on sm_90:
    # BLOCK 128, 8 warps for head_dim 128, one stage, causal.
    q = t.randn(batch * seq, _SG_HQ, _SG_D)
    k = t.randn(batch * seq, _SG_HKV, _SG_D)
    v = t.randn(batch * seq, _SG_HKV, _SG_D)
    o = t.zeros(batch * seq, _SG_HQ, _SG_D, dtype=torch.float16)
    start, lens = _sg_varlen(t, batch, seq)
    blk = 128
    return Launch(dict(Q=q, K=k, V=v, sm_scale=_SG_D ** -0.5, B_Start_Loc=start, B_Seqlen=lens, Out=o,
                       stride_qbs=_SG_HQ * _SG_D, stride_qh=_SG_D, stride_kbs=_SG_HKV * _SG_D,
                       stride_kh=_SG_D, stride_vbs=_SG_HKV * _SG_D, stride_vh=_SG_D,
                       stride_obs=_SG_HQ * _SG_D, stride_oh=_SG_D, kv_group_num=_SG_HQ // _SG_HKV,
                       BLOCK_M=blk, BLOCK_DMODEL=_SG_D, BLOCK_N=blk, IS_CAUSAL=True, Lk=_SG_D),
                  (batch, _SG_HQ, _cdiv(seq, blk)), 8, 1,
                  reference=lambda a: {"Out": _sg_causal_ref(a["Q"], a["K"], a["V"], batch, seq)},
                  atol=2e-2, rtol=2e-2)


def sglang_extend_attention(t: Tensors, batch: int = _SG_BATCH, seq: int = _SG_SEQ) -> Launch:
    # extend_attention_fwd with no cached prefix (every token new, as in a first prefill):
    # the causal stage-2 loop does all the work. sm_90, head_dim 128: BLOCK_M 128, BLOCK_N 64,
    # 8 warps, one stage (_get_block_sizes_for_extend_attention and the launcher).
    q = t.randn(batch * seq, _SG_HQ, _SG_D)
    k = t.randn(batch * seq, _SG_HKV, _SG_D)
    v = t.randn(batch * seq, _SG_HKV, _SG_D)
    o = t.zeros(batch * seq, _SG_HQ, _SG_D, dtype=torch.float16)
    qo_indptr = t.arange(0, (batch + 1) * seq, seq)
    kv_indptr = t.zeros(batch + 1, dtype=torch.int32)
    buf = t.zeros(1, _SG_HKV, _SG_D, dtype=torch.float16)
    bm, bn = 128, 64
    return Launch(dict(Q_Extend=q, K_Extend=k, V_Extend=v, O_Extend=o, K_Buffer=buf, V_Buffer=buf,
                       qo_indptr=qo_indptr, kv_indptr=kv_indptr, kv_indices=t.zeros(1, dtype=torch.int64),
                       mask_ptr=None, mask_indptr=None, sink_ptr=None, window_kv_offset_ptr=None,
                       sm_scale=_SG_D ** -0.5, kv_group_num=_SG_HQ // _SG_HKV,
                       stride_qbs=_SG_HQ * _SG_D, stride_qh=_SG_D, stride_kbs=_SG_HKV * _SG_D,
                       stride_kh=_SG_D, stride_vbs=_SG_HKV * _SG_D, stride_vh=_SG_D,
                       stride_obs=_SG_HQ * _SG_D, stride_oh=_SG_D, stride_buf_kbs=_SG_HKV * _SG_D,
                       stride_buf_kh=_SG_D, stride_buf_vbs=_SG_HKV * _SG_D, stride_buf_vh=_SG_D,
                       SLIDING_WINDOW_SIZE=-1, logit_cap=0.0, xai_temperature_len=-1, Lq=_SG_D, Lv=_SG_D,
                       BLOCK_DMODEL=_SG_D, BLOCK_DPE=0, BLOCK_DV=_SG_D, BLOCK_M=bm, BLOCK_N=bn,
                       USE_CUSTOM_MASK=False, IS_CAUSAL=True, SKIP_PREFIX_CUSTOM_MASK=False,
                       STORE_TRANSPOSE=False, HAS_SINK=False),
                  (batch, _SG_HQ, _cdiv(seq, bm)), 8, 1,
                  reference=lambda a: {"O_Extend": _sg_causal_ref(a["Q_Extend"], a["K_Extend"], a["V_Extend"],
                                                                  batch, seq)},
                  atol=2e-2, rtol=2e-2)


# --------------------------------------------------------------------------- #
# vLLM (0.33.0 wheel, its kernel files only: tests/realworld/vllm_modules.py)
# --------------------------------------------------------------------------- #
#
# Launched through vLLM's own launchers (unified_attention, context_attention_fwd,
# chunked_prefill_paged_decode): :func:`_vllm_launch` calls the launcher with the module's kernel
# replaced by a recorder, so the Launch holds exactly the grid, arguments and options the launcher
# gives the kernel (with ``meta`` tensors on the CPU). Llama-3-8B-like heads: 32 query / 8 KV
# heads, fp16 KV cache of 16-token blocks.

_VL_HQ, _VL_HKV, _VL_BLOCK = 32, 8, 16


class _Recorded(Exception):
    """Raised by the recorder to stop the launcher after the kernel's launch was captured."""


def _vllm_launch(vc: "VllmCall") -> Launch:
    """Run the launcher with ``vc.kernel`` replaced by a recorder of its first launch."""
    from tests.realworld.vllm_modules import import_kernel_module as import_vllm

    module = import_vllm(vc.module)
    fn = unwrap(getattr(module, vc.kernel))
    names = [p.name for p in fn.params]
    seen: dict[str, Any] = {}

    class Recorder:
        def __getitem__(self, grid: Any) -> Callable[..., None]:
            def launch(*args: Any, **kwargs: Any) -> None:
                num_warps = kwargs.pop("num_warps", 4)
                num_stages = kwargs.pop("num_stages", 3)
                bound = dict(zip(names, args)) | kwargs
                g = grid(bound) if callable(grid) else grid
                seen["launch"] = Launch(bound, tuple(g), num_warps, num_stages)
                raise _Recorded
            return launch

    original = getattr(module, vc.kernel)
    setattr(module, vc.kernel, Recorder())
    try:
        vc.call(module)
    except _Recorded:
        pass
    finally:
        setattr(module, vc.kernel, original)
    if "launch" not in seen:
        raise RuntimeError(f"vllm {vc.module}: the launcher never launched {vc.kernel}")
    return seen["launch"]


def _vl_paged_cache(t: Tensors, seqs: list[int], d: int) -> dict[str, torch.Tensor]:
    """A paged KV cache ([blocks, 16, kv_heads, d], unified_attention's layout) and block table."""
    per_seq = [_cdiv(s, _VL_BLOCK) for s in seqs]
    width = max(per_seq)
    blocks = sum(per_seq)
    table = t.arange(0, len(seqs) * width).view(len(seqs), width) % blocks
    return dict(k=t.randn(blocks, _VL_BLOCK, _VL_HKV, d), v=t.randn(blocks, _VL_BLOCK, _VL_HKV, d),
                block_table=table.to(torch.int32))


@dataclass
class VllmCall:
    """A call of one of vLLM's launchers: ``call(module)`` launches ``kernel`` into ``outputs``."""

    module: str
    kernel: str
    call: Callable[[Any], None]
    outputs: dict[str, torch.Tensor]


def vllm_unified_call(t: Tensors, query_lens: list[int], seq_lens: list[int], d: int = 128,
                      three_d: bool = False) -> VllmCall:
    """vLLM's ``unified_attention`` over a paged cache, causal; 2-D launch, or 3-D with 16 segments."""
    cache = _vl_paged_cache(t, seq_lens, d)
    tokens = sum(query_lens)
    cu = [0]
    for n in query_lens:
        cu.append(cu[-1] + n)
    q = t.randn(tokens, _VL_HQ, d)
    out = t.zeros(tokens, _VL_HQ, d, dtype=torch.float16)
    segs = 16  # vllm.v1.attention.backends.triton_attn: NUM_PAR_SOFTMAX_SEGMENTS
    extra: dict[str, Any] = {}
    if three_d:
        extra = dict(seq_threshold_3D=128, num_par_softmax_segments=segs,
                     softmax_segm_output=t.zeros(tokens, _VL_HQ, segs, _np2(d)),
                     softmax_segm_max=t.zeros(tokens, _VL_HQ, segs),
                     softmax_segm_expsum=t.zeros(tokens, _VL_HQ, segs))
    cu_t = torch.tensor(cu, dtype=torch.int32, device=t.device)
    lens_t = torch.tensor(seq_lens, dtype=torch.int32, device=t.device)

    def call(m: Any) -> None:
        m.unified_attention(q=q, k=cache["k"], v=cache["v"], out=out, cu_seqlens_q=cu_t,
                            max_seqlen_q=max(query_lens), seqused_k=lens_t, max_seqlen_k=max(seq_lens),
                            softmax_scale=d ** -0.5, causal=True, window_size=(-1, -1),
                            block_table=cache["block_table"], softcap=0.0, q_descale=None, k_descale=None,
                            v_descale=None, **extra)

    return VllmCall("triton_unified_attention", "kernel_unified_attention", call, {"out": out})


def vllm_unified_prefill(t: Tensors, seq: int = 2048, d: int = 128) -> Launch:
    # 2-D launch: two prompts of `seq` tokens, no cached prefix (BLOCK_M 16, BLOCK_Q 4, TILE 32).
    return _vllm_launch(vllm_unified_call(t, [seq, seq], [seq, seq], d))


def vllm_unified_decode(t: Tensors, seq: int = 4096, d: int = 128) -> Launch:
    # 2-D launch at decode: 8 sequences, one new token each, `seq` cached tokens (TILE 32).
    return _vllm_launch(vllm_unified_call(t, [1] * 8, [seq] * 8, d))


def vllm_unified_decode_3d(t: Tensors, seq: int = 4096, d: int = 128) -> Launch:
    # 3-D (segmented) launch at decode, as the Triton backend makes it: 16 segments per sequence
    # (TILE 16), partials reduced by reduce_segments.
    return _vllm_launch(vllm_unified_call(t, [1] * 8, [seq] * 8, d, three_d=True))


def _vl_prefix_cache(t: Tensors, seqs: list[int], d: int) -> dict[str, torch.Tensor]:
    """prefix_prefill's cache layout: K [blocks, kv_heads, d/8, 16, 8], V [blocks, kv_heads, d, 16]."""
    per_seq = [_cdiv(s, _VL_BLOCK) for s in seqs]
    width, blocks = max(per_seq), sum(per_seq)
    table = t.arange(0, len(seqs) * width).view(len(seqs), width) % blocks
    return dict(k_cache=t.randn(blocks, _VL_HKV, d // 8, _VL_BLOCK, 8),
                v_cache=t.randn(blocks, _VL_HKV, d, _VL_BLOCK), block_table=table.to(torch.int32))


def vllm_prefix_prefill_call(t: Tensors, context: int = 2048, new: int = 512, batch: int = 2,
                             d: int = 128) -> VllmCall:
    """``context_attention_fwd``: `new` prompt tokens after `context` cached ones."""
    seqs = [context + new] * batch
    cache = _vl_prefix_cache(t, seqs, d)
    q = t.randn(batch * new, _VL_HQ, d)
    k = t.randn(batch * new, _VL_HKV, d)
    v = t.randn(batch * new, _VL_HKV, d)
    out = t.zeros(batch * new, _VL_HQ, d, dtype=torch.float16)
    scale = t.full((1,), 1.0)
    start = t.arange(0, (batch + 1) * new, new)
    lens = torch.tensor(seqs, dtype=torch.int32, device=t.device)

    def call(m: Any) -> None:
        m.context_attention_fwd(q, k, v, out, "auto", cache["k_cache"], cache["v_cache"], cache["block_table"],
                                start, lens, max(seqs), new, scale, scale, sm_scale=d ** -0.5)

    return VllmCall("prefix_prefill", "_fwd_kernel", call, {"out": out})


def vllm_prefix_prefill(t: Tensors) -> Launch:
    # BLOCK_M 128, BLOCK_N 64, 4 warps, one stage; its first loop reads the paged cache (unrolled
    # by 4), the second the new K/V (causal).
    return _vllm_launch(vllm_prefix_prefill_call(t))


def vllm_paged_decode_call(t: Tensors, seq: int = 4096, batch: int = 8, d: int = 128) -> VllmCall:
    """``chunked_prefill_paged_decode`` at decode (one token per sequence): kernel_paged_attention_2d."""
    cache = _vl_prefix_cache(t, [seq] * batch, d)
    q = t.randn(batch, _VL_HQ, d)
    out = t.zeros(batch, _VL_HQ, d, dtype=torch.float16)
    scale = t.full((1,), 1.0)
    start = t.arange(0, batch + 1)
    lens = torch.tensor([seq] * batch, dtype=torch.int32, device=t.device)

    def call(m: Any) -> None:
        m.chunked_prefill_paged_decode(q, None, None, out, "auto", cache["k_cache"], cache["v_cache"],
                                       cache["block_table"], start, lens, seq, 1, scale, scale,
                                       sm_scale=d ** -0.5)

    return VllmCall("chunked_prefill_paged_decode", "kernel_paged_attention_2d", call, {"out": out})


def vllm_paged_decode(t: Tensors) -> Launch:
    return _vllm_launch(vllm_paged_decode_call(t))


# --------------------------------------------------------------------------- #
# torchao
# --------------------------------------------------------------------------- #


def torchao_int8_mm(t: Tensors) -> Launch:
    m, n, k = 2048, 2048, 4096
    bm, bn, bk = 128, 128, 64
    return Launch(dict(a_ptr=t.randint(-128, 127, m, k, dtype=torch.int8), b_ptr=t.randint(-128, 127, k, n, dtype=torch.int8),
                       c_ptr=t.zeros(m, n, dtype=torch.int32), M=m, N=n, K=k, stride_am=k, stride_ak=1,
                       stride_bk=n, stride_bn=1, stride_cm=n, stride_cn=1, BLOCK_M=bm, BLOCK_N=bn,
                       BLOCK_K=bk, GROUP_M=8),
                  (_cdiv(m, bm) * _cdiv(n, bn),), 8, 3,
                  reference=lambda a: {"c_ptr": (a["a_ptr"].double() @ a["b_ptr"].double()).to(torch.int32)},
                  atol=0.0, rtol=0.0)


def torchao_scaled_int8_mm(t: Tensors) -> Launch:
    m, n, k = 2048, 2048, 4096
    bm, bn, bk = 128, 128, 64
    return Launch(dict(a_ptr=t.randint(-128, 127, m, k, dtype=torch.int8), b_ptr=t.randint(-128, 127, k, n, dtype=torch.int8),
                       c_ptr=t.zeros(m, n, dtype=torch.bfloat16), s1_ptr=t.rand(m, 1, dtype=torch.bfloat16),
                       M=m, N=n, K=k, stride_am=k, stride_ak=1, stride_bk=n, stride_bn=1, stride_cm=n,
                       stride_cn=1, stride_s1m=1, stride_s1n=0, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                       GROUP_M=8, EVEN_K=True, ACC_TYPE=triton.language.int32),
                  (_cdiv(m, bm) * _cdiv(n, bn),), 8, 3)


def torchao_quantized_training_int8_mm(t: Tensors) -> Launch:
    m, n, k = 2048, 2048, 4096
    bm, bn, bk = 128, 128, 64
    return Launch(dict(A_ptr=t.randint(-128, 127, m, k, dtype=torch.int8), B_ptr=t.randint(-128, 127, k, n, dtype=torch.int8),
                       C_ptr=t.zeros(m, n, dtype=torch.bfloat16), row_scale_ptr=t.rand(m, dtype=torch.float32),
                       col_scale_ptr=t.rand(n, dtype=torch.float32), M=m, N=n, K=k, stride_am=k, stride_ak=1,
                       stride_bk=n, stride_bn=1, stride_cm=n, stride_cn=1, BLOCK_M=bm, BLOCK_N=bn,
                       BLOCK_K=bk, GROUP_M=8, EVEN_K=True, COL_SCALE_SCALAR=False),
                  (_cdiv(m, bm) * _cdiv(n, bn),), 8, 4)


def torchao_fp8_blockwise_gemm(t: Tensors) -> Launch:
    # C = (A * a_s) @ (B * b_s): A scaled per 1x128 group, B per 128x128 block (DeepSeek-V3
    # style); B and both scale tensors column-major, as the launcher asserts.
    m, n, k, blk = 2048, 2048, 4096, 128
    return Launch(dict(a_ptr=t.randn(m, k).to(torch.float8_e4m3fn), a_stride_dim_0=k, a_stride_dim_1=1,
                       b_ptr=t.randn(n, k).to(torch.float8_e4m3fn), b_stride_dim_0=1, b_stride_dim_1=k,
                       c_ptr=t.zeros(m, n, dtype=torch.bfloat16), c_stride_dim_0=n, c_stride_dim_1=1,
                       a_s_ptr=t.rand(k // blk, m), a_s_stride_dim_0=1, a_s_stride_dim_1=m,
                       b_s_ptr=t.rand(n // blk, k // blk), b_s_stride_dim_0=1, b_s_stride_dim_1=k // blk,
                       M=m, N=n, K=k, out_dtype=triton.language.bfloat16, BLOCK_SIZE_M=blk,
                       BLOCK_SIZE_N=blk, BLOCK_SIZE_K=blk),
                  (_cdiv(m, blk), _cdiv(n, blk)), 8, 2)


def torchao_fp8_act_quant_lhs(t: Tensors) -> Launch:
    m, k, blk, groups = 4096, 4096, 128, 16
    return Launch(dict(x_ptr=t.randn(m, k, dtype=torch.bfloat16), x_stride_dim_0=k, x_stride_dim_1=1,
                       y_ptr=t.zeros(m, k, dtype=torch.float8_e4m3fn), y_stride_dim_0=k, y_stride_dim_1=1,
                       s_ptr=t.zeros(m, k // blk), s_stride_dim_0=k // blk, s_stride_dim_1=1, M=m, K=k,
                       BLOCK_SIZE=blk, NUM_GROUPS=groups, EPS=1e-12, FP8_MAX=448.0),
                  (_cdiv(m, groups), _cdiv(k, blk)), 4, 3)


def torchao_hqq_mixed_mm(t: Tensors) -> Launch:
    # bf16 activations x 4-bit weights packed two per uint8 along K, group-wise scales/zeros.
    m, n, k, group = 128, 4096, 4096, 128
    bm, bn, bk = 64, 128, 64
    # The kernel reads scales/zeros at element offset (kk * BLOCK_K * stride_scale_k) // QGROUP_SIZE:
    # with BLOCK_K < QGROUP_SIZE (one of torchao's own configs) the last iteration lands half a row
    # past the last group. One spare row keeps those reads inside the allocation: without it the
    # output depended on neighbouring memory (it did not repeat itself) and, on the H200 with
    # another allocation order, the launch faulted (illegal address). The kernel is unchanged.
    groups = k // group + 1
    return Launch(dict(A=t.randn(m, k, dtype=torch.bfloat16), B=t.randint(0, 255, k // 2, n, dtype=torch.uint8),
                       scales_ptr=t.rand(groups, n, dtype=torch.bfloat16),
                       zeros_ptr=t.rand(groups, n, dtype=torch.bfloat16) * 8 if t.device != "meta" else t.rand(groups, n, dtype=torch.bfloat16),
                       C=t.zeros(m, n, dtype=torch.bfloat16), M=m, N=n, K=k, stride_am=k, stride_ak=1,
                       stride_bk=n, stride_bn=1, stride_cm=n, stride_cn=1, stride_scale_k=n,
                       stride_scale_n=1, IS_BFLOAT16=True, QGROUP_SIZE=group, BLOCK_M=bm, BLOCK_N=bn,
                       BLOCK_K=bk, SPLIT_K=1, EVEN_K=True, TRANSPOSED=False, GROUP_M=8,
                       acc_dtype=triton.language.float32, input_precision="ieee", fp8_fast_accum=False,
                       DEBUG=False),
                  (_cdiv(m, bm) * _cdiv(n, bn), 1), 4, 4)


REALWORLD: list[RealKernel] = [
    RealKernel("liger_rms_norm_fwd", "liger-kernel", "liger_kernel.ops.rms_norm", "_rms_norm_forward_kernel", "norm", liger_rms_norm_fwd),
    RealKernel("liger_rms_norm_bwd", "liger-kernel", "liger_kernel.ops.rms_norm", "_rms_norm_backward_kernel", "norm", liger_rms_norm_bwd),
    RealKernel("liger_layer_norm_fwd", "liger-kernel", "liger_kernel.ops.layer_norm", "_layer_norm_forward_kernel", "norm", liger_layer_norm_fwd),
    RealKernel("liger_layer_norm_bwd", "liger-kernel", "liger_kernel.ops.layer_norm", "_layer_norm_backward_kernel", "norm", liger_layer_norm_bwd),
    RealKernel("liger_cross_entropy", "liger-kernel", "liger_kernel.ops.cross_entropy", "liger_cross_entropy_kernel", "cross_entropy", liger_cross_entropy),
    RealKernel("liger_rope", "liger-kernel", "liger_kernel.ops.rope", "_triton_rope", "rotary", liger_rope),
    RealKernel("liger_softmax_single", "liger-kernel", "liger_kernel.ops.softmax", "_softmax_single_block_forward_kernel", "softmax", liger_softmax_single),
    RealKernel("liger_swiglu_fwd", "liger-kernel", "liger_kernel.ops.swiglu", "_swiglu_forward_kernel", "activation", liger_swiglu_fwd),
    RealKernel("liger_geglu_fwd", "liger-kernel", "liger_kernel.ops.geglu", "_geglu_tanh_forward_kernel", "activation", liger_geglu_fwd),
    RealKernel("liger_embedding_fwd", "liger-kernel", "liger_kernel.ops.experimental.embedding", "embedding_forward_kernel", "embedding", liger_embedding_fwd),
    RealKernel("liger_kl_div_fwd", "liger-kernel", "liger_kernel.ops.kl_div", "_kldiv_kernel_forward", "loss", liger_kl_div_fwd),
    RealKernel("liger_group_norm_fwd", "liger-kernel", "liger_kernel.ops.group_norm", "_group_norm_forward_kernel", "norm", liger_group_norm_fwd),
    RealKernel("liger_fused_add_rms_norm_fwd", "liger-kernel", "liger_kernel.ops.fused_add_rms_norm", "_fused_add_rms_norm_forward_kernel", "norm", liger_fused_add_rms_norm_fwd),
    RealKernel("liger_mm_int8int2", "liger-kernel", "liger_kernel.ops.experimental.mm_int8int2", "matmul_kernel", "gemm", liger_mm_int8int2),
    RealKernel("liger_moe_router_histogram", "liger-kernel", "liger_kernel.ops.fused_moe_kernels", "_moe_router_histogram_kernel", "moe", liger_moe_router_histogram),
    RealKernel("liger_moe_up_proj_swiglu", "liger-kernel", "liger_kernel.ops.fused_moe_kernels", "_fused_up_proj_swiglu_kernel", "moe", liger_moe_up_proj_swiglu),
    RealKernel("liger_moe_gather_weighted_sum", "liger-kernel", "liger_kernel.ops.fused_moe_kernels", "_token_gather_weighted_sum_kernel", "moe", liger_moe_gather_weighted_sum),
    RealKernel("fla_parallel_attn_fwd", "fla-core", "fla.ops.attn.parallel", "parallel_attn_fwd_kernel", "attention", fla_parallel_attn_fwd),
    RealKernel("fla_parallel_attn_bwd_dq", "fla-core", "fla.ops.attn.parallel", "parallel_attn_bwd_kernel_dq", "attention", fla_parallel_attn_bwd_dq),
    RealKernel("fla_parallel_attn_bwd_dkv", "fla-core", "fla.ops.attn.parallel", "parallel_attn_bwd_kernel_dkv", "attention", fla_parallel_attn_bwd_dkv),
    RealKernel("fla_attn_decoding", "fla-core", "fla.ops.attn.decoding", "naive_attn_decoding_kernel", "attention", fla_attn_decoding),
    RealKernel("fla_rotary", "fla-core", "fla.modules.rotary.ops", "rotary_embedding_kernel", "rotary", fla_rotary),
    RealKernel("fla_layer_norm_fwd", "fla-core", "fla.modules.norm.layernorm", "layer_norm_fwd_kernel", "norm", fla_layer_norm_fwd),
    RealKernel("fla_l2norm_fwd", "fla-core", "fla.modules.norm.l2norm", "l2norm_fwd_kernel", "norm", fla_l2norm_fwd),
    RealKernel("fla_cross_entropy_fwd", "fla-core", "fla.modules.fused_cross_entropy.ops", "cross_entropy_fwd_kernel", "cross_entropy", fla_cross_entropy_fwd),
    RealKernel("fla_softmax_fwd", "fla-core", "fla.ops.utils.softmax", "softmax_fwd_kernel", "softmax", fla_softmax_fwd),
    RealKernel("fla_matmul_fp16_128x256x64", "fla-core", "fla.ops.utils.matmul", "matmul_kernel", "gemm", fla_matmul_fp16_128x256x64),
    RealKernel("fla_matmul_fp32_64x64x32", "fla-core", "fla.ops.utils.matmul", "matmul_kernel", "gemm", fla_matmul_fp32_64x64x32),
    RealKernel("fla_chunk_local_cumsum", "fla-core", "fla.ops.utils.cumsum", "chunk_local_cumsum_scalar_kernel", "scan", fla_chunk_local_cumsum),
    RealKernel("fla_logsumexp_fwd", "fla-core", "fla.ops.utils.logsumexp", "logsumexp_fwd_kernel", "reduction", fla_logsumexp_fwd),
    RealKernel("sglang_prefill_attention", "sglang", "sglang.srt.layers.attention.triton_ops.prefill_attention", "_fwd_kernel", "attention", sglang_prefill_attention, tags=("causal_prefill",)),
    RealKernel("sglang_extend_attention", "sglang", "sglang.srt.layers.attention.triton_ops.extend_attention", "_fwd_kernel", "attention", sglang_extend_attention, tags=("causal_prefill",)),
    RealKernel("vllm_unified_prefill", "vllm", "vllm.v1.attention.ops.triton_unified_attention", "kernel_unified_attention", "attention", vllm_unified_prefill, tags=("causal_prefill", "paged")),
    RealKernel("vllm_unified_decode", "vllm", "vllm.v1.attention.ops.triton_unified_attention", "kernel_unified_attention", "attention", vllm_unified_decode, tags=("decode", "paged")),
    RealKernel("vllm_unified_decode_3d", "vllm", "vllm.v1.attention.ops.triton_unified_attention", "kernel_unified_attention", "attention", vllm_unified_decode_3d, tags=("decode", "paged")),
    RealKernel("vllm_prefix_prefill", "vllm", "vllm.v1.attention.ops.prefix_prefill", "_fwd_kernel", "attention", vllm_prefix_prefill, tags=("causal_prefill", "paged")),
    RealKernel("vllm_paged_decode", "vllm", "vllm.v1.attention.ops.chunked_prefill_paged_decode", "kernel_paged_attention_2d", "attention", vllm_paged_decode, tags=("decode", "paged")),
    RealKernel("torchao_scaled_int8_mm", "torchao", "torchao.kernel.intmm_triton", "scaled_matmul_kernel_with_block_pointers", "gemm", torchao_scaled_int8_mm),
    RealKernel("torchao_qt_int8_mm", "torchao", "torchao.prototype.quantized_training.int8_mm", "_scaled_int8_mm_kernel", "gemm", torchao_quantized_training_int8_mm),
    RealKernel("torchao_fp8_blockwise_gemm", "torchao", "torchao.prototype.blockwise_fp8_training.kernels", "triton_fp8_gemm_1x128_128x128_kernel", "gemm", torchao_fp8_blockwise_gemm),
    RealKernel("torchao_fp8_act_quant_lhs", "torchao", "torchao.prototype.blockwise_fp8_training.kernels", "triton_fp8_blockwise_act_quant_lhs_kernel", "quantization", torchao_fp8_act_quant_lhs),
    RealKernel("torchao_hqq_mixed_mm", "torchao", "torchao.prototype.hqq.kernels", "_mixed_mm_kernel", "gemm", torchao_hqq_mixed_mm),
]

#: Kernels of the same packages that stock triton 3.9.0 itself cannot compile (no pass
#: involved), so they cannot be in the corpus; checked by test_realworld_passes.py so the list
#: stays true when a package is upgraded.
UPSTREAM_INCOMPATIBLE: dict[str, tuple[RealKernel, str]] = {
    "liger_softmax_multi": (
        RealKernel("liger_softmax_multi", "liger-kernel", "liger_kernel.ops.softmax",
                   "_softmax_multi_block_forward_kernel", "softmax", liger_softmax_multi),
        "`tl.float32(-float('inf'))`: calling a dtype is not supported by 3.9.0's frontend"),
    "liger_jsd": (
        RealKernel("liger_jsd", "liger-kernel", "liger_kernel.ops.jsd", "_jsd_kernel", "loss", liger_jsd),
        "the same `tl.float32(...)` call"),
    "torchao_int8_mm": (
        RealKernel("torchao_int8_mm", "torchao", "torchao.kernel.intmm_triton",
                   "matmul_kernel_with_block_pointers", "gemm", torchao_int8_mm),
        "reassigns the constexpr `GROUP_M = min(...)`, rejected by 3.9.0"),
}

BY_NAME = {k.name: k for k in REALWORLD}
assert len(BY_NAME) == len(REALWORLD), "duplicate real-world kernel names"


def register(kernels: list[RealKernel]) -> None:
    """Add kernels described in another module to the corpus (names must be new)."""
    for kernel in kernels:
        if kernel.name in BY_NAME:
            raise ValueError(f"duplicate real-world kernel name {kernel.name!r}")
        REALWORLD.append(kernel)
        BY_NAME[kernel.name] = kernel


# More packages (flag-gems, sageattention), at decode and prefill sizes: tests/realworld/more_kernels.py
# registers its kernels when imported (first or from here).
import tests.realworld.more_kernels  # noqa: E402,F401
