"""Run the public conformance cases on a real GPU through cudalab's own GPU backend (not cupy).

usage: python tools/gpu_conformance.py [--save-ptx FILE | --ptx FILE] [case names...]
  (no option)      compile each case with this machine's NVRTC and run it on the GPU
  --save-ptx FILE  only compile (no GPU needed); write {case: {"kernel": mangled name, "ptx": text}}
  --ptx FILE       run the PTX saved in FILE: PTX made elsewhere, e.g. by the newer NVRTC whose PTX
                   the emulator runs there, so that the GPU checks exactly that PTX
Prints one line per case and 'N passed, M failed'; exit status 1 if any failed.
"""
import argparse
import json
import os
import re
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "tests", "conformance_public"), ROOT]
from cases import CASES  # noqa: E402
from run import check  # noqa: E402

from cudalab.frontend.nvrtc import compile_to_ptx  # noqa: E402


def compile_case(c) -> dict:
    out = compile_to_ptx(c["src"], name_expressions=(c["kernel"],))
    return {"kernel": out.lowered[c["kernel"]], "ptx": out.ptx}


def run_on_gpu(c, compiled, args):
    """Copy arrays in, copy globals in, launch, copy arrays back; returns (outputs, module)."""
    from cudalab.gpu.backend import GpuBuffer, GpuModule
    mod = GpuModule(compiled["ptx"])
    for name, value in c["consts"].items():
        mod.global_buffer(name).copy_from_host(value)
    dev = [GpuBuffer.from_host(a) if isinstance(a, np.ndarray) else a for a in args]
    mod.launch(compiled["kernel"], c["grid"], c["block"], c["shared"], dev)
    return [d.copy_to_host(np.empty_like(a)) if isinstance(a, np.ndarray) else a for a, d in zip(args, dev)], mod


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--save-ptx", metavar="FILE")
    group.add_argument("--ptx", metavar="FILE")
    parser.add_argument("names", nargs="*")
    opts = parser.parse_args(argv)
    cases = [c for c in CASES if not opts.names or c["name"] in opts.names]
    if opts.save_ptx:
        with open(opts.save_ptx, "w") as f:
            json.dump({c["name"]: compile_case(c) for c in cases}, f)
        print(f"wrote PTX of {len(cases)} cases to {opts.save_ptx}")
        return 0
    saved = json.load(open(opts.ptx)) if opts.ptx else {}
    passed = failed = 0
    for c in cases:
        args = c["make"]()
        inputs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        note = ""
        try:
            out, mod = run_on_gpu(c, saved[c["name"]] if opts.ptx else compile_case(c), args)
            err = check(c, out, c["ref"](*inputs))
            if mod.lowered_from:
                now = re.search(r"\.version\s+(\S+)", mod.ptx)[1]
                note = f" (PTX .version {mod.lowered_from} lowered to {now})"
        except Exception as e:  # report and go on: one broken case must not hide the others
            err = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
        print(f"FAIL {c['name']}: {err}" if err else f"ok   {c['name']}{note}")
        passed, failed = passed + (not err), failed + bool(err)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
