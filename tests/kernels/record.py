"""Run every corpus case on a real NVIDIA GPU through CuPy and save inputs and outputs: the oracle.

usage: python tests/kernels/record.py OUTDIR [group ...]
Writes OUTDIR/<group>.npz and OUTDIR/provenance.json (GPU, driver, CUDA and NVRTC versions, and
the cases left out, with why). Each case runs twice on fresh copies of its inputs; a case whose two
runs differ is left out as nondeterministic, as is one that fails to compile, faults or hangs.
Each group runs in a child process, so a case that faults (which kills the CUDA context) or hangs
costs only itself: the child is restarted after it. CuPy's default -ftz=true is taken out, so the
GPU runs the PTX that cudalab gets from the same C++ (denormals kept); a probe checks it first.

npz layout, per case: "<name>/in<k>" for every argument k (numpy scalars as 0-d arrays),
"<name>/out<k>" for every array argument after the launch, "<name>/sha" = case_sha(case).
A texture or surface argument (kernels.TexArg) is made on the GPU with cudalab's own texture API
(cudalab.gpu.textures, CUDA's runtime through cuda.bindings): "<name>/in<k>" holds its texels,
"<name>/tex<k>" how it was made (TexArg.spec()), and "<name>/out<k>" a surface's contents after
the launch.
"""
import ctypes
import hashlib
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np

if __package__ in (None, ""):                  # run as a script: make `kernels` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from kernels import GROUPS, TexArg, cases
else:
    from . import GROUPS, TexArg, cases

CASE_TIMEOUT_S = int(os.environ.get("CASE_TIMEOUT_S", 60))    # one case (compile + two launches) taking longer is taken for a hang


def case_sha(case):
    """Fingerprint of what a recording depends on; a recording with another sha is stale."""
    key = (case["src"], case["kernel"], case["grid"], case["block"], case["shared"])
    arch = f"-arch={case['arch']}" if case.get("arch") else None     # arch= cases were recorded without it
    options = tuple(o for o in case.get("options") or () if o != arch)
    if options or case.get("cluster"):          # only newer cases have them: old shas stay
        key += (options, case.get("cluster"))
    return hashlib.sha1(repr(key).encode()).hexdigest()


def as3(v):
    v = (v,) if isinstance(v, int) else tuple(v)
    return v + (1,) * (3 - len(v))


def _struct_as_array(a):
    """A struct passed by value, as CuPy's custom-struct examples do: a one-element host array."""
    return np.frombuffer(a.tobytes(), a.dtype)


def _struct_as_pointer(a, keep):
    """Fallback for CuPy versions that take no host arrays: a CPointer to the struct's bytes."""
    from cupy.cuda.function import CPointer
    keep.append(ctypes.create_string_buffer(a.tobytes(), a.dtype.itemsize))
    return CPointer(ctypes.addressof(keep[-1]))


NVRTC_OPTIONS = []   # what CuPy last handed NVRTC, for provenance.json


def compile_like_cudalab():
    """Undo CuPy's unconditional -ftz=true (cupy/cuda/compiler.py, _compile_with_cache_cuda).

    cudalab compiles with NVRTC's default, -ftz=false: float32 denormals are kept. With CuPy's flag
    the GPU would run other PTX (add.ftz.f32, cvt.ftz, ...) than the emulator gets from the same C++.
    The flag is taken out where CuPy hands options to NVRTC (CuPy 14: _compile_using_nvrtc_no_warning;
    older: compile_using_nvrtc); CuPy's disk cache is bypassed, since its keys still say -ftz=true.
    """
    import cupy.cuda.compiler as compiler
    os.environ["CUPY_CACHE_IN_MEMORY"] = "1"
    for name in ("_compile_using_nvrtc_no_warning", "compile_using_nvrtc"):
        original = getattr(compiler, name, None)
        if original is None or getattr(original, "keeps_denormals", False):
            continue

        def without_ftz(source, options=(), *args, _original=original, **kwargs):
            options = tuple(o for o in options if o != "-ftz=true")
            NVRTC_OPTIONS[:] = options
            return _original(source, options, *args, **kwargs)
        without_ftz.keeps_denormals = True
        setattr(compiler, name, without_ftz)


class _GpuTextureApi:
    """cudalab's texture API on the GPU, with linear memory from CuPy's allocator (512-byte
    aligned, like cudaMalloc's pointers, as texture binding requires)."""

    def __init__(self):
        from functools import partial

        import cudalab
        from cudalab.runtime import device
        self.gpu = device.get("gpu")           # the current device (cudalab.use) stays as it was
        self.cuda_array = partial(cudalab.cuda_array, device=self.gpu)
        self.mipmapped_array = partial(cudalab.mipmapped_array, device=self.gpu)
        self.texture, self.surface = cudalab.texture, cudalab.surface

    def to_device(self, a):
        import cupy as cp
        gpu = self.gpu

        class Linear:
            def __init__(self):
                self.buf = cp.asarray(a)
                self.device_ptr, self.dtype, self.nbytes, self.device = self.buf.data.ptr, a.dtype, a.nbytes, gpu

            def free(self):
                self.buf = None
        return Linear()


_TEXTURE_API = []


def texture_api():
    if not _TEXTURE_API:
        _TEXTURE_API.append(_GpuTextureApi())
    return _TEXTURE_API[0]


def run_with_cudalab(case, args):
    """Launch one case through cudalab's GPU backend (cuda.core): the same NVRTC PTX as the emulator
    gets, cluster launches and -rdc=true (linked with libcudadevrt) included. Should the backend fail
    where CuPy can do the job (no launch-time cluster), CuPy records it and the log says so."""
    import cudalab
    cudalab.use("gpu")
    fresh = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        kernel = cudalab.compile(case["src"], options=list(case.get("options") or ())).get_kernel(case["kernel"])
        kernel.launch(case["grid"], case["block"], tuple(args), shared=case["shared"], cluster=case.get("cluster"))
        cudalab.synchronize()
    except Exception as e:
        if case.get("cluster") is not None or not gpu_still_usable():
            raise
        print(f"note {case['name']}: cudalab's GPU backend failed ({type(e).__name__}: {str(e)[:300]}); "
              "recording with CuPy", flush=True)
        run_with_cupy(case, fresh, rdc="-rdc=true" in (case.get("options") or ()))
        for a, f in zip(args, fresh):
            if isinstance(a, np.ndarray):
                a[...] = f
    finally:
        cudalab.use("emu")


def run_on_gpu(case, args):
    """Launch one case; array arguments are copied back into args in place."""
    if case.get("options") or case.get("cluster"):
        return run_with_cudalab(case, args)
    return run_with_cupy(case, args)


def run_with_cupy(case, args, rdc=False):
    """Launch one case with CuPy (``rdc``: compiled with -rdc=true and linked with cudadevrt, which
    CuPy does for enable_cooperative_groups)."""
    import cupy as cp
    compile_like_cudalab()
    name = case["kernel"]
    extra = {"enable_cooperative_groups": True} if rdc else {}
    mod = cp.RawModule(code=case["src"], options=("-std=c++17",), name_expressions=[name], **extra)
    kernel = mod.get_function(name)
    made = {k: a.build(texture_api()) for k, a in enumerate(args) if isinstance(a, TexArg)}
    dev = [cp.asarray(a) if isinstance(a, np.ndarray) else np.uint64(int(made[k][0])) if k in made else a
           for k, a in enumerate(args)]
    keep = []
    try:
        kernel(as3(case["grid"]), as3(case["block"]),
               tuple(_struct_as_array(a) if isinstance(a, np.void) else a for a in dev), shared_mem=case["shared"])
    except TypeError:
        kernel(as3(case["grid"]), as3(case["block"]),
               tuple(_struct_as_pointer(a, keep) if isinstance(a, np.void) else a for a in dev), shared_mem=case["shared"])
    cp.cuda.Device().synchronize()
    for a, d in zip(args, dev):
        if isinstance(a, np.ndarray):
            a[...] = cp.asnumpy(d)
    for k, (obj, res) in made.items():
        args[k].finish(obj, res)


def first_difference(a, b):
    """'' if a and b are the same bits, else where they first differ."""
    if a.tobytes() == b.tobytes():
        return ""
    bad = np.flatnonzero(a.view(np.uint8).ravel() != b.view(np.uint8).ravel())
    return f"byte {bad[0]} of {a.nbytes}"


def record_case(case):
    """(inputs, outputs) of one case, run twice; raises RuntimeError if the runs disagree."""
    inputs = case["make"]()
    runs = []
    for _ in range(2):
        args = [a.copy() if isinstance(a, np.ndarray) else a for a in inputs]
        run_on_gpu(case, args)
        runs.append({k: a.result if isinstance(a, TexArg) else a for k, a in enumerate(args)
                     if isinstance(a, np.ndarray) or (isinstance(a, TexArg) and a.view is None)})
    for k in runs[0]:
        where = first_difference(runs[0][k], runs[1][k])
        if where:
            raise RuntimeError(f"nondeterministic: two runs differ in argument {k} at {where}")
    return inputs, runs[0]


def gpu_still_usable():
    """False once a fault has killed this process's CUDA context."""
    import cupy as cp
    try:
        cp.cuda.Device().synchronize()
        return int(cp.arange(4).sum()) == 6
    except Exception:
        return False


def load_npz(path):
    """An npz's arrays. Headers padded with NUL bytes instead of spaces (written once on the H100
    machine, unreadable by numpy itself) are mended first: the data after them is intact."""
    import io
    import struct
    import zipfile
    out = {}
    with zipfile.ZipFile(path) as zf:
        for name in zf.namelist():
            raw = bytearray(zf.read(name))
            start = 10 if raw[6] == 1 else 12
            size = struct.unpack("<H" if raw[6] == 1 else "<I", bytes(raw[8:start]))[0]
            raw[start:start + size] = raw[start:start + size].replace(b"\0", b" ")
            out[name[:-4] if name.endswith(".npy") else name] = np.load(io.BytesIO(bytes(raw)))
    return out


def record_group(outdir, group, after=None):
    """Record one group's cases (those after `after`, continuing a partial file); saves after each."""
    path, state_path = os.path.join(outdir, f"{group}.npz"), os.path.join(outdir, f"{group}.json")
    arrays, state = {}, {"recorded": [], "dropped": {}}
    if after is not None:
        arrays = load_npz(path)
        with open(state_path) as f:
            state = json.load(f)
    todo = cases([group])
    if after is not None:
        todo = todo[[c["name"] for c in todo].index(after) + 1:]

    def save():
        np.savez_compressed(path, **arrays)
        with open(state_path, "w") as f:
            json.dump(state, f)

    save()

    for case in todo:
        state["started"] = case["name"]
        with open(state_path, "w") as f:
            json.dump(state, f)
        t0 = time.time()
        try:
            inputs, outputs = record_case(case)
        except Exception as e:                # keep going: one broken case must not hide the others
            reason = f"{type(e).__name__}: {e}".strip()[:2000]
            state["dropped"][case["name"]] = reason
            print(f"DROP {group}/{case['name']}: {reason.splitlines()[0][:300]}", flush=True)
            if not gpu_still_usable():
                save()
                sys.exit(3)                   # the parent restarts this group after this case
            continue
        for k, a in enumerate(inputs):
            if isinstance(a, TexArg):
                arrays[f"{case['name']}/tex{k}"] = np.array(a.spec())
                a = a.stored()
            arrays[f"{case['name']}/in{k}"] = np.asarray(a)
        for k, a in outputs.items():
            arrays[f"{case['name']}/out{k}"] = a
        arrays[f"{case['name']}/sha"] = np.array(case_sha(case))
        state["recorded"].append(case["name"])
        save()
        print(f"ok   {group}/{case['name']} ({time.time() - t0:.2f} s)", flush=True)
    state["started"] = None
    save()


DENORMAL_PROBE = dict(name="denormal_probe", kernel="probe", grid=1, block=1, shared=0,
                      src="__global__ void probe(float* x) { x[0] = x[1] * 0.5f; }")


def provenance():
    """Which GPU and software made the recording; refuses to go on if float32 denormals get flushed."""
    import cupy as cp
    x = np.array([0.0, 2.0 ** -126], np.float32)
    run_on_gpu(DENORMAL_PROBE, [x])
    if x[0] != np.float32(2.0 ** -127):
        sys.exit(f"float32 denormals are flushed to zero on this GPU build (2^-126 * 0.5 gave {x[0]}): "
                 "the recording would not match cudalab's -ftz=false semantics")
    rt = cp.cuda.runtime
    props = rt.getDeviceProperties(0)
    return dict(denormals_kept=True, nvrtc_options=list(NVRTC_OPTIONS), gpu=props["name"].decode(), compute_capability=f"{props['major']}.{props['minor']}",
                driver=rt.driverGetVersion(), cuda_runtime=rt.runtimeGetVersion(),
                nvrtc=".".join(map(str, cp.cuda.nvrtc.getVersion())), cupy=cp.__version__, numpy=np.__version__,
                python=platform.python_version(), date=time.strftime("%Y-%m-%d %H:%M:%S %Z"))


def run_watched(cmd, state_path):
    """Run a group child; kill it if one case runs longer than CASE_TIMEOUT_S (state file not touched)."""
    child = subprocess.Popen(cmd)
    while child.poll() is None:
        time.sleep(0.5)
        if os.path.exists(state_path) and time.time() - os.path.getmtime(state_path) > CASE_TIMEOUT_S:
            child.kill()
            child.wait()
            return "killed after %d s" % CASE_TIMEOUT_S
    return child.returncode


def main(outdir, groups=GROUPS):
    """Record each group in a child process, restarting it after any case that faults or hangs."""
    os.makedirs(outdir, exist_ok=True)
    info = provenance()
    print(json.dumps(info), flush=True)
    info["recorded"], info["dropped"] = {}, {}
    for group in groups:
        state_path, after = os.path.join(outdir, f"{group}.json"), None
        if os.path.exists(state_path):
            os.remove(state_path)
        while True:
            cmd = [sys.executable, os.path.abspath(__file__), outdir, "--group", group] + (["--after", after] if after else [])
            rc = run_watched(cmd, state_path)
            if not os.path.exists(state_path):
                info["dropped"][f"{group}/*"] = f"group child failed before its first case (exit {rc})"
                break
            with open(state_path) as f:
                state = json.load(f)
            if rc == 0:
                break
            after = state["started"]
            if after is None:
                break
            if after not in state["dropped"]:  # hung or crashed the process: note it and skip it
                state["dropped"][after] = f"child process ended while running it (exit {rc}): a hang or crash"
                with open(state_path, "w") as f:
                    json.dump(state, f)
                print(f"DROP {group}/{after}: child ended ({rc})", flush=True)
        info["recorded"][group] = state["recorded"] if os.path.exists(state_path) else []
        info["dropped"].update(state["dropped"] if os.path.exists(state_path) else {})
        if os.path.exists(state_path):
            os.remove(state_path)
    with open(os.path.join(outdir, "provenance.json"), "w") as f:
        json.dump(info, f, indent=1)
    n_ok = sum(map(len, info["recorded"].values()))
    print(f"{n_ok} recorded, {len(info['dropped'])} dropped", flush=True)


if __name__ == "__main__":
    if "--group" in sys.argv:
        a = sys.argv
        record_group(a[1], a[a.index("--group") + 1], a[a.index("--after") + 1] if "--after" in a else None)
    else:
        main(sys.argv[1], sys.argv[2:] or GROUPS)
