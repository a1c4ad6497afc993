"""One Python kernel and its argument types -> PTX, through numba-cuda's compiler (typing by numba,
code generation by NVVM from the nvidia-nvvm wheel), with the Python file as the module's source.

numba-cuda asks the CUDA driver for the current GPU's compute capability when it compiles a device
function that a kernel calls (``cuda.random``'s xoroshiro, a user's ``@cuda.jit(device=True)``); on a
machine without a GPU there is no driver to ask, so while cudalab compiles, that question is answered
with the selected device profile's compute capability (A100's 8.0 by default): the PTX is what
numba-cuda would build for that GPU.
"""
from __future__ import annotations

import ast
import functools
import inspect
import linecache
import math
import os
import re
import textwrap
import threading
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from ..errors import CompileError
from ..frontend.nvrtc import CompiledSource

# reentrant: numba.cuda.compile_ptx, which install() also runs under the stand-in, may be reached from
# code that is already compiling under it
_LOCK = threading.RLock()


@dataclass(frozen=True)
class _Profile:
    """What numba-cuda reads from ``get_current_device()`` while it compiles."""

    compute_capability: tuple


def target_cc() -> tuple:
    from ..device import current
    return tuple(current().cc)


def numpy_compat():
    """numba-cuda 0.30 registers an overload of ``np.row_stack`` when it first compiles, and numpy 2.5
    removed that alias of ``np.vstack`` (an H100 machine with numpy 2.5.2 failed every compile on
    it): put the alias back, as numpy < 2.5 had it, so the first compile gets through."""
    import numpy as np
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack


@contextmanager
def _compiling_for(cc, linked: list):
    """While numba compiles: the profile stands in for the GPU, and the files that
    ``cuda.declare_device(..., link=...)`` asks numba to link are collected into ``linked``."""
    import numba.cuda.codegen as codegen
    import numba.cuda.compiler as compiler
    import numba.cuda.dispatcher as dispatcher
    saved = dispatcher.get_current_device, compiler.get_current_device
    lib = codegen.CUDACodeLibrary
    add_file, add_library = lib.add_linking_file, lib.add_linking_library
    stand_in = _Profile(cc)

    def add_linking_file(library, path_or_obj):            # jit(link=[...]) of a device function it calls
        linked.append(path_or_obj)
        add_file(library, path_or_obj)

    def add_linking_library(library, other):                # declare_device(..., link=...)'s library
        linked.extend(getattr(other, "_linking_files", ()))
        add_library(library, other)

    with _LOCK:
        dispatcher.get_current_device = compiler.get_current_device = lambda: stand_in
        lib.add_linking_file, lib.add_linking_library = add_linking_file, add_linking_library
        try:
            yield
        finally:
            dispatcher.get_current_device, compiler.get_current_device = saved
            lib.add_linking_file, lib.add_linking_library = add_file, add_library


def stand_in_device():
    """While numba compiles outside compile_kernel (a device function with a signature compiles when
    it is declared), the selected profile answers for the GPU."""
    return _compiling_for(target_cc(), [])


def _numba_helpers(ptx: str) -> list:
    """numba's own CUDA C++ helpers the kernel calls, which numba's dispatcher links when it sees their
    names in the PTX: ``reshape_funcs.cu`` for ``a.reshape(...)`` inside a kernel, and numba's device
    runtime ``nrt.cu`` (reference counts, ``malloc``/``free``) for a kernel that makes arrays, with
    ``NUMBA_CUDA_ENABLE_NRT=1`` (numba's ``_Kernel.maybe_link_nrt``, by the same test)."""
    import numba.cuda.dispatcher as dispatcher
    out = []
    if any(fn in ptx for fn in dispatcher.reshape_funcs):
        out.append(os.path.join(os.path.dirname(dispatcher.__file__), "reshape_funcs.cu"))
    if nrt_enabled() and re.search(r"\.extern\s+\.func\s+(?:\s*\(.+\)\s*)?(" +
                                   "|".join(dispatcher._Kernel.NRT_functions) + r")\s*\(", ptx):
        from numba.cuda.memory_management.nrt import NRT_LIBRARY
        out.append(NRT_LIBRARY)
    return out


def nrt_enabled() -> bool:
    """numba's switch for its device runtime (``NUMBA_CUDA_ENABLE_NRT=1``, or ``config.CUDA_ENABLE_NRT``
    set by a program or a test), read when a kernel compiles, as numba's target context reads it."""
    from numba.cuda import config
    return bool(getattr(config, "CUDA_ENABLE_NRT", False))


def _linked_ptx(files) -> list:
    """PTX for the foreign code a kernel links (``declare_device(..., link=...)``, ``jit(link=[...])``,
    numba's own ``cuda.fp16``/``bf16`` shims): CUDA C++ (a ``.cu`` file or numba's ``CUSource``) is
    compiled by NVRTC as relocatable device code, with the file's folder, numba-cuda's headers and
    numba's ``config.CUDA_NVRTC_EXTRA_SEARCH_PATHS`` as include paths; PTX is taken as it is."""
    out = []
    for f in files:
        kind, name, text = _linkable(f)
        if kind == "ptx":
            out.append(text)
        elif kind == "cu":
            out.append(_compile_cu(text, name))
        else:
            from ..errors import UnsupportedError
            raise UnsupportedError(f"the emulator links CUDA C++ (.cu) and PTX (.ptx) into a Python kernel; "
                                   f"{os.path.basename(name)} is compiled code for a real GPU only.")
    return list(dict.fromkeys(out))         # the same shim linked twice is one module


def _linkable(f) -> tuple:
    """(kind, name, text) of a path or a numba LinkableCode object."""
    if isinstance(f, str):
        kind = os.path.splitext(f)[1].lstrip(".").lower()
        if kind not in ("cu", "ptx"):
            return kind, f, None
        with open(f) as fh:
            return kind, f, fh.read()
    data = f.data
    return str(getattr(f, "kind", "")), str(f.name), data.decode() if isinstance(data, bytes) else str(data)


def _compile_cu(source: str, name: str) -> str:
    import numba.cuda
    from numba.cuda import config
    from ..frontend.nvrtc import compile_to_ptx
    numba_headers = os.path.join(os.path.dirname(numba.cuda.__file__), "include", "13")
    extra = [d for d in str(getattr(config, "CUDA_NVRTC_EXTRA_SEARCH_PATHS", "") or "").split(":") if d]
    here = [os.path.dirname(os.path.abspath(name))] if os.path.isfile(name) else []
    if name == "nrt.cu":        # numba's device runtime (a CUSource) includes memsys.cuh from its folder
        from numba.cuda.memory_management.nrt import get_include
        here = [get_include()]
    dirs = [*here, numba_headers, *extra]
    return compile_to_ptx(source, ("-rdc=true", *(f"-I{d}" for d in dirs)), filename=os.path.basename(name)).ptx


@dataclass(frozen=True)
class CompiledKernel(CompiledSource):
    """A Python kernel's compiled source; compiled with ``debug=True``, also numba's table of the
    exceptions it may raise: error code -> (exception class, arguments, (function, file, line))."""

    exceptions: dict | None = field(default=None)


@contextmanager
def _kept_compile_result(kept: dict):
    """numba's compile result of the kernel (the outermost compile_cuda; device functions it calls are
    compiled inside it), which compile_ptx does not return: its call helper has the exception table."""
    import numba.cuda.compiler as compiler
    real = compiler.compile_cuda

    def keeping(*args, **kwargs):
        kept["cres"] = cres = real(*args, **kwargs)
        return cres
    compiler.compile_cuda = keeping
    try:
        yield
    finally:
        compiler.compile_cuda = real


def compile_kernel(pyfunc, argtypes: tuple, fastmath: bool = False, link=(), launch_bounds=None,
                   debug: bool = False, opt=None) -> CompiledKernel:
    """PTX for ``pyfunc`` specialized to numba types ``argtypes`` (a kernel, numba's ABI: array
    arguments flattened into meminfo, parent, nitems, itemsize, data, shape..., strides...).
    ``launch_bounds``: numba's (max threads per block[, min blocks per SM[, max blocks per cluster]]),
    PTX's ``.maxntid``/``.minnctapersm``/``.maxclusterrank``. ``debug``: numba's ``debug=True,
    opt=False``, whose kernels record the first exception a thread raises (see CompiledKernel). ``opt``:
    numba's (False: NVVM unoptimized, as numba builds it).

    Raises CompileError with numba's own message, shortened to what names the Python line."""
    numpy_compat()
    from numba.cuda.compiler import compile_ptx      # numba's own: install() puts cudalab's on numba.cuda
    cc = target_cc()
    linked, kept = [], {}

    def build(lineinfo: bool) -> str:
        linked[:] = link
        with _compiling_for(cc, linked), _kept_compile_result(kept), warnings.catch_warnings():
            if not debug:
                # the line info is cudalab's own choice (its messages quote Python lines), not the
                # program's: numba's warning that a generated function (a CUDA @vectorize's kernel)
                # has no source to point at would appear where a GPU build, without line info, says nothing
                from numba.cuda.core.errors import NumbaDebugInfoWarning
                warnings.simplefilter("ignore", NumbaDebugInfoWarning)
            return compile_ptx(pyfunc, argtypes, cc=cc, lineinfo=lineinfo, fastmath=fastmath,
                               launch_bounds=launch_bounds,
                               **(dict(debug=True, opt=False) if debug else dict(opt=opt)))[0]
    try:
        try:
            ptx = build(lineinfo=True)
        except Exception as e:
            # numba-cuda's line-info code has faults of its own that a GPU build without line info,
            # numba's default, never meets (its search for the def line indexes past a kernel that is
            # only a docstring; a tuple of empty tuples divides by its element size 0): build that way,
            # and errors name PTX lines instead of Python ones
            if debug or _is_numba_error(e) or isinstance(e, KeyError):
                raise
            ptx = build(lineinfo=False)
    except Exception as e:
        if isinstance(e, KeyError) and e.args and isinstance(e.args[0], np.ufunc):
            raise CompileError(_missing_ufunc_message(pyfunc, e.args[0]), log=repr(e)) from None
        if not _is_numba_error(e):
            raise
        err = CompileError(short_message(pyfunc, argtypes, e), log=str(e))
        err.__class__ = _as_numba_error(type(e))
        err.msg = getattr(e, "msg", str(e))       # numba's errors keep their own words there
        raise err from None
    linked += _numba_helpers(ptx)
    if linked:
        from ..ptx.link import link as link_ptx
        ptx = link_ptx([ptx, *_linked_ptx(linked)])
    filename = _ptx_file(ptx) or pyfunc.__code__.co_filename
    # NVVM makes the name absolute: '<ipython-input-1-...>' (IPython's cells) becomes '/cwd/<ipython-...>'
    source = python_source(filename) or python_source(pyfunc.__code__.co_filename)
    options = (f"cc={cc[0]}{cc[1]}",) + (("linked",) if linked else ())     # linked: foreign code in the PTX
    return CompiledKernel(source=source, ptx=ptx, options=options, log="",
                          exceptions=dict(kept["cres"].call_helper.exceptions) if debug else None,
                          lowered={pyfunc.__name__: _entry_name(ptx)}, filename=filename)


@functools.lru_cache(maxsize=None)
def _as_numba_error(cls):
    """A CompileError that is also numba's own exception class, so a program's ``except TypingError``
    catches it as on a GPU."""
    return type("CompileError", (CompileError, cls), {"__module__": CompileError.__module__})


def _is_numba_error(e) -> bool:
    """numba's refusals of the Python code (typing errors, numba.cuda.errors' UnsupportedBytecodeError
    for an ``import`` in a kernel, ...), as opposed to a fault of numba or of cudalab."""
    return any(c.__name__ == "NumbaError" for c in type(e).__mro__) or \
        (type(e).__module__.startswith("numba") and type(e).__module__.endswith(".errors"))


def _ptx_file(ptx: str):
    m = re.search(r'^\s*\.file\s+1\s+"([^"]*)"', ptx, re.M)
    return m.group(1) if m else None


def _entry_name(ptx: str) -> str:
    return re.search(r"\.entry\s+([\w$]+)", ptx).group(1)


def python_source(filename: str) -> str:
    """The text of the file the PTX's ``.loc`` lines count in: a module on disk, or a notebook cell
    (IPython keeps every cell in ``linecache`` under the name it compiled it with)."""
    return "".join(linecache.getlines(filename))


_NOISE = re.compile(r"^(Failed in .* pipeline.*|During: .*|\s*<source elided>|\s*\^)$")


def _place(filename: str) -> str:
    """A notebook cell is 'this cell' (its temporary file name means nothing to a student); a file, its name."""
    if "ipykernel_" in filename or filename.startswith("<ipython"):
        return "In this cell"
    return f"In {os.path.basename(filename)}"


# numba's typing errors for the mistakes students make most, and what to write instead (the first
# that matches: an f-string's error also says NRT is off, so print's hint comes first)
_HINTS = [
    (re.compile(r">>> (?:add\(Literal\[str\]|str\()"),
     lambda m: "A kernel cannot build strings: print() in a kernel takes constant strings and numbers separated "
               "by commas, e.g. print('value', a[0]); f-strings, str() and string + number do not compile."),
    (re.compile(r"<function (shared|local)\.array at [^>]*>\) found for signature:\s*>>> array\((?:u?int|UniTuple\(u?int|"
                r"Tuple\(u?int)"),
     lambda m: f"cuda.{m.group(1)}.array needs a shape numba knows when it compiles the kernel: a number or a "
               "global constant (TPB = 16 at the top of the file), not an argument or a variable."
               + (" For a size chosen at launch, use dynamic shared memory: cuda.shared.array(0, float32) and "
                  "kernel[grid, block, 0, nbytes]." if m.group(1) == "shared" else "")),
    (re.compile(r"unsupported opcode \(IMPORT_NAME\)"),
     lambda m: "A kernel cannot import: put the import at the top of the file. (pdb's set_trace() in a kernel works "
               "only in numba's CUDA simulator" + (
                   ", and NUMBA_ENABLE_CUDASIM=1 was set after numba was imported: numba reads it once, at its "
                   "import, so the kernel was compiled for the GPU, as on a real one. Set it before `from numba "
                   "import cuda`, or in the shell: NUMBA_ENABLE_CUDASIM=1 python program.py.)"
                   if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" else ".)")),
    (re.compile(r"NRT required but not enabled"),
     lambda m: "A kernel cannot make new arrays, lists or strings (that needs numba's memory runtime, which is "
               "off): pass an output array, or use cuda.local.array(n, dtype) with a constant n."),
]


def _hint(text: str) -> str:
    return next((f"\n{say(m)}" for pattern, say in _HINTS if (m := pattern.search(text))), "")


def short_message(pyfunc, argtypes, e) -> str:
    """numba's TypingError, as a student reads it: what is wrong and the Python line, once; without
    the pipeline's stage names, the repeated 'During:' blocks and the ANSI colours."""
    text = re.sub(r"\x1b\[[\d;]*m", "", str(e))
    lines, seen_file, place = [], False, None
    for line in text.splitlines():
        if _NOISE.match(line):
            continue
        m = re.match(r'^File "([^"]*)", line (\d+):', line)
        if m:
            if seen_file:
                break              # the second copy of the same place
            seen_file, place = True, (os.path.abspath(m.group(1)), int(m.group(2)))
            line = f"{_place(m.group(1))}, line {m.group(2)}:"
        elif line.startswith("<source missing") and place:
            line = linecache.getline(*place).rstrip() or line      # numba could not find a cell's text
        lines.append(line)
    while lines and not lines[-1].strip():
        lines.pop()
    body = "\n".join(lines[:14])
    sig = ", ".join(str(t) for t in argtypes)
    where = f"{pyfunc.__name__}({sig})"
    if not seen_file:
        code = pyfunc.__code__
        # numba names no place for an undefined name, and only 'Raised from <file> (<line>)' for an
        # unsupported statement (an import): the line, quoted as its typing errors quote one
        m = re.search(r"name '(\w+)' is not defined", body)
        raised = re.search(r" Raised from (.+) \((\d+)\)$", body, re.M)
        line = _line_reading(pyfunc, m.group(1)) if m else int(raised.group(2)) if raised else None
        if line:
            filename = raised.group(1) if raised and not m else code.co_filename
            body = body[:raised.start()] if raised else body
            body += f"\n\n{_place(filename)}, line {line}:\n{linecache.getline(filename, line).rstrip()}"
        else:
            body += f"\n(in {code.co_filename}, the kernel starting at line {code.co_firstlineno})"
    return f"numba could not compile the Python kernel {where}:\n{body}{_hint(text)}"


def _missing_ufunc_message(pyfunc, ufunc) -> str:
    """numba-cuda types every numpy ufunc in a kernel but has CUDA code for only some (np.sin, not
    np.sqrt): the rest fail while lowering with a bare ``KeyError: <ufunc 'sqrt'>`` (on a GPU too).
    Said for a student: which function, where, and the math module's function that works."""
    name = ufunc.__name__
    instead = {"absolute": "abs(x)", "power": "x ** y", "multiply": "x * y", "add": "x + y", "subtract": "x - y",
               "true_divide": "x / y", "negative": "-x", "square": "x * x", "rint": "round(x)"}.get(name)
    instead = instead or (f"math.{name}" if hasattr(math, name) else None)
    line = _line_calling(pyfunc, name) or _line_calling(pyfunc, {"absolute": "abs", "true_divide": "divide"}.get(name, name))
    where = f"\n\nIn {os.path.basename(pyfunc.__code__.co_filename)}, line {line}:\n" \
            f"{linecache.getline(pyfunc.__code__.co_filename, line).rstrip()}" if line else ""
    return (f"numba could not compile the Python kernel {pyfunc.__name__}: numba.cuda has no CUDA version of numpy's "
            f"{name} (np.{name} inside a kernel; numba-cuda raises the same KeyError on a GPU). "
            + (f"Use {instead} instead (import math)." if instead and instead.startswith("math.")
               else f"Write {instead} instead." if instead else "Write it with the math module's functions.")
            + where)


def _line_calling(pyfunc, name: str):
    """The first line of ``pyfunc`` that names ``<module>.name`` (np.sqrt) or ``name`` itself."""
    try:
        lines, first = inspect.getsourcelines(pyfunc)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return None
    uses = [n.lineno for n in ast.walk(tree) if (isinstance(n, ast.Attribute) and n.attr == name)
            or (isinstance(n, ast.Name) and n.id == name)]
    return first + min(uses) - 1 if uses else None


def _line_reading(pyfunc, name: str):
    """The first line of ``pyfunc`` that reads the variable ``name``: numba's NameError for an
    undefined global says no line, and the kernel can be long."""
    try:
        lines, first = inspect.getsourcelines(pyfunc)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return None
    reads = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name
             and isinstance(n.ctx, ast.Load)]
    return first + min(reads) - 1 if reads else None
