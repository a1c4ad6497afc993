"""CPU microseconds per runtime call of a whole program: null launches, small launches, copies, events, graphs.

    python bench/launch_cost.py                     # every kind, 2,000 calls each
    python bench/launch_cost.py --only null,vadd --calls 5000 --markdown
    python bench/launch_cost.py --only null --profile /tmp/null.prof   # cProfile of the server
    python bench/launch_cost.py --against /tmp/old --rounds 3   # and another cudalab tree, side by side

Course and book programs time a kernel in a loop of 100 to 10,000 launches, replay CUDA graphs, and
queue copies and event records on streams; the runtime's cost per call bounds all of them. The
program (``launch_cost.cu``) makes N calls of one kind; it runs in this process's ``cudalab run``
(the server) once with N calls and once with none, and the difference of CPU time (this process,
which serves the program, and the program itself) divided by N is one call's cost. CPU time, not
wall time: the machine may be shared. ``--against DIR`` measures the cudalab package in DIR (say, an
earlier commit's ``git archive``) the same way, in a subprocess, kind by kind in turn with this
tree, so that both see the same load; ``--rounds`` repeats that and keeps each side's least time
(a busy machine only ever adds CPU time: cache misses, its own context switches).
"""
from __future__ import annotations

import argparse
import cProfile
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
PROGRAM = HERE / "launch_cost.cu"
KINDS = {"null": "null kernel <<<1, 1>>>", "vadd": "vector add, 2^10 elements", "memcpy": "cudaMemcpyAsync, 4 KiB",
         "event": "cudaEventRecord", "graph": "cudaGraphLaunch, one null kernel",
         "streams": "4 streams: copy in, axpy 256, copy out"}


def cpu_seconds() -> tuple[float, float]:
    """(this process's CPU seconds, its waited-for children's)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time(), children.ru_utime + children.ru_stime


def run(kind: str, calls: int, profiler=None) -> tuple[float, float]:
    """(server CPU seconds, program CPU seconds) of one run of ``kind`` with ``calls`` calls."""
    from cudalab.programs import run_program
    s0, c0 = cpu_seconds()
    if profiler:
        profiler.enable()
    result = run_program(PROGRAM, [kind, calls])
    if profiler:
        profiler.disable()
    s1, c1 = cpu_seconds()
    if not result.ok or f"{kind} x {calls}: no error" not in result.stdout:
        raise SystemExit(f"{kind} x {calls} failed: {result.stdout}{result.stderr}")
    return s1 - s0, c1 - c0


def measure(kind: str, calls: int, profiler=None) -> tuple[float, float]:
    """(server, program) CPU microseconds per call of ``kind``."""
    base_server, base_program = run(kind, 0)
    server, program = run(kind, calls, profiler)
    return 1e6 * (server - base_server) / calls, 1e6 * (program - base_program) / calls


def measure_in(tree: str, kind: str, calls: int) -> tuple[float, float]:
    """``measure`` with the cudalab package of folder ``tree``, in a subprocess."""
    out = subprocess.run([sys.executable, __file__, "--only", kind, "--calls", str(calls), "--json", "--tree", tree],
                         capture_output=True, text=True, check=True).stdout
    return tuple(json.loads(out.splitlines()[-1])[kind])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--only", default=",".join(KINDS))
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--profile", help="write a cProfile of the server's N-call runs to this file")
    p.add_argument("--against", help="a folder holding another cudalab package, measured in turn with this one")
    p.add_argument("--rounds", type=int, default=1, help="measure each kind this many times; report the least")
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--json", action="store_true", help=argparse.SUPPRESS)    # --against's subprocess
    p.add_argument("--tree", default=str(HERE.parent), help=argparse.SUPPRESS)   # the cudalab it measures
    a = p.parse_args()
    sys.path.insert(0, a.tree)
    if a.against:
        measure_in(a.against, "null", 1)        # its build and imports, warm
    run("null", 1)                    # builds the program (cached) and warms the imports
    profiler = cProfile.Profile(time.process_time) if a.profile else None
    rows = []
    for kind in a.only.split(","):
        ours, other = [], []
        for _ in range(a.rounds):       # in turn, so that both see the same load; the least of each
            if a.against:
                other.append(measure_in(a.against, kind, a.calls))
            ours.append(measure(kind, a.calls, profiler))
        rows.append((kind, *min(ours, key=sum), min(other, key=sum) if other else None))
    if profiler:
        profiler.dump_stats(a.profile)
    if a.json:
        print(json.dumps({kind: (server, program) for kind, server, program, _ in rows}))
        return
    load = os.getloadavg()[0]
    if a.markdown:
        head = f"| call ({a.calls:,} a run) | server CPU us/call | program CPU us/call | total |"
        print(head + (" against: total | ratio |\n|---|---|---|---|---|---|" if a.against else "\n|---|---|---|---|"))
        for kind, server, program, other in rows:
            more = f" {sum(other):.0f} | {sum(other) / (server + program):.1f}x |" if other else ""
            print(f"| {KINDS[kind]} | {server:.0f} | {program:.0f} | {server + program:.0f} |{more}")
        print(f"\nload average {load:.2f}")
    else:
        for kind, server, program, other in rows:
            more = f"   against {sum(other):7.1f} us ({sum(other) / (server + program):.1f}x)" if other else ""
            print(f"{KINDS[kind]:36s} server {server:7.1f} us   program {program:6.1f} us   "
                  f"total {server + program:7.1f} us a call{more}")
        print(f"load average {load:.2f}")


if __name__ == "__main__":
    main()
