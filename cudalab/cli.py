"""``cudalab run`` / ``cudalab compile``: the library from a terminal.

``cudalab run FILE.cu`` runs a kernel file on the emulated GPU (or the real one with
``CUDALAB_DEVICE=gpu``). The file says how to launch it in ``// cudalab:`` comment lines::

    // cudalab: A = random float32[65536]      arrays: NAME = random|arange|zeros DTYPE[SHAPE]
    // cudalab: C = zeros float32[n]           (SHAPE: numbers or scalar names, comma separated)
    // cudalab: n = int32 65536                scalars: NAME = DTYPE VALUE
    // cudalab: launch vecAdd<<<256, 256>>>(A, B, C, n)     grid/block: N, (x, y) or dim3(x, y, z)
    // cudalab: check np.allclose(C, A + B)    optional: a numpy expression over the arrays

Arrays are made with numpy (``random`` is seeded, so runs repeat), copied to the device, the
kernel is launched, and the report shows the launch and the first elements of every array the
kernel wrote. A file without a ``launch`` line is compiled and its kernels are listed.
A whole program (a file with ``int main()``) is compiled with nvcc and run as it is, with
``cudalab run prog.cu -- ARGS``; its CUDA runtime calls are answered by the emulator.

``cudalab profile FILE.cu`` runs the ``launch`` line with profiling and prints, per source line,
the instructions executed, active lanes, shared wavefronts and bank conflicts, global requests and
sectors per request (Nsight Compute's metrics), with advice for the worst lines.
``cudalab compile FILE.cu [--ptx]`` compiles and lists the kernels, or prints the PTX.
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field

import numpy as np

from .errors import CudaError

INITS = ("random", "arange", "zeros")
_DIRECTIVE = re.compile(r"^\s*//\s*cudalab:\s*(.*?)\s*$", re.M)
_ARRAY = re.compile(r"(\w+)\s*=\s*(\w+)\s+(\w+)\s*\[([^\]]+)\]$")
_SCALAR = re.compile(r"(\w+)\s*=\s*(\w+)\s+(\S+)$")
_LAUNCH = re.compile(r"launch\s+(.+?)\s*<<<(.*)>>>\s*\((.*)\)$")
_MAIN = re.compile(r"\bint\s+main\s*\(")


class UsageError(ValueError):
    """A command line option or a ``// cudalab:`` line is malformed; the message says which."""


def nvrtc_options(defines=(), opt_level=None, arch=None) -> list:
    """NVRTC options for ``-D NAME[=VAL]``, ``-O N`` and ``--arch sm_XX`` as nvcc users write them.

    NVRTC always optimizes device code and has no -O flag; like nvcc, ``-O 0`` for device code
    means ``-G`` (no optimization, debug info). ``sm_XX`` becomes ``compute_XX`` because cudalab
    asks NVRTC for PTX, which is what both the emulator and the GPU backend load.
    """
    opts = [f"-D{d}" for d in defines]
    if opt_level == 0:
        opts.append("-G")
    if arch:
        if not re.fullmatch(r"(sm|compute)_\d+[af]?", arch):
            raise UsageError(f"--arch {arch!r}: expected something like sm_80")
        opts.append("--gpu-architecture=compute_" + arch.split("_", 1)[1])
    return opts


@dataclass
class LaunchSpec:
    """What a file's ``// cudalab:`` lines ask for."""

    kernel: str
    grid: tuple
    block: tuple
    args: list                                     # names, in the kernel's parameter order
    values: dict = field(default_factory=dict)     # name -> numpy array or numpy scalar
    checks: list = field(default_factory=list)     # numpy expressions that must hold


def _dim3(text: str, what: str):
    nums = re.sub(r"^dim3\s*", "", text.strip()).strip("() ")
    try:
        dims = tuple(int(x, 0) for x in nums.split(","))
    except ValueError:
        raise UsageError(f"launch {what} {text.strip()!r}: expected N, (x, y) or dim3(x, y, z)") from None
    return dims[0] if len(dims) == 1 else dims


def _split_config(text: str):
    """Split ``GRID, BLOCK`` at the comma outside parentheses."""
    depth = 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            return text[:i], text[i + 1:]
    raise UsageError(f"launch <<<{text}>>>: expected <<<grid, block>>>")


def parse_launch_spec(source: str) -> LaunchSpec | None:
    """Read the ``// cudalab:`` lines of a kernel file; None if it has no ``launch`` line."""
    rng = np.random.default_rng(0)
    values, checks, launch = {}, [], None
    for n, text in ((source.count("\n", 0, m.start()) + 1, m.group(1))
                    for m in _DIRECTIVE.finditer(source)):
        where = f"line {n}: // cudalab: {text}"
        try:
            if m := _LAUNCH.match(text):
                grid, block = _split_config(m.group(2))
                launch = (m.group(1), _dim3(grid, "grid"), _dim3(block, "block"),
                          [a.strip() for a in m.group(3).split(",") if a.strip()])
            elif text.startswith("check "):
                checks.append(text[len("check "):])
            elif m := _ARRAY.match(text):
                name, init, dtype, shape = m.groups()
                if init not in INITS:
                    raise ValueError(f"unknown initializer {init!r}; use one of {', '.join(INITS)}")
                dims = tuple(int(values[d]) if d in values else int(d, 0)
                             for d in (s.strip() for s in shape.split(",")))
                dt = np.dtype(dtype)
                if init == "zeros":
                    values[name] = np.zeros(dims, dt)
                elif init == "arange":
                    values[name] = np.arange(np.prod(dims), dtype=dt).reshape(dims)
                elif dt.kind == "f":
                    values[name] = rng.random(dims).astype(dt)
                else:
                    values[name] = rng.integers(0, 100, dims).astype(dt)
            elif m := _SCALAR.match(text):
                name, dtype, value = m.groups()
                values[name] = np.dtype(dtype).type(value)
            else:
                raise ValueError("not understood (see `cudalab run --help` for the format)")
        except (ValueError, TypeError, KeyError) as err:
            raise UsageError(f"{where}\n  {err}") from None
    if launch is None:
        return None
    kernel, grid, block, args = launch
    missing = [a for a in args if a not in values]
    if missing:
        raise UsageError(f"launch {kernel}: no `// cudalab:` line defines {', '.join(missing)}")
    return LaunchSpec(kernel, grid, block, args, values, checks)


def launch_arguments(spec: LaunchSpec):
    """({name: DeviceArray} of the spec's arrays, the kernel's arguments in parameter order)."""
    import cudalab
    device = {n: cudalab.to_device(v) for n, v in spec.values.items() if isinstance(v, np.ndarray)}
    return device, tuple(device.get(a, spec.values.get(a)) for a in spec.args)


def run_kernel_file(mod, spec: LaunchSpec, out=None) -> bool:
    """Launch ``spec`` from compiled module ``mod``, print a report; False if a check failed."""
    import cudalab
    out = out or sys.stdout
    device, args = launch_arguments(spec)
    rec = mod.get_kernel(spec.kernel)[spec.grid, spec.block](*args)
    cudalab.synchronize()
    print(f"{spec.kernel}<<<{spec.grid}, {spec.block}>>>({', '.join(spec.args)}) on {rec.backend}: "
          f"{rec.wall_time * 1e3:.1f} ms, {rec.thread_instructions:,} thread instructions", file=out)
    results = {n: d.copy_to_host() for n, d in device.items()}
    written = [n for n in results if not np.array_equal(results[n], spec.values[n])]
    for n in written:
        flat = results[n].ravel()
        print(f"  {n}[:8] = {np.array2string(flat[:8], precision=4)}"
              f"{' ...' if flat.size > 8 else ''}", file=out)
    if not written:
        print("  the kernel wrote none of the arrays", file=out)
    env = {"np": np, **spec.values, **results}
    ok = True
    for expr in spec.checks:
        passed = bool(np.all(eval(expr, env)))    # the student's own file, like a test
        ok &= passed
        print(f"check {expr}: {'ok' if passed else 'FAILED'}", file=out)
    return ok


def _compile(args):
    import cudalab
    with open(args.file) as f:
        source = f.read()
    opts = nvrtc_options(args.define, args.opt_level, args.arch)
    return source, cudalab.compile(source, opts, name=args.file)


def cmd_compile(args) -> int:
    _, mod = _compile(args)
    if args.ptx:
        print(mod.ptx)
    else:
        print(f"{args.file}: kernels {', '.join(mod.kernels) or '(none)'}")
    return 0


def run_program_file(args) -> int:
    """A whole program (``int main``): compile with nvcc and run it, its output straight to the terminal."""
    import os
    from .programs import run_program
    argv = args.args[1:] if args.args[:1] == ["--"] else args.args
    res = run_program(args.file, argv, device=os.environ.get("CUDALAB_DEVICE", "emu"), capture=False,
                      options=[f"-D{d}" for d in args.define], timeout=getattr(args, "timeout", None))
    sys.stderr.write(res.stderr)
    return res.returncode


def cmd_run(args) -> int:
    checks = [c.strip() for c in getattr(args, "check", "").split(",") if c.strip()]
    if checks:
        import cudalab
        cudalab.check(*[c for c in checks if c not in ("memcheck", "synccheck")])
    if getattr(args, "profile", False):
        return cmd_profile(args)
    with open(args.file) as f:
        source = f.read()
    if _MAIN.search(source):
        return run_program_file(args)
    source, mod = _compile(args)
    spec = parse_launch_spec(source)
    if spec is None:
        print(f"{args.file}: kernels {', '.join(mod.kernels) or '(none)'}\n"
              "(add a `// cudalab: launch ...` line to run one; see `cudalab run --help`)")
        return 0
    return 0 if run_kernel_file(mod, spec) else 1


def cmd_profile(args) -> int:
    with open(args.file) as f:
        source = f.read()
    if _MAIN.search(source):
        from .programs import run_program
        result = run_program(args.file, options=[f"-D{d}" for d in args.define], profile=True, capture=False)
        for k, rec in enumerate(result.launches):
            print(f"\n--- launch {k + 1} of {len(result.launches)} ---")
            print(rec.reports.get("profile", rec))
        return result.returncode
    from .analysis.report import profile
    source, mod = _compile(args)
    spec = parse_launch_spec(source)
    if spec is None:
        raise UsageError(f"{args.file} has no `// cudalab: launch ...` line to say which launch to profile "
                         "(see `cudalab run --help`)")
    _, launch_args = launch_arguments(spec)
    rec = profile(mod.get_kernel(spec.kernel), spec.grid, spec.block, launch_args)
    print(rec.reports["profile"])
    return 0


def _parser():
    p = argparse.ArgumentParser(prog="cudalab", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("file", help="a .cu file")
    common.add_argument("-D", dest="define", action="append", default=[], metavar="NAME[=VAL]",
                        help="define a macro, as nvcc -D")
    common.add_argument("-O", dest="opt_level", type=int, choices=range(4), metavar="N",
                        help="0: unoptimized device code (nvcc -G); 1-3: optimized (the default)")
    common.add_argument("--arch", metavar="sm_XX", help="target compute capability (default sm_80)")
    run = sub.add_parser("run", parents=[common], help="run a kernel file (see its // cudalab: lines)",
                         description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("--profile", action="store_true", help="also print each launch's per-line profile")
    run.add_argument("--check", metavar="racecheck,initcheck,...", default="",
                     help="sanitizer checks besides memcheck and synccheck (which are always on)")
    run.add_argument("--timeout", type=float, metavar="SECONDS",
                     help="stop a whole program (int main), and a kernel it is running, after this long")
    run.add_argument("args", nargs=argparse.REMAINDER,
                     help="after --: arguments for an int main() program")
    run.set_defaults(func=cmd_run)
    prof = sub.add_parser("profile", parents=[common], help="run a kernel file's launch and print its "
                          "per-line profile (instructions, bank conflicts, sectors per request, advice)")
    prof.set_defaults(func=cmd_profile)
    comp = sub.add_parser("compile", parents=[common], help="compile; list kernels or print PTX")
    comp.add_argument("--ptx", action="store_true", help="print the PTX")
    comp.set_defaults(func=cmd_compile)
    return p


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.func(args)
    except (CudaError, UsageError, OSError) as err:
        print(f"cudalab: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
