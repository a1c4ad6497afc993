"""A kernel's first launch and the launches after it, from an empty native cache: quick code first, better later.

    python bench/quick_code.py [NAME:N ...]     # default matmul:256 matmul:1024 matmul_unrolled:512
    LAUNCHES=8 python bench/quick_code.py matmul_unrolled:1024

NAME is a kernel of bench/cold_build.py (matmul: bench/kernels.py's 16x16 tiled matmul, as bench/speed.py
times it; matmul_unrolled: a 32x32 tile, every loop unrolled, 7.7 MB of IR), N its size. For each, in a
process of its own with a new, empty ``CUDALAB_CACHE`` and ``CUDALAB_TIER=compiled`` (as bench/speed.py):
every launch's CPU seconds (this process's clocks), wall seconds, the CPU seconds of child processes so far
(compiled.py's better build, better_code.py, runs in one) and the code the launch ended on: ``quick``
(LLVM's fast code generator), ``better`` (opt=2, built later) or ``usual`` (the module built once, as before
quick code existed). The output's hash shows the bytes are the same throughout. Give the load average with
the figures: wall time needs free cores.
"""
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from cold_build import KERNELS  # noqa: E402


def one_kernel(name: str, n: int, launches: int):
    import cudalab
    source, entry, case = KERNELS[name]
    mod = cudalab.compile(source)
    kernel = mod.get_kernel(entry)
    args, grid, block, check = case(np.random.default_rng(1), n)
    dev = [cudalab.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    digests = set()
    for i in range(launches):
        w0, c0 = time.perf_counter(), time.process_time()
        kernel[grid, block](*dev)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        children = os.times().children_user + os.times().children_system
        st = mod.ptx_module._decoded[mod._mangled(entry)].__dict__.get("_tier")
        fused = st.fused if st is not None else None
        code = ("interp" if not fused else "quick" if getattr(fused, "_better", None)
                else "better" if hasattr(fused, "_better") and getattr(st, "native_seconds", 0) else "usual")
        out = dev[2].copy_to_host()
        digests.add(hashlib.sha1(out.tobytes()).hexdigest()[:12])
        print(f"{name} {n} launch {i}: cpu {cpu:.3f} s, wall {wall:.3f} s, children {children:.2f} s, {code}", flush=True)
    right = check([None, None, out])
    print(f"{name} {n} outputs: {', '.join(sorted(digests))}, {'right' if right else 'WRONG'} (load {os.getloadavg()[0]:.1f})")


def main(argv):
    if argv[:1] == ["--child"]:
        return one_kernel(argv[1], int(argv[2]), int(os.environ.get("LAUNCHES", "6")))
    for spec in argv or ["matmul:256", "matmul:1024", "matmul_unrolled:512"]:
        name, _, n = spec.partition(":")
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, CUDALAB_CACHE=cache, CUDALAB_TIER="compiled")
            subprocess.run([sys.executable, __file__, "--child", name, n or "512"], env=env, check=False)


if __name__ == "__main__":
    main(sys.argv[1:])
