"""Run one benchmark kernel once on one backend in this process and print a JSON result line.

    python bench/worker.py cudalab|python|numba NAME SIZE [--blocks K]

``python`` runs numba_kernels.py (the numba.cuda Python kernels numba's simulator runs) unmodified
on cudalab, through the drop-in (cudalab.numba.install()).

Each run gets its own process so that numba's simulator can be switched on before numba.cuda
is imported, and so that its memory belongs to one kernel. Memory is Linux's peak resident set
size (VmHWM), reset just before the timed launch (/proc/self/clear_refs, "5"), so the peak is the
launch's own, compared with the resident size just before it (VmRSS).
"""
import argparse
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kernels import BENCHES  # noqa: E402


def status_mib(field):
    """A memory field of /proc/self/status (VmRSS: resident now, VmHWM: peak since reset), in MiB."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":")) / 1024


def reset_peak_rss():
    with open("/proc/self/clear_refs", "w") as f:     # Linux >= 4.0: "5" resets VmHWM to VmRSS
        f.write("5")


def cudalab_kernel(bench):
    # the compiled tier, compiled (or loaded from its disk cache) by the warm-up launch: compile time
    # is cells.py's business, as NVRTC's is
    os.environ.setdefault("CUDALAB_TIER", "compiled")
    import cudalab
    return cudalab.compile(bench.source).get_kernel(bench.kernel)


def python_kernel(bench):
    # the compiled tier, as cudalab_kernel: without it the warm-up's one block stays under the
    # auto mode's threshold, and the timed launch would start LLVM in the background and run interpreted
    os.environ.setdefault("CUDALAB_TIER", "compiled")
    import cudalab.numba
    cudalab.numba.install()        # numba.cuda.jit is cudalab.jit from here on
    import numba_kernels
    return getattr(numba_kernels, bench.kernel)


def numba_kernel(bench):
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    import numba_kernels
    return getattr(numba_kernels, bench.kernel)


def launch(kernel, bench, size, blocks):
    """Launch on fresh inputs; return ((wall, cpu) seconds, args after the launch, launch record or None).
    CPU time (all threads of this process) tells what the wall time would be on an idle machine."""
    args = bench.inputs(size, np.random.default_rng(blocks))
    t0, c0 = time.perf_counter(), time.process_time()
    record = kernel[bench.launch(size, blocks), bench.block](*args)
    return (time.perf_counter() - t0, time.process_time() - c0), args, record


def run(backend, name, size, blocks=None, budget=None):
    """Time one launch. With `budget`, first time one block of the outermost grid dimension and
    then run as many blocks as fit in `budget` seconds (the whole grid if they all fit)."""
    bench = BENCHES[name]
    full = bench.grid(size)[-1]
    result = {"backend": backend, "name": name, "size": size, "block": bench.block}
    try:
        t0 = time.perf_counter()
        kernel = {"cudalab": cudalab_kernel, "python": python_kernel, "numba": numba_kernel}[backend](bench)
        result["compile_s"] = time.perf_counter() - t0
        # One block first: a warm-up, so lazy set-up work (PTX parsing, caches) is not timed,
        # and the calibration that sizes a budgeted run.
        one, args, record = launch(kernel, bench, size, 1)
        if budget is not None:
            blocks = max(1, min(full, int(budget / one[0])))
        blocks = min(blocks or full, full)
        reset_peak_rss()
        result["baseline_rss_mib"] = status_mib("VmRSS")
        if blocks > 1 or budget is None:
            (seconds, cpu), args, record = launch(kernel, bench, size, blocks)
        else:
            seconds, cpu = one
        grid = bench.launch(size, blocks)
        result.update(seconds=seconds, cpu_seconds=cpu, peak_rss_mib=status_mib("VmHWM"), grid=grid,
                      threads=bench.thread_count(size, grid), fraction=blocks / full,
                      thread_instructions=getattr(record, "thread_instructions", None),
                      error=bench.check(size, args, blocks))
        result["ok"] = result["error"] is None
    except Exception as e:
        result.update(ok=False, error=f"{type(e).__name__}: {e}".strip(), traceback=traceback.format_exc())
    return result


def load_note():
    """Say how busy the machine was: timings on a shared machine are only as good as this."""
    one, five, _ = os.getloadavg()
    return f"machine: {os.cpu_count()} CPUs, load average {one:.1f} (1 min), {five:.1f} (5 min)"


def spawn(backend, name, size, blocks=None, budget=None, timeout=120):
    """Run `run` in a fresh Python process; a timeout or crash becomes a failed result."""
    cmd = [sys.executable, __file__, backend, name, str(size)]
    cmd += ["--blocks", str(blocks)] if blocks else []
    cmd += ["--budget", str(budget)] if budget else []
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"backend": backend, "name": name, "size": size, "ok": False, "timeout": True,
                "error": f"timed out after {timeout} s"}
    lines = proc.stdout.strip().splitlines()
    if proc.returncode or not lines:
        return {"backend": backend, "name": name, "size": size, "ok": False,
                "error": f"worker exited with {proc.returncode}: {proc.stderr.strip()[-2000:]}"}
    return json.loads(lines[-1])


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("backend", choices=["cudalab", "python", "numba"])
    p.add_argument("name", choices=list(BENCHES))
    p.add_argument("size", type=int)
    p.add_argument("--blocks", type=int, help="run only this many blocks of the outermost grid dimension")
    p.add_argument("--budget", type=float, help="seconds: run as many blocks as fit (timed after one block)")
    a = p.parse_args()
    print(json.dumps(run(a.backend, a.name, a.size, a.blocks, a.budget), default=str))
