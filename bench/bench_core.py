"""Time the emulator on the issue's three core kernels and measure a 2^24-thread launch's memory.

    python bench/bench_core.py [--markdown] [--repeat N]

Each figure is the median over --repeat fresh processes (bench/worker.py) of one launch after a
one-block warm-up, including copying the numpy arguments in and back. Memory is the worker
process's peak RSS during the launch (VmHWM, see worker.py), which includes Python, numpy,
cudalab and the inputs.
"""
import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare import size_label  # noqa: E402
from table import format_table  # noqa: E402
from worker import load_note, spawn  # noqa: E402

TIMED = [("vector_add", 2**20, 0.5), ("matmul", 256, 2.0), ("reduction", 2**20, 1.0)]
BIG_LAUNCH = ("vector_add", 2**24, 2 * 1024)     # MiB


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--markdown", action="store_true", help="print a markdown table")
    p.add_argument("--repeat", type=int, default=3, help="fresh processes per figure (default 3)")
    p.add_argument("--timeout", type=int, default=150, help="seconds before a worker process is killed")
    a = p.parse_args(argv)

    rows, failures = [], []
    for name, size, target in TIMED:
        runs = [spawn("cudalab", name, size, timeout=a.timeout) for _ in range(a.repeat)]
        failures += [r for r in runs if not r["ok"]]
        ok = [r["seconds"] for r in runs if r["ok"]]
        s = statistics.median(ok) if ok else None
        cpu = statistics.median(r["cpu_seconds"] for r in runs if r["ok"]) if ok else None
        rows.append([f"{name} {size_label(name, size)}", "time (cpu)",
                     f"{s:.3f} s ({cpu:.3f})" if ok else "FAIL",
                     f"< {target} s", ("yes" if s < target else "NO") if ok else ""])
    name, size, target_mib = BIG_LAUNCH
    r = spawn("cudalab", name, size, timeout=a.timeout)
    if r["ok"]:
        growth = r["peak_rss_mib"] - r["baseline_rss_mib"]
        rows.append([f"{name} {size_label(name, size)} threads", "peak RSS (growth in launch)",
                     f"{r['peak_rss_mib']:.0f} MiB (+{growth:.0f})", f"< {target_mib} MiB",
                     "yes" if r["peak_rss_mib"] < target_mib else "NO"])
        rows.append([f"{name} {size_label(name, size)} threads", "time (cpu)",
                     f"{r['seconds']:.2f} s ({r['cpu_seconds']:.2f})", "", ""])
    else:
        failures.append(r)
        rows.append([f"{name} {size_label(name, size)} threads", "peak RSS", "FAIL", f"< {target_mib} MiB", ""])

    print(format_table(["kernel", "measure", "cudalab", "target", "met"], rows, a.markdown))
    print(f"\ntimes: median of {a.repeat} fresh processes, one launch each with numpy arguments copied in "
          "and back; (cpu): the worker's CPU time, what the wall time would be on an idle machine; "
          "memory: peak RSS of the whole worker process during the launch.")
    print(load_note())
    for f in {(f["name"], f["size"], f["error"]): f for f in failures}.values():
        print(f"\ncudalab {f['name']} {size_label(f['name'], f['size'])}: {f['error']}")
        if f.get("traceback"):
            print(f["traceback"].rstrip())
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
