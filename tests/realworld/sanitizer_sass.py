"""Registers, spills, barriers and shared-memory accesses of corpus kernels, with and without a
sanitizer, compiled for sm_90 on this machine (no GPU needed; the wheel's ptxas and nvdisasm).

    PYTHONPATH=. TRITON_EXT_BUILD_DIR=$PWD/build python -m tests.realworld.sanitizer_sass \
        --pass nan_inf_check --only torchao_qt_int8_mm liger_cross_entropy [--option fast-path=warp]

Prints one row per kernel and variant (`off`, the pass with its default options, and each
`--option` set): registers, spill stores/loads (bytes), stack bytes, and in the SASS the
`BAR` instructions, shared-memory accesses (`STS` + `LDS`), global atomics/reductions and the
instruction count. What the CPU can say about a sanitizer's cost before a GPU run.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import triton


@dataclass
class Costs:
    regs: int
    spill_bytes: int
    stack: int
    bar: int
    shared: int
    atomics: int
    insts: int

    def row(self) -> str:
        return (f"{self.regs:4d} {self.spill_bytes:6d} {self.stack:5d} {self.bar:4d} "
                f"{self.shared:4d} {self.atomics:4d} {self.insts:6d}")


def _tool(name: str) -> str:
    return str(Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / name)


def costs_of(compiled: Any) -> Costs:
    with tempfile.TemporaryDirectory() as tmp:
        cubin = Path(tmp) / "k.cubin"
        cubin.write_bytes(compiled.asm["cubin"])
        res = subprocess.run([_tool("cuobjdump"), "-res-usage", str(cubin)], capture_output=True,
                             text=True, check=True).stdout
        sass = subprocess.run([_tool("nvdisasm"), str(cubin)], capture_output=True, text=True,
                              check=True).stdout
        (Path(tmp) / "k.ptx").write_text(compiled.asm["ptx"])
        # The options Triton's make_cubin passes (the same allocation as the cubin's).
        ptxas = subprocess.run([_tool("ptxas-blackwell"), "-lineinfo", "-v", "--regAllocOptLevel=2",
                                "--gpu-name", "sm_90a", str(Path(tmp) / "k.ptx"),
                                "-o", str(Path(tmp) / "v.cubin")], capture_output=True, text=True,
                               check=True).stderr
    m = re.search(r"REG:(\d+) STACK:(\d+)", res)
    spills = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", ptxas)
    if not m:
        raise RuntimeError(f"no resource usage in cuobjdump output: {res[:500]}")
    ops = [line.split(";")[0].split()[1:] for line in sass.splitlines()
           if re.search(r"/\*[0-9a-f]{4,}\*/", line)]
    ops = [o[1] if o and o[0].startswith("@") and len(o) > 1 else (o[0] if o else "") for o in ops]
    ops = [o for o in ops if o and not o.startswith(".")]  # .byte/.dword: line tables
    return Costs(regs=int(m.group(1)),
                 spill_bytes=int(spills.group(1)) + int(spills.group(2)) if spills else -1,
                 stack=int(m.group(2)),
                 bar=sum(o.startswith("BAR.") for o in ops),
                 shared=sum(o.split(".")[0] in ("STS", "LDS") for o in ops),
                 atomics=sum(o.split(".")[0] in ("RED", "REDG", "ATOM", "ATOMG") for o in ops),
                 insts=sum(o != "NOP" for o in ops))


def compile_kernel(name: str, check: str | None, options: dict[str, str] | None = None,
                   keep: Path | None = None) -> Any:
    from triton.compiler import ASTSource

    import triton_ext
    from triton_ext.testing import CUDA90

    from tests.realworld.realworld_kernels import BY_NAME, Tensors, compile_args

    kernel = BY_NAME[name]
    fn = kernel.fn()
    launch = kernel.build(Tensors("meta"))
    signature, constexprs, attrs = compile_args(fn, launch)
    src = ASTSource(fn, signature=signature, constexprs=constexprs, attrs=attrs)
    opts = {"num_warps": launch.num_warps, "num_stages": launch.num_stages}
    if check is None:
        compiled = triton.compile(src, target=CUDA90, options=opts)
    else:
        with triton_ext.enabled(check, options=options or {}):
            compiled = triton.compile(src, target=CUDA90, options=opts)
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        label = "off" if check is None else "-".join([check, *(f"{k}={v}" for k, v in
                                                                (options or {}).items())])
        for ext in ("ttgir", "llir", "ptx"):
            (keep / f"{name}.{label}.{ext}").write_text(compiled.asm[ext])
    return compiled


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pass", dest="check", default="nan_inf_check")
    parser.add_argument("--only", nargs="+", required=True, help="corpus kernel names")
    parser.add_argument("--option", action="append", default=[],
                        help="extra variant, KEY=VALUE[,KEY=VALUE] (repeatable)")
    parser.add_argument("--no-off", action="store_true", help="skip the variant without the pass")
    parser.add_argument("--keep", type=Path, help="write TTGIR/LLIR/PTX of each variant here")
    args = parser.parse_args(argv)
    triton.knobs.cache.dir = tempfile.mkdtemp(prefix="sanitizer-sass-")
    variants: list[tuple[str, str | None, dict[str, str]]] = []
    if not args.no_off:
        variants.append(("off", None, {}))
    variants.append((args.check, args.check, {}))
    for spec in args.option:
        opts = dict(kv.split("=", 1) for kv in spec.split(","))
        variants.append((spec, args.check, opts))
    print(f"{'kernel':30s} {'variant':28s} regs spillB stack  BAR  S+L  atom  insts", flush=True)
    for name in args.only:
        for label, check, opts in variants:
            try:
                c = costs_of(compile_kernel(name, check, opts, args.keep))
                print(f"{name:30s} {label:28s} {c.row()}", flush=True)
            except Exception as exc:  # noqa: BLE001  (one row per failure, keep going)
                print(f"{name:30s} {label:28s} failed: {type(exc).__name__}: {exc}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
