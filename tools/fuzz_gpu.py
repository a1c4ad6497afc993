"""Run the fuzz programs' saved PTX on a real GPU through cudalab's GPU backend (cuda.core).

usage: python tools/fuzz_gpu.py DIR OUT [--workers N] [--files K] [--repeat-below SEED] [--deadline S]
       python tools/fuzz_gpu.py --found FOUND_PTX.json OUT.npz [found_v2]   (tests/fuzz/found*.py's cases)

DIR holds ``batch_*.json.gz`` written by ``python -m tests.fuzz.run compile`` (PTX made by this
project's NVRTC, so that the GPU runs exactly the PTX the emulator runs; the backend lowers only the
``.version`` line). Each batch is one PTX module: loaded once (the driver JIT-compiles it), then each
program's kernel is launched on the inputs ``tests/fuzz/generator.py`` makes for its seed.

Writes ``OUT/gpu_K.npz`` (at most K files; ``s<seed>_oi``, ``_of`` as uint32 bits, ``_acc``, or
``s<seed>_err``) and ``OUT/gpu_summary.json``. Batches are shared among N worker processes; a worker
whose CUDA context is broken by a faulting kernel (sticky error) records the error and a fresh worker
goes on after that program. ``FUZZ_ONLY=4862,426`` runs just those seeds (with ``--worker``, under
compute-sanitizer for instance: ``compute-sanitizer python tools/fuzz_gpu.py --worker TMP -1 0 BATCH``).
"""
from __future__ import annotations

import glob
import gzip
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.append(ROOT)          # after PYTHONPATH: a pinned cudalab copy there wins


def worker(paths, tmp, skip_before, repeat_below=0):
    """Run the batches in ``paths``; the first from seed ``skip_before`` on. Exit 3 after a sticky error.

    Programs with a seed below ``repeat_below`` run twice; a difference is recorded as ``s<seed>_nondet``
    (a well-defined program gives the same bits every time)."""
    from cudalab.errors import KernelError
    from cudalab.gpu.backend import GpuBuffer, GpuModule
    from tests.fuzz.generator import generate
    only = {int(x) for x in os.environ.get("FUZZ_ONLY", "").split(",") if x}   # just these seeds
    for path in paths:
        with gzip.open(path, "rt") as f:
            data = json.load(f)
        name = os.path.basename(path).replace("batch_", "gpu_").replace(".json.gz", "")
        out, t0 = {}, time.time()
        try:
            mod = GpuModule(data["ptx"])
        except Exception as e:   # noqa: BLE001
            for s in data["seeds"]:
                out[f"s{s}_err"] = np.array(f"load: {type(e).__name__}: {e}")
            mod = None
        tl = time.time() - t0
        sticky = None
        if mod is not None:
            for i, seed in enumerate(data["seeds"]):
                if seed < skip_before or (only and seed not in only):
                    continue
                prog = generate(seed, version=data.get("version", 1))
                ia, fa, oi, of, acc, p0, p1 = prog.make_args()
                try:
                    for rep in range(2 if seed < repeat_below else 1):
                        bufs = [GpuBuffer.from_host(a) for a in (ia, fa, oi, of, acc)]
                        mod.launch(data["kernels"][i], tuple(data["grid"][i]), tuple(data["block"][i]),
                                   data["shared"][i], tuple(bufs) + (p0, p1))
                        got = {}
                        for k, b in (("oi", bufs[2]), ("of", bufs[3]), ("acc", bufs[4])):
                            got[k] = b.copy_to_host(np.empty(b.nbytes // 4, np.uint32))
                        if rep == 0:
                            for k, v in got.items():
                                out[f"s{seed}_{k}"] = v
                        elif any(not np.array_equal(v, out[f"s{seed}_{k}"]) for k, v in got.items()):
                            out[f"s{seed}_nondet"] = np.array(1)
                except KernelError as e:
                    out[f"s{seed}_err"] = np.array(f"{type(e).__name__}: {e}")
                    sticky = seed
                    break
                except Exception as e:   # noqa: BLE001
                    out[f"s{seed}_err"] = np.array(f"{type(e).__name__}: {e}")
        part = os.path.join(tmp, f"{name}_{skip_before}.npz")
        np.savez(part, **out)
        print(f"{name}: load {tl:.2f}s, {len(out)} arrays, {time.time() - t0:.2f}s", flush=True)
        if sticky is not None:
            with open(os.path.join(tmp, f"sticky_{os.getpid()}"), "w") as f:
                f.write(json.dumps({"path": path, "seed": sticky}))
            sys.exit(3)
        skip_before = -1


def run_found(ptx_json, out_file, module="found"):
    """Run the cases of tests/fuzz/found.py (or ``module``, e.g. found_v2) from their saved PTX; save
    every array argument afterwards."""
    import importlib

    from cudalab.gpu.backend import GpuBuffer, GpuModule
    CASES = importlib.import_module(f"tests.fuzz.{module}").CASES
    with open(ptx_json) as f:
        saved = json.load(f)
    out = {}
    for case in CASES:
        if case["name"] not in saved:
            continue
        c = saved[case["name"]]
        try:
            mod = GpuModule(c["ptx"])
            args = case["make"]()
            dev = [GpuBuffer.from_host(a) if isinstance(a, np.ndarray) else a for a in args]
            mod.launch(c["kernel"], tuple(case["grid"]) if not isinstance(case["grid"], int) else case["grid"],
                       case["block"], case.get("shared", 0), dev)
            for i, (a, d) in enumerate(zip(args, dev)):
                if isinstance(a, np.ndarray):
                    out[f"{case['name']}/arg{i}"] = d.copy_to_host(np.empty_like(a))
            print(f"{case['name']}: ran", flush=True)
        except Exception as e:   # noqa: BLE001
            print(f"{case['name']}: {type(e).__name__}: {e}", flush=True)
    np.savez(out_file, **out)


def main(argv):
    if argv and argv[0] == "--found":     # --found PTX_JSON OUT.npz [MODULE]
        run_found(argv[1], argv[2], *argv[3:4])
        return 0
    if argv and argv[0] == "--worker":
        tmp, skip, repeat = argv[1], int(argv[2]), int(argv[3])
        worker(argv[4:], tmp, skip, repeat)
        return 0
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("out")
    ap.add_argument("--workers", type=int, default=6)
    ap.add_argument("--files", type=int, default=6)
    ap.add_argument("--deadline", type=float, default=480, help="seconds; then stop and keep what ran")
    ap.add_argument("--repeat-below", type=int, default=0, help="run programs with smaller seeds twice")
    o = ap.parse_args(argv)
    t0 = time.time()
    paths = sorted(glob.glob(os.path.join(o.dir, "batch_*.json.gz")))
    tmp = os.path.join("/tmp", "fuzz_gpu_parts")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    queues = [paths[i::o.workers] for i in range(o.workers)]
    running = {}
    log = []

    def start(queue, skip):
        if queue:
            p = subprocess.Popen([sys.executable, __file__, "--worker", tmp, str(skip), str(o.repeat_below)] + queue)
            running[p] = queue

    for q in queues:
        start(q, -1)
    while running:
        time.sleep(0.2)
        if time.time() - t0 > o.deadline:
            for p in running:
                p.kill()
            log.append({"deadline": o.deadline, "stopped_workers": len(running)})
            break
        for p in list(running):
            if p.poll() is None:
                continue
            queue = running.pop(p)
            if p.returncode == 3:        # a sticky error: go on after that program
                with open(os.path.join(tmp, f"sticky_{p.pid}")) as f:
                    st = json.load(f)
                log.append(st)
                rest = queue[queue.index(st["path"]):]
                start(rest, st["seed"] + 1)
            elif p.returncode != 0:
                log.append({"worker_failed": p.returncode, "queue": queue})
    # merge into at most o.files files
    parts = sorted(glob.glob(os.path.join(tmp, "gpu_*.npz")))
    merged, errors, programs = {}, 0, 0
    for part in parts:
        with np.load(part) as z:
            for k in z.files:
                merged[k] = z[k]
    keys = sorted(merged)
    seeds = sorted({int(k[1:].split("_")[0]) for k in keys})
    programs = sum(1 for s in seeds if f"s{s}_oi" in merged)
    errors = sum(1 for s in seeds if f"s{s}_err" in merged)
    os.makedirs(o.out, exist_ok=True)
    chunk = -(-len(seeds) // o.files) if seeds else 1
    for i in range(0, len(seeds), chunk):
        group = set(seeds[i:i + chunk])
        np.savez_compressed(os.path.join(o.out, f"gpu_{i // chunk}.npz"),
                            **{k: merged[k] for k in keys if int(k[1:].split("_")[0]) in group})
    from cudalab.gpu.backend import device_info
    info = device_info()
    nondet = [s for s in seeds if f"s{s}_nondet" in merged]
    summary = {"nondeterministic": nondet, "device": info.name, "arch": info.arch, "driver": list(info.driver_version),
               "programs_ok": programs, "programs_failed": errors, "batches": len(paths),
               "seconds": round(time.time() - t0, 1), "log": log,
               "errors": {str(s): str(merged[f"s{s}_err"]) for s in seeds if f"s{s}_err" in merged}}
    with open(os.path.join(o.out, "gpu_summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(json.dumps({k: v for k, v in summary.items() if k != "errors"}), flush=True)
    print(f"{errors} errors; first: {list(summary['errors'].items())[:5]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
