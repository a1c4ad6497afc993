"""A kernel whose threads launch kernels that launch kernels (dynamic parallelism) grows its work
while it runs. The watchdog forecasts the whole launch tree from the children each depth's grids
launch, stops a tree that would clearly outlast it, and says how big it is and what to do."""
import numpy as np
import pytest

import cudalab
from cudalab.errors import KernelError

RDC = ["-arch=compute_90", "-rdc=true"]

# every thread of every grid down to depth 3 launches one more grid of as many threads:
# 1 + 32 + 32^2 + 32^3 = 33,825 grids, far more than a 0.5 s watchdog allows
FANOUT = r'''
__global__ void fan(int* grids, int depth) {
  if (threadIdx.x == 0) atomicAdd(grids, 1);
  if (depth < 3) fan<<<1, blockDim.x>>>(grids, depth + 1);
}'''


@pytest.fixture
def small_watchdog():
    cudalab.set_watchdog(0.5)
    yield
    cudalab.set_watchdog(10)


def test_a_launch_tree_too_big_for_the_watchdog_stops_with_its_size(small_watchdog):
    fan = cudalab.compile(FANOUT, options=RDC).fan
    grids = np.zeros(1, np.int32)
    with pytest.raises(KernelError) as e:
        fan[1, 32](grids, np.int32(0))
    err = e.value
    assert err.code == "cudaErrorLaunchTimeout"
    msg = str(err)
    assert "grids it launched from the device" in msg and "launch tree" in msg
    # the branching of each depth, and the tree they make
    assert "32 at depth 0, 32 at depth 1, 32 at depth 2 and none at depth 3" in msg
    assert "about 33,825 grids" in msg
    assert "on the emulator" in msg and "--timeout" in msg and "--device gpu" in msg
    p = err.findings[0].details["progress"]
    assert p["estimated_grids"] == 33825 and p["whole"]
    assert 0 < p["grids_done"] == grids[0] < 33825       # it stopped early, counting the grids that ran
    # the next launch works
    small = np.zeros(1, np.int32)
    cudalab.compile(FANOUT.replace("depth < 3", "depth < 1"), options=RDC).fan[1, 4](small, np.int32(0))
    assert small[0] == 5


def test_a_small_launch_tree_runs_to_the_end(small_watchdog):
    grids = np.zeros(1, np.int32)
    cudalab.compile(FANOUT.replace("depth < 3", "depth < 2"), options=RDC).fan[1, 4](grids, np.int32(0))
    assert grids[0] == 1 + 4 + 16


def test_the_progress_bar_of_a_launch_tree_counts_grids(monkeypatch):
    from cudalab.runtime import progress
    seen = []
    monkeypatch.setattr(progress.Bar, "__call__", lambda bar, p: seen.append(p))
    from cudalab.emulator import launchtree
    monkeypatch.setattr(launchtree, "SETTLE", 0.05)   # judge and report the tree after 50 ms, not 0.5 s
    cudalab.set_watchdog(120)         # its 8,421 grids take 0.7 s here, 5 s on a slow, busy machine
    try:
        grids = np.zeros(1, np.int32)
        cudalab.compile(FANOUT, options=RDC).fan[1, 20](grids, np.int32(0))
    finally:
        cudalab.set_watchdog(10)
    assert grids[0] == 1 + 20 + 20 ** 2 + 20 ** 3           # it fitted, and ran to the end
    trees = [p for p in seen if p.unit == "grids"]
    assert trees, "no progress report counted grids"
    assert all(p.blocks_total == grids[0] for p in trees)   # the forecast of the whole tree, from its branching
    assert all(0 < p.blocks_done < p.blocks_total for p in trees)
