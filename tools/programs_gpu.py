"""Run every whole-program example on a real GPU and diff its output with the emulator's.

On a machine with nvcc and an NVIDIA GPU (one device call):
    python tools/programs_gpu.py [--out DIR]
Each examples/*.cu with ``int main`` is compiled with NVIDIA's nvcc and runtime (``-arch=native``),
run with line-buffered stdout (so device printf and host lines interleave as they happen), and
its output (``time:`` and ``device:`` lines aside) is compared with examples/expected/NAME.out,
the emulator's output written by tools/programs_expected.py. Prints one line per program and the
pass counts; with --out, also writes the full report and every program's GPU output there.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cudalab.programs import has_main           # noqa: E402
from cudalab.programs.compare import diff        # noqa: E402


def build(src: Path, work: Path):
    exe = work / src.stem
    r = subprocess.run(["nvcc", "-arch=native", "-lineinfo", "-o", str(exe), str(src)], capture_output=True,
                       text=True)
    return exe, r.returncode, r.stdout + r.stderr


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="folder for the report and the GPU outputs")
    args = ap.parse_args(argv)
    progs = [p for p in sorted((ROOT / "examples").glob("*.cu")) if has_main(p.read_text())]
    work = Path(tempfile.mkdtemp(prefix="cudalab-programs-"))
    lines, outputs, same = [], {}, 0
    with ThreadPoolExecutor(8) as pool:
        built = list(pool.map(lambda p: build(p, work), progs))
    for p, (exe, rc, log) in zip(progs, built):
        if rc:
            lines.append(f"{p.name}: COMPILE FAILED\n{log}")
            continue
        stdbuf = ["stdbuf", "-oL"] if shutil.which("stdbuf") else []
        try:
            r = subprocess.run(stdbuf + [str(exe)], capture_output=True, text=True, timeout=120)
            out, err, code = r.stdout, r.stderr, r.returncode
        except subprocess.TimeoutExpired:
            out, err, code = "", "timeout", -9
        outputs[p.stem] = out + (f"\n--- stderr ---\n{err}" if err else "")
        expected = ROOT / "examples" / "expected" / f"{p.stem}.out"
        d = diff(expected.read_text(), out, p.name) if expected.exists() else "(no expected output)\n"
        passed = "Result = PASS" in out and code == 0
        same += not d
        lines.append(f"{p.name}: exit {code}, {'PASS' if passed else 'FAIL'} on the GPU, "
                     f"{'same output as the emulator' if not d else 'DIFFERENT from the emulator:'}")
        if d:
            lines.append(d)
    lines.append(f"{same}/{len(progs)} programs print the same on the GPU as on the emulator "
                 f"(time:/device: lines aside)")
    report = "\n".join(lines)
    print(report)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "programs_gpu.txt").write_text(report + "\n")
        (args.out / "programs_gpu_outputs.txt").write_text(
            "\n".join(f"===== {k}\n{v}" for k, v in outputs.items()))
    shutil.rmtree(work, ignore_errors=True)
    return 0 if same == len(progs) else 1


if __name__ == "__main__":
    sys.exit(main())
