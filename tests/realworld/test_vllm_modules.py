"""vLLM's attention kernels come from the pinned wheel's own files, without vllm's package
``__init__`` (which needs vLLM's CUDA build): the JITFunctions are the files' code, the stand-ins
answer what the launchers ask, and the launchers give the corpus its launches."""

from __future__ import annotations

import json
import subprocess
import sys

from triton_ext.testing import repo_root

_PROBE = """
import json, sys
from tests.realworld.realworld_kernels import BY_NAME, Tensors, compile_args
from tests.realworld import vllm_modules
out = {}
for name in ("vllm_unified_prefill", "vllm_unified_decode_3d", "vllm_prefix_prefill", "vllm_paged_decode"):
    k = BY_NAME[name]
    fn = k.fn()
    launch = k.build(Tensors("meta"))
    sig, constexprs, _ = compile_args(fn, launch)
    out[name] = [type(fn).__name__, fn.fn.__module__, fn.fn.__code__.co_filename, len(sig),
                 list(launch.grid), launch.num_warps, launch.num_stages]
kv = sys.modules["vllm.v1.kv_cache_interface"].KVQuantMode
print(json.dumps({"bare": vllm_modules.loaded_without_package_init(), "root": str(vllm_modules.source_root()),
                  "version": vllm_modules.VERSION, "kv": [m.name for m in kv][:4], "kernels": out,
                  "cuda_ext": "vllm._C" in sys.modules}))
"""


def test_kernels_load_from_the_wheel_files_without_vllm() -> None:
    res = subprocess.run([sys.executable, "-c", _PROBE], cwd=repo_root(), capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    got = json.loads(res.stdout.strip().splitlines()[-1])
    pin = (repo_root() / "tests" / "realworld" / "vllm-requirements.txt").read_text(encoding="utf-8")
    assert f"vllm=={got['version']}\n" in pin
    assert got["bare"] is True and got["cuda_ext"] is False
    assert got["kv"] == ["NONE", "FP8_PER_TENSOR", "INT8_PER_TOKEN_HEAD", "FP8_PER_TOKEN_HEAD"]
    for name, (kind, module, path, nparams, grid, warps, stages) in got["kernels"].items():
        assert kind == "JITFunction" and module.startswith("vllm.v1.attention.ops."), name
        assert path.startswith(got["root"]) and f"vllm-{got['version']}" in path, path
        assert nparams > 20, name
    # What vLLM's launchers chose (unified_attention: 2-D grid of q-blocks x kv heads, 3-D adds
    # 16 segments; prefix-prefill: one stage).
    assert got["kernels"]["vllm_unified_prefill"][4] == [2 * 2048 // 4 + 2, 8]
    assert got["kernels"]["vllm_unified_decode_3d"][4] == [8 // 4 + 8, 8, 16]
    assert got["kernels"]["vllm_prefix_prefill"][6] == 1


def test_fetch_replaces_a_copy_made_before_the_file_list_grew(tmp_path, monkeypatch) -> None:
    # A copy holding an older FILES (one file short, and one the wheel no longer gives) is replaced
    # whole from the wheel; a complete copy is left as it is, with no download.
    import zipfile

    from tests.realworld import vllm_modules

    def pip_download(cmd, check):  # what `pip download` leaves: the pinned wheel, here with FILES only
        folder = cmd[cmd.index("-d") + 1]
        with zipfile.ZipFile(f"{folder}/vllm-{vllm_modules.VERSION}-py3-none-any.whl", "w") as zf:
            for name in vllm_modules.FILES:
                zf.writestr(name, f"# {name}\n")

    monkeypatch.setattr(vllm_modules.subprocess, "run", pip_download)
    dest = tmp_path / f"vllm-{vllm_modules.VERSION}"
    for name in vllm_modules.FILES[:-1]:
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        (dest / name).write_text("old\n")
    (dest / "vllm" / "gone.py").write_text("old\n")
    (tmp_path / f"{dest.name}.part").mkdir()  # left by an interrupted fetch
    assert vllm_modules.fetch(dest) == dest
    assert all((dest / name).read_text() == f"# {name}\n" for name in vllm_modules.FILES)
    assert not (dest / "vllm" / "gone.py").exists() and not (tmp_path / f"{dest.name}.part").exists()

    def no_download(cmd, check):
        raise AssertionError("a complete copy needs no download")

    monkeypatch.setattr(vllm_modules.subprocess, "run", no_download)
    assert vllm_modules.fetch(dest) == dest
