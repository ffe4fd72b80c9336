"""sglang's kernel modules import with and without its serving stack (a GPU host has the wheel
only: sglang/__init__ then fails on pybase64, zmq, ...). The fallback must give the package's
own JITFunctions, with the same parameters as the normal import."""

from __future__ import annotations

import json
import subprocess
import sys

from triton_ext.testing import repo_root

_PROBE = """
import json, sys
{block}
from tests.realworld.realworld_kernels import BY_NAME, Tensors, compile_args
from tests.realworld.sglang_modules import loaded_without_package_init
out = {{}}
for name in ("sglang_prefill_attention", "sglang_extend_attention"):
    k = BY_NAME[name]
    fn = k.fn()
    sig, _, _ = compile_args(fn, k.build(Tensors("meta")))
    out[name] = [type(fn).__name__, fn.fn.__module__, fn.fn.__code__.co_filename, list(sig)]
print(json.dumps({{"bare": loaded_without_package_init(), "kernels": out}}))
"""


def _probe(block: str) -> dict:
    res = subprocess.run([sys.executable, "-c", _PROBE.format(block=block)], cwd=repo_root(),
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_kernel_modules_import_without_the_serving_stack() -> None:
    normal = _probe("")
    # pybase64 is one of the serving-stack modules sglang.srt.utils imports at module level.
    bare = _probe("sys.modules['pybase64'] = None")
    assert normal["bare"] is False and bare["bare"] is True
    assert bare["kernels"] == normal["kernels"]
    for kind, module, path, params in bare["kernels"].values():
        assert kind == "JITFunction" and module.startswith("sglang.srt.layers.attention.triton_ops.")
        assert "site-packages/sglang/" in path and len(params) > 20
