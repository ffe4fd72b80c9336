"""Scaffold a new extension: ``triton-ext new pass|dialect|language NAME``.

Writes a folder that follows CONTRIBUTING.md (one name, every layer) and builds and passes its
own tests at once, and appends the extension's entry to ``registry.yaml``::

    triton-ext new pass DemoThing
    triton-ext build demo_thing && triton-ext test demo_thing

``pass`` writes ``passes/<Name>/``: CMakeLists.txt, Passes.td (one option), <Name>.cpp (a working
ModuleOp pass that tags each ``tt.func`` with its number of ``scf.for`` loops: replace the body
with your transformation), test/<kebab>.mlir (lit + FileCheck), test_<snake>.py (a real kernel
compiled through cubin on the CPU with the pass enabled), bench.py (benchmark spec) and README.md.
``dialect`` writes ``dialects/<Name>/`` and ``language`` writes ``language/<Name>/``, in the shape
of the worked example ``dialects/RangeFactsIR`` + ``language/RangeFacts`` (templates in
``templates/``, see :mod:`.render`): the dialect is an ODS dialect with one verified op (``scale``), its lowering
pass ``<snake>_lower`` (a registry pass at the end of ttir) and lit tests for parse/print/fold,
verifier errors and lowering; the language extension is a builder op
(``TRITON_EXT_REGISTER_OP``), a Python package ``triton_ext_<snake>`` with the ``@builtin``
function that calls it, and a pytest compiling kernels through cubin. A language extension needs
a dialect: ``--dialect D`` names one made by ``new dialect`` (default ``<Name>IR``, written too
when missing). tests/cli/test_new.py and tests/cli/test_new_dialect_language.py build each kind
and run its generated tests.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..._errors import TritonExtError
from . import ir as _ir
from .render import render_entry, render_tree

__all__ = ["ScaffoldError", "Names", "Written", "names_for", "scaffold", "scaffold_all", "main"]

_CAMEL = re.compile(r"^[A-Z][a-z0-9]*(?:[A-Z][a-z0-9]*)*$")
_KIND_ROOT = {"pass": "passes", "dialect": "dialects", "language": "language"}


class ScaffoldError(TritonExtError):
    """The extension cannot be scaffolded; the message says why and what to do."""


@dataclass(frozen=True)
class Names:
    """One name in every spelling CONTRIBUTING.md uses."""

    camel: str   # DemoThing: folder, file, CMake target suffix
    snake: str   # demo_thing: registry and pass name
    kebab: str   # demo-thing: test file, flag suffix

    @property
    def record(self) -> str:
        return f"TritonExt{self.camel}"

    @property
    def flag(self) -> str:
        return f"triton-ext-{self.kebab}"

    @property
    def upper(self) -> str:
        return self.record.upper()


def names_for(name: str) -> Names:
    """``DemoThing`` (or ``demo_thing``) -> its spellings; raises on anything else."""
    if re.fullmatch(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*", name):
        name = "".join(part.capitalize() for part in name.split("_"))
    if not _CAMEL.fullmatch(name):
        raise ScaffoldError(f"name '{name}': expected CamelCase like LoopSplit (or snake_case like "
                            "demo_thing), letters and digits only")
    # An acronym is one word: DemoIR -> demo_ir, IRThing -> ir_thing.
    words = re.findall(r"[A-Z]+[0-9]*(?![a-z0-9])|[A-Z][a-z0-9]*", name)
    return Names(camel=name, snake="_".join(w.lower() for w in words),
                 kebab="-".join(w.lower() for w in words))


def _pass_values(n: Names, folder: str, owner: str = "") -> dict[str, str]:
    return dict(camel=n.camel, snake=n.snake, kebab=n.kebab, record=n.record, flag=n.flag,
                upper=n.upper, folder=folder, owner=owner)


def _pass_files(n: Names, folder: str) -> dict[str, str]:
    """Relative path -> text of a scaffolded ``passes/<Name>/`` (``templates/pass``)."""
    return render_tree("pass", _pass_values(n, folder))


def _append_entries(registry: Path, entries: str, names: Sequence[str]) -> None:
    """Append under ``extensions:`` (the last top-level key) and re-validate; undo on error."""
    from ..._errors import TritonExtError
    from ..._manifest import load_manifest

    text = registry.read_text(encoding="utf-8")
    top = re.findall(r"^([A-Za-z_][\w-]*):", text, re.M)
    if not top or top[-1] != "extensions":
        raise ScaffoldError(f"{registry}: expected 'extensions:' as the last top-level key, found "
                            f"{top[-1] if top else 'none'}; add this entry under extensions by hand:\n"
                            + entries)
    if re.search(r"^extensions:\s*\{\s*\}\s*$", text, re.M):
        text = re.sub(r"^extensions:\s*\{\s*\}\s*$", "extensions:", text, flags=re.M)
    new = text.rstrip("\n") + "\n" + entries
    registry.write_text(new, encoding="utf-8")
    try:
        manifest = load_manifest(registry, entry_points=False)
        for name in names:
            manifest.extension(name)
    except TritonExtError as exc:
        registry.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        raise ScaffoldError(f"{registry}: the new entry does not validate, registry left as it "
                            f"was: {exc}") from exc


def _owner(root: Path) -> str:
    import subprocess

    try:
        res = subprocess.run(["git", "config", "user.name"], cwd=root, capture_output=True,
                             text=True, timeout=10)
        name = res.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        name = ""
    return name.replace(",", " ").replace("]", "").replace("[", "") or "TODO owner"


@dataclass(frozen=True)
class Written:
    """One folder a scaffold call writes, with its files (relative path -> text)."""

    folder: str
    name: str  # its registry entry
    files: dict[str, str]
    created: bool = True  # False: an existing folder the new one builds on (a dialect)


def _existing_targets(root: Path) -> dict[str, Path]:
    """CMake target -> folder of every extension folder in the checkout (TritonExt<leaf>)."""
    out: dict[str, Path] = {}
    for pattern in ("passes/*", "backends/*/*", "dialects/*", "language/*"):
        for d in root.glob(pattern):
            if (d / "CMakeLists.txt").exists():
                out[f"TritonExt{d.name}"] = d
    return out


def _existing_dialect(root: Path, manifest: Any, d: Names) -> _ir.DialectNames:
    """The scaffolded dialect ``dialects/<d>`` that a new language extension builds ops of."""
    from ..._errors import TritonExtError

    folder = f"dialects/{d.camel}"
    how = (f"pass --dialect with a new name to scaffold a fresh dialect, or write "
           f"language/<Name>/ by hand for {folder}")
    try:
        ext = manifest.extension(d.snake)
    except TritonExtError:
        raise ScaffoldError(f"{root / folder}: exists but registry.yaml has no entry '{d.snake}'; "
                            + how) from None
    td = root / folder / f"{d.camel}.td"
    lower = f"{d.snake}_lower"
    text = td.read_text(encoding="utf-8") if td.exists() else ""
    namespace = re.search(r'let\s+name\s*=\s*"([A-Za-z_][\w.]*)"', text)
    if (ext.kind != "dialect" or ext.directory.rstrip("/") != folder or namespace is None
            or f'_Op<"{_ir.OP_MNEMONIC}"' not in text
            or lower not in {p.name for p in ext.passes}):
        raise ScaffoldError(f"{root / folder}: not a dialect made by `triton-ext new dialect` "
                            f"(expected kind dialect, {td.name} defining op "
                            f"'{_ir.OP_MNEMONIC}' and pass {lower}); " + how)
    return _ir.DialectNames(d.camel, d.snake, d.kebab, namespace.group(1))


def _plan(kind: str, n: Names, root: Path, manifest: Any, owner: str,
          dialect: str | None) -> tuple[list[Written], str, list[str], list[str]]:
    """Folders to write, registry entries to append, and the extension and pass names added."""
    if dialect is not None and kind != "language":
        raise ScaffoldError(f"--dialect: only `triton-ext new language` takes a dialect, not {kind}")
    if kind == "pass":
        folder = f"passes/{n.camel}"
        entry = render_entry("pass", _pass_values(n, folder, owner))
        return [Written(folder, n.snake, _pass_files(n, folder))], entry, [n.snake], [n.snake]
    if kind == "dialect":
        d = _ir.DialectNames(n.camel, n.snake, n.kebab, _ir.dialect_namespace(n.snake))
        return ([Written(d.folder, d.snake, _ir.dialect_files(d))], _ir.dialect_entry(d, owner),
                [n.snake], [d.lower_pass])
    dn = names_for(dialect) if dialect is not None else names_for(f"{n.camel}IR")
    known = {e.name: e for e in manifest.extensions}.get(dn.snake)
    if known is not None and known.kind == "dialect" and known.directory.startswith("dialects/"):
        dn = names_for(Path(known.directory).name)  # demo_ir -> the folder's spelling, DemoIR
    if dn.camel == n.camel:
        raise ScaffoldError(f"--dialect {dialect}: the dialect needs a name of its own (both "
                            f"would build the CMake target TritonExt{n.camel}); try {n.camel}IR")
    written: list[Written] = []
    entries, names, passes = "", [], []
    if known is not None and not (root / "dialects" / dn.camel).exists():
        raise ScaffoldError(f"registry entry '{dn.snake}' exists but {root / 'dialects' / dn.camel} "
                            "does not; --dialect needs the dialect's source folder")
    if (root / "dialects" / dn.camel).exists():
        d = _existing_dialect(root, manifest, dn)
        written.append(Written(d.folder, d.snake, {}, created=False))
    else:
        d = _ir.DialectNames(dn.camel, dn.snake, dn.kebab, _ir.dialect_namespace(dn.snake))
        written.append(Written(d.folder, d.snake, _ir.dialect_files(d)))
        entries, names, passes = _ir.dialect_entry(d, owner), [d.snake], [d.lower_pass]
    lang = _ir.LanguageNames(n.camel, n.snake, d)
    written.insert(0, Written(lang.folder, lang.snake, _ir.language_files(lang)))
    return written, _ir.language_entry(lang, owner) + entries, [n.snake, *names], passes


def _check_free(root: Path, manifest: Any, written: Sequence[Written], names: Sequence[str],
                passes: Sequence[str]) -> None:
    """Refuse extension and pass names, folders and CMake targets that already exist."""
    taken = {e.name for e in manifest.extensions} | {p.name for p in manifest.passes}
    for name in (*names, *passes):
        if name in taken:
            raise ScaffoldError(f"'{name}' is already an extension or pass name in the registry; "
                                "choose another name")
    targets = _existing_targets(root) | {f"TritonExt{Path(e.directory).name}": root / e.directory
                                         for e in manifest.extensions}
    for w in written:
        if not w.created:
            continue
        target = root / w.folder
        if target.exists():
            raise ScaffoldError(f"{target}: already exists; choose another name or remove the folder")
        cmake_target = f"TritonExt{Path(w.folder).name}"
        if cmake_target in targets:
            raise ScaffoldError(f"{target}: its CMake target {cmake_target} is already built from "
                                f"{targets[cmake_target]}; choose another name")


def scaffold(kind: str, name: str, root: Path, registry: Path | None = None,
             owner: str | None = None, dialect: str | None = None) -> tuple[Path, Names]:
    """Write the extension folder under ``root`` and its registry entry; return the folder.

    ``language`` also writes ``dialects/<dialect>/`` (default ``<Name>IR``) and its entry when
    that folder does not exist yet; an existing one must have been made by ``new dialect``.
    """
    written, _ = scaffold_all(kind, name, root, registry, owner, dialect)
    return root.resolve() / written[0].folder, names_for(name)


def scaffold_all(kind: str, name: str, root: Path, registry: Path | None = None,
                 owner: str | None = None, dialect: str | None = None
                 ) -> tuple[list[Written], list[str]]:
    """:func:`scaffold`, returning every folder (written or reused) and registry name added."""
    if kind not in _KIND_ROOT:
        raise ScaffoldError(f"kind '{kind}': expected one of {', '.join(_KIND_ROOT)}")
    n = names_for(name)
    root = root.resolve()
    registry = registry or root / "registry.yaml"
    if not (root / "CMakeLists.txt").exists() or not (root / "cmake" / "TritonExt.cmake").exists():
        raise ScaffoldError(f"{root}: not a triton-ext source checkout (no CMakeLists.txt and "
                            "cmake/TritonExt.cmake); run in a clone or pass --root")
    if not registry.exists():
        raise ScaffoldError(f"{registry}: registry not found; expected registry.yaml at the "
                            "checkout root (or pass --registry)")
    from ..._errors import TritonExtError
    from ..._manifest import load_manifest

    try:
        manifest = load_manifest(registry, entry_points=False)
    except TritonExtError as exc:
        raise ScaffoldError(f"the registry is broken, fix it first: {exc}") from exc
    folder = root / f"{_KIND_ROOT[kind]}/{n.camel}"
    if folder.exists():
        raise ScaffoldError(f"{folder}: already exists; choose another name or remove the folder")
    _check_free(root, manifest, [], [n.snake], [])  # before looking for a language's dialect
    written, entries, names, passes = _plan(kind, n, root, manifest, owner or _owner(root),
                                            dialect)
    _check_free(root, manifest, written, names, passes)
    _append_entries(registry, entries, names)
    for w in written:
        for rel, text in w.files.items():
            path = root / w.folder / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    return written, names


def main(argv: Sequence[str] | None = None) -> int:
    from ..._settings import repo_root

    parser = argparse.ArgumentParser(
        prog="triton-ext new",
        description="Scaffold an extension folder and its registry.yaml entry.",
        epilog="Then: triton-ext build NAME && triton-ext test NAME")
    parser.add_argument("kind", choices=sorted(_KIND_ROOT))
    parser.add_argument("name", help="CamelCase (DemoThing) or snake_case (demo_thing)")
    parser.add_argument("--root", type=Path, default=None,
                        help="checkout to write into (default: the one triton_ext lives in)")
    parser.add_argument("--registry", type=Path, default=None,
                        help="registry to add the entry to (default: <root>/registry.yaml)")
    parser.add_argument("--owner", default=None, help="owner in the registry (default: git user)")
    parser.add_argument("--dialect", default=None,
                        help="language only: the dialect (made by `new dialect`) whose op the "
                             "functions build; written too if missing (default: <Name>IR)")
    args = parser.parse_args(argv)
    root = (args.root or repo_root()).resolve()
    try:
        written, names = scaffold_all(args.kind, args.name, root, args.registry, args.owner,
                                      args.dialect)
    except ScaffoldError as exc:
        print(f"triton-ext new: error: {exc}", file=sys.stderr)
        return 1
    for w in written:
        target = root / w.folder
        if not w.created:
            print(f"using {target} (exists)")
            continue
        print(f"created {target}")
        for rel in sorted(w.files):
            print(f"  {target / rel}")
    print(f"registry entries added: {', '.join(names)}")
    order = " ".join(w.name for w in reversed(written))  # the dialect before its language
    print(f"next: triton-ext build {order} && triton-ext test {order}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
