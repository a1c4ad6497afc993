"""Time what a notebook user waits for: importing cudalab, compiling a new kernel and launching it,
and re-running an unchanged cell, against the targets in the issue.

    python bench/cells.py [--markdown] [--repeat N]

Every figure comes from fresh Python processes (the in-process NVRTC cache must start empty);
times are medians over --repeat processes (or repeated calls, for the cached recompile), in wall
time and in CPU time (the process's own, or for the import the whole child process's). The
targets are judged on CPU time: on a shared, busy machine wall time is mostly other processes'
turns on the CPU, and CPU time is the better guess at an idle machine's wall time.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kernels import HISTOGRAM, TILED_MATMUL, TREE_REDUCTION  # noqa: E402
from table import format_table  # noqa: E402
from worker import load_note  # noqa: E402

SMALL_KERNEL = r"""// cell %s
__global__ void scale(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
"""


def python(code, timeout=120):
    """Wall and CPU seconds of a fresh `python -c code`, and its last stdout line."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if proc.returncode:
        raise RuntimeError(f"python -c failed:\n{code}\n{proc.stderr.strip()[-3000:]}")
    return wall, cpu, proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""


def import_seconds(repeat):
    """Median (wall, CPU) seconds of `python -c "import cudalab"` minus those of `python -c pass`."""
    python("import cudalab")   # first one warms the OS file cache (and writes .pyc files); not counted
    with_import = [python("import cudalab")[:2] for _ in range(repeat)]
    bare = [python("pass")[:2] for _ in range(repeat)]
    return tuple(statistics.median(w[i] for w in with_import) - statistics.median(b[i] for b in bare)
                 for i in (0, 1))


def largest_imports(n=6):
    """What `import cudalab` pulls in (two levels down), by cumulative time under -X importtime."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", "import cudalab"],
                          capture_output=True, text=True)
    subtree = []                    # importtime prints a module's imports before the module itself
    for line in proc.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) != 3 or not parts[0].strip().isdigit():
            continue
        name = parts[2].rstrip()
        depth = (len(name) - len(name.lstrip())) // 2
        if depth == 0:
            if name.strip() == "cudalab":
                break
            subtree = []
        elif depth <= 2:
            subtree.append((int(parts[1]), depth, name.strip()))
    return sorted(subtree, reverse=True)[:n]


# A typical lesson cell: three kernels, about 50 lines.
BIG_CELL = TILED_MATMUL + TREE_REDUCTION + HISTOGRAM

# The probes run in fresh processes, after SRC and BIG are defined; each prints one JSON line.
LIBRARY_PROBE = r"""
import json, time, uuid, numpy as np
import cudalab
def new_kernel():
    t0, c0 = time.perf_counter(), time.process_time()
    k = cudalab.compile(SRC % uuid.uuid4().hex).get_kernel("scale")
    k[4, 256](np.ones(1000, np.float32), np.float32(2), np.int32(1000))
    return time.perf_counter() - t0, time.process_time() - c0
def recompile(src):
    cudalab.compile(src)
    times = []
    for _ in range(20):
        t0, c0 = time.perf_counter(), time.process_time(); cudalab.compile(src)
        times.append((time.perf_counter() - t0, time.process_time() - c0))
    return [sorted(t[i] for t in times)[10] for i in (0, 1)]
first, later = new_kernel(), new_kernel()
print(json.dumps({"first": first, "later": later, "warm": recompile(SRC % "unchanged"), "warm_big": recompile(BIG)}))
"""

MAGIC_PROBE = r"""
import json, time, uuid
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
shell = InteractiveShell.instance()
shell.run_line_magic("load_ext", "cudalab")
def cell(code):
    with capture_output() as out:
        t0, c0 = time.perf_counter(), time.process_time()
        r = shell.run_cell(code)
        t = time.perf_counter() - t0, time.process_time() - c0
    if not r.success or out.stderr:
        raise SystemExit(f"cell failed: {r.error_in_exec or r.error_before_exec} {out.stderr}")
    return t
def new_cell():
    compiled, launched = cell("%%cuda\n" + SRC % uuid.uuid4().hex), cell("scale[4, 256](x, np.float32(2), np.int32(1000))")
    return [compiled[i] + launched[i] for i in (0, 1)]
def rerun(code):
    cell(code)
    times = [cell(code) for _ in range(20)]
    return [sorted(t[i] for t in times)[10] for i in (0, 1)]
cell("import numpy as np; x = np.ones(1000, np.float32)")
first, later = new_cell(), new_cell()
print(json.dumps({"first": first, "later": later, "warm": rerun("%%cuda\n" + SRC % "unchanged"),
                  "warm_big": rerun("%%cuda\n" + BIG), "empty": rerun("pass")}))
"""


def probe(body, repeat):
    code = f"SRC = {SMALL_KERNEL!r}\nBIG = {BIG_CELL!r}\n{body}"
    runs = [json.loads(python(code)[2]) for _ in range(repeat)]
    return {k: tuple(statistics.median(r[k][i] for r in runs) for i in (0, 1)) for k in runs[0]}


def verdict(value, target):
    return "yes" if value < target else "NO"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--markdown", action="store_true", help="print a markdown table")
    p.add_argument("--repeat", type=int, default=5, help="fresh processes per figure (default 5)")
    a = p.parse_args(argv)

    rows = []
    def add(what, seconds, target):
        wall, cpu = seconds
        rows.append([what, f"{wall * 1e3:.1f} ms", f"{cpu * 1e3:.1f} ms", f"< {target * 1e3:.0f} ms",
                     verdict(cpu, target)])

    add("import cudalab (fresh process, minus `python -c pass`)", import_seconds(a.repeat), 0.5)
    lib = probe(LIBRARY_PROBE, a.repeat)
    add("cudalab.compile + launch, new small kernel, first in process", lib["first"], 0.3)
    add("cudalab.compile + launch, new small kernel, later", lib["later"], 0.3)
    add("cudalab.compile, unchanged small kernel (cached)", lib["warm"], 0.005)
    add("cudalab.compile, unchanged 3-kernel cell (cached)", lib["warm_big"], 0.005)
    magic_error = None
    try:
        magic = probe(MAGIC_PROBE, a.repeat)
        add("%%cuda new cell + launch cell (IPython run_cell), first", magic["first"], 0.3)
        add("%%cuda new cell + launch cell (IPython run_cell), later", magic["later"], 0.3)
        add("%%cuda unchanged small-kernel cell re-run (IPython run_cell)", magic["warm"], 0.005)
        add("%%cuda unchanged 3-kernel cell re-run (IPython run_cell)", magic["warm_big"], 0.005)
        rows.append(["  for scale: a cell with just `pass` (IPython run_cell)", f"{magic['empty'][0] * 1e3:.1f} ms",
                     f"{magic['empty'][1] * 1e3:.1f} ms", "", ""])
    except (RuntimeError, KeyError, ValueError) as e:
        magic_error = str(e)

    print(format_table(["measure", "median wall", "median CPU", "target", "met (CPU)"], rows, a.markdown))
    print(f"\nmedians of {a.repeat} fresh processes; a cached recompile is the median of 20 calls in each.")
    print(load_note())
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("PYTHONDONTWRITEBYTECODE is set: every import compiled its source (no .pyc), unlike a student's"
              " install; unset it (PYTHONPYCACHEPREFIX=/tmp/... keeps the tree clean) to time what they wait for.")
    print("largest imports under `python -X importtime -c 'import cudalab'` (cumulative ms, nesting):")
    for cumulative_us, depth, module in largest_imports():
        print(f"  {cumulative_us / 1e3:8.1f}  {'  ' * depth}{module}")
    if magic_error:
        print(f"\n%%cuda through IPython failed:\n{magic_error}")


if __name__ == "__main__":
    main()
