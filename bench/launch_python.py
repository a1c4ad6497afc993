"""CPU microseconds of one warm compiled-tier launch at a real size, split into native code and Python.

    python bench/launch_python.py                          # vector add 2^20, warp shuffle 2^20
    python bench/launch_python.py --launches 500 --profile /tmp/launch.prof
    python bench/launch_python.py --fresh             # arguments copied to the device before each launch
    python bench/launch_python.py --flush             # the same arguments, the CPU's caches flushed before each

A kernel that one native region runs whole (compiled.batch_lanes) spends its launch in the region's
native function and in the Python around it: the runtime's checks and parameters, the engine's
batches (a sample batch, then whole ones), each batch's context, masks and SIMT stack. The native
part is the time inside the regions' functions (each wrapped to read the clock); the rest is
Python. CPU time of this process (``time.process_time``), so a busy machine inflates it little.
``--fresh`` copies the arguments to the device again before each launch, as speed.py does (the copies
are not timed): new allocations, new pointers. ``--flush`` keeps the arguments and copies 64 MB (twice
the L3 cache here) before each launch instead: a launch on fresh arguments costs what one on old arguments
costs once its data and the runtime's own objects are out of the caches (bench/README.md, codegen10).
Compare two trees by running each with its own PYTHONPATH, back to back.
"""
from __future__ import annotations

import argparse
import cProfile
import gc
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from kernels import BENCHES  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--only", default="vector_add,warp_shuffle")
    p.add_argument("--size", type=int, default=1 << 20)
    p.add_argument("--launches", type=int, default=200)
    p.add_argument("--profile", help="write a cProfile of the timed launches (CPU clock) to this file")
    p.add_argument("--fresh", action="store_true", help="new device copies of the arguments before each launch")
    p.add_argument("--flush", action="store_true", help="a 64 MB copy before each launch (caches flushed)")
    a = p.parse_args()
    os.environ["CUDALAB_TIER"] = "compiled"
    import cudalab
    from cudalab.emulator import regions
    native = [0.0]

    def clocked(fn):
        def run(*args):
            t = time.process_time()
            try:
                return fn(*args)
            finally:
                native[0] += time.process_time() - t
        return run

    for name in a.only.split(","):
        b = BENCHES[name]
        kernel = cudalab.compile(b.source).get_kernel(b.kernel)
        host = b.inputs(a.size, np.random.default_rng(0))
        args = [cudalab.to_device(x) if isinstance(x, np.ndarray) else x for x in host]
        grid = b.launch(a.size, None)
        kernel[grid, b.block](*args)                     # compiles (or loads from the disk cache)
        for o in gc.get_objects():
            if isinstance(o, regions.Runner) and not getattr(o, "_clocked", False):
                o.fn = clocked(o.fn)
                o.fn_1d = None if o.fn_1d is None else clocked(o.fn_1d)
                o._clocked = True
        kernel[grid, b.block](*args)
        prof = cProfile.Profile(time.process_time) if a.profile else None
        native[0] = 0.0
        spent = 0.0
        junk = (np.ones(64 << 20, np.uint8), np.zeros(64 << 20, np.uint8)) if a.flush else None
        for _ in range(a.launches):
            if a.fresh:
                args = [cudalab.to_device(x) if isinstance(x, np.ndarray) else x for x in host]
            if junk:
                np.copyto(*junk)
            if prof:
                prof.enable()
            t = time.process_time()
            kernel[grid, b.block](*args)
            spent += time.process_time() - t
            if prof:
                prof.disable()
        if prof:
            prof.dump_stats(a.profile)
        total = spent / a.launches * 1e6
        nat = native[0] / a.launches * 1e6
        print(f"{name} {a.size}: {total:.0f} us a launch, native {nat:.0f} us, Python {total - nat:.0f} us")


if __name__ == "__main__":
    main()
