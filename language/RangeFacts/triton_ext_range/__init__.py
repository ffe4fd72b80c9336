"""``triton_ext_range``: value range facts for ``@triton.jit`` kernels.

::

    import triton_ext_range
    triton_ext_range.load()          # once, before the first compile

    @triton.jit
    def kernel(X, n, BLOCK: tl.constexpr):
        n = triton_ext_range.assume_range(n, 1, 1 << 20)   # 1 <= n <= 2**20
        offs = triton_ext_range.assume_range(tl.arange(0, BLOCK), 0, BLOCK - 1)

``assume_range(x, lo, hi)`` returns ``x`` unchanged and records, as the op
``triton_ext_range.assume_range`` of the ``range_facts_ir`` dialect, that every
element of ``x`` lies in ``[lo, hi]`` (signed, inclusive). Passes may read the
fact; ``range_facts_lower`` removes it at the end of the ``ttir`` stage, so the
compiled kernel is the one written without it. A value outside the range makes
the kernel's behaviour undefined.

Importing this module loads nothing and changes no state; :func:`load` loads
two plugins through ``triton_ext`` (preflighted, once each) and enables
``range_facts_lower``:

* ``libTritonExtRangeFactsIR`` (registry ``range_facts_ir``): the dialect, via
  ``ir.extend_dialects_with``, which every later ``ir.load_dialects`` picks up;
* ``libTritonExtRangeFacts`` (registry ``range_facts``): the builder op
  ``builder.create_assume_range``, via ``ir.builder.extend_with``.

Both must happen before a kernel that uses ``assume_range`` is compiled (not at
its first use inside a kernel: Triton creates the compile context and places the
stage passes before it generates any IR), so call ``load()`` once before that.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from triton.language import core

__all__ = ["assume_range", "load", "Bounds"]

DIALECT_EXTENSION = "range_facts_ir"
LANGUAGE_EXTENSION = "range_facts"
LOWERING_PASS = "range_facts_lower"


def load() -> None:
    """Load the dialect and builder plugins and enable ``range_facts_lower``.

    Idempotent: triton_ext loads each library once. Raises
    :class:`triton_ext.TritonExtError` (with the fix) when a plugin is not built.
    """
    import triton_ext

    # Enabling the lowering pass loads its library, which registers the dialect.
    triton_ext.enable(LOWERING_PASS)
    triton_ext.load_extension(LANGUAGE_EXTENSION)


@dataclass(frozen=True)
class Bounds:
    """The closed range ``[lo, hi]`` an element type can hold, as Python ints."""

    lo: int
    hi: int

    @classmethod
    def of(cls, dtype: core.dtype) -> Bounds:
        """What ``assume_range`` accepts for ``dtype``: the signed range of a
        signed type; for an unsigned type, the part where signed and unsigned
        order agree (``[0, 2**(n-1) - 1]``), since the op compares signed."""
        bits = dtype.primitive_bitwidth
        return cls(-(1 << (bits - 1)) if dtype.is_int_signed() else 0, (1 << (bits - 1)) - 1)


def _bound(name: str, value: Any) -> int:
    if not isinstance(value, core.constexpr):
        raise TypeError(
            f"assume_range: {name} must be a compile-time integer (a literal or tl.constexpr), "
            f"got a runtime value of type {getattr(value, 'type', type(value).__name__)}")
    v = value.value
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"assume_range: {name} must be an int, got {type(v).__name__} {v!r}")
    return v


@core.builtin
def assume_range(x: Any, lo: Any, hi: Any, _semantic: Any = None) -> core.tensor:
    """Return ``x`` with the promise that every element lies in ``[lo, hi]``.

    :param x: an integer scalar or tensor (``tl.int8`` ... ``tl.int64``; unsigned
        types with bounds in ``[0, 2**(n-1) - 1]``).
    :param lo: smallest value, a compile-time int (``tl.constexpr``).
    :param hi: largest value, a compile-time int with ``lo <= hi``.

    The result has the type of ``x``. An integer constant (Triton turns an int argument equal
    to 1 into one) is checked against the range and returned unchanged. Misuse (a float or bool ``x``, runtime
    or non-int bounds, ``lo > hi``, bounds outside the type) is a compile
    error at the calling line.
    """
    lo_v, hi_v = _bound("lo", lo), _bound("hi", hi)
    if isinstance(x, core.constexpr) and isinstance(x.value, int) and not isinstance(x.value, bool):
        # Triton specializes integer arguments equal to 1 into constexprs, so a runtime
        # argument can arrive here as a constant: check it against the range and keep it.
        if not lo_v <= x.value <= hi_v:
            raise ValueError(f"assume_range: the constant {x.value} is outside [{lo_v}, {hi_v}]")
        return x
    if isinstance(x, core.constexpr) or not isinstance(x, core.tensor):
        raise TypeError(
            f"assume_range: x must be an integer tensor or scalar computed in the kernel, got "
            f"{x!r}; a compile-time constant needs no range fact")
    dtype = x.dtype
    if dtype.is_bool() or not dtype.is_int():
        raise TypeError(f"assume_range: x must have an integer type (int8 ... int64), got {dtype}")
    if lo_v > hi_v:
        raise ValueError(f"assume_range: empty range, lo ({lo_v}) is greater than hi ({hi_v})")
    allowed = Bounds.of(dtype)
    for name, v in (("lo", lo_v), ("hi", hi_v)):
        if not allowed.lo <= v <= allowed.hi:
            raise ValueError(
                f"assume_range: {name} = {v} does not fit {dtype}; expected a value in "
                f"[{allowed.lo}, {allowed.hi}]" + (" (unsigned types: where signed and unsigned order agree)"
                                                    if not dtype.is_int_signed() else ""))
    builder = _semantic.builder
    if not hasattr(builder, "create_assume_range"):
        raise RuntimeError(
            "assume_range: Triton's builder has no create_assume_range; the range_facts plugin is "
            "not loaded (call triton_ext_range.load() before compiling, after `triton-ext build "
            "range_facts_ir range_facts`)")
    result = builder.create_assume_range([x.handle, builder.get_int64(lo_v), builder.get_int64(hi_v)])
    return core.tensor(_result_handle(result), x.type)


def _result_handle(result: Any) -> Any:
    """Triton 3.9.0 returns the result slot (values[0] of the callback); accept a list too."""
    if isinstance(result, (list, tuple)):
        if len(result) != 1:
            raise RuntimeError(f"assume_range: the builder returned {len(result)} values, expected 1")
        return result[0]
    return result
