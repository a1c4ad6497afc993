"""Wall and CPU seconds of a launch on 1, 2 and 4 threads (CUDALAB_THREADS), side by side.

    python bench/threads.py [N] [REPEAT]   # bench/kernels.py's 16x16 tiled matmul, N x N, compiled tier
                                           # (default 1024), best of REPEAT launches (default 3)
    TIMELINE=1 THREADS=2,4 python bench/threads.py 2048 1     # and where each thread's time went
    WATCHDOG=60 python bench/threads.py 2048 1                # a watchdog of 60 s (one thread's 2048 fits)

Each thread count runs in a process of its own (a warm-up launch at 256 x 256 that builds the native code,
then the best of REPEAT launches); the output's hash shows the bytes are the same. A launch the watchdog
stops (a 2048 x 2048 product, 34 billion thread-instructions) is a row too: its time and the seconds the
watchdog's message tells. The gain needs free cores: run it
on a quiet machine and give the load average with the figures (bench/README.md, "Batches on two cores").
"""
import hashlib
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from kernels import TILED_MATMUL  # noqa: E402

THREADS = (1, 2, 4)


def one_count(n: int, repeat: int = 3):
    """The best of ``repeat`` launches in this process, at the CUDALAB_THREADS it was started with."""
    import cudalab
    if os.environ.get("WATCHDOG"):          # seconds: one thread's 2048 product is over the default 10
        cudalab.set_watchdog(float(os.environ["WATCHDOG"]))
    kernel = cudalab.compile(TILED_MATMUL).get_kernel("matmul")
    rng = np.random.default_rng(1)

    def operands(n):
        a, b = (cudalab.to_device(rng.random((n, n), dtype=np.float32)) for _ in range(2))
        return a, b, cudalab.device_array((n, n), np.float32)
    warm = min(n, 256)
    kernel[(warm // 16, warm // 16), (16, 16)](*operands(warm), np.int32(warm))     # builds the native code
    a, b, c = operands(n)
    grid, block = (n // 16, n // 16), (16, 16)
    best = None
    for _ in range(repeat):
        if timeline:
            timeline.start()
        w0, c0 = time.perf_counter(), time.process_time()
        try:
            kernel[grid, block](a, b, c, np.int32(n))
        except cudalab.KernelError as e:
            took = (time.perf_counter() - w0, time.process_time() - c0)
            told = e.progress.seconds if getattr(e, "progress", None) else float("nan")
            print(f"threads={os.environ['CUDALAB_THREADS']} wall={took[0]:.3f}s cpu={took[1]:.3f}s "
                  f"stopped: {e.code}, the message tells {told:.1f} s")
            return
        took = (time.perf_counter() - w0, time.process_time() - c0)
        best = min(best or took, took)
    digest = hashlib.sha1(c.copy_to_host().tobytes()).hexdigest()[:12]
    print(f"threads={os.environ['CUDALAB_THREADS']} wall={best[0]:.3f}s cpu={best[1]:.3f}s out={digest}")
    if os.environ.get("TIMELINE"):
        timeline.show()


class Timeline:
    """Where a launch's time goes, thread by thread (``TIMELINE=1``): each batch's wall interval, CPU and
    system seconds on the thread that ran it (parallel.run), and the launching thread's own work between
    batches (building each batch's Exec, waiting for the oldest). Only the last launch's batches are shown."""

    def __init__(self):
        from cudalab.emulator import parallel
        self.rows, self.t0 = [], None
        real = parallel.run

        def run(batch, body):
            from cudalab.emulator.pace import system_seconds
            w0, c0, s0 = time.perf_counter(), time.thread_time(), system_seconds()
            try:
                return real(batch, body)
            finally:
                self.rows.append((threading.current_thread().name, batch.info.first_block, batch.nb, w0, time.perf_counter(),
                                  time.thread_time() - c0, system_seconds() - s0))
        parallel.run = run

    def start(self):
        self.rows, self.t0 = [], time.perf_counter()

    def show(self):
        end = max(r[4] for r in self.rows)
        for name, first, nb, w0, w1, cpu, sys_ in sorted(self.rows, key=lambda r: r[3]):
            print(f"  {name:<18} blocks {first:>6}+{nb:<6} wall {w0 - self.t0:7.3f} -> {w1 - self.t0:7.3f} s  "
                  f"cpu {cpu:6.3f} s (system {sys_:5.3f})")
        print(f"  launch wall {end - self.t0:.3f} s; batches {len(self.rows)}")


timeline = None


def main(argv):
    global timeline
    if argv[:1] == ["--child"]:
        if os.environ.get("TIMELINE"):
            timeline = Timeline()
        return one_count(int(argv[1]), int(argv[2]))
    n = int(argv[0]) if argv else 1024
    repeat = int(argv[1]) if len(argv) > 1 else 3
    for t in [int(x) for x in os.environ.get("THREADS", "").split(",") if x] or THREADS:
        env = dict(os.environ, CUDALAB_THREADS=str(t), CUDALAB_TIER="compiled")
        subprocess.run([sys.executable, __file__, "--child", str(n), str(repeat)], env=env, check=False)


if __name__ == "__main__":
    main(sys.argv[1:])
