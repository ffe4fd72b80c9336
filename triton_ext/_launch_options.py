"""The transparent mode's launch-option variants: the launch's kernel with half or twice its warps,
or with one pipeline stage less or more.

Many kernels are launched with a ``num_warps`` their caller fixed once (vLLM's, SGLang's, fla's
and Liger's launchers; ``@triton.jit`` kernels launched without ``triton.autotune``), and the
count that is fastest depends on the GPU and the shapes. The mode times ``num_warps/2`` and
``num_warps*2`` beside the pass variants (``TRITON_EXT_AUTO_WARPS=0`` leaves them out), by the
same rules: the variant's launch must leave the no-pass kernel's outputs bit for bit, and it must
win both in GPU time and back to back. A chosen count is the kernel's launch metadata, so the
kernel placed in the JIT's cache under the launch's own key launches with it, on Triton's own
fast path (benchmarks/launch_option_probe_gpu.py measured the lever first: 1.2-1.8x on some fixed-
config kernels, 0.03x on others, so it is timed, never assumed).

Why a different warp count may keep the results bit for bit, and when it may not: Triton's
semantics do not depend on the warp count; its arithmetic order does where values of one result
are combined across threads or by one instruction. :func:`reorders` refuses a variant unless,
on the two kernels' TTGIR,

- every ``tt.reduce`` and ``tt.scan`` whose combine is not exact integer arithmetic sees the same
  operand layout along its axis (elements per thread, lanes and warps along it; the rest of the
  layout too, since another instruction shape or lane order could regroup it): it combines
  within each thread, then across the lanes, then across the warps that hold that axis, so the
  same layout along the axis is the same tree;
- every matrix multiply is the same operation with the same MMA encoding (version and
  instruction K): products spread their outputs over warps, never their ``K`` sum, but Hopper's
  warp-group MMA needs 4 warps, and Ampere's ``mma.sync`` below that rounds float sums otherwise
  (torchao's HQQ GEMM at 4 -> 2 warps and fla's gated-delta backward at 2 -> 4 changed bits on an
  H100) and, as Triton writes it, saturates int8 sums that ``wgmma`` wraps. Integer products are
  exact, so where every product of both kernels accumulates in int32 and neither kernel's PTX
  saturates a sum, the instruction may change: sums modulo 2^32 are equal in any order. The
  passes that declare ``joins: [num_warps]`` in the registry are compiled into every warp-count
  variant for this (one drops ``.satfinite`` from integer ``mma.sync``);
- it converts layouts no more often than the no-pass kernel: an observation kept as a rule, not
  a proof (Liger's RoPE at 4 -> 2 warps gained two conversions through shared memory, and 540
  bytes of its 16 MiB output changed, with no reduction or product in the kernel);
- its inline assembly, if any, is the no-pass kernel's: the same pure text over operands laid out
  alike (text that may depend on the lanes it runs on then runs on the same lanes).

Pipeline-depth variants (``num_stages_minus_1``, ``num_stages_plus_1``, 1 to 6 stages;
``TRITON_EXT_AUTO_STAGES=0`` leaves them out): software pipelining moves a loop's loads ahead, never its
arithmetic, so the same rules hold there and the same check runs;
``benchmarks/launch_option_probe_gpu.py --option num_stages`` left every output byte unchanged at
1, one less and one more stage on 65 GPU-bound kernels of the corpus and the hold-out set (fp32
atomics aside), and found up to 1.59x (torchao's fp8 blockwise GEMM at 3 stages, where its
launcher asks for 2). Timed in the mode on an H100 (ef4cdbe), they lifted the corpus from 1.022x to
1.025x back to back and the hold-out set from 1.033x to 1.051x (docs/transparent-mode.md).

Gluon kernels write their layouts for one warp count and pipeline by hand; they get no such
variant. The launch's own outputs are then compared bit for bit like every variant's
(:mod:`triton_ext._outputs`): that check caught the HQQ, gated-delta and RoPE cases on the H100
before the rules on products and conversions existed.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Mapping

__all__ = ["WARP_VARIANTS", "STAGE_VARIANTS", "MAX_WARPS", "MAX_STAGES", "is_option", "option_name", "split", "warps_for",
           "stages_for", "reorders", "may_change", "settled_stage", "launch_kwargs", "combinable",
           "reordering"]

#: The warp-count variants' names: ``num_warps/2`` and ``num_warps*2``, relative to the launch's count.
WARP_VARIANTS = ("num_warps/2", "num_warps*2")
_FACTOR = {"num_warps/2": 0.5, "num_warps*2": 2.0}
#: The largest count a variant asks for (Triton's own limit is 32 warps, 1024 threads).
MAX_WARPS = 16
#: The pipeline-depth variants' names, relative to the launch's ``num_stages``.
STAGE_VARIANTS = ("num_stages_minus_1", "num_stages_plus_1")
_STEP = {"num_stages_minus_1": -1, "num_stages_plus_1": 1}
#: The deepest pipeline a variant asks for (each stage holds one more copy of a loop's loaded
#: tiles in shared memory; one that does not fit fails to launch and is dropped).
MAX_STAGES = 6
#: Combine operations whose result does not depend on the order they are applied in (integer
#: arithmetic wraps modulo 2^n; float min/max can differ in the sign of a zero, so they are not here).
_EXACT = {"arith.addi", "arith.muli", "arith.andi", "arith.ori", "arith.xori", "arith.maxsi", "arith.minsi",
          "arith.maxui", "arith.minui"}


def is_option(name: str) -> bool:
    """Whether ``name`` is a launch-option variant (a warp count or a pipeline depth), not a pass."""
    return name in _FACTOR or name in _STEP


def option_name(option: str) -> str:
    """The launch option a variant changes: ``num_warps`` for ``num_warps/2``, ``num_stages`` for a depth."""
    return "num_warps" if option in _FACTOR else "num_stages"


def split(variant: str) -> tuple[list[str], str | None]:
    """``"a+num_warps*2"`` -> ``(["a"], "num_warps*2")``: the passes and the launch option, if any."""
    names = [n for n in variant.split("+") if n]
    options = [n for n in names if is_option(n)]
    if len(options) > 1:
        raise KeyError(f"{variant}: at most one launch-option variant")
    return [n for n in names if not is_option(n)], options[0] if options else None


def _gluon(fn: Any) -> bool:
    return fn is not None and bool(getattr(fn, "is_gluon", lambda: False)())


def warps_for(variant: str, base: int, fn: Any = None) -> int | None:
    """The warp count ``variant`` launches with when the launch asks for ``base``; ``base`` when
    it has no warp-count part; None when its count is out of range or ``fn`` is a Gluon kernel."""
    _, option = split(variant)
    if option not in _FACTOR:
        return base
    if _gluon(fn):
        return None
    count = int(base * _FACTOR[option])
    return count if 1 <= count <= MAX_WARPS and count != base else None


def stages_for(variant: str, base: int, fn: Any = None) -> int | None:
    """The ``num_stages`` ``variant`` launches with when the launch asks for ``base``; ``base``
    when it has no pipeline-depth part; None when out of range (1 to :data:`MAX_STAGES`) or for a
    Gluon kernel."""
    _, option = split(variant)
    if option not in _STEP:
        return base
    if _gluon(fn):
        return None
    stages = base + _STEP[option]
    return stages if 1 <= stages <= MAX_STAGES else None


def default_option(name: str) -> int:
    """The value of launch option ``name`` (``num_warps``, ``num_stages``) Triton's backend uses
    when a launch names none."""
    from triton.runtime.driver import driver  # on first use: importing triton_ext must not import Triton

    return getattr(_backend_options(driver.active.get_current_target()), name)


def default_warps() -> int:
    return default_option("num_warps")


def default_stages() -> int:
    return default_option("num_stages")


@functools.cache
def _backend_options(target: Any) -> Any:
    from triton.compiler.compiler import make_backend  # on first use: importing triton_ext must not import Triton

    return make_backend(target).parse_options({})


def launch_option(kwargs: Mapping[str, Any], name: str) -> int:
    """The launch's own value of option ``name``, or the backend's default."""
    value = kwargs.get(name)
    return int(value) if value is not None else default_option(name)


# -- the legality check, on the two kernels' TTGIR ------------------------------------------------

_ALIAS = re.compile(r"^(#[\w.]+) = (#.*)$", re.M)
_OP = re.compile(r'^(\s*)%[^=]*= "(tt\.reduce|tt\.scan)"\(.*?<\{axis = (\d+) : i32')


def _tensor_layouts(types: str) -> list[str]:
    """The layouts of the ``tensor<...>`` types in ``types``, in order."""
    out = []
    for start in [m.end() for m in re.finditer(r"tensor<", types)]:
        depth, i = 1, start
        while depth and i < len(types):
            depth += {"<": 1, ">": -1}.get(types[i], 0)
            i += 1
        body = types[start:i - 1]
        out.append(body.split(", ", 1)[1] if ", " in body else "")
    return out


def _resolve(layout: str, aliases: Mapping[str, str]) -> str:
    for _ in range(8):  # a slice's parent is an alias of an alias at most a few deep
        replaced = re.sub(r"#[\w.]+(?![\w.<])", lambda m: aliases.get(m.group(0), m.group(0)), layout)
        if replaced == layout:
            break
        layout = replaced
    return layout


def _along(layout: str, axis: int) -> str:
    """``layout`` with its ``warpsPerCTA`` reduced to the entry of ``axis`` (only the warps along
    the combined axis shape the tree); any other layout kind is compared whole."""
    if not re.match(r"#ttg\.(blocked|nvidia_mma)<", layout):
        return layout

    def keep(m: re.Match[str]) -> str:
        counts = [c.strip() for c in m.group(1).split(",")]
        return f"warpsPerCTA[{axis}] = {counts[axis] if axis < len(counts) else '?'}"

    return re.sub(r"warpsPerCTA = \[([^\]]*)\]", keep, layout)


def _combines(ttgir: str) -> list[tuple[str, int, str, bool]]:
    """Every ``tt.reduce`` and ``tt.scan``: (op, axis, its operands' layouts along the axis,
    whether its combine is exact integer arithmetic)."""
    aliases = dict(_ALIAS.findall(ttgir))
    lines = ttgir.splitlines()
    out = []
    for i, line in enumerate(lines):
        m = _OP.match(line)
        if not m:
            continue
        indent, op, axis = len(m.group(1)), m.group(2), int(m.group(3))
        end = next((j for j in range(i + 1, len(lines)) if lines[j].lstrip().startswith("}) : (")
                    and len(lines[j]) - len(lines[j].lstrip()) == indent), None)
        if end is None:
            out.append((op, axis, "?", False))
            continue
        body = {b for b in re.findall(r"= ([a-z_]+\.[\w.]+)", "\n".join(lines[i + 1:end]))}
        operands = lines[end].split("}) : (", 1)[1].split(") -> ", 1)[0]
        layouts = ";".join(_along(_resolve(layout, aliases), axis) for layout in _tensor_layouts(operands))
        out.append((op, axis, layouts, bool(body) and body <= _EXACT))
    return out


_ASM = re.compile(r'= tt\.elementwise_inline_asm "((?:[^"\\]|\\.)*)" \{([^}]*)\} .*? : (.*)$', re.M)


def _inline_asm(ttgir: str) -> list[tuple[str, bool, str]]:
    """Every ``tt.elementwise_inline_asm``: (its text, whether it is pure, its operands' and
    results' layouts, aliases resolved)."""
    aliases = dict(_ALIAS.findall(ttgir))
    return [(text, "pure = true" in attributes, ";".join(_resolve(t, aliases) for t in _tensor_layouts(types)))
            for text, attributes, types in _ASM.findall(ttgir)]


_DOT = re.compile(r"= (tt\.dot|tt\.dot_scaled|ttng\.warp_group_dot|ttng\.tc_gen5_mma\w*) ")
_I32_RESULT = re.compile(r"-> tensor<[\dx]*xi32[,>]")
_SATURATING_MMA = re.compile(r"(?:^|[\s;{])(?:wgmma\.mma_async|mma)\.[\w.]*\.satfinite\.s32\.")
_MMA = re.compile(r"#ttg\.nvidia_mma<\{versionMajor = (\d+), versionMinor = (\d+).*?instrShape = \[[^\]]*?(\d+)\]")


def _dots(ttgir: str) -> tuple[list[str], list[tuple[str, ...]]]:
    """The kernel's matrix-multiply operations in order, and its MMA encodings' (version, minor
    version, instruction K), sorted."""
    return _DOT.findall(ttgir), sorted(set(_MMA.findall(ttgir)))


def _integer_sums_wrap(ttgirs: tuple[Any, Any], ptxs: tuple[Any, Any]) -> bool:
    """Whether every matrix multiply of both kernels sums integers modulo 2^32: each accumulates
    in ``i32`` (exact integer products) and neither kernel's PTX has an integer MMA that
    saturates (``.satfinite``), so the sums are equal in any order and on any instruction."""
    if not all(isinstance(t, str) for t in (*ttgirs, *ptxs)):
        return False
    dots = [line for t in ttgirs for line in t.splitlines() if _DOT.search(line)]
    return bool(dots) and all(_I32_RESULT.search(line) for line in dots) and \
        not any(_SATURATING_MMA.search(p) for p in ptxs)


def reorders(stock_ttgir: Any, variant_ttgir: Any, stock_ptx: Any = None, variant_ptx: Any = None) -> str | None:
    """Why the variant's kernel may combine values in another order than the no-pass kernel's,
    or None when every reduction, scan and matrix multiply combines as there (see the module
    docstring). The PTX, where given, shows whether integer products wrap."""
    if not isinstance(stock_ttgir, str) or not isinstance(variant_ttgir, str):
        return "its TTGIR is not at hand to check its reductions"
    # Inline assembly may read the lane it runs on; the same pure text over operands laid out alike
    # (a pipeline depth keeps every layout: LoopSplit's correctly rounded multiply under one stage
    # more) puts every element on the same lane and computes it alike, wherever the schedule runs it.
    if "tt.elementwise_inline_asm" in variant_ttgir:
        asm = _inline_asm(variant_ttgir)
        if (len(asm) != variant_ttgir.count("tt.elementwise_inline_asm") or asm != _inline_asm(stock_ttgir)
                or not all(pure for _, pure, _ in asm)):
            return "the kernel has inline assembly, which may depend on the lanes it runs on"
    # Hopper's warp-group MMA needs 4 warps: below, Triton falls back to Ampere's mma.sync, whose
    # float sums round otherwise (fla's gated-delta backward at 2 -> 4 warps, torchao's HQQ GEMM at
    # 4 -> 2 changed bits on an H100, 61d2585) and whose int8 sums saturate (`.satfinite`) where
    # wgmma's wrap: equal until a sum leaves int32, which a long enough K reaches.
    if len({bool(_SATURATING_MMA.search(p)) for p in (stock_ptx, variant_ptx) if isinstance(p, str)}) > 1:
        return "one kernel's integer products saturate a sum that the other's wrap"
    dots = _dots(stock_ttgir), _dots(variant_ttgir)
    if dots[0] != dots[1] and not _integer_sums_wrap((stock_ttgir, variant_ttgir), (stock_ptx, variant_ptx)):
        return (f"its matrix multiplies change instruction ({dots[0]} with the launch's own options, "
                f"{dots[1]} with the variant's)")
    # Not a proof, an observation kept as a rule: Liger's RoPE at 4 -> 2 warps gained two layout
    # conversions through shared memory, and 540 bytes of its 16 MiB output changed on an H100
    # (61d2585), with no reduction or product in the kernel. A variant may move data only along
    # paths the no-pass kernel takes.
    conversions = [t.count("ttg.convert_layout ") for t in (stock_ttgir, variant_ttgir)]
    if conversions[1] > conversions[0]:
        return f"it converts layouts {conversions[1]} times where the no-pass kernel does {conversions[0]} times"
    stock, variant = _combines(stock_ttgir), _combines(variant_ttgir)
    if len(stock) != len(variant):
        return f"{len(variant)} reductions and scans against {len(stock)} with the launch's own options"
    for (op, axis, layout, exact), (_, _, other, _) in zip(stock, variant):
        if not exact and layout != other:
            return (f"a {op} along axis {axis} would combine in another order (its operand's layout "
                    f"{layout} becomes {other})")
    return None


def may_change(variant: str, stock_ttir: Any) -> bool:
    """Whether ``variant``'s launch option may change a kernel whose no-pass TTIR is ``stock_ttir``:
    a pipeline depth not where the kernel has no loop (pipelining acts on loops only), so such a
    variant is not compiled at all; a warp count always; a TTIR not known may be changed."""
    option = split(variant)[1]
    return option not in _STEP or not isinstance(stock_ttir, str) or "scf.for" in stock_ttir


def settled_stage(variant: str) -> str | None:
    """The compile stage after which ``variant``'s launch option has done all it does, or None:
    ``ttgir`` for a pipeline depth (of Triton 3.9's NVIDIA stages only ``make_ttgir`` reads
    ``num_stages``, for its pipeliner), so a depth whose TTGIR is the no-pass kernel's can only
    rebuild that kernel; None for a warp count (``make_llir`` reads ``num_warps`` too) or none."""
    return "ttgir" if split(variant)[1] in _STEP else None


def launch_kwargs(fn: Any, variant: str, kwargs: Mapping[str, Any]) -> dict[str, Any] | None:
    """The launch's keyword arguments for ``variant``: its warp count or pipeline depth in place of
    the launch's (the same ones when it has no launch-option part); None when it does not apply."""
    option = split(variant)[1]
    if option is None:
        return dict(kwargs)
    if option in _FACTOR:
        count = warps_for(variant, launch_option(kwargs, "num_warps"), fn)
        return None if count is None else {**kwargs, "num_warps": count}
    stages = stages_for(variant, launch_option(kwargs, "num_stages"), fn)
    return None if stages is None else {**kwargs, "num_stages": stages}


def combinable(found: list[str]) -> list[str]:
    """The two fastest of ``found`` (winners, fastest first) that can run together: not two
    launch options at once. Fewer than two when there are none."""
    first = found[:1]
    rest = [v for v in found[1:] if not (first and split(v)[1] and split(first[0])[1])]
    return first + rest[:1]


def reordering(variants: list[str], kernels: Mapping[str, Any]) -> dict[str, str]:
    """For each of ``variants`` with a launch option, why it may combine values in another order than
    the kernel of its passes alone (``kernels[""]`` where that one is not at hand): :func:`reorders`."""
    out = {}
    for variant in variants:
        passes, warps = split(variant)
        if warps is None or variant not in kernels:
            continue
        base = getattr(kernels.get("+".join(passes), kernels[""]), "asm", {})
        asm = getattr(kernels[variant], "asm", {})
        why = reorders(base.get("ttgir"), asm.get("ttgir"), base.get("ptx"), asm.get("ptx"))
        if why is not None:
            out[variant] = why
    return out
