"""Which PTX instruction forms the native tiers refuse, and how often they occur (not in CI).

    PYTHONPATH=. python tools/native_coverage.py [--only corpus,conformance,bench,python,examples] [--json out.json]

Over the PTX the project makes without a GPU -- the corpus (tests/kernels), the conformance cases
(/work/shared/conformance or tests/conformance_public), bench/kernels.py, bench/numba_kernels.py
(Python kernels, through numba-cuda), a few Python kernels of the math module (below) and examples/*.cu -- every instruction of every kernel is
offered to llvmgen, as compiled._compilable does, in a scratch module. An instruction the generator
refuses stays in the interpreter and splits the groups and regions around it. Printed: refused
forms (opcode with its modifiers and types) by static count, with the kernels they occur in and
the generator's reason. Warp-collective instructions (shfl, vote, ...) and control flow (bra,
ret, call, bar) are counted apart: the interpreter keeps them by design.
"""
import argparse
import collections
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.append(str(ROOT / "bench"))         # (after tests/: both have a kernels module)

import numpy as np  # noqa: E402
from llvmlite import ir  # noqa: E402

import cudalab  # noqa: E402
from cudalab.emulator import llvmgen as lg  # noqa: E402
from cudalab.emulator.engine import K_NORMAL, DeviceMemory, Program, _DecodeContext  # noqa: E402

KEPT = {"shfl", "vote", "match", "redux", "activemask", "bar", "barrier", "elect", "bar.warp"}


def refusals(ptx_module):
    """-> (total instructions offered, Counter of refused form -> count, {form: reason})."""
    program = Program(ptx_module, DeviceMemory())
    refused, reasons, total = collections.Counter(), {}, 0
    for name, f in ptx_module.functions.items():
        if not f.is_entry:
            continue
        df = program.function(name)
        d = _DecodeContext(f, ptx_module, df.param_offsets)
        scratch = ir.Module(name="scratch")
        find = lg.find_function(scratch)
        for pc, (kind, _, inst, _) in enumerate(df.code):
            if kind != K_NORMAL or inst.opcode in KEPT:
                continue
            total += 1
            form = ".".join((inst.opcode,) + tuple(inst.mods))
            try:
                lg.GroupBuilder(scratch, f"t{pc}", f, d, [], find).emit(inst)
            except Exception as e:      # noqa: BLE001  (Skip, or a form the generator misreads)
                refused[form] += 1
                reasons.setdefault(form, f"{type(e).__name__}: {e}"[:90])
    return total, refused, reasons


def corpus():
    from kernels import cases
    for c in cases():
        yield "corpus/" + c["name"], lambda c=c: cudalab.compile(c["src"], options=list(c.get("options") or ()))


def conformance():
    shared = Path("/work/shared/conformance")
    sys.path.insert(0, str(shared if shared.is_dir() else ROOT / "tests" / "conformance_public"))
    from cases import CASES
    for c in CASES:
        yield "conformance/" + c["name"], lambda c=c: cudalab.compile(c["src"])


def _benches():
    import importlib.util
    spec = importlib.util.spec_from_file_location("bench_kernels", ROOT / "bench" / "kernels.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.BENCHES


def bench():
    BENCHES = _benches()
    for b in BENCHES.values():
        yield "bench/" + b.name, lambda b=b: cudalab.compile(b.source)


def python():
    """bench/numba_kernels.py through the drop-in: specialized on the bench's smallest inputs."""
    import cudalab.numba
    BENCHES = _benches()
    cudalab.numba.install()
    import numba_kernels
    for b in BENCHES.values():
        def build(b=b):
            args = b.inputs(b.sizes[0], np.random.default_rng(0))
            return getattr(numba_kernels, b.kernel).specialize(*args).module
        yield "python/" + b.name, build


class _Built:
    def __init__(self, ptx_module):
        self.ptx_module = ptx_module


MATH_KERNELS = r"""
import math
from numba import cuda


@cuda.jit
def float_math(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i] = math.exp(v) + math.log(abs(v) + 1) + math.sin(v) * math.cos(v) + math.tanh(v) \
            + math.sqrt(abs(v)) + v ** 1.5 + math.atan2(v, 2.0) + math.floor(v) + math.erf(v)


@cuda.jit
def double_math(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i] = math.exp(v) + math.log1p(abs(v)) + math.pow(abs(v), 0.3) + math.hypot(v, 3.0) + math.fmod(v, 1.7)


@cuda.jit
def integer_math(a, out):
    i = cuda.grid(1)
    if i < a.size:
        v = a[i]
        out[i] = v // 7 + v % 13 + (v * 2654435761) // (i + 1) + abs(v) + min(v, 3) + max(v, -3) + (v >> 3) ^ (v << 2)
"""


def python_math():
    """Python kernels with the math module (float32, float64, int64): libdevice's code for them."""
    import importlib.util
    import tempfile
    import cudalab.numba
    cudalab.numba.install()
    path = Path(tempfile.mkdtemp()) / "coverage_math_kernels.py"
    path.write_text(MATH_KERNELS)
    spec = importlib.util.spec_from_file_location("coverage_math_kernels", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name, args in (("float_math", (np.ones(4, np.float32), np.ones(4, np.float32))),
                       ("double_math", (np.ones(4), np.ones(4))),
                       ("integer_math", (np.ones(4, np.int64), np.ones(4, np.int64)))):
        yield "python_math/" + name, lambda name=name, args=args: getattr(mod, name).specialize(*args).module


def examples():
    """Whole programs (host code and kernels) through nvcc, as ``cudalab run`` builds them."""
    from cudalab.programs.build import build_program
    from cudalab.ptx import parse
    for p in sorted((ROOT / "examples").glob("*.cu")):
        yield "examples/" + p.stem, lambda p=p: _Built(parse(build_program(p.read_text(), p.name).ptx))


SOURCES = {"corpus": corpus, "conformance": conformance, "bench": bench, "python": python, "python_math": python_math,
           "examples": examples}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=",".join(SOURCES))
    ap.add_argument("--json", help="write the counts here as well")
    ap.add_argument("--top", type=int, default=60)
    a = ap.parse_args(argv)
    refused, where, reasons = collections.Counter(), collections.defaultdict(set), {}
    total, failed, kernels = 0, [], 0
    per_source = collections.Counter()
    for src in a.only.split(","):
        for name, build in SOURCES[src]():
            try:
                n, r, why = refusals(build().ptx_module)
            except Exception as e:      # noqa: BLE001  (a case the emulator rejects offers nothing)
                failed.append(f"{name}: {type(e).__name__}")
                continue
            kernels += 1
            total += n
            per_source[src] += sum(r.values())
            refused.update(r)
            for form in r:
                where[form].add(name)
            for k, v in why.items():
                reasons.setdefault(k, v)
    n_ref = sum(refused.values())
    print(f"{kernels} modules, {total} instructions offered, {n_ref} refused ({100 * n_ref / max(total, 1):.1f}%), "
          f"{len(refused)} refused forms; by source: {dict(per_source)}")
    if failed:
        print(f"{len(failed)} not built: " + ", ".join(failed[:8]) + (" ..." if len(failed) > 8 else ""))
    print(f"{'count':>6} {'modules':>7}  form  (reason)")
    for form, c in refused.most_common(a.top):
        print(f"{c:6d} {len(where[form]):7d}  {form}  ({reasons[form]})")
    if a.json:
        Path(a.json).write_text(json.dumps({"offered": total, "refused": dict(refused.most_common()),
                                            "modules": {k: sorted(v) for k, v in where.items()},
                                            "not_built": failed}, indent=1))


if __name__ == "__main__":
    main()
