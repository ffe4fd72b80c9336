"""The transparent mode's output check: a variant is kept only if it computes what no pass computes.

Every pass the mode may pick promises the no-pass kernel's results, bit for bit (a split loop, a
renumbered grid, an earlier load or a PDL wait change no arithmetic). Its tests hold that promise
on the kernels they know; on a kernel nobody tested, the mode checks it on the launch itself,
before it times anything (:func:`triton_ext._variants.time_variants`): the no-pass kernel runs
twice on the launch's saved inputs (:class:`~triton_ext._backup.ArgumentBackup`), and each
variant once; a variant is dropped (``Decision.changed_outputs``) unless the memory its launch
leaves equals what the no-pass kernel left.

Where the two no-pass runs already differ (float atomics add in whatever order the programs
arrive), bits cannot be the rule. For those bytes, each floating argument that covers them must
stay within :data:`ENVELOPE` times the largest difference between the two no-pass runs (NaN
where no pass gave NaN); an argument of any other type, or bytes no argument's dtype describes,
make every variant unverifiable, and the mode keeps no pass.

This is a check on one input, not a proof: the pass's own tests (differential, integer limits)
are what make it correct. It catches a pass that miscomputes the kernel at hand.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ._backup import ArgumentBackup, reach_bytes

__all__ = ["ENVELOPE", "OutputsUnverifiable", "OutputCheck"]

#: How far past the no-pass kernel's own run-to-run difference a variant may land, in the bytes
#: where the no-pass kernel is not deterministic: one more sample of a reordered float sum can
#: reach past the largest difference two samples showed, but not by an order of magnitude.
ENVELOPE = 8.0
#: Bytes compared at once (the comparison's temporary is as large as its slice).
_CHUNK = 64 * 2**20


class OutputsUnverifiable(Exception):
    """The no-pass kernel's outputs differ between two runs where no floating dtype can bound the
    difference: no variant can be checked, so none is kept."""


def _equal(a: Any, b: Any) -> bool:
    """Whether two same-sized contiguous ``uint8`` tensors hold the same bytes (in slices)."""
    import torch  # on first use: importing triton_ext must not import torch

    n = a.numel()
    return all(torch.equal(a[i:i + _CHUNK], b[i:i + _CHUNK]) for i in range(0, n, _CHUNK))


def _typed(buffer: Any, start: int, tensor: Any) -> Any:
    """``tensor``'s elements as they lie in ``buffer`` (bytes ``[start, ...)`` of ``tensor``'s
    storage, a ``uint8`` tensor), read with ``tensor``'s dtype, shape and strides, as float32
    (float64 for a float64 tensor)."""
    import torch  # on first use: importing triton_ext must not import torch

    first, end = reach_bytes(tensor)
    raw = buffer[first - start:end - start]
    try:
        raw = raw.view(tensor.dtype)
    except RuntimeError:  # not aligned for the dtype where this region's copy starts: realign
        raw = raw.clone().view(tensor.dtype)
    raw = raw.as_strided(tensor.shape, tensor.stride(), raw.storage_offset())
    return raw.double() if tensor.dtype == torch.float64 else raw.float()  # compared in a wide type


@dataclass
class _Uncertain:
    """A floating argument over bytes where the no-pass runs differ (in backup region ``region``)
    and how far, at most, the second run moved its values from the first's."""

    tensor: Any
    region: int
    tolerance: float


@dataclass
class OutputCheck:
    """What the no-pass kernel leaves in the launch's memory, and :meth:`differs`, which tells
    whether a variant's launch left the same."""

    backup: ArgumentBackup
    reference: list[Any]  # per backup region: its bytes after the first no-pass run
    uncertain: list[_Uncertain]
    #: Regions whose bytes differ between the two no-pass runs -> the bytes under their floating
    #: arguments (compared with :data:`ENVELOPE`; every other byte still bit for bit).
    loose: dict[int, Any]

    @classmethod
    def of(cls, backup: ArgumentBackup, tensors: list[Any], launch_stock: Callable[[], Any]) -> OutputCheck:
        """Run the no-pass kernel twice from the saved inputs and keep what it leaves.

        Raises :class:`OutputsUnverifiable` where the two runs differ in bytes no floating
        argument covers."""
        import torch  # on first use: importing triton_ext must not import torch

        with torch.no_grad():
            backup.restore()
            launch_stock()
            reference = [alias.clone() for alias, _ in backup.regions]
            backup.restore()
            launch_stock()
            check = cls(backup, reference, [], {})
            for i, (alias, _) in enumerate(backup.regions):
                if not _equal(alias, reference[i]):
                    check._bound(i, tensors)
        return check

    def _bound(self, region: int, tensors: list[Any]) -> None:
        import torch  # on first use: importing triton_ext must not import torch

        alias, _ = self.backup.regions[region]
        start, storage = alias.storage_offset(), alias.untyped_storage().data_ptr()
        floating = [t for t in tensors if t.numel() and t.is_floating_point()
                    and t.untyped_storage().data_ptr() == storage
                    and start <= reach_bytes(t)[0] and reach_bytes(t)[1] <= start + alias.numel()]
        # Every byte that moved must lie under a floating argument, else nothing bounds it.
        under = torch.zeros(alias.numel(), dtype=torch.bool, device=alias.device)
        for t in floating:
            first, end = reach_bytes(t)
            under[first - start:end - start] = True
        if not bool(under[alias != self.reference[region]].all()):
            raise OutputsUnverifiable("no pass kept: the no-pass kernel's outputs differ between two runs outside its "
                                      "floating arguments (integers or other data written in a run-dependent order)")
        self.loose[region] = under
        for t in floating:
            now, before = _typed(alias, start, t), _typed(self.reference[region], start, t)
            gap = (now - before).abs().nan_to_num(nan=0.0, posinf=0.0)
            self.uncertain.append(_Uncertain(t, region, float(gap.max())))

    def differs(self) -> str | None:
        """After a variant's launch: None when it left what the no-pass kernel left, else what differs."""
        import torch  # on first use: importing triton_ext must not import torch

        with torch.no_grad():
            for i, (alias, _) in enumerate(self.backup.regions):
                if i not in self.loose:
                    if not _equal(alias, self.reference[i]):
                        wrong = int((alias != self.reference[i]).sum())
                        return f"{wrong} of {alias.numel()} bytes differ from the no-pass kernel's outputs"
                elif bool(((alias != self.reference[i]) & ~self.loose[i]).any()):
                    return "bytes the no-pass kernel writes the same in every run differ from its outputs"
            for u in self.uncertain:
                alias = self.backup.regions[u.region][0]
                start = alias.storage_offset()
                now = _typed(alias, start, u.tensor)
                ref = _typed(self.reference[u.region], start, u.tensor)
                ok = (now == ref) | ((now - ref).abs() <= ENVELOPE * u.tolerance) | (now.isnan() & ref.isnan())
                if not bool(ok.all()):
                    return (f"{int((~ok).sum())} values of a {tuple(u.tensor.shape)} {u.tensor.dtype} argument differ from "
                            f"the no-pass kernel's by more than {ENVELOPE:g} times its own run-to-run difference "
                            f"({u.tolerance:.3g})")
        return None

    def release(self) -> None:
        self.reference.clear()
        self.uncertain.clear()
        self.loose.clear()
