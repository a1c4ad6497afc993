# Copied unchanged from the project's shared public conformance material (shared/conformance/run.py);
# tools/gpu_conformance.py reuses its check(). Keep in sync with the original.
"""Run the conformance cases on cudalab (or on a real GPU through cupy) and compare with numpy.

usage: python run.py [cudalab|cupy] [case names...]
Prints one line per case and a final 'N passed, M failed' line; exit status 1 if any failed.
"""
import sys
import numpy as np
from cases import CASES


def as3(v):
    v = (v,) if isinstance(v, int) else tuple(v)
    return v + (1,) * (3 - len(v))


def run_cupy(c, args):
    import cupy as cp
    name = c["kernel"]
    mod = cp.RawModule(code=c["src"], options=("-std=c++17",), name_expressions=[name])
    for g, val in c["consts"].items():
        cp.ndarray(val.shape, val.dtype, mod.get_global(g)).set(val)
    dev = [cp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    mod.get_function(name)(as3(c["grid"]), as3(c["block"]), tuple(dev), shared_mem=c["shared"])
    cp.cuda.Device().synchronize()
    return [cp.asnumpy(d) if isinstance(a, np.ndarray) else a for a, d in zip(args, dev)]


def run_cudalab(c, args):
    import cudalab
    mod = cudalab.compile(c["src"])
    for g, val in c["consts"].items():
        mod.get_global(g).copy_to_device(val)
    k = mod.get_kernel(c["kernel"])
    k[c["grid"], c["block"], 0, c["shared"]](*args)
    return args


def check(c, out, ref):
    for idx, want in ref.items():
        got, want = np.asarray(out[idx]).ravel(), np.asarray(want).ravel()
        if c["exact"]:
            ok = np.array_equal(got, want.astype(got.dtype), equal_nan=True)
        else:
            ok = np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=c["rtol"], atol=c["atol"])
        if not ok:
            bad = np.flatnonzero(got.astype(np.float64) != want.astype(got.dtype).astype(np.float64))[:5]
            return f"arg {idx} differs at {bad.tolist()}: got {got[bad].tolist()} want {want[bad].tolist()}"
    return None


def main(backend="cudalab", only=()):
    run = {"cupy": run_cupy, "cudalab": run_cudalab}[backend]
    passed = failed = 0
    for c in CASES:
        if only and c["name"] not in only:
            continue
        args = c["make"]()
        inputs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        try:
            err = check(c, run(c, args), c["ref"](*inputs))
        except Exception as e:  # report and go on: one broken case must not hide the others
            err = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
        print(f"FAIL {c['name']}: {err}" if err else f"ok   {c['name']}")
        passed, failed = passed + (not err), failed + bool(err)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(*(sys.argv[1:2] or ["cudalab"]), only=sys.argv[2:]))
