"""Run generated programs on the emulator or a real GPU and compare them bit for bit.

The GPU machine has no NVRTC as new as this machine's, so the work is split in steps that all use
the same PTX:

    python -m tests.fuzz.run compile --first 0 --count 5000 --dir .fuzz --no-fmad   # here: NVRTC -> PTX
    python tools/fuzz_gpu.py .fuzz OUT                                      # on the GPU machine
    python -m tests.fuzz.run emu --dir .fuzz --jobs 8                       # the same PTX, emulated
    python -m tests.fuzz.run compare --dir .fuzz --gpu 'OUT/gpu_*.npz' --report cmp.json
    python -m tests.fuzz.run found-ptx --dir .fuzz   # found_v2.py's cases (--version 1: found.py's),
                                                     # for fuzz_gpu.py --found
    python -m tests.fuzz.run recheck [SEEDS] --version 2   # the programs that differed, against their
                                                     # recorded GPU outputs (differing_gpu_v2.npz; 1: v1's)

``--version`` picks the generator version (generator.VERSIONS; 2 by default, compute_90 on the
emulator's H100 profile); each batch records its version and options.

Programs are compiled ``BATCH`` to a module (one NVRTC call, one PTX module loaded on the GPU).
``.fuzz/`` (git-ignored) holds ``batch_XXXXXX.json.gz`` ({"ptx", "seeds", "kernels", "grid",
"block", "shared", "features"}) and ``emu_XXXXXX.npz``; the GPU writes ``gpu_*.npz``. Each npz maps
``s<seed>_oi``, ``_of`` (float bits as uint32), ``_acc`` to arrays, or ``s<seed>_err`` to an error.
Inputs are not stored: ``generate(seed).make_args()`` makes the same ones everywhere.
"""
from __future__ import annotations

import argparse
import glob
import gzip
import json
import os
import sys
import time

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    from tests.fuzz.generator import DEVICE, VERSION, batch_source, generate  # noqa: E402
else:
    from .generator import DEVICE, VERSION, batch_source, generate

BATCH = 50
OPTIONS = ("-w",)     # no warnings (unused shared arrays, pointless comparisons); the 2026-11-23 run
# NVRTC's default (--fmad=true) leaves some mul.f32/add.f32/sub.f32 without a rounding modifier, which
# ptxas may fuse into an fma on the GPU (PTX ISA: "may be optimized aggressively"); --fmad=false makes
# them mul.rn/add.rn, which it may not. `compile --no-fmad` uses it (see docs/fuzz_report.md).
NO_FMAD = ("--fmad=false",)
OUTPUTS = ("oi", "of", "acc")


# ------------------------------------------------------------------ compile (here)

def compile_batch(seeds, extra=(), version=VERSION) -> dict:
    from cudalab.frontend.nvrtc import compile_to_ptx
    progs = [generate(s, version=version) for s in seeds]
    options = OPTIONS + progs[0].options + tuple(extra)
    cs = compile_to_ptx(batch_source(progs), options)
    return {"ptx": cs.ptx, "seeds": list(seeds), "version": version, "options": list(options),
            "kernels": [p.kernel for p in progs],
            "grid": [list(p.grid) for p in progs], "block": [list(p.block) for p in progs],
            "shared": [p.shared for p in progs], "features": [sorted(p.features) for p in progs]}


def cmd_compile(first, count, folder, batch=BATCH, extra=(), version=VERSION):
    os.makedirs(folder, exist_ok=True)
    t0 = time.time()
    for b0 in range(first, first + count, batch):
        path = os.path.join(folder, f"batch_{b0:06d}.json.gz")
        if os.path.exists(path):
            continue
        seeds = list(range(b0, min(b0 + batch, first + count)))
        data = compile_batch(seeds, extra, version)
        with gzip.open(path + ".tmp", "wt") as f:
            json.dump(data, f)
        os.replace(path + ".tmp", path)
        print(f"compiled {path} ({len(seeds)} programs, {time.time() - t0:.0f}s)", flush=True)


def batches(folder):
    for path in sorted(glob.glob(os.path.join(folder, "batch_*.json.gz"))):
        with gzip.open(path, "rt") as f:
            yield path, json.load(f)


# ------------------------------------------------------------------ run on a backend

def launch_emu(module, prog, args):
    """Run one program on the emulator; returns {name: array} of its outputs."""
    kernel = module.get_kernel(prog.kernel)
    ia, fa, oi, of, acc, p0, p1 = args
    kernel.launch(prog.grid, prog.block, (ia, fa, oi, of, acc, p0, p1), shared=prog.shared)
    return {"oi": oi, "of": of.view(np.uint32), "acc": acc}


def emu_module(ptx: str, names):
    """A cudalab Module over this exact PTX (no recompilation)."""
    from cudalab.frontend.nvrtc import CompiledSource
    from cudalab.runtime.module import Module
    cs = CompiledSource("", ptx, (), "", {n: n for n in names})
    return Module(cs, name="fuzz")


def on_profile(version):
    """A context manager: the emulator's device profile is the one the version's PTX targets."""
    import contextlib

    from cudalab.device import current, set_device

    @contextlib.contextmanager
    def scope():
        before = current()
        set_device(DEVICE[version])
        try:
            yield
        finally:
            set_device(before)
    return scope()


def run_emu_batch(data, only=None) -> dict:
    version = data.get("version", 1)        # batches written before versions existed are version 1
    out = {}
    with on_profile(version):
        mod = emu_module(data["ptx"], data["kernels"])
        for seed in data["seeds"]:
            if only is not None and seed not in only:
                continue
            prog = generate(seed, version=version)
            try:
                res = launch_emu(mod, prog, prog.make_args())
                for k, v in res.items():
                    out[f"s{seed}_{k}"] = np.array(v, np.uint32)
            except Exception as e:   # noqa: BLE001 - any failure is a finding
                out[f"s{seed}_err"] = np.array(f"{type(e).__name__}: {e}")
    return out


def _emu_one(args):
    path, dst, watchdog = args
    from cudalab.runtime import device as devices
    devices.WATCHDOG_SECONDS = watchdog   # a few programs loop a lot; a slow emulator is no finding here
    with gzip.open(path, "rt") as f:
        data = json.load(f)
    tb = time.time()
    out = run_emu_batch(data)
    np.savez_compressed(dst + ".tmp.npz", **out)
    os.replace(dst + ".tmp.npz", dst)
    return dst, len(data["seeds"]), time.time() - tb


def cmd_emu(folder, out=None, jobs=1, deadline=None, watchdog=600.0):
    """Emulate every batch in ``folder`` not done yet; ``jobs`` processes; stop after ``deadline`` s."""
    out = out or folder
    os.makedirs(out, exist_ok=True)
    t0 = time.time()
    todo = []
    for path in sorted(glob.glob(os.path.join(folder, "batch_*.json.gz"))):
        dst = os.path.join(out, os.path.basename(path).replace("batch_", "emu_").replace(".json.gz", ".npz"))
        if not os.path.exists(dst):
            todo.append((path, dst, watchdog))
    n = 0

    def report(res):
        nonlocal n
        dst, count, dt = res
        n += count
        print(f"emulated {dst}: {count} programs in {dt:.1f}s (total {n}, {time.time() - t0:.0f}s)", flush=True)

    if jobs <= 1:
        for t in todo:
            report(_emu_one(t))
            if deadline and time.time() - t0 > deadline:
                break
        return
    import multiprocessing as mp
    pool = mp.Pool(jobs)
    pending = [pool.apply_async(_emu_one, (t,)) for t in todo]
    while pending:
        time.sleep(0.5)
        for r in [r for r in pending if r.ready()]:
            pending.remove(r)
            try:
                report(r.get())
            except Exception as e:   # noqa: BLE001
                print(f"a batch failed: {type(e).__name__}: {e}", flush=True)
        if deadline and time.time() - t0 > deadline:
            print(f"deadline: {len(pending)} batches not emulated", flush=True)
            break
    pool.terminate()


# ------------------------------------------------------------------ compare

def load_results(pattern) -> dict:
    res = {}
    for path in sorted(glob.glob(pattern)):
        with np.load(path) as z:
            for k in z.files:
                res[k] = z[k]
    return res


def compare(emu: dict, gpu: dict, seeds) -> dict:
    """{seed: list of (output, index, emu value, gpu value) or an error string} for the mismatches."""
    bad = {}
    for s in seeds:
        ge, ee = gpu.get(f"s{s}_err"), emu.get(f"s{s}_err")
        if ge is not None or ee is not None:
            if f"s{s}_oi" not in gpu and ge is None:
                continue     # not run on the GPU
            bad[s] = f"gpu: {ge}; emu: {ee}"
            continue
        if f"s{s}_oi" not in gpu or f"s{s}_oi" not in emu:
            continue
        diffs = []
        for k in OUTPUTS:
            a, b = emu[f"s{s}_{k}"], gpu[f"s{s}_{k}"]
            for i in np.flatnonzero(a != b)[:8]:
                diffs.append((k, int(i), int(a[i]), int(b[i])))
        if diffs:
            bad[s] = diffs
    return bad


def cmd_compare(folder, gpu_pattern, report=None):
    emu = load_results(os.path.join(folder, "emu_*.npz"))
    gpu = load_results(gpu_pattern)
    seeds = sorted({int(k[1:].split("_")[0]) for k in gpu})
    ran = [s for s in seeds if f"s{s}_oi" in emu or f"s{s}_err" in emu]
    bad = compare(emu, gpu, ran)
    print(f"{len(ran)} programs on both backends, {len(bad)} differ")
    for s, d in sorted(bad.items())[:40]:
        print(f"  seed {s}: {d if isinstance(d, str) else d[:4]}")
    if report:
        emu_err = {s: str(emu[f"s{s}_err"]) for s in ran if f"s{s}_err" in emu}
        with open(report, "w") as f:
            json.dump({"compared": len(ran), "mismatches": {str(s): d for s, d in bad.items()},
                       "emu_errors": emu_err}, f, indent=1)
        np.savez_compressed(report.replace(".json", "_emu.npz"),
                            **{k: v for k, v in emu.items() if int(k[1:].split("_")[0]) in bad})
    return bad


def found_ptx(path, module="found"):
    """Compile the cases of tests/fuzz/found.py (or found_v2.py) here, for tools/fuzz_gpu.py --found."""
    import importlib

    from cudalab.frontend.nvrtc import compile_to_ptx
    CASES = importlib.import_module(f"tests.fuzz.{module}").CASES
    saved = {}
    for c in CASES:
        cs = compile_to_ptx(c["src"], tuple(c.get("options", ())), name_expressions=(c["kernel"],))
        saved[c["name"]] = {"ptx": cs.ptx, "kernel": cs.lowered.get(c["kernel"], c["kernel"])}
    with open(path, "w") as f:
        json.dump(saved, f)
    print(f"wrote PTX of {len(saved)} found cases to {path}")


# the GPU outputs of the programs that differed in each big run: (file, generator version, extra options)
DIFFERING = {1: ("differing_gpu.npz", ()),            # 2026-11-23, NVRTC's default --fmad=true
             2: ("differing_gpu_v2.npz", NO_FMAD),    # 2026-11-26, --fmad=false
             3: ("differing_gpu_v3.npz", NO_FMAD),    # 2026-11-26, later (an H200; seeds from 1000: an H100)
             4: ("differing_gpu_v4.npz", NO_FMAD)}    # 2026-11-26, fuzz5 (an H100, PTX from its NVRTC)


def recheck(seeds=None, path=None, version=1):
    """Emulate the programs whose GPU outputs are in tests/fuzz/differing_gpu*.npz (the programs that
    differed in a big run: version 1's of 2026-11-23, version 2's of 2026-11-26) and say which still
    differ. The programs are compiled ``BATCH`` to a module, as the run compiled them, with the
    options of their run (one NVRTC call per batch: the headers dominate a single program's time)."""
    name, extra = DIFFERING[version]
    path = path or os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
    gpu = load_results(path)
    todo = sorted({int(k[1:].split("_")[0]) for k in gpu})
    if seeds:
        todo = [s for s in todo if s in set(seeds)]
    still = []
    for b0 in range(0, len(todo), BATCH):
        data = compile_batch(todo[b0:b0 + BATCH], extra, version)
        emu = run_emu_batch(data)
        for s in data["seeds"]:
            bad = compare(emu, gpu, [s])
            print(f"seed {s}: {'differs ' + str(bad[s] if isinstance(bad[s], str) else bad[s][:3]) if bad else 'matches'}",
                  flush=True)
            if bad:
                still.append(s)
    print(f"{len(todo) - len(still)} of {len(todo)} now match the GPU")
    return still


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cmd", choices=["compile", "emu", "compare", "found-ptx", "recheck"])
    ap.add_argument("seeds", nargs="*", type=int, help="recheck: only these seeds")
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--dir", default=".fuzz")
    ap.add_argument("--gpu", default=None, help="glob of the GPU's npz files")
    ap.add_argument("--out", default=None, help="emu: where emu_*.npz go (default: --dir)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--deadline", type=float, default=None)
    ap.add_argument("--watchdog", type=float, default=600.0)
    ap.add_argument("--report", default=None, help="compare: write the mismatches to this JSON file")
    ap.add_argument("--no-fmad", action="store_true", help="compile: --fmad=false (no contraction by ptxas)")
    ap.add_argument("--version", type=int, default=VERSION,
                    help="compile: the generator version (1 or 2); recheck: which run's differing programs")
    o = ap.parse_args(argv)
    if o.cmd == "compile":
        cmd_compile(o.first, o.count, o.dir, extra=NO_FMAD if o.no_fmad else (), version=o.version)
    elif o.cmd == "recheck":
        recheck(o.seeds, o.gpu, o.version if o.version in DIFFERING else 1)
    elif o.cmd == "found-ptx":
        found_ptx(os.path.join(o.dir, "found_ptx.json" if o.version == 1 else "found_v2_ptx.json"),
                  "found" if o.version == 1 else "found_v2")
    elif o.cmd == "emu":
        cmd_emu(o.dir, o.out, o.jobs, o.deadline, o.watchdog)
    else:
        cmd_compare(o.dir, o.gpu or os.path.join(o.dir, "gpu", "gpu_*.npz"), o.report)


if __name__ == "__main__":
    main()
