"""On a GPU: a transparent-mode choice runs only at launches of the size it was timed at, the no-pass
kernel at the others (:mod:`triton_ext._launch_size`). Each program writes its thread-block size
(PTX ``%ntid.x``, 32 threads per warp), so the output says which binary ran: the stock launch's 4
warps or the chosen ``num_warps*2`` variant's 8. Skipped without a GPU."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import triton
import triton.language as tl

from tests.python.test_gpu import gpu_available
from triton_ext._launch_size import UNDER_ONE_WAVE, WAVES, SizeGuardedKernel

pytestmark = pytest.mark.skipif(not gpu_available(), reason="needs a GPU")


@triton.jit
def block_threads(out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    threads = tl.inline_asm_elementwise("mov.u32 $0, %ntid.x;", "=r,r", [offs], dtype=tl.int32, is_pure=True,
                                        pack=1)
    program = tl.program_id(1) * tl.num_programs(0) + tl.program_id(0)  # every program of a 2-D grid its own row
    tl.store(out_ptr + program * BLOCK + offs, threads)


@pytest.mark.parametrize("size", [WAVES, UNDER_ONE_WAVE])
def test_a_choice_runs_at_launches_of_its_size_and_no_pass_at_the_others(size: str, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from triton_ext import _auto

    monkeypatch.setenv("TRITON_EXT_AUTO_DIR", str(tmp_path))
    monkeypatch.setenv("TRITON_EXT_AUTO_WARPS", "1")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    out = torch.zeros(sms * 32, dtype=torch.int32, device="cuda")
    block_threads.device_caches.clear()
    with _auto.auto_mode("grid_swizzle") as mode:  # decided for real at this launch; then overwritten
        block_threads[(1,)](out, BLOCK=32)
        ref, device, key = mode.placed[-1]
        path = mode.decision_path(ref(), key, device)
    torch.cuda.synchronize()
    assert out[:32].tolist() == [128] * 32  # stock: 4 warps
    path.write_text(json.dumps({"choice": "num_warps*2", "launch_size": size}))
    chosen_at_waves = size == WAVES
    with _auto.auto_mode("grid_swizzle") as mode:
        for grid, waves in (((sms,), True), ((1,), False), ((sms // 2, 2), True), ((sms - 1,), False)):
            out.zero_()
            block_threads[grid](out, BLOCK=32)
            torch.cuda.synchronize()
            launched = grid[0] * (grid[1] if len(grid) > 1 else 1)
            expected = 256 if waves == chosen_at_waves else 128
            assert out[:launched * 32].tolist() == [expected] * (launched * 32), (grid, size)
            assert out[launched * 32:].tolist() == [0] * (len(out) - launched * 32)
        placed = ref().device_caches[device][0][key]
        assert isinstance(placed, SizeGuardedKernel) and placed.size == size
        assert [(d.choice, d.from_disk, d.launch_size) for d in mode.decisions] == [("num_warps*2", True, size)]
    assert key not in ref().device_caches[device][0]  # the mode's kernels leave with it
