"""End-to-end tests of triton_ext_range.assume_range: real kernels compiled through cubin on CPU
with the stock triton wheel, the dialect and builder plugins loaded through triton_ext."""

from __future__ import annotations

from pathlib import Path

import pytest

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton.compiler.errors import CompilationError

from triton_ext.testing import import_file, require_built

require_built("range_facts_ir", "range_facts")  # an unbuilt plugin fails, never skips
# The package as its wheel installs it (import name triton_ext_range), from this folder.
triton_ext_range = import_file(__file__, "../triton_ext_range", name="triton_ext_range")

TARGET = GPUTarget("cuda", 90, 32)


@pytest.fixture(autouse=True)
def fresh_triton_cache(fresh_cache: Path) -> None:
    """Compile for real in every test: a cached kernel would skip the stages under test."""
    triton_ext_range.load()  # every test starts from a clean triton_ext state (root conftest)


def compile_kernel(fn, signature: dict[str, str], constexprs: dict[str, object] | None = None):
    return triton.compile(ASTSource(fn, signature=signature, constexprs=constexprs or {}), target=TARGET)


@triton.jit
def scaled_copy(X, Y, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    n = triton_ext_range.assume_range(n, 1, 1 << 24)
    offs = triton_ext_range.assume_range(pid * BLOCK + tl.arange(0, BLOCK), 0, (1 << 24) + BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    tl.store(Y + offs, x * 2, mask=mask)


@triton.jit
def helper_fact(i):
    return triton_ext_range.assume_range(i, 0, 7) * 3


@triton.jit
def loop_sum(X, Y, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(0, 8):
        j = helper_fact(i)  # a fact inside a called @triton.jit function: needs the inliner interface
        acc += tl.load(X + j * BLOCK + tl.arange(0, BLOCK))
    tl.store(Y + tl.arange(0, BLOCK), acc)


def test_kernel_with_facts_compiles_to_cubin() -> None:
    with triton_ext_range_recorded() as plans:
        k = compile_kernel(scaled_copy, {"X": "*fp32", "Y": "*fp32", "n": "i32"}, {"BLOCK": 128})
    assert k.asm["cubin"], "no cubin"
    ttir = k.asm["ttir"]
    assert "triton_ext_range" not in ttir, "range_facts_lower must remove every fact before ttgir"
    assert "triton_ext_range" not in k.asm["ttgir"]
    ttir_plans = [p for p in plans if p.stage == "ttir"]
    assert ttir_plans and all("plugin.range_facts_lower" in p.order for p in ttir_plans), \
        [p.order for p in plans]


def test_facts_are_in_the_ir_before_lowering() -> None:
    """The front end builds the op with the bounds given in Python and the kernel's types."""
    src = ASTSource(scaled_copy, signature={"X": "*fp32", "Y": "*fp32", "n": "i32"},
                    constexprs={"BLOCK": 128})
    from triton._C.libtriton import ir
    from triton.compiler.compiler import make_backend

    backend = make_backend(TARGET)
    options = backend.parse_options({})
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    codegen_fns = backend.get_codegen_implementation(options)
    module_map = backend.get_module_map()
    mod = src.make_ir(TARGET, options, codegen_fns, module_map, context)
    text = mod.str_nodebug()
    assert "triton_ext_range.assume_range %arg2, 1, 16777216 : i32" in text
    assert "triton_ext_range.assume_range" in text and ", 0, 16777344 : tensor<128xi32>" in text
    # The i64 constants that carried the bounds are gone.
    assert "16777216 : i64" not in text and "arith.constant 1 : i64" not in text
    assert mod.verify()


def test_fact_in_called_function_is_inlined_and_lowered() -> None:
    k = compile_kernel(loop_sum, {"X": "*fp32", "Y": "*fp32", "n": "i32"}, {"BLOCK": 64})
    assert k.asm["cubin"]
    assert "triton_ext_range" not in k.asm["ttir"]


def test_same_ptx_as_without_facts() -> None:
    """The facts lower to nothing: with them, the kernel's PTX equals the one written without."""

    @triton.jit
    def plain(X, Y, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(X + offs, mask=mask)
        tl.store(Y + offs, x * 2, mask=mask)

    sig = {"X": "*fp32", "Y": "*fp32", "n": "i32"}
    with_facts = compile_kernel(scaled_copy, sig, {"BLOCK": 128}).asm["ptx"]
    without = compile_kernel(plain, sig, {"BLOCK": 128}).asm["ptx"]

    def body(ptx: str) -> list[str]:
        return [l for l in ptx.splitlines() if l.strip() and not l.lstrip().startswith(("//", ".file", ".loc"))
                and "scaled_copy" not in l and "plain" not in l and "debug" not in l]

    assert body(with_facts) == body(without)


# --------------------------------------------------------------------------- misuse


@triton.jit
def bad_empty(X, n):
    m = triton_ext_range.assume_range(n, 10, 2)
    tl.store(X, m)


@triton.jit
def bad_float(X, v):
    w = triton_ext_range.assume_range(v, 0, 1)
    tl.store(X, w)


@triton.jit
def bad_runtime_bound(X, n, k):
    m = triton_ext_range.assume_range(n, 0, k)
    tl.store(X, m)


@triton.jit
def bad_overflow(X, n):
    m = triton_ext_range.assume_range(n, 0, 1 << 40)
    tl.store(X, m)


@triton.jit
def bad_float_bound(X, n):
    m = triton_ext_range.assume_range(n, 0, 2.5)
    tl.store(X, m)


@triton.jit
def bad_unsigned(X, u):
    m = triton_ext_range.assume_range(u, 0, 1 << 31)
    tl.store(X, m)


@pytest.mark.parametrize("fn, signature, message", [
    (bad_empty, {"X": "*i32", "n": "i32"}, "empty range, lo (10) is greater than hi (2)"),
    (bad_float, {"X": "*fp32", "v": "fp32"}, "x must have an integer type (int8 ... int64), got fp32"),
    (bad_runtime_bound, {"X": "*i32", "n": "i32", "k": "i32"}, "hi must be a compile-time integer"),
    (bad_overflow, {"X": "*i32", "n": "i32"}, "hi = 1099511627776 does not fit int32"),
    (bad_float_bound, {"X": "*i32", "n": "i32"}, "hi must be an int, got float 2.5"),
    (bad_unsigned, {"X": "*u32", "u": "u32"}, "hi = 2147483648 does not fit uint32"),
])
def test_misuse_is_a_compile_error_at_the_users_line(fn, signature, message) -> None:
    with pytest.raises(CompilationError) as info:
        compile_kernel(fn, signature)
    text = str(info.value)
    assert message in text
    # The error points at the line of the call, in the user's source.
    line = next(l for l in fn.src.splitlines() if "assume_range" in l)
    assert line.strip() in text
    # Line 2 of the function (after the def line), column of the call, with a caret under it.
    assert text.startswith("at 2:8:") and info.value.node.lineno == 2


def test_outside_jit_is_refused() -> None:
    with pytest.raises(ValueError, match="triton.jit"):
        triton_ext_range.assume_range(1, 0, 2)


# --------------------------------------------------------------------------- helpers


class triton_ext_range_recorded:
    """Record the stage plans of compiles on this thread (which plugin passes were placed)."""

    def __enter__(self):
        import triton_ext

        self._cm = triton_ext.record_pipelines()
        return self._cm.__enter__()

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


def test_specialized_constant_argument_is_accepted() -> None:
    # An int argument equal to 1 is specialized into a constexpr by Triton's launcher: the fact
    # must accept it (found on the H200: n_cols == 1 in language/RangeFacts/check_gpu.py).
    src = ASTSource(scaled_copy, signature={"X": "*i32", "Y": "*i32", "n": "constexpr",
                                            "BLOCK": "constexpr"},
                    constexprs={"n": 1, "BLOCK": 128})
    compiled = triton.compile(src, target=TARGET)
    assert compiled.asm["cubin"]
