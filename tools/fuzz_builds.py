"""Run version-2 fuzz programs on a GPU built four ways, to tell the emulator's differences from ptxas's.

A program that differs between the emulator and a GPU may be the emulator's fault, or ptxas's (the
driver's JIT optimizes the PTX the emulator runs as written; docs/fuzz_report.md, causes 16-21).
This builds each program's module here as: the PTX (driver JIT, as the fuzz run did), that PTX with
ptxas's known folds written in (tools/fuzz_locate.py's FOLDS), and cubins from this machine's ptxas
at -O0 and -O3; on the GPU all four run on the program's inputs, and ``compare`` says which build
gives the emulator's bits.

    python tools/fuzz_builds.py make DIR SEED...     # here: DIR/builds.json.gz (+ cubins inside)
    python tools/fuzz_builds.py gpu DIR OUT.npz      # on the GPU machine (CuPy)
    python tools/fuzz_builds.py compare DIR OUT.npz  # here: each build against the emulator
    python tools/fuzz_builds.py o0 FUZZDIR OUT.npz SEED...   # on the GPU machine: a fuzz run's own
                                                     # batches (tests/fuzz/run.py compile) through
                                                     # ptxas -O0 there, the given programs run again
"""
from __future__ import annotations

import base64
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

BUILDS = ("jit", "folded", "O0", "O3")


def cubin(ptx, opt):
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "m.ptx"), os.path.join(tmp, "m.cubin")
        with open(src, "w") as f:
            f.write(re.sub(r"(?m)^\.version\s+\S+", ".version 9.0", ptx))
        subprocess.run(["ptxas", "-arch=sm_90", f"-O{opt}", src, "-o", dst], check=True)
        with open(dst, "rb") as f:
            return base64.b64encode(f.read()).decode()


def cmd_make(folder, seeds):
    from tests.fuzz.run import DIFFERING, compile_batch
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    from fuzz_locate import FOLDS
    data = compile_batch(seeds, DIFFERING[2][1], 2)
    parts = re.split(r"(?m)^(?=(?:\.visible\s+|\.weak\s+)?\.(?:entry|func)\b)", data["ptx"])
    for fold in FOLDS.values():
        parts = [fold(p) for p in parts]
    data["folded"] = "".join(parts)
    data["O0"], data["O3"] = cubin(data["ptx"], 0), cubin(data["ptx"], 3)
    os.makedirs(folder, exist_ok=True)
    with gzip.open(os.path.join(folder, "builds.json.gz"), "wt") as f:
        json.dump(data, f)


def load(folder):
    with gzip.open(os.path.join(folder, "builds.json.gz"), "rt") as f:
        return json.load(f)


def cmd_gpu(folder, out):
    import cupy as cp
    from tests.fuzz.generator import generate
    data = load(folder)
    res = {}
    with tempfile.TemporaryDirectory() as tmp:
        for build in BUILDS:
            if build in ("jit", "folded"):
                path = os.path.join(tmp, f"{build}.ptx")
                with open(path, "w") as f:
                    f.write(re.sub(r"(?m)^\.version\s+\S+", ".version 9.0", data["ptx" if build == "jit" else build]))
            else:
                path = os.path.join(tmp, f"{build}.cubin")
                with open(path, "wb") as f:
                    f.write(base64.b64decode(data[build]))
            mod = cp.RawModule(path=path)
            for i, seed in enumerate(data["seeds"]):
                prog = generate(seed, version=data["version"])
                ia, fa, oi, of, acc, p0, p1 = prog.make_args()
                bufs = [cp.asarray(a) for a in (ia, fa, oi, of, acc)]
                mod.get_function(data["kernels"][i])(tuple(data["grid"][i]), tuple(data["block"][i]),
                                                     tuple(bufs) + (p0, p1), shared_mem=data["shared"][i])
                cp.cuda.Device().synchronize()
                for k, b in zip(("oi", "of", "acc"), bufs[2:]):
                    res[f"{build}_s{seed}_{k}"] = cp.asnumpy(b).view(np.uint32)
    np.savez_compressed(out, **res)


def cmd_compare(folder, gpu_path):
    from tests.fuzz.run import run_emu_batch
    data = load(folder)
    emu = run_emu_batch(data)
    gpu = np.load(gpu_path)
    for seed in data["seeds"]:
        line = []
        for build in BUILDS:
            diff = sum(int((gpu[f"{build}_s{seed}_{k}"] != emu[f"s{seed}_{k}"]).sum()) for k in ("oi", "of", "acc"))
            line.append(f"{build}: {'emulator bits' if diff == 0 else f'{diff} words differ'}")
        print(f"seed {seed}: " + "; ".join(line))


def cmd_o0(folder, out, seeds):
    """Run ``seeds`` of a compiled fuzz folder from cubins that ptxas -O0 made of their batches' PTX
    (on the GPU machine: its ptxas; no NVRTC needed). Writes ``s<seed>_<oi|of|acc>`` like fuzz_gpu.py."""
    import cupy as cp
    from tests.fuzz.generator import generate
    from tests.fuzz.run import batches
    res, want = {}, set(seeds)
    for _, data in batches(folder):
        todo = [i for i, s in enumerate(data["seeds"]) if s in want]
        if not todo:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "m.cubin")
            with open(path, "wb") as f:
                f.write(base64.b64decode(cubin(data["ptx"], 0)))
            mod = cp.RawModule(path=path)
            for i in todo:
                seed = data["seeds"][i]
                prog = generate(seed, version=data["version"])
                ia, fa, oi, of, acc, p0, p1 = prog.make_args()
                bufs = [cp.asarray(a) for a in (ia, fa, oi, of, acc)]
                try:
                    mod.get_function(data["kernels"][i])(tuple(data["grid"][i]), tuple(data["block"][i]),
                                                         tuple(bufs) + (p0, p1), shared_mem=data["shared"][i])
                    cp.cuda.Device().synchronize()
                except Exception as e:       # noqa: BLE001 - a fault is a finding; later programs may not run
                    res[f"s{seed}_err"] = np.array(f"{type(e).__name__}: {e}")
                    continue
                for k, b in zip(("oi", "of", "acc"), bufs[2:]):
                    res[f"s{seed}_{k}"] = cp.asnumpy(b).view(np.uint32)
    np.savez_compressed(out, **res)


if __name__ == "__main__":
    cmd, folder, *rest = sys.argv[1:]
    if cmd == "make":
        cmd_make(folder, [int(s) for s in rest])
    elif cmd == "gpu":
        cmd_gpu(folder, rest[0])
    elif cmd == "o0":
        cmd_o0(folder, rest[0], [int(x) for x in rest[1:]])
    else:
        cmd_compare(folder, rest[0])
