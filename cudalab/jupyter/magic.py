"""The ``%%cuda`` cell magic: compile the cell with NVRTC and bind its kernels in the notebook."""
from __future__ import annotations

import sys

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from ..cli import UsageError as OptionError, nvrtc_options
from ..errors import CudaError


@magics_class
class CudaMagics(Magics):

    @magic_arguments()
    @argument("-D", dest="define", action="append", default=[], metavar="NAME[=VAL]",
              help="define a macro, as nvcc -D (repeatable)")
    @argument("-O", dest="opt_level", type=int, choices=range(4), metavar="N",
              help="0: unoptimized device code (nvcc -G); 1-3: optimized (the default)")
    @argument("--arch", metavar="sm_XX", help="target compute capability (default sm_80)")
    @argument("--module", default="cuda_module", metavar="NAME",
              help="name the compiled module gets in the notebook (default: cuda_module)")
    @argument("--device", choices=("emu", "gpu", "both"),
              help="where kernels run: emulated GPU, real GPU, or both (compared)")
    @cell_magic
    def cuda(self, line, cell):
        """Compile the cell's CUDA C++ and bind each ``__global__`` kernel by its C++ name.

        After ``%%cuda`` with ``__global__ void vecAdd(...)``, ``vecAdd[blocks, threads](a, b, c, n)``
        launches it. The module is bound as ``cuda_module`` (or ``--module NAME``); template
        kernels are reached through it: ``cuda_module.get_kernel("scale<3>")``.
        Compiler errors name the cell's own line numbers.
        """
        args = parse_argstring(self.cuda, line)
        try:
            options = nvrtc_options(args.define, args.opt_level, args.arch)
        except OptionError as err:
            raise UsageError(str(err)) from None
        if args.device == "both":
            raise UsageError("--device both (run on the emulator and the GPU and compare) "
                             "is not available yet; use --device emu or --device gpu")
        from ..programs import has_main
        if has_main(cell):
            return self._run_program(cell, args)
        import cudalab
        try:
            if args.device:
                cudalab.use(args.device)
            mod = cudalab.compile(cell, options, name=args.module)
        except CudaError as err:
            # A student's mistake, not cudalab's: show the message, not a Python traceback.
            print(str(err), file=sys.stderr)
            return None
        ns = self.shell.user_ns
        ns[args.module] = mod
        for name in mod.kernels:
            if name.isidentifier():       # "scale<3>" is not a Python name
                ns[name] = mod.get_kernel(name)
        return None

    def _run_program(self, cell, args):
        """A cell with ``int main`` is a whole program: compile it with nvcc and run it (cudalab.programs)."""
        from ..programs import run_program_source
        try:
            res = run_program_source(cell, device=args.device or "emu", options=[f"-D{d}" for d in args.define])
        except CudaError as err:
            print(str(err), file=sys.stderr)
            return None
        sys.stdout.write(res.stdout)
        sys.stderr.write(res.stderr)
        if res.returncode:
            print(f"(the program exited with code {res.returncode})", file=sys.stderr)
        self.shell.user_ns["program_result"] = res      # stdout, stderr, returncode, launches
        return None
