"""Issue 26 on a GPU: the LoopSplit reproducer through the ordinary JIT, with and without the pass.

    python -m passes.LoopSplit.check_issue26_gpu [--out FILE]   # from the repository root

Launches ``kern[(1,)](out, v)`` for the issue's ten divisors (unsigned d = 1, 7, 2^31 - 1,
2^31, 3e9, 2^32 - 1; signed nq = -1, -2, -7, 3), each without and with
``triton_ext.enabled("loop_split")``, and compares the stored 16x16 tile with the exact host
value (acc[0, 0] = 44 for every divisor). Before the fix 6 of the 10 launches with the pass
stored 0. Prints the results as JSON, writes them to --out (default $OUT/check-issue26-h200.json
when $OUT is set) and exits 1 on any mismatch.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import torch
import triton

import triton_ext
from tests.differential import gpu_kernels as gk


def _launch(name: str, divisor: int, split: bool) -> list[int]:
    out = torch.zeros(256, dtype=torch.int32, device="cuda")
    kernel = getattr(gk, name)
    if split:
        with triton_ext.enabled("loop_split"):
            kernel[(1,)](out, divisor)
    else:
        kernel[(1,)](out, divisor)
    torch.cuda.synchronize()
    return out.cpu().tolist()


def _split_happened(name: str, divisor: int) -> bool:
    """The pass changed the kernel: its TTIR has more than one loop."""
    kernel = getattr(gk, name)
    with triton_ext.enabled("loop_split"):
        compiled = kernel.warmup(torch.empty(256, dtype=torch.int32, device="cuda"), divisor,
                                 grid=(1,))
    return compiled.asm["ttir"].count("scf.for") > 1


def _commit() -> str:
    from triton_ext.bench.gpu import checkout_commit

    return checkout_commit()  # refuses a dirty checkout unless TRITON_EXT_ALLOW_DIRTY=1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.out is None and os.environ.get("OUT"):
        args.out = Path(os.environ["OUT"]) / "check-issue26-h200.json"
    rows: list[dict[str, Any]] = []
    for name, divisor in gk.ISSUE26_LAUNCHES:
        signed = name == "issue26_signed"
        expected = gk.issue26_reference(divisor, signed)
        without = _launch(name, divisor, split=False)
        with_pass = _launch(name, divisor, split=True)
        rows.append({
            "kernel": name, "divisor": divisor,
            "without": {"acc00": without[0], "tile_ok": without == expected},
            "with": {"acc00": with_pass[0], "tile_ok": with_pass == expected},
            "reference_acc00": expected[0],
            "ok": without == with_pass == expected,
        })
    report = {
        "check": "issue 26 LoopSplit reproducer through the ordinary JIT",
        "device": torch.cuda.get_device_name(0), "triton": triton.__version__,
        "torch": torch.__version__, "commit": _commit(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "split": _split_happened("issue26_unsigned", 2**31),
        "launches": rows, "mismatches": sum(not r["ok"] for r in rows),
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    return 1 if report["mismatches"] else 0


if __name__ == "__main__":
    sys.exit(main())
