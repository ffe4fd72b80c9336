"""What ptxas says about a kernel's wgmmas, which Triton does not pass on.

ptxas runs every wgmma of a kernel to completion before the next instruction ("serialized") when
it cannot prove the asynchronous pipeline safe: registers too few, or an accumulator that a
non-wgmma instruction touches while its wgmma may still run. It reports that only as an info line
(C7510-C7515), and Triton discards ptxas's info output, so an overlapped schedule can silently
lose all its overlap. ``wgmma_serialization`` runs the ptxas Triton uses for the target on the PTX
again and returns that line."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

_MARKER = "wgmma.mma_async instructions are serialized"


def wgmma_serialization(ptx: str, arch: int = 90) -> str | None:
    """ptxas's message when it serializes the wgmmas of ``ptx`` (a compiled kernel's
    ``asm["ptx"]``) for ``sm_{arch}a``, or None when it does not."""
    from triton.backends.nvidia.compiler import get_ptxas

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "kernel.ptx"
        src.write_text(ptx)
        run = subprocess.run([get_ptxas(arch).path, f"-arch=sm_{arch}a", "-v", str(src), "-o",
                              str(Path(tmp) / "kernel.cubin")], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"ptxas failed on the kernel's PTX: {run.stderr.strip()[-2000:]}")
    lines = [line for line in (run.stdout + run.stderr).splitlines() if _MARKER in line]
    return lines[0].split(":", 1)[-1].strip() if lines else None
