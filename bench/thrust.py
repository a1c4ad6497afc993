"""A student's Thrust calls on the emulator: reduce, scans, sorts, copy_if and unique of n unsigned ints.

    python bench/thrust.py                  # n = 2^20, each operation in its own `cudalab run`
    python bench/thrust.py --n 100000 --only sort,sort_by_key --markdown

Thrust and CUB are where course programs meet big, warp-synchronous library kernels (CUB's
decoupled look-back scan, its onesweep radix sort). The program (``thrust_ops.cu``) is built
first (``build``: nvcc's CPU time; from an empty build cache with ``--cold``), then each operation
runs in a fresh ``cudalab run`` (the compiled tier's disk cache as it is; empty with ``--cold``).
Times are CPU seconds of the process and all it waited for, so a busy machine does not inflate
them much; the program checks its own result (``ok``).
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parent
PROGRAM = HERE / "thrust_ops.cu"
# the calls course and book programs make (thrust_ops.cu): CUB's reduce, decoupled look-back scan, onesweep
# radix sort (keys, and keys with values as cuda-samples' radixSortThrust), select (copy_if) and unique
OPERATIONS = ("reduce", "scan", "exclusive_scan", "sort", "sort_by_key", "copy_if", "unique")


def cpu_run(command, env) -> tuple[float, float, str]:
    """(CPU seconds of ``command`` and the processes it waited for, wall seconds, its output)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    p = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return cpu, wall, p.stdout if p.returncode == 0 else f"exit code {p.returncode}: {p.stdout}"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=1 << 20)
    p.add_argument("--only", default=",".join(OPERATIONS))
    p.add_argument("--cold", action="store_true", help="empty build and native-code caches (a first run)")
    p.add_argument("--markdown", action="store_true")
    a = p.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if a.cold:
        env["CUDALAB_CACHE"] = tempfile.mkdtemp(prefix="cudalab-thrust-bench-")
    build = [sys.executable, "-c", "import sys; from cudalab.programs import build, parse_nvcc; "
             "build(parse_nvcc([sys.argv[1]]))", str(PROGRAM)]
    rows = [("build", *cpu_run(build, env))]
    for op in a.only.split(","):
        rows.append((op, *cpu_run([sys.executable, "-m", "cudalab.cli", "run", str(PROGRAM), "--", str(a.n), op], env)))
    one, _, _ = os.getloadavg()
    if a.markdown:
        print(f"| n = {a.n:,} | CPU s | wall s | output |\n|---|---|---|---|")
        for name, cpu, wall, out in rows:
            print(f"| {name} | {cpu:.1f} | {wall:.1f} | {out.strip()[-80:]} |")
    else:
        for name, cpu, wall, out in rows:
            print(f"{name:14s} {cpu:7.1f} s CPU {wall:7.1f} s wall  {out.strip()[-80:]}")
    print(f"(n = {a.n:,}; load average {one:.1f} on {os.cpu_count()} CPUs{'; cold caches' if a.cold else ''})")


if __name__ == "__main__":
    main()
