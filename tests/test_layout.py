"""The shape of the repository (issue 15): every extension folder follows the contract written in
CONTRIBUTING.md, ``tools/`` holds only scripts a user runs, and nothing outside the package and
its own tests imports a private ``triton_ext._*`` module."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from triton_ext.testing import repo_root

REPO = repo_root()
REGISTRY = yaml.safe_load((REPO / "registry.yaml").read_text())["extensions"]
FOLDERS = sorted({entry["directory"] for entry in REGISTRY.values()})

#: Files an extension folder may hold at its root, by kind of file.
ROOT_FILES = re.compile(r"^(README\.md|CMakeLists\.txt|Passes\.td|[A-Z]\w*\.(td|cpp|h)|kernels\.py|bench\.py)$")
#: What results/ may hold: BENCHMARK.md, bench-<gpu>.json/png/svg, check-<gpu>.json/log, explore-<gpu>.json,
#: real-<gpu>.json (the pass on third-party kernels), vendor-<gpu>.json (bench.py --vendor: against
#: the vendor libraries), and check-<name>-<gpu>.json / real-<name>-<gpu>.json for a named GPU script
#: of the folder (check_issue26_gpu.py, bench_vllm.py, gpu_last_mile.py), vendor-<name>-<gpu>.json
#: for a partial vendor run (bench.py --vendor --only attention). Only bench-<gpu>.json is a
#: ``triton-ext bench`` report (the summary table and --compare read bench-*.json). <name>-analysis.md:
#: a written analysis of those results (Sanitizers' lastmile-analysis.md, issue 32).
RESULT_FILES = re.compile(r"^(BENCHMARK\.md|[a-z0-9]+-analysis\.md|bench-[a-z0-9]+\.(json|png|svg)|check-[a-z0-9]+\.(json|log)"
                          r"|explore-[a-z0-9]+\.json|real-[a-z0-9]+\.json|vendor-[a-z0-9]+\.json"
                          r"|(check|real|vendor)-[a-z0-9]+-[a-z0-9]+\.json)$")
#: GPU harnesses not yet folded into their bench.py's check mode (``triton-ext bench --check``):
#: they need a GPU to port and verify. The list may only shrink.
LEGACY_GPU_SCRIPTS = {"passes/Sanitizers/check_gpu.py", "language/RangeFacts/check_gpu.py",
                      # issue 17's H200 script (third-party kernels with vs without the pass);
                      # it came in on main after this list was written
                      "passes/LoopSplit/bench_real.py",
                      # H200 scripts of issues 26, 28 and 32 (python -m passes.<Folder>.<script>),
                      # merged on main after this list was written
                      "passes/LoopSplit/bench_vllm.py", "passes/LoopSplit/check_issue26_gpu.py",
                      "passes/Sanitizers/gpu_last_mile.py"}
#: Extra Python a folder may keep for exploration (not run by tests or CI).
EXPLORATION = {"backends/nvidia/StreamEviction/explore.py"}


def _kind(folder: str) -> str:
    return next(e["kind"] for e in REGISTRY.values() if e["directory"] == folder)


def test_every_extension_folder_is_in_the_registry() -> None:
    on_disk = {str(p.parent.relative_to(REPO)) for pattern in ("passes/*/CMakeLists.txt",
               "backends/*/*/CMakeLists.txt", "dialects/*/CMakeLists.txt", "language/*/CMakeLists.txt")
               for p in REPO.glob(pattern)}
    assert on_disk == set(FOLDERS), on_disk ^ set(FOLDERS)


@pytest.mark.parametrize("folder", FOLDERS)
def test_extension_folder_follows_the_contract(folder: str) -> None:
    root = REPO / folder
    kind = _kind(folder)
    packages = {e["package"] for e in REGISTRY.values() if e["directory"] == folder and e.get("package")}
    problems: list[str] = []
    for required in ("README.md", "CMakeLists.txt"):
        if not (root / required).is_file():
            problems.append(f"missing {required}")
    tests = root / "test"
    if not tests.is_dir():
        problems.append("missing test/ (lit .mlir and pytest test_*.py live there)")
    has_lit = any(tests.glob("*.mlir"))
    has_pytest = any(tests.glob("test_*.py"))
    if kind in ("pass", "dialect") and not (root / "Passes.td").is_file():
        problems.append("missing Passes.td (the only place a pass and its options are declared)")
    if kind in ("pass", "dialect") and not has_lit:
        problems.append("no lit test (test/*.mlir)")
    if kind in ("pass", "language") and not has_pytest:
        problems.append("no pytest file (test/test_*.py)")
    if kind == "pass":
        for required in ("kernels.py", "bench.py"):
            if not (root / required).is_file():
                problems.append(f"missing {required}")
    for path in sorted(root.iterdir()):
        rel = f"{folder}/{path.name}"
        if path.name in ("test", "results", "__pycache__") or rel in LEGACY_GPU_SCRIPTS | EXPLORATION:
            continue
        if path.is_dir() and path.name in packages:
            continue  # the extension's own Python package (registry package)
        if path.is_dir() or not ROOT_FILES.match(path.name):
            problems.append(f"{path.name}: not part of an extension folder (see CONTRIBUTING.md)")
    for path in sorted(tests.glob("*")) if tests.is_dir() else []:
        if not (path.suffix == ".mlir" or re.match(r"^test_\w+\.py$", path.name)
                or path.name in ("Inputs", "__pycache__")):
            problems.append(f"test/{path.name}: test/ holds lit .mlir files, Inputs/ and test_*.py")
    results = root / "results"
    for path in sorted(results.iterdir()) if results.is_dir() else []:
        if not RESULT_FILES.match(path.name):
            problems.append(f"results/{path.name}: expected BENCHMARK.md, bench-<gpu>.json/png, "
                            "check-<gpu>.json")
    assert not problems, f"{folder}: " + "; ".join(problems)


def test_legacy_gpu_scripts_still_exist() -> None:
    # The allow-list above must not hide a file that is gone (it may only shrink).
    missing = sorted(p for p in LEGACY_GPU_SCRIPTS | EXPLORATION if not (REPO / p).is_file())
    assert not missing, f"remove from the allow-list: {missing}"


def test_tools_holds_only_scripts_a_user_runs() -> None:
    tools = sorted(p.name for p in (REPO / "tools").iterdir())
    assert tools == ["demo.sh", "gpu_run.sh", "mutate.py", "setup.sh", "test.sh", "try-triton.sh"], tools


_PRIVATE = re.compile(r"^\s*(from\s+triton_ext(\.\w+)*\s+import\s+_\w+|from\s+triton_ext\._\w+|"
                      r"import\s+triton_ext\._\w+)", re.M)


def test_no_private_imports_outside_the_package_and_its_tests() -> None:
    # Extension code, examples, benchmarks and scripts use the public API (triton_ext,
    # triton_ext.bench, triton_ext.testing); only the package and tests/ see its internals.
    offenders = []
    for path in sorted(REPO.rglob("*.py")):
        rel = path.relative_to(REPO)
        if rel.parts[0] in ("triton_ext", "tests") or rel.parts[0].startswith((".venv", "build")) \
                or "__pycache__" in rel.parts:
            continue
        if _PRIVATE.search(path.read_text(encoding="utf-8")):
            offenders.append(str(rel))
    assert not offenders, offenders


def test_no_sys_path_edits() -> None:
    # Everything imports through packages (tests/) or triton_ext.testing.import_file (extension
    # folders); the package needs no sys.path edit to be importable.
    offenders = []
    for path in sorted(REPO.rglob("*.py")):
        rel = path.relative_to(REPO)
        if rel.parts[0].startswith((".venv", "build")) or "__pycache__" in rel.parts:
            continue
        text = path.read_text(encoding="utf-8")
        if re.search(r"sys\.path(\.insert|\.append|\[:0\]\s*=)", text):
            offenders.append(str(rel))
    assert not offenders, offenders


def test_no_module_over_500_lines_in_the_package() -> None:
    big = {str(p.relative_to(REPO)): n for p in (REPO / "triton_ext").rglob("*.py")
           if "templates" not in p.parts and (n := len(p.read_text().splitlines())) > 500}
    assert not big, big
