"""Time what a notebook user waits for: importing cudalab, compiling a new kernel and launching it,
and re-running an unchanged cell, against the targets in the issue.

    python bench/cells.py [--markdown] [--repeat N]

Every figure comes from fresh Python processes (the in-process NVRTC cache must start empty);
times are medians over --repeat processes (or repeated calls, for the cached recompile).
"""
import argparse
import json
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
    """Wall time of a fresh `python -c code`, and its last stdout line."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise RuntimeError(f"python -c failed:\n{code}\n{proc.stderr.strip()[-3000:]}")
    return wall, proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""


def import_seconds(repeat):
    """Median wall time of `python -c "import cudalab"` minus that of `python -c pass`."""
    python("import cudalab")   # first one warms the OS file cache; not counted
    with_import = statistics.median(python("import cudalab")[0] for _ in range(repeat))
    bare = statistics.median(python("pass")[0] for _ in range(repeat))
    return with_import - bare


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
    t0 = time.perf_counter()
    k = cudalab.compile(SRC % uuid.uuid4().hex).get_kernel("scale")
    k[4, 256](np.ones(1000, np.float32), np.float32(2), np.int32(1000))
    return time.perf_counter() - t0
def recompile(src):
    cudalab.compile(src)
    times = []
    for _ in range(20):
        t0 = time.perf_counter(); cudalab.compile(src); times.append(time.perf_counter() - t0)
    return sorted(times)[10]
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
        t0 = time.perf_counter(); r = shell.run_cell(code); t = time.perf_counter() - t0
    if not r.success or out.stderr:
        raise SystemExit(f"cell failed: {r.error_in_exec or r.error_before_exec} {out.stderr}")
    return t
def new_cell():
    return (cell("%%cuda\n" + SRC % uuid.uuid4().hex)
            + cell("scale[4, 256](x, np.float32(2), np.int32(1000))"))
def rerun(code):
    cell(code)
    return sorted(cell(code) for _ in range(20))[10]
cell("import numpy as np; x = np.ones(1000, np.float32)")
first, later = new_cell(), new_cell()
print(json.dumps({"first": first, "later": later, "warm": rerun("%%cuda\n" + SRC % "unchanged"),
                  "warm_big": rerun("%%cuda\n" + BIG), "empty": rerun("pass")}))
"""


def probe(body, repeat):
    code = f"SRC = {SMALL_KERNEL!r}\nBIG = {BIG_CELL!r}\n{body}"
    runs = [json.loads(python(code)[1]) for _ in range(repeat)]
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def verdict(value, target):
    return "yes" if value < target else "NO"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--markdown", action="store_true", help="print a markdown table")
    p.add_argument("--repeat", type=int, default=5, help="fresh processes per figure (default 5)")
    a = p.parse_args(argv)

    rows = []
    def add(what, seconds, target):
        rows.append([what, f"{seconds * 1e3:.1f} ms", f"< {target * 1e3:.0f} ms", verdict(seconds, target)])

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
        rows.append(["  for scale: a cell with just `pass` (IPython run_cell)", f"{magic['empty'] * 1e3:.1f} ms", "", ""])
    except (RuntimeError, KeyError, ValueError) as e:
        magic_error = str(e)

    print(format_table(["measure", "median", "target", "met"], rows, a.markdown))
    print(f"\nmedians of {a.repeat} fresh processes; a cached recompile is the median of 20 calls in each.")
    print(load_note())
    print("largest imports under `python -X importtime -c 'import cudalab'` (cumulative ms, nesting):")
    for cumulative_us, depth, module in largest_imports():
        print(f"  {cumulative_us / 1e3:8.1f}  {'  ' * depth}{module}")
    if magic_error:
        print(f"\n%%cuda through IPython failed:\n{magic_error}")


if __name__ == "__main__":
    main()
