"""``triton_ext_onchip``: explicit shared-memory buffers, asynchronous copies, mbarriers and
asynchronous warp-group dots for ``@triton.jit`` kernels (NVIDIA, sm_90).

::

    import triton_ext_onchip as oc
    oc.load()                                              # once, before the first compile

    @triton.jit
    def kernel(A, ...):
        ring = oc.alloc(tl.float16, [128, 64], count=3)   # 3 buffers of 128x64 fp16
        buf = oc.index(ring, i % 3)                        # one of them
        oc.copy_async(buf, a_ptrs, mask=m)                 # cp.async global -> shared
        oc.commit()                                        # close the group of copies
        oc.wait_copies(0)                                  # until no group is in flight
        acc = oc.mma(buf, b_buf, acc, pending=0)           # wgmma on shared operands
        x = oc.read(buf)                                   # shared -> registers
        oc.write(buf, x)                                   # registers -> shared

See README.md in this folder for the model (who waits on what), each op and the mistakes the
checks catch. Every check raises at the user's source line (Triton reports the exception as a
``CompilationError`` pointing at the call).

Importing this module loads nothing and changes no state; :func:`load` (call it once, before
the first compile of a kernel that uses these ops) loads two plugins through ``triton_ext`` and
enables the passes of ``PASSES``: ``libTritonExtOnChipIR`` (registry ``onchip_ir``: the
``triton_ext_onchip`` dialect and the passes) and ``libTritonExtOnChip`` (registry ``onchip``: the
``builder.create_onchip_*`` callbacks). It cannot wait for the first use inside a kernel: Triton
creates the compile context and places the stage passes before it generates any IR.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

from triton.language import core

__all__ = [
    "alloc", "index", "trans", "read", "write", "copy_async", "copy_tma", "commit", "wait_copies", "barriers",
    "expect", "arrive", "wait", "named_wait", "named_arrive", "mma", "mma_wait", "split", "store_tma", "store_wait",
    "buffer", "buffer_type", "load",
]

DIALECT_EXTENSION = "onchip_ir"
LANGUAGE_EXTENSION = "onchip"
LOWERING_PASS = "onchip_lower"
RESTORE_PASS = "onchip_restore_waits"
#: Every pass of ``onchip_ir`` that ``load()`` enables: the two that lower and keep the author's
#: waits, ``onchip_prune`` (removes buffers nobody reads and barriers nobody waits on) and
#: ``onchip_check_expect`` (an ``expect`` must announce the bytes its TMA copies bring).
PASSES = (LOWERING_PASS, RESTORE_PASS, "onchip_prune", "onchip_check_expect")

#: Element types a buffer may hold (barriers are int64 and made by ``barriers``).
BUFFER_DTYPES = ("fp16", "bf16", "fp32", "fp8e4nv", "fp8e5", "int8", "int16", "int32", "int64",
                 "uint8", "uint16", "uint32")
#: Element types ``mma`` accepts for its operands (accumulating in fp32).
MMA_DTYPES = ("fp16", "bf16")
#: Hopper shared memory per block (227 KiB usable).
SHARED_BYTES = 227 * 1024


def load() -> None:
    """Load the dialect and builder plugins and enable the passes of ``PASSES`` (idempotent)."""
    import triton_ext

    for name in PASSES:
        triton_ext.enable(name)
    triton_ext.load_extension(LANGUAGE_EXTENSION)


# --------------------------------------------------------------------------------------------
# Values


@dataclass(frozen=True)
class buffer_type(core.base_type):
    """The type of a buffer value: element type, shape, and what it is.

    ``kind`` is ``"ring"`` (``count`` buffers, from ``alloc``), ``"buffer"`` (one of them, from
    ``index``), ``"barriers"`` (from ``barriers``) or ``"barrier"`` (one mbarrier).
    """

    element_ty: core.dtype
    shape: Tuple[int, ...]
    kind: str
    ir_type: Any = None

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, buffer_type) and self.element_ty == other.element_ty
                and self.shape == other.shape and self.kind == other.kind)

    def __hash__(self) -> int:
        return hash((str(self.element_ty), self.shape, self.kind))

    def _unflatten_ir(self, handles: List[Any], cursor: int) -> Tuple["buffer", int]:
        return buffer(handles[cursor], self), cursor + 1

    def _flatten_ir_types(self, builder: Any, out: List[Any]) -> None:
        out.append(self.ir_type)

    def mangle(self) -> str:
        return f"OC{self.kind}{self.element_ty.mangle()}S{'_'.join(map(str, self.shape))}SOC"

    def __str__(self) -> str:
        return f"onchip.{self.kind}<{self.element_ty}, {list(self.shape)}>"

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.element_ty.primitive_bitwidth // 8


class buffer(core.base_value):
    """A shared-memory buffer (or ring of buffers, or mbarrier) inside a kernel."""

    def __init__(self, handle: Any, type: buffer_type) -> None:
        self.handle = handle
        self.type = type

    def _flatten_ir(self, handles: List[Any]) -> None:
        handles.append(self.handle)

    def _set_name(self, builder: Any, name: str) -> None:
        self.handle.set_loc(builder.create_name_loc(name, self.handle.get_loc()))

    @property
    def dtype(self) -> core.dtype:
        return self.type.element_ty

    @property
    def shape(self) -> Tuple[int, ...]:
        return self.type.shape

    def __str__(self) -> str:
        return str(self.type)


def _make(handle: Any, element_ty: core.dtype, shape: Sequence[int], kind: str) -> buffer:
    return buffer(handle, buffer_type(element_ty, tuple(shape), kind, handle.get_type()))


# --------------------------------------------------------------------------------------------
# Checks (each raises at the calling line)


def _const_int(name: str, value: Any, op: str, lo: int = 0) -> int:
    if isinstance(value, core.constexpr):
        value = value.value
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{op}: {name} must be a compile-time int (a literal or tl.constexpr), "
                        f"got {value!r}")
    if value < lo:
        raise ValueError(f"{op}: {name} must be >= {lo}, got {value}")
    return value


def _shape(shape: Any, op: str) -> Tuple[int, ...]:
    shape = core._unwrap_if_constexpr(shape)
    if isinstance(shape, core.tuple):  # a list literal in a kernel arrives as tl.tuple
        shape = list(shape.values)
    if not isinstance(shape, (list, tuple)) or not shape:
        raise TypeError(f"{op}: shape must be a non-empty list of compile-time ints, got {shape!r}")
    dims = tuple(_const_int("every dim of shape", d, op, lo=1) for d in shape)
    for d in dims:
        if d & (d - 1):
            raise ValueError(f"{op}: every dim of shape must be a power of two, got {list(dims)}")
    return dims


def _expect(value: Any, kinds: Tuple[str, ...], op: str, what: str) -> buffer:
    if not isinstance(value, buffer) or value.type.kind not in kinds:
        got = value.type if isinstance(value, buffer) else getattr(value, "type", type(value).__name__)
        hint = ""
        if isinstance(value, buffer) and value.type.kind in ("ring", "barriers"):
            hint = f"; pick one with oc.index({what}, i)"
        raise TypeError(f"{op}: {what} must be {' or '.join(kinds)}, got {got}{hint}")
    return value


def _builder(_semantic: Any, name: str) -> Any:
    builder = _semantic.builder
    if not hasattr(builder, f"create_{name}"):
        raise RuntimeError(f"triton_ext_onchip: Triton's builder has no create_{name}; the onchip "
                           "plugin is not loaded (call triton_ext_onchip.load() before compiling, after "
                           "`triton-ext build onchip_ir onchip`)")
    return builder


def _pred(pred: Any, _semantic: Any, op: str) -> Any:
    p = _semantic.to_tensor(pred)
    if p.type.is_block():
        raise TypeError(f"{op}: pred must be a scalar, got {p.type}")
    if not p.dtype.is_int1():
        p = _semantic.not_equal(p, _semantic.to_tensor(0))
    return p.handle


def _i32(value: Any, _semantic: Any, op: str, name: str) -> Any:
    v = _semantic.to_tensor(value)
    if v.type.is_block() or not v.dtype.is_int():
        raise TypeError(f"{op}: {name} must be an integer scalar, got {v.type}")
    if v.dtype != core.int32:
        v = _semantic.cast(v, core.int32)
    return v.handle


# --------------------------------------------------------------------------------------------
# Buffers


@core.builtin
def alloc(dtype: Any, shape: Any, count: Any = 1, _semantic: Any = None) -> buffer:
    """``count`` shared-memory buffers of ``shape`` and ``dtype``, as one ring.

    Pick one with ``index(ring, i)``. 2-D buffers get the NVMMA shared layout (usable by
    ``mma``, ``copy_async``, ``read`` and ``write``). All dims are compile-time powers of two;
    the ring must fit Hopper's 227 KiB of shared memory.
    """
    op = "alloc"
    dtype = core._unwrap_if_constexpr(dtype)
    if not isinstance(dtype, core.dtype) or dtype.name not in BUFFER_DTYPES:
        raise TypeError(f"{op}: dtype must be one of {', '.join(BUFFER_DTYPES)} (e.g. tl.float16), "
                        f"got {dtype!r}")
    dims = _shape(shape, op)
    n = _const_int("count", count, op, lo=1)
    nbytes = n * math.prod(dims) * dtype.primitive_bitwidth // 8
    if nbytes > SHARED_BYTES:
        raise ValueError(f"{op}: {n} x {list(dims)} {dtype} needs {nbytes} bytes of shared memory, "
                         f"more than the {SHARED_BYTES} a Hopper block has")
    b = _builder(_semantic, "onchip_alloc")
    proto = b.get_null_value(dtype.to_ir(b))
    handle = b.create_onchip_alloc([proto, b.get_int32(n)] + [b.get_int32(d) for d in dims])
    return _make(handle, dtype, (n, ) + dims, "ring")


@core.builtin
def index(ring: Any, i: Any, _semantic: Any = None) -> buffer:
    """Buffer ``i`` of a ring from ``alloc`` (or mbarrier ``i`` of ``barriers``).

    A compile-time ``i`` is checked against the ring's size; a runtime ``i`` must lie in
    ``[0, count)`` (not checked on the device).
    """
    op = "index"
    ring = _expect(ring, ("ring", "barriers"), op, "ring")
    count = ring.shape[0]
    if isinstance(i, core.constexpr) or isinstance(i, int):
        iv = _const_int("i", i, op)
        if iv >= count:
            raise IndexError(f"{op}: index {iv} is out of range for a ring of {count}")
    kind = "buffer" if ring.type.kind == "ring" else "barrier"
    b = _builder(_semantic, "onchip_index")
    handle = b.create_onchip_index([ring.handle, _i32(i, _semantic, op, "i")])
    return _make(handle, ring.dtype, ring.shape[1:], kind)


@core.builtin
def read(buf: Any, _semantic: Any = None) -> core.tensor:
    """The contents of ``buf`` as a tensor (``ttg.local_load``)."""
    buf = _expect(buf, ("buffer", ), "read", "buf")
    b = _builder(_semantic, "onchip_read")
    handle = b.create_onchip_read([buf.handle])
    return core.tensor(handle, core.block_type(buf.dtype, list(buf.shape)))


@core.builtin
def trans(buf: Any, _semantic: Any = None) -> buffer:
    """``buf`` ([R, C]) seen as its transpose ([C, R]) without moving data
    (``ttg.memdesc_trans``): ``mma(q, oc.trans(k_buf), s)`` computes ``q @ k^T`` from a
    row-major K tile."""
    op = "trans"
    buf = _expect(buf, ("buffer", ), op, "buf")
    if len(buf.shape) != 2:
        raise ValueError(f"{op}: expects a 2-D buffer, got shape {list(buf.shape)}")
    b = _builder(_semantic, "onchip_trans")
    handle = b.create_onchip_trans([buf.handle])
    return _make(handle, buf.dtype, (buf.shape[1], buf.shape[0]), "buffer")


def _dims(value: core.tensor) -> Tuple[int, ...]:
    """A tensor's shape as plain ints (Triton keeps constexprs there)."""
    return tuple(core._unwrap_if_constexpr(d) for d in value.shape) if value.type.is_block() else ()


def _same_tensor(value: Any, buf: buffer, op: str) -> core.tensor:
    if not isinstance(value, core.tensor) or not value.type.is_block():
        raise TypeError(f"{op}: value must be a tensor of shape {list(buf.shape)}, got "
                        f"{getattr(value, 'type', value)!r}")
    shape = _dims(value)
    if shape != buf.shape:
        raise ValueError(f"{op}: value has shape {list(shape)}, the buffer {list(buf.shape)}")
    if value.dtype != buf.dtype:
        raise TypeError(f"{op}: value has dtype {value.dtype}, the buffer {buf.dtype}; "
                        f"convert it first (value.to({buf.dtype}))")
    return value


@core.builtin
def write(buf: Any, value: Any, _semantic: Any = None) -> None:
    """Store ``value`` (same shape and dtype) into ``buf`` (``ttg.local_store``)."""
    op = "write"
    buf = _expect(buf, ("buffer", ), op, "buf")
    value = _same_tensor(value, buf, op)
    b = _builder(_semantic, "onchip_view")
    view = b.create_onchip_view([buf.handle, b.get_int32(0)])
    ptr_ty = core.block_type(core.pointer_type(buf.dtype), list(buf.shape))
    _semantic.store(core.tensor(view, ptr_ty), value, None, core._normalize_cache_policy(None, None, None))


@core.builtin
def copy_async(buf: Any, pointer: Any, mask: Any = None, other: Any = None, _semantic: Any = None) -> None:
    """Start copying ``*pointer`` (a tensor of pointers shaped like ``buf``) into ``buf``
    (cp.async; ``ttg.async_copy_global_to_local``).

    Masked-off elements are filled with zeros (``other`` may only be 0). The data is there only after ``commit()``
    closed the group the copy belongs to and ``wait_copies(n)`` saw that group complete.
    """
    op = "copy_async"
    buf = _expect(buf, ("buffer", ), op, "buf")
    if not isinstance(pointer, core.tensor) or not pointer.type.is_block() or not pointer.dtype.is_ptr():
        raise TypeError(f"{op}: pointer must be a tensor of pointers, got {getattr(pointer, 'type', pointer)!r}")
    if _dims(pointer) != buf.shape:
        raise ValueError(f"{op}: pointer has shape {list(_dims(pointer))}, the buffer {list(buf.shape)}")
    if pointer.dtype.element_ty != buf.dtype:
        raise TypeError(f"{op}: pointer points to {pointer.dtype.element_ty}, the buffer holds {buf.dtype}")
    if buf.dtype.primitive_bitwidth * buf.shape[-1] < 32:
        raise ValueError(f"{op}: rows of {buf.shape[-1]} x {buf.dtype} are under 4 bytes, the smallest cp.async")
    mask = core._unwrap_if_constexpr(mask)
    other = core._unwrap_if_constexpr(other)
    # cp.async fills masked-off elements with zeros and nothing else (Triton's lowering drops any
    # other value silently), so only 0 is accepted.
    if other is not None and not (isinstance(other, (int, float)) and not isinstance(other, bool)
                                  and other == 0):
        raise ValueError(f"{op}: masked-off elements are zero-filled by cp.async; other must be 0 "
                         f"(or left out), got {other!r}")
    if mask is not None:
        mask = _semantic.to_tensor(mask)
        if not mask.dtype.is_int1():
            raise TypeError(f"{op}: mask must be a boolean tensor, got {mask.type}")
        if _dims(mask) != buf.shape:
            mask = _semantic.broadcast_impl_shape(mask, list(buf.shape))
        other = _semantic.cast(_semantic.to_tensor(0), buf.dtype)
    elif other is not None:
        raise ValueError(f"{op}: other needs a mask")
    loaded = _semantic.load(pointer, mask, other, core._normalize_cache_policy(None, None, None), False)
    b = _builder(_semantic, "onchip_view")
    view = b.create_onchip_view([buf.handle, b.get_int32(1)])
    ptr_ty = core.block_type(core.pointer_type(buf.dtype), list(buf.shape))
    _semantic.store(core.tensor(view, ptr_ty), loaded, None, core._normalize_cache_policy(None, None, None))


@core.builtin
def copy_tma(buf: Any, desc: Any, offsets: Any, bar: Any, pred: Any = True, _semantic: Any = None) -> None:
    """Start a TMA copy of the block of ``desc`` at ``offsets`` (element offsets, one per dim)
    into ``buf`` (``ttng.async_tma_copy_global_to_local``).

    Completion is signalled on ``bar``: the copy's bytes count towards the barrier's current
    phase, so announce them first with ``expect(bar, nbytes)`` (``nbytes`` = the sum over the
    copies tracked by that phase), then ``wait(bar, phase)`` before reading ``buf``.
    """
    op = "copy_tma"
    buf = _expect(buf, ("buffer", ), op, "buf")
    bar = _expect(bar, ("barrier", ), op, "bar")
    if not isinstance(desc, core.tensor_descriptor_base):
        raise TypeError(f"{op}: desc must be a tensor descriptor (a TensorDescriptor argument or "
                        f"tl.make_tensor_descriptor), got {getattr(desc, 'type', desc)!r}")
    block = tuple(core._unwrap_if_constexpr(d) for d in desc.block_shape)
    if block != buf.shape:
        raise ValueError(f"{op}: the descriptor's block is {list(block)}, the buffer {list(buf.shape)}")
    if desc.dtype != buf.dtype:
        raise TypeError(f"{op}: the descriptor holds {desc.dtype}, the buffer {buf.dtype}")
    offsets = core._unwrap_if_constexpr(offsets)
    if isinstance(offsets, core.tuple):
        offsets = list(offsets.values)
    if not isinstance(offsets, (list, tuple)) or len(offsets) != len(block):
        raise ValueError(f"{op}: offsets must list one offset per dim ({len(block)}), got {offsets!r}")
    coords = [_i32(o, _semantic, op, "every offset") for o in offsets]
    b = _builder(_semantic, "onchip_tma_copy")
    b.create_onchip_tma_copy([desc.handle, bar.handle, buf.handle, _pred(pred, _semantic, op)] + coords)


@core.builtin
def store_tma(desc: Any, offsets: Any, buf: Any, _semantic: Any = None) -> None:
    """Start a TMA store of ``buf`` into the block of ``desc`` at ``offsets`` (element offsets,
    one per dim; ``ttng.async_tma_copy_local_to_global``): the GEMM epilogue that writes a whole
    tile from shared memory, out-of-range parts clipped by the TMA unit.

    Asynchronous: ``buf`` must not be overwritten before ``store_wait(n)`` leaves at most ``n``
    newer stores in flight. A buffer filled by ``write`` is made visible to the TMA unit first
    (OnChip puts ``fence.proxy.async`` before the store; Triton the block barrier).
    """
    op = "store_tma"
    buf = _expect(buf, ("buffer", ), op, "buf")
    if not isinstance(desc, core.tensor_descriptor_base):
        raise TypeError(f"{op}: desc must be a tensor descriptor (a TensorDescriptor argument or "
                        f"tl.make_tensor_descriptor), got {getattr(desc, 'type', desc)!r}")
    block = tuple(core._unwrap_if_constexpr(d) for d in desc.block_shape)
    if block != buf.shape:
        raise ValueError(f"{op}: the descriptor's block is {list(block)}, the buffer {list(buf.shape)}")
    if desc.dtype != buf.dtype:
        raise TypeError(f"{op}: the descriptor holds {desc.dtype}, the buffer {buf.dtype}")
    offsets = core._unwrap_if_constexpr(offsets)
    if isinstance(offsets, core.tuple):
        offsets = list(offsets.values)
    if not isinstance(offsets, (list, tuple)) or len(offsets) != len(block):
        raise ValueError(f"{op}: offsets must list one offset per dim ({len(block)}), got {offsets!r}")
    coords = [_i32(o, _semantic, op, "every offset") for o in offsets]
    b = _builder(_semantic, "onchip_tma_store")
    b.create_onchip_tma_store([desc.handle, buf.handle] + coords)


@core.builtin
def store_wait(pending: Any = 0, _semantic: Any = None) -> None:
    """Wait until at most ``pending`` of this program's ``store_tma`` calls are still reading
    their buffers (``ttng.async_tma_store_wait``); the older buffers may then be overwritten."""
    n = _const_int("pending", pending, "store_wait")
    b = _builder(_semantic, "onchip_tma_store_wait")
    b.create_onchip_tma_store_wait([b.get_int32(n)])


@core.builtin
def commit(_semantic: Any = None) -> None:
    """Close the group of ``copy_async`` calls issued since the last commit."""
    _builder(_semantic, "onchip_commit").create_onchip_commit([])


@core.builtin
def wait_copies(pending: Any, _semantic: Any = None) -> None:
    """Wait until at most ``pending`` committed groups are still in flight; the buffers of
    every older group are then filled and visible to all threads of the block."""
    n = _const_int("pending", pending, "wait_copies")
    b = _builder(_semantic, "onchip_wait_copies")
    b.create_onchip_wait_copies([b.get_int32(n)])


# --------------------------------------------------------------------------------------------
# mbarriers


@core.builtin
def barriers(count: Any, arrivals: Any = 1, _semantic: Any = None) -> buffer:
    """``count`` mbarriers, each initialised so that a phase completes after ``arrivals``
    arrivals (and, if ``expect`` was called for the phase, the expected bytes)."""
    op = "barriers"
    n = _const_int("count", count, op, lo=1)
    a = _const_int("arrivals", arrivals, op, lo=1)
    b = _builder(_semantic, "onchip_barriers")
    handle = b.create_onchip_barriers([b.get_int32(n), b.get_int32(a)])
    return _make(handle, core.int64, (n, 1), "barriers")


@core.builtin
def expect(bar: Any, nbytes: Any, pred: Any = True, _semantic: Any = None) -> None:
    """Arrive once on ``bar`` and add ``nbytes`` to the bytes its current phase waits for."""
    op = "expect"
    bar = _expect(bar, ("barrier", ), op, "bar")
    n = _const_int("nbytes", nbytes, op, lo=1)
    if n >= 1 << 20:
        raise ValueError(f"{op}: nbytes must be below 2**20 (the mbarrier tx-count), got {n}")
    b = _builder(_semantic, "onchip_expect")
    b.create_onchip_expect([bar.handle, b.get_int32(n), _pred(pred, _semantic, op)])


@core.builtin
def arrive(bar: Any, count: Any = 1, pred: Any = True, _semantic: Any = None) -> None:
    """Arrive ``count`` times on ``bar``."""
    op = "arrive"
    bar = _expect(bar, ("barrier", ), op, "bar")
    n = _const_int("count", count, op, lo=1)
    b = _builder(_semantic, "onchip_arrive")
    b.create_onchip_arrive([bar.handle, b.get_int32(n), _pred(pred, _semantic, op)])


@core.builtin
def wait(bar: Any, phase: Any, pred: Any = True, _semantic: Any = None) -> None:
    """Wait until phase ``phase`` (0 or 1: its parity) of ``bar`` has completed.

    A wait for a compile-time even phase on a barrier of this kernel that nothing has armed yet
    (no ``arrive``, ``expect`` or ``copy_tma`` on it comes first, and the barrier was not passed
    to a helper, loop or ``split``) never returns, and is an error here.
    """
    op = "wait"
    bar = _expect(bar, ("barrier", ), op, "bar")
    if isinstance(phase, (core.constexpr, int)):
        _const_int("phase", phase, op)
    b = _builder(_semantic, "onchip_wait")
    try:
        b.create_onchip_wait([bar.handle, _i32(phase, _semantic, op, "phase"), _pred(pred, _semantic, op)])
    except ValueError as exc:  # the builder's static check (OnChipBuilder.cpp, neverArmed)
        raise ValueError(str(exc).removeprefix("create_onchip_wait: ")) from None


#: Hardware named barriers free for kernels: Triton's warp specialization uses 0 (the default
#: warp group), 1 (the partitions' switch loop) and 2 + i for partition i.
NAMED_BARRIER_IDS = range(8, 16)


def _named_barrier(op: str, barrier: Any, threads: Any, _semantic: Any) -> None:
    i = _const_int("barrier", barrier, op)
    if i not in NAMED_BARRIER_IDS:
        raise ValueError(f"{op}: barrier must be in {NAMED_BARRIER_IDS.start}..{NAMED_BARRIER_IDS.stop - 1} "
                         f"(0 .. 7 are Triton's own: the default warp group, the warp-specialize loop and one "
                         f"per partition), got {i}")
    n = _const_int("threads", threads, op, lo=32)
    if n % 32 or n > 1024:
        raise ValueError(f"{op}: threads must be a multiple of 32 (whole warps) up to 1024, got {n}")
    verb = "sync" if op == "named_wait" else "arrive"
    b = _semantic.builder
    # A side-effecting inline asm with no operands: one instance per thread, never reordered
    # across the wgmma issues and waits (also side-effecting asm) around it.
    b.create_inline_asm(f"bar.{verb} {i}, {n};", "=r", [], [b.get_int32_ty()], False, 1)


@core.builtin
def named_wait(barrier: Any, threads: Any, _semantic: Any = None) -> None:
    """Hardware named barrier ``barrier`` (8..15): arrive and wait until ``threads`` threads (whole
    warps) have arrived on it, counting ``named_arrive``. A barrier of the SM itself rather than an
    mbarrier in shared memory polled with ``try_wait``: the turn-taking of ping-pong warp groups
    (FlashAttention-3's warp scheduler barrier) waits on these."""
    _named_barrier("named_wait", barrier, threads, _semantic)


@core.builtin
def named_arrive(barrier: Any, threads: Any, _semantic: Any = None) -> None:
    """Arrive on hardware named barrier ``barrier`` without waiting (see ``named_wait``)."""
    _named_barrier("named_arrive", barrier, threads, _semantic)


# --------------------------------------------------------------------------------------------
# Warp-group dot


@core.builtin
def mma(a: Any, b: Any, acc: Any, pending: Any = 0, _semantic: Any = None) -> core.tensor:
    """``acc + a @ b`` on the tensor cores, reading ``b`` ([K, N]) and ``a`` ([M, K]) straight
    from shared memory (Hopper wgmma, issued asynchronously). ``a`` may also be a tensor (read
    from registers, as attention's ``P @ V`` needs).

    Returns once at most ``pending`` mma groups are still running: ``pending=0`` waits for this
    one; ``pending=1`` lets it overlap the next iteration, and then only the buffers of the
    *previous* mma may be overwritten. ``acc`` is an fp32 [M, N] tensor; M must be a multiple of
    64, N of 8 (at most 256 per warp group column), K of 16; needs num_warps a multiple of 4.
    """
    op = "mma"
    a_in_registers = isinstance(a, core.tensor)
    if a_in_registers:
        if not a.type.is_block() or len(a.shape) != 2:
            raise ValueError(f"{op}: a must be a 2-D buffer or tensor, got {a.type}")
        a_shape = _dims(a)
    else:
        a = _expect(a, ("buffer", ), op, "a")
        a_shape = a.shape
    b_ = _expect(b, ("buffer", ), op, "b")
    if len(a_shape) != 2 or len(b_.shape) != 2:
        raise ValueError(f"{op}: a and b must be 2-D, got {list(a_shape)} and {list(b_.shape)}")
    if a.dtype != b_.dtype or a.dtype.name not in MMA_DTYPES:
        raise TypeError(f"{op}: a and b must both be {' or '.join(MMA_DTYPES)}, got {a.dtype} and {b_.dtype}")
    (m, k), (k2, n) = a_shape, b_.shape
    if k != k2:
        raise ValueError(f"{op}: inner dims differ: a is {list(a_shape)}, b is {list(b_.shape)}")
    if not isinstance(acc, core.tensor) or not acc.type.is_block():
        raise TypeError(f"{op}: acc must be an fp32 tensor of shape [{m}, {n}], got {getattr(acc, 'type', acc)!r}")
    if _dims(acc) != (m, n):
        raise ValueError(f"{op}: acc has shape {list(_dims(acc))}, a @ b is [{m}, {n}]")
    if acc.dtype != core.float32:
        raise TypeError(f"{op}: acc must be float32, got {acc.dtype}")
    if m % 64 or n % 8 or k % 16:
        raise ValueError(f"{op}: wgmma needs M % 64 == 0, N % 8 == 0 and K % 16 == 0, got "
                         f"M={m}, N={n}, K={k}")
    p = _const_int("pending", pending, op)
    bld = _builder(_semantic, "onchip_mma_operand")
    if a_in_registers:
        ta = a
    else:
        va = bld.create_onchip_mma_operand([a.handle, bld.get_int32(p)])
        ta = core.tensor(va, core.block_type(a.dtype, [m, k]))
    vb = bld.create_onchip_mma_operand([b_.handle, bld.get_int32(p)])
    tb = core.tensor(vb, core.block_type(b_.dtype, [k, n]))
    return _semantic.dot(ta, tb, acc, None, None, core.float32)


# --------------------------------------------------------------------------------------------
# Warp specialization


@core.builtin
def split(functions_and_args: Any, worker_num_warps: Any, worker_num_regs: Any = None, _semantic: Any = None,
          _generator: Any = None) -> None:
    """Run ``@triton.jit`` functions side by side on separate warps (``ttg.warp_specialize``).

    ``functions_and_args`` is ``[(default_fn, default_args), (worker_fn, worker_args), ...]``:
    the default function runs on the kernel's ``num_warps`` warps, each worker on its own
    ``worker_num_warps[i]`` extra warps; all start together and the kernel continues after all
    have returned. The default function may use any value of the caller and must return nothing.
    Workers see only their arguments (buffers, barriers, descriptors, scalars) and must not
    create tensors (their layouts would assume the kernel's warp count); they are meant for
    issuing copies and arriving on barriers: a producer. Hand-offs go through mbarriers.

    ``worker_num_regs`` (optional, one per worker: multiples of 8 in [24, 256]) reallocates
    registers between warp groups (``setmaxnreg``): each worker's warp group keeps that many
    registers per thread and the default partition gets the rest of the register file (e.g. a
    one-warp TMA producer with 24 lets two consumer warp groups use 240 each). Lowers to the
    ``requestedRegisters`` of ``ttg.warp_specialize``; Triton pads the workers to whole warp
    groups and emits ``setmaxnreg.inc/dec`` in each partition.

    A worker whose warp count equals the kernel's ``num_warps`` may create tensors (its layouts
    are the kernel's): a second consumer warp group, as ping-pong schedules use.
    """
    op = "split"
    pairs = list(functions_and_args.values if isinstance(functions_and_args, core.tuple)
                 else core._unwrap_if_constexpr(functions_and_args))
    warps = core._unwrap_if_constexpr(worker_num_warps)
    warps = list(warps.values if isinstance(warps, core.tuple) else warps)
    warps = [_const_int("worker_num_warps", w, op, lo=1) for w in warps]
    regs = core._unwrap_if_constexpr(worker_num_regs)
    if regs is None:
        regs = [0] * len(warps)
    else:
        regs = list(regs.values if isinstance(regs, core.tuple) else regs)
        regs = [_const_int("worker_num_regs", r, op, lo=24) for r in regs]
        if len(regs) != len(warps):
            raise ValueError(f"{op}: {len(warps)} workers but {len(regs)} register counts")
        for r in regs:
            if r % 8 or r > 256:
                raise ValueError(f"{op}: register counts must be multiples of 8 in [24, 256], got {regs}")
    if len(pairs) < 2:
        raise ValueError(f"{op}: expects a default function and at least one worker, got {len(pairs)} entries")
    if len(warps) != len(pairs) - 1:
        raise ValueError(f"{op}: {len(pairs) - 1} workers but {len(warps)} warp counts")
    for w in warps:
        if w & (w - 1):
            raise ValueError(f"{op}: worker warp counts must be powers of two, got {warps}")
    entries = []
    for entry in pairs:
        entry = list(entry.values if isinstance(entry, core.tuple) else entry)
        if len(entry) != 2:
            raise TypeError(f"{op}: each entry must be (function, args), got {entry!r}")
        fn, args = core._unwrap_if_constexpr(entry[0]), entry[1]
        args = list(args.values if isinstance(args, core.tuple) else core._unwrap_if_constexpr(args))
        entries.append((fn, args))
    from triton.compiler.code_generator import flatten_values_to_ir, unflatten_ir_values

    (default_fn, default_args), workers = entries[0], entries[1:]
    worker_handles = []
    for fn, args in workers:
        for a in args:
            if isinstance(a, core.tensor) and a.type.is_block():
                raise TypeError(f"{op}: worker {getattr(fn, '__name__', fn)} gets a tensor argument; workers "
                                "take buffers, barriers, descriptors and scalars only")
        worker_handles.append(list(flatten_values_to_ir(args)))
    b = _builder(_semantic, "onchip_split_begin")
    captures = sum(worker_handles, [])
    marker = b.create_onchip_split_begin([b.get_int32(len(workers))] + [b.get_int32(w) for w in warps] +
                                         [b.get_int32(r) for r in regs] + captures)
    result = _generator.call_JitFunction(default_fn, default_args, kwargs={})
    if result is not None and not (isinstance(result, core.constexpr) and result.value is None):
        raise TypeError(f"{op}: the default function must return nothing")
    offset = 0
    for i, ((fn, args), handles) in enumerate(zip(workers, worker_handles)):
        b.create_onchip_split_enter([marker, b.get_int32(i)])
        block_args = [b.create_onchip_split_arg([marker, b.get_int32(i), b.get_int32(offset + j)])
                      for j in range(len(handles))]
        offset += len(handles)
        values = list(unflatten_ir_values(block_args, [a.type for a in args]))
        _generator.call_JitFunction(fn, values, kwargs={})
    b.create_onchip_split_end([marker])


#: asm string of the elementwise_inline_asm standing for mma_wait; onchip_lower replaces it by
#: ttng.warp_group_dot_wait (dialects/OnChipIR/OnChipIRLower.cpp), so it never reaches PTX.
MMA_WAIT_MARKER = "// triton_ext_onchip.mma_wait"


@core.builtin
def mma_wait(acc: Any, pending: Any = 0, _semantic: Any = None) -> core.tensor:
    """Wait until at most ``pending`` mma groups are running and return ``acc`` then.

    After ``mma(..., pending=1)`` in a loop, call ``mma_wait(acc, 0)`` once after the loop,
    before reading ``acc``. ``acc`` must come straight from ``mma`` (or a loop carrying it).
    """
    op = "mma_wait"
    if not isinstance(acc, core.tensor) or not acc.type.is_block() or acc.dtype != core.float32:
        raise TypeError(f"{op}: acc must be the fp32 accumulator returned by mma, got "
                        f"{getattr(acc, 'type', acc)!r}")
    p = _const_int("pending", pending, op)
    b = _semantic.builder
    call = b.create_inline_asm(f"{MMA_WAIT_MARKER} {p}", "=r,r", [acc.handle], [acc.type.to_ir(b)], False, 1)
    return core.tensor(call.get_result(0), acc.type)
