"""The runtime's shape (issue 30): layers without import circles, no private names reached across
modules, and a core that never names an extension.

The import graph is read from the source with ``ast``: every ``import`` and ``from ... import``
counts, at module level, inside functions and under ``if TYPE_CHECKING`` alike, since each one is
a dependency a reader has to follow. A cycle is a strongly connected component of that graph.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "triton_ext"
#: Scaffold templates carry @@placeholders@@ and are not Python until `triton-ext new` fills them.
TEMPLATES = PACKAGE / "dev" / "scaffold" / "templates"


def _modules(root: Path = PACKAGE) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package (templates aside)."""
    out: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        if TEMPLATES in path.parents:
            continue
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, known: dict[str, Path]) -> set[str]:
    """The package's modules an import statement names (``from . import _x`` names ``_x``)."""
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    else:
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        targets = [f"{prefix}.{alias.name}" if f"{prefix}.{alias.name}" in known else prefix for alias in node.names]
    found: set[str] = set()
    for target in targets:
        while target and target not in known and "." in target:
            target = target.rsplit(".", 1)[0]
        if target in known and target != module:
            found.add(target)
    return found


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (anywhere in the file)."""
    known = _modules(root)
    graph: dict[str, set[str]] = {}
    for module, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        edges: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges |= _imported(node, module, path.name == "__init__.py", known)
        graph[module] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle(tmp_path: Path) -> None:
    # The finder itself: two modules importing each other (one inside a function) and a
    # three-module ring are cycles; a chain is not.
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def f():\n    from .a import x\n")
    (pkg / "c.py").write_text("from .d import y\n")
    (pkg / "d.py").write_text("import pkg.e\n")
    (pkg / "e.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import z\n")
    (pkg / "f.py").write_text("from . import a\n")
    assert cycles(import_graph(pkg)) == [["pkg.a", "pkg.b"], ["pkg.c", "pkg.d", "pkg.e"]]


def test_no_import_cycle_in_triton_ext() -> None:
    graph = import_graph()
    assert "triton_ext._triton" in graph and "triton_ext._selection" in graph["triton_ext"]
    found = cycles(graph)
    assert not found, "import cycles in triton_ext (each list imports itself through the others):\n" + "\n".join(
        " <-> ".join(c) for c in found)


def test_layers() -> None:
    # The layers of the runtime, each importing only those below it: the manifest (model, then
    # validation, then loading), the selection, which hands its state to the one package that
    # touches Triton's compiler (_triton: tap, runner, hook), which knows nothing of the selection
    # or the loader.
    graph = import_graph()
    assert "triton_ext._manifest" not in graph["triton_ext._model"]
    assert "triton_ext._schema" not in graph["triton_ext._model"]
    assert "triton_ext._manifest" not in graph["triton_ext._schema"]
    triton_layer = {m for m in graph if m == "triton_ext._triton" or m.startswith("triton_ext._triton.")}
    assert triton_layer >= {"triton_ext._triton.tap", "triton_ext._triton.runner", "triton_ext._triton.hook"}
    reached = set().union(*(graph[m] for m in triton_layer)) - triton_layer
    assert reached.isdisjoint({"triton_ext._selection", "triton_ext._loader", "triton_ext._manifest", "triton_ext._auto"})
    # Inside it: the tap, then the runner, then the hook.
    assert "triton_ext._triton.runner" not in graph["triton_ext._triton.tap"]
    assert "triton_ext._triton.hook" not in graph["triton_ext._triton.runner"] | graph["triton_ext._triton.tap"]
    assert "triton_ext._triton" in graph["triton_ext._selection"]


def _private_reaches(path: Path, module: str, known: dict[str, Path]) -> list[str]:
    """``from .x import _name`` and ``x._name`` where ``x`` is another module of the package."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    is_package = path.name == "__init__.py"
    aliases: dict[str, str] = {}
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            targets = _imported(node, module, is_package, known)
            for alias in node.names:
                qualified = next((t for t in targets if t.endswith("." + alias.name)), None)
                if qualified is not None:  # a module: its name may start with _, it is public in the package
                    aliases[alias.asname or alias.name] = qualified
                elif alias.name.startswith("_") and targets and not alias.name.startswith("__"):
                    out.append(f"{path.relative_to(REPO)}:{node.lineno}: imports {alias.name} from {sorted(targets)[0]}")
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            out.append(f"{path.relative_to(REPO)}:{node.lineno}: reads {aliases[node.value.id]}.{node.attr}")
    return out


def test_no_private_name_reached_across_modules() -> None:
    known = _modules()
    found = [hit for module, path in known.items() for hit in _private_reaches(path, module, known)]
    assert not found, "private names used outside their module (give them a public name or pass them):\n" + \
        "\n".join(found)


#: Where the core may name an extension: documentation of the public API, whose examples are real
#: passes (what ``help(triton_ext)`` shows). Nothing else: the core knows extensions through the
#: registry's fields (role, auto, package, on_enable) only.
ALLOWED = {
    ("triton_ext/__init__.py", "loop_split"): "module docstring: the usage example",
    ("triton_ext/__init__.py", "nan_inf_check"): "module docstring: options in TRITON_EXT_ENABLE",
    ("triton_ext/__init__.py", "sanitizers"): "import_extension's docstring: the example",
}


def _registry_names() -> set[str]:
    data = yaml.safe_load((REPO / "registry.yaml").read_text(encoding="utf-8"))
    names = set(data["extensions"])
    for entry in data["extensions"].values():
        names |= set(entry.get("passes") or {})
    return names


def test_the_core_never_names_an_extension() -> None:
    names = _registry_names()
    assert {"loop_split", "sanitizers", "nan_inf_check"} <= names
    pattern = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(sorted(map(re.escape, names), key=len, reverse=True))
                         + r")(?![A-Za-z0-9_])")
    found: list[str] = []
    used: set[tuple[str, str]] = set()
    for path in sorted(PACKAGE.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        rel = str(path.relative_to(REPO))
        for number, line in enumerate(text.splitlines(), 1):
            for match in pattern.finditer(line):
                if (rel, match.group(1)) in ALLOWED:
                    used.add((rel, match.group(1)))
                    continue
                found.append(f"{rel}:{number}: {match.group(1)}: {line.strip()[:120]}")
    assert not found, "the core names extensions (use a registry field instead):\n" + "\n".join(found)
    assert used == set(ALLOWED), f"allow-list entries no longer needed: {sorted(set(ALLOWED) - used)}"
