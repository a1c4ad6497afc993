"""Wall and CPU seconds of a launch on 1, 2 and 4 threads (CUDALAB_THREADS), side by side.

    python bench/threads.py [N]        # bench/kernels.py's 16x16 tiled matmul, N x N, compiled tier (default 1024)

Each thread count runs in a process of its own (a warm-up launch that builds the native code, then the
best of 3 launches); the output's hash shows the bytes are the same. The gain needs free cores: run it
on a quiet machine and give the load average with the figures (bench/README.md, "Batches on two cores").
"""
import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from kernels import TILED_MATMUL  # noqa: E402

THREADS = (1, 2, 4)


def one_count(n: int):
    """The best of 3 launches in this process, at the CUDALAB_THREADS it was started with."""
    import cudalab
    kernel = cudalab.compile(TILED_MATMUL).get_kernel("matmul")
    rng = np.random.default_rng(1)
    a, b = (cudalab.to_device(rng.random((n, n), dtype=np.float32)) for _ in range(2))
    c = cudalab.device_array((n, n), np.float32)
    grid, block = (n // 16, n // 16), (16, 16)
    kernel[grid, block](a, b, c, np.int32(n))               # builds the native code
    best = None
    for _ in range(3):
        w0, c0 = time.perf_counter(), time.process_time()
        kernel[grid, block](a, b, c, np.int32(n))
        took = (time.perf_counter() - w0, time.process_time() - c0)
        best = min(best or took, took)
    digest = hashlib.sha1(c.copy_to_host().tobytes()).hexdigest()[:12]
    print(f"threads={os.environ['CUDALAB_THREADS']} wall={best[0]:.3f}s cpu={best[1]:.3f}s out={digest}")


def main(argv):
    if argv[:1] == ["--child"]:
        return one_count(int(argv[1]))
    n = int(argv[0]) if argv else 1024
    for t in THREADS:
        env = dict(os.environ, CUDALAB_THREADS=str(t), CUDALAB_TIER="compiled")
        subprocess.run([sys.executable, __file__, "--child", str(n)], env=env, check=False)


if __name__ == "__main__":
    main(sys.argv[1:])
