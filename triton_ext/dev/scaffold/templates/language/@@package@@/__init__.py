"""``@@package@@``: ``@@op@@(x, factor)`` for ``@triton.jit`` kernels.

Scaffolded by ``triton-ext new language @@lcamel@@``; replace ``@@op@@`` with your functions::

    import @@package@@
    @@package@@.load()               # once, before the first compile

    @triton.jit
    def kernel(X, Y, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(Y + offs, @@package@@.@@op@@(tl.load(X + offs), 3))   # x * 3

``@@op@@(x, factor)`` returns ``x * factor`` (wrapping) as the op ``@@dialect@@.@@op@@`` of the
``@@dsnake@@`` dialect; ``@@lower_pass@@`` lowers it to ``arith.muli`` at the end of the
``ttir`` stage.

Importing this module loads nothing and changes no state; :func:`load` loads two plugins
through ``triton_ext`` (preflighted, once each) and enables ``@@lower_pass@@``:

* ``libTritonExt@@dcamel@@`` (registry ``@@dsnake@@``): the dialect, via
  ``ir.extend_dialects_with``, which every later ``ir.load_dialects`` picks up;
* ``libTritonExt@@lcamel@@`` (registry ``@@lsnake@@``): the builder op
  ``builder.create_@@opfn@@``, via ``ir.builder.extend_with``.

Both must happen before a kernel that uses ``@@op@@`` is compiled (not at its first use inside a
kernel: Triton creates the compile context and places the stage passes before it generates any
IR), so call ``load()`` once before that.
"""

from __future__ import annotations

from typing import Any

from triton.language import core

__all__ = ["@@op@@", "load", "factor_range"]

DIALECT_EXTENSION = "@@dsnake@@"
LANGUAGE_EXTENSION = "@@lsnake@@"
LOWERING_PASS = "@@lower_pass@@"
_BUILDER_METHOD = "create_@@opfn@@"


def load() -> None:
    """Load the dialect and builder plugins and enable ``@@lower_pass@@``.

    Idempotent: triton_ext loads each library once. Raises :class:`triton_ext.TritonExtError`
    (with the fix) when a plugin is not built.
    """
    import triton_ext

    # Enabling the lowering pass loads its library, which registers the dialect.
    triton_ext.enable(LOWERING_PASS)
    triton_ext.load_extension(LANGUAGE_EXTENSION)


def factor_range(dtype: core.dtype) -> tuple[int, int]:
    """The factors ``@@op@@`` accepts for ``dtype``: the values of the type (signed or unsigned)."""
    bits = dtype.primitive_bitwidth
    if dtype.is_int_signed():
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def _factor(value: Any) -> int:
    if not isinstance(value, core.constexpr):
        raise TypeError(
            "@@op@@: factor must be a compile-time integer (a literal or tl.constexpr), got a "
            f"runtime value of type {getattr(value, 'type', type(value).__name__)}")
    v = value.value
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"@@op@@: factor must be an int, got {type(v).__name__} {v!r}")
    return v


@core.builtin
def @@op@@(x: Any, factor: Any, _semantic: Any = None) -> core.tensor:
    """Return ``x * factor``, element by element, wrapping on overflow.

    :param x: an integer scalar or tensor (``tl.int8`` ... ``tl.uint64``). A compile-time int
        (a literal, or an argument Triton specialized, such as 1) becomes a scalar first, as in
        ``x + 0``.
    :param factor: a compile-time int (``tl.constexpr``) that fits the type of ``x``.

    The result has the type of ``x``. Misuse (a float, bool or pointer ``x``, a runtime or
    non-int factor, a factor outside the type) is a compile error at the calling line.
    """
    f = _factor(factor)
    if isinstance(x, core.constexpr):
        if isinstance(x.value, bool) or not isinstance(x.value, int):
            raise TypeError(f"@@op@@: x must be an integer, got the constant {x.value!r}")
        x = _semantic.to_tensor(x)
    if not isinstance(x, core.tensor):
        raise TypeError(f"@@op@@: x must be an integer tensor or scalar, got {x!r}")
    dtype = x.dtype
    if dtype.is_bool() or not dtype.is_int():
        raise TypeError(f"@@op@@: x must have an integer type (int8 ... uint64), got {dtype}")
    lo, hi = factor_range(dtype)
    if not lo <= f <= hi:
        raise ValueError(f"@@op@@: factor = {f} does not fit {dtype}; expected a value in [{lo}, {hi}]")
    builder = _semantic.builder
    create = getattr(builder, _BUILDER_METHOD, None)
    if create is None:
        raise RuntimeError(
            f"@@op@@: Triton's builder has no {_BUILDER_METHOD}; the @@lsnake@@ plugin is not "
            "loaded (call @@package@@.load() before compiling, after `triton-ext build @@dsnake@@ "
            "@@lsnake@@`)")
    # Unsigned factors above 2**63 - 1 go as their two's complement bit pattern in i64.
    f64 = f - (1 << 64) if f >= 1 << 63 else f
    result = create([x.handle, builder.get_int64(f64)])
    return core.tensor(_result_handle(result), x.type)


def _result_handle(result: Any) -> Any:
    """Triton 3.9.0 returns the result slot (values[0] of the callback); accept a list too."""
    if isinstance(result, (list, tuple)):
        if len(result) != 1:
            raise RuntimeError(f"@@op@@: the builder returned {len(result)} values, expected 1")
        return result[0]
    return result
