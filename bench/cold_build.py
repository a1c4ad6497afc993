"""What a first run pays LLVM: the compiled tier's cold build of a few kernels, and their native speed after.

    python bench/cold_build.py                       # our own kernels: a CUB block sort, matmuls
    python bench/cold_build.py --only matmul_unrolled --markdown
    python bench/cold_build.py --ptx thrust.ptx --kernel DeviceRadixSortOnesweepKernel --index 1   # build only

The native code is cached on disk (``compiled.cache_dir``), so only a first run builds it, but a
first run is what a student meets: any program calling ``thrust::sort`` builds CUB's big kernels,
and every change to the tier's sources empties the cache. For each kernel, from an empty cache
(``CUDALAB_CACHE`` in a new temporary folder): the Python that plans and writes its LLVM IR
(``compiled.plan``), LLVM's optimizer and code generation (``compiled._machine_code``), the whole build,
then its launch with the native code loaded (best of 3, ``CUDALAB_TIER=compiled``), checked against
numpy. ``--ptx``: kernels of a PTX file (``nvcc -ptx``), built only, each in its own process (one
that LLVM aborts is a row, not the end). Times are CPU seconds of this process.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kernels  # noqa: E402  (bench/kernels.py: the kernels the benches share)

ROOT = Path(__file__).resolve().parent.parent

# a block of 128 threads sorts 1,024 keys with CUB's block-wide radix sort (load, sort, store through shared memory)
CUB_BLOCK_SORT = r"""
#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_store.cuh>
extern "C" __global__ void block_sort(const unsigned* in, unsigned* out) {
    using Load = cub::BlockLoad<unsigned, 128, 8, cub::BLOCK_LOAD_TRANSPOSE>;
    using Sort = cub::BlockRadixSort<unsigned, 128, 8>;
    using Store = cub::BlockStore<unsigned, 128, 8, cub::BLOCK_STORE_TRANSPOSE>;
    __shared__ union {
        typename Load::TempStorage load;
        typename Sort::TempStorage sort;
        typename Store::TempStorage store;
    } tmp;
    unsigned keys[8];
    int offset = blockIdx.x * 128 * 8;
    Load(tmp.load).Load(in + offset, keys);
    __syncthreads();
    Sort(tmp.sort).Sort(keys);
    __syncthreads();
    Store(tmp.store).Store(out + offset, keys);
}
"""

# a block-wide exclusive scan of 4 items a thread (CUB's warp-scan based BlockScan)
CUB_BLOCK_SCAN = r"""
#include <cub/block/block_load.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>
extern "C" __global__ void block_scan(const unsigned* in, unsigned* out) {
    using Load = cub::BlockLoad<unsigned, 256, 4, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
    using Scan = cub::BlockScan<unsigned, 256>;
    using Store = cub::BlockStore<unsigned, 256, 4, cub::BLOCK_STORE_WARP_TRANSPOSE>;
    __shared__ union {
        typename Load::TempStorage load;
        typename Scan::TempStorage scan;
        typename Store::TempStorage store;
    } tmp;
    unsigned items[4];
    int offset = blockIdx.x * 256 * 4;
    Load(tmp.load).Load(in + offset, items);
    __syncthreads();
    Scan(tmp.scan).ExclusiveSum(items, items);
    __syncthreads();
    Store(tmp.store).Store(out + offset, items);
}
"""

# the textbook tiled product (bench/kernels.py's matmul): what most course kernels cost to build
TILED_MATMUL = kernels.TILED_MATMUL.replace("__global__", 'extern "C" __global__')

# a 32x32 tile, each thread 16 outputs of a column, every loop unrolled: about 1,400 PTX instructions
# (the shape of a book's register-tiled product)
MATMUL_UNROLLED = r"""
#define T 32
#define R 16
extern "C" __global__ void matmul_unrolled(const float* A, const float* B, float* C, int n) {
    __shared__ float As[T][T];
    __shared__ float Bs[T][T];
    int tx = threadIdx.x, ty = threadIdx.y;              // a block of 32 x 2 threads
    int row0 = blockIdx.y * T + ty * R, col = blockIdx.x * T + tx;
    float acc[R];
#pragma unroll
    for (int r = 0; r < R; ++r) acc[r] = 0.0f;
    for (int t = 0; t < n / T; ++t) {
#pragma unroll
        for (int r = 0; r < R; ++r) {
            As[ty * R + r][tx] = A[(row0 + r) * n + t * T + tx];
            Bs[ty * R + r][tx] = B[(t * T + ty * R + r) * n + col];
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < T; ++k) {
            float b = Bs[k][tx];
#pragma unroll
            for (int r = 0; r < R; ++r) acc[r] += As[ty * R + r][k] * b;
        }
        __syncthreads();
    }
#pragma unroll
    for (int r = 0; r < R; ++r) C[(row0 + r) * n + col] = acc[r];
}
"""


def _sort_case(rng):
    keys = rng.integers(0, 1 << 32, 512 * 1024, dtype=np.uint64).astype(np.uint32)
    return [keys, np.zeros_like(keys)], (512,), (128,), lambda out: np.array_equal(
        out[1], np.sort(keys.reshape(512, 1024), axis=1).ravel())


def _scan_case(rng):
    items = rng.integers(0, 1000, 512 * 1024, dtype=np.uint32)
    want = np.cumsum(items.reshape(512, 1024), axis=1, dtype=np.uint32) - items.reshape(512, 1024)
    return [items, np.zeros_like(items)], (512,), (256,), lambda out: np.array_equal(out[1], want.ravel())


def _matmul_case(tile, block):
    def case(rng, n=512):
        a, b = rng.random((n, n), np.float32), rng.random((n, n), np.float32)
        return ([a, b, np.zeros((n, n), np.float32), np.int32(n)], (n // tile, n // tile), block,
                lambda out: np.allclose(out[2], a @ b, rtol=1e-4))
    return case


# name -> (source, kernel, inputs and launch shape)
KERNELS = {
    "cub_block_sort": (CUB_BLOCK_SORT, "block_sort", _sort_case),
    "cub_block_scan": (CUB_BLOCK_SCAN, "block_scan", _scan_case),
    "matmul": (TILED_MATMUL, "matmul", _matmul_case(16, (16, 16))),
    "matmul_unrolled": (MATMUL_UNROLLED, "matmul_unrolled", _matmul_case(32, (32, 2))),
}


class _Timers:
    """CPU seconds spent in ``compiled.plan`` and ``compiled._machine_code`` (LLVM's passes and code
    generation; wrapped while a build runs)."""

    def __init__(self):
        from cudalab.emulator import compiled
        self.compiled, self.plan, self.llvm, self.ir_bytes = compiled, 0.0, 0.0, 0
        self.real = compiled.plan, compiled._machine_code

    def __enter__(self):
        plan, optimize = self.real

        def timed_plan(*a, **k):
            t = time.process_time()
            try:
                return plan(*a, **k)
            finally:
                self.plan += time.process_time() - t

        def timed_optimize(j, text, *a, **k):
            self.ir_bytes += len(text)
            t = time.process_time()
            try:
                return optimize(j, text, *a, **k)
            finally:
                self.llvm += time.process_time() - t
        self.compiled.plan, self.compiled._machine_code = timed_plan, timed_optimize
        return self

    def __exit__(self, *exc):
        self.compiled.plan, self.compiled._machine_code = self.real


def build(program, df) -> dict:
    """Build ``df``'s native code from an empty cache: seconds of planning, of LLVM, in all."""
    from cudalab.emulator import compiled
    with _Timers() as t:
        start = time.process_time()
        fused = compiled._build(program, df)
        total = time.process_time() - start
    return dict(insts=len(df.code), ir_mb=t.ir_bytes / 1e6, plan=t.plan, llvm=t.llvm, build=total,
                native=bool(fused))


def own_kernel(name) -> dict:
    """Build one of KERNELS cold, then launch it with the native code loaded (best of 3) and check it."""
    import cudalab
    from cudalab.emulator.engine import Program
    from cudalab.emulator.memory import DeviceMemory
    source, kernel_name, case = KERNELS[name]
    module = cudalab.compile(source)
    program = Program(module.ptx_module, DeviceMemory())
    row = build(program, program.function(kernel_name))
    os.environ["CUDALAB_TIER"] = "compiled"          # compiles before running: here, loads what build() saved
    kernel = module.get_kernel(kernel_name)
    best, ok = float("inf"), True
    for _ in range(4):                                # the first launch loads the native code
        host, grid, block, check = case(np.random.default_rng(1))
        args = [cudalab.to_device(a) if isinstance(a, np.ndarray) else a for a in host]
        start = time.process_time()
        kernel[grid, block](*args)
        best = min(best, time.process_time() - start)
        ok = ok and check([a.copy_to_host() if hasattr(a, "copy_to_host") else a for a in args])
    os.environ.pop("CUDALAB_TIER")
    return dict(row, launch=best, check="ok" if ok else "WRONG")


def ptx_kernel(path, kernel, index) -> dict:
    """Build the ``index``-th entry of the PTX file whose name holds ``kernel`` (in this process)."""
    from cudalab.emulator.engine import Program
    from cudalab.emulator.memory import DeviceMemory
    from cudalab.ptx import parse
    module = parse(Path(path).read_text())
    program = Program(module, DeviceMemory())
    names = [n for n, f in module.functions.items() if f.is_entry and kernel in n]
    return build(program, program.function(names[index]))


def _short(name) -> str:
    """A mangled kernel's own name (CUB's ``DeviceRadixSortOnesweepKernel``), else its first 40 characters."""
    found = re.findall(r"\d+(Device\w+?Kernel|\w+?Agent)", name)
    return found[0] if found else name[:40]


def _in_child(args) -> dict:
    """Run this file on one kernel in a new process with an empty cache; its row, or the reason it has none."""
    env = dict(os.environ, CUDALAB_CACHE=tempfile.mkdtemp(prefix="cudalab-cold-build-"),
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, __file__, "--child", *args], env=env, capture_output=True, text=True)
    for line in p.stdout.splitlines():
        if line.startswith("ROW "):
            return eval(line[4:])                       # noqa: S307  (our own child's repr of a dict)
    return dict(check=f"exit code {p.returncode}: {(p.stderr or p.stdout).strip().splitlines()[-1][-120:]}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", help="comma-separated kernel names: " + ",".join(KERNELS))
    p.add_argument("--ptx", help="a PTX file whose kernels are built (and not launched)")
    p.add_argument("--kernel", default="", help="with --ptx: the kernels whose names hold this")
    p.add_argument("--index", type=int, help="with --ptx: only the INDEX-th of those (from 0)")
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        row = own_kernel(a.child[0]) if a.child[0] in KERNELS else ptx_kernel(*a.child[:2], int(a.child[2]))
        print("ROW " + repr(row))
        return 0
    if a.ptx:
        from cudalab.ptx import parse
        module = parse(Path(a.ptx).read_text())
        names = [n for n, f in module.functions.items() if f.is_entry and a.kernel in n]
        jobs = [(f"{_short(n)} #{k}", [a.ptx, a.kernel, str(k)]) for k, n in enumerate(names) if a.index in (None, k)]
    else:
        jobs = [(n, [n]) for n in (a.only.split(",") if a.only else KERNELS)]
    head = ["kernel", "PTX insts", "IR MB", "plan s", "LLVM s", "build s", "launch s", "check"]
    rows = []
    for name, args in jobs:
        r = _in_child(args)
        rows.append([name, str(r.get("insts", "-")), f"{r['ir_mb']:.2f}" if "ir_mb" in r else "-",
                     *(f"{r[k]:.2f}" if k in r else "-" for k in ("plan", "llvm", "build", "launch")),
                     r.get("check", "ok" if r.get("native") else "no native code")])
        print(f"  {name}: done", file=sys.stderr, flush=True)
    if a.markdown:
        print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        widths = [max(len(h), *(len(r[k]) for r in rows)) for k, h in enumerate(head)]
        for r in [head] + rows:
            print("  ".join(x.ljust(w) for x, w in zip(r, widths)))
    one, five, _ = os.getloadavg()
    print(f"\nCPU seconds of one process per kernel, empty native-code cache; load average {one:.1f} (1 min), "
          f"{five:.1f} (5 min) on {os.cpu_count()} CPUs.")
    return 1 if any(r[-1] not in ("ok", "no native code") for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
