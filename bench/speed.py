"""The emulator's two tiers against the same kernels as plain C loops on one core, side by side.

    python bench/speed.py                      # every kernel at the issue's sizes
    python bench/speed.py --only matmul --markdown
    python bench/speed.py --interp-budget 5    # interpreter runs longer than this are extrapolated
    python bench/speed.py --warm 1             # one full-size launch, untimed, before the best of 3

For each kernel: the interpreter (``CUDALAB_TIER=interp``, one launch), the compiled tier
(``CUDALAB_TIER=compiled``, best of 3 launches after a warm-up launch that compiles it; that launch
is its own column, and runs one block row: the first of the 3 is the first launch of the full size, 10 to
50 ms for the 2^20 shuffle reduction, unless ``--warm`` adds full-size launches first), and the C
version in ``bench/c/kernels.c`` built with ``cc -O2`` and with ``cc -O3 -march=native`` (``CCS``; best of
3 runs after a warm-up each; the GFMA/s column is the compiled tier's, for the tiled products). Inputs live
on the device before the timed launch, so copies are not timed. Results are checked against numpy.
Times are CPU seconds of the process (the C program's too), so that a shared, busy machine does
not inflate them; the load average is printed with the table.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from kernels import BENCHES, TILED_MATMUL, Bench  # noqa: E402

GRID_STRIDE = r"""
__global__ void saxpy(const float* x, float* y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = 2.0f * x[i] + y[i];
}
"""


def _grid_stride_check(size, args, blocks):
    x, y, _ = args
    want = 2.0 * x.astype(np.float64) + np.random.default_rng(1).random(size, np.float32)
    ok = np.allclose(y, want, rtol=1e-6)
    return None if ok else "y: wrong saxpy result"


GRID_SUM = r"""
__global__ void grid_sum(const float* x, float* sums, int n) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int k = tid; k < n; k += blockDim.x * gridDim.x)
        s += x[k];
    sums[tid] = s;
}
"""
GRID_SUM_BLOCKS = 288       # Ansorge's reduce1 launch: 288 blocks of 256 threads over 2^24 floats


def _grid_sum_check(size, args, blocks):
    x, sums, _ = args
    lanes = GRID_SUM_BLOCKS * 256
    want = np.zeros(lanes, np.float32)
    for row in range(0, size, lanes):           # each thread's own float32 order
        part = x[row:row + lanes]
        want[:part.size] += part
    return None if np.array_equal(sums, want) else "sums: not each thread's float32 sum"


BLOCK_RELAX = r"""
__global__ void relax(float* v, int turns) {
    __shared__ float s[130];
    int t = threadIdx.x + 1;
    s[t] = v[t - 1];
    if (t == 1) { s[0] = 0.0f; s[129] = 1.0f; }
    for (int k = 0; k < turns; ++k) {
        __syncthreads();
        float next = 0.5f * (s[t - 1] + s[t + 1]);
        __syncthreads();
        s[t] = next;
    }
    v[t - 1] = s[t];
}
"""


def _block_relax_check(turns, args, blocks):
    s = np.concatenate([[0], np.random.default_rng(2).random(128, np.float32), [1]]).astype(np.float32)
    for _ in range(turns):
        s[1:-1] = np.float32(0.5) * (s[:-2] + s[2:])
    return None if np.array_equal(args[0], s[1:-1]) else "v: wrong relaxation"


BENCHES = dict(BENCHES, block_relax=Bench(
    "block_relax", "relax", BLOCK_RELAX, (20000,), (128,), lambda n: (1,),
    lambda n, rng: [np.random.default_rng(2).random(128, np.float32), np.int32(n)], _block_relax_check))
BENCHES = dict(BENCHES, grid_stride=Bench(
    "grid_stride", "saxpy", GRID_STRIDE, (2**22,), (256,), lambda n: (256,),
    lambda n, rng: [rng.random(n, np.float32), np.random.default_rng(1).random(n, np.float32), np.int32(n)],
    _grid_stride_check))
BENCHES = dict(BENCHES, grid_sum=Bench(
    "grid_sum", "grid_sum", GRID_SUM, (2**24,), (256,), lambda n: (GRID_SUM_BLOCKS,),
    lambda n, rng: [rng.random(n, np.float32), np.zeros(GRID_SUM_BLOCKS * 256, np.float32), np.int32(n)],
    _grid_sum_check))
# the tiled product in 32 x 32 blocks (globalToShmemAsyncCopy's arithmetic at its size, 1280):
# 1,024 threads a block in 32 rows, each row a vector of 32 lanes in the compiled tier's rows version
BENCHES = dict(BENCHES, matmul32=Bench(
    "matmul32", "matmul", TILED_MATMUL.replace("#define TILE 16", "#define TILE 32"), (1280,), (32, 32),
    lambda n: (n // 32, n // 32),
    lambda n, rng: [rng.random((n, n), np.float32), rng.random((n, n), np.float32),
                    np.zeros((n, n), np.float32), np.int32(n)],
    lambda size, args, blocks: BENCHES["matmul"].check(size, args, blocks * 2)))
FMAS = {"matmul": lambda n: n ** 3, "matmul32": lambda n: n ** 3}      # for the GFMA/s column
GRID_STRIDE_KERNELS = {"grid_stride", "grid_sum"}     # a block's share of the work does not shrink with the grid

# (kernel, size): the list (issue 16)
CASES = [("vector_add", 2**20), ("matmul", 256), ("matmul", 1024), ("collatz", 2**14), ("histogram", 2**24),
         ("warp_shuffle", 2**20), ("grid_stride", 2**22), ("grid_sum", 2**24), ("reduction", 2**20),
         ("block_relax", 20000), ("matmul32", 1280)]
CCS = [["cc", "-O2"], ["cc", "-O3", "-march=native"]]     # each a column: the compiler's plain and best


@dataclass
class Row:
    name: str
    size: int
    interp: float | None = None
    interp_note: str = ""
    compiled: float | None = None
    compile_s: float | None = None
    c: list | None = None         # seconds per C build of CCS
    error: str = ""


def build_c(folder, cc, k=0):
    exe = Path(folder) / f"kernels{k}"
    subprocess.run(cc + ["-o", str(exe), str(HERE / "c" / "kernels.c")], check=True)
    return exe


def run_c(exe, name, size):
    out = subprocess.run([str(exe), name, str(size)], capture_output=True, text=True, check=True).stdout
    return float(out.split()[0])


def launch(kernel, bench, size, args, blocks=None):
    t = time.process_time()
    kernel[bench.launch(size, blocks), bench.block](*args)
    return time.process_time() - t


def emulate(name, size, interp_budget, warm=0):
    """(interp seconds, note, compiled seconds, compile seconds, error) for one kernel. ``warm``: full-size
    launches, untimed, before the best of 3 (the compiling launch runs one block row only, so the first
    timed launch is the first of its size: its batch shapes, their lane arrays and pages, a sample batch)."""
    import cudalab
    cudalab.set_watchdog(3600)            # the interpreter takes minutes on the biggest sizes
    bench = BENCHES[name]
    kernel = cudalab.compile(bench.source).get_kernel(bench.kernel)
    host = bench.inputs(size, np.random.default_rng(0))
    args = [cudalab.to_device(a) if isinstance(a, np.ndarray) else a for a in host]
    full = bench.grid(size)[-1]
    row = Row(name, size)
    os.environ["CUDALAB_TIER"] = "interp"
    launch(kernel, bench, size, args, 1)                   # warm-up: parsing, decoding
    blocks = full
    if interp_budget is not None and name not in GRID_STRIDE_KERNELS:
        first = max(1, min(full, (1 << 17) // (int(np.prod(bench.block)) * int(np.prod(bench.grid(size)[:-1])))))
        one = launch(kernel, bench, size, args, first)           # about one batch of the interpreter
        blocks = max(first, min(full, int(interp_budget / max(one, 1e-6) * first)))
    t = launch(kernel, bench, size, args, blocks)
    row.interp = t * full / blocks
    if blocks < full:
        row.interp_note = f"~ ({blocks} of {full} block rows run)"
    os.environ["CUDALAB_TIER"] = "compiled"
    args = [cudalab.to_device(a) if isinstance(a, np.ndarray) else a for a in host]
    row.compile_s = launch(kernel, bench, size, args, 1)   # compiles (or loads from the disk cache)
    for _ in range(warm):
        args = [cudalab.to_device(a) if isinstance(a, np.ndarray) else a for a in host]
        launch(kernel, bench, size, args)
    row.compiled = float("inf")
    for _ in range(3):                                  # best of 3, as for C
        args = [cudalab.to_device(a) if isinstance(a, np.ndarray) else a for a in host]
        row.compiled = min(row.compiled, launch(kernel, bench, size, args))
    out = [a.copy_to_host() if hasattr(a, "copy_to_host") else a for a in args]
    row.error = bench.check(size, out, full) or ""
    os.environ.pop("CUDALAB_TIER", None)
    return row


def fmt(x, digits=3):
    if x is None:
        return "-"
    return f"{x:.{digits}g}" if x < 100 else f"{x:.0f}"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", help="comma-separated kernel names")
    p.add_argument("--interp-budget", type=float, default=20.0,
                   help="seconds: longer interpreter runs are extrapolated from part of the grid (default 20)")
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--warm", type=int, default=0,
                   help="full-size compiled launches, untimed, before the best of 3 (default 0: the first timed "
                        "launch is the kernel's first at that size, as C's best of 3 runs is not)")
    a = p.parse_args(argv)
    only = set(a.only.split(",")) if a.only else None
    cases = [c for c in CASES if only is None or c[0] in only]
    folder = tempfile.mkdtemp()
    try:
        exes = [build_c(folder, cc, k) for k, cc in enumerate(CCS)]
        rows = []
        for name, size in cases:
            try:
                row = emulate(name, size, a.interp_budget, a.warm)
            except Exception as e:          # noqa: BLE001  (a failing kernel is a row, not the end)
                row = Row(name, size, error=f"{type(e).__name__}: {e}")
            row.c = [run_c(exe, name, size) for exe in exes]
            rows.append(row)
            print(f"  {name} {size}: done", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    flags = [" ".join(cc[1:]) for cc in CCS]
    head = (["kernel", "size", "interp s", "compiled s", "GFMA/s"] + [f"C {f} s" for f in flags]
            + [f"compiled / C {f}" for f in flags] + ["interp / compiled", "compile s", "check"])
    lines = []
    for r in rows:
        fma = FMAS.get(r.name)
        cs = r.c or [None] * len(CCS)
        lines.append([r.name, str(r.size), fmt(r.interp) + (" " + r.interp_note if r.interp_note else ""),
                      fmt(r.compiled), f"{fma(r.size) / r.compiled / 1e9:.2f}" if fma and r.compiled else "-"]
                     + [f"{c:.4f}" if c is not None else "-" for c in cs]
                     + [f"{r.compiled / c:.1f}x" if r.compiled and c else "-" for c in cs]
                     + [f"{r.interp / r.compiled:.1f}x" if r.compiled and r.interp else "-",
                        fmt(r.compile_s), r.error or "ok"])
    if a.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for ln in lines:
            print("| " + " | ".join(ln) + " |")
    else:
        widths = [max(len(h), *(len(ln[k]) for ln in lines)) for k, h in enumerate(head)]
        print("  ".join(h.ljust(w) for h, w in zip(head, widths)))
        for ln in lines:
            print("  ".join(x.ljust(w) for x, w in zip(ln, widths)))
    cc = subprocess.run(["cc", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    one, five, _ = os.getloadavg()
    print(f"\nC: {' and '.join(' '.join(c) for c in CCS)} ({cc}), one core. "
          f"Machine: {os.cpu_count()} CPUs, load average {one:.1f} "
          f"(1 min), {five:.1f} (5 min).")
    return 1 if any(r.error for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
