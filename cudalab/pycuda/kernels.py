"""PyCUDA's generated kernels on cudalab: ``ElementwiseKernel``, ``ReductionKernel`` and the scans.

Each is CUDA C++ written here from the program's pieces (C declarations of the arguments, a loop
body over ``i``, a reduction's ``a``/``b`` expression, a scan's operator) and compiled and emulated
like a ``SourceModule``'s kernels, so the program's own C code is what runs. The kernels are cudalab's
own designs, shaped as PyCUDA's documentation describes them:

- elementwise: a grid-stride loop over ``i < n`` (``n`` is the first array argument's size), with
  ``loop_prep`` before it and ``after_loop`` after;
- reduction: two launches: blocks of 256 threads each fold a grid-stride share of the mapped
  elements and then fold their threads' values in shared memory into one partial per block; one block
  folds the partials;
- scan (inclusive or exclusive): one block of 256 threads; each thread scans a contiguous chunk, the
  chunks' totals are scanned in shared memory, and each chunk then takes the total before it.
"""
from __future__ import annotations

import builtins
import re

import numpy as np

from ..cupy.kernels import C_TYPES
from ..runtime.arrays import DeviceArray
from . import compiler, driver

THREADS = 256
_DECL = re.compile(r"^\s*(?P<type>.*?)\s*(?P<star>\*?)\s*(?P<name>\w+)\s*$")


# The C names of the program's own types (``pycuda.tools.register_dtype``): a numpy record dtype that a
# ReductionKernel folds, named as the struct its preamble defines. dtype -> C names, the first one used.
_REGISTERED: dict = {}


def get_or_register_dtype(c_names, dtype=None):
    """PyCUDA's ``get_or_register_dtype``: with a dtype, make ``c_names`` (a name or a list) its C
    names, for the kernels written for it; without, the dtype registered under that name."""
    names = [c_names] if isinstance(c_names, str) else list(c_names)
    if dtype is None:
        for t, known in _REGISTERED.items():
            if names[0] in known:
                return t
        raise KeyError(f"no dtype is registered as {names[0]!r}: register it first with "
                       f"pycuda.tools.get_or_register_dtype({names[0]!r}, dtype)")
    dtype = np.dtype(dtype)
    known = _REGISTERED.setdefault(dtype, [])
    known.extend(n for n in names if n not in known)
    return dtype


def register_dtype(dtype, c_names, alias_ok=False):
    """PyCUDA's older ``register_dtype(dtype, name)``: a dtype named once, unless ``alias_ok``."""
    dtype = np.dtype(dtype)
    names = [c_names] if isinstance(c_names, str) else list(c_names)
    known = _REGISTERED.get(dtype)
    if known and not alias_ok and names[0] not in known:
        raise RuntimeError(f"dtype {dtype!r} is already registered as {known[0]!r}; it cannot also be "
                           f"{names[0]!r} (pass alias_ok=True to give it a second name)")
    get_or_register_dtype(names, dtype)


def c_type(dtype) -> str:
    """The C type PyCUDA's generated kernels declare for ``dtype``: a registered name, else the built-in one."""
    dtype = np.dtype(dtype)
    if _REGISTERED.get(dtype):
        return _REGISTERED[dtype][0]
    if dtype.name not in C_TYPES:
        raise TypeError(f"cudalab's PyCUDA stand-in writes kernels for {', '.join(C_TYPES)}, not {dtype}: "
                        "a record type the program's preamble defines as a struct is named with "
                        "pycuda.tools.register_dtype(dtype, 'struct_name')")
    return C_TYPES[dtype.name]


_c_type = c_type


def _arguments(arguments) -> list:
    """C declarations (``"float *x, float a"`` or PyCUDA's VectorArg/ScalarArg) as [(declaration, is_pointer)]."""
    if isinstance(arguments, str):
        out = []
        for part in filter(str.strip, arguments.split(",")):
            m = _DECL.match(part.replace("*", " * "))
            if m is None:
                raise ValueError(f"cannot read the kernel argument {part.strip()!r}: write it as 'float *x' or 'int n'")
            out.append((part.strip(), bool(m.group("star")) or "*" in m.group("type")))
        return out
    return [(a.declarator(), isinstance(a, VectorArg)) for a in arguments]


class VectorArg:
    """PyCUDA's declaration of an array argument: ``VectorArg(np.float32, "x")`` is ``float *x``."""

    def __init__(self, dtype, name):
        self.dtype, self.name = np.dtype(dtype), name

    def declarator(self):
        return f"{_c_type(self.dtype)} *{self.name}"


class ScalarArg(VectorArg):
    """A value argument: ``ScalarArg(np.float32, "a")`` is ``float a``."""

    def declarator(self):
        return f"{_c_type(self.dtype)} {self.name}"


def _complex_header(*code) -> str:
    """PyCUDA's generated kernels include <pycuda-complex.hpp>; here only those that name complex values."""
    return "#include <pycuda-complex.hpp>\n" if any("complex" in str(c) for c in code) else ""


def _launch_args(kind, args, pointers):
    out = []
    for k, (a, pointer) in enumerate(zip(args, pointers)):
        if pointer:
            out.append(a if isinstance(a, DeviceArray) else np.uint64(driver._address(a)))
        else:
            out.append(a)           # a number: converted to the declared type, as PyCUDA's prepared call does
    return out


def _size(args, pointers, kind):
    for a, pointer in zip(args, pointers):
        if pointer and hasattr(a, "size"):
            return int(a.size)
    raise ValueError(f"{kind}: no array argument to take the size from")


class ElementwiseKernel:
    """``operation`` (C statements over ``i``) for every ``i < n``; called with the arguments in order.
    With ``range=`` or ``slice=`` (a Python slice of the first array's indices, steps and negative steps
    too) the kernel's second form runs ``i`` over that range only, as PyCUDA's does."""

    def __init__(self, arguments, operation, name="kernel", keep=False, options=None, preamble="", loop_prep="",
                 after_loop=""):
        self.arguments = _arguments(arguments)
        self.name = name
        self._parts = (f"{_complex_header(arguments, preamble, operation)}{preamble}\n", operation, loop_prep,
                       after_loop)
        self._options = options

    def _source(self, ranged: bool) -> str:
        head, operation, loop_prep, after_loop = self._parts
        params = ", ".join(d for d, _ in self.arguments)
        if not ranged:
            params += ", unsigned long long n"
            loop = ("    for (i = cta_start + tid; i < n; i += total_threads) {\n"
                    f"        {operation};\n"
                    "    }\n")
        else:
            params += ", long start, long stop, long step"
            body = f"        {operation};\n"
            loop = ("    if (step < 0) {\n"
                    "        for (i = start + (long)(cta_start + tid) * step; i > stop; i += (long)total_threads * step) {\n"
                    f"    {body}        }}\n"
                    "    } else {\n"
                    "        for (i = start + (long)(cta_start + tid) * step; i < stop; i += (long)total_threads * step) {\n"
                    f"    {body}        }}\n"
                    "    }\n")
        return (f"{head}extern \"C\" __global__ void {self.name}({params})\n{{\n"
                "    unsigned tid = threadIdx.x;\n"
                "    unsigned total_threads = gridDim.x * blockDim.x;\n"
                "    unsigned cta_start = blockDim.x * blockIdx.x;\n"
                f"    {'long' if ranged else 'unsigned long long'} i;\n"
                f"    {loop_prep};\n"
                f"{loop}"
                f"    {after_loop};\n}}\n")

    def _function(self, ranged: bool):
        """The kernel, compiled at its first call as PyCUDA's ElementwiseKernel is (making one needs no
        context; calling one does, and a compile error surfaces there); the ranged form at its own first."""
        kept = self.__dict__.setdefault("_functions", {})
        if ranged not in kept:
            kept[ranged] = compiler.SourceModule(self._source(ranged), options=self._options,
                                                 no_extern_c=True).get_function(self.name)
        return kept[ranged]

    @property
    def function(self):
        return self._function(False)

    def __call__(self, *args, range=None, slice=None, stream=None, **kwargs):    # noqa: A002  (PyCUDA's names)
        pointers = [p for _, p in self.arguments]
        if len(args) != len(pointers):
            raise TypeError(f"{self.name} takes {len(pointers)} arguments ({', '.join(d for d, _ in self.arguments)}), "
                            f"not {len(args)}")
        if range is not None and slice is not None:
            raise TypeError("may not specify both range and slice keyword arguments")
        n = _size(args, pointers, self.name)
        launch_args = _launch_args(self.name, args, pointers)
        if slice is not None:
            range = builtins.slice(*slice.indices(n))
        if range is None:
            grid = max(1, min(-(-n // THREADS), 65535))
            self.function._launch((grid,), (THREADS,), [*launch_args, np.uint64(n)], stream, 0)
            return
        step = 1 if range.step is None else int(range.step)
        count = max(0, len(builtins.range(int(range.start), int(range.stop), step)))
        grid = max(1, min(-(-count // THREADS), 65535))
        self._function(True)._launch((grid,), (THREADS,), [*launch_args, np.int64(range.start), np.int64(range.stop),
                                                          np.int64(step)], stream, 0)


class ReductionKernel:
    """``map_expr`` of every ``i`` folded by ``reduce_expr`` (over ``a`` and ``b``) from ``neutral``; the
    call returns a 0-d GPUArray of ``dtype_out``."""

    BLOCKS = 64

    def __init__(self, dtype_out, neutral, reduce_expr, map_expr=None, arguments=None, name="reduce_kernel",
                 keep=False, options=None, preamble="", allocator=None):
        self.dtype_out = np.dtype(dtype_out)
        self.arguments = _arguments(arguments or "const {} *in".format(_c_type(self.dtype_out)))
        self.name = name
        out_t = _c_type(self.dtype_out)
        map_expr = map_expr or "in[i]"

        def stage(kernel, params, mapped):
            return (f"extern \"C\" __global__ void {kernel}({params}{', ' if params else ''}{out_t} *_partial, unsigned long long n)\n{{\n"
                    f"    __shared__ {out_t} _fold[{THREADS}];\n"
                    f"    {out_t} _acc = ({out_t})({neutral});\n"
                    "    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;\n"
                    "         i += (unsigned long long)blockDim.x * gridDim.x) {\n"
                    f"        {out_t} a = _acc, b = ({out_t})({mapped});\n"
                    f"        _acc = ({reduce_expr});\n"
                    "    }\n"
                    "    _fold[threadIdx.x] = _acc;\n"
                    "    __syncthreads();\n"
                    "    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {\n"
                    "        if (threadIdx.x < s) {\n"
                    f"            {out_t} a = _fold[threadIdx.x], b = _fold[threadIdx.x + s];\n"
                    f"            _fold[threadIdx.x] = ({reduce_expr});\n"
                    "        }\n"
                    "        __syncthreads();\n"
                    "    }\n"
                    "    if (threadIdx.x == 0) _partial[blockIdx.x] = _fold[0];\n}\n")
        source = (f"{_complex_header(arguments, preamble, map_expr, out_t)}{preamble}\n"
                  + stage(f"{name}_stage1", ", ".join(d for d, _ in self.arguments), map_expr)
                  + stage(f"{name}_stage2", f"const {out_t} *_in", "_in[i]"))
        module = compiler.SourceModule(source, options=options, no_extern_c=True)
        self.stage1, self.stage2 = module.get_function(f"{name}_stage1"), module.get_function(f"{name}_stage2")

    def __call__(self, *args, stream=None, out=None, range=None, slice=None, **kwargs):   # noqa: A002
        from .gpuarray import GPUArray
        pointers = [p for _, p in self.arguments]
        n = _size(args, pointers, self.name)
        blocks = max(1, min(-(-n // THREADS), self.BLOCKS))
        partial = GPUArray((blocks,), self.dtype_out)
        self.stage1._launch((blocks,), (THREADS,), [*_launch_args(self.name, args, pointers), partial, np.uint64(n)],
                            stream, 0)
        result = out if out is not None else GPUArray((), self.dtype_out)
        self.stage2._launch((1,), (THREADS,), [partial, result, np.uint64(blocks)], stream, 0)
        return result


class _ScanKernel:
    """The scan of an array by ``scan_expr`` (over ``a`` and ``b``), in place unless an output is given."""

    exclusive = False

    def __init__(self, dtype, scan_expr, neutral=None, name_prefix="scan", options=None, preamble="", devices=None):
        t = _c_type(dtype)
        self.dtype = np.dtype(dtype)
        if self.exclusive and neutral is None:
            raise ValueError("an exclusive scan needs its neutral element (neutral=...)")
        name = f"{name_prefix}_{'exclusive' if self.exclusive else 'inclusive'}"
        combine = f"{{ {t} a = (A), b = (B); R = ({scan_expr}); }}"
        source = (f"{_complex_header(t, preamble)}{preamble}\n#define _SCAN(R, A, B) {combine}\n"
                  f"extern \"C\" __global__ void {name}(const {t} *in, {t} *out, unsigned long long n)\n{{\n"
                  f"    __shared__ {t} _total[{THREADS}];\n"
                  "    __shared__ bool _has[" f"{THREADS}];\n"
                  "    unsigned long long chunk = (n + blockDim.x - 1) / blockDim.x;\n"
                  "    unsigned long long lo = threadIdx.x * chunk, hi = lo + chunk < n ? lo + chunk : n;\n"
                  f"    {t} run{' = (' + str(neutral) + ')' if self.exclusive else ''};\n"
                  "    bool any = false;\n"
                  "    for (unsigned long long j = lo; j < hi; ++j) {\n"
                  f"        {t} v = in[j];\n"
                  + ("        out[j] = run; _SCAN(run, run, v); any = true;\n" if self.exclusive else
                     "        if (any) { _SCAN(run, run, v); } else { run = v; any = true; }\n        out[j] = run;\n")
                  + "    }\n"
                  "    _has[threadIdx.x] = any;\n"
                  "    if (any) _total[threadIdx.x] = run;\n"
                  "    __syncthreads();\n"
                  "    if (threadIdx.x == 0) {       // the chunks' totals, each made the total of all chunks up to it\n"
                  "        bool seen = false;\n"
                  f"        {t} acc;\n"
                  "        for (unsigned k = 0; k < blockDim.x; ++k) {\n"
                  "            if (!_has[k]) continue;\n"
                  "            if (seen) { _SCAN(acc, acc, _total[k]); } else { acc = _total[k]; seen = true; }\n"
                  "            _total[k] = acc;\n"
                  "        }\n"
                  "    }\n"
                  "    __syncthreads();\n"
                  "    int before = -1;               // the last chunk before this one that holds elements\n"
                  "    for (int k = (int)threadIdx.x - 1; k >= 0; --k) if (_has[k]) { before = k; break; }\n"
                  "    if (before >= 0)\n"
                  "        for (unsigned long long j = lo; j < hi; ++j) { _SCAN(out[j], _total[before], out[j]); }\n"
                  "}\n")
        self.function = compiler.SourceModule(source, options=options, no_extern_c=True).get_function(name)

    def __call__(self, input_ary, output_ary=None, allocator=None, queue=None, stream=None):
        output_ary = input_ary if output_ary is None else output_ary
        n = int(input_ary.size)
        if n:
            self.function._launch((1,), (THREADS,), [input_ary, output_ary, np.uint64(n)], stream, 0)
        return output_ary


class InclusiveScanKernel(_ScanKernel):
    exclusive = False


class ExclusiveScanKernel(_ScanKernel):
    exclusive = True
