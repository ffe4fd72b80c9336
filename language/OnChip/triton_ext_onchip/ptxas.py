"""What ptxas says about a kernel, which Triton does not pass on.

ptxas runs every wgmma of a kernel to completion before the next instruction ("serialized") when
it cannot prove the asynchronous pipeline safe: registers too few, or an accumulator that a
non-wgmma instruction touches while its wgmma may still run. It reports that only as an info line
(C7510-C7515), and Triton discards ptxas's info output, so an overlapped schedule can silently
lose all its overlap. Spills to local memory are reported the same way and are as silent.
Compile with the divisibility the JIT gives aligned launches before reading them: without it the
ping-pong attention at head dim 128 spills 1340 bytes, with it none. ``ptxas_report`` runs the ptxas Triton uses for the target on the PTX again and reads both."""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

_MARKER = "wgmma.mma_async instructions are serialized"


@dataclass(frozen=True)
class PtxasReport:
    """ptxas's info lines for one kernel: registers, spill bytes, wgmma serialization."""

    registers: int
    spill_stores: int
    spill_loads: int
    serialized: str | None  # ptxas's message when it serializes the wgmmas, else None


def ptxas_report(ptx: str, arch: int = 90) -> PtxasReport:
    """Run ptxas on ``ptx`` (a compiled kernel's ``asm["ptx"]``) for ``sm_{arch}a`` with ``-v``."""
    from triton.backends.nvidia.compiler import get_ptxas

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "kernel.ptx"
        src.write_text(ptx)
        run = subprocess.run([get_ptxas(arch).path, f"-arch=sm_{arch}a", "-v", str(src), "-o",
                              str(Path(tmp) / "kernel.cubin")], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"ptxas failed on the kernel's PTX: {run.stderr.strip()[-2000:]}")
    text = run.stdout + run.stderr
    registers = re.search(r"Used (\d+) registers", text)
    spills = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", text)
    if registers is None or spills is None:
        raise RuntimeError(f"ptxas -v printed no register or spill line: {text.strip()[-2000:]}")
    serialized = [line for line in text.splitlines() if _MARKER in line]
    return PtxasReport(int(registers.group(1)), int(spills.group(1)), int(spills.group(2)),
                       serialized[0].split(":", 1)[-1].strip() if serialized else None)


def wgmma_serialization(ptx: str, arch: int = 90) -> str | None:
    """ptxas's message when it serializes the wgmmas of ``ptx`` for ``sm_{arch}a``, or None."""
    return ptxas_report(ptx, arch).serialized
