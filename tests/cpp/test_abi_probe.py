"""The ABI probe: plugins built from Debian's LLVM 23 headers must agree with libtriton.

The probe plugin (tests/cpp/abi-probe) runs inside stock triton on a real kernel compiled through
cubin and reports each check; a mismatch fails with a table of what was expected and found.
It runs in a child process so that a crash (the likeliest symptom of header drift) is reported
rather than taking the test session down.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tests.cpp.cpp_support import TEST_PLUGINS

PROBE = TEST_PLUGINS / "libTritonExtAbiProbe.so"

CHILD = textwrap.dedent("""
    import json, sys
    import triton, triton.language as tl
    from triton._C.libtriton import ir, passes
    from triton.backends.compiler import GPUTarget

    plugin, report = sys.argv[1], sys.argv[2]
    passes.plugin.extend_with(plugin)

    @triton.jit
    def kernel(X, Y, N, BLOCK: tl.constexpr):
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for i in range(0, N, BLOCK):
            offs = i + tl.arange(0, BLOCK)
            acc += tl.load(X + offs, mask=offs < N, other=0.0)
        tl.store(Y + tl.arange(0, BLOCK), acc)

    def hook(*args):
        if not args:
            return ("abi-probe", "abi-probe")
        backend, stages, options, language, capability = args
        make_ttir = stages["ttir"]
        def ttir(src, metadata):
            mod = make_ttir(src, metadata)
            pm = ir.pass_manager(mod.context)
            passes.plugin.add_abi_probe(pm, [f"report={report}"])
            pm.run(mod, "abi-probe")
            return mod
        stages["ttir"] = ttir

    triton.knobs.runtime.add_stages_inspection_hook = hook
    src = triton.compiler.ASTSource(kernel, signature={"X": "*fp32", "Y": "*fp32", "N": "i32"},
                                    constexprs={"BLOCK": 128})
    compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32))
    assert compiled.asm["cubin"], "no cubin"
    print("compiled through cubin")
""")


def test_abi_probe_matches_libtriton(tmp_path: Path) -> None:
    if not PROBE.exists():
        pytest.fail(f"{PROBE} is missing: run `triton-ext build` (the probe is part of every build)")
    report = tmp_path / "abi.json"
    script = tmp_path / "abi_probe_child.py"  # @triton.jit needs its source in a file
    script.write_text(CHILD)
    res = subprocess.run([sys.executable, str(script), str(PROBE), str(report)],
                         capture_output=True, text=True, timeout=600,
                         env={**__import__("os").environ, "TRITON_CACHE_DIR": str(tmp_path)})
    assert res.returncode == 0, (
        f"the ABI probe's compile failed (exit {res.returncode}); header drift can crash here.\n"
        f"stdout:\n{res.stdout[-3000:]}\nstderr:\n{res.stderr[-3000:]}")
    checks = json.loads(report.read_text())
    assert len(checks) >= 15, f"the probe reported only {len(checks)} checks"
    bad = [c for c in checks if not c["ok"]]
    table = "\n".join(f"  {c['check']:<58} expected {c['expected']:>4}  found {c['found']:>4}"
                      for c in bad)
    assert not bad, ("plugins built with these headers disagree with libtriton:\n" + table +
                     "\nThe MLIR/LLVM headers in the toolchain drifted from libtriton's LLVM; "
                     "see shared/docs/triton-plugin-facts.md and `triton-ext doctor`.")
