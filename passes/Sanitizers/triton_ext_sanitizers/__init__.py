"""``triton_ext_sanitizers``, the Sanitizers extension's own Python package (registry
``package``): read what the sanitizer passes found: per-site records, and an exception instead of an abort.

The ``nan_inf_check`` and ``offset_overflow_check`` passes (``passes/Sanitizers``) give every
kernel module they instrument two device globals: ``triton_ext_sanitizer_sites``, the site table
(one ``pass|what|numel|kernel|file:line`` line per site), and ``triton_ext_sanitizer_counters``,
three int64 per site that programs with findings update atomically (lanes, programs, and
``INT64_MAX - first index``). The device prints nothing by default (a device printf call, even
never executed, costs a GEMM registers); the host prints one line per site with findings:

- :func:`report` prints (to stderr) the line of every record it returns, then re-arms the site
  (``reset``), so each finding is printed once, when it is collected;
- :func:`check` raises :class:`SanitizerError` naming each site instead (no print);
- at interpreter exit, sites with findings that no ``report``/``check`` collected get their line
  (armed when a sanitizer pass is enabled: the loader calls :func:`on_enable`, the registry's
  ``on_enable``).

So a script that never calls the API still gets one line per site at exit::

    import triton_ext

    sanitizers = triton_ext.import_extension("sanitizers")   # or: import triton_ext_sanitizers as sanitizers

    triton_ext.enable("nan_inf_check")
    kernel[grid](...)
    records = sanitizers.report()           # synchronizes, prints, returns and re-arms every site
    sanitizers.check()                      # raises SanitizerError naming each site

The pass option ``print=first`` adds an immediate device line (first program per site),
``print=every`` one per program with findings.

``report`` finds the loaded kernels by scanning the garbage collector for Triton's
``CompiledKernel`` objects and any launcher object with a CUDA ``function`` handle (Inductor's
static launcher), so it costs milliseconds: call it between steps, not per launch. Reading
needs CUDA (``libcuda``); parsing the site table and decoding records (:func:`sites_of`,
:func:`decode`) are plain Python and work on CPU. The sites :func:`sites_of` reads from a compiled
kernel's IR also say why each check stays (``Site.reason``: what the pass could not prove, and
the test it costs); the device table does not carry that.
"""

from __future__ import annotations

import atexit
import ctypes
import gc
import logging
import re
import sys
import warnings
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Sequence, TextIO


__all__ = [
    "COUNTERS_SYMBOL",
    "SITES_SYMBOL",
    "Site",
    "Record",
    "SanitizerError",
    "sites_of",
    "sites_of_ir",
    "parse_site_table",
    "decode",
    "on_enable",
    "merge",
    "report",
    "check",
    "reset",
    "arm_exit_summary",
]

_logger = logging.getLogger("triton_ext.sanitizers")  # under triton_ext's logger (TRITON_EXT_LOG)

COUNTERS_SYMBOL = "triton_ext_sanitizer_counters"
SITES_SYMBOL = "triton_ext_sanitizer_sites"
SLOTS_PER_SITE = 3
INT64_MAX = (1 << 63) - 1


class SanitizerError(RuntimeError):
    """A sanitizer found something; ``records`` lists every site with findings."""

    def __init__(self, records: Sequence["Record"]) -> None:
        self.records = list(records)
        lines = "\n".join("  " + r.line() for r in self.records)
        super().__init__(f"triton-ext sanitizers found problems at {len(self.records)} site(s):\n{lines}")


@dataclass(frozen=True)
class Site:
    """One instrumented source site of one kernel module."""

    check: str  # pass name: nan_inf_check, offset_overflow_check
    what: str  # e.g. "store non-finite", "i32 offset overflow lanes"
    numel: int  # lanes per program at the site (the first index counts in these)
    kernel: str
    location: str  # file:line
    # What the record's second slot counts: "programs" with findings, or "warps" (warp groups
    # with findings, nan_inf_check's fast-path=warp, whose table entry says ``numel:warps``).
    unit: str = "programs"
    # Why the check could not be proven away at compile time and what it costs (the leaves an
    # offset cannot bound, where a stored value may become non-finite, the fast path taken); ""
    # when unknown. From the IR only (``triton_ext.sanitizer_sites_reason``, see sites_of): the
    # device site table does not carry it, so records read from a loaded module have "". Not
    # part of a site's identity (equality, hashing, merge).
    reason: str = field(default="", compare=False)


@dataclass(frozen=True)
class Record:
    """What one site found since the last reset."""

    site: Site
    lanes: int  # finding lanes over all programs (and launches)
    programs: int  # programs that found something (warp groups where site.unit == "warps")
    first_index: int | None  # smallest pid_linear * numel + lane; None if unknown
    copies: int = 1  # compiled copies of the kernel whose records were merged (see merge)

    @property
    def first_program(self) -> int | None:
        return None if self.first_index is None else self.first_index // self.site.numel

    @property
    def first_lane(self) -> int | None:
        return None if self.first_index is None else self.first_index % self.site.numel

    def line(self) -> str:
        first = "" if self.first_index is None else (
            f" first index={self.first_index} (program {self.first_program}, lane {self.first_lane})")
        copies = f" ({self.copies} compiled copies)" if self.copies > 1 else ""
        return (f"[triton-ext {self.site.check}] kernel={self.site.kernel} site={self.site.location} "
                f"{self.site.what}: lanes={self.lanes} {self.site.unit}={self.programs}{first}{copies}")


def parse_site_table(text: str) -> list[Site]:
    """Sites of a table as the passes write it (``pass|what|numel|kernel|file:line`` lines;
    ``numel:warps`` where the record counts warp groups instead of programs)."""
    sites = []
    for entry in text.split("\n"):
        entry = entry.rstrip("\0")
        if not entry:
            continue
        parts = entry.split("|", 4)
        numel, _, unit = parts[2].partition(":") if len(parts) == 5 else ("", "", "")
        if len(parts) != 5 or not numel.isdigit() or unit not in ("", "warps"):
            raise ValueError(f"malformed sanitizer site entry {entry!r}: expected "
                             "pass|what|numel|kernel|file:line (numel: digits, or digits:warps)")
        check, what, _, kernel, location = parts
        sites.append(Site(check, what, int(numel), kernel, location, unit or "programs"))
    return sites


_MLIR_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
# An array of MLIR strings (its strings may hold `]`).
_STRINGS = r'\[((?:\s*"(?:[^"\\]|\\.)*"\s*,?)*)\s*\]'
_SITES_ATTR = re.compile(r'triton_ext\.sanitizer_sites = ' + _STRINGS)
_REASONS_ATTR = re.compile(r'triton_ext\.sanitizer_sites_reason = ' + _STRINGS)


def _unescape_mlir(text: str) -> str:
    # MLIR prints non-printable and quote/backslash characters as \XX hex escapes.
    return re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), text).replace('\\"', '"')


def sites_of(compiled: Any) -> list[Site]:
    """Sites of a compiled kernel (``triton.compile`` result or ``CompiledKernel``), from its IR.

    Reads the ``triton_ext.sanitizer_sites`` module attribute of the TTGIR (or TTIR when no
    TTGIR is kept); a kernel compiled without the sanitizers has none.
    """
    asm = getattr(compiled, "asm", None)
    if asm is None:
        raise TypeError(f"expected a compiled Triton kernel with .asm, got {type(compiled).__name__}")
    for stage in ("ttgir", "ttir"):
        text = asm.get(stage) if hasattr(asm, "get") else None
        if text:
            return sites_of_ir(text)
    return []


def sites_of_ir(text: str) -> list[Site]:
    """Sites of a module's printed IR (TTIR or TTGIR), each with its ``reason``.

    The reasons come from the ``triton_ext.sanitizer_sites_reason`` attribute, one string per
    site in the table's order; IR without it (compiled before the passes gave reasons) gives
    ``reason=""``.
    """
    match = _SITES_ATTR.search(text)
    if match is None:
        return []
    entries = [_unescape_mlir(s) for s in _MLIR_STRING.findall(match.group(1))]
    sites = parse_site_table("\n".join(entries))
    found = _REASONS_ATTR.search(text)
    reasons = [_unescape_mlir(s) for s in _MLIR_STRING.findall(found.group(1))] if found else []
    return [replace(site, reason=reason) for site, reason in zip(sites, reasons)] + sites[len(reasons):]


def decode(sites: Sequence[Site], counters: Sequence[int], *, all_sites: bool = False) -> list[Record]:
    """Records from a site table and its counters (``SLOTS_PER_SITE`` int64 per site).

    Sites without findings are left out unless ``all_sites``.
    """
    if len(counters) < SLOTS_PER_SITE * len(sites):
        raise ValueError(f"{len(sites)} sites need {SLOTS_PER_SITE * len(sites)} counters, got {len(counters)}")
    records = []
    for index, site in enumerate(sites):
        lanes, programs, first = counters[SLOTS_PER_SITE * index:SLOTS_PER_SITE * (index + 1)]
        if not (lanes or programs or all_sites):
            continue
        first_index = INT64_MAX - first if first > 0 else None
        records.append(Record(site, lanes, programs, first_index))
    return records


def merge(records: Iterable[Record]) -> list[Record]:
    """One record per source site: the records of compiled copies of one kernel, added up.

    A site lives in every module compiled from its source: the autotuner's candidate configs
    (Inductor benchmarks each pointwise config on the real inputs), or a kernel loaded twice.
    Each module has its own records, so the same finding would come back once per copy. Copies
    are the same ``(check, what, kernel, location)``; lanes and programs add up and the first
    index is the smallest. Lanes per program (``numel``) may differ between copies (block
    sizes), so the merged record keeps the site, and so the numbering, of the copy that holds
    the smallest first index. Order: first appearance.
    """
    merged: dict[tuple[str, str, str, str, str], Record] = {}
    for record in records:
        key = (record.site.check, record.site.what, record.site.kernel, record.site.location,
               record.site.unit)
        seen = merged.get(key)
        if seen is None:
            merged[key] = record
            continue
        firsts = [r for r in (seen, record) if r.first_index is not None]
        best = min(firsts, key=lambda r: r.first_index) if firsts else seen  # type: ignore[arg-type,return-value]
        merged[key] = Record(best.site, seen.lanes + record.lanes, seen.programs + record.programs,
                             best.first_index, seen.copies + record.copies)
    return list(merged.values())


# ---------------------------------------------------------------------------------------------
# Device side (CUDA driver through ctypes: libcuda is what Triton's own launcher uses)


class _Cuda:
    NOT_FOUND = 500  # CUDA_ERROR_NOT_FOUND
    # A module of another context, or one unloaded meanwhile: not readable from here.
    SKIPPED = {NOT_FOUND, 201, 400}  # + CUDA_ERROR_INVALID_CONTEXT, CUDA_ERROR_INVALID_HANDLE

    def __init__(self) -> None:
        try:
            self.lib = ctypes.CDLL("libcuda.so.1")
        except OSError as exc:
            raise RuntimeError("triton_ext_sanitizers.report() needs the CUDA driver (libcuda.so.1)") from exc

    def _call(self, name: str, *args: Any) -> int:
        return int(getattr(self.lib, name)(*args))

    def _ok(self, name: str, *args: Any) -> None:
        rc = self._call(name, *args)
        if rc != 0:
            raise RuntimeError(f"{name} failed with CUDA error {rc}")

    def synchronize(self) -> None:
        self._ok("cuCtxSynchronize")

    def module_of(self, function: int) -> int | None:
        module = ctypes.c_void_p()
        if not hasattr(self.lib, "cuFuncGetModule"):  # drivers before CUDA 11
            return None
        if self._call("cuFuncGetModule", ctypes.byref(module), ctypes.c_void_p(function)) != 0:
            return None
        return module.value

    def global_of(self, module: int, name: str) -> tuple[int, int] | None:
        ptr, size = ctypes.c_uint64(), ctypes.c_size_t()
        rc = self._call("cuModuleGetGlobal_v2", ctypes.byref(ptr), ctypes.byref(size), ctypes.c_void_p(module),
                        name.encode())
        if rc in self.SKIPPED:
            return None
        if rc != 0:
            raise RuntimeError(f"cuModuleGetGlobal({name}) failed with CUDA error {rc}")
        return ptr.value, size.value

    def read(self, ptr: int, size: int) -> bytes:
        buf = ctypes.create_string_buffer(size)
        self._ok("cuMemcpyDtoH_v2", buf, ctypes.c_uint64(ptr), ctypes.c_size_t(size))
        return buf.raw

    def zero(self, ptr: int, size: int) -> None:
        self._ok("cuMemsetD8_v2", ctypes.c_uint64(ptr), ctypes.c_ubyte(0), ctypes.c_size_t(size))


def _is_kernel(o: Any, compiled_kernel: type) -> bool:
    # The GC also holds weakref proxies; asking a dead one for its class raises ReferenceError
    # (seen on the H200 after torch.compile), and such an object is no kernel.
    try:
        return isinstance(o, compiled_kernel) or type(o).__name__ == "StaticallyLaunchedCudaKernel"
    except ReferenceError:
        return False


def _loaded_modules(kernels: Iterable[Any] | None) -> list[int]:
    """CUmodule handles of loaded kernels: the given ones, or every one the GC can see."""
    if kernels is None:
        from triton.compiler.compiler import CompiledKernel

        # Asking every object the GC holds for its class touches deprecated shims (torch's
        # `torch.distributed.reduce_op` warned on the H200): no warning comes from here.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kernels = [o for o in gc.get_objects() if _is_kernel(o, CompiledKernel)]
    cuda = _Cuda()
    modules: list[int] = []
    for kernel in kernels:
        try:
            module = kernel.__dict__.get("module") if hasattr(kernel, "__dict__") else None
        except ReferenceError:
            continue
        if not isinstance(module, int):
            function = getattr(kernel, "function", None)
            module = cuda.module_of(function) if isinstance(function, int) and function else None
        if module and module not in modules:
            modules.append(module)
    return modules


def report(kernels: Iterable[Any] | None = None, *, reset: bool = True, synchronize: bool = True,
           per_copy: bool = False, echo: bool = True, file: TextIO | None = None) -> list[Record]:
    """Records of every site with findings in the loaded kernels (or in ``kernels``).

    Synchronizes the current CUDA context first. With ``echo`` (default) prints each returned
    record's line (:meth:`Record.line`) to ``file`` (default ``sys.stderr``). With ``reset``
    (default) the records are zeroed after reading, so a finding is returned and printed once
    and counts start over; ``reset=False`` leaves them, to be returned (and printed) again.
    One record per source site (:func:`merge`); ``per_copy`` keeps one per compiled copy.
    """
    cuda = _Cuda()
    if synchronize:
        cuda.synchronize()
    records: list[Record] = []
    for module in _loaded_modules(kernels):
        table = cuda.global_of(module, SITES_SYMBOL)
        counters = cuda.global_of(module, COUNTERS_SYMBOL)
        if table is None or counters is None:
            continue  # not instrumented
        sites = parse_site_table(cuda.read(*table).decode("utf-8", "replace"))
        raw = cuda.read(*counters)
        values = [int.from_bytes(raw[i:i + 8], "little", signed=True) for i in range(0, len(raw), 8)]
        records.extend(decode(sites, values))
        if reset:
            cuda.zero(*counters)
    out = records if per_copy else merge(records)
    if echo:
        stream = file if file is not None else sys.stderr
        for record in out:
            print(record.line(), file=stream, flush=True)
    return out


def reset(kernels: Iterable[Any] | None = None) -> None:
    """Zero every site's record without printing (findings so far are dropped)."""
    report(kernels, reset=True, echo=False)


def check(kernels: Iterable[Any] | None = None) -> None:
    """Raise :class:`SanitizerError` naming every site with findings since the last reset.

    The exception carries the lines; nothing is printed, and the records are re-armed."""
    records = report(kernels, reset=True, echo=False)
    if records:
        raise SanitizerError(records)


# CUDA errors at exit that mean "nothing to read": not initialized (3), no current context
# (201), context destroyed (709). Anything else (an aborted kernel: 710) is said in one line.
_NOTHING_TO_READ = {3, 201, 709}
_exit_summary_armed = False  # atexit has no "registered?" query; one summary per process


def _exit_summary() -> None:
    """One line per site with findings that no report()/check() collected (atexit)."""
    try:
        report(reset=True, echo=True)
    except Exception as exc:  # noqa: BLE001  (at exit: say it in one line, no traceback)
        code = re.search(r"CUDA error (\d+)", str(exc))
        if "needs the CUDA driver" in str(exc) or (code and int(code.group(1)) in _NOTHING_TO_READ):
            return
        _logger.warning("[triton-ext sanitizers] records not read at exit: %s", exc)


def arm_exit_summary() -> None:
    """Print, at interpreter exit, the line of every site with findings not yet collected.

    Called through :func:`on_enable` when a sanitizer pass is enabled; idempotent.
    Registered after torch's own exit handlers when torch was imported first, so (atexit runs
    last-in first-out) the CUDA context is still alive when it runs."""
    global _exit_summary_armed
    if not _exit_summary_armed:
        _exit_summary_armed = True
        atexit.register(_exit_summary)


def on_enable() -> None:
    """The registry's ``on_enable`` of the sanitizers: the loader calls it whenever a sanitizer pass
    is enabled (``triton_ext.enable``, ``enabled``, ``TRITON_EXT_ENABLE``). The device prints
    nothing by default, so the exit summary is armed here, once per process (issue 18)."""
    arm_exit_summary()
