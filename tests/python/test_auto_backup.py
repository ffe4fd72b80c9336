"""The transparent mode never fails a launch that works without it (issue 26.3), on CPU.

:class:`triton_ext._backup.ArgumentBackup` saves and restores the memory a launch's tensor
arguments reach; the first tests run it on CPU tensors (torch's CPU build, the same
``set_``/``clone``/``copy_`` the GPU path runs): expanded (stride-0) views as FlagGems' ``addmm``
passes its bias, ``nn.Parameter`` arguments with grad mode on, views sharing one storage, the
documented size cap. The last tests launch a real JIT kernel under the mode with the host-only
driver (``HostOnly``: the JIT specializes and compiles through cubin as on a GPU host; the final
``kernel.run`` needs a GPU and raises, after the mode has decided): the mode's own work on such
arguments raises nothing, and a refused specialization is recorded once, with its reason. The
H200 side (a kernel launched with an expanded bias view under the mode, outputs compared):
``benchmarks/auto_safety_gpu.py``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

import pytest
import torch

import triton
import triton.language as tl
from triton.runtime.driver import driver

from tests.python.conftest import REPO
from tests.python.test_autotune import HostOnly
from triton_ext._backup import ArgumentBackup, BackupRefused, reach_bytes, tensors_of
from triton_ext._settings import settings
from triton_ext.testing import require_built

BUILD = Path(os.environ.get("TRITON_EXT_BUILD_DIR") or REPO / "build")


# -- the backup on CPU tensors ---------------------------------------------------------------------


def test_an_expanded_bias_is_saved_and_restored() -> None:
    base = torch.arange(8, dtype=torch.float32)
    bias = base.expand(4, 8)  # stride (0, 1): FlagGems' addmm passes its bias this way
    assert bias.stride() == (0, 1)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        bias.copy_(bias.clone())  # what the mode did before issue 26.3
    backup = ArgumentBackup.of([bias])
    assert backup.nbytes == 8 * 4  # the 8 floats it reaches, not 4 x 8
    base.fill_(-1.0)  # a kernel writing through the view
    backup.restore()
    assert torch.equal(base, torch.arange(8, dtype=torch.float32))


def test_a_parameter_is_restored_with_grad_mode_on_and_autograd_untouched() -> None:
    weight = torch.nn.Parameter(torch.randn(4, 4))
    assert torch.is_grad_enabled()
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        weight.copy_(weight.detach().clone())  # what the mode did before issue 26.3
    x = torch.randn(4, requires_grad=True)
    loss = (weight @ x).square().sum()  # saves weight for backward
    original = weight.detach().clone()
    version = weight._version
    backup = ArgumentBackup.of([weight, x])
    weight.data.zero_()  # a kernel writing the parameter's memory
    backup.restore()
    assert torch.equal(weight.detach(), original)
    assert weight._version == version and weight.grad is None
    loss.backward()  # the graph that saved weight still runs (no in-place version bump)
    assert x.grad is not None


def test_views_of_one_storage_are_saved_once() -> None:
    qkv = torch.randn(3, 16, 8)
    q, k, v = qkv.unbind(0)
    kt = k.transpose(0, 1)
    backup = ArgumentBackup.of([q, kt, v, (k,)])  # a tuple argument too
    assert backup.nbytes == qkv.numel() * 4 and len(backup.regions) == 1
    saved = qkv.clone()
    qkv.mul_(3)
    backup.restore()
    assert torch.equal(qkv, saved)
    other = torch.randn(5)
    assert len(ArgumentBackup.of([q, other]).regions) == 2
    assert reach_bytes(torch.empty(0, 3)) == (0, 0) and ArgumentBackup.of([torch.empty(0)]).nbytes == 0
    # A slice reaches from its offset to its last element only.
    assert reach_bytes(qkv[1, 2:4]) == ((16 * 8 + 2 * 8) * 4, (16 * 8 + 4 * 8) * 4)


def test_the_size_cap_refuses_before_allocating() -> None:
    big = torch.zeros(1024, 1024)  # 4 MiB
    with settings.scope(auto_backup_mb=3.0):
        with pytest.raises(BackupRefused, match=r"reach 4.0 MiB, above the backup cap of 3.0 MiB \(TRITON_EXT_AUTO_BACKUP_MB\)"):
            ArgumentBackup.of([big])
    with settings.scope(auto_backup_mb=5.0):
        assert ArgumentBackup.of([big]).nbytes == 4 * 2**20
    with pytest.raises(ValueError, match="TRITON_EXT_AUTO_BACKUP_MB: expected a size in MiB"):
        os.environ["TRITON_EXT_AUTO_BACKUP_MB"] = "lots"
        try:
            settings.auto_backup_mb
        finally:
            del os.environ["TRITON_EXT_AUTO_BACKUP_MB"]


def test_memory_that_is_not_a_tensor_is_refused() -> None:
    class RawPointer:
        def data_ptr(self) -> int:
            return 0x1000

    with pytest.raises(BackupRefused, match="argument 1 is a RawPointer, whose memory cannot be copied"):
        list(tensors_of([torch.zeros(1), RawPointer()]))
    with pytest.raises(BackupRefused, match="argument 0, element 1 is a RawPointer"):
        list(tensors_of([(torch.zeros(1), RawPointer())]))


_ALLOCATOR_REFUSES = """
import resource, torch
from triton_ext._backup import ArgumentBackup, BackupRefused
from triton_ext._settings import settings
big = torch.ones(64 * 2**20)  # 256 MiB, allocated before the limit
vm_kib = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, ((vm_kib + 64 * 1024) * 1024, resource.RLIM_INFINITY))
with settings.scope(auto_backup_mb=1024.0):  # under the cap: only the allocator can refuse
    try:
        ArgumentBackup.of([big])
        print("saved")
    except BackupRefused as exc:
        print("refused:", exc)
print("alive", float(big[:4].sum()))
"""


def test_an_allocation_that_fails_while_saving_is_a_refusal() -> None:
    # The cap and the free-memory check passed, and the copy still cannot be allocated (another
    # process took the memory meanwhile, a fragmented GPU): the mode must refuse the backup, so
    # the launch runs stock, rather than fail it. A child process with its address space limited
    # to 64 MiB more than it uses makes the CPU allocator refuse the 256 MiB copy.
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", _ALLOCATOR_REFUSES], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    assert lines[0].startswith("refused: saving 256.0 MiB of arguments failed: RuntimeError: "), lines
    assert lines[1] == "alive 4.0"


# -- the mode around a real JIT launch (host-only driver) ------------------------------------------


@triton.jit
def addmm(a, b, bias, out, M, N, K, stride_bias_m, stride_bias_n, BLOCK: tl.constexpr):
    # out = a @ b + bias, bias read through its strides (FlagGems passes an expanded view); a 2-D
    # grid and a dot, so grid_swizzle applies and the mode saves the arguments to time it.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK + tl.arange(0, BLOCK)
    rn = pid_n * BLOCK + tl.arange(0, BLOCK)
    rk = tl.arange(0, 16)
    acc = tl.zeros([BLOCK, BLOCK], dtype=tl.float32)
    for k in range(0, tl.cdiv(K, 16)):
        x = tl.load(a + rm[:, None] * K + (k * 16 + rk)[None, :])
        y = tl.load(b + (k * 16 + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(x, y, acc)
    acc += tl.load(bias + rm[:, None] * stride_bias_m + rn[None, :] * stride_bias_n)
    tl.store(out + rm[:, None] * N + rn[None, :], acc)


@pytest.fixture
def host_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    from triton_ext import _auto

    require_built("grid_swizzle")  # an unbuilt plugin fails the test, never skips it
    cache = tmp_path / "triton-cache"
    monkeypatch.setenv("TRITON_CACHE_DIR", str(cache))
    monkeypatch.setattr(triton.knobs.cache, "dir", str(cache), raising=False)
    monkeypatch.setenv("TRITON_EXT_REGISTRY", str(REPO / "registry.yaml"))
    monkeypatch.setenv("TRITON_EXT_BUILD_DIR", str(BUILD))
    monkeypatch.setenv("TRITON_EXT_AUTO_DIR", str(tmp_path / "auto"))
    monkeypatch.setenv("TRITON_EXT_AUTO_WARPS", "0")  # the passes' test: warp counts in test_auto_warps.py
    monkeypatch.setenv("TRITON_EXT_AUTO_STAGES", "0")  # and depths in test_auto_stages.py
    monkeypatch.setattr(driver, "_active", HostOnly())
    auto = _auto.activate(["grid_swizzle"])
    try:
        yield auto
    finally:
        _auto.deactivate()


def _launch_without_gpu(launch: Any) -> None:
    """Run a launch on the host-only driver: everything up to ``kernel.run`` runs (the mode's
    decision included); loading the cubin needs the GPU driver's launcher, which HostOnly lacks."""
    with pytest.raises(AttributeError, match="'HostOnly' object has no attribute 'launcher_cls'"):
        launch()


def _inputs(parameter: bool = False) -> tuple[torch.Tensor, ...]:
    a, b = torch.randn(32, 32), torch.randn(32, 32)
    bias = torch.randn(32)
    if parameter:  # weights and bias as a module holds them
        b, bias = torch.nn.Parameter(b), torch.nn.Parameter(bias)
    return a, b, bias.expand(32, 32), torch.zeros(32, 32)  # the bias as an expanded view


def _addmm(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor, out: torch.Tensor, block: int = 16) -> None:
    addmm[(2, 2)](a, b, bias, out, 32, 32, 32, *bias.stride(), BLOCK=block)


def test_expanded_bias_and_parameter_launch_under_the_mode(host_mode: Any) -> None:
    assert torch.is_grad_enabled()
    inputs = _inputs()
    saved = [t.detach().clone() for t in inputs]
    _launch_without_gpu(lambda: _addmm(*inputs))
    _launch_without_gpu(lambda: _addmm(*_inputs(parameter=True), block=32))  # another specialization
    # grid_swizzle applies, so the mode saved the arguments and tried to time the variants; timing
    # needs a GPU, so each decision is no pass with the reason, and the memory was restored.
    assert [(d.kernel, d.choice, d.applicable, d.refused) for d in host_mode.decisions] == [
        ("addmm", "", ["grid_swizzle"], None)] * 2
    assert all(d.error and d.error.startswith("timing failed, no pass kept: AttributeError") for d in host_mode.decisions)
    assert all(torch.equal(t.detach(), s) for t, s in zip(inputs, saved))


def test_a_refused_specialization_is_recorded_once_and_launches_stock(host_mode: Any) -> None:
    inputs = _inputs()
    with settings.scope(auto_backup_mb=0.0):  # as if the GPU were full: the backup is refused
        for _ in range(3):
            _launch_without_gpu(lambda: _addmm(*inputs))
    assert [(d.kernel, d.choice, d.refused) for d in host_mode.decisions] == [
        ("addmm", "", "the tensor arguments reach 12.1 KiB, above the backup cap of 0 B (TRITON_EXT_AUTO_BACKUP_MB)")]


def test_a_launch_under_async_compile_mode_gets_the_stock_kernel(host_mode: Any) -> None:
    # Under Triton's AsyncCompileMode the JIT compiles on an executor thread and a launch must not
    # wait on timing: the mode places the stock kernel and records why, once, without saving any
    # argument (the inputs are never touched by a backup or a variant).
    from concurrent.futures import ThreadPoolExecutor

    from triton.runtime._async_compile import AsyncCompileMode

    inputs = _inputs()
    with ThreadPoolExecutor(max_workers=1) as pool, AsyncCompileMode(pool):
        for _ in range(2):
            with pytest.raises(AttributeError, match="launcher_cls"):
                _addmm(*inputs)
    assert [(d.kernel, d.choice, d.applicable, d.refused) for d in host_mode.decisions] == [
        ("addmm", "", [], "compiled under Triton's AsyncCompileMode (nothing may be timed there)")]


def test_a_host_tensor_descriptor_is_saved_as_the_memory_it_reaches() -> None:
    # Triton's own host-side TMA descriptor (flag-gems' sm_90 GEMM takes three): TMA touches
    # base + sum(coordinate * stride) for coordinates inside `shape`, so that strided view of the
    # base is what is saved, restored and compared; here the left half of the top 4 rows.
    from triton.tools.tensor_descriptor import TensorDescriptor

    base = torch.arange(256.0).reshape(16, 16)
    descriptor = TensorDescriptor(base, [4, 8], [16, 1], [2, 8])
    (reached,) = tensors_of([descriptor])
    assert reached.data_ptr() == base.data_ptr() and reach_bytes(reached) == (0, (3 * 16 + 7 + 1) * 4)
    assert reached.tolist() == base[:4, :8].tolist()
    backup = ArgumentBackup.of([descriptor])
    assert backup.nbytes == 56 * 4  # its first to its last reachable element
    base.zero_()
    backup.restore()
    assert base.flatten()[:56].tolist() == list(map(float, range(56)))  # restored
    assert base.flatten()[56:].tolist() == [0.0] * 200  # beyond its reach: never touched
    # As TensorDescriptor.from_tensor makes it: the whole tensor.
    whole = torch.ones(64, 64)[8:]
    assert reach_bytes(tensors_of([TensorDescriptor.from_tensor(whole, [16, 16])]).__next__()) == reach_bytes(whole)


def test_a_host_tensor_descriptor_reaching_past_its_storage_is_refused() -> None:
    from triton.tools.tensor_descriptor import TensorDescriptor

    descriptor = TensorDescriptor(torch.zeros(8, 8), [16, 8], [8, 1], [8, 8])  # 16 rows of an 8-row tensor
    with pytest.raises(BackupRefused, match=r"argument 0 is a TensorDescriptor whose shape \[16, 8\] and strides "
                                            r"\[8, 1\] reach memory its base cannot be viewed over"):
        list(tensors_of([descriptor]))


def test_gluon_descriptors_tiled_are_saved_and_im2col_refused() -> None:
    # Gluon's descriptors carry a shared-memory layout besides; a tiled one reaches what Triton's
    # does, an im2col one gathers pixels by its box corners, which the strided view does not model.
    from triton.experimental.gluon.language._layouts import NVMMASharedLayout
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor, TensorDescriptorIm2Col

    layout = NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)
    base = torch.zeros(64, 64, dtype=torch.float16)
    (reached,) = tensors_of([TensorDescriptor.from_tensor(base, [64, 64], layout)])
    assert reach_bytes(reached) == reach_bytes(base)
    image = torch.zeros(1, 8, 8, 64, dtype=torch.float16)  # N, H, W, C
    im2col = TensorDescriptorIm2Col(image, list(image.shape), list(image.stride()), [64, 64], layout,
                                    pixel_box_lower_corner=[-1, -1], pixel_box_upper_corner=[1, 1])
    with pytest.raises(BackupRefused, match="argument 0 is a TensorDescriptorIm2Col, whose memory cannot be copied"):
        list(tensors_of([im2col]))
