"""What counting Nsight Compute's metrics costs: each bench kernel with and without a MetricsObserver.

    python bench/instrumentation.py [--markdown] [--repeat N] [--only matmul,histogram] [--quick]

For every kernel of bench/kernels.py (default sizes; --quick: the smallest), one process compiles
it, warms up with a one-block launch of each kind, then alternates uninstrumented launches and
launches with ``observers=[MetricsObserver()]`` --repeat times (default 5) on the same device
arrays, so copies to and from the host are not timed. The table gives the median CPU time of each
(this process's; on a shared, busy machine it is what the wall time would be on an idle one), the
median wall time in brackets, and the ratio of CPU times; the issue's target is a ratio of at most
3. Every table ends with the machine's load average.
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare import size_label  # noqa: E402
from kernels import BENCHES  # noqa: E402
from table import format_table  # noqa: E402
from worker import load_note  # noqa: E402

TARGET = 3.0


def measure(bench, size, repeat):
    """((cpu, wall) median seconds without, the same with a MetricsObserver) for one launch of the
    full grid."""
    import cudalab
    from cudalab.analysis import MetricsObserver
    kernel = cudalab.compile(bench.source).get_kernel(bench.kernel)
    args = [cudalab.to_device(a) if isinstance(a, np.ndarray) else a
            for a in bench.inputs(size, np.random.default_rng(0))]

    def once(grid, observed):
        obs = [MetricsObserver()] if observed else []
        t0, c0 = time.perf_counter(), time.process_time()
        kernel.launch(grid, bench.block, args, observers=obs)
        return time.process_time() - c0, time.perf_counter() - t0

    one = bench.launch(size, 1)
    once(one, False), once(one, True)          # warm-up: parsing, decoding, caches
    grid = bench.grid(size)
    plain, observed = [], []
    for _ in range(repeat):
        plain.append(once(grid, False))
        observed.append(once(grid, True))
    median = lambda runs: tuple(statistics.median(r[i] for r in runs) for i in (0, 1))  # noqa: E731
    return median(plain), median(observed)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--markdown", action="store_true", help="print a markdown table")
    p.add_argument("--repeat", type=int, default=5, help="launches of each kind per kernel (default 5)")
    p.add_argument("--only", help="comma-separated kernel names")
    p.add_argument("--quick", action="store_true", help="only the smallest size of each kernel")
    a = p.parse_args(argv)
    names = a.only.split(",") if a.only else list(BENCHES)
    rows, worst = [], 0.0
    for name in names:
        bench = BENCHES[name]
        for size in bench.sizes[:1] if a.quick else bench.sizes:
            plain, observed = measure(bench, size, a.repeat)
            ratio = observed[0] / plain[0]
            worst = max(worst, ratio)
            rows.append([f"{name} {size_label(name, size)}", f"{plain[0]:.3f} s ({plain[1]:.3f})",
                         f"{observed[0]:.3f} s ({observed[1]:.3f})",
                         f"{ratio:.2f}x", "yes" if ratio <= TARGET else "NO"])
    print(format_table(["kernel", "uninstrumented cpu (wall)", "with MetricsObserver cpu (wall)", "ratio",
                        f"<= {TARGET:g}x"],
                       rows, a.markdown))
    print(f"\nmedian of {a.repeat} launches each, alternating, on device arrays (no host copies); ratio of "
          f"CPU times; worst {worst:.2f}x")
    print(load_note())
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
