"""Saving and restoring the memory a launch's tensor arguments can reach (the transparent mode).

The mode times several variants of a kernel on the launch's own arguments, so it must give every
variant, and then the user's own launch, the memory the launch started with (as Triton's
autotuner does with ``restore_value``). ``t.clone()`` / ``t.copy_(saved)`` on the arguments
themselves fails on launches that work without the mode (issue 26.3):

* an expanded view (``bias.expand(m, n)``, stride 0, as FlagGems' ``addmm`` passes its bias):
  ``copy_`` refuses a destination whose elements share memory;
* an ``nn.Parameter`` (any leaf that requires grad) with grad mode on: ``copy_`` is an in-place
  operation autograd refuses, and on other tensors it bumps the version counter, which breaks a
  later ``backward`` through a graph that saved the tensor;
* a large argument on a nearly full GPU: the copy runs out of memory.

So the backup works on bytes, not on the arguments: for each tensor the byte range of its
storage it can reach (from its storage offset to its last element, strides included; one byte
range per storage, overlapping ranges of several arguments merged), read and written through a
fresh ``uint8`` tensor set on that storage (:func:`_alias`). That tensor is no view of the
argument: no autograd, its own version counter, no overlap, any dtype. The total is checked
against a cap (:data:`triton_ext._settings.settings.auto_backup_mb`,
``TRITON_EXT_AUTO_BACKUP_MB``, default 1024 MiB) and against half the device's free memory
before anything is allocated, and an out-of-memory error while copying refuses the backup
(:class:`BackupRefused`) instead of failing the launch.

Memory a kernel reaches outside its arguments' ranges is not saved. Through pointers stored in
memory (a table of pointers, as a grouped GEMM takes) the compiled kernel shows it, and
:func:`relaunch_hazard` refuses such a kernel before anything runs; indexing past a
view's last element into the rest of its storage does not show, and is not saved.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from ._settings import settings

__all__ = ["BackupRefused", "ArgumentBackup", "tensors_of", "descriptor_reach", "reach_bytes",
           "relaunch_hazard", "refuse_relaunch_hazard"]


class BackupRefused(Exception):
    """The arguments cannot be saved (too large, out of memory, memory that is not a tensor's);
    the message says why. The transparent mode then launches with no pass."""


def tensors_of(values: Iterable[Any], where: str = "argument") -> Iterator[Any]:
    """The torch tensors among ``values``, tuples and lists searched (Triton's tuple arguments);
    for a host tensor descriptor, the view of its base that it reaches (:func:`descriptor_reach`).

    Raises :class:`BackupRefused` for another object with a ``data_ptr`` or a ``base`` (a raw
    pointer wrapper): its memory cannot be found, so not saved."""
    import torch  # on first use: importing triton_ext must not import torch

    for i, value in enumerate(values):
        if isinstance(value, torch.Tensor):
            yield value
        elif isinstance(value, (tuple, list)):
            yield from tensors_of(value, f"{where} {i}, element")
        elif (isinstance(getattr(value, "base", None), torch.Tensor) and hasattr(value, "block_shape")
              and getattr(value, "mode", "tiled") == "tiled"):  # im2col descriptors reach otherwise: refused
            yield descriptor_reach(value, f"{where} {i}")
        elif hasattr(value, "data_ptr") or hasattr(value, "base"):
            raise BackupRefused(f"{where} {i} is a {type(value).__name__}, whose memory cannot be copied and restored")


def descriptor_reach(descriptor: Any, where: str = "argument") -> Any:
    """The memory a host tensor descriptor (Triton's or Gluon's ``TensorDescriptor``: ``base``,
    ``shape``, ``strides``, ``block_shape``) lets a kernel reach, as a view of its base.

    TMA reads and writes only coordinates inside ``shape`` (it fills or drops the rest), at
    ``base + sum(coordinate * stride)`` elements, so that strided view is exactly its memory,
    however the descriptor was made. A shape or strides that reach past the base's storage
    cannot be saved: refused."""
    base = descriptor.base
    shape, strides = [int(n) for n in descriptor.shape], [int(s) for s in descriptor.strides]
    try:
        return base.as_strided(shape, strides, base.storage_offset())
    except RuntimeError as exc:  # past the storage's end, or negative strides
        first = (str(exc).splitlines() or [""])[0]
        raise BackupRefused(f"{where} is a {type(descriptor).__name__} whose shape {shape} and strides {strides} "
                            f"reach memory its base cannot be viewed over: {first}") from None


#: What in a kernel's IR makes a launch the mode adds unsafe, and why. A pointer the kernel did not
#: get as an argument is made from an integer it loaded (``tl.load(table + i).to(tl.pointer_type(
#: ...))``, with or without ``bitcast=True``; Triton has no pointers to pointers, its pointer types
#: point to numbers only): it points wherever the data says, outside every argument's byte range,
#: where the backup cannot restore what an extra launch writes (an accumulation through a table of
#: pointers would add once per launch) and the output check cannot compare it. A device print is
#: output the user sees, once per launch.
_RELAUNCH_HAZARDS = (
    ("tt.int_to_ptr", "it makes a pointer from an integer (tt.int_to_ptr), reaching memory outside its "
                      "arguments that the mode can neither restore nor compare"),
    ("tt.print", "it prints (tt.print), and every launch the mode adds would print again"),
)


def relaunch_hazard(kernel: Any, refuse_without_ir: bool = True) -> str | None:
    """Why the transparent mode must not launch ``kernel`` (a compiled Triton kernel) more often
    than the user does (:data:`_RELAUNCH_HAZARDS`), or None. Read from the kernel's first IR
    (``ttir``, or ``ttgir`` for a Gluon kernel); a kernel without either is refused too, as nothing
    shows what it does, unless ``refuse_without_ir`` is false."""
    asm = getattr(kernel, "asm", None)
    ir = next((asm[stage] for stage in ("ttir", "ttgir") if isinstance(asm, dict) and isinstance(asm.get(stage), str)),
              None)
    if ir is None:
        return "its IR is not available to show what an extra launch would do, so no pass is tried" \
            if refuse_without_ir else None
    for marker, why in _RELAUNCH_HAZARDS:
        if marker in ir:
            return f"{why}, so no pass is tried"
    return None


def refuse_relaunch_hazard(kernel: Any) -> None:
    """Raise :class:`BackupRefused` with :func:`relaunch_hazard`' reason, if any."""
    reason = relaunch_hazard(kernel)
    if reason:
        raise BackupRefused(reason)


def reach_bytes(tensor: Any) -> tuple[int, int]:
    """``(first, end)``: the byte range of ``tensor``'s storage its elements cover (end excluded);
    ``(0, 0)`` for an empty tensor. Strides may be 0 (expanded views) or in any order."""
    if tensor.numel() == 0:
        return (0, 0)
    size = tensor.element_size()
    first = tensor.storage_offset() * size
    last = sum((n - 1) * abs(s) for n, s in zip(tensor.shape, tensor.stride()))
    return (first, first + (last + 1) * size)


def _size(nbytes: int) -> str:
    if nbytes < 1024:
        return f"{nbytes} B"
    if nbytes < 2**20:
        return f"{nbytes / 1024:.1f} KiB"
    return f"{nbytes / 2**20:.1f} MiB"


def _alias(storage: Any, device: Any, start: int, end: int) -> Any:
    """A fresh contiguous ``uint8`` tensor over bytes ``[start, end)`` of ``storage``."""
    import torch  # on first use: importing triton_ext must not import torch

    alias = torch.empty(0, dtype=torch.uint8, device=device)
    alias.set_(storage, start, (end - start,), (1,))
    return alias


@dataclass
class ArgumentBackup:
    """The saved bytes of every tensor argument of one launch; :meth:`restore` writes them back."""

    #: ``(alias over the argument's memory, saved copy)`` per merged byte range.
    regions: list[tuple[Any, Any]] = field(default_factory=list)
    nbytes: int = 0

    @classmethod
    def of(cls, values: Iterable[Any], cap_bytes: int | None = None, copies: int = 1) -> ArgumentBackup:
        """Save the memory the tensors among ``values`` reach.

        ``cap_bytes``: refuse above this total (default: ``settings.auto_backup_mb``). ``copies``:
        how many copies of it the caller will hold (the transparent mode keeps a second one, the
        no-pass kernel's outputs: :mod:`triton_ext._outputs`). Raises :class:`BackupRefused` when
        the total is above the cap or the copies above half the device's free memory, when a copy
        runs out of memory, or for an argument whose memory is unknown."""
        import torch  # on first use: importing triton_ext must not import torch

        if cap_bytes is None:
            cap_bytes = int(settings.auto_backup_mb * 2**20)
        spans: dict[tuple[Any, int], tuple[Any, list[tuple[int, int]]]] = {}
        for t in tensors_of(values):
            start, end = reach_bytes(t)
            if end <= start:
                continue
            storage = t.untyped_storage()
            spans.setdefault((t.device, storage.data_ptr()), (storage, []))[1].append((start, end))
        merged: list[tuple[Any, Any, int, int]] = []
        for (device, _), (storage, ranges) in spans.items():
            ranges.sort()
            lo, hi = ranges[0]
            for start, end in ranges[1:]:
                if start <= hi:
                    hi = max(hi, end)
                else:
                    merged.append((storage, device, lo, hi))
                    lo, hi = start, end
            merged.append((storage, device, lo, hi))
        total = sum(hi - lo for _, _, lo, hi in merged)
        if total > cap_bytes:
            raise BackupRefused(f"the tensor arguments reach {_size(total)}, above the backup cap of "
                                f"{_size(cap_bytes)} (TRITON_EXT_AUTO_BACKUP_MB)")
        for device in {d for _, d, _, _ in merged if d.type == "cuda"}:
            on_device = sum(hi - lo for _, d, lo, hi in merged if d == device)
            free, _ = torch.cuda.mem_get_info(device)
            if copies * on_device > free // 2:
                raise BackupRefused(f"the tensor arguments reach {_size(on_device)} on {device}; {copies} "
                                    f"cop{'y' if copies == 1 else 'ies'} of that are more than half its free memory "
                                    f"({_size(free)})")
        backup = cls(nbytes=total)
        try:
            with torch.no_grad():
                for storage, device, lo, hi in merged:
                    alias = _alias(storage, device, lo, hi)
                    backup.regions.append((alias, alias.clone()))
        except Exception as exc:  # torch.OutOfMemoryError on a GPU, RuntimeError from the CPU allocator
            backup.regions.clear()
            first = (str(exc).splitlines() or [""])[0]
            raise BackupRefused(f"saving {_size(total)} of arguments failed: {type(exc).__name__}: {first}") from None
        return backup

    def restore(self) -> None:
        """Write the saved bytes back (no allocation, no autograd, no version-counter bump)."""
        import torch  # on first use: importing triton_ext must not import torch

        with torch.no_grad():
            for alias, saved in self.regions:
                alias.copy_(saved)

    def release(self) -> None:
        self.regions.clear()
