"""CPU mode: compile every kernel with and without its pass through cubin (no GPU, no torch)."""


from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from .spec import CPU_TARGET, BenchSpec, Case, Variant


# --------------------------------------------------------------------------- #
# CPU mode
# --------------------------------------------------------------------------- #


def top_level_loops(ir: str, indent: int = 4) -> int:
    """Number of ``scf.for`` ops directly in a function body of a TTIR/TTGIR module."""
    pad = " " * indent
    return len(re.findall(rf"^{pad}(?:%\S+(?:, %\S+)* = )?scf\.for ", ir, flags=re.M))


@dataclass
class CpuCheck:
    """The outcome of compiling one kernel combination with and without the spec's passes."""

    spec: str
    variant: str
    dtype: str
    constexprs: dict[str, Any]
    seconds: float
    problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None


def compile_cpu(kernel: Any, spec: BenchSpec, case: Case, passes: tuple[str, ...], options: Mapping[str, Any]) -> Any:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    import triton_ext

    src = ASTSource(kernel, signature=spec.signature(case.dtype), constexprs=spec.constexprs(case))
    target = GPUTarget(*CPU_TARGET)
    opts = spec.compile_options(case)
    if not passes:
        return triton.compile(src, target=target, options=opts)
    with triton_ext.enabled(*passes, **{k.replace("-", "_"): v for k, v in options.items()}):
        return triton.compile(src, target=target, options=opts)


def check_cpu(spec: BenchSpec, quick: bool = False, log: Callable[[str], None] = print) -> list[CpuCheck]:
    """Compile each distinct (kernel, dtype, constexprs, options) of ``spec`` through cubin, with
    and without its passes for pass variants, and apply the IR predicate."""
    seen: dict[tuple[Any, ...], CpuCheck] = {}
    checks: list[CpuCheck] = []
    jobs: list[tuple[Variant, Case]] = []
    for case in spec.cases(quick):
        for v in spec.variants:
            key = (v.name, case.dtype, tuple(sorted(spec.constexprs(case).items())),
                   tuple(sorted(spec.compile_options(case).items())))
            if key not in seen:
                seen[key] = CpuCheck(spec.name, v.name, case.dtype, spec.constexprs(case), 0.0)
                jobs.append((v, case))
    compiled_off: dict[tuple[Any, ...], Any] = {}
    for i, (v, case) in enumerate(jobs, 1):
        start = time.perf_counter()
        check = CpuCheck(spec.name, v.name, case.dtype, spec.constexprs(case), 0.0)
        try:
            off_key = (id(v.kernel), case.dtype, tuple(sorted(spec.constexprs(case).items())),
                       tuple(sorted(spec.compile_options(case).items())))
            off = compiled_off.get(off_key)
            if off is None:
                off = compiled_off[off_key] = compile_cpu(v.kernel, spec, case, (), {})
            if not off.asm.get("cubin"):
                check.problem = "compilation without the pass did not reach cubin"
            elif v.role == "pass":
                names = v.enabled_passes(spec.passes)
                on = compile_cpu(v.kernel, spec, case, names, v.options)
                if not on.asm.get("cubin"):
                    check.problem = f"compilation with {', '.join(names)} did not reach cubin"
                else:
                    ir_off, ir_on = off.asm[spec.ir_stage], on.asm[spec.ir_stage]
                    if spec.ir_check is not None:
                        check.problem = spec.ir_check(v, ir_off, ir_on)
                    elif _strip_locations(ir_off) == _strip_locations(ir_on):
                        check.problem = (f"{', '.join(names)} left the {spec.ir_stage} of "
                                         f"{getattr(v.kernel, '__name__', v.name)} unchanged")
        except Exception as exc:  # a compile error is a failed check, reported with the case
            check.problem = f"{type(exc).__name__}: {exc}"
        check.seconds = time.perf_counter() - start
        checks.append(check)
        consts = " ".join(f"{k}={val}" for k, val in check.constexprs.items())
        status = "ok" if check.ok else f"FAIL: {check.problem}"
        log(f"[{i}/{len(jobs)}] {spec.name} {v.name:22} {case.dtype} {consts} ({check.seconds:.1f}s) {status}")
    return checks


def _strip_locations(ir: str) -> str:
    return "\n".join(line for line in re.sub(r"\s*loc\([^\n]*\)", "", ir).splitlines() if not line.startswith("#loc"))


