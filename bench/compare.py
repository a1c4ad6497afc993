"""Time the same kernels on the cudalab emulator and on numba's CUDA simulator, checked against numpy.

    python bench/compare.py [--quick] [--only NAME[,NAME]] [--no-numba] [--no-python] [--markdown]

Each kernel runs three ways: its CUDA C++ on cudalab, its numba.cuda Python (bench/numba_kernels.py)
on cudalab through the drop-in (``cudalab.numba.install()``: numba-cuda compiles it to PTX), and the
same Python under numba's simulator (NUMBA_ENABLE_CUDASIM=1).

Every launch runs in its own process (bench/worker.py). numba's simulator runs the blocks of a grid
one after another, each block as one Python thread per CUDA thread, so its time is linear in the
number of blocks: where the whole grid would take longer than --budget seconds, it runs only the
first k of K blocks (rows of blocks for the 2-D matmul; every thread does its full work) and the
full time is extrapolated as t * K / k. Those figures are marked `~`, with what was actually timed.
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kernels import BENCHES  # noqa: E402
from table import format_table  # noqa: E402
from worker import load_note, spawn  # noqa: E402

MEMORY_METHOD = ("peak RSS: the worker process's peak resident set size during the timed launch (Linux VmHWM,"
                 " reset just before it), which includes Python, numpy, cudalab and the inputs;"
                 " (+N) is that peak minus the resident size just before the launch")


def size_label(name, size):
    if name == "matmul":
        return f"{size}x{size}"
    return f"2^{size.bit_length() - 1}" if size & (size - 1) == 0 else str(size)


def seconds(s):
    return f"{s:.3f}" if s < 10 else f"{s:.1f}"


def rate(x):
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:.2f}{unit}"
    return f"{x:.0f}"


def short_error(result):
    if result.get("timeout"):
        return "timeout"
    error = result.get("error") or ""
    if "shfl" in error and result["backend"] == "numba":
        return "unsupported"
    return "ERROR" if result.get("traceback") or not result.get("grid") else "WRONG"


def python_cells(py, sim):
    """cudalab running the numba.cuda Python kernel: seconds, and how many times faster than numba-sim,
    in wall time and in CPU time (on a shared machine a few-millisecond launch's wall time is mostly
    other processes' turns on the CPU; numba-sim's seconds average them out)."""
    if py is None:
        return ["skipped", "", ""]
    if not py["ok"]:
        return [short_error(py), "", ""]
    if sim is None or not sim["ok"]:
        return [seconds(py["seconds"]), "", ""]
    return [seconds(py["seconds"]), f"{sim['seconds'] / sim['fraction'] / py['seconds']:.0f}x",
            f"{sim['cpu_seconds'] / sim['fraction'] / py['cpu_seconds']:.0f}x"]


def row(name, size, emu, sim, py=None):
    bench = BENCHES[name]
    threads = bench.thread_count(size)
    cells = [name, size_label(name, size), rate(threads)]
    if emu["ok"]:
        inst = emu.get("thread_instructions")
        cells += [seconds(emu["seconds"]), seconds(emu["cpu_seconds"]), rate(threads / emu["seconds"]),
                  rate(inst / emu["seconds"]) if inst else "",
                  f"{emu['peak_rss_mib']:.0f} (+{emu['peak_rss_mib'] - emu['baseline_rss_mib']:.0f})"]
    else:
        cells += [short_error(emu), "", "", "", ""]
    cells += python_cells(py, sim)
    if sim is None:
        return cells + ["skipped", "", "", ""]
    if not sim["ok"]:
        return cells + [short_error(sim), "", "", ""]
    full = sim["seconds"] / sim["fraction"]
    partial = sim["fraction"] < 1
    timed = (f"{sim['grid'][-1]}/{bench.grid(size)[-1]} {'block rows' if len(sim['grid']) > 1 else 'blocks'}, "
             f"{seconds(sim['seconds'])} s" if partial else "whole grid")
    ratio = f"{full / emu['seconds']:.1f}x" if emu["ok"] else ""
    cpu_ratio = f"{sim['cpu_seconds'] / sim['fraction'] / emu['cpu_seconds']:.0f}x" if emu["ok"] else ""
    return cells + [("~" if partial else "") + seconds(full), ratio, cpu_ratio, timed]


HEADERS = ["kernel", "size", "threads", "cudalab s", "cudalab cpu s", "cudalab threads/s", "cudalab thread-instr/s",
           "cudalab peak RSS MiB", "cudalab Python kernel s", "numba-sim/cudalab Python",
           "numba-sim/cudalab Python, CPU time",
           "numba-sim s", "numba-sim/cudalab", "numba-sim/cudalab, CPU time", "numba-sim timed on"]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="smallest size of each kernel only, 5 s numba budget")
    p.add_argument("--only", help="comma-separated kernel names: " + ", ".join(BENCHES))
    p.add_argument("--no-numba", action="store_true", help="skip numba's simulator")
    p.add_argument("--no-python", action="store_true", help="skip the Python kernels on cudalab")
    p.add_argument("--markdown", action="store_true", help="print a markdown table")
    p.add_argument("--budget", type=float, help="seconds of numba-sim time per kernel (default 20, quick 5)")
    p.add_argument("--timeout", type=int, default=150, help="seconds before a worker process is killed")
    a = p.parse_args(argv)
    names = a.only.split(",") if a.only else list(BENCHES)
    unknown = set(names) - set(BENCHES)
    if unknown:
        p.error(f"unknown kernel(s) {', '.join(sorted(unknown))}; choose from {', '.join(BENCHES)}")
    budget = a.budget or (5 if a.quick else 20)

    rows, failures, start_load = [], [], load_note()
    for name in names:
        for size in BENCHES[name].sizes[:1] if a.quick else BENCHES[name].sizes:
            emu = spawn("cudalab", name, size, timeout=a.timeout)
            py = None if a.no_python else spawn("python", name, size, timeout=a.timeout)
            sim = None if a.no_numba else spawn("numba", name, size, budget=budget, timeout=a.timeout)
            rows.append(row(name, size, emu, sim, py))
            print(f"  {name} {size_label(name, size)}: cudalab {'ok' if emu['ok'] else 'FAILED'}"
                  + ("" if py is None else f", Python kernel {'ok' if py['ok'] else 'FAILED'}")
                  + ("" if sim is None else f", numba-sim {'ok' if sim['ok'] else 'FAILED'}"),
                  file=sys.stderr, flush=True)
            failures += [r for r in (emu, py, sim) if r is not None and not r["ok"]]

    print(format_table(HEADERS, rows, a.markdown))
    print()
    print("numba-sim s marked ~ is extrapolated linearly in blocks from the part of the grid timed;"
          " numba-sim/cudalab is how many times faster cudalab ran (C++; 'Python': the same Python kernel"
          " numba-sim ran, on cudalab; 'CPU time': the same ratio of the two processes' CPU seconds);"
          " cpu s is the worker's CPU time (what wall time would be on an idle machine);"
          " thread-instr/s counts PTX instructions summed over active threads (LaunchRecord.thread_instructions).")
    print(MEMORY_METHOD + ".")
    print(f"{start_load}; at the end, {load_note().split('load average ')[1]}")
    for f in failures:
        print(f"\n{f['backend']} {f['name']} {size_label(f['name'], f['size'])}: {f['error']}")
        if f["backend"] in ("cudalab", "python") and f.get("traceback"):
            print(f["traceback"].rstrip())
    return 1 if any(f["backend"] in ("cudalab", "python") for f in failures) else 0


if __name__ == "__main__":
    sys.exit(main())
