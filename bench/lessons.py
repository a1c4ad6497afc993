"""Time every example program and every notebook as a student runs them, against issue 16's 60 s.

    python bench/lessons.py [--only NAME[,NAME]] [--no-examples] [--no-notebooks] [--markdown]

An example is `cudalab run examples/NAME.cu` in a fresh process; a notebook is all its code cells
run in order through an IPython shell in a fresh process in its folder (as `Run All` does, without a Jupyter
kernel). CPU seconds are those of that process and everything it waited for (nvcc, the program
and its emulator): on a busy shared machine they are the better guess at an idle machine's wall
time. A program's nvcc build is cached on disk, so an example is run once untimed first (the
build), then timed; `--cold` times the first run instead.
"""
import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from table import format_table  # noqa: E402
from worker import load_note  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 60.0

# Runs every code cell of the notebook in argv[1]; prints the slowest cell's CPU seconds as JSON.
NOTEBOOK_RUNNER = r"""
import json, resource, sys, time
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
def cpu():
    return sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
               for f in ("ru_utime", "ru_stime"))
shell = InteractiveShell.instance()
slowest, failed = (0.0, 0), None
for n, cell in enumerate(json.load(open(sys.argv[1]))["cells"]):
    if cell["cell_type"] != "code":
        continue
    c0 = cpu()
    with capture_output():
        result = shell.run_cell("".join(cell["source"]))
    slowest = max(slowest, (cpu() - c0, n))
    if not result.success and failed is None:
        failed = f"cell {n}: {result.error_in_exec or result.error_before_exec!r}"[:300]
print(json.dumps({"slowest_cell_cpu": slowest[0], "slowest_cell": slowest[1], "error": failed}))
"""


def timed(cmd, timeout, cwd=ROOT):
    """Wall and CPU seconds (the process and what it waited for) of one command; its result."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired:
        proc = None
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc


def run_example(path, cold, timeout):
    cmd = [sys.executable, "-c", "from cudalab.cli import entry; entry()", "run", str(path.relative_to(ROOT))]
    if not cold:
        timed(cmd, timeout)                       # builds the program (cached by content)
    wall, cpu, proc = timed(cmd, timeout)
    error = "timed out" if proc is None else (proc.stderr.strip()[-300:] if proc.returncode else None)
    return wall, cpu, error, ""


def run_notebook(path, timeout):
    # in the notebook's folder, as Jupyter runs it (cells open ../examples/...)
    wall, cpu, proc = timed([sys.executable, "-c", NOTEBOOK_RUNNER, str(path)], timeout, cwd=path.parent)
    if proc is None or proc.returncode:
        return wall, cpu, "timed out" if proc is None else proc.stderr.strip()[-300:], ""
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    return wall, cpu, out["error"], f"cell {out['slowest_cell']}: {out['slowest_cell_cpu']:.1f} s"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", help="comma-separated file stems (vector_add, 03_tiled_matmul, ...)")
    p.add_argument("--no-examples", action="store_true")
    p.add_argument("--no-notebooks", action="store_true")
    p.add_argument("--cold", action="store_true", help="time an example's first run, build included")
    p.add_argument("--timeout", type=int, default=600, help="wall seconds before a run is stopped")
    p.add_argument("--markdown", action="store_true", help="print a markdown table")
    a = p.parse_args(argv)
    only = set(a.only.split(",")) if a.only else None
    work = [] if a.no_examples else [("example", f) for f in sorted((ROOT / "examples").glob("*.cu"))]
    work += [] if a.no_notebooks else [("notebook", f) for f in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))]
    rows, start_load = [], load_note()
    for kind, path in work:
        if only and path.stem not in only:
            continue
        wall, cpu, error, slowest = (run_notebook(path, a.timeout) if kind == "notebook"
                                     else run_example(path, a.cold, a.timeout))
        met = "ERROR" if error else ("yes" if cpu < TARGET_S else "NO")
        rows.append([f"{kind} {path.name}", f"{cpu:.1f}", f"{wall:.1f}", slowest, met])
        print(f"  {path.name}: {cpu:.1f} s CPU" + (f", {error}" if error else ""), file=sys.stderr, flush=True)
    print(format_table(["run", "CPU s", "wall s", "slowest cell (CPU)", f"< {TARGET_S:.0f} s"], rows, a.markdown))
    print(f"\nCPU s: the run's process and what it waited for; {start_load}; "
          f"at the end, {load_note().split('load average ')[1]}")
    return 1 if any(r[-1] != "yes" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
