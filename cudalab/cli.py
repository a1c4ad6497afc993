"""``cudalab run`` / ``cudalab profile`` / ``cudalab compile``: the library from a terminal.

``cudalab run [nvcc options] FILES... [-- program arguments]`` builds a whole program the way
nvcc would and runs it on the emulated GPU: ``cudalab run -I../Common -rdc=true main.cpp
kernel.cu -- -n 1024`` is ``nvcc -I../Common -rdc=true main.cpp kernel.cu && ./a.out -n 1024``.
Files are compiled where they are (``#include "kernel.cuh"`` is found next to the file that
includes it), the program runs in the current folder, and its argv[0] is ``./a.out`` or what
``-o`` names. nvcc's options work as with nvcc: -I, -D, -U, -std=, -O, -rdc=true/-dc, -arch,
-gencode, -lineinfo, -G, -Xcompiler, --extended-lambda, --expt-relaxed-constexpr, --use_fast_math,
-l/-L, -o, -w, ... With ``--device gpu`` (or ``CUDALAB_DEVICE=gpu``) the same files are built with
the real nvcc and NVIDIA's runtime and run on the GPU. ``--timeout S`` stops a program (and the
kernel it is running) after S seconds; for a kernel file it is how long the launch may run. Without
it, a kernel run from a terminal may take TERMINAL_WATCHDOG_SECONDS (2 minutes) of CPU time before the
watchdog stops it: programs from courses and books are sized for a GPU, where a kernel of 30 s on
the emulator is normal, and a terminal has Ctrl-C (a notebook cell keeps the 10 s watchdog).

A single kernel file (no ``int main``) runs on the emulated GPU (or the real one with
``CUDALAB_DEVICE=gpu``) as its ``// cudalab:`` comment lines say::

    // cudalab: A = random float32[65536]      arrays: NAME = random|arange|zeros DTYPE[SHAPE]
    // cudalab: C = zeros float32[n]           (SHAPE: numbers or scalar names, comma separated)
    // cudalab: n = int32 65536                scalars: NAME = DTYPE VALUE
    // cudalab: launch vecAdd<<<256, 256>>>(A, B, C, n)     grid/block: N, (x, y) or dim3(x, y, z)
    // cudalab: check np.allclose(C, A + B)    optional: a numpy expression over the arrays

Arrays are made with numpy (``random`` is seeded, so runs repeat), copied to the device, the
kernel is launched, and the report shows the launch and the first elements of every array the
kernel wrote. A file without a ``launch`` line is compiled and its kernels are listed.

``cudalab profile [nvcc options] FILES...`` runs the ``launch`` line (or the whole program) with
profiling and prints, per source line, the instructions executed, active lanes, shared wavefronts
and bank conflicts, global requests and sectors per request (Nsight Compute's metrics), with
advice for the worst lines. A program's launches are all profiled, each in the interpreter (the counts
are exact); as with Nsight Compute, ``--kernel-name K``, ``--launch-skip N`` and ``--launch-count N``
pick a few, and the rest run at full speed. ``cudalab run --check racecheck,initcheck ...`` adds sanitizer checks.
``cudalab compile [nvcc options] FILE.cu [--ptx]`` compiles and lists the kernels, or prints the PTX.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .errors import CudaError
from .programs.command import NvccCommand, NvccUsageError, parse_nvcc

INITS = ("random", "arange", "zeros")
TERMINAL_WATCHDOG_SECONDS = 120.0
_DIRECTIVE = re.compile(r"^\s*//\s*cudalab:\s*(.*?)\s*$", re.M)
_ARRAY = re.compile(r"(\w+)\s*=\s*(\w+)\s+(\w+)\s*\[([^\]]+)\]$")
_SCALAR = re.compile(r"(\w+)\s*=\s*(\w+)\s+(\S+)$")
_LAUNCH = re.compile(r"launch\s+(.+?)\s*<<<(.*)>>>\s*\((.*)\)$")


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


def kernel_file_options(cmd: NvccCommand, path: str) -> list:
    """NVRTC options for a kernel file from an nvcc command line: the macros, include folders (and the
    file's own folder, where nvcc looks first), language standard and math flags carry over; -O0
    means -G; the architecture is the newest one asked for, as PTX (``compute_XX``)."""
    opts = [f"-I{Path(path).parent or '.'}"]
    words = iter(cmd.compile_options)
    for w in words:
        if w.startswith(("-D", "-U", "-I")) or w in ("-G", "-lineinfo", "-w", "--extended-lambda",
                                                      "--expt-relaxed-constexpr", "--use_fast_math",
                                                      "-use_fast_math", "-extended-lambda", "-expt-relaxed-constexpr"):
            opts.append(w)
        elif w == "-O0":
            opts.append("-G")
        elif w in ("-std", "-ftz", "-prec-div", "-prec-sqrt", "-fmad"):
            opts.append(f"-{w}={next(words)}" if w != "-std" else f"-std={next(words)}")
    if cmd.archs:
        arch = max(cmd.archs, key=lambda a: int(re.match(r"\d+", a).group()))
        opts.append(f"--gpu-architecture=compute_{arch}")
    return opts


def _compile(args):
    import cudalab
    path = args.nvcc.sources[0]
    source = source_text(path)
    return source, cudalab.compile(source, kernel_file_options(args.nvcc, path), name=path)


def cmd_compile(args) -> int:
    _, mod = _compile(args)
    if args.ptx:
        print(mod.ptx)
    else:
        print(f"{args.nvcc.sources[0]}: kernels {', '.join(mod.kernels) or '(none)'}")
    return 0


def is_program(cmd: NvccCommand) -> bool:
    """Several files, or one with ``int main``, or a library (-shared): nvcc's build (else a kernel file)."""
    if cmd.shared or len(cmd.sources) != 1 or cmd.linked or not cmd.sources[0].endswith(".cu"):
        return True
    from .programs import has_main
    return has_main(source_text(cmd.sources[0]))


def source_text(path) -> str:
    """A source file's text as nvcc reads it, whatever its encoding: a Korean or Chinese course's files saved
    on Windows have comments in CP949 or GBK, which nvcc passes over but Python's UTF-8 refuses (such a
    byte shows as U+FFFD here)."""
    with open(path, errors="replace") as f:
        return f.read()


def run_program_files(args, profile: bool = False) -> int:
    """A whole program: build it as nvcc would and run it, its output straight to the terminal."""
    from .programs import run_command
    device = args.device or os.environ.get("CUDALAB_DEVICE", "emu")
    if profile and device == "gpu":
        raise UsageError("profile counts on the emulator; on a real GPU, run the program under Nsight Compute "
                         "(ncu ./a.out)")
    from . import device as profiles
    from .runtime import device as devices
    saved, emulated = devices.WATCHDOG_SECONDS, profiles.current()
    if args.timeout is None:             # a program given --timeout gives its kernels that time instead
        devices.set_watchdog(max(saved, TERMINAL_WATCHDOG_SECONDS))
    profiles.set_device(gpu_built_for(args.nvcc, emulated))
    try:
        res = run_command(args.nvcc, args.program_args, device=device, capture=False, timeout=args.timeout,
                          profile=(getattr(args, "selection", None) or True) if profile else False)
    finally:
        devices.set_watchdog(saved)
        profiles.set_device(emulated)
    sys.stderr.write(res.stderr)
    if profile:
        print_profiles(res.launches, getattr(args, "selection", None))
    return res.returncode


def print_profiles(launches, selection=None):
    """Each profiled launch's report under a line that numbers it among the program's launches; then
    how many were left out by the selection (they ran at full speed, unobserved)."""
    for k, rec in enumerate(launches):
        if selection is None or "profile" in rec.reports:
            print(f"\n--- launch {k + 1} of {len(launches)} ---")
            print(rec.reports.get("profile", rec))
    left = sum("profile" not in rec.reports for rec in launches)
    if selection is not None and left:
        print(f"\n{left} of {len(launches)} launches were not profiled ({selection.describe()}): "
              "they ran at full speed, without the profiler's counts.")


def gpu_built_for(cmd: NvccCommand, emulated):
    """The GPU a terminal's program is emulated on: ``emulated`` (an A100 unless set), or, when the
    program is built only for newer architectures (``nvcc -arch=sm_90``: a Hopper course's PDL,
    clusters, TMA), the first named GPU of the oldest of them (an H100). Such a program could not
    run on ``emulated``, and its own check of the compute capability would stop it."""
    from .device import profiles
    asked = sorted(int(re.match(r"\d+", a).group()) for a in cmd.archs)
    have = emulated.cc[0] * 10 + emulated.cc[1]
    if not asked or asked[0] <= have:
        return emulated
    named = [g for g in profiles.GPUS.values() if g.cc == divmod(asked[0], 10)]
    return named[0] if named else profiles.ARCHS.get(f"sm_{asked[0]}", emulated)


def use_checks(args):
    """``--check LIST``: the sanitizer checks for this run. memcheck named explicitly stops the program
    at an out-of-bounds access a GPU runs (compute-sanitizer's memcheck), and synccheck at a
    ``__syncthreads()`` some threads of a warp reach while the others run on to the end or to another
    one (a GPU runs it); without them those are warnings."""
    checks = [c.strip() for c in args.check.split(",") if c.strip()]
    if checks:
        import cudalab
        cudalab.check(*checks)


def cmd_run(args) -> int:
    use_checks(args)
    if args.profile:
        return cmd_profile(args)
    if args.why_slow:
        return _why_slow(args)
    if is_program(args.nvcc):
        return run_program_files(args)
    source, mod = _compile(args)
    mod.watchdog = args.timeout or TERMINAL_WATCHDOG_SECONDS      # a kernel file's launch may run this long
    spec = parse_launch_spec(source)
    if spec is None:
        print(f"{args.nvcc.sources[0]}: kernels {', '.join(mod.kernels) or '(none)'}\n"
              "(add a `// cudalab: launch ...` line to run one; see `cudalab run --help`)")
        return 0
    return 0 if run_kernel_file(mod, spec) else 1


def _why_slow(args) -> int:
    """``cudalab run --why-slow``: the run as usual, then, on stderr, each kernel's CPU time and the
    instructions that kept it in the interpreter, with the compiled tier's reason (emulator/why_slow.py)."""
    from .emulator import why_slow
    why_slow.turn_on()
    args.why_slow = False
    try:
        return cmd_run(args)
    finally:
        sys.stdout.flush()
        why_slow.print_report()


def cmd_profile(args) -> int:
    use_checks(args)
    if is_program(args.nvcc):
        return run_program_files(args, profile=True)
    from .analysis.report import profile
    source, mod = _compile(args)
    spec = parse_launch_spec(source)
    if spec is None:
        raise UsageError(f"{args.nvcc.sources[0]} has no `// cudalab: launch ...` line to say which launch to "
                         "profile (see `cudalab run --help`)")
    _, launch_args = launch_arguments(spec)
    rec = profile(mod.get_kernel(spec.kernel), spec.grid, spec.block, launch_args)
    print(rec.reports["profile"])
    return 0


COMMANDS = {"run": cmd_run, "profile": cmd_profile, "compile": cmd_compile}
_USAGE = """usage: cudalab {run,profile,compile} [cudalab options] [nvcc options] FILES... [-- program arguments]

  cudalab run       build and run a program (or a kernel file's // cudalab: launch line) on the emulated GPU
  cudalab profile   the same, and print each launch's per-line profile (bank conflicts, sectors per request)
  cudalab compile   compile a kernel file; list its kernels (--ptx: print the PTX)
  cudalab nvcc      run nvcc as given; a -fatbin/-cubin module file keeps its PTX for cuModuleLoad

cudalab options:
  --device emu|gpu   where to run (default: $CUDALAB_DEVICE or emu)
  --check LIST       sanitizer checks: racecheck,initcheck (memcheck and synccheck always run);
                     memcheck named here also stops at an out-of-bounds access a GPU runs (one element
                     past an array's end), which is otherwise a warning; synccheck, at a __syncthreads()
                     a warp reaches split while its other threads run on (also a warning otherwise)
  --profile          (run) also print each launch's per-line profile
  --kernel-name K    (profile) profile only kernel K's launches (as ncu -k; regex:EXPR for a pattern)
  --launch-skip N    (profile) pass over the first N launches that match, unprofiled (as ncu -s)
  --launch-count N   (profile) profile at most N launches (as ncu -c); launches not profiled run at full speed
  --timeout SECONDS  stop the program, and the kernel it runs, after this long (a kernel file: its launch)
  --why-slow         (run) afterwards, each kernel's CPU time and which of its instructions ran in the
                     (slower) interpreter instead of native code, with the reason
  --ptx              (compile) print the PTX
nvcc options: -I DIR, -D NAME[=VAL], -U NAME, -std=c++17, -O N, -rdc=true, -dc, -arch=sm_80,
  -gencode ..., -lineinfo, -G, -Xcompiler OPT, --extended-lambda, --expt-relaxed-constexpr,
  --use_fast_math, -l LIB, -L DIR, -o NAME, -w, ... (as nvcc reads them)
"""
_OWN = {"--device": True, "--check": True, "--timeout": True, "--profile": False, "--ptx": False,
        "--kernel-name": True, "--launch-skip": True, "--launch-count": True, "--why-slow": False}


def parse_args(argv) -> argparse.Namespace:
    """cudalab's own options (``--device``, ``--check``, ...) out of an nvcc command line."""
    argv = list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        raise SystemExit(print(_USAGE + "\n" + __doc__) or 0)
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        raise UsageError(f"unknown command {command!r}: use run, profile or compile")
    if "--" in rest:
        cut = rest.index("--")
        rest, program_args = rest[:cut], rest[cut + 1:]
    else:
        program_args = []
    args = argparse.Namespace(command=command, func=COMMANDS[command], device=None, check="", timeout=None,
                              profile=False, ptx=False, program_args=program_args, kernel_name=None,
                              launch_skip=None, launch_count=None, why_slow=False)
    nvcc_words = []
    words = iter(rest)
    for w in words:
        name, eq, value = w.partition("=")
        if w in ("-h", "--help"):
            raise SystemExit(print(_USAGE + "\n" + __doc__) or 0)
        if name in _OWN:
            if _OWN[name] and not eq:
                value = next(words, None)
                if value is None:
                    raise UsageError(f"{name} needs a value")
            setattr(args, name[2:].replace("-", "_"), value if _OWN[name] else True)
        else:
            nvcc_words.append(w)
    if args.device not in (None, "emu", "gpu"):
        raise UsageError(f"--device {args.device}: use emu (the emulator) or gpu (a real NVIDIA GPU)")
    if args.timeout is not None:
        try:
            args.timeout = float(args.timeout)
        except ValueError:
            raise UsageError(f"--timeout {args.timeout}: expected seconds, as in --timeout 60") from None
    args.selection = _selection(args)
    if args.selection is not None and not (command == "profile" or args.profile):
        raise UsageError("--kernel-name, --launch-skip and --launch-count pick the launches to profile: use them "
                         "with cudalab profile (or cudalab run --profile)")
    try:
        args.nvcc = parse_nvcc(nvcc_words)
    except NvccUsageError as err:
        raise UsageError(str(err)) from None
    if not args.nvcc.sources:
        raise UsageError(f"cudalab {command}: no .cu file given\n\n{_USAGE}")
    if command == "compile" and is_program(args.nvcc):
        raise UsageError("cudalab compile reads one kernel file; a whole program is built and run with cudalab run")
    return args


def _selection(args):
    """ncu's --kernel-name/--launch-skip/--launch-count as a LaunchSelection (None: profile every launch)."""
    if args.kernel_name is None and args.launch_skip is None and args.launch_count is None:
        return None
    numbers = {}
    for option in ("launch_skip", "launch_count"):
        text = getattr(args, option)
        if text is not None:
            if not text.isdigit():
                raise UsageError(f"--{option.replace('_', '-')} {text}: expected a number of launches, "
                                 f"as in --{option.replace('_', '-')} 1")
            numbers[option] = int(text)
    from .analysis.selection import LaunchSelection
    return LaunchSelection(args.kernel_name, numbers.get("launch_skip", 0), numbers.get("launch_count"))


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["nvcc"]:        # a build step of a driver-API program's module file (programs/module_build.py)
        from .programs import module_build
        return module_build.run(argv[1:])
    try:
        args = parse_args(argv)
        return args.func(args)
    except (CudaError, UsageError, OSError) as err:
        print(f"cudalab: {err}", file=sys.stderr)
        return 1


def entry() -> None:
    """The ``cudalab`` command: ``main``, then leave without tearing the interpreter down.

    A background compile of the compiled tier (LLVM, in its own thread) may still hold native
    objects when the program ends; Python's teardown freed them under it and the process crashed
    after the program's last line. So the command waits for that compile (its cache file is then
    whole), flushes its output and exits at once, as a C program's exit() would."""
    code = main()
    from .emulator import compiled, pace
    if pace.cpu_time_left() > 0:     # past ulimit -t's soft limit a build would run into the hard one
        compiled.wait_for_builds()
    compiled.end_children()          # (atexit's, which os._exit skips: better builds left to finish or ended)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:             # a closed pipe (`cudalab ... | head`): nothing more to say
            pass
    os._exit(code if isinstance(code, int) else 1)


if __name__ == "__main__":
    entry()
