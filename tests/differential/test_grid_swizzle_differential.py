"""Differential tests of grid_swizzle's index math: a kernel with a dot (so the pass applies)
stores the program ids it sees; interpreted with and without the real pass, every grid must get
the same set of tiles, each exactly once (a permutation), for group sizes 8 (default), 3, 2 and
64 on every grid up to 20 x 20 and on long thin grids; and on grids at the launch limits (x up to
2^31 - 1, y up to 65535) sampled programs must land on the grouped order's exact tile.
"""

from __future__ import annotations

import random

import pytest

import numpy  # noqa: E402,F401  (a test dependency: pip install -e .[test]; a missing one fails)

import numpy as np  # noqa: E402

from tests.differential.host_passes import before_after  # noqa: E402
from tests.differential.interp import Machine  # noqa: E402

KERNEL = """
tt.func public @k(%outx: !tt.ptr<i32>, %outy: !tt.ptr<i32>, %dots: !tt.ptr<f32>) {
  %px = tt.get_program_id x : i32
  %py = tt.get_program_id y : i32
  %one = arith.constant dense<1.000000e+00> : tensor<2x2xf16>
  %z = arith.constant dense<0.000000e+00> : tensor<2x2xf32>
  %d = tt.dot %one, %one, %z : tensor<2x2xf16> * tensor<2x2xf16> -> tensor<2x2xf32>
  %c0 = arith.constant 0 : i32
  %c2 = arith.constant 2 : i32
  %c1 = arith.constant 1 : i32
  %last = scf.for %k = %c0 to %c2 step %c1 iter_args(%acc = %c0) -> (i32) : i32 {
    %again = tt.get_program_id y : i32
    scf.yield %again : i32
  }
  tt.store %outx, %px : !tt.ptr<i32>
  tt.store %outy, %last : !tt.ptr<i32>
  %ds = tt.splat %dots : !tt.ptr<f32> -> tensor<2x2x!tt.ptr<f32>>
  tt.store %ds, %d : tensor<2x2x!tt.ptr<f32>>
  tt.return
}
"""
OUTX, OUTY, DOTS = 1 << 40, 2 << 40, 3 << 40
GROUPS = [8, 3, 2, 64]


def grouped(px: int, py: int, nx: int, ny: int, group: int) -> tuple[int, int]:
    """The grouped ("super-grouping") order in exact integers (README's formula)."""
    g = min(group, nx)
    launch = py * nx + px
    per = g * ny
    first = (launch // per) * g
    gsz = min(nx - first, g)
    return first + (launch % per) % gsz, (launch % per) // gsz


def _run(group: int, lanes: list[tuple[int, int, int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """(before, after): (N, 2) program ids each lane's program stores, for (px, py, nx, ny)."""
    options = () if group == 8 else (("group-size", str(group)),)
    progs = before_after(KERNEL, "grid_swizzle", options)
    assert "triton_ext.grid_swizzled" in progs.after_text
    arr = np.array(lanes, np.int64)
    pid = np.stack([arr[:, 0], arr[:, 1], np.zeros(len(lanes), np.int64)], axis=1)
    grid = np.stack([arr[:, 2], arr[:, 3], np.ones(len(lanes), np.int64)], axis=1)
    out = []
    for func in (progs.before["k"], progs.after["k"]):
        m = Machine(len(lanes), program_id=pid, num_programs=grid)
        res = m.run(func, [np.full(len(lanes), p) for p in (OUTX, OUTY, DOTS)])
        assert not res.undefined.any(), np.array(lanes)[res.undefined][:5]
        x = next(ev.value for ev in res.stores if ev.addr[0] == OUTX)
        y = next(ev.value for ev in res.stores if ev.addr[0] == OUTY)
        out.append(np.stack([x, y], axis=1))
    return out[0], out[1]


def _small_grids() -> list[tuple[int, int]]:
    return [(nx, ny) for nx in range(1, 21) for ny in range(1, 21)] + \
        [(1, 300), (300, 1), (9, 17), (33, 65), (129, 7), (8, 100), (17, 3)]


@pytest.mark.parametrize("group", GROUPS)
def test_every_small_grid_is_permuted(group):
    grids = _small_grids()
    lanes = [(px, py, nx, ny) for nx, ny in grids for py in range(ny) for px in range(nx)]
    gid = np.array([i for i, (nx, ny) in enumerate(grids) for _ in range(nx * ny)])
    before, after = _run(group, lanes)
    assert (before == np.array(lanes)[:, :2]).all()  # the oracle: without the pass, identity
    # Per grid, the tiles computed with the pass are the tiles without it, each once.
    key_b = np.lexsort((before[:, 1], before[:, 0], gid))
    key_a = np.lexsort((after[:, 1], after[:, 0], gid))
    same = (before[key_b] == after[key_a]).all(axis=1)
    assert same.all(), [lanes[i] for i in key_a[~same][:5]]
    # And each program gets the grouped order's tile.
    exp = np.array([grouped(*lane, group) for lane in lanes])
    assert (after == exp).all()


TOP = 2**31 - 1
# Grids of fewer than 2^31 programs, up to the edge (65535 * 32767 = 2^31 - 98303, ...).
LIMIT_GRIDS = [(TOP, 1), (1, 65535), (2, 65535), (65535, 32767), (32768, 65535), (46341, 46340),
               (2**24, 127), (3, 65535), (2**16 + 1, 2**15 - 1), (TOP // 8, 7)]
# Legal CUDA grids (x <= 2^31 - 1, y <= 65535) of 2^31 programs or more: the launch index
# py * nx + px no longer fits in i32.
HUGE_GRIDS = [(TOP, 2), (65536, 32768), (2**20, 2**12), (TOP, 65535), (2**30 + 1, 2)]


def _sample(nx: int, ny: int, count: int, rng: random.Random) -> list[tuple[int, int, int, int]]:
    total = nx * ny
    picks = set(range(min(total, 40))) | {total - 1 - k for k in range(min(total, 40))}
    picks |= {rng.randrange(total) for _ in range(count)}
    return [(l % nx, l // nx, nx, ny) for l in sorted(picks)]


@pytest.mark.parametrize("grids", [LIMIT_GRIDS, HUGE_GRIDS], ids=["below-2^31", "2^31-and-more"])
@pytest.mark.parametrize("group", GROUPS)
def test_grids_at_the_launch_limits(group, grids):
    rng = random.Random(group)
    lanes = [lane for nx, ny in grids for lane in _sample(nx, ny, 400, rng)]
    _, after = _run(group, lanes)
    exp = np.array([grouped(*lane, group) for lane in lanes])
    bad = np.nonzero((after != exp).any(axis=1))[0]
    assert bad.size == 0, (
        f"{bad.size} of {len(lanes)} sampled programs get the wrong tile (px, py, nx, ny): "
        + str([(lanes[i], "expected", exp[i].tolist(), "got", after[i].tolist()) for i in bad[:5]]))
