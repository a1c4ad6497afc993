"""Whole CUDA programs (``int main``) on the emulated GPU or a real one, unchanged.

``run_program("prog.cu")`` compiles the program with nvcc (NVIDIA's pip wheels) and links it
against cudalab's own CUDA runtime (``shim/cudart.c``), whose calls the emulator answers
(``server.py``): the program's ``cudaMalloc``, ``cudaMemcpy``, ``<<<grid, block, shmem,
stream>>>`` launches, streams, events and ``printf`` all work without a GPU. With
``device="gpu"`` the same source is compiled with NVIDIA's runtime and runs on the real GPU.

Known differences from a GPU: device memory is mapped in the program too, so dereferencing a
``cudaMalloc`` pointer on the host does not crash here (it does on a GPU); every operation runs
when it is issued (a legal order for any correct program), and event timings come from a model
(``cudalab.device.timeline``, the runtime core's, which Python launches share), not from a clock.
"""
from __future__ import annotations

import ctypes
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import CompileError
from .build import build, build_program, cache_dir, nvcc, oldest_arch, source_folder  # noqa: F401
from .command import NvccCommand, parse_nvcc
from .stopping import cpu_limit_stops, stopped_message

# void: a Visual Studio program (programs/void_main.py); auto: C++11's trailing return type, `auto main() -> int`
# (a Warsaw course's projects), which is no kernel file
_MAIN = re.compile(r"\b(int|void|auto)\s+main\s*\(")
ADDR_NO_RANDOMIZE = 0x0040000


@dataclass
class ProgramResult:
    """What a program printed and returned, and the launches it made on the emulator."""

    stdout: str
    stderr: str
    returncode: int
    launches: list = field(default_factory=list)     # LaunchRecord per kernel launch (emulator)
    device: str = "emu"

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def __repr__(self):
        return (f"<ProgramResult on {self.device}: exit code {self.returncode}, {len(self.launches)} launches, "
                f"{len(self.stdout.splitlines())} lines of output>")


def has_main(source: str) -> bool:
    """Is this source a whole program (it defines ``int main(``, ``auto main() -> int``, or ``void main(`` as Visual
    Studio allows)?"""
    return bool(_MAIN.search(re.sub(r"//[^\n]*|/\*.*?\*/", "", source, flags=re.S)))


def run_program(paths, args=(), device: str = "emu", capture: bool = True, timeout: float | None = None,
                options=(), profile: bool = False, cwd=None) -> ProgramResult:
    """Build the program from ``paths`` (one file or several: .cu, .cpp, .c) with nvcc ``options``
    (``["-I../Common", "-rdc=true"]``) and run it with command-line ``args`` in ``cwd`` (this
    process's folder by default), as ``nvcc OPTIONS FILES && ./a.out ARGS`` would."""
    files = [str(paths)] if isinstance(paths, (str, os.PathLike)) else [str(p) for p in paths]
    return run_command(parse_nvcc([*options, *files]), args, device, capture, timeout, profile, cwd)


def run_program_source(source: str, args=(), device: str = "emu", filename: str = "cell.cu",
                       capture: bool = True, timeout: float | None = None, options=(),
                       line_offset: int = 0, profile: bool = False, folder=None, sources=()) -> ProgramResult:
    """Compile and run a program given as text (a ``%%cuda`` cell with ``int main``).

    ``capture=False`` lets the program write straight to this process's stdout/stderr (the CLI);
    ``timeout`` (seconds) stops a program that runs too long; ``profile=True`` profiles every launch
    (each LaunchRecord in ``launches`` gets ``reports["profile"]``, as cudalab.profile gives), or the
    ones a ``cudalab.analysis.selection.LaunchSelection`` picks (ncu's --kernel-name, --launch-skip,
    --launch-count); the others run at full speed.
    ``folder``: where the source is written as ``filename`` and built (a notebook's folder of saved
    cells, whose headers it may include); ``sources``: more files there to build and link with it."""
    name = Path(filename).name if filename.endswith(".cu") else "program.cu"
    if folder is None:
        folder = source_folder(source, name)
    else:
        Path(folder, name).write_text(source)
    cmd = parse_nvcc([*options, name, *sources])
    return run_command(cmd, args, device, capture, timeout, profile, build_dir=folder, line_offset=line_offset,
                       profile_source=source)


def run_command(cmd: NvccCommand, args=(), device: str = "emu", capture: bool = True, timeout: float | None = None,
                profile: bool = False, cwd=None, build_dir=None, line_offset: int = 0,
                profile_source: str | None = None) -> ProgramResult:
    """Build an nvcc command line's program (files relative to ``build_dir``, by default ``cwd``) and
    run it in ``cwd``; the program's argv[0] is the name nvcc gives it (``./a.out`` or ``-o``'s)."""
    cwd = Path(cwd or os.getcwd())
    build_dir = Path(build_dir or cwd)
    if cmd.shared:
        return _build_library(cmd, device, build_dir)
    if device == "gpu":
        return _run_native(cmd, args, capture, timeout, cwd, build_dir)
    if device != "emu":
        raise CompileError(f"unknown device {device!r}: use 'emu' (the emulator) or 'gpu' (a real NVIDIA GPU).")
    from .blas_threads import one_blas_thread
    from .heap import keep_freed_memory
    from .server import Server
    built = build(cmd, build_dir, line_offset)
    if built.notes and not capture:
        sys.stderr.write(built.notes)
        sys.stderr.flush()
    if profile and profile_source is None:
        # the per-line profile quotes the one .cu file whose lines the kernels' .loc entries name;
        # with several, a line number could be any of them, so lines are shown without their text
        device_files = [s for s in cmd.sources if s.endswith(".cu")]
        profile_source = (build_dir / device_files[0]).read_text(errors="replace") if len(device_files) == 1 else ""
    server = Server(built.ptx, built.registers, profile_source=profile_source if profile else None,
                    profile_selection=None if isinstance(profile, bool) else profile)
    keep_freed_memory()             # a launch in a loop reuses the last one's pages (programs/heap.py)
    one_blas_thread()               # cuBLAS calls' numpy work does not spin up idle threads (blas_threads.py)
    parent, child = socket.socketpair()
    deadline = None if timeout is None else time.monotonic() + timeout
    # (a process the program forks gets an emulator of its own from the build, with the same time limit)
    # (where the program's runtime notes that a SIGSEGV was its stack running out: shim/stackguard.c)
    crash_note = Path(tempfile.mkdtemp(prefix="cudalab-crash-")) / "note"
    env = dict(os.environ, **server.env(), CUDALAB_FD=str(child.fileno()),
               CUDALAB_PROGRAM_DIR=str(built.executable.parent), CUDALAB_CRASH_NOTE=str(crash_note),
               **({"CUDALAB_DEADLINE": repr(deadline)} if deadline is not None else {}))
    out = tempfile.TemporaryFile() if capture else None
    err = tempfile.TemporaryFile() if capture else None
    before = _children_cpu()
    try:
        proc = subprocess.Popen([cmd.executable_name(), *map(str, args)], executable=str(built.executable),
                                env=env, stdout=out, stderr=err, cwd=cwd,
                                stdin=subprocess.DEVNULL if capture else None,
                                pass_fds=(child.fileno(), *server.fds()), preexec_fn=_fixed_layout)
        child.close()
        stopped = ""
        try:
            server.pid = proc.pid       # its CPU time tells a busy program from a descheduled one
            with cpu_limit_stops(server.ctx):
                server.serve(parent, deadline, timeout)
                proc.wait(timeout=None if timeout is None and server.ctx.cpu_limit is None else 10)
        except (socket.timeout, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
            stopped = stopped_message(server.ctx, server.session.launches, timeout, server.calls,
                                      time.monotonic() - (server.serving_since or time.monotonic()))
        code = proc.returncode
        stdout, stderr = (_read(out), _read(err)) if capture else ("", "")
        stderr = (built.notes if capture else "") + stderr + (stopped or _crash_note(
            code, _children_cpu() - before, _reads_missing_arguments(cmd, args, build_dir),
            stack_overflow=_said_stack(crash_note)))
        return ProgramResult(stdout, stderr, code, server.session.launches)
    finally:
        parent.close()
        server.close()
        shutil.rmtree(crash_note.parent, ignore_errors=True)


def _said_stack(note: Path) -> bool:
    """Whether the program's runtime wrote that its SIGSEGV came with the stack pointer at the stack's
    limit (shim/stackguard.c): endless recursion or a local array larger than the stack."""
    try:
        return note.read_text().strip() == "stack"
    except OSError:
        return False


def _build_library(cmd: NvccCommand, device: str, build_dir: Path) -> ProgramResult:
    """``nvcc -shared ... -o libX.so``: a library, nothing to run. For the emulator, built against cudalab's
    runtime (``build.build_library``); for a GPU, by NVIDIA's nvcc as written."""
    from .build import build_library
    if device == "gpu":
        r = subprocess.run([shutil.which("nvcc") or nvcc(), *cmd.all_options(), *cmd.sources, *cmd.linked,
                            *(["-o", cmd.output] if cmd.output else [])], capture_output=True, text=True, errors="replace", cwd=build_dir)
        if r.returncode:
            raise CompileError((r.stdout + r.stderr).strip(), r.stdout + r.stderr)
        return ProgramResult(r.stdout, r.stderr, 0, device="gpu")
    out = build_library(cmd, build_dir)
    return ProgramResult("", f"cudalab: built the shared library {out.name} for the emulator (nvcc -shared: a "
                         "library, nothing to run); programs that link it run its kernels.\n", 0)


def _fixed_layout():
    """In the child before exec: no address-space randomization, so the device arena's addresses
    are free (the shim also retries when they are not)."""
    try:
        ctypes.CDLL(None).personality(ADDR_NO_RANDOMIZE)
    except (OSError, AttributeError):
        pass


def _read(f) -> str:
    f.seek(0)
    return f.read().decode(errors="replace")


def _children_cpu() -> float:
    """CPU seconds of the child processes waited for so far (the program's, once it has ended)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# "atoi(argv[1])", "argv[2]": a command-line argument read by position
_ARGV_READ = re.compile(r"\bargv\s*\[\s*([1-9])\s*\]")


def _reads_missing_arguments(cmd: NvccCommand, args, build_dir: Path) -> int:
    """The highest ``argv[N]`` the program's sources read when it was given fewer than N arguments, else
    0: a course's ``int n = atoi(argv[1]);`` with no check of argc crashes on a NULL pointer when run bare
    (Stanford CME 213's reduction samples), on a GPU's machine too."""
    read = 0
    for source in cmd.sources:
        try:
            text = (build_dir / source).read_text(errors="replace")
        except OSError:
            continue
        read = max([read, *(int(n) for n in _ARGV_READ.findall(text))])
    return read if read > len(args) else 0


def _crash_note(code: int, cpu: float | None = None, missing_argument: int = 0, stack_overflow: bool = False) -> str:
    if code is None or code >= 0:
        return ""
    name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else f"signal {-code}"
    # `ulimit -t` (a grader, a shared machine) ends a program whose host code runs long: SIGXCPU at the
    # soft limit, SIGKILL at the hard one (the same number when the shell's ulimit set both)
    limit = resource.getrlimit(resource.RLIMIT_CPU)[0]
    if cpu is not None and (name == "SIGXCPU" or name == "SIGKILL" and limit != resource.RLIM_INFINITY
                            and cpu >= limit - 1):
        return (f"cudalab: the program was stopped by its CPU-time limit (ulimit -t) after {cpu:.0f} s of CPU time "
                "in its own host code (the emulated kernels do not count there): its CPU work, a reference "
                "computation say, is longer than the limit. Give it more time or make the problem smaller.\n")
    if name in _STOP_SIGNALS:
        return f"cudalab: the program was ended by {name}, a signal to stop ({_STOP_SIGNALS[name]}), not a crash.\n"
    hint = _SIGNAL_HINTS.get(name, "")
    if name == "SIGSEGV" and stack_overflow:
        limit = resource.getrlimit(resource.RLIMIT_STACK)[0]
        size = f"{limit >> 20} MB" if limit != resource.RLIM_INFINITY and limit >= 1 << 20 else "its size"
        hint = (f" It ran out of stack: the host code's stack ({size} here, as `ulimit -s` says) was used up, by "
                "a recursion that does not end (a function that calls itself, or two that call each other, with "
                "no case that stops) or by a large local array (`float a[1 << 24];` inside a function): make "
                "such an array static or global, or allocate it with malloc/new.")
    elif name == "SIGSEGV" and missing_argument:
        hint += (f" Here, perhaps argv[{missing_argument}]: the program reads it, but was given "
                 f"{'no arguments' if missing_argument == 1 else 'fewer'}, so it is NULL; give them after the "
                 "sources and `--` (cudalab run prog.cu -- 1024).")
    return f"cudalab: the program crashed ({name}).{hint}\n"


# what a crash by each signal usually means in a course's host code
_SIGNAL_HINTS = {
    "SIGSEGV": " A segmentation fault in host code usually means a bad host pointer (an array too small, "
               "a missing allocation).",
    # x86 raises SIGFPE for integers only (a float divided by zero is inf): a Spanish course's loop
    # over block sizes starts at 0, and (n + block - 1) / block ends the program before any launch
    "SIGFPE": " SIGFPE in host code is an integer division (or remainder) by zero, not a floating-point "
              "error: a block size or count of 0, say, in (n + block - 1) / block.",
    # (a book reader's thread_index.cu fills 192 ints into a 48-int malloc, a byte count used as an element
    # count, and glibc stops the next malloc with "malloc(): corrupted top size", on a GPU's machine too)
    "SIGABRT": " The program aborted itself: an assert() that failed or the C++ library giving up (an "
               "uncaught exception, a bad free); its own message is above. A message from malloc() or free() "
               "(\"corrupted top size\", \"double free or corruption\") means the host code wrote past the end of an "
               "array it allocated, or freed one twice, somewhere before: compare each malloc's size with the loops "
               "that fill it (a count of bytes used as a count of elements, say).",
}


# signals that end a program from outside (or by its own raise): where they come from, for the student
_STOP_SIGNALS = {"SIGTERM": "from kill, a job's time limit or the program itself", "SIGINT": "Ctrl-C",
                 "SIGHUP": "its terminal closed",
                 "SIGKILL": "from kill -9, or the system's out-of-memory killer when the machine's memory runs out"}


def _run_native(cmd: NvccCommand, args, capture, timeout, cwd: Path, build_dir: Path) -> ProgramResult:
    """Build with NVIDIA's own nvcc and runtime (the machine's nvcc first) and run on the real GPU."""
    work = Path(tempfile.mkdtemp(prefix="cudalab-gpu-", dir=cache_dir()))
    try:
        compiler = shutil.which("nvcc") or nvcc()
        cmd = cmd.without_archs_before(oldest_arch())
        arch = [] if cmd.arch_options else ["-arch=native"]
        lineinfo = [] if "-G" in cmd.compile_options else ["-lineinfo"]
        r = subprocess.run([compiler, *arch, *lineinfo, *cmd.all_options(), *cmd.sources, *cmd.linked,
                            "-o", str(work / "program")], capture_output=True, text=True, errors="replace", cwd=build_dir)
        if r.returncode:
            raise CompileError((r.stdout + r.stderr).strip(), r.stdout + r.stderr)
        try:
            p = subprocess.run([cmd.executable_name(), *map(str, args)], executable=str(work / "program"),
                               capture_output=capture, text=True, errors="replace", timeout=timeout, cwd=cwd)
        except subprocess.TimeoutExpired as e:
            return ProgramResult(_text(e.stdout), _text(e.stderr) + "the program was stopped (timeout)\n", -9,
                                 device="gpu")
        return ProgramResult(p.stdout or "", (p.stderr or "") + _crash_note(
            p.returncode, None, _reads_missing_arguments(cmd, args, build_dir)), p.returncode, device="gpu")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _text(out) -> str:
    return out.decode(errors="replace") if isinstance(out, bytes) else (out or "")
