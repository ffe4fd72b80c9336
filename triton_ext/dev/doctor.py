"""``triton-ext doctor``: what matters for this environment, each problem with a fix that works here.

Checked, in order: Triton (and whether the core was built for it), the core's pass-infra library,
the start-up hook (``TRITON_EXT_ENABLE`` without an import), the toolchain (a checkout only), the
registry, and every extension that is installed (its library exists) or enabled
(``TRITON_EXT_ENABLE``). An extension that is neither is information, not a problem: nobody
asked for it. Fixes name what works where the user is: ``triton-ext build`` in a source checkout,
pip and the wheel index outside one.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .._errors import TritonExtError
from .._manifest import Extension, Manifest, load_manifest
from .._settings import repo_root, settings

__all__ = ["Report", "run", "in_checkout"]

INFRA = "libTritonExtPassInfra.so"


def in_checkout() -> bool:
    """True when triton_ext runs from a source checkout (it can build plugins)."""
    root = repo_root()
    return (root / "CMakeLists.txt").is_file() and (root / "infra").is_dir()


@dataclass
class Report:
    """The lines doctor prints and how many of them are problems."""

    lines: list[str] = field(default_factory=list)
    problems: int = 0

    def say(self, text: str) -> None:
        self.lines.append(text)

    def problem(self, line: str, fix: str) -> None:
        """``line`` says what is wrong (with its own indentation); the fix goes below it."""
        self.problems += 1
        indent = line[: len(line) - len(line.lstrip())]
        self.lines.append(line)
        self.lines.append(f"{indent}  fix: {fix}")


def _index_hint(triton_version: str) -> str:
    return f"--extra-index-url <wheel index>/triton-{triton_version}/simple"


def _fix_extension(ext: Extension, checkout: bool, triton_version: str, installed: bool) -> str:
    if checkout and ext.library_dir is None:
        return f"triton-ext build {ext.name}"
    dist = "triton-ext-" + ext.name.replace("_", "-")
    force = "--force-reinstall --no-deps " if installed else ""
    return f"pip install {force}{_index_hint(triton_version)} {dist}"


def _wanted_extensions(manifest: Manifest) -> tuple[dict[str, str], list[str]]:
    """Extensions named by TRITON_EXT_ENABLE (name -> why) and the names nothing resolves."""
    wanted: dict[str, str] = {}
    unknown: list[str] = []
    try:
        names = settings.enable
    except ValueError:
        return wanted, unknown
    for raw in names:
        name = re.sub(r"\{.*", "", raw).strip()
        if not name:
            continue
        if name == "default":
            for ext in manifest.extensions:
                if any(p.enabled_by_default for p in ext.passes):
                    wanted.setdefault(ext.name, "enabled by default")
            continue
        try:
            ext = manifest.extension_of(manifest.find_pass(name))
        except TritonExtError:
            try:
                ext = manifest.extension(name)
            except TritonExtError:
                unknown.append(name)
                continue
        wanted.setdefault(ext.name, f"TRITON_EXT_ENABLE names {name}")
    return wanted, unknown


def _check_core(report: Report, checkout: bool, triton_version: str) -> None:
    from .._compat import built_for
    from .startup_hook import PTH_LINE, PTH_NAME, site_dir

    package = Path(__file__).resolve().parent.parent
    infra = package / "plugins" / INFRA
    if not checkout:
        if infra.is_file():
            built = built_for(infra)
            if built and built != triton_version:
                report.problem(f"core: PROBLEM: built for Triton {built}, {triton_version} is "
                               "installed (supported releases: docs/compatibility.md)",
                               f"pip install triton=={built}")
            else:
                report.say(f"core: {package} (with {INFRA})")
        else:
            report.problem(f"core: PROBLEM: {package} lacks plugins/{INFRA}: no plugin can load "
                           "(a wheel of the source tree built by plain setuptools?)",
                           f"pip install --force-reinstall --no-deps {_index_hint(triton_version)} "
                           "triton-ext")
    else:
        report.say(f"core: source checkout {repo_root()}")
    pth = site_dir() / PTH_NAME
    hook_module = importlib.util.find_spec("_triton_ext_startup") is not None
    if pth.is_file() and pth.read_text(encoding="utf-8") == PTH_LINE and hook_module:
        report.say(f"start-up hook: installed ({pth}): TRITON_EXT_ENABLE works without an import")
    elif pth.is_file() and not hook_module:
        report.problem(f"start-up hook: PROBLEM: {pth} is installed but the module _triton_ext_startup is not "
                       "importable", "pip install --force-reinstall --no-deps triton-ext (checkout: "
                       "pip install -e .)")
    else:
        state = "has other content" if pth.is_file() else "not installed"
        report.problem(f"start-up hook: PROBLEM: {pth} {state}: TRITON_EXT_ENABLE works only after "
                       "`import triton_ext`", "triton-ext startup-hook install")


def _check_toolchain(report: Report, needed: bool) -> None:
    from .toolchain import manifest_path, read_toolchain

    toolchain_json = manifest_path()
    toolchain = read_toolchain()
    if toolchain is not None:
        report.say(f"toolchain: {toolchain_json}")
        report.say(f"  compiler: {toolchain.cxx} ({toolchain.cxx_version})")
        report.say(f"  LLVM headers: Debian sid {toolchain.llvm_version}; mlir-tblgen: {toolchain.mlir_tblgen}")
        gone = "" if Path(toolchain.triton_dir).exists() else " (gone; `triton-ext toolchain` points it at this one)"
        report.say(f"  built against triton {toolchain.triton_version} at {toolchain.triton_dir}{gone}")
        for note in toolchain.notes:
            report.say(f"  note: {note}")
        return
    state = "incomplete or stale" if toolchain_json.exists() else "not set up"
    fix = "triton-ext toolchain --force" if toolchain_json.exists() else "triton-ext toolchain"
    if needed:
        report.problem(f"toolchain: PROBLEM: {state} ({toolchain_json}), and an enabled extension needs a build",
                       fix)
    else:
        report.say(f"toolchain: {state} ({toolchain_json}); needed only to build plugins ({fix})")


def run() -> Report:
    from .._compat import TritonReleaseError, built_for
    from .._preflight import installed_triton_version, preflight

    report = Report()
    triton_version = installed_triton_version()
    checkout = in_checkout()
    report.say(f"triton: {triton_version}")
    report.say(f"python: {sys.executable}")
    _check_core(report, checkout, triton_version)
    report.say(f"registry: {settings.registry}" + ("" if Path(settings.registry).exists()
                                                   else " (none: installed extensions only)"))
    try:
        manifest = load_manifest()
    except TritonExtError as exc:
        report.problem(f"registry: PROBLEM: {exc}", "correct the registry at the lines named above (or uninstall the "
                       "package the message names)")
        return report
    wanted, unknown = _wanted_extensions(manifest)
    for name in unknown:
        report.problem(f"enabled: PROBLEM: TRITON_EXT_ENABLE names {name!r}, which no registered extension provides",
                       "`triton-ext list` shows the installed names; install the extension or fix "
                       "the variable")
    unbuilt_wanted = [e for e in manifest.extensions
                      if e.name in wanted and e.library and not e.library_path().exists()]
    if checkout:
        _check_toolchain(report, needed=bool(unbuilt_wanted))
        report.say(f"build dir: {settings.build_dir}")
    not_built: list[str] = []
    for ext in manifest.extensions:
        why = f" ({wanted[ext.name]})" if ext.name in wanted else ""
        if not ext.library:  # a kind: pipeline entry edits Triton's pipeline, loads nothing
            report.say(f"  {ext.name}: ok (pipeline edit, no library){why}")
            continue
        path = ext.library_path()
        if not path.exists() and ext.name not in wanted:
            not_built.append(ext.name)
            continue
        fix = _fix_extension(ext, checkout, triton_version, installed=path.exists())
        try:
            result = preflight(path, ext.name)
        except TritonReleaseError as exc:
            built = built_for(path)
            report.problem(f"  {ext.name}: PROBLEM{why}: {exc}",
                           f"pip install triton=={built}" + (f", or {fix}" if checkout else ""))
            continue
        except TritonExtError as exc:
            report.problem(f"  {ext.name}: PROBLEM{why}: {exc}", fix)
            continue
        missing = [p.name for p in ext.passes if p.name not in result.passes]
        if missing:
            report.problem(f"  {ext.name}: PROBLEM{why}: library lacks declared pass {missing[0]} "
                           f"(has {', '.join(result.passes)})", fix)
            continue
        report.say(f"  {ext.name}: ok ({path}, passes {', '.join(result.passes)}){why}")
    if not_built:
        how = "triton-ext build NAME" if checkout else f"pip install {_index_hint(triton_version)} triton-ext-NAME"
        report.say(f"  not built, not enabled (information, not a problem): {', '.join(not_built)}; "
                   f"to use one: {how}")
    report.say("all well" if not report.problems else f"{report.problems} problem(s)")
    return report
