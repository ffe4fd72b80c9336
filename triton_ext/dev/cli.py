"""The ``triton-ext`` command (also ``python -m triton_ext``).

Subcommands: ``list``, ``info NAME``, ``doctor``, ``opt FILE --pass NAMES``, and
``toolchain``/``build``/``new``/``test``/``wheel``/``bench``, which are handed to the modules of
:mod:`triton_ext.dev` and to :mod:`triton_ext.bench`. Errors go to stderr with exit status 1.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any, Sequence

from .._errors import TritonExtError
from .._manifest import Extension, Manifest, load_manifest
from .._settings import repo_root, settings

__all__ = ["main"]



def _extension_dict(ext: Extension) -> dict[str, Any]:
    path = ext.library_path()
    return {
        "name": ext.name,
        "kind": ext.kind,
        "status": ext.status,
        "summary": ext.summary,
        "directory": ext.directory,
        "library": str(path),
        "built": path.exists(),
        "owners": list(ext.owners),
        "targets": {
            t.backend: {k: v for k, v in (("min_arch", t.min_arch), ("max_arch", t.max_arch), ("archs", list(t.archs))) if v}
            for t in ext.targets
        },
        "source": f"{ext.source}:{ext.line}",
        "passes": {
            p.name: {
                "stage": p.stage,
                "position": p.position,
                "then": list(p.then),
                "enabled_by_default": p.enabled_by_default,
                "auto": p.auto,
                "launch_requests": list(p.launch_requests),
                "needs_ops": list(p.needs_ops),
                "on_failure": p.on_failure,
                "role": p.role,
                "options": {o.name: {"type": o.type, "default": o.default, "help": o.help,
                                     **({"accepts": o.expected()} if o.choices or o.minimum is not None
                                        or o.maximum is not None else {})}
                            for o in p.options},
                "options_source": p.options_source,
                "compile_options": dict(p.compile_options),
            }
            for p in ext.passes
        },
    }


def _cmd_list(args: argparse.Namespace) -> int:
    manifest = load_manifest()
    if args.json:
        print(json.dumps([_extension_dict(e) for e in manifest.extensions], indent=2))
        return 0
    if not manifest.extensions:
        print(f"no extensions (registry: {settings.registry})")
        return 0
    for ext in manifest.extensions:
        built = "built" if ext.library_path().exists() else "no library" if not ext.library else "not built"
        print(f"{ext.name:24} {ext.kind:8} {ext.status:12} {built:10} {ext.summary}")
        for p in ext.passes:
            default = " (on by default)" if p.enabled_by_default else ""
            print(f"  pass {p.name}: {p.position}{default}")
    return 0


REPO_ROOT = repo_root()


def _cmd_info(args: argparse.Namespace) -> int:
    manifest = load_manifest()
    try:
        ext = manifest.extension(args.name)
    except TritonExtError:
        ext = manifest.extension_of(manifest.find_pass(args.name))
    info = _extension_dict(ext)
    print(f"{ext.name}: {ext.summary}")
    for key in ("kind", "status", "directory", "library", "built", "owners", "targets", "source"):
        print(f"  {key}: {info[key]}")
    for name, p in info["passes"].items():
        print(f"  pass {name}: {p['position']}" + (f", then {', '.join(p['then'])}" if p["then"] else ""))
        print(f"    enabled_by_default: {p['enabled_by_default']}")
        print(f"    auto: {p['auto']} (a candidate of TRITON_EXT_ENABLE=auto)" if p["auto"] else "    auto: False")
        if p["launch_requests"]:
            print(f"    launch_requests: {', '.join(p['launch_requests'])} (launch options it may ask for)")
        if p["needs_ops"]:
            print(f"    needs_ops: {', '.join(p['needs_ops'])} (the mode compiles it only for kernels with one)")
        print(f"    role: {p['role']}")
        if p["on_failure"] != "skip":
            print(f"    on_failure: {p['on_failure']} (its failure fails the compile)")
        for option, o in p["options"].items():
            accepts = f", {o['accepts']}" if "accepts" in o else ""
            derived = p["compile_options"].get(option)
            source = f", set from the kernel's {derived}" if derived else ""
            print(f"    --{option} ({o['type']}{accepts}, default {o['default']!r}{source}): {o['help']}")
        if not p["options"] and p["options_source"] and not Path(p["options_source"]).is_file():
            print(f"    options: not known until built ({p['options_source']} is missing; "
                  f"`triton-ext build {ext.name}`)")
    directory = REPO_ROOT / ext.directory
    tests = sorted(str(f.relative_to(REPO_ROOT)) for f in directory.rglob("*")
                   if f.suffix == ".mlir" or (f.name.startswith("test_") and f.suffix == ".py"))
    benches = sorted(str(f.relative_to(REPO_ROOT)) for f in [directory / "bench.py",
                                                               *directory.glob("results/*")]
                     if f.is_file())
    print(f"  tests: {', '.join(tests) or 'none found'}")
    print(f"  benchmarks: {', '.join(benches) or 'none found'}")
    library = ext.library_path()
    if ext.passes and library.exists():
        # What the passes say about themselves (libTritonExtPassInfra's database).
        from .._database import describe_library

        try:
            for d in describe_library(library):
                print(f"  plugin pass {d.name}: flag {d.argument}, runs on {d.anchor}: {d.summary}")
                for flag, default in d.option_defaults.items():
                    print(f"    {flag} = {default} (default compiled into the pass)")
        except TritonExtError as exc:
            print(f"  plugin: cannot describe ({exc})")
    return 0


def _cmd_doctor(args: argparse.Namespace) -> int:
    from .doctor import run

    report = run()
    print("\n".join(report.lines))
    return 0 if not report.problems else 1


def _split_pass_list(chunks: Sequence[str]) -> list[tuple[str, dict[str, str]]]:
    """Parse ``a,b{flag=1 other=x},c`` (MLIR's textual-pipeline option syntax) into names and
    option overrides (text; checked against each pass's declared options before anything runs)."""
    from .._passlist import parse_pass_list

    return [item for chunk in chunks for item in parse_pass_list(chunk, "--pass")]


def _cmd_opt(args: argparse.Namespace) -> int:
    from .._loader import load_extension
    from .._triton import resolve_builtin
    from .._selection import check_options

    names_with_options = _split_pass_list(args.passes)
    names = [n for n, _ in names_with_options]
    if not names:
        raise TritonExtError("--pass: expected at least one pass name, found none")
    manifest: Manifest | None = None
    steps: list[Any] = []
    for name, given in names_with_options:
        try:
            builtin = resolve_builtin(name)
            steps.append(("builtin", name, builtin.fn))
            continue
        except KeyError:
            pass
        manifest = manifest or load_manifest()
        spec = manifest.find_pass(name)
        # Every value is checked against what the pass declares (type, allowed values, bounds)
        # before anything loads or runs: a bad one is one line naming the option and what it
        # accepts.
        (_, values), = check_options([spec.name], given, manifest, origin="--pass", text=True)
        chosen = dict(values)
        steps.append(("plugin", name, [o.render(chosen.get(o.name, o.default)) for o in spec.options]))
    for kind, name, _ in steps:
        if kind == "plugin" and manifest is not None:
            load_extension(manifest.extension_of(manifest.find_pass(name)))
    path = Path(args.file)
    if not path.exists():
        raise TritonExtError(f"{path}: no such file; expected an .mlir/.ttir/.ttgir file", path=path)
    if not (args.split_input_file or args.verify_diagnostics):
        module = _run_opt_steps(path, path, steps, names)
        sys.stdout.write(module.str() if not args.no_debug_info else module.str_nodebug())
        sys.stdout.write("\n")
        return 0
    return _opt_chunks(path, steps, names, args)


def _run_opt_steps(parse_path: Path, shown: Path, steps: list[Any], names: list[str],
                   print_op: bool = True) -> Any:
    """Parses ``parse_path`` in a fresh context with Triton's dialects and runs ``steps``;
    returns the module (errors name ``shown``). ``print_op=False`` drops the "see current
    operation" note of parse-time errors (as mlir-opt does with -verify-diagnostics)."""
    from triton._C import libtriton
    from triton._C.libtriton import ir

    context = ir.context()
    if not print_op:
        context.printOpOnDiagnostic(False)
    ir.load_dialects(context)
    for vendor in ("nvidia", "amd"):
        vendor_module = getattr(libtriton, vendor, None)
        if vendor_module is not None and hasattr(vendor_module, "load_dialects"):
            vendor_module.load_dialects(context)
    try:
        module = ir.parse_mlir_module(str(parse_path), context)
    except RuntimeError as exc:
        raise TritonExtError(f"{shown}: cannot parse the module: {exc}", path=shown) from exc
    module.context = context
    pm = ir.pass_manager(context)
    for kind, name, payload in steps:
        if kind == "builtin":
            payload(pm)
        else:
            getattr(libtriton.passes.plugin, f"add_{name}")(pm, payload)
    try:
        pm.run(module, "triton-ext-opt")
    except RuntimeError as exc:
        raise TritonExtError(f"{shown}: running {', '.join(names)} failed: {exc}", path=shown) from exc
    return module


def _opt_chunks(path: Path, steps: list[Any], names: list[str], args: argparse.Namespace) -> int:
    """-split-input-file and/or -verify-diagnostics: each chunk parsed and run on its own (with
    its original line numbers), diagnostics captured, re-printed with the original path or
    checked against the chunk's expected-* comments; outputs joined by ``// -----``."""
    import tempfile

    from . import opt_diagnostics as od

    text = path.read_text(encoding="utf-8")
    chunks = od.split_input(text) if args.split_input_file else [od.Chunk(text, 1)]
    outputs: list[str] = []
    failed = False
    saved_env = os.environ.get("MLIR_ENABLE_DIAGNOSTICS")
    if args.verify_diagnostics:
        os.environ["MLIR_ENABLE_DIAGNOSTICS"] = "remarks"  # Triton then passes on every severity
    try:
        with tempfile.TemporaryDirectory(prefix="triton-ext-opt-") as tmp:
            for chunk in chunks:
                chunk_path = od.chunk_file(chunk, Path(tmp), path.name)
                error: TritonExtError | None = None
                module = None
                with od.capture_stderr() as captured:
                    try:
                        module = _run_opt_steps(chunk_path, path, steps, names,
                                                print_op=not args.verify_diagnostics)
                    except TritonExtError as exc:
                        error = exc
                stderr = captured[0].replace(str(chunk_path), str(path))
                if args.verify_diagnostics:
                    try:
                        expected = od.parse_expectations(chunk)
                    except ValueError as exc:
                        raise TritonExtError(f"{path}: {exc}", path=path) from exc
                    problems = od.verify(expected, od.parse_diagnostics(stderr, str(path)))
                    for problem in problems:
                        print(problem.render(str(path)), file=sys.stderr)
                    failed |= bool(problems)
                else:
                    sys.stderr.write(stderr)
                    if error is not None:
                        print(f"triton-ext: error: {error}", file=sys.stderr)
                        failed = True
                if module is not None:
                    printed = module.str() if not args.no_debug_info else module.str_nodebug()
                    outputs.append(printed.replace(str(chunk_path), str(path)))
    finally:
        if saved_env is None:
            os.environ.pop("MLIR_ENABLE_DIAGNOSTICS", None)
        else:
            os.environ["MLIR_ENABLE_DIAGNOSTICS"] = saved_env
    sys.stdout.write(f"\n{od.SPLIT_MARKER}\n".join(outputs))
    if outputs:
        sys.stdout.write("\n")
    return 1 if failed else 0


def _delegate(module_name: str, argv: Sequence[str]) -> int:
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        print(f"triton-ext: this install has no {module_name} module", file=sys.stderr)
        return 1
    return int(module.main(list(argv)) or 0)


#: Subcommands with their own argument parsers: name -> (module, help).
_DELEGATED = {
    "new": ("triton_ext.dev.scaffold", "scaffold an extension folder and its registry entry"),
    "test": ("triton_ext.dev.testcmd", "run extensions' lit and pytest tests"),
    "wheel": ("triton_ext.dev.index", "build the core and extension wheels, or a pip index of them (--index)"),
    "toolchain": ("triton_ext.dev.toolchain", "set up the C++ toolchain plugins build with"),
    "build": ("triton_ext.dev.build", "build extensions into <checkout>/build/plugins"),
    "bench": ("triton_ext.bench.cli", "benchmark passes on GPUs, or compile-check them on the CPU (--cpu)"),
    "startup-hook": ("triton_ext.dev.startup_hook",
                     "install or remove the .pth that makes TRITON_EXT_ENABLE work without an import"),
    "pipeline": ("triton_ext.dev.pipeline", "show the pass pipeline a compile runs, plugin passes in place"),
    "tune": ("triton_ext.dev.tune", "find the best pass set for a benchmark's kernels"),
    "auto": ("triton_ext.dev.auto_report", "show the transparent mode's decisions on disk (triton-ext auto report)"),
    "docs": ("triton_ext.dev.extension_docs",
             "regenerate the options and results tables of the extension READMEs (--check: only compare)"),
}


def version_text() -> str:
    """``triton-ext X.Y.Z (triton A.B.C, Python P)``: this package, the Triton it runs with."""
    from importlib.metadata import PackageNotFoundError, version

    from .._preflight import installed_triton_version

    try:
        mine = version("triton-ext")
    except PackageNotFoundError:  # a checkout on PYTHONPATH, not installed
        import tomllib

        mine = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["version"]
    try:
        triton = installed_triton_version()
    except ImportError:
        triton = "not installed"
    return f"triton-ext {mine} (triton {triton}, Python {sys.version.split()[0]})"


def _verb(sub: Any, name: str, text: str, **kwargs: Any) -> argparse.ArgumentParser:
    """A subcommand whose --help starts with the same sentence as its line in `triton-ext -h`."""
    return sub.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".", **kwargs)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="triton-ext",
        description="Out-of-tree MLIR pass plugins for the stock Triton compiler: list, check, "
                    "build, test, package and benchmark them. `triton-ext COMMAND --help` says more.")
    parser.add_argument("--version", action="version", version=version_text())
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = _verb(sub, "list", "list the extensions in the registry and the installed ones")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=_cmd_list)
    p = _verb(sub, "info", "describe one extension or pass: where it runs, its options, tests and benchmarks")
    p.add_argument("name", help="an extension or pass name")
    p.set_defaults(run=_cmd_info)
    p = _verb(sub, "doctor", "check Triton, the start-up hook, the toolchain and the enabled or "
                             "installed extensions; each problem comes with its fix")
    p.set_defaults(run=_cmd_doctor)
    p = _verb(sub, "opt", "run passes over an MLIR file and print the result")
    p.add_argument("file", help="an .mlir, .ttir or .ttgir file")
    p.add_argument("--pass", dest="passes", action="append", required=True, metavar="NAME[,NAME...]",
                   help="passes to run in order: registry passes or built-ins (canonicalize, cse, loop_unroll, ...); options as in MLIR pipelines: name{flag=value}")
    p.add_argument("--no-debug-info", action="store_true", help="print without locations")
    p.add_argument("-split-input-file", "--split-input-file", dest="split_input_file", action="store_true",
                   help="split the input at '// -----' lines, run each part on its own (line numbers "
                        "stay those of the file) and print the outputs joined by '// -----'")
    p.add_argument("-verify-diagnostics", "--verify-diagnostics", dest="verify_diagnostics",
                   action="store_true",
                   help="check the diagnostics against expected-error/-warning/-remark/-note "
                        "comments ({{text}}, @+N, @-N, @above, @below, @unknown) instead of "
                        "printing them; exit status 0 when they match")
    p.set_defaults(run=_cmd_opt)
    for name, (_, text) in _DELEGATED.items():
        sub.add_parser(name, help=text, add_help=False)
    return parser


#: Exit status of a command whose reader went away (``triton-ext list --json | head``), as a
#: Unix tool killed by SIGPIPE reports it: 128 + 13.
EXIT_BROKEN_PIPE = 141


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; 0 on success, 1 on a :class:`TritonExtError` (message on stderr), 2 on a
    usage error (argparse), 141 when stdout was closed by the reader."""
    try:
        return _main(argv)
    except BrokenPipeError:
        # The reader (head, grep -q) closed the pipe: nothing more to say. Point stdout at
        # /dev/null so that the interpreter's final flush does not raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


def _main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in _DELEGATED:
        return _delegate(_DELEGATED[argv[0]][0], argv[1:])
    args = _parser().parse_args(argv)
    try:
        return int(args.run(args))
    except TritonExtError as exc:
        print(f"triton-ext: error: {exc}", file=sys.stderr)
        return 1
