"""Run the numba.cuda programs of public courses on cudalab, unchanged, and write docs/python_programs.md's table.

Not part of CI: the programs belong to their authors and stay outside this repository. Give a
checkout, the name of its set and the programs to try (globs relative to the checkout)::

    python tools/pycourses_check.py --checkout ~/ext/PythonHPC --set cscs_python_hpc \\
        'numba-cuda/*.ipynb' 'cupy/Cupy.ipynb' --json p7.json
    python tools/pycourses_check.py --checkout ~/ext/numba-examples --set numba_examples \\
        'legacy/*/*cuda*.py' --names path --json p7.json
    python tools/pycourses_check.py --merge p7.json --column '7th pass' --reasons reasons.json

How each program runs, as its reader would run it:

- a script (``.py``) runs as ``python -m cudalab.numba SCRIPT`` in its own folder of a copy of the
  checkout (programs read files beside them and write where they run; ``--run-from checkout``: in the
  copy's root, for a set whose author runs them from there), with ``--args`` where its author gives some. It passes when it ends with exit code 0.
- a notebook (``.ipynb``) runs cell by cell in one IPython shell (magics, ``!commands`` and
  ``%%timeit -o`` as in Jupyter), after ``cudalab.numba.install()``, in its folder of the copy: Jupyter's
  *Run All* with errors shown, so a failing cell is reported and the next one runs. It passes when
  every cell ends without an exception. A cell's ``!pip install ...`` (``conda``, ``apt-get``, ``%pip``:
  Colab notebooks install PyCUDA first) is not run and prints that it was not: the environment is what
  is being judged, and a stand-in (cudalab's PyCUDA, CuPy) is already in place.

``CUDALAB_NUMBA=1`` is set too, and this Python's folder is first on ``PATH``, so the programs a
notebook starts (``!python x.py``) also run on cudalab, as in a Jupyter kernel of this environment;
matplotlib draws to no screen (``MPLBACKEND=Agg``). ``--simulator`` runs the same programs under numba's
own CUDA simulator instead (``NUMBA_ENABLE_CUDASIM=1``, no cudalab), for comparison.

Each program has a limit of CPU time (``--timeout``, the machine is shared so wall time says little)
and reports the CPU seconds it and its children used. A kernel too large for a CPU must stop with the
watchdog's estimate of the time it needs, or an allocation with cudalab's "out of device memory": that
is cudalab's correct answer, listed as *GPU-sized*. *time*: still running at the limit. A program that
needs what cudalab cannot give (a package that is not installed, a real driver) is left out with
``--leave-out GLOB=REASON``. ``--stub MODULE`` puts a do-nothing module in place of a display helper
that is not installed (a drawing library a puzzle set imports only to draw).

A failure is sorted at first sight (``cause`` in the results, first in the table's *why*): the
packages that are not installed (``package: scipy``), the cells an exercise leaves blank for the
student (a SyntaxError in a cell with ``x = # TODO``, ``...`` or ``___``) and Python 2 code, which a
GPU fails on too; and what the CuPy and PyCUDA stand-ins lack (``stand-in lacks: cupyx.scipy``), which
a GPU with the real package has.

``--merge`` reads one or more result files and writes the column ``--column`` of the table of sets in
docs/python_programs.md (programs passing in each set) and, between the markers
``<!-- pycourses_check: COLUMN -->`` and ``<!-- /pycourses_check -->``, a table of every program run:
result, CPU seconds and why it failed (``--reasons``: a JSON object {"set/program": "why"} of what a
person found; else the first error the run printed).
"""
from __future__ import annotations

import argparse
import fnmatch
import glob
import json
import os
import re
import shutil
import signal
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from samples_check import ROOT, WALL_PER_CPU, run_limited  # noqa: E402

TIMEOUT = 300
DOC = ROOT / "docs" / "python_programs.md"
CELL = "@@pycourses cell"          # the notebook driver's lines: which cell runs, which failed and why
# cudalab's honest answer for work too large for a CPU: the watchdog's (or the CPU limit's) estimate,
# a launch stopped at once because its first blocks show it would run far beyond the limit, or memory
GPU_SIZED = re.compile(r"thread-instructions: (about|between|more than) .* on the emulator|"
                       r"was stopped \w* ?early: it would run far beyond|out of device memory: asked for")
EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)|KeyError|StopIteration)\b.*$", re.M)

# Runs in the child for a notebook: one IPython shell, the cells in order, each one's outcome on a line.
NOTEBOOK_DRIVER = r'''
import json, os, sys, types
path, simulator, stubs = sys.argv[1], sys.argv[2] == "1", [s for s in sys.argv[3].split(",") if s]
if not simulator:
    import cudalab.numba
    cudalab.numba.install()
for name in stubs:
    sys.modules[name] = _stub = types.ModuleType(name)
    _stub.__getattr__ = lambda attr: (lambda *a, **k: None)
from IPython.core.interactiveshell import InteractiveShell
nb = json.load(open(path, encoding="utf-8"))
cells = [c for c in nb.get("cells", []) if c.get("cell_type") == "code"]
shell = InteractiveShell.instance()
shell.run_line_magic("colors", "nocolor")     # tracebacks as plain text in the log
shell.enable_gui = lambda gui=None: None      # %matplotlib inline: no GUI event loop to start, as in a kernel
shell.user_ns["__file__"] = os.path.abspath(path)
import re as _re
_INSTALL = _re.compile(r"\s*(sudo\s+)?(python3?\s+-m\s+)?(pip3?|conda|mamba|apt(-get)?)\s+install\b")
_BLANK = _re.compile(r"(=|return|\()\s*#|#\s*(TODO|FIXME|your code|fill in)|\.\.\.\s*$|_{3,}", _re.I | _re.M)
_system = shell.system
def _no_installs(cmd):      # a Colab notebook's `!pip install pycuda`: the environment is what is being judged
    if _INSTALL.match(cmd):
        print(f"@@pycourses not run (the runner installs nothing): !{cmd.strip()}", flush=True)
        return None
    return _system(cmd)
shell.system = shell.system_piped = _no_installs
for _magic in ("pip", "conda", "mamba"):
    shell.register_magic_function(
        lambda line, _m=_magic: print(f"@@pycourses not run (the runner installs nothing): %{_m} {line}", flush=True),
        "line", _magic)
for n, cell in enumerate(cells, 1):
    source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
    print(f"@@pycourses cell {n} runs", flush=True)
    result = shell.run_cell(source, store_history=True)
    sys.stdout.flush(); sys.stderr.flush()
    if not result.success:
        err = result.error_in_exec or result.error_before_exec
        words = str(err).strip().splitlines()
        if isinstance(err, SyntaxError) and _BLANK.search(source):     # a line the student is to finish
            print(f"@@pycourses cell {n} blank", flush=True)
        print(f"@@pycourses cell {n} failed: {type(err).__name__}: {words[0][:300] if words else ''}", flush=True)
print(f"@@pycourses cells {len(cells)}", flush=True)
'''


@dataclass
class Result:
    name: str                   # set/program
    status: str                 # pass, fail, GPU-sized, time, left out
    detail: str = ""            # why it failed: the failing cells and each one's first error
    cpu_seconds: float = 0.0
    kind: str = "script"        # script or notebook
    failing_cells: int = 0
    cells: int = 0
    cause: str = ""             # a first sorting of a failure: packages not installed, exercise blanks


PACKAGE = re.compile(r"(?:ModuleNotFoundError|ImportError): No module named '([\w.]+)'")
MISSING_NAME = re.compile(r"ImportError: cannot import name '(\w+)' from '([\w.]+)'")
# the packages cudalab stands in for: a part of one that is missing is the stand-in's gap, not a package
STAND_INS = ("cupy", "cupyx", "pycuda")
PYTHON_2 = re.compile(r"SyntaxError: Missing parentheses in call to '(?:print|exec)'")


def cause(status: str, out: str) -> str:
    """What a failure is at first sight, for the table: the packages that are not installed here
    (``package: scipy``), the cells an exercise leaves for the student to finish (a SyntaxError in a
    cell with ``x = # TODO``, ``...`` or ``___``: ``exercise blanks: cells 3, 5``) and Python 2 code
    (``print x``), which a GPU fails on too; and what cudalab's CuPy and PyCUDA stand-ins lack
    (``stand-in lacks: cupyx.scipy``), which a GPU with the real package has. A person's ``--reasons``
    still says why; this only sorts a failure before anyone reads the log."""
    if status != "fail":
        return ""
    parts = []
    missing = set(PACKAGE.findall(out))
    packages = sorted({m.split(".")[0] for m in missing if m.split(".")[0] not in STAND_INS} - {"cudalab"})
    if packages:
        parts.append("package: " + ", ".join(packages))
    lacking = sorted({m for m in missing if m.split(".")[0] in STAND_INS}
                     | {f"{where}.{name}" for name, where in MISSING_NAME.findall(out)
                        if where.split(".")[0] in STAND_INS})
    if lacking:
        parts.append("stand-in lacks: " + ", ".join(lacking))
    if PYTHON_2.search(out):
        parts.append("Python 2")
    parts.extend(gone_api_p17(out))
    parts.extend(g for g in gone_api_p18(out) if g not in parts)
    blanks = re.findall(rf"^{CELL} (\d+) blank$", out, re.M)
    if blanks:
        parts.append("exercise blanks: cell" + ("s " if len(blanks) > 1 else " ") + ", ".join(blanks))
    return "; ".join(parts)


# names that the current Python, numpy and SciPy removed: a program using one fails on a GPU too
GONE_P17 = (
    (re.compile(r"module 'time' has no attribute 'clock'"), "time.clock", "Python 3.8"),
    (re.compile(r"module 'numpy' has no attribute '(float|int|bool|object|complex|str|long|unicode)'"),
     "np.{0}", "numpy 1.24"),
    (re.compile(r"module 'numpy' has no attribute '(asscalar|alen|msort)'"), "np.{0}", "numpy 1.23-2.0"),
    (re.compile(r"cannot import name '(imread|imsave|imresize|imfilter|imrotate|toimage)' from 'scipy\.misc'"),
     "scipy.misc.{0}", "SciPy 1.2-1.3"),
    (re.compile(r"TypeError: only 0-dimensional arrays can be converted to Python scalars"),
     "a one-element array as a Python number", "deprecated in numpy 1.25, an error by 2.4"),
)


def gone_api_p17(out: str, table=GONE_P17) -> list:
    """What an old program uses that its language or libraries have since removed (``time.clock``,
    ``np.float``, ``scipy.misc.imread``), as ``gone: time.clock (Python 3.8)``: the author's code
    against today's packages, which a GPU with them fails on too."""
    found = []
    for pattern, name, version in table:
        for m in pattern.finditer(out):
            item = f"gone: {name.format(*m.groups())} ({version})"
            if item not in found:
                found.append(item)
    return found


# the same removals met as imports (``from time import clock``: "cannot import name 'clock' from 'time'")
GONE_P18 = (
    (re.compile(r"cannot import name 'clock' from 'time'"), "time.clock", "Python 3.8"),
    (re.compile(r"cannot import name '(float|int|bool|object|complex|str|long|unicode)' from 'numpy'"),
     "np.{0}", "numpy 1.24"),
)


def gone_api_p18(out: str) -> list:
    """gone_api_p17 for names the program imports (``from time import clock``)."""
    return gone_api_p17(out, GONE_P18)


def program_name(path: Path, checkout: Path, names: str) -> str:
    """What a program is called in the table: its file's stem, or (``--names path``) its path in the
    checkout without the suffix (numba-examples' many ``cuda.py``), with every run of characters other
    than letters and digits one ``_`` ('2.2 Numba lab (solution)' is 2_2_Numba_lab_solution)."""
    name = path.stem if names == "stem" else str(path.relative_to(checkout).with_suffix(""))
    return re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_")


def last_exception(out: str) -> str:
    """The line that says what stopped a script: Python's last ``SomeError: ...`` line, or cudalab's."""
    lines = [m.group(0) for m in EXCEPTION_LINE.finditer(out)]
    if lines:
        return lines[-1].strip()[:300]
    rest = [line.strip() for line in out.splitlines() if line.strip()]
    return (rest[-1] if rest else "(no output)")[:300]


def judge(kind: str, code: int, out: str, cpu: float, limit: float) -> tuple[str, str, int, int]:
    """(status, detail, failing cells, cells) of one run."""
    gpu_sized = GPU_SIZED.search(out)
    if code in (-signal.SIGXCPU, -signal.SIGKILL) or cpu > limit + 5:
        if gpu_sized:
            return "GPU-sized", _sentence_around(out, gpu_sized), 0, 0
        return "time", f"still running after {limit:g} s of CPU{running_cell_p18(out)}", 0, 0
    if kind == "script":
        if code == 0:
            return "pass", "", 0, 0
        if gpu_sized:
            return "GPU-sized", _sentence_around(out, gpu_sized), 0, 0
        return "fail", last_exception(out), 0, 0
    failed = re.findall(rf"^{CELL} (\d+) failed: (.*)$", out, re.M)
    total = re.search(rf"^{CELL}s (\d+)$", out, re.M)
    cells = int(total.group(1)) if total else 0
    if code != 0 and not total:               # the shell itself stopped (a cell called sys.exit, a crash)
        last = re.findall(rf"^{CELL} (\d+) runs$", out, re.M)
        where = f"cell {last[-1]}: " if last else ""
        return "fail", f"stopped in {where}{last_exception(out)}", len(failed) + 1, cells
    if not failed:
        return "pass", "", 0, cells
    numbers = ", ".join(n for n, _ in failed)
    first_cell = _cell_output(out, failed[0][0])
    first = GPU_SIZED.search(first_cell)
    if first:       # the later cells use what the GPU-sized one did not make: its consequences, not causes
        return ("GPU-sized", f"failing cells {numbers}; cell {failed[0][0]}: " + _sentence_around(first_cell, first),
                len(failed), cells)
    detail = f"failing cells {numbers}; " + "; ".join(f"cell {n}: {why}" for n, why in failed[:4])
    return "fail", detail[:600], len(failed), cells


def running_cell_p18(out: str) -> str:
    """Where a notebook was when its CPU time ran out (``, in cell 21``): the cells before it passed or
    failed on their own, so a reader sees how far the lesson got (a ``%%timeit`` of a GPU-sized kernel
    near the end, or the first cell); empty for a script."""
    started = re.findall(rf"^{CELL} (\d+) runs$", out, re.M)
    return f", in cell {started[-1]}" if started else ""


def _cell_output(out: str, n: str) -> str:
    """What cell ``n`` printed, its traceback included."""
    start = out.find(f"{CELL} {n} runs")
    end = out.find(f"{CELL} {int(n) + 1} runs", start)
    return out[start:end if end > 0 else len(out)]


def _sentence_around(out: str, match) -> str:
    line_start = out.rfind("\n", 0, match.start()) + 1
    line_end = out.find("\n", match.end())
    return out[line_start:line_end if line_end > 0 else len(out)].strip()[:400]


def run_folder_p16(copy: Path, work: Path, run_from: str) -> Path:
    """Where a program runs: its own folder of the copy (``folder``), or the copy's root (``checkout``)
    for a set whose author runs every program from the repository's root, as an editor's workspace
    does (scripts in ``src/...`` that open ``data.json`` lying at the root)."""
    return work if run_from == "checkout" else copy.parent


def run_program(path: Path, checkout: Path, work: Path, name: str, limit: float, simulator: bool,
                arguments: list, stubs: list, logs: Path | None, run_from: str = "folder") -> Result:
    """Run one script or notebook in its folder of the copy ``work`` of ``checkout`` (or, with
    ``run_from="checkout"``, in the copy's root)."""
    copy = work / path.relative_to(checkout)
    kind = "notebook" if path.suffix == ".ipynb" else "script"
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONUNBUFFERED="1")
    # `!python x.py` in a cell runs this Python, as in a kernel of the environment the notebook uses
    env["PATH"] = os.pathsep.join((os.path.dirname(sys.executable), env.get("PATH", "")))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    if simulator:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
        env.pop("CUDALAB_NUMBA", None)
    else:
        env["CUDALAB_NUMBA"] = "1"
    if kind == "notebook":
        command = [sys.executable, "-c", NOTEBOOK_DRIVER, str(copy), "1" if simulator else "0", ",".join(stubs)]
    elif simulator:
        command = [sys.executable, str(copy), *arguments]
    else:
        command = [sys.executable, "-m", "cudalab.numba", str(copy), *arguments]
    if stubs and kind == "script":          # a stub for a script: a module of that name on its path
        stub_dir = work.parent / "stubs"
        stub_dir.mkdir(exist_ok=True)
        for stub in stubs:
            (stub_dir / f"{stub}.py").write_text("def __getattr__(name):\n    return lambda *a, **k: None\n")
        env["PYTHONPATH"] += os.pathsep + str(stub_dir)
    code, out, cpu = run_limited(command, run_folder_p16(copy, work, run_from), env, limit, limit * WALL_PER_CPU)
    if logs:
        (logs / (name.replace("/", "__") + ".txt")).write_text(out)
    status, detail, failing, cells = judge(kind, code, out, cpu, limit)
    return Result(name, status, detail, round(cpu, 1), kind, failing, cells, cause(status, out))


# ---------------------------------------------------------------------------------------- the table
def merge(results: dict, column: str, reasons: dict, doc: Path = DOC) -> str:
    """docs/python_programs.md with ``column`` in its table of sets and the programs' table for it."""
    text = doc.read_text() if doc.exists() else ""
    by_set: dict = {}
    for r in results.values():
        by_set.setdefault(r["name"].split("/")[0], []).append(r)
    text = _set_column(text, column, {s: f"{sum(r['status'] == 'pass' for r in rows)} of {len(rows)}"
                                      for s, rows in by_set.items()})
    lines = [f"<!-- pycourses_check: {column} -->",
             f"Written by `tools/pycourses_check.py --merge` ({len(results)} programs, "
             f"{sum(r['status'] == 'pass' for r in results.values())} pass). *CPU s*: the whole run's, children included.",
             "", "| program | result | CPU s | why |", "|---|---|---:|---|"]
    for name in sorted(results):
        r = results[name]
        why = reasons.get(name) or "; ".join(w for w in (r.get("cause", ""), r["detail"]) if w)
        lines.append(f"| {name} | {r['status']} | {r['cpu_seconds']:.1f} | {_cell(why)} |")
    lines.append("<!-- /pycourses_check -->")
    block = "\n".join(lines)
    pattern = re.compile(rf"<!-- pycourses_check: {re.escape(column)} -->.*?<!-- /pycourses_check -->", re.S)
    if pattern.search(text):
        return pattern.sub(lambda m: block, text)
    return text.rstrip("\n") + f"\n\n## Programs, {column}\n\n" + block + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _set_column(text: str, column: str, counts: dict) -> str:
    """Add (or refill) ``column`` of the first table whose header starts with ``| set |``. A set the
    table lacks gets a row above ``all`` (its number of programs, '-' in the other columns), and the
    ``all`` row's number of programs counts it."""
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if line.startswith("| set |")), None)
    if start is None:
        return text
    header = [c.strip() for c in lines[start].strip("|").split("|")]
    _add_set_rows(lines, start, len(header), counts)
    new = column not in header
    at = len(header) if new else header.index(column)
    i = start
    while i < len(lines) and lines[i].startswith("|"):
        cells = [c.strip() for c in lines[i].strip().strip("|").split("|")]
        if i == start:
            value = column
        elif i == start + 1:
            value = "---"
        elif cells[0] == "all":
            value = _total(counts)
        else:
            value = counts.get(cells[0], "-")
        if new:
            cells.insert(at, value)
        else:
            cells[at] = value
        lines[i] = "| " + " | ".join(cells) + " |"
        i += 1
    return "\n".join(lines)


def _add_set_rows(lines: list, start: int, width: int, counts: dict):
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    rows = {lines[i].strip().strip("|").split("|")[0].strip(): i for i in range(start + 2, end)}
    added = [s for s in counts if s not in rows]
    if not added or "all" not in rows:
        return
    programs = {s: int(counts[s].split(" of ")[1]) for s in added}
    all_cells = [c.strip() for c in lines[rows["all"]].strip().strip("|").split("|")]
    if len(all_cells) > 1 and all_cells[1].isdigit():
        all_cells[1] = str(int(all_cells[1]) + sum(programs.values()))
        lines[rows["all"]] = "| " + " | ".join(all_cells) + " |"
    lines[rows["all"]:rows["all"]] = ["| " + " | ".join([s, str(programs[s])] + ["-"] * (width - 2)) + " |"
                                      for s in added]


def _total(counts: dict) -> str:
    passed = sum(int(v.split(" of ")[0]) for v in counts.values())
    ran = sum(int(v.split(" of ")[1]) for v in counts.values())
    return f"{passed} of {ran} run"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("programs", nargs="*", help="globs of scripts (.py) and notebooks (.ipynb), relative to the checkout")
    p.add_argument("--checkout", type=Path, help="the course's checkout (it is copied; the copy is where programs run)")
    p.add_argument("--set", dest="set_name", help="the set's name in the table (default: the checkout's folder name)")
    p.add_argument("--names", choices=("stem", "path"), default="stem", help="name programs by file stem or by path")
    p.add_argument("--timeout", type=float, default=TIMEOUT, help="CPU seconds each program may use")
    p.add_argument("--json", type=Path, default=Path("pycourses.json"), help="write (and add to) the results here")
    p.add_argument("--logs", type=Path, help="write each program's output to LOGS/SET__PROGRAM.txt")
    p.add_argument("--args", action="append", default=[], metavar="GLOB=WORDS", help="arguments for the scripts matching GLOB")
    p.add_argument("--leave-out", action="append", default=[], metavar="GLOB=REASON",
                   help="do not run the programs matching GLOB, for this reason (a package cudalab cannot give)")
    p.add_argument("--stub", action="append", default=[], metavar="MODULE", help="a do-nothing module of this name")
    p.add_argument("--run-from", choices=("folder", "checkout"), default="folder",
                   help="run each program in its own folder (default) or in the checkout's root")
    p.add_argument("--simulator", action="store_true", help="run under numba's CUDA simulator instead of cudalab")
    p.add_argument("--merge", type=Path, nargs="+", metavar="RESULTS.json", help="write the table from these")
    p.add_argument("--column", default="pass, 7th pass", help="with --merge: the column (and table) to write")
    p.add_argument("--reasons", type=Path, help="with --merge: JSON {\"set/program\": why}, what a person found")
    p.add_argument("--doc", type=Path, default=DOC, help="with --merge: the document to write")
    a = p.parse_args(argv)
    if a.merge:
        results = {}
        for f in a.merge:
            results.update(json.loads(f.read_text()))
        reasons = json.loads(a.reasons.read_text()) if a.reasons else {}
        a.doc.write_text(merge(results, a.column, reasons, a.doc))
        print(f"wrote {a.doc}")
        return 0
    if not a.checkout:
        p.error("give --checkout (or --merge)")
    checkout = a.checkout.resolve()
    set_name = a.set_name or checkout.name
    paths = [Path(f) for pattern in a.programs for f in sorted(glob.glob(str(checkout / pattern), recursive=True))
             if Path(f).is_file() and Path(f).suffix in (".py", ".ipynb")]
    results = json.loads(a.json.read_text()) if a.json.exists() else {}
    if a.logs:
        a.logs.mkdir(parents=True, exist_ok=True)
    arguments = [(g, words.split()) for g, _, words in (x.partition("=") for x in a.args)]
    left_out = [(g, why) for g, _, why in (x.partition("=") for x in a.leave_out)]
    work = Path(tempfile.mkdtemp(prefix="pycourses-")) / checkout.name
    shutil.copytree(checkout, work, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    try:
        for path in paths:
            rel = str(path.relative_to(checkout))
            name = f"{set_name}/{program_name(path, checkout, a.names)}"
            why = next((w for g, w in left_out if fnmatch.fnmatch(rel, g)), None)
            if why is not None:
                r = Result(name, "left out", why, kind="notebook" if path.suffix == ".ipynb" else "script")
            else:
                args = next((w for g, w in arguments if fnmatch.fnmatch(rel, g)), [])
                r = run_program(path, checkout, work, name, a.timeout, a.simulator, args, a.stub, a.logs, a.run_from)
            results[name] = asdict(r)
            a.json.write_text(json.dumps(results, indent=1))    # as it goes: a stopped run keeps its results
            print(f"{name:60s} {r.status:9s} {r.cpu_seconds:6.1f}s  {(r.cause + '; ') if r.cause else ''}{r.detail[:150]}",
                  flush=True)
    finally:
        shutil.rmtree(work.parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
