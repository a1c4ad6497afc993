"""The ``%%cuda`` cell magic (compile the cell with NVRTC, bind its kernels in the notebook) and the
``%cuda_profile`` / ``%cuda_show`` line magics (profile one launch, or draw what its threads did)."""
from __future__ import annotations

import ast
import re
import shlex
import sys
import tempfile
from pathlib import Path

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from ..cli import UsageError as OptionError, nvrtc_options
from ..errors import CudaError
from ..programs.command import SOURCE_SUFFIXES, NvccUsageError, parse_nvcc

SAVED_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".hh", ".inc", ".cpp", ".cc", ".c")
PROGRAM_CELL = "cell.cu"        # the file a program cell is built as (nvcc's messages name it)


@magics_class
class CudaMagics(Magics):

    @cell_magic
    def cu(self, line, cell):
        """``%%cu``: nvcc4jupyter's magic for a cell that is one whole program, which Colab courses load
        (``%load_ext nvcc_plugin``) and write over each program (a course's 35 weekly cells): the cell runs
        as ``%%cuda`` runs it, the same options accepted. Load ``%load_ext cudalab`` in place of the plugin."""
        return self.cuda(line, cell)

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
    @argument("--profile", action="store_true",
              help="profile every launch of the cell's kernels and show the per-line report")
    @argument("--kernel-name", metavar="K",
              help="with --profile, a program cell: profile only kernel K's launches (as ncu -k; regex:EXPR)")
    @argument("--launch-skip", type=int, default=0, metavar="N",
              help="with --profile, a program cell: pass over the first N launches that match (as ncu -s)")
    @argument("--launch-count", type=int, metavar="N",
              help="with --profile, a program cell: profile at most N launches (as ncu -c); the others run at "
                   "full speed")
    @argument("--timeout", type=float, metavar="SECONDS",
              help="stop a whole program (int main), and a kernel it is running, after this long; in a "
                   "cell of kernels: how long each launch of them may run (the watchdog, 10 s by default)")
    @argument("--save", metavar="NAME",
              help="save the cell as the file NAME (kernels.cuh, kernels.cu, ...) for later cells to "
                   "#include or build with; nothing is compiled or run")
    @argument("--compiler-args", default="", metavar='"OPTIONS"',
              help='more nvcc options, quoted after "=": --compiler-args="-rdc=true -std=c++20"')
    @cell_magic
    def cuda(self, line, cell):
        """Compile the cell's CUDA C++ and bind each ``__global__`` kernel by its C++ name.

        After ``%%cuda`` with ``__global__ void vecAdd(...)``, ``vecAdd[blocks, threads](a, b, c, n)``
        launches it. The module is bound as ``cuda_module`` (or ``--module NAME``); template
        kernels are reached through it: ``cuda_module.get_kernel("scale<3>")``.
        Compiler errors name the cell's own line numbers. A cell that defines ``int main`` is a
        whole program: it is compiled with nvcc and run (its result is bound as ``program_result``).

        A program in several cells: ``%%cuda --save kernels.cuh`` (or ``kernels.cu``, ``util.cpp``)
        saves the cell as a file in the notebook's build folder instead of running it. Later cells
        ``#include "kernels.cuh"``, and every program cell is built together with all saved
        ``.cu``/``.cpp``/``.c`` files, as ``nvcc cell.cu kernels.cu util.cpp`` would (saving a name
        again replaces the file). A ``__device__`` function or variable used across files needs
        relocatable device code: ``%%cuda --compiler-args="-rdc=true"`` on the program cell.
        ``--compiler-args`` takes any nvcc options (-I, -D, -std=, -rdc=true, -lineinfo, ...).

        With ``--profile`` every launch of the cell's kernels also shows its profile: per source
        line, the instructions executed, active lanes, shared wavefronts and bank conflicts, global
        requests and sectors per request, in Nsight Compute's terms, the worst lines with advice
        (``cudalab.profile``; the emulator only). Line magics for one launch at a time:

            %cuda_profile vecAdd[blocks, threads](a, b, c, n)
                profile this launch and show the report (the record: ``cudalab.last_launch()``)
            %cuda_show WHAT [NAME=VALUE ...] vecAdd[blocks, threads](a, b, c, n)
                run the launch recording each thread and show the widget WHAT: threads, tiling,
                banks, coalescing, divergence, heatmap (``cudalab.widgets.show``); NAME=VALUE
                options (no spaces in VALUE) go to the widget, e.g. ``line=7 padded=True``, or
                to ``cudalab.widgets.trace`` (``max_blocks=4``, ``shapes=SHAPES``)
        """
        args = parse_argstring(self.cuda, line)
        try:
            options = nvrtc_options(args.define, args.opt_level, args.arch)
            extra = parse_nvcc(shlex.split(args.compiler_args.strip("\"'")))
        except (OptionError, NvccUsageError, ValueError) as err:
            raise UsageError(str(err)) from None
        if args.save:
            return self._save(args.save, cell)
        from ..programs import has_main
        if has_main(cell):
            if args.profile and args.device == "gpu":
                raise UsageError("--profile counts on the emulator; on a real GPU, run the program under "
                                 "Nsight Compute (ncu ./program)")
            if args.device == "both":
                raise UsageError("--device both compares kernels launched from Python; run a whole program "
                                 "with --device emu or --device gpu")
            return self._run_program(cell, args, extra)
        import cudalab
        from ..cli import kernel_file_options
        if self._folder is not None:        # saved cells' headers: #include "kernels.cuh"
            options.append(f"-I{self._folder}")
        options += kernel_file_options(extra, "cell.cu")[1:]
        try:
            if args.device:
                cudalab.use(args.device)
            mod = cudalab.compile(cell, options, name=args.module)
        except CudaError as err:
            # A student's mistake, not cudalab's: show the message, not a Python traceback.
            print(str(err), file=sys.stderr)
            return None
        mod.watchdog = args.timeout
        ns = self.shell.user_ns
        ns[args.module] = mod
        for name in mod.kernels:
            if name.isidentifier():       # "scale<3>" is not a Python name
                kernel = mod.get_kernel(name)
                ns[name] = ProfiledKernel(kernel) if args.profile else kernel
        return None

    @line_magic
    def cuda_profile(self, line):
        """Profile one launch and show the per-line report: ``%cuda_profile vecAdd[blocks, threads](a, b, c, n)``.

        Per source line: instructions executed (warp-level and per thread), active lanes,
        shared-memory wavefronts and bank conflicts, global requests, sectors and sectors per
        request, as Nsight Compute counts them; the worst lines come with advice. Runs on the
        emulator. The launch record (with ``.reports["per_line"]``) is ``cudalab.last_launch()``.
        """
        kernel, config, args = self._launch(line, "%cuda_profile")
        show_profile(kernel, config, args)

    @line_magic
    def cuda_show(self, line):
        """Run one launch recording what each thread did and show a widget:
        ``%cuda_show WHAT [NAME=VALUE ...] kernel[grid, block](args)``.

        WHAT is one of threads, tiling, banks, coalescing, divergence, heatmap. NAME=VALUE options
        (Python values without spaces, evaluated in the notebook) go to the widget, e.g.
        ``%cuda_show banks line=7 padded=True transpose[(8, 8), (32, 32)](out, a, n)``, except
        ``max_blocks`` and ``shapes``, which go to ``cudalab.widgets.trace``.
        """
        from IPython.display import display

        import cudalab.widgets
        what, _, rest = line.strip().partition(" ")
        shown = [w for w in cudalab.widgets.WIDGETS if w not in ("streams", "occupancy")]
        if what not in shown:
            raise UsageError(f"%cuda_show WHAT kernel[grid, block](args): WHAT is one of {', '.join(shown)}"
                             f"{'' if not what else f'; not {what!r}'}")
        options = {}
        while m := re.match(r"\s*(\w+)=(\S+)\s+", rest):
            options[m.group(1)] = self._eval(m.group(2), "%cuda_show")
            rest = rest[m.end():]
        kernel, config, args = self._launch(rest, "%cuda_show")
        grid, block, shared = launch_config(kernel, config)
        tracing = {k: options.pop(k) for k in ("max_blocks", "shapes") if k in options}
        rec = cudalab.widgets.trace(kernel, grid, block, args, shared=shared, **tracing)
        display(cudalab.widgets.show(rec, what, **options))

    def _eval(self, text, magic):
        try:
            return eval(text, self.shell.user_ns)
        except SyntaxError:
            raise UsageError(f"{magic}: {text!r} is not a Python expression") from None

    def _launch(self, line, magic):
        """(kernel, launch configuration, args) of ``kernel[grid, block](args)``, evaluated in the notebook."""
        try:
            call = ast.parse(line.strip(), mode="eval").body
        except SyntaxError:
            call = None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Subscript) and not call.keywords):
            raise UsageError(f"{magic} needs a launch, as in  {magic} vecAdd[blocks, threads](a, b, c, n)"
                             f"{'' if not line.strip() else f'; got {line.strip()!r}'}")
        parts = (call.func.value, call.func.slice, ast.Tuple(elts=call.args, ctx=ast.Load()))
        kernel, config, args = (eval(compile(ast.fix_missing_locations(ast.Expression(p)), magic, "eval"),
                                     self.shell.user_ns) for p in parts)
        return (kernel.kernel if isinstance(kernel, ProfiledKernel) else kernel), config, args

    _folder = None

    def folder(self) -> Path:
        """The notebook's build folder: saved cells and program cells live there while the kernel runs."""
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="cudalab-cells-"))
        return self._folder

    def _save(self, name, cell):
        """``%%cuda --save NAME``: the cell becomes the file NAME for later cells to include or build with."""
        if "/" in name or "\\" in name or name.startswith(".") or Path(name).suffix.lower() not in SAVED_SUFFIXES:
            raise UsageError(f"--save {name}: give a file name ending in {', '.join(SAVED_SUFFIXES)} "
                             "(no folders), as in --save kernels.cuh")
        if name == PROGRAM_CELL:
            raise UsageError(f"--save {name}: {PROGRAM_CELL} is the name program cells are built under; choose another")
        (self.folder() / name).write_text(cell)
        built = Path(name).suffix.lower() in SOURCE_SUFFIXES
        print(f"saved {name}: " + ("every program cell (int main) is built with it" if built else
                                   f'cells can #include "{name}"'))
        return None

    def saved_sources(self) -> list:
        """The saved .cu/.cpp/.c files, in name order (what a program cell is built with)."""
        if self._folder is None:
            return []
        return sorted(p.name for p in self._folder.iterdir()
                      if p.suffix.lower() in SOURCE_SUFFIXES and p.name != PROGRAM_CELL)

    def _run_program(self, cell, args, extra):
        """A cell with ``int main`` is a whole program: compile it with nvcc, together with the saved
        source files, and run it (cudalab.programs)."""
        from ..programs import run_program_source
        options = [f"-D{d}" for d in args.define] + ([f"-arch={args.arch}"] if args.arch else []) + extra.all_options()
        try:
            profile = bool(args.profile)
            if profile and (args.kernel_name or args.launch_skip or args.launch_count is not None):
                from ..analysis.selection import LaunchSelection
                profile = LaunchSelection(args.kernel_name, args.launch_skip, args.launch_count)
            res = run_program_source(cell, device=args.device or "emu", options=options, profile=profile,
                                     filename=PROGRAM_CELL, timeout=args.timeout, folder=self.folder(), sources=self.saved_sources())
        except CudaError as err:
            print(str(err), file=sys.stderr)
            return None
        sys.stdout.write(res.stdout)
        sys.stderr.write(res.stderr)
        if res.returncode:
            print(f"(the program exited with code {res.returncode})", file=sys.stderr)
        self.shell.user_ns["program_result"] = res      # stdout, stderr, returncode, launches
        if args.profile:
            from IPython.display import display
            for rec in res.launches:
                if "profile" in rec.reports:
                    display(rec.reports["profile"])
        return None


def launch_config(kernel, config):
    """(grid, block, dynamic shared bytes) of ``kernel[grid, block]`` or ``kernel[grid, block, stream, shared]``."""
    if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
        kernel[config]                  # raises the launch error a plain launch would
    return config[0], config[1], config[3] if len(config) > 3 else 0


def show_profile(kernel, config, args):
    """Profile one launch, display its report, return its LaunchRecord."""
    from IPython.display import display

    from ..analysis.report import profile
    grid, block, shared = launch_config(kernel, config)
    rec = profile(kernel, grid, block, args, shared=shared)
    display(rec.reports["profile"])
    return rec


class ProfiledKernel:
    """A kernel bound by ``%%cuda --profile``: ``k[grid, block](args)`` launches it with ``cudalab.profile``
    and displays the report; everything else (``k.launch``, ``k.name``, ``k.mangled``) is the kernel's."""

    def __init__(self, kernel):
        self.kernel = kernel

    def __getattr__(self, name):
        return getattr(self.kernel, name)

    def __getitem__(self, config):
        launch_config(self.kernel, config)
        return lambda *args: show_profile(self.kernel, config, args)

    def __call__(self, *args, **kwargs):
        return self.kernel(*args, **kwargs)

    def __repr__(self):
        return f"{self.kernel!r} (profiled)"
