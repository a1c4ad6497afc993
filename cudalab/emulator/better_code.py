"""The better machine code of a kernel the compiled tier first built quickly, made in a process of its own.

    python better_code.py MODULE.bc OUT.o OPT

compiled.py builds a big kernel's native code in two steps: LLVM's passes once, then machine code
from LLVM's fast code generator (opt=0: a tiled matmul's in 0.05 s against 0.39 s at opt=2, eScience's
unrolled convolution's in 1.7 s against 83 s), so the first launch does not wait for the slow one. A
kernel that keeps running then gets the code generator's best (``OPT``, 2, or 1 for the modules
compiled.BIG_IR_BYTES puts on the short list) from the same optimized module (``MODULE.bc``, LLVM
bitcode): the same instructions, so the same bytes, only faster. It runs here, in a child process
(``compiled.note_native`` starts it, ``compiled.pick`` takes its result): LLVM holds no lock of the
emulator's meanwhile, a program that ends first ends it (a thread would hold the exit until LLVM
was done, a minute for the convolution), and its CPU time is not the launching process's, so
neither the watchdog nor ``ulimit -t`` charges a kernel with it.

This file is run by its path, not imported as part of cudalab: the child loads llvmlite alone.
"""
import os
import sys


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


if __name__ == "__main__":
    build(sys.argv[1], sys.argv[2], int(sys.argv[3]))
