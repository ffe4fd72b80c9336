"""End-to-end CPU tests of @@package@@.@@op@@: real kernels compiled through cubin with the stock
triton wheel, the dialect (@@dsnake@@) and builder (@@lsnake@@) plugins loaded through triton_ext.

No GPU is needed: triton.compile with a GPUTarget runs ttir -> ttgir -> llir -> ptx -> cubin.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton.compiler.errors import CompilationError

from triton_ext.testing import import_file, require_built

require_built("@@dsnake@@", "@@lsnake@@")  # an unbuilt plugin fails, never skips
# The package as its wheel installs it (import name @@package@@), from this folder.
@@package@@ = import_file(__file__, "../@@package@@", name="@@package@@")

TARGET = GPUTarget("cuda", 90, 32)
OP = "@@dialect@@.@@op@@"


@pytest.fixture(autouse=True)
def _fresh_cache(fresh_cache: Path) -> None:
    """Compile for real in every test: a cached kernel would skip the stages under test."""
    @@package@@.load()  # the testing plugin resets triton_ext between modules


def compile_kernel(fn, signature: dict[str, str], constexprs: dict[str, object] | None = None):
    return triton.compile(ASTSource(fn, signature=signature, constexprs=constexprs or {}),
                          target=TARGET)


def frontend_ir(fn, signature: dict[str, str], constexprs: dict[str, object]) -> str:
    """The kernel's IR as code generation leaves it, before any pass (the lowering included)."""
    from triton._C.libtriton import ir
    from triton.compiler.compiler import make_backend

    backend = make_backend(TARGET)
    options = backend.parse_options({})
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    src = ASTSource(fn, signature=signature, constexprs=constexprs)
    mod = src.make_ir(TARGET, options, backend.get_codegen_implementation(options),
                      backend.get_module_map(), context)
    assert mod.verify()
    return mod.str_nodebug()


@triton.jit
def scale_kernel(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    tl.store(Y + offs, @@package@@.@@op@@(x, 5), mask=mask)


@triton.jit
def _times_three(v):
    return @@package@@.@@op@@(v, 3)


@triton.jit
def helper_kernel(X, Y, n, BLOCK: tl.constexpr):
    # The op inside a called @triton.jit function: needs the dialect's inliner interface.
    offs = tl.arange(0, BLOCK)
    tl.store(Y + offs, _times_three(tl.load(X + offs)) + @@package@@.@@op@@(n, -2))


SIG = {"X": "*i32", "Y": "*i32", "n": "i32"}


def test_op_is_built_by_the_front_end() -> None:
    text = frontend_ir(scale_kernel, SIG, {"BLOCK": 128})
    assert f"{OP} %" in text and ", 5 : tensor<128xi32>" in text, text
    assert "5 : i64" not in text  # the constant that carried the factor is gone


def test_kernel_compiles_to_cubin_and_the_op_is_lowered() -> None:
    kernel = compile_kernel(scale_kernel, SIG, {"BLOCK": 128})
    assert kernel.asm["cubin"]
    ttir = kernel.asm["ttir"]
    assert OP not in ttir and "@@dialect@@" not in kernel.asm["ttgir"]
    assert "arith.constant dense<5> : tensor<128xi32>" in ttir and "arith.muli" in ttir


def test_op_in_a_called_function_and_on_a_scalar() -> None:
    text = frontend_ir(helper_kernel, SIG, {"BLOCK": 64})
    assert f"{OP} %arg2, -2 : i32" in text
    kernel = compile_kernel(helper_kernel, SIG, {"BLOCK": 64})
    assert kernel.asm["cubin"] and OP not in kernel.asm["ttir"]


def test_specialized_constant_argument_is_accepted() -> None:
    # Triton specializes an int argument equal to 1 into a constexpr: x arrives as a constant.
    sig = {"X": "*i32", "Y": "*i32", "n": "constexpr"}
    assert compile_kernel(helper_kernel, sig, {"n": 1, "BLOCK": 64}).asm["cubin"]


@triton.jit
def bad_float(X, v):
    y = @@package@@.@@op@@(v, 2)
    tl.store(X, y)


@triton.jit
def bad_runtime_factor(X, n, k):
    y = @@package@@.@@op@@(n, k)
    tl.store(X, y)


@triton.jit
def bad_float_factor(X, n):
    y = @@package@@.@@op@@(n, 2.5)
    tl.store(X, y)


@triton.jit
def bad_too_wide(X, n):
    y = @@package@@.@@op@@(n, 300)
    tl.store(X, y)


@triton.jit
def bad_negative_unsigned(X, n):
    y = @@package@@.@@op@@(n, -1)
    tl.store(X, y)


@pytest.mark.parametrize("fn, signature, message", [
    (bad_float, {"X": "*fp32", "v": "fp32"}, "x must have an integer type (int8 ... uint64), got fp32"),
    (bad_runtime_factor, {"X": "*i32", "n": "i32", "k": "i32"}, "factor must be a compile-time integer"),
    (bad_float_factor, {"X": "*i32", "n": "i32"}, "factor must be an int, got float 2.5"),
    (bad_too_wide, {"X": "*i8", "n": "i8"}, "factor = 300 does not fit int8; expected a value in [-128, 127]"),
    (bad_negative_unsigned, {"X": "*u32", "n": "u32"}, "factor = -1 does not fit uint32"),
])
def test_misuse_is_a_compile_error_at_the_users_line(fn, signature, message) -> None:
    with pytest.raises(CompilationError) as info:
        compile_kernel(fn, signature)
    text = str(info.value)
    assert message in text
    line = next(l for l in fn.src.splitlines() if "@@op@@(" in l)
    assert line.strip() in text  # the user's source line, with a caret under the call
    assert text.startswith("at 2:8:") and info.value.node.lineno == 2


def test_outside_jit_is_refused() -> None:
    with pytest.raises(ValueError, match="triton.jit"):
        @@package@@.@@op@@(1, 2)
