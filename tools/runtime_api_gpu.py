"""Record what the runtime-API test programs print on a real GPU (tests/runtime_api/*.cu).

On a machine with nvcc and an NVIDIA GPU (one device call):
    python tools/runtime_api_gpu.py --out DIR
Each program is built with NVIDIA's nvcc and runtime (``-arch=native``) and run with line-buffered
stdout; DIR/runtime_api_gpu.tar.gz holds NAME.out (its stdout) for each and summary.txt (exit codes,
stderr): one file, so a device run's limit on returned files is never hit. Unpack the .out files
into tests/runtime_api/h100/: tests/test_runtime_api.py compares the emulator's output (with the
H100 device profile) against them, and its ``gpu`` test re-runs them live.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tarfile
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ROOT / "tests" / "runtime_api"
sys.path.insert(0, str(ROOT))
from cudalab.programs.compare import link_options  # noqa: E402  (the "// link: -lcuda" line of a program)


def run_on_gpu(src: Path, work: Path, timeout: float = 60) -> tuple:
    """(exit code, stdout, stderr) of ``src`` built with nvcc and run on the GPU."""
    exe = work / src.stem
    r = subprocess.run(["nvcc", "-arch=native", "-o", str(exe), str(src), *link_options(src)], capture_output=True,
                       text=True)
    if r.returncode:
        return None, "", r.stdout + r.stderr
    stdbuf = ["stdbuf", "-oL"] if shutil.which("stdbuf") else []
    try:
        p = subprocess.run(stdbuf + [str(exe)], capture_output=True, text=True, timeout=timeout, cwd=work)
    except subprocess.TimeoutExpired as e:
        return -9, e.stdout or "", (e.stderr or "") + "timeout"
    return p.returncode, p.stdout, p.stderr


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--only", default="", help="comma-separated program names (driver,nvrtc): record just those")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    progs = sorted(p for p in PROGRAMS.glob("*.cu") if not args.only or p.stem in args.only.split(","))
    work = Path(tempfile.mkdtemp(prefix="cudalab-rt-"))
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda p: run_on_gpu(p, work), progs))
    summary = []
    outputs = work / "outputs"
    outputs.mkdir()
    for p, (code, out, err) in zip(progs, results):
        (outputs / f"{p.stem}.out").write_text(out)
        summary.append(f"== {p.name}: exit {code}, {len(out.splitlines())} lines\n{err}")
    (outputs / "summary.txt").write_text("\n".join(summary) + "\n")
    with tarfile.open(args.out / "runtime_api_gpu.tar.gz", "w:gz") as tar:
        for f in sorted(outputs.iterdir()):
            tar.add(f, arcname=f.name)
    print("\n".join(summary))
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
