"""The extension interface (issue 30): an extension's own Python package (registry ``package``) and
the function the loader calls when the extension is enabled (``on_enable``), instead of the core
naming the extension. Each check runs in a fresh interpreter, so that what was imported (and
armed at exit) before ``enable`` is visible."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from triton_ext._errors import ManifestError
from triton_ext._manifest import parse_registry
from triton_ext.testing import require_built

REPO = Path(__file__).resolve().parents[2]

REGISTRY = """\
schema: 1
extensions:
  demo:
    kind: pipeline
    directory: ext
    status: experimental
    summary: Compile without Triton's loop-invariant code motion, with a package of its own.
    targets: {{cuda: {{}}}}
    {fields}
    passes:
      demo_skip: {{stage: ttgir, skips: [triton_licm]}}
"""

PACKAGE = "CALLS = []\n\n\ndef on_enable() -> None:\n    CALLS.append('enabled')\n"


def _run(script: str, registry: Path | None = None) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO), "TRITON_EXT_ENTRY_POINTS": "0"}
    env.pop("TRITON_EXT_ENABLE", None)
    if registry is not None:
        env["TRITON_EXT_REGISTRY"] = str(registry)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_on_enable_is_called_on_each_enable_of_the_extension(tmp_path: Path) -> None:
    (tmp_path / "ext" / "demo_pkg").mkdir(parents=True)
    (tmp_path / "ext" / "demo_pkg" / "__init__.py").write_text(PACKAGE)
    registry = tmp_path / "registry.yaml"
    registry.write_text(REGISTRY.format(fields="package: demo_pkg\n    on_enable: demo_pkg:on_enable"))
    seen = _run(
        "import json, sys, triton_ext\n"
        "before = 'demo_pkg' in sys.modules\n"
        "triton_ext.enable('demo_skip')\n"
        "with triton_ext.enabled('demo'):\n"
        "    pass\n"
        "triton_ext.disable()\n"
        "triton_ext.enable('demo')\n"
        "pkg = triton_ext.import_extension('demo')\n"
        "print(json.dumps({'before': before, 'calls': pkg.CALLS, 'same': pkg is sys.modules['demo_pkg'],\n"
        "                  'file': pkg.__file__}))\n",
        registry)
    # Imported only when enabled, from the extension's folder, under its own name; called on
    # each of the three enables (the function is idempotent by contract).
    assert seen["before"] is False
    assert seen["calls"] == ["enabled"] * 3
    assert seen["same"] is True
    assert Path(seen["file"]) == tmp_path / "ext" / "demo_pkg" / "__init__.py"


def test_sanitizers_arm_their_exit_summary_through_on_enable() -> None:
    # The core does not name the sanitizers: their package (passes/Sanitizers/triton_ext_sanitizers)
    # is imported and armed by the registry's on_enable when a sanitizer pass is enabled.
    require_built("sanitizers")
    seen = _run(
        "import json, sys, triton_ext\n"
        "before = 'triton_ext_sanitizers' in sys.modules\n"
        "triton_ext.enable('nan_inf_check')\n"
        "s = sys.modules['triton_ext_sanitizers']\n"
        "print(json.dumps({'before': before, 'armed': s._exit_summary_armed,\n"
        "                  'api': s is triton_ext.import_extension('sanitizers') and callable(s.report)}))\n")
    assert seen == {"before": False, "armed": True, "api": True}


@pytest.mark.parametrize("fields, message", [
    ("on_enable: demo_pkg:on_enable", "expected a package field naming the extension's Python package, found none"),
    ("package: demo_pkg\n    on_enable: other_pkg:on_enable",
     "expected a function of the package demo_pkg (demo_pkg:function), found 'other_pkg:on_enable'"),
    ("package: demo_pkg\n    on_enable: demo_pkg.on_enable", "expected module:function of the extension's package"),
    ("package: demo-pkg", "expected a Python package name like triton_ext_onchip, found 'demo-pkg'"),
])
def test_package_fields_are_validated(fields: str, message: str) -> None:
    with pytest.raises(ManifestError) as info:
        parse_registry(REGISTRY.format(fields=fields))
    assert message in info.value.message


def test_a_declared_package_that_is_missing_says_where_it_looked(tmp_path: Path) -> None:
    registry = tmp_path / "registry.yaml"
    registry.write_text(REGISTRY.format(fields="package: demo_pkg_nowhere\n    on_enable: demo_pkg_nowhere:on_enable"))
    script = ("import triton_ext\n"
              "try:\n"
              "    triton_ext.enable('demo_skip')\n"
              "except triton_ext.TritonExtError as exc:\n"
              "    import json; print(json.dumps({'error': str(exc)}))\n")
    error = _run(script, registry)["error"]
    assert "its package demo_pkg_nowhere is neither in" in error and "install the extension's wheel" in error
