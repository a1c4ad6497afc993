"""LLVM's code generation levels on big modules: build seconds and launch seconds at opt=0, 1 and 2.

    python bench/build_levels.py                       # curand_loops matmul_unrolled cub_block_sort, levels 0 1 2
    python bench/build_levels.py curand_loops --levels 0,1,2,now
    CURAND_THREADS=65536 python bench/build_levels.py curand_loops --levels now --launches 3   # quick code, then better
    python bench/build_levels.py --program /tmp/thrust_ops -- 1048576 sort_by_key   # a whole program, cudalab run

The compiled tier optimizes a kernel's module once (``compiled._passes``) and then generates machine code
from it; a module over ``compiled.QUICK_IR_BYTES`` gets quick code first and better code later
(``compiled._machine_code``). Which level to build first is a trade of build time against launch time,
so this measures both for each level: every (kernel, level) runs in a process of its own with an empty
native cache (``CUDALAB_CACHE``), ``_machine_code`` made to build the module once at that level (``now``:
the tier as it is, quick code and all). Columns: the module's IR (MB), the passes' and the code generation's
CPU seconds, the first launch (with the build) and the best of the later ones (CPU and wall s), and the
output's hash (the same bytes at every level). A program (``--program``, built with cudalab's nvcc) runs
under ``cudalab run`` with ``CUDALAB_TIER=compiled``, its build cache kept; its row is the run's CPU and
wall seconds and every module its kernels built. Give the load average with the figures.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

# NVIDIA's curand_init as its header has it (cudalab's front replaces its skip-ahead loops with a native
# jump; -DCUDALAB_CURAND_LOOPS keeps the loops): the setup kernel of a Monte Carlo lesson
CURAND_SETUP = r"""
#include <curand_kernel.h>
extern "C" __global__ void setup(curandState *states, unsigned long long seed, int first, int n) {
    int id = first + blockIdx.x * blockDim.x + threadIdx.x;
    if (id < n) curand_init(seed, id, 0, &states[id - first]);
}
"""


def _curand_case(n=int(os.environ.get("CURAND_THREADS", 1024))):
    # the last n threads of a 2^20-thread grid: subsequences with as many base-4 digits as most of it
    states = np.zeros(n * 48, np.uint8)
    return [states, np.uint64(1234), np.int32((1 << 20) - n), np.int32(1 << 20)], (n // 256,), (256,)


def kernels():
    from cold_build import KERNELS
    cases = {name: (src, entry, (lambda case: lambda: case(np.random.default_rng(1))[:3])(case), ())
             for name, (src, entry, case) in KERNELS.items()}
    cases["curand_loops"] = (CURAND_SETUP, "setup", _curand_case, ("-DCUDALAB_CURAND_LOOPS",))
    return cases


BUILT: list = []        # the modules this process built: (IR MB, passes s, code generation s, level)


# a level's letters: LLVM options around its code generation (g: the greedy register allocator, which opt=0
# replaces with the fast one; f: fast instruction selection, which opt=0 uses and 1 and 2 do not)
OPTIONS = {"g": ("-regalloc=greedy", "-regalloc=default"), "f": ("-fast-isel=1", "-fast-isel=0")}


def force_level(level: str):
    """Make the compiled tier build every module once, at code generation level ``level`` ("0", "1",
    "2", with OPTIONS' letters after it: "0g")."""
    from cudalab.emulator import compiled

    def machine_code(j, text, gangs):
        t0 = time.process_time()
        mod, _tm = compiled._passes(j, text, gangs)
        t1 = time.process_time()
        llvm = j["llvm"]
        for letter in level[1:]:
            llvm.set_option("", OPTIONS[letter][0])
        obj = j["machine"](int(level[0])).emit_object(mod)
        for letter in level[1:]:
            llvm.set_option("", OPTIONS[letter][1])
        BUILT.append((len(text) / 1e6, t1 - t0, time.process_time() - t1, level))
        log = os.environ.get("BUILD_LEVELS_LOG")
        if log:
            with open(log, "a") as f:
                f.write(json.dumps(BUILT[-1]) + "\n")
        return obj, None, None
    compiled._machine_code = machine_code


def note_quick():
    """Record the modules the tier as it is builds (``now``): the quick or usual code's time."""
    from cudalab.emulator import compiled
    real = compiled._machine_code

    def machine_code(j, text, gangs):
        t0 = time.process_time()
        out = real(j, text, gangs)
        BUILT.append((len(text) / 1e6, 0.0, time.process_time() - t0, "now" if out[2] is None else f"quick->{out[2]['opt']}"))
        return out
    compiled._machine_code = machine_code


def child(name: str, level: str, launches: int):
    import cudalab
    if level == "now":
        note_quick()
    else:
        force_level(level)
    source, entry, case, flags = kernels()[name]
    kernel = cudalab.compile(source, flags).get_kernel(entry)
    host, grid, block = case()
    args = [cudalab.to_device(a) if isinstance(a, np.ndarray) else a for a in host]
    times, digests = [], set()
    for _ in range(launches):
        w0, c0 = time.perf_counter(), time.process_time()
        kernel[grid, block](*args)
        times.append((time.process_time() - c0, time.perf_counter() - w0))
        digests.add(hashlib.sha1(b"".join(a.copy_to_host().tobytes() for a in args if hasattr(a, "copy_to_host")))
                    .hexdigest()[:12])
    later = min(times[1:]) if launches > 1 else (float("nan"),) * 2
    built = BUILT or [(float("nan"),) * 4]
    print(json.dumps(dict(kernel=name, level=level, ir_mb=sum(b[0] for b in built), passes=sum(b[1] for b in built),
                          codegen=sum(b[2] for b in built), first=times[0], later=later,
                          later_all=[round(t[0], 4) for t in times[1:]], out=sorted(digests),
                          load=os.getloadavg()[0])), flush=True)


def program_run(path: str, level: str, argv: list, cache: str) -> dict:
    """One ``cudalab run`` of the built program ``path`` at ``level``, with an empty native cache."""
    with tempfile.TemporaryDirectory() as tmp:
        shutil.rmtree(Path(cache) / "native", ignore_errors=True)
        (Path(tmp) / "sitecustomize.py").write_text(
            "import os, sys\nif os.environ.get('BUILD_LEVEL') not in (None, 'now'):\n"
            f"    sys.path.insert(0, {str(HERE)!r})\n    import build_levels\n"
            "    build_levels.force_level(os.environ['BUILD_LEVEL'])\n")
        log = Path(tmp) / "built.jsonl"
        env = dict(os.environ, CUDALAB_CACHE=cache, CUDALAB_TIER="compiled", BUILD_LEVEL=level,
                   BUILD_LEVELS_LOG=str(log), PYTHONPATH=os.pathsep.join([tmp, str(ROOT)]))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        w0 = time.perf_counter()
        p = subprocess.run([sys.executable, "-m", "cudalab.cli", "run", path, "--", *argv], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        wall = time.perf_counter() - w0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        built = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        return dict(program=Path(path).name, level=level, cpu=after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
                    wall=wall, rc=p.returncode, tail=p.stdout.strip().splitlines()[-1:] if p.stdout else [],
                    modules=[[round(x, 2) if isinstance(x, float) else x for x in b] for b in built],
                    load=os.getloadavg()[0])


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", default=["curand_loops", "matmul_unrolled", "cub_block_sort"])
    ap.add_argument("--levels", default="0,1,2")
    ap.add_argument("--launches", type=int, default=4)
    ap.add_argument("--program")
    ap.add_argument("--cache", help="the program's build cache (CUDALAB_CACHE); its native/ is emptied each run")
    ap.add_argument("--child", nargs=2)
    a, rest = ap.parse_known_args(argv)
    if a.child:
        return child(a.child[0], a.child[1], a.launches)
    if a.program:
        for level in a.levels.split(","):
            print(json.dumps(program_run(a.program, level, [x for x in rest if x != "--"],
                                         a.cache or os.environ.get("CUDALAB_CACHE", ""))), flush=True)
        return
    for name in a.names:
        for level in a.levels.split(","):
            with tempfile.TemporaryDirectory() as cache:
                env = dict(os.environ, CUDALAB_CACHE=cache, CUDALAB_TIER="compiled",
                           PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
                subprocess.run([sys.executable, __file__, "--child", name, level, "--launches", str(a.launches)],
                               env=env, check=False)


if __name__ == "__main__":
    main(sys.argv[1:])
